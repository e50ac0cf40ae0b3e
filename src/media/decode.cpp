#include "decode.hpp"

extern "C" {
#include <libavutil/error.h>
}

#include <string>

namespace genhost::media {
namespace {

// Budgets for DecodeFirstVideoFrame: packets read from the demuxer (all streams), packets of the
// video stream sent to the decoder, and decoder errors tolerated before giving up (a stream cut
// from the middle of a broadcast starts with packets that fail to decode, so one error is not
// the end).
constexpr int kMaxPacketsRead = 4096;
constexpr int kMaxVideoPackets = 512;
constexpr int kMaxDecodeErrors = 16;

// ReceiveFrame asks the decoder for a picture: true with `frame` filled, false when it needs more
// input or is drained; decoder errors are counted into `errors` and remembered in `last_error`.
bool ReceiveFrame(AVCodecContext* decoder, AVFrame* frame, int& errors, int& last_error) {
    const int rc = avcodec_receive_frame(decoder, frame);
    if (rc >= 0) {
        return true;
    }
    if (rc != AVERROR(EAGAIN) && rc != AVERROR_EOF) {
        ++errors;
        last_error = rc;
    }
    return false;
}

}  // namespace

int FindVideoStream(const AVFormatContext* format) {
    for (unsigned i = 0; i < format->nb_streams; ++i) {
        const AVStream* stream = format->streams[i];
        if (stream->codecpar->codec_type == AVMEDIA_TYPE_VIDEO &&
            (stream->disposition & AV_DISPOSITION_ATTACHED_PIC) == 0) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

int FindAudioStream(const AVFormatContext* format) {
    for (unsigned i = 0; i < format->nb_streams; ++i) {
        if (format->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

namespace {

// DecodeFirst is DecodeFirstVideoFrame for a stream of either type; `what` names it in errors.
FramePtr DecodeFirst(AVFormatContext* format, int stream_index, const std::string& what) {
    if (stream_index < 0 || static_cast<unsigned>(stream_index) >= format->nb_streams) {
        throw MediaError("no " + what + " stream to decode");
    }
    const AVStream* stream = format->streams[stream_index];
    const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
    if (codec == nullptr) {
        throw MediaError("no decoder for " + what + " codec " +
                         avcodec_get_name(stream->codecpar->codec_id));
    }
    CodecContextPtr decoder = MakeCodecContext(codec);
    CheckAv(avcodec_parameters_to_context(decoder.get(), stream->codecpar),
            "avcodec_parameters_to_context");
    decoder->thread_count = 1;
    decoder->max_pixels = kMaxDecodePixels;
    decoder->pkt_timebase = stream->time_base;
    CheckAv(avcodec_open2(decoder.get(), codec, nullptr), "opening the " + what + " decoder");

    PacketPtr packet = MakePacket();
    FramePtr frame = MakeFrame();
    int errors = 0;
    int last_error = 0;
    int video_packets = 0;
    bool draining = false;
    for (int read = 0; read < kMaxPacketsRead && errors < kMaxDecodeErrors; ++read) {
        const int rc = av_read_frame(format, packet.get());
        if (rc < 0) {
            // End of data (or unreadable remainder): drain what the decoder still holds.
            CheckAv(avcodec_send_packet(decoder.get(), nullptr),
                    "flushing the " + what + " decoder");
            draining = true;
            break;
        }
        if (packet->stream_index != stream_index) {
            av_packet_unref(packet.get());
            continue;
        }
        const int send_rc = avcodec_send_packet(decoder.get(), packet.get());
        av_packet_unref(packet.get());
        if (send_rc < 0 && send_rc != AVERROR(EAGAIN)) {
            ++errors;
            last_error = send_rc;
        }
        if (ReceiveFrame(decoder.get(), frame.get(), errors, last_error)) {
            return frame;
        }
        if (++video_packets >= kMaxVideoPackets) {
            break;
        }
    }
    if (draining) {
        // A drained decoder returns its buffered pictures, then AVERROR_EOF.
        while (errors < kMaxDecodeErrors) {
            const int rc = avcodec_receive_frame(decoder.get(), frame.get());
            if (rc >= 0) {
                return frame;
            }
            if (rc == AVERROR_EOF || rc == AVERROR(EAGAIN)) {
                break;
            }
            ++errors;
            last_error = rc;
        }
    }
    std::string message = "no decodable " + what + " frame";
    if (last_error < 0) {
        message += ": " + AvErrorText(last_error);
    }
    throw MediaError(message);
}

}  // namespace

FramePtr DecodeFirstVideoFrame(AVFormatContext* format, int stream_index) {
    return DecodeFirst(format, stream_index, "video");
}

FramePtr DecodeFirstAudioFrame(AVFormatContext* format, int stream_index) {
    return DecodeFirst(format, stream_index, "audio");
}

}  // namespace genhost::media
