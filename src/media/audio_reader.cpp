// AudioReader: the first audio stream of a file decoded to float PCM at a chosen rate.

extern "C" {
#include <libavutil/channel_layout.h>
}

#include <algorithm>
#include <string>

#include "av_handles.hpp"
#include "decode.hpp"
#include "file_input.hpp"
#include "genhost/media/audio.hpp"

namespace genhost::media {
namespace {

// Decoder errors tolerated before the stream counts as corrupt (a file cut from a broadcast
// starts with packets that fail to decode).
constexpr int kMaxDecodeErrors = 64;

}  // namespace

struct AudioReader::Impl {
    AudioReadOptions options;
    std::unique_ptr<FileInput> input;
    int stream_index = -1;
    CodecContextPtr decoder;
    SwrContextPtr swr;
    AVChannelLayout swr_layout{};
    int swr_rate = 0;
    int swr_format = -1;
    PacketPtr packet;
    FramePtr frame;
    std::int64_t frames_out = 0;
    std::int64_t max_frames_out = 0;
    int errors = 0;
    bool demuxer_done = false;
    bool decoder_done = false;
    bool done = false;
    std::chrono::steady_clock::time_point deadline;

    ~Impl() { av_channel_layout_uninit(&swr_layout); }

    void EnsureResampler(const AVFrame* f);
    std::int64_t Convert(const AVFrame* f, std::vector<float>& out);
    std::int64_t FlushResampler(std::vector<float>& out);
    void CheckBounds() const;
};

void AudioReader::Impl::EnsureResampler(const AVFrame* f) {
    AVChannelLayout in_layout{};
    if (f->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || f->ch_layout.nb_channels <= 0) {
        av_channel_layout_default(&in_layout, std::max(1, f->ch_layout.nb_channels));
    } else {
        CheckAv(av_channel_layout_copy(&in_layout, &f->ch_layout), "av_channel_layout_copy");
    }
    if (swr && swr_rate == f->sample_rate && swr_format == f->format &&
        av_channel_layout_compare(&swr_layout, &in_layout) == 0) {
        av_channel_layout_uninit(&in_layout);
        return;
    }
    AVChannelLayout out_layout{};
    av_channel_layout_default(&out_layout, options.channels);
    SwrContext* raw = nullptr;
    const int rc =
        swr_alloc_set_opts2(&raw, &out_layout, AV_SAMPLE_FMT_FLT, options.sample_rate, &in_layout,
                            static_cast<AVSampleFormat>(f->format), f->sample_rate, 0, nullptr);
    av_channel_layout_uninit(&out_layout);
    if (rc < 0) {
        av_channel_layout_uninit(&in_layout);
        CheckAv(rc, "swr_alloc_set_opts2");
    }
    swr.reset(raw);
    CheckAv(swr_init(swr.get()), "swr_init");
    av_channel_layout_uninit(&swr_layout);
    swr_layout = in_layout;
    swr_rate = f->sample_rate;
    swr_format = f->format;
}

std::int64_t AudioReader::Impl::Convert(const AVFrame* f, std::vector<float>& out) {
    EnsureResampler(f);
    const int capacity = swr_get_out_samples(swr.get(), f->nb_samples) + 16;
    const std::size_t start = out.size();
    out.resize(start + static_cast<std::size_t>(capacity) * options.channels);
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data() + start);
    const int got =
        CheckAv(swr_convert(swr.get(), &dst, capacity,
                            const_cast<const std::uint8_t**>(f->extended_data), f->nb_samples),
                "swr_convert");
    out.resize(start + static_cast<std::size_t>(got) * options.channels);
    frames_out += got;
    return got;
}

std::int64_t AudioReader::Impl::FlushResampler(std::vector<float>& out) {
    if (!swr) return 0;
    std::int64_t total = 0;
    for (;;) {
        const int capacity = swr_get_out_samples(swr.get(), 0) + 16;
        const std::size_t start = out.size();
        out.resize(start + static_cast<std::size_t>(capacity) * options.channels);
        auto* dst = reinterpret_cast<std::uint8_t*>(out.data() + start);
        const int got = CheckAv(swr_convert(swr.get(), &dst, capacity, nullptr, 0), "swr_convert");
        out.resize(start + static_cast<std::size_t>(got) * options.channels);
        frames_out += got;
        total += got;
        if (got <= 0) return total;
    }
}

void AudioReader::Impl::CheckBounds() const {
    if (frames_out > max_frames_out) throw MediaError("the audio is longer than allowed");
    if (std::chrono::steady_clock::now() > deadline) throw MediaError("decoding took too long");
}

AudioReader::AudioReader(const std::string& path, const AudioReadOptions& options)
    : impl_(std::make_unique<Impl>()) {
    Impl& r = *impl_;
    if (options.channels < 1 || options.channels > 2 || options.sample_rate < 1000) {
        throw MediaError("audio reader: bad output format");
    }
    r.options = options;
    r.deadline = std::chrono::steady_clock::now() + options.timeout;
    r.input = std::make_unique<FileInput>(path, InputLimits{}, r.deadline, kMaxDecodePixels);
    AVFormatContext* format = r.input->Format();
    r.stream_index = FindAudioStream(format);
    if (r.stream_index < 0) throw MediaError("the file has no audio stream");
    const AVStream* stream = format->streams[r.stream_index];
    const int own_rate = stream->codecpar->sample_rate;
    if (options.min_sample_rate > 0 && own_rate > 0) {
        r.options.sample_rate = std::clamp(
            own_rate, std::min(options.min_sample_rate, options.sample_rate), options.sample_rate);
    }
    r.max_frames_out = static_cast<std::int64_t>(options.max_seconds * r.options.sample_rate);
    for (unsigned i = 0; i < format->nb_streams; ++i) {
        if (static_cast<int>(i) != r.stream_index) format->streams[i]->discard = AVDISCARD_ALL;
    }
    const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
    if (codec == nullptr) {
        throw MediaError(std::string("no decoder for audio codec ") +
                         avcodec_get_name(stream->codecpar->codec_id));
    }
    r.decoder = MakeCodecContext(codec);
    CheckAv(avcodec_parameters_to_context(r.decoder.get(), stream->codecpar),
            "avcodec_parameters_to_context");
    r.decoder->thread_count = 1;
    r.decoder->pkt_timebase = stream->time_base;
    CheckAv(avcodec_open2(r.decoder.get(), codec, nullptr), "opening the audio decoder");
    r.packet = MakePacket();
    r.frame = MakeFrame();
}

AudioReader::~AudioReader() = default;

int AudioReader::SampleRate() const { return impl_->options.sample_rate; }

double AudioReader::DurationHint() const {
    const AVFormatContext* format = impl_->input->Format();
    const AVStream* stream = format->streams[impl_->stream_index];
    if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0) {
        return static_cast<double>(stream->duration) * av_q2d(stream->time_base);
    }
    if (format->duration != AV_NOPTS_VALUE && format->duration > 0) {
        return static_cast<double>(format->duration) / AV_TIME_BASE;
    }
    return 0;
}

std::int64_t AudioReader::Read(std::vector<float>& out, std::int64_t max_frames) {
    Impl& r = *impl_;
    std::int64_t appended = 0;
    while (!r.done && appended < max_frames) {
        // Take every frame the decoder has ready.
        const int rc = avcodec_receive_frame(r.decoder.get(), r.frame.get());
        if (rc >= 0) {
            appended += r.Convert(r.frame.get(), out);
            av_frame_unref(r.frame.get());
            r.CheckBounds();
            continue;
        }
        if (rc == AVERROR_EOF) {
            appended += r.FlushResampler(out);
            r.CheckBounds();
            r.done = true;
            break;
        }
        if (rc != AVERROR(EAGAIN)) {
            if (++r.errors > kMaxDecodeErrors) CheckAv(rc, "decoding audio");
            continue;
        }
        if (r.demuxer_done) {
            // Flushed yet asking for input: a decoder bug; stop rather than loop.
            throw MediaError("the audio decoder stalled");
        }
        const int read = av_read_frame(r.input->Format(), r.packet.get());
        if (read == AVERROR_EOF) {
            r.demuxer_done = true;
            CheckAv(avcodec_send_packet(r.decoder.get(), nullptr), "flushing the audio decoder");
            continue;
        }
        if (read < 0) {
            if (r.input->Expired()) throw MediaError("reading took too long");
            // A damaged tail ends the stream; what was decoded so far stands.
            if (++r.errors > kMaxDecodeErrors) CheckAv(read, "reading audio");
            r.demuxer_done = true;
            CheckAv(avcodec_send_packet(r.decoder.get(), nullptr), "flushing the audio decoder");
            continue;
        }
        if (r.packet->stream_index == r.stream_index) {
            const int sent = avcodec_send_packet(r.decoder.get(), r.packet.get());
            if (sent < 0 && sent != AVERROR(EAGAIN) && ++r.errors > kMaxDecodeErrors) {
                CheckAv(sent, "decoding audio");
            }
        }
        av_packet_unref(r.packet.get());
    }
    return appended;
}

AudioBuffer ReadAudio(const std::string& path, const AudioReadOptions& options,
                      const std::function<bool()>& keep_going) {
    AudioReader reader(path, options);
    AudioBuffer audio;
    audio.sample_rate = reader.SampleRate();
    audio.channels = options.channels;
    const double hint = reader.DurationHint();
    if (hint > 0 && hint <= options.max_seconds) {
        audio.samples.reserve(static_cast<std::size_t>(hint * audio.sample_rate + 4096) *
                              options.channels);
    }
    while (reader.Read(audio.samples, 65536) > 0) {
        if (keep_going && !keep_going()) throw MediaError("stopped");
    }
    if (audio.samples.empty()) throw MediaError("the audio stream has no samples");
    return audio;
}

}  // namespace genhost::media
