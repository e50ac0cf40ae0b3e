// OpenEXR frames, SDR-to-HDR pixel conversion and PNG cICP chunks for the HDR output formats.
//
// libavcodec 5.1 has an EXR encoder, but it writes no chromaticities attribute, so a reader
// cannot tell BT.2020 from ACEScg (AP1) data; this small writer (single-part scanline files, the
// layout of the OpenEXR file format document, ZIP compression) writes the attributes the formats
// need. libavcodec's EXR decoder reads its files (tests/unit/media_video_test.cpp).

#include <zlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "video_internal.hpp"

namespace genhost::media {
namespace {

constexpr int kLinesPerZipBlock = 16;  // ZIP_COMPRESSION's block height
constexpr std::uint8_t kZipCompression = 3;
constexpr int kHalfType = 1;

void PutI32(std::string& out, std::int32_t v) {
    const auto u = static_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}
void PutU64(std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutF32(std::string& out, float f) {
    std::uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    PutI32(out, static_cast<std::int32_t>(u));
}
void Attribute(std::string& out, std::string_view name, std::string_view type,
               const std::string& value) {
    out.append(name);
    out.push_back('\0');
    out.append(type);
    out.push_back('\0');
    PutI32(out, static_cast<std::int32_t>(value.size()));
    out.append(value);
}

// ZipBlock compresses one block the way OpenEXR's ZIP compression does: bytes split into two
// halves (even then odd positions), a byte delta predictor, then zlib. Returns the raw bytes
// when compression does not make them smaller (readers take a chunk of the raw size as stored).
std::string ZipBlock(const std::string& raw) {
    std::string tmp(raw.size(), '\0');
    const std::size_t half = (raw.size() + 1) / 2;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        tmp[(i % 2 == 0) ? i / 2 : half + i / 2] = raw[i];
    }
    int previous = static_cast<std::uint8_t>(tmp[0]);
    for (std::size_t i = 1; i < tmp.size(); ++i) {
        const int current = static_cast<std::uint8_t>(tmp[i]);
        tmp[i] = static_cast<char>((current - previous + (128 + 256)) & 0xff);
        previous = current;
    }
    uLongf size = compressBound(static_cast<uLong>(tmp.size()));
    std::string out(size, '\0');
    const int rc =
        compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                  reinterpret_cast<const Bytef*>(tmp.data()), static_cast<uLong>(tmp.size()), 4);
    if (rc != Z_OK) throw MediaError("zlib compress2 failed: " + std::to_string(rc));
    if (size >= raw.size()) return raw;
    out.resize(size);
    return out;
}

float SrgbToLinear(double v) {
    return static_cast<float>(v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4));
}

double Pq(double nits) {
    constexpr double m1 = 2610.0 / 16384;
    constexpr double m2 = 2523.0 / 4096 * 128;
    constexpr double c1 = 3424.0 / 4096;
    constexpr double c2 = 2413.0 / 4096 * 32;
    constexpr double c3 = 2392.0 / 4096 * 32;
    const double y = std::clamp(nits / 10000.0, 0.0, 1.0);
    const double p = std::pow(y, m1);
    return std::pow((c1 + c2 * p) / (1 + c3 * p), m2);
}

// Hlg codes display light `nits` for a 1000 cd/m2 display: the inverse of BT.2100's OOTF
// (system gamma 1.2, applied per component here) followed by the HLG OETF.
double Hlg(double nits) {
    constexpr double a = 0.17883277;
    constexpr double b = 1 - 4 * a;
    const double c = 0.5 - a * std::log(4 * a);
    const double scene = std::pow(std::clamp(nits / 1000.0, 0.0, 1.0), 1 / 1.2);
    return scene <= 1.0 / 12 ? std::sqrt(3 * scene) : a * std::log(12 * scene - b) + c;
}

}  // namespace

std::uint16_t FloatToHalf(float value) {
    std::uint32_t f = 0;
    std::memcpy(&f, &value, 4);
    const std::uint32_t sign = f & 0x80000000u;
    f ^= sign;
    std::uint32_t o = 0;
    if (f >= (127u + 16) << 23) {
        o = f > (255u << 23) ? 0x7e00 : 0x7c00;  // NaN stays NaN; overflow is infinity
    } else if (f < 113u << 23) {
        // Subnormal or zero: adding 0.5 aligns the 10 mantissa bits at the bottom, rounding to
        // nearest even in the float addition itself.
        constexpr std::uint32_t kMagicBits = 126u << 23;
        float magic = 0;
        std::memcpy(&magic, &kMagicBits, 4);
        float g = 0;
        std::memcpy(&g, &f, 4);
        g += magic;
        std::uint32_t gb = 0;
        std::memcpy(&gb, &g, 4);
        o = gb - kMagicBits;
    } else {
        const std::uint32_t odd = (f >> 13) & 1;
        f += ((15u - 127u) << 23) + 0xfff;  // rebias, and round half up ...
        f += odd;                           // ... or to even
        o = f >> 13;
    }
    return static_cast<std::uint16_t>(o | (sign >> 16));
}

std::string EncodeExr(int width, int height, const std::vector<std::uint16_t>& halves,
                      const ExrAttributes& attributes) {
    if (width < 1 || height < 1 || halves.size() != static_cast<std::size_t>(width) * height * 3) {
        throw MediaError("EXR: picture size and data disagree");
    }
    std::string file;
    file.append("\x76\x2f\x31\x01", 4);  // magic
    PutI32(file, 2);                     // version 2, single-part scanline, short names

    std::string channels;
    for (const char* name : {"B", "G", "R"}) {
        channels.append(name);
        channels.push_back('\0');
        PutI32(channels, kHalfType);
        channels.append(4, '\0');  // pLinear 0, reserved
        PutI32(channels, 1);       // x sampling
        PutI32(channels, 1);       // y sampling
    }
    channels.push_back('\0');
    Attribute(file, "channels", "chlist", channels);
    Attribute(file, "compression", "compression", std::string(1, char(kZipCompression)));
    std::string box;
    PutI32(box, 0);
    PutI32(box, 0);
    PutI32(box, width - 1);
    PutI32(box, height - 1);
    Attribute(file, "dataWindow", "box2i", box);
    Attribute(file, "displayWindow", "box2i", box);
    Attribute(file, "lineOrder", "lineOrder", std::string(1, '\0'));  // increasing y
    std::string f;
    PutF32(f, 1.0f);
    Attribute(file, "pixelAspectRatio", "float", f);
    std::string center;
    PutF32(center, 0.0f);
    PutF32(center, 0.0f);
    Attribute(file, "screenWindowCenter", "v2f", center);
    Attribute(file, "screenWindowWidth", "float", f);
    const ExrPrimaries& p = attributes.primaries;
    std::string chroma;
    for (const float v :
         {p.red_x, p.red_y, p.green_x, p.green_y, p.blue_x, p.blue_y, p.white_x, p.white_y}) {
        PutF32(chroma, v);
    }
    Attribute(file, "chromaticities", "chromaticities", chroma);
    if (attributes.adopted_neutral) {
        std::string neutral;
        PutF32(neutral, p.white_x);
        PutF32(neutral, p.white_y);
        Attribute(file, "adoptedNeutral", "v2f", neutral);
    }
    if (attributes.white_luminance > 0) {
        std::string lum;
        PutF32(lum, attributes.white_luminance);
        Attribute(file, "whiteLuminance", "float", lum);
    }
    for (const auto& [name, value] : attributes.strings) Attribute(file, name, "string", value);
    file.push_back('\0');  // end of header

    const int blocks = (height + kLinesPerZipBlock - 1) / kLinesPerZipBlock;
    const std::size_t table_at = file.size();
    file.append(static_cast<std::size_t>(blocks) * 8, '\0');
    std::vector<std::uint64_t> offsets;
    const std::size_t row_halves = static_cast<std::size_t>(width) * 3;
    for (int block = 0; block < blocks; ++block) {
        const int y0 = block * kLinesPerZipBlock;
        const int lines = std::min(kLinesPerZipBlock, height - y0);
        std::string raw(static_cast<std::size_t>(lines) * row_halves * 2, '\0');
        std::size_t at = 0;
        for (int y = y0; y < y0 + lines; ++y) {
            const std::uint16_t* row = halves.data() + static_cast<std::size_t>(y) * row_halves;
            for (std::size_t i = 0; i < row_halves; ++i) {
                raw[at++] = static_cast<char>(row[i] & 0xff);
                raw[at++] = static_cast<char>(row[i] >> 8);
            }
        }
        const std::string data = ZipBlock(raw);
        offsets.push_back(file.size());
        PutI32(file, y0);
        PutI32(file, static_cast<std::int32_t>(data.size()));
        file.append(data);
    }
    std::string table;
    for (const std::uint64_t o : offsets) PutU64(table, o);
    file.replace(table_at, table.size(), table);
    return file;
}

namespace {

constexpr float kKnee = 0.75f;
constexpr float kGain = static_cast<float>(HdrConverter::kPeakNits / HdrConverter::kWhiteNits - 1);

// Expand turns linear BT.709 components into the target primaries (matrix k) and applies the
// highlight expansion: above 0.75 of SDR white the largest component bends smoothly (C1 at the
// knee) up to the peak at 1.0.
inline void Expand(const float* k, float lr, float lg, float lb, float& r, float& g, float& b) {
    r = k[0] * lr + k[1] * lg + k[2] * lb;
    g = k[3] * lr + k[4] * lg + k[5] * lb;
    b = k[6] * lr + k[7] * lg + k[8] * lb;
    const float m = std::max({r, g, b});
    if (m > kKnee) {
        const float t = std::min((m - kKnee) / (1 - kKnee), 1.0f);
        const float scale = (m + kGain * t * t) / m;
        r *= scale;
        g *= scale;
        b *= scale;
    }
}

}  // namespace

HdrConverter::HdrConverter(HdrTarget target, HdrPrimaries primaries)
    : target_(target), to_linear_(256), encode_(target == HdrTarget::kLinear ? 0 : 65536) {
    // BT.709 -> BT.2020 (ITU-R BT.2087) and BT.709/D65 -> ACEScg/AP1 with the Bradford adaptation
    // to ACES white (the matrix OpenColorIO's ACES configurations use).
    static constexpr float kTo2020[9] = {0.627403896f, 0.329283038f, 0.043313066f,
                                         0.069097289f, 0.919540395f, 0.011362316f,
                                         0.016391439f, 0.088013308f, 0.895595253f};
    static constexpr float kToAp1[9] = {0.613097402f, 0.339523146f, 0.047379451f,
                                        0.070193723f, 0.916353879f, 0.013452399f,
                                        0.020615593f, 0.109569773f, 0.869814634f};
    std::memcpy(matrix_, primaries == HdrPrimaries::kAp1 ? kToAp1 : kTo2020, sizeof matrix_);
    for (int i = 0; i < 256; ++i) to_linear_[i] = SrgbToLinear(i / 255.0);
    const double peak = kPeakNits / kWhiteNits;
    for (std::size_t i = 0; i < encode_.size(); ++i) {
        const double nits = static_cast<double>(i) / 65535.0 * peak * kWhiteNits;
        const double code = target == HdrTarget::kPq ? Pq(nits) : Hlg(nits);
        encode_[i] = static_cast<std::uint16_t>(std::lround(std::clamp(code, 0.0, 1.0) * 65535));
    }
}

void HdrConverter::Linear(const std::uint8_t* px, float& r, float& g, float& b) const {
    Expand(matrix_, to_linear_[px[0]], to_linear_[px[1]], to_linear_[px[2]], r, g, b);
}

namespace {

// ExpandBlock is HdrConverter::Linear from the linear BT.709 components on, and the coding
// index of ToRgb48, for n pixels: the same IEEE operations in the same order, so the same
// results, four pixels at a time with SSE2 where there is SSE2 (lanes at or below the knee
// compute a discarded quotient of a safe denominator and are scaled by 1).
void ExpandBlock(const float* k, const float* lr, const float* lg, const float* lb, int n,
                 float peak, std::int32_t* ir, std::int32_t* ig, std::int32_t* ib) {
    int i = 0;
#if defined(__SSE2__)
    const auto splat = [](float v) { return _mm_set1_ps(v); };
    const __m128 knee = splat(kKnee), one = splat(1.0f), zero = splat(0.0f);
    const __m128 span = splat(1 - kKnee), vgain = splat(kGain), vpeak = splat(peak);
    const __m128 full = splat(65535.0f), half = splat(0.5f);
    const auto code = [&](__m128 v) {
        const __m128 c = _mm_min_ps(_mm_max_ps(_mm_div_ps(v, vpeak), zero), one);
        return _mm_cvttps_epi32(_mm_add_ps(_mm_mul_ps(c, full), half));
    };
    const auto row = [&](int at, __m128 a, __m128 b, __m128 c) {
        return _mm_add_ps(_mm_add_ps(_mm_mul_ps(splat(k[at]), a), _mm_mul_ps(splat(k[at + 1]), b)),
                          _mm_mul_ps(splat(k[at + 2]), c));
    };
    for (; i + 4 <= n; i += 4) {
        const __m128 a = _mm_loadu_ps(lr + i), b = _mm_loadu_ps(lg + i), c = _mm_loadu_ps(lb + i);
        __m128 r = row(0, a, b, c), g = row(3, a, b, c), bl = row(6, a, b, c);
        const __m128 m = _mm_max_ps(_mm_max_ps(r, g), bl);
        const __m128 bright = _mm_cmpgt_ps(m, knee);
        const __m128 mm = _mm_or_ps(_mm_and_ps(bright, m), _mm_andnot_ps(bright, one));
        const __m128 t = _mm_min_ps(_mm_div_ps(_mm_sub_ps(mm, knee), span), one);
        const __m128 q = _mm_div_ps(_mm_add_ps(mm, _mm_mul_ps(_mm_mul_ps(vgain, t), t)), mm);
        const __m128 scale = _mm_or_ps(_mm_and_ps(bright, q), _mm_andnot_ps(bright, one));
        r = _mm_mul_ps(r, scale);
        g = _mm_mul_ps(g, scale);
        bl = _mm_mul_ps(bl, scale);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(ir + i), code(r));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(ig + i), code(g));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(ib + i), code(bl));
    }
#endif
    for (; i < n; ++i) {
        float r = 0, g = 0, b = 0;
        Expand(k, lr[i], lg[i], lb[i], r, g, b);
        const auto code = [peak](float v) {
            return static_cast<std::int32_t>(std::clamp(v / peak, 0.0f, 1.0f) * 65535.0f + 0.5f);
        };
        ir[i] = code(r);
        ig[i] = code(g);
        ib[i] = code(b);
    }
}

}  // namespace

void HdrConverter::ToRgb48(const std::uint8_t* rgb24, int width, std::uint16_t* out,
                           bool big_endian) const {
    // Three passes over blocks of pixels so that the middle one, all the arithmetic, runs four
    // pixels at a time: table look-ups in, ExpandBlock (the same operations in the same order as
    // Linear, so the same codes), table look-ups out.
    constexpr int kBlock = 256;
    constexpr float kPeak = static_cast<float>(kPeakNits / kWhiteNits);
    alignas(32) float lr[kBlock], lg[kBlock], lb[kBlock];
    alignas(32) std::int32_t ir[kBlock], ig[kBlock], ib[kBlock];
    for (int start = 0; start < width; start += kBlock) {
        const int n = std::min(kBlock, width - start);
        const std::uint8_t* px = rgb24 + std::size_t(3) * start;
        for (int i = 0; i < n; ++i) {
            lr[i] = to_linear_[px[3 * i]];
            lg[i] = to_linear_[px[3 * i + 1]];
            lb[i] = to_linear_[px[3 * i + 2]];
        }
        ExpandBlock(matrix_, lr, lg, lb, n, kPeak, ir, ig, ib);
        const auto coded = [&](std::int32_t i) {
            const std::uint16_t c = encode_[static_cast<std::size_t>(i)];
            return big_endian ? static_cast<std::uint16_t>((c >> 8) | (c << 8)) : c;
        };
        std::uint16_t* o = out + std::size_t(3) * start;
        for (int i = 0; i < n; ++i) {
            o[3 * i] = coded(ir[i]);
            o[3 * i + 1] = coded(ig[i]);
            o[3 * i + 2] = coded(ib[i]);
        }
    }
}

void HdrConverter::ToHalfPlanar(const std::uint8_t* rgb24, int width, std::uint16_t* out) const {
    for (int x = 0; x < width; ++x, rgb24 += 3) {
        float r = 0, g = 0, b = 0;
        Linear(rgb24, r, g, b);
        out[x] = FloatToHalf(b);
        out[width + x] = FloatToHalf(g);
        out[2 * width + x] = FloatToHalf(r);
    }
}

std::string AddPngCicp(const std::string& png, int primaries, int transfer) {
    constexpr std::size_t kIhdrEnd = 8 + 8 + 13 + 4;  // signature, IHDR header, data, CRC
    if (png.size() < kIhdrEnd || png.compare(12, 4, "IHDR") != 0) {
        throw MediaError("not a PNG with an IHDR chunk");
    }
    std::string chunk;
    chunk.append("\0\0\0\4cICP", 8);
    chunk.push_back(static_cast<char>(primaries));
    chunk.push_back(static_cast<char>(transfer));
    chunk.push_back('\0');  // matrix: identity (RGB)
    chunk.push_back('\1');  // full range
    const std::uint32_t crc = Crc32(std::string_view(chunk).substr(4));
    for (int i = 3; i >= 0; --i) chunk.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
    std::string out = png;
    out.insert(kIhdrEnd, chunk);
    return out;
}

}  // namespace genhost::media
