// src/media/av_handles.hpp (private to the media module)
//
// Provides the RAII owners for every libav handle the media module uses (each a std::unique_ptr
// with a stateless deleter that calls the matching libav free function), AvDictionary (an owned
// AVDictionary* for option passing), and the small checked constructors and error helpers the
// image, video and audio pipelines share.
//
// Every function here throws MediaError on failure (allocation failures included) and never
// returns a null handle. Nothing here holds global state; handles belong to the thread that uses
// them, as libav requires.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
}

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "genhost/media/image.hpp"

namespace genhost::media {

// Deleters. Each accepts null (unique_ptr never calls it with null anyway).
struct CodecContextDeleter {
    void operator()(AVCodecContext* ctx) const noexcept { avcodec_free_context(&ctx); }
};
struct FrameDeleter {
    void operator()(AVFrame* frame) const noexcept { av_frame_free(&frame); }
};
struct PacketDeleter {
    void operator()(AVPacket* packet) const noexcept { av_packet_free(&packet); }
};
// For contexts opened with avformat_open_input (demuxing).
struct InputFormatDeleter {
    void operator()(AVFormatContext* ctx) const noexcept { avformat_close_input(&ctx); }
};
// For contexts made with avformat_alloc_output_context2 (muxing). Does not close ctx->pb: the
// AVIOContext has its own owner (AvioContextPtr, MemoryOutput) or must be closed with avio_closep
// before this runs.
struct OutputFormatDeleter {
    void operator()(AVFormatContext* ctx) const noexcept { avformat_free_context(ctx); }
};
// For custom AVIOContexts made with avio_alloc_context: frees the (possibly reallocated) I/O
// buffer the context owns, then the context.
struct AvioContextDeleter {
    void operator()(AVIOContext* avio) const noexcept {
        av_freep(&avio->buffer);
        avio_context_free(&avio);
    }
};
struct SwsContextDeleter {
    void operator()(SwsContext* ctx) const noexcept { sws_freeContext(ctx); }
};
struct SwrContextDeleter {
    void operator()(SwrContext* ctx) const noexcept { swr_free(&ctx); }
};
struct FilterGraphDeleter {
    void operator()(AVFilterGraph* graph) const noexcept { avfilter_graph_free(&graph); }
};
struct FilterInOutDeleter {
    void operator()(AVFilterInOut* inout) const noexcept { avfilter_inout_free(&inout); }
};

using CodecContextPtr = std::unique_ptr<AVCodecContext, CodecContextDeleter>;
using FramePtr = std::unique_ptr<AVFrame, FrameDeleter>;
using PacketPtr = std::unique_ptr<AVPacket, PacketDeleter>;
using InputFormatPtr = std::unique_ptr<AVFormatContext, InputFormatDeleter>;
using OutputFormatPtr = std::unique_ptr<AVFormatContext, OutputFormatDeleter>;
using AvioContextPtr = std::unique_ptr<AVIOContext, AvioContextDeleter>;
using SwsContextPtr = std::unique_ptr<SwsContext, SwsContextDeleter>;
using SwrContextPtr = std::unique_ptr<SwrContext, SwrContextDeleter>;
using FilterGraphPtr = std::unique_ptr<AVFilterGraph, FilterGraphDeleter>;
using FilterInOutPtr = std::unique_ptr<AVFilterInOut, FilterInOutDeleter>;

// AvDictionary owns an AVDictionary*. libav's option APIs take AVDictionary** and may replace or
// consume the dictionary, so this is a small class rather than a unique_ptr: pass Address() to
// such calls and the destructor frees whatever is left.
class AvDictionary {
  public:
    AvDictionary() = default;
    ~AvDictionary() { av_dict_free(&dict_); }
    AvDictionary(const AvDictionary&) = delete;
    AvDictionary& operator=(const AvDictionary&) = delete;

    // Set stores key=value, replacing an existing entry; throws MediaError on failure.
    void Set(const char* key, const char* value);
    void Set(const char* key, std::int64_t value);
    // Address is for libav calls that take AVDictionary** (avcodec_open2, avformat_write_header).
    AVDictionary** Address() { return &dict_; }
    AVDictionary* Get() const { return dict_; }
    // Count is how many entries remain (after avcodec_open2: the options nobody recognised).
    int Count() const { return av_dict_count(dict_); }

  private:
    AVDictionary* dict_ = nullptr;
};

// AvErrorText is libav's description of the AVERROR code `errnum`.
std::string AvErrorText(int errnum);

// CheckAv returns `rc` when it is >= 0 and otherwise throws MediaError("<what>: <libav text>").
int CheckAv(int rc, std::string_view what);

// MakeFrame and MakePacket allocate empty frames and packets.
FramePtr MakeFrame();
PacketPtr MakePacket();

// MakeVideoFrame allocates a frame of `format`, `width` x `height` with its data buffers
// (av_frame_get_buffer, default alignment). The contents are uninitialised.
FramePtr MakeVideoFrame(AVPixelFormat format, int width, int height);

// MakeCodecContext allocates a context for `codec` (which must not be null).
CodecContextPtr MakeCodecContext(const AVCodec* codec);

// MakeScaler creates a swscale context (sws_getContext) converting `src` to `dst` with `flags`;
// throws MediaError when swscale cannot convert between the formats.
SwsContextPtr MakeScaler(int src_width, int src_height, AVPixelFormat src_format, int dst_width,
                         int dst_height, AVPixelFormat dst_format, int flags);

// SwsFormat maps the deprecated full-range formats (yuvj420p, yuvj422p, yuvj444p, yuvj440p,
// yuvj411p) to their plain equivalents, which have the same memory layout; swscale warns on the
// former. `full_range` is set to whether `format` was a yuvj format; other formats return
// unchanged with `full_range` false. Callers pass the range on with sws_setColorspaceDetails.
AVPixelFormat SwsFormat(AVPixelFormat format, bool& full_range);

}  // namespace genhost::media
