// JpegEncoder: one MJPEG encoder kept open for a stream of pictures; see jpeg_encoder.hpp.

#include "genhost/media/jpeg_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>

extern "C" {
#include <libavutil/mem.h>
#include <libavutil/opt.h>
}

#include "av_handles.hpp"

namespace genhost::media {
namespace {

constexpr int kMaxDimension = 8000;

// The example quantisation tables of the JPEG standard (ITU-T T.81 Annex K), in raster order
// (AVCodecContext::intra_matrix's order). libavcodec's MJPEG encoder would otherwise use MPEG-1's
// intra matrix for both luma and chroma.
constexpr std::uint16_t kLumaTable[64] = {
    16, 11, 10, 16, 24,  40,  51,  61,  12, 12, 14, 19, 26,  58,  60,  55,
    14, 13, 16, 24, 40,  57,  69,  56,  14, 17, 22, 29, 51,  87,  80,  62,
    18, 22, 37, 56, 68,  109, 103, 77,  24, 35, 55, 64, 81,  104, 113, 92,
    49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99};
constexpr std::uint16_t kChromaTable[64] = {
    17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99,
    99, 99, 47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99};

// Table copies `table` into memory the codec context owns (avcodec_free_context frees
// AVCodecContext::intra_matrix).
std::uint16_t* Table(const std::uint16_t (&table)[64]) {
    auto* out = static_cast<std::uint16_t*>(av_malloc(sizeof table));
    if (out == nullptr) throw MediaError("av_malloc: out of memory");
    std::copy(std::begin(table), std::end(table), out);
    return out;
}

// QualityToQscale maps libjpeg's quality to libavcodec's MJPEG quantiser scale. libjpeg scales
// the tables by S/100 with S = 5000/q below 50 and 200 - 2q from 50; libavcodec's MJPEG encoder
// scales them by qscale/8 (mpegvideo_enc.c: (table * qscale) >> 3, the DC step fixed at 8), so
// qscale = 8S/100, in its range 1..31.
int QualityToQscale(int quality) {
    const double s = quality < 50 ? 5000.0 / quality : 200.0 - 2.0 * quality;
    return std::clamp(static_cast<int>(std::lround(0.08 * s)), 1, 31);
}

// Full-range BT.601 (JFIF) in 16.16 fixed point.
constexpr int kYr = 19595, kYg = 38470, kYb = 7471;
constexpr int kUr = -11059, kUg = -21709, kUb = 32768;
constexpr int kVr = 32768, kVg = -27439, kVb = -5329;
constexpr int kHalf = 1 << 15;
constexpr int kChromaBias = (128 << 16) + kHalf;

std::uint8_t Clamp8(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

}  // namespace

struct JpegEncoder::Impl {
    int width = 0;
    int height = 0;
    int quality = 0;
    // The chroma table the encoder points at: libavcodec 59 does not free
    // AVCodecContext::chroma_intra_matrix (later versions do), so it is ours and the pointer is
    // taken back before the context goes.
    std::uint16_t chroma_table[64] = {};
    CodecContextPtr encoder;
    FramePtr yuv;
    PacketPtr packet;
    std::int64_t pts = 0;
    bool converted = false;  // yuv holds a whole picture
    std::size_t last_size = 0;

    // Convert converts the pixels [x0, x1) x [y0, y1) of `image`, with x0, y0 even (x1, y1 may
    // be odd only at the picture's edge).
    ~Impl() {
        if (encoder) encoder->chroma_intra_matrix = nullptr;
    }

    void Convert(const RgbImage& image, int x0, int y0, int x1, int y1) {
        std::uint8_t* luma = yuv->data[0];
        std::uint8_t* cb = yuv->data[1];
        std::uint8_t* cr = yuv->data[2];
        const int ls = yuv->linesize[0];
        const int cs = yuv->linesize[1];
        for (int y = y0; y < y1; y += 2) {
            const std::uint8_t* row0 = image.Row(y);
            const bool two_rows = y + 1 < height;
            const std::uint8_t* row1 = two_rows ? image.Row(y + 1) : row0;
            std::uint8_t* l0 = luma + std::ptrdiff_t{ls} * y;
            std::uint8_t* l1 = two_rows ? l0 + ls : nullptr;
            std::uint8_t* u = cb + std::ptrdiff_t{cs} * (y / 2);
            std::uint8_t* v = cr + std::ptrdiff_t{cs} * (y / 2);
            for (int x = x0; x < x1; x += 2) {
                const bool two_cols = x + 1 < width;
                int r = 0, g = 0, b = 0;
                for (int dy = 0; dy < 2; ++dy) {
                    const std::uint8_t* row = dy == 0 ? row0 : row1;
                    std::uint8_t* out = dy == 0 ? l0 : l1;
                    for (int dx = 0; dx < 2; ++dx) {
                        const int xx = two_cols ? x + dx : x;
                        const std::uint8_t* p = row + std::ptrdiff_t{3} * xx;
                        r += p[0];
                        g += p[1];
                        b += p[2];
                        if (out != nullptr && (dx == 0 || two_cols)) {
                            out[xx] = static_cast<std::uint8_t>(
                                (kYr * p[0] + kYg * p[1] + kYb * p[2] + kHalf) >> 16);
                        }
                    }
                }
                // The 2x2 average (sum / 4), folded into the fixed-point shift.
                u[x / 2] = Clamp8((kUr * r + kUg * g + kUb * b + 4 * kChromaBias) >> 18);
                v[x / 2] = Clamp8((kVr * r + kVg * g + kVb * b + 4 * kChromaBias) >> 18);
            }
        }
    }

    std::string EncodeFrame() {
        yuv->pts = pts++;
        yuv->quality = encoder->global_quality;
        CheckAv(avcodec_send_frame(encoder.get(), yuv.get()), "encoding the picture");
        std::string bytes;
        bytes.reserve(last_size + last_size / 8);
        for (;;) {
            const int rc = avcodec_receive_packet(encoder.get(), packet.get());
            if (rc == AVERROR(EAGAIN)) break;
            CheckAv(rc, "receiving the encoded picture");
            bytes.append(reinterpret_cast<const char*>(packet->data),
                         static_cast<std::size_t>(packet->size));
            av_packet_unref(packet.get());
        }
        if (bytes.empty()) throw MediaError("the MJPEG encoder produced no data");
        last_size = bytes.size();
        return bytes;
    }
};

JpegEncoder::JpegEncoder(int width, int height, int quality) : impl_(std::make_unique<Impl>()) {
    if (width < 1 || width > kMaxDimension || height < 1 || height > kMaxDimension) {
        throw MediaError("JPEG size " + std::to_string(width) + "x" + std::to_string(height) +
                         " is outside 1..8000 per side");
    }
    if (quality < 1 || quality > 100) {
        throw MediaError("JPEG quality " + std::to_string(quality) + " is outside 1..100");
    }
    Impl& s = *impl_;
    s.width = width;
    s.height = height;
    s.quality = quality;
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
    if (codec == nullptr) throw MediaError("libavcodec has no MJPEG encoder");
    s.encoder = MakeCodecContext(codec);
    AVCodecContext* e = s.encoder.get();
    e->width = width;
    e->height = height;
    // The MJPEG encoder takes full range as the deprecated yuvj420p (same layout as yuv420p).
    e->pix_fmt = AV_PIX_FMT_YUVJ420P;
    e->color_range = AVCOL_RANGE_JPEG;
    e->colorspace = AVCOL_SPC_BT470BG;
    e->time_base = AVRational{1, 25};
    e->thread_count = 1;  // one picture at a time, many encoders in the process
    e->flags |= AV_CODEC_FLAG_BITEXACT | AV_CODEC_FLAG_QSCALE;
    e->sample_aspect_ratio = AVRational{1, 1};  // the JFIF segment is only written with it
    e->qmin = 1;
    e->qmax = 31;
    e->global_quality = QualityToQscale(quality) * FF_QP2LAMBDA;
    e->intra_matrix = Table(kLumaTable);
    std::copy(std::begin(kChromaTable), std::end(kChromaTable), s.chroma_table);
    e->chroma_intra_matrix = s.chroma_table;
    // The standard Huffman tables: "optimal" ones (the default) cost a second pass over every
    // block for a few percent of size.
    CheckAv(av_opt_set(e->priv_data, "huffman", "default", 0), "setting the Huffman tables");
    CheckAv(avcodec_open2(e, codec, nullptr), "opening the MJPEG encoder");
    s.yuv = MakeVideoFrame(AV_PIX_FMT_YUVJ420P, width, height);
    s.yuv->color_range = AVCOL_RANGE_JPEG;
    s.yuv->colorspace = AVCOL_SPC_BT470BG;
    s.packet = MakePacket();
}

JpegEncoder::~JpegEncoder() = default;

int JpegEncoder::width() const { return impl_->width; }
int JpegEncoder::height() const { return impl_->height; }
int JpegEncoder::quality() const { return impl_->quality; }

std::string JpegEncoder::Encode(const RgbImage& image) {
    impl_->converted = false;  // everything may have changed
    return Encode(image, {});
}

std::string JpegEncoder::Encode(const RgbImage& image, std::span<const PixelRect> changed) {
    Impl& s = *impl_;
    if (image.width != s.width || image.height != s.height ||
        image.pixels.size() != std::size_t{3} * s.width * s.height) {
        throw MediaError("JpegEncoder: a " + std::to_string(image.width) + "x" +
                         std::to_string(image.height) + " picture for a " +
                         std::to_string(s.width) + "x" + std::to_string(s.height) + " encoder");
    }
    // The encoder drops its reference to the frame once the packet is out; a still-shared
    // buffer would be copied here rather than written under it.
    CheckAv(av_frame_make_writable(s.yuv.get()), "av_frame_make_writable");
    if (!s.converted) {
        s.Convert(image, 0, 0, s.width, s.height);
        s.converted = true;
    } else {
        for (const PixelRect& r : changed) {
            // Clip, then widen to whole 2x2 chroma blocks.
            const int x0 = std::max(0, r.x) & ~1;
            const int y0 = std::max(0, r.y) & ~1;
            const int x1 = std::min(s.width, ((std::min(s.width, r.x + r.width) + 1) & ~1));
            const int y1 = std::min(s.height, ((std::min(s.height, r.y + r.height) + 1) & ~1));
            if (x0 < x1 && y0 < y1) s.Convert(image, x0, y0, x1, y1);
        }
    }
    return s.EncodeFrame();
}

}  // namespace genhost::media
