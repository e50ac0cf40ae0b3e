#include "av_handles.hpp"

extern "C" {
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>
}

#include <string>

namespace genhost::media {

void AvDictionary::Set(const char* key, const char* value) {
    CheckAv(av_dict_set(&dict_, key, value, 0), "av_dict_set");
}

void AvDictionary::Set(const char* key, std::int64_t value) {
    CheckAv(av_dict_set_int(&dict_, key, value, 0), "av_dict_set_int");
}

std::string AvErrorText(int errnum) {
    char text[AV_ERROR_MAX_STRING_SIZE] = {};
    if (av_strerror(errnum, text, sizeof(text)) < 0) {
        return "libav error " + std::to_string(errnum);
    }
    return text;
}

int CheckAv(int rc, std::string_view what) {
    if (rc < 0) {
        std::string message(what);
        message += ": ";
        message += AvErrorText(rc);
        throw MediaError(message);
    }
    return rc;
}

FramePtr MakeFrame() {
    FramePtr frame(av_frame_alloc());
    if (!frame) {
        throw MediaError("av_frame_alloc: out of memory");
    }
    return frame;
}

PacketPtr MakePacket() {
    PacketPtr packet(av_packet_alloc());
    if (!packet) {
        throw MediaError("av_packet_alloc: out of memory");
    }
    return packet;
}

FramePtr MakeVideoFrame(AVPixelFormat format, int width, int height) {
    FramePtr frame = MakeFrame();
    frame->format = format;
    frame->width = width;
    frame->height = height;
    CheckAv(av_frame_get_buffer(frame.get(), 0), "av_frame_get_buffer");
    return frame;
}

CodecContextPtr MakeCodecContext(const AVCodec* codec) {
    CodecContextPtr ctx(avcodec_alloc_context3(codec));
    if (!ctx) {
        throw MediaError("avcodec_alloc_context3: out of memory");
    }
    return ctx;
}

SwsContextPtr MakeScaler(int src_width, int src_height, AVPixelFormat src_format, int dst_width,
                         int dst_height, AVPixelFormat dst_format, int flags) {
    SwsContextPtr ctx(sws_getContext(src_width, src_height, src_format, dst_width, dst_height,
                                     dst_format, flags, nullptr, nullptr, nullptr));
    if (!ctx) {
        const char* src_name = av_get_pix_fmt_name(src_format);
        const char* dst_name = av_get_pix_fmt_name(dst_format);
        throw MediaError(std::string("swscale cannot convert ") + (src_name ? src_name : "?") +
                         " " + std::to_string(src_width) + "x" + std::to_string(src_height) +
                         " to " + (dst_name ? dst_name : "?") + " " + std::to_string(dst_width) +
                         "x" + std::to_string(dst_height));
    }
    return ctx;
}

AVPixelFormat SwsFormat(AVPixelFormat format, bool& full_range) {
    full_range = true;
    switch (format) {
        case AV_PIX_FMT_YUVJ420P:
            return AV_PIX_FMT_YUV420P;
        case AV_PIX_FMT_YUVJ422P:
            return AV_PIX_FMT_YUV422P;
        case AV_PIX_FMT_YUVJ444P:
            return AV_PIX_FMT_YUV444P;
        case AV_PIX_FMT_YUVJ440P:
            return AV_PIX_FMT_YUV440P;
        case AV_PIX_FMT_YUVJ411P:
            return AV_PIX_FMT_YUV411P;
        default:
            full_range = false;
            return format;
    }
}

}  // namespace genhost::media
