// ProbeMedia: container and stream facts from libavformat, plus one decoded picture as proof.

#include <chrono>
#include <string>
#include <string_view>

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "av_handles.hpp"
#include "decode.hpp"
#include "file_input.hpp"
#include "genhost/media/image.hpp"
#include "memory_io.hpp"

namespace genhost::media {
namespace {

std::string NameOrEmpty(const char* name) { return name == nullptr ? std::string() : name; }

// IsStillImageDemuxer is true for libavformat's single-picture demuxers (png_pipe, jpeg_pipe,
// webp_pipe, ... and image2): their streams carry a made-up 25 fps rate and no real duration.
bool IsStillImageDemuxer(std::string_view name) {
    return name == "image2" || name == "image2pipe" ||
           (name.size() > 5 && name.substr(name.size() - 5) == "_pipe");
}

double Seconds(std::int64_t ticks, AVRational time_base) {
    return static_cast<double>(ticks) * av_q2d(time_base);
}

std::string TransferName(AVColorTransferCharacteristic trc) {
    if (trc == AVCOL_TRC_UNSPECIFIED || trc == AVCOL_TRC_RESERVED || trc == AVCOL_TRC_RESERVED0) {
        return {};
    }
    return NameOrEmpty(av_color_transfer_name(trc));
}

std::string PrimariesName(AVColorPrimaries primaries) {
    if (primaries == AVCOL_PRI_UNSPECIFIED || primaries == AVCOL_PRI_RESERVED ||
        primaries == AVCOL_PRI_RESERVED0) {
        return {};
    }
    return NameOrEmpty(av_color_primaries_name(primaries));
}

// Describe reads the facts of an opened demuxer and decodes the first picture of its video
// stream as proof, unless a side exceeds `max_side` (0: no limit), in which case the header's
// size is reported undecoded. Without video, `decode_audio` decodes the first audio frame.
MediaInfo Describe(AVFormatContext* format, int max_side, bool decode_audio) {
    MediaInfo info;
    info.container = NameOrEmpty(format->iformat->name);
    const bool still = IsStillImageDemuxer(info.container);

    const int audio_index = FindAudioStream(format);
    if (audio_index >= 0) {
        const AVCodecParameters* par = format->streams[audio_index]->codecpar;
        info.audio_codec = avcodec_get_name(par->codec_id);
        info.sample_rate = par->sample_rate;
        info.channels = par->ch_layout.nb_channels;
    }

    const int video_index = FindVideoStream(format);
    if (video_index >= 0) {
        const AVStream* stream = format->streams[video_index];
        const AVCodecParameters* par = stream->codecpar;
        info.video_codec = avcodec_get_name(par->codec_id);
        info.width = par->width;
        info.height = par->height;
        info.pixel_format =
            NameOrEmpty(av_get_pix_fmt_name(static_cast<AVPixelFormat>(par->format)));
        info.color_transfer = TransferName(par->color_trc);
        info.color_primaries = PrimariesName(par->color_primaries);
        if (!still) {
            AVRational rate = stream->avg_frame_rate;
            if (rate.num <= 0 || rate.den <= 0) {
                rate = stream->r_frame_rate;
            }
            if (rate.num > 0 && rate.den > 0) {
                info.frame_rate = av_q2d(rate);
            }
            if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0) {
                info.duration_seconds = Seconds(stream->duration, stream->time_base);
            }
        }

        if (max_side > 0 && (info.width > max_side || info.height > max_side)) {
            return info;  // too large to be accepted: not worth decoding (nor allocating)
        }
        const FramePtr frame = DecodeFirstVideoFrame(format, video_index);
        // Some demuxers (raw pipes) leave the parameters partly unset; the picture is definitive.
        if (info.width <= 0 || info.height <= 0) {
            info.width = frame->width;
            info.height = frame->height;
        }
        if (info.pixel_format.empty()) {
            info.pixel_format =
                NameOrEmpty(av_get_pix_fmt_name(static_cast<AVPixelFormat>(frame->format)));
        }
        if (info.color_transfer.empty()) {
            info.color_transfer = TransferName(frame->color_trc);
        }
        if (info.color_primaries.empty()) {
            info.color_primaries = PrimariesName(frame->color_primaries);
        }
    } else if (audio_index < 0) {
        throw MediaError("not a readable media file: no audio or video stream");
    } else if (decode_audio) {
        DecodeFirstAudioFrame(format, audio_index);
    }

    if (!still && info.duration_seconds <= 0 && format->duration != AV_NOPTS_VALUE &&
        format->duration > 0) {
        info.duration_seconds = Seconds(format->duration, AVRational{1, AV_TIME_BASE});
    }
    if (!still && info.duration_seconds <= 0 && audio_index >= 0) {
        const AVStream* stream = format->streams[audio_index];
        if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0) {
            info.duration_seconds = Seconds(stream->duration, stream->time_base);
        }
    }
    return info;
}

}  // namespace

MediaInfo ProbeMedia(std::string_view bytes) {
    MemoryInput input(bytes);
    return Describe(input.Format(), 0, false);
}

MediaInfo ProbeMediaFile(const std::string& path, const ProbeLimits& limits) {
    const auto deadline = std::chrono::steady_clock::now() + limits.timeout;
    const std::int64_t side = limits.max_side > 0 ? limits.max_side : 16384;
    FileInput input(path, InputLimits{}, deadline, side * side);
    MediaInfo info = Describe(input.Format(), limits.max_side, true);
    if (input.Expired()) throw MediaError("probing took too long");
    return info;
}

}  // namespace genhost::media
