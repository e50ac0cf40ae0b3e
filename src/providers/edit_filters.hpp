// src/providers/edit_filters.hpp (private to src/providers)
//
// Provides the picture filters of the builtin editing pipelines (image_upscale, video_upscale,
// video_to_hdr, character_performance, avatar_videos) on media::RgbImage: a Lanczos scale
// (libswscale, bit-exact), an unsharp mask, a two-scale detail boost, an edge-preserving
// denoise, a saturation and contrast look, a deterministic film grain, PNG encoding, and the
// helpers that turn undecodable inputs into TaskFailure("ASSET.INVALID").
//
// Everything is integer or fixed-order arithmetic on the calling thread: the same input and
// settings give the same bytes. Failures throw media::MediaError (libav failures) or
// TaskFailure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "genhost/media/video.hpp"
#include "genhost/providers/provider.hpp"

struct SwsContext;

namespace genhost::providers::edit {

using media::RgbImage;

// LanczosResize scales `source` to width x height with swscale's Lanczos filter (aspect not
// kept), bit-exact.
RgbImage LanczosResize(const RgbImage& source, int width, int height);

// LanczosScaler is LanczosResize for a stream of pictures of one size: it keeps its swscale
// context and planar buffers between pictures (the same bytes as LanczosResize).
class LanczosScaler {
  public:
    LanczosScaler(int in_width, int in_height, int out_width, int out_height);
    ~LanczosScaler();
    LanczosScaler(const LanczosScaler&) = delete;
    LanczosScaler& operator=(const LanczosScaler&) = delete;

    // Scale writes `source` (in_width x in_height) scaled into `out`, resized to the output size.
    void Scale(const RgbImage& source, RgbImage& out);

  private:
    int in_w_, in_h_, out_w_, out_h_;
    SwsContext* sws_ = nullptr;
    std::vector<std::uint8_t> in_;
    std::vector<std::uint8_t> scaled_;
};

// BoxBlur is a box blur of radius `radius` (a (2r+1)^2 window, edges clamped), applied twice,
// which approximates a Gaussian of sigma ~ 0.8 * radius.
RgbImage BoxBlur(const RgbImage& source, int radius);

// UnsharpMask sharpens `image` in place: p + amount * (p - blur(p, radius)), with a small
// threshold so flat areas (and noise) are left alone. amount 0 leaves the picture unchanged.
void UnsharpMask(RgbImage& image, int radius, double amount, int threshold = 2);

// DetailBoost enhances fine detail (radius 1) by `fine` and local contrast (radius ~ 1/64 of
// the short side) by `local`, both 0..1.
void DetailBoost(RgbImage& image, double fine, double local);

// Denoise is an edge-preserving smoothing of strength 0..1: each channel is moved toward its
// 3x3 mean where it differs from it by little (noise) and kept where it differs by much
// (edges).
void Denoise(RgbImage& image, double strength);

// Look adjusts saturation (1 = unchanged) and contrast (1 = unchanged, pivot mid grey) by LUT
// and fixed-point arithmetic.
void Look(RgbImage& image, double saturation, double contrast);

// Grain is a deterministic film grain: a 256 x 256 tile of Gaussian-like noise made from a
// seed, placed at a different offset for every frame.
class Grain {
  public:
    explicit Grain(std::uint64_t seed);
    // Apply adds grain of `strength` 0..1 (about +-14 code values at 1, strongest in the
    // midtones) to `image`, placed for frame `frame`.
    void Apply(RgbImage& image, double strength, std::uint64_t frame) const;

  private:
    std::uint64_t seed_;
    std::vector<std::int8_t> tile_;
};

// MotionBlend makes the picture halfway between `a` and `b` (same size) for frame-rate
// doubling: the global translation from a to b is estimated (SAD search on a ~160 px wide
// luminance copy, up to 1/16 of the width per frame) and both pictures are shifted halfway
// toward each other before a 50/50 blend. Local motion that differs from the global one shows as
// a blend. Without a clear translation it is a plain blend.
RgbImage MotionBlend(const RgbImage& a, const RgbImage& b);

// EncodePng encodes `image` as an 8-bit RGB PNG (sRGB chunk), bit-exact.
std::string EncodePng(const RgbImage& image);

// Even rounds down to an even number, at least 2.
int Even(int v);

// EvenSize returns `image` cropped by at most one column and one row so both sides are even.
RgbImage EvenSize(const RgbImage& image);

// Mix64 is splitmix64's finaliser (for deterministic per-frame and per-id values).
std::uint64_t Mix64(std::uint64_t x);

// HashString is FNV-1a 64 of `text`.
std::uint64_t HashString(std::string_view text);

// OpenVideo opens an input video for decoding, mapping an undecodable file to
// TaskFailure("ASSET.INVALID") naming `field`.
std::unique_ptr<media::VideoReader> OpenVideo(const std::string& path, std::string_view field,
                                              const media::VideoReader::Limits& limits);

// NextFrame is VideoReader::Next with decode errors mapped to TaskFailure("ASSET.INVALID").
bool NextFrame(media::VideoReader& reader, RgbImage& frame, double& time, std::string_view field);

// LoadImage is media::LoadImageRgb with decode errors mapped to TaskFailure("ASSET.INVALID").
RgbImage LoadImage(const std::string& path, std::string_view field, int max_width, int max_height);

// OutputPath is the path of a new output file `name` in the task's scratch folder (created if
// needed); INTERNAL when the context has none.
std::string OutputPath(const TaskContext& ctx, std::string_view name);

// WriteFile writes `bytes` to `path` (INTERNAL on failure).
void WriteFile(const std::string& path, std::string_view bytes);

// InputFailure is the ASSET.INVALID failure for an input `field` that does not decode.
TaskFailure InputFailure(std::string_view field, const std::exception& cause);

// FrameSampler turns a decoded stream (frames with timestamps) into a constant-rate sequence:
// frame i of the output shows the last input picture whose time is at most (i + 0.5) / fps.
// When the input ends early the last picture is held.
class FrameSampler {
  public:
    FrameSampler(media::VideoReader& reader, std::string_view field);
    // Get returns the picture for output time `t` (non-decreasing between calls).
    const RgbImage& Get(double t);
    // Frames is how many input pictures were decoded so far.
    int Frames() const { return frames_; }

  private:
    media::VideoReader& reader_;
    std::string field_;
    RgbImage current_;
    RgbImage next_;
    double next_time_ = 0;
    bool has_next_ = false;
    int frames_ = 0;
};

}  // namespace genhost::providers::edit
