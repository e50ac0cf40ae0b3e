// src/media/video_internal.hpp (private to the media module)
//
// Provides the pieces VideoWriter builds its formats from:
// - ZipWriter: a store-only ZIP written straight to a file (local headers, central directory,
//   CRC-32, fixed 1980-01-01 timestamps so archives are byte-reproducible; no ZIP64, so at most
//   65535 entries and 4 GiB, beyond which it throws);
// - EncodeExr: a scanline OpenEXR file (half-float B, G, R channels, ZIP compression of 16-line
//   blocks through zlib) with a chromaticities attribute and optional extra string attributes;
// - HdrConverter: SDR sRGB/BT.709 pixels to BT.2020 or ACEScg (AP1) scene-linear light with a
//   highlight expansion, then PQ, HLG or linear half floats, by lookup tables;
// - AddPngCicp: inserts a cICP chunk (coding-independent code points) after a PNG's IHDR.
// All throw MediaError on failure.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "genhost/media/video.hpp"

namespace genhost::media {

class ZipWriter {
  public:
    // Creates (truncates) `path`.
    explicit ZipWriter(const std::string& path);
    ~ZipWriter();
    ZipWriter(const ZipWriter&) = delete;
    ZipWriter& operator=(const ZipWriter&) = delete;

    // Add stores `data` as entry `name` (ASCII, no leading slash).
    void Add(std::string_view name, std::string_view data);
    // Close writes the central directory and closes the file.
    void Close();

  private:
    struct Entry {
        std::string name;
        std::uint32_t crc = 0;
        std::uint32_t size = 0;
        std::uint32_t offset = 0;
    };
    void Write(std::string_view bytes);

    std::FILE* file_ = nullptr;
    std::uint64_t offset_ = 0;
    std::vector<Entry> entries_;
};

// ExrPrimaries are CIE xy chromaticities of red, green, blue and white.
struct ExrPrimaries {
    float red_x, red_y, green_x, green_y, blue_x, blue_y, white_x, white_y;
};
inline constexpr ExrPrimaries kBt2020Primaries{0.708f, 0.292f, 0.170f,  0.797f,
                                               0.131f, 0.046f, 0.3127f, 0.3290f};
inline constexpr ExrPrimaries kAp1Primaries{0.713f, 0.293f, 0.165f,   0.830f,
                                            0.128f, 0.044f, 0.32168f, 0.33767f};

// ExrAttributes are the optional header attributes EncodeExr writes besides the required ones.
struct ExrAttributes {
    ExrPrimaries primaries = kBt2020Primaries;
    float white_luminance = 0;  // cd/m2 of RGB (1, 1, 1); 0 = not written
    bool adopted_neutral = false;
    std::vector<std::pair<std::string, std::string>> strings;  // extra string attributes
};

// EncodeExr encodes a width x height picture whose pixels are half floats, planar per row:
// `halves` holds, for each row, width B values, then width G, then width R.
std::string EncodeExr(int width, int height, const std::vector<std::uint16_t>& halves,
                      const ExrAttributes& attributes);

// FloatToHalf converts to IEEE 754 binary16, rounding to nearest even (overflow to infinity).
std::uint16_t FloatToHalf(float value);

enum class HdrTarget { kPq, kHlg, kLinear };
enum class HdrPrimaries { kBt2020, kAp1 };

// HdrConverter converts RGB24 pixels (sRGB transfer, BT.709 primaries) to HDR. SDR white maps to
// 203 cd/m2 (ITU-R BT.2408): linear 1.0; values near white are expanded towards a 1000 cd/m2
// peak (linear 4.93) by a smooth curve on the largest component, so highlights use the HDR
// range. PQ and HLG outputs are 16-bit code values (full range, the encoders' input); linear
// output is half floats.
class HdrConverter {
  public:
    HdrConverter(HdrTarget target, HdrPrimaries primaries);

    // ToRgb48 converts one row of `width` pixels to 16-bit R, G, B (PQ or HLG coded), native
    // endian unless `big_endian`.
    void ToRgb48(const std::uint8_t* rgb24, int width, std::uint16_t* out, bool big_endian) const;

    // ToHalfPlanar converts one row to half floats laid out B..., G..., R... (EXR's order).
    void ToHalfPlanar(const std::uint8_t* rgb24, int width, std::uint16_t* out) const;

    // kPeakNits is the brightest output; kWhiteNits the level SDR white lands on.
    static constexpr double kPeakNits = 1000;
    static constexpr double kWhiteNits = 203;

  private:
    void Linear(const std::uint8_t* px, float& r, float& g, float& b) const;

    HdrTarget target_;
    float matrix_[9];
    std::vector<float> to_linear_;       // 256 entries: sRGB code -> linear
    std::vector<std::uint16_t> encode_;  // 65536 entries over linear [0, peak]
};

// AddPngCicp returns `png` with a cICP chunk (primaries, transfer, matrix 0 = RGB, full range)
// inserted after IHDR.
std::string AddPngCicp(const std::string& png, int primaries, int transfer);

}  // namespace genhost::media
