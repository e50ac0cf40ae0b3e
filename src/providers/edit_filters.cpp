// Picture filters of the builtin editing pipelines; see edit_filters.hpp.
#include "edit_filters.hpp"

#include "genhost/core/cpu.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace genhost::providers::edit {
namespace {

std::uint8_t Clamp8(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

// Fixed point: amounts are applied as (value * q) >> 8.
int Q8(double amount) { return static_cast<int>(std::lround(amount * 256.0)); }

// BoxPass blurs `in` into `out` along rows (horizontal) or columns with a running sum.
void BoxPass(const RgbImage& in, RgbImage& out, int r, bool horizontal) {
    const int w = in.width;
    const int h = in.height;
    const int n = horizontal ? w : h;
    const int lines = horizontal ? h : w;
    const std::size_t step = horizontal ? 3 : std::size_t(3) * w;
    const int div = 2 * r + 1;
    for (int line = 0; line < lines; ++line) {
        const std::uint8_t* src =
            horizontal ? in.Row(line) : in.pixels.data() + std::size_t(3) * line;
        std::uint8_t* dst = horizontal ? out.Row(line) : out.pixels.data() + std::size_t(3) * line;
        for (int c = 0; c < 3; ++c) {
            auto at = [&](int i) {
                return int{src[std::size_t(std::clamp(i, 0, n - 1)) * step + c]};
            };
            int sum = 0;
            for (int i = -r; i <= r; ++i) sum += at(i);
            for (int i = 0; i < n; ++i) {
                dst[std::size_t(i) * step + c] = static_cast<std::uint8_t>((sum + div / 2) / div);
                sum += at(i + r + 1) - at(i - r);
            }
        }
    }
}

// ToPlanes splits n RGB24 pixels into GBRP's planes, FromPlanes joins them again. Byte copies:
// every variant the compiler makes (AVX2 shuffles, baseline SSE2) gives the same bytes.
GENHOST_CPU_CLONES void ToPlanes(const std::uint8_t* __restrict rgb, std::size_t n,
                                 std::uint8_t* __restrict g, std::uint8_t* __restrict b,
                                 std::uint8_t* __restrict r) {
    for (std::size_t i = 0; i < n; ++i) {
        g[i] = rgb[3 * i + 1];
        b[i] = rgb[3 * i + 2];
        r[i] = rgb[3 * i];
    }
}

GENHOST_CPU_CLONES void FromPlanes(const std::uint8_t* __restrict g,
                                   const std::uint8_t* __restrict b,
                                   const std::uint8_t* __restrict r, std::size_t n,
                                   std::uint8_t* __restrict rgb) {
    for (std::size_t i = 0; i < n; ++i) {
        rgb[3 * i] = r[i];
        rgb[3 * i + 1] = g[i];
        rgb[3 * i + 2] = b[i];
    }
}

}  // namespace

std::uint64_t Mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::uint64_t HashString(std::string_view text) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    return h;
}

int Even(int v) { return std::max(2, v & ~1); }

RgbImage EvenSize(const RgbImage& image) {
    const int w = image.width & ~1;
    const int h = image.height & ~1;
    if (w == image.width && h == image.height) return image;
    if (w < 2 || h < 2) return media::Resize(image, std::max(2, w), std::max(2, h));
    RgbImage out(w, h);
    for (int y = 0; y < h; ++y) std::memcpy(out.Row(y), image.Row(y), std::size_t(3) * w);
    return out;
}

RgbImage LanczosResize(const RgbImage& source, int width, int height) {
    if (source.width == width && source.height == height) return source;
    LanczosScaler scaler(source.width, source.height, width, height);
    RgbImage out(width, height);
    scaler.Scale(source, out);
    return out;
}

LanczosScaler::LanczosScaler(int in_width, int in_height, int out_width, int out_height)
    : in_w_(in_width), in_h_(in_height), out_w_(out_width), out_h_(out_height) {
    // Planar RGB (GBRP) is scaled plane by plane with no colour conversion on the way.
    sws_ = sws_getContext(in_w_, in_h_, AV_PIX_FMT_GBRP, out_w_, out_h_, AV_PIX_FMT_GBRP,
                          SWS_LANCZOS | SWS_ACCURATE_RND | SWS_BITEXACT, nullptr, nullptr, nullptr);
    if (sws_ == nullptr) throw media::MediaError("swscale cannot make a Lanczos scaler");
    in_.resize(std::size_t(3) * in_w_ * in_h_);
    scaled_.resize(std::size_t(3) * out_w_ * out_h_);
}

LanczosScaler::~LanczosScaler() { sws_freeContext(sws_); }

void LanczosScaler::Scale(const RgbImage& source, RgbImage& out) {
    if (source.width != in_w_ || source.height != in_h_) {
        throw media::MediaError("LanczosScaler: the picture changed size");
    }
    out.Reshape(out_w_, out_h_);
    const std::size_t in_plane = std::size_t(in_w_) * in_h_;
    const std::size_t out_plane = std::size_t(out_w_) * out_h_;
    // Plane order of GBRP: G, B, R.
    ToPlanes(source.pixels.data(), in_plane, in_.data(), in_.data() + in_plane,
             in_.data() + 2 * in_plane);
    const std::uint8_t* src[4] = {in_.data(), in_.data() + in_plane, in_.data() + 2 * in_plane,
                                  nullptr};
    const int src_stride[4] = {in_w_, in_w_, in_w_, 0};
    std::uint8_t* dst[4] = {scaled_.data(), scaled_.data() + out_plane,
                            scaled_.data() + 2 * out_plane, nullptr};
    const int dst_stride[4] = {out_w_, out_w_, out_w_, 0};
    if (sws_scale(sws_, src, src_stride, 0, in_h_, dst, dst_stride) != out_h_) {
        throw media::MediaError("swscale could not scale the picture");
    }
    FromPlanes(scaled_.data(), scaled_.data() + out_plane, scaled_.data() + 2 * out_plane,
               out_plane, out.pixels.data());
}

RgbImage BoxBlur(const RgbImage& source, int radius) {
    RgbImage a(source.width, source.height);
    RgbImage b(source.width, source.height);
    BoxPass(source, a, radius, true);
    BoxPass(a, b, radius, false);
    BoxPass(b, a, radius, true);
    BoxPass(a, b, radius, false);
    return b;
}

void UnsharpMask(RgbImage& image, int radius, double amount, int threshold) {
    const int q = Q8(amount);
    if (q <= 0) return;
    const RgbImage blur = BoxBlur(image, std::max(1, radius));
    for (std::size_t i = 0; i < image.pixels.size(); ++i) {
        const int p = image.pixels[i];
        const int d = p - blur.pixels[i];
        if (d > threshold || d < -threshold) image.pixels[i] = Clamp8(p + ((d * q) >> 8));
    }
}

void DetailBoost(RgbImage& image, double fine, double local) {
    const int qf = Q8(std::clamp(fine, 0.0, 1.0) * 1.5);
    const int ql = Q8(std::clamp(local, 0.0, 1.0) * 0.6);
    if (qf <= 0 && ql <= 0) return;
    const RgbImage small = BoxBlur(image, 1);
    const int big_radius = std::max(2, std::min(image.width, image.height) / 64);
    const RgbImage large = ql > 0 ? BoxBlur(image, big_radius) : RgbImage{};
    for (std::size_t i = 0; i < image.pixels.size(); ++i) {
        const int p = image.pixels[i];
        int v = p * 256 + (p - small.pixels[i]) * qf;
        if (ql > 0) v += (small.pixels[i] - large.pixels[i]) * ql;
        image.pixels[i] = Clamp8((v + 128) >> 8);
    }
}

void Denoise(RgbImage& image, double strength) {
    const int q = Q8(std::clamp(strength, 0.0, 1.0));
    if (q <= 0) return;
    const RgbImage mean = BoxBlur(image, 1);
    const int limit = 4 + q / 8;  // differences up to ~36 code values count as noise
    for (std::size_t i = 0; i < image.pixels.size(); ++i) {
        const int p = image.pixels[i];
        const int d = mean.pixels[i] - p;
        const int ad = d < 0 ? -d : d;
        if (ad >= limit) continue;
        const int weight = q * (limit - ad) / limit;  // 0..256
        image.pixels[i] = Clamp8(p + ((d * weight) >> 8));
    }
}

void Look(RgbImage& image, double saturation, double contrast) {
    const int qs = Q8(saturation);
    std::array<std::uint8_t, 256> curve{};
    for (int v = 0; v < 256; ++v) {
        curve[v] = Clamp8(static_cast<int>(std::lround((v - 128) * contrast + 128)));
    }
    for (std::size_t i = 0; i + 2 < image.pixels.size(); i += 3) {
        const int r = curve[image.pixels[i]];
        const int g = curve[image.pixels[i + 1]];
        const int b = curve[image.pixels[i + 2]];
        const int luma = (54 * r + 183 * g + 19 * b + 128) >> 8;  // BT.709 weights
        image.pixels[i] = Clamp8(luma + (((r - luma) * qs) >> 8));
        image.pixels[i + 1] = Clamp8(luma + (((g - luma) * qs) >> 8));
        image.pixels[i + 2] = Clamp8(luma + (((b - luma) * qs) >> 8));
    }
}

Grain::Grain(std::uint64_t seed) : seed_(seed), tile_(256 * 256) {
    std::uint64_t state = Mix64(seed ^ 0x6772'6169'6e00ull);
    for (auto& v : tile_) {
        // The sum of four bytes is roughly Gaussian: mean 510, sd ~148; scaled to sd ~ 32.
        state = Mix64(state);
        int sum = 0;
        for (int k = 0; k < 4; ++k) sum += static_cast<int>((state >> (16 * k)) & 0xff);
        v = static_cast<std::int8_t>(std::clamp((sum - 510) * 32 / 148, -127, 127));
    }
}

void Grain::Apply(RgbImage& image, double strength, std::uint64_t frame) const {
    const int q = Q8(std::clamp(strength, 0.0, 1.0) * 0.45);  // sd ~ 14 code values at 1
    if (q <= 0) return;
    const std::uint64_t place = Mix64(seed_ + 0x51 * (frame + 1));
    const int ox = static_cast<int>(place & 0xff);
    const int oy = static_cast<int>((place >> 8) & 0xff);
    // Midtones get full grain, shadows and highlights less: weight = 4 l (1 - l), at least 1/4.
    std::array<int, 256> weight{};
    for (int l = 0; l < 256; ++l) weight[l] = std::max(64, 4 * l * (255 - l) / 255);
    for (int y = 0; y < image.height; ++y) {
        std::uint8_t* row = image.Row(y);
        const std::int8_t* noise = tile_.data() + std::size_t((y + oy) & 0xff) * 256;
        for (int x = 0; x < image.width; ++x) {
            std::uint8_t* px = row + std::size_t(3) * x;
            const int luma = (54 * px[0] + 183 * px[1] + 19 * px[2] + 128) >> 8;
            const int n = (noise[(x + ox) & 0xff] * q * weight[luma]) >> 16;
            px[0] = Clamp8(px[0] + n);
            px[1] = Clamp8(px[1] + n);
            px[2] = Clamp8(px[2] + n);
        }
    }
}

namespace {

std::vector<int> Luma(const RgbImage& image) {
    std::vector<int> out(std::size_t(image.width) * image.height);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::uint8_t* px = image.pixels.data() + 3 * i;
        out[i] = (54 * px[0] + 183 * px[1] + 19 * px[2] + 128) >> 8;
    }
    return out;
}

}  // namespace

RgbImage MotionBlend(const RgbImage& a, const RgbImage& b) {
    const int w = a.width;
    const int h = a.height;
    int dx = 0;
    int dy = 0;
    const int sw = std::min(160, w);
    const int sh = std::max(2, static_cast<int>(std::lround(static_cast<double>(h) * sw / w)));
    const int range = std::max(1, sw / 16);
    if (sw > 4 * range && sh > 4 * range) {
        const std::vector<int> la = Luma(sw == w && sh == h ? a : media::Resize(a, sw, sh));
        const std::vector<int> lb = Luma(sw == w && sh == h ? b : media::Resize(b, sw, sh));
        auto sad = [&](int ox, int oy) {
            std::int64_t sum = 0;
            for (int y = range; y < sh - range; ++y) {
                const int* ra = la.data() + std::size_t(y) * sw;
                const int* rb = lb.data() + std::size_t(y + oy) * sw + ox;
                for (int x = range; x < sw - range; ++x) sum += std::abs(ra[x] - rb[x]);
            }
            return sum;
        };
        const std::int64_t still = sad(0, 0);
        std::int64_t best = still;
        int bx = 0;
        int by = 0;
        for (int oy = -range; oy <= range; ++oy) {
            for (int ox = -range; ox <= range; ++ox) {
                const std::int64_t v = sad(ox, oy);
                if (v < best ||
                    (v == best && std::abs(ox) + std::abs(oy) < std::abs(bx) + std::abs(by))) {
                    best = v;
                    bx = ox;
                    by = oy;
                }
            }
        }
        if (best * 10 < still * 9) {  // a clear translation, not noise
            dx = static_cast<int>(std::lround(static_cast<double>(bx) * w / sw));
            dy = static_cast<int>(std::lround(static_cast<double>(by) * h / sh));
        }
    }
    // Content at p in `a` is at p + d in `b`: the middle picture takes a at p - d/2 and b at
    // p + (d - d/2).
    const int ax = dx / 2;
    const int ay = dy / 2;
    const int bx = dx - ax;
    const int by = dy - ay;
    RgbImage out(w, h);
    for (int y = 0; y < h; ++y) {
        const std::uint8_t* ra = a.Row(std::clamp(y - ay, 0, h - 1));
        const std::uint8_t* rb = b.Row(std::clamp(y + by, 0, h - 1));
        std::uint8_t* ro = out.Row(y);
        for (int x = 0; x < w; ++x) {
            const std::uint8_t* pa = ra + std::size_t(3) * std::clamp(x - ax, 0, w - 1);
            const std::uint8_t* pb = rb + std::size_t(3) * std::clamp(x + bx, 0, w - 1);
            for (int c = 0; c < 3; ++c)
                ro[3 * x + c] = static_cast<std::uint8_t>((pa[c] + pb[c] + 1) >> 1);
        }
    }
    return out;
}

std::string EncodePng(const RgbImage& image) {
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    if (codec == nullptr) throw media::MediaError("libavcodec has no PNG encoder");
    AVCodecContext* encoder = avcodec_alloc_context3(codec);
    AVFrame* frame = av_frame_alloc();
    AVPacket* packet = av_packet_alloc();
    std::string out;
    std::string error;
    do {
        if (encoder == nullptr || frame == nullptr || packet == nullptr) {
            error = "out of memory";
            break;
        }
        encoder->width = image.width;
        encoder->height = image.height;
        encoder->pix_fmt = AV_PIX_FMT_RGB24;
        encoder->time_base = AVRational{1, 25};
        encoder->thread_count = 1;
        encoder->flags |= AV_CODEC_FLAG_BITEXACT;
        encoder->sample_aspect_ratio = AVRational{1, 1};
        encoder->color_primaries = AVCOL_PRI_BT709;
        encoder->color_trc = AVCOL_TRC_IEC61966_2_1;
        encoder->colorspace = AVCOL_SPC_RGB;
        encoder->color_range = AVCOL_RANGE_JPEG;
        AVDictionary* options = nullptr;
        av_dict_set(&options, "pred", "up", 0);
        const int opened = avcodec_open2(encoder, codec, &options);
        av_dict_free(&options);
        if (opened < 0) {
            error = "cannot open the PNG encoder";
            break;
        }
        frame->format = AV_PIX_FMT_RGB24;
        frame->width = image.width;
        frame->height = image.height;
        frame->color_primaries = encoder->color_primaries;
        frame->color_trc = encoder->color_trc;
        frame->colorspace = encoder->colorspace;
        frame->color_range = encoder->color_range;
        frame->pts = 0;
        // The encoder only reads the picture: point the frame at the image's pixels.
        frame->data[0] = const_cast<std::uint8_t*>(image.pixels.data());
        frame->linesize[0] = 3 * image.width;
        if (avcodec_send_frame(encoder, frame) < 0 || avcodec_send_frame(encoder, nullptr) < 0) {
            error = "PNG encoding failed";
            break;
        }
        for (;;) {
            const int rc = avcodec_receive_packet(encoder, packet);
            if (rc == AVERROR_EOF) break;
            if (rc < 0) {
                error = "PNG encoding failed";
                break;
            }
            out.append(reinterpret_cast<const char*>(packet->data), packet->size);
            av_packet_unref(packet);
        }
    } while (false);
    if (frame != nullptr) {
        frame->data[0] = nullptr;
        av_frame_free(&frame);
    }
    av_packet_free(&packet);
    avcodec_free_context(&encoder);
    if (!error.empty()) throw media::MediaError(error);
    if (out.empty()) throw media::MediaError("the PNG encoder returned nothing");
    return out;
}

std::string OutputPath(const TaskContext& ctx, std::string_view name) {
    if (ctx.scratch_dir().empty()) {
        throw TaskFailure("INTERNAL", "this context has no scratch folder for outputs");
    }
    std::error_code ec;
    std::filesystem::create_directories(ctx.scratch_dir(), ec);
    return ctx.scratch_dir() + "/" + std::string(name);
}

void WriteFile(const std::string& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw TaskFailure("INTERNAL", "cannot write an output to the scratch folder");
}

TaskFailure InputFailure(std::string_view field, const std::exception& cause) {
    return TaskFailure("ASSET.INVALID", "The media of `" + std::string(field) +
                                            "` could not be decoded: " + cause.what());
}

std::unique_ptr<media::VideoReader> OpenVideo(const std::string& path, std::string_view field,
                                              const media::VideoReader::Limits& limits) {
    try {
        return std::make_unique<media::VideoReader>(path, limits);
    } catch (const media::MediaError& e) {
        throw InputFailure(field, e);
    }
}

bool NextFrame(media::VideoReader& reader, RgbImage& frame, double& time, std::string_view field) {
    try {
        return reader.Next(frame, time);
    } catch (const media::MediaError& e) {
        throw InputFailure(field, e);
    }
}

RgbImage LoadImage(const std::string& path, std::string_view field, int max_width, int max_height) {
    try {
        return media::LoadImageRgb(path, max_width, max_height);
    } catch (const media::MediaError& e) {
        throw InputFailure(field, e);
    }
}

FrameSampler::FrameSampler(media::VideoReader& reader, std::string_view field)
    : reader_(reader), field_(field) {
    double t = 0;
    if (!NextFrame(reader_, current_, t, field_)) {
        throw TaskFailure("ASSET.INVALID",
                          "The video of `" + field_ + "` has no decodable picture");
    }
    frames_ = 1;
    has_next_ = NextFrame(reader_, next_, next_time_, field_);
    if (has_next_) ++frames_;
}

const RgbImage& FrameSampler::Get(double t) {
    while (has_next_ && next_time_ <= t + 1e-6) {
        std::swap(current_, next_);
        has_next_ = NextFrame(reader_, next_, next_time_, field_);
        if (has_next_) ++frames_;
    }
    return current_;
}

}  // namespace genhost::providers::edit
