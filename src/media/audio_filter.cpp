// AudioFilter: a libavfilter graph over float PCM (abuffer → chain → aresample/aformat →
// abuffersink).

extern "C" {
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
}

#include <algorithm>
#include <cmath>
#include <string>

#include "av_handles.hpp"
#include "genhost/media/audio.hpp"

namespace genhost::media {
namespace {

const char* LayoutName(int channels) { return channels == 2 ? "stereo" : "mono"; }

}  // namespace

struct AudioFilter::Impl {
    FilterGraphPtr graph;
    AVFilterContext* source = nullptr;  // owned by the graph
    AVFilterContext* sink = nullptr;    // owned by the graph
    int rate = 0;
    int channels = 1;
    int out_rate = 0;
    int out_channels = 1;
    std::int64_t pushed = 0;
    bool flushed = false;
    FramePtr frame = MakeFrame();
};

AudioFilter::AudioFilter(std::string_view description, int sample_rate, int channels, int out_rate,
                         int out_channels)
    : impl_(std::make_unique<Impl>()) {
    Impl& f = *impl_;
    if (channels < 1 || channels > 2 || sample_rate < 1000) {
        throw MediaError("audio filter: bad input format");
    }
    f.rate = sample_rate;
    f.channels = channels;
    f.out_rate = out_rate > 0 ? out_rate : sample_rate;
    f.out_channels = out_channels > 0 ? out_channels : channels;
    f.graph.reset(avfilter_graph_alloc());
    if (!f.graph) throw MediaError("avfilter_graph_alloc: out of memory");
    f.graph->nb_threads = 1;

    const std::string source_args = "time_base=1/" + std::to_string(sample_rate) +
                                    ":sample_rate=" + std::to_string(sample_rate) +
                                    ":sample_fmt=flt:channel_layout=" + LayoutName(channels);
    CheckAv(avfilter_graph_create_filter(&f.source, avfilter_get_by_name("abuffer"), "in",
                                         source_args.c_str(), nullptr, f.graph.get()),
            "creating the audio source");
    CheckAv(avfilter_graph_create_filter(&f.sink, avfilter_get_by_name("abuffersink"), "out",
                                         nullptr, nullptr, f.graph.get()),
            "creating the audio sink");

    std::string chain(description.empty() ? std::string_view("anull") : description);
    chain += ",aresample=" + std::to_string(f.out_rate) +
             ",aformat=sample_fmts=flt:sample_rates=" + std::to_string(f.out_rate) +
             ":channel_layouts=" + LayoutName(f.out_channels);

    FilterInOutPtr outputs(avfilter_inout_alloc());
    FilterInOutPtr inputs(avfilter_inout_alloc());
    if (!outputs || !inputs) throw MediaError("avfilter_inout_alloc: out of memory");
    outputs->name = av_strdup("in");
    outputs->filter_ctx = f.source;
    outputs->pad_idx = 0;
    outputs->next = nullptr;
    inputs->name = av_strdup("out");
    inputs->filter_ctx = f.sink;
    inputs->pad_idx = 0;
    inputs->next = nullptr;
    AVFilterInOut* in_raw = inputs.release();
    AVFilterInOut* out_raw = outputs.release();
    const int rc =
        avfilter_graph_parse_ptr(f.graph.get(), chain.c_str(), &in_raw, &out_raw, nullptr);
    inputs.reset(in_raw);
    outputs.reset(out_raw);
    CheckAv(rc, "parsing the audio filter chain");
    CheckAv(avfilter_graph_config(f.graph.get(), nullptr), "configuring the audio filters");
}

AudioFilter::~AudioFilter() = default;

int AudioFilter::out_rate() const { return impl_->out_rate; }
int AudioFilter::out_channels() const { return impl_->out_channels; }

void AudioFilter::Push(const float* samples, std::int64_t frames) {
    Impl& f = *impl_;
    if (f.flushed) throw MediaError("audio filter: push after flush");
    constexpr std::int64_t kChunk = 4096;
    for (std::int64_t done = 0; done < frames; done += kChunk) {
        const int n = static_cast<int>(std::min(kChunk, frames - done));
        AVFrame* frame = f.frame.get();
        frame->nb_samples = n;
        frame->format = AV_SAMPLE_FMT_FLT;
        frame->sample_rate = f.rate;
        av_channel_layout_default(&frame->ch_layout, f.channels);
        CheckAv(av_frame_get_buffer(frame, 0), "av_frame_get_buffer");
        std::copy(samples + done * f.channels, samples + (done + n) * f.channels,
                  reinterpret_cast<float*>(frame->data[0]));
        frame->pts = f.pushed;
        f.pushed += n;
        const int rc = av_buffersrc_add_frame_flags(f.source, frame, 0);
        av_frame_unref(frame);
        CheckAv(rc, "feeding the audio filters");
    }
}

void AudioFilter::Flush() {
    Impl& f = *impl_;
    if (f.flushed) return;
    f.flushed = true;
    CheckAv(av_buffersrc_add_frame_flags(f.source, nullptr, 0), "flushing the audio filters");
}

std::int64_t AudioFilter::Pull(std::vector<float>& out) {
    Impl& f = *impl_;
    std::int64_t total = 0;
    for (;;) {
        const int rc = av_buffersink_get_frame(f.sink, f.frame.get());
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return total;
        CheckAv(rc, "reading the audio filters");
        const int n = f.frame->nb_samples;
        const auto* data = reinterpret_cast<const float*>(f.frame->data[0]);
        out.insert(out.end(), data, data + static_cast<std::ptrdiff_t>(n) * f.out_channels);
        total += n;
        av_frame_unref(f.frame.get());
    }
}

AudioBuffer FilterAudio(const AudioBuffer& audio, std::string_view description, int out_rate,
                        int out_channels) {
    AudioFilter filter(description, audio.sample_rate, audio.channels, out_rate, out_channels);
    AudioBuffer result;
    result.sample_rate = filter.out_rate();
    result.channels = filter.out_channels();
    result.samples.reserve(static_cast<std::size_t>(static_cast<double>(audio.frames()) *
                                                        result.sample_rate / audio.sample_rate *
                                                        result.channels +
                                                    4096));
    constexpr std::int64_t kChunk = 65536;
    for (std::int64_t done = 0; done < audio.frames(); done += kChunk) {
        filter.Push(audio.samples.data() + done * audio.channels,
                    std::min(kChunk, audio.frames() - done));
        filter.Pull(result.samples);
    }
    filter.Flush();
    filter.Pull(result.samples);
    return result;
}

bool AudioFilterAvailable(std::string_view name) {
    return avfilter_get_by_name(std::string(name).c_str()) != nullptr;
}

void FitFrames(AudioBuffer& audio, std::int64_t frames) {
    audio.samples.resize(
        static_cast<std::size_t>(std::max<std::int64_t>(frames, 0)) * audio.channels, 0.0f);
}

float PeakLevel(const AudioBuffer& audio) {
    float peak = 0;
    for (const float v : audio.samples) peak = std::max(peak, std::abs(v));
    return peak;
}

double RmsLevel(const AudioBuffer& audio) {
    if (audio.samples.empty()) return 0;
    double sum = 0;
    for (const float v : audio.samples) sum += static_cast<double>(v) * v;
    return std::sqrt(sum / static_cast<double>(audio.samples.size()));
}

AudioBuffer Resample(const AudioBuffer& audio, int rate, int channels) {
    if (audio.sample_rate == rate && audio.channels == channels) return audio;
    return FilterAudio(audio, "anull", rate, channels);
}

}  // namespace genhost::media
