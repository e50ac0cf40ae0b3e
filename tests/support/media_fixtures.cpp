#include "support/media_fixtures.hpp"

#include "genhost/core/crypto.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/crc.h>
#include <libavutil/imgutils.h>
}

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

namespace genhost::testing {
namespace {

void Check(int rc, const char* what) {
    if (rc < 0) throw std::runtime_error(std::string("libav: ") + what);
}

struct CodecFree {
    void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFree {
    void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFree {
    void operator()(AVPacket* p) const { av_packet_free(&p); }
};
using CodecPtr = std::unique_ptr<AVCodecContext, CodecFree>;
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;

FramePtr NewFrame(AVPixelFormat format, int width, int height) {
    FramePtr frame(av_frame_alloc());
    frame->format = format;
    frame->width = width;
    frame->height = height;
    Check(av_frame_get_buffer(frame.get(), 0), "av_frame_get_buffer");
    return frame;
}

void Put32(std::string& out, std::uint32_t v) {
    out.push_back(static_cast<char>(v >> 24));
    out.push_back(static_cast<char>(v >> 16));
    out.push_back(static_cast<char>(v >> 8));
    out.push_back(static_cast<char>(v));
}

void PutLe(std::string& out, std::uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

void PngChunk(std::string& out, const char* type, const std::string& data) {
    Put32(out, static_cast<std::uint32_t>(data.size()));
    const std::string body = std::string(type, 4) + data;
    out += body;
    const AVCRC* table = av_crc_get_table(AV_CRC_32_IEEE_LE);
    const std::uint32_t crc =
        av_crc(table, 0xFFFFFFFFu, reinterpret_cast<const std::uint8_t*>(body.data()),
               body.size()) ^
        0xFFFFFFFFu;
    Put32(out, crc);
}

}  // namespace

std::string MakePng(int width, int height, bool noise) {
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    if (codec == nullptr) throw std::runtime_error("no PNG encoder");
    CodecPtr ctx(avcodec_alloc_context3(codec));
    ctx->width = width;
    ctx->height = height;
    ctx->pix_fmt = AV_PIX_FMT_RGB24;
    ctx->time_base = {1, 25};
    Check(avcodec_open2(ctx.get(), codec, nullptr), "open PNG encoder");
    FramePtr frame = NewFrame(AV_PIX_FMT_RGB24, width, height);
    std::mt19937 rng(7);
    for (int y = 0; y < height; ++y) {
        std::uint8_t* row = frame->data[0] + static_cast<std::ptrdiff_t>(y) * frame->linesize[0];
        for (int x = 0; x < width; ++x) {
            row[3 * x] = noise ? static_cast<std::uint8_t>(rng()) : static_cast<std::uint8_t>(x);
            row[3 * x + 1] =
                noise ? static_cast<std::uint8_t>(rng()) : static_cast<std::uint8_t>(y);
            row[3 * x + 2] = 128;
        }
    }
    Check(avcodec_send_frame(ctx.get(), frame.get()), "encode PNG");
    PacketPtr packet(av_packet_alloc());
    Check(avcodec_receive_packet(ctx.get(), packet.get()), "receive PNG");
    return std::string(reinterpret_cast<const char*>(packet->data),
                       static_cast<std::size_t>(packet->size));
}

std::string MakeMp4(int width, int height, double seconds, int fps, bool noise) {
    char path[] = "/tmp/genhost-fixture-XXXXXX.mp4";
    const int fd = mkstemps(path, 4);
    if (fd < 0) throw std::runtime_error("mkstemps failed");
    close(fd);

    AVFormatContext* out = nullptr;
    Check(avformat_alloc_output_context2(&out, nullptr, "mp4", path), "mp4 muxer");
    std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> guard(out, [](AVFormatContext* f) {
        if (f->pb != nullptr) avio_closep(&f->pb);
        avformat_free_context(f);
    });
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    if (codec == nullptr) throw std::runtime_error("no MPEG-4 encoder");
    CodecPtr ctx(avcodec_alloc_context3(codec));
    ctx->width = width;
    ctx->height = height;
    ctx->pix_fmt = AV_PIX_FMT_YUV420P;
    ctx->time_base = {1, fps};
    ctx->framerate = {fps, 1};
    ctx->gop_size = fps;
    ctx->thread_count = 1;
    if (noise) {
        ctx->flags |= AV_CODEC_FLAG_QSCALE;
        ctx->global_quality = FF_QP2LAMBDA * 2;
    }
    if (out->oformat->flags & AVFMT_GLOBALHEADER) ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    Check(avcodec_open2(ctx.get(), codec, nullptr), "open MPEG-4 encoder");
    AVStream* stream = avformat_new_stream(out, nullptr);
    Check(avcodec_parameters_from_context(stream->codecpar, ctx.get()), "stream parameters");
    stream->time_base = ctx->time_base;
    Check(avio_open(&out->pb, path, AVIO_FLAG_WRITE), "avio_open");
    Check(avformat_write_header(out, nullptr), "write header");

    const int frames = std::max(1, static_cast<int>(std::lround(seconds * fps)));
    FramePtr frame = NewFrame(AV_PIX_FMT_YUV420P, width, height);
    PacketPtr packet(av_packet_alloc());
    std::mt19937 rng(11);
    auto drain = [&] {
        for (;;) {
            const int rc = avcodec_receive_packet(ctx.get(), packet.get());
            if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
            Check(rc, "receive packet");
            packet->duration = 1;
            av_packet_rescale_ts(packet.get(), ctx->time_base, stream->time_base);
            packet->stream_index = stream->index;
            Check(av_interleaved_write_frame(out, packet.get()), "write packet");
        }
    };
    for (int i = 0; i < frames; ++i) {
        Check(av_frame_make_writable(frame.get()), "frame writable");
        for (int plane = 0; plane < 3; ++plane) {
            const int h = plane == 0 ? height : height / 2;
            const int w = plane == 0 ? width : width / 2;
            for (int y = 0; y < h; ++y) {
                std::uint8_t* row =
                    frame->data[plane] + static_cast<std::ptrdiff_t>(y) * frame->linesize[plane];
                for (int x = 0; x < w; ++x) {
                    row[x] = noise ? static_cast<std::uint8_t>(rng())
                                   : static_cast<std::uint8_t>(plane == 0 ? x + y + i * 3 : 128);
                }
            }
        }
        frame->pts = i;
        Check(avcodec_send_frame(ctx.get(), frame.get()), "send frame");
        drain();
    }
    Check(avcodec_send_frame(ctx.get(), nullptr), "flush");
    drain();
    Check(av_write_trailer(out), "write trailer");
    guard.reset();

    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    std::remove(path);
    return bytes.str();
}

std::string MakeWav(double seconds, int rate) {
    const auto samples = static_cast<std::uint32_t>(std::lround(seconds * rate));
    std::string out = "RIFF";
    PutLe(out, 36 + samples * 2, 4);
    out += "WAVEfmt ";
    PutLe(out, 16, 4);
    PutLe(out, 1, 2);  // PCM
    PutLe(out, 1, 2);  // mono
    PutLe(out, static_cast<std::uint32_t>(rate), 4);
    PutLe(out, static_cast<std::uint32_t>(rate) * 2, 4);
    PutLe(out, 2, 2);
    PutLe(out, 16, 2);
    out += "data";
    PutLe(out, samples * 2, 4);
    for (std::uint32_t i = 0; i < samples; ++i) {
        const double t = static_cast<double>(i) / rate;
        const auto v = static_cast<std::int16_t>(8000 * std::sin(2 * M_PI * 440 * t));
        PutLe(out, static_cast<std::uint16_t>(v), 2);
    }
    return out;
}

std::string MakePngBomb(int side) {
    std::string out = "\x89PNG\r\n\x1a\n";
    std::string ihdr;
    Put32(ihdr, static_cast<std::uint32_t>(side));
    Put32(ihdr, static_cast<std::uint32_t>(side));
    ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, deflate, no filter, no interlace
    PngChunk(out, "IHDR", ihdr);
    // A valid zlib stream of a few zero bytes: the decoder would have to inflate the whole
    // picture from next to nothing.
    PngChunk(out, "IDAT", std::string("\x78\x9c\x63\x60\x00\x00\x00\x02\x00\x01", 10));
    PngChunk(out, "IEND", "");
    return out;
}

void FillMediaPlaceholders(nlohmann::json& j) {
    if (j.is_string()) {
        const std::string s = j;
        if (s == "$png") j = "data:image/png;base64," + Base64Encode(MakePng(320, 240));
        if (s == "$mp4") j = "data:video/mp4;base64," + Base64Encode(MakeMp4(854, 480, 5.0, 24));
        if (s == "$wav") j = "data:audio/wav;base64," + Base64Encode(MakeWav(5.5, 16000));
    } else if (j.is_structured()) {
        for (auto& v : j) FillMediaPlaceholders(v);
    }
}

}  // namespace genhost::testing
