// genhost/media/video.hpp
//
// Provides the video half of the media module:
// - VideoWriter: encodes RGB pictures into one of SPEC.md's output formats (MP4/H.264, ProRes
//   .mov, zipped PNG or OpenEXR sequences, 10-bit SDR, HDR10, HLG, a 12-bit PQ master, HDR
//   ProRes, 16-bit PQ PNGs) at an exact size, frame rate and frame count, with an optional AAC
//   track, into a file (the MP4 muxer rewrites its file for `+faststart`);
// - VideoReader and LoadImageRgb: decode input media to RGB24, bounded in pixels and frames;
// - RgbImage helpers the pipelines compose frames with (camera moves, cross-fades, grades,
//   letterboxing) and SceneAnimator, the procedural scene of scene.hpp animated over time;
// - ReadStoredZip, which lists and checks (CRC-32) the entries of the ZIPs the writer makes.
//
// Everything runs on the calling thread (a worker thread, never an I/O thread); encoders may start
// their own threads, a fixed number so output does not depend on the machine. Objects belong to
// one thread. Failures throw MediaError. Determinism: the same frames and spec give the same bytes
// for every format on the same build (see docs/pipelines.md for which encoders are bit-exact
// across machines).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "genhost/media/image.hpp"

namespace genhost::media {

// VideoFormat is SPEC.md's `outputFormat` (gen4.5's twelve values).
enum class VideoFormat {
    kMp4,                      // H.264 High, yuv420p, BT.709, MP4 with faststart
    kProres,                   // ProRes (proresProfile) in .mov, BT.709
    kPngSequence,              // ZIP of 8-bit sRGB PNG frames
    kSdrRec709_10bit,          // H.264 High 10, yuv420p10le, BT.709, MP4
    kHdr10,                    // HEVC Main 10, BT.2020 + PQ, mastering display and content light
    kHlg,                      // HEVC Main 10, BT.2020 + ARIB STD-B67 (HLG)
    kHdrPq12bitMaster,         // HEVC Main 4:4:4 12, yuv444p12le, BT.2020 + PQ, .mov
    kHdrProres,                // ProRes 422 / 422 HQ / 4444 in .mov, BT.2020 + PQ
    kHdrPngSequence,           // ZIP of 16-bit PNGs holding PQ-encoded BT.2020 RGB (cICP chunk)
    kHdrExrSequence,           // ZIP of OpenEXR frames: half RGB, scene-linear BT.2020
    kHdrExrAcescgSequence1_3,  // ZIP of OpenEXR frames: half RGB, ACEScg (AP1), ACES 1.3
    kHdrExrAcescgSequence2_0,  // ZIP of OpenEXR frames: half RGB, ACEScg (AP1), ACES 2.0
};

// ParseVideoFormat maps an outputFormat string; nullopt if unknown.
std::optional<VideoFormat> ParseVideoFormat(std::string_view name);

// VideoFormatExtension is the output file's extension: "mp4", "mov" or "zip".
std::string_view VideoFormatExtension(VideoFormat format);

// IsImageSequence is true for the zipped frame formats (they carry no audio).
bool IsImageSequence(VideoFormat format);

// ProresProfile is SPEC.md's proresProfile; the values are prores_ks's profile ids.
enum class ProresProfile { kProxy = 0, kLt = 1, kStandard = 2, kHq = 3, k4444 = 4, k4444Xq = 5 };

// ParseProresProfile maps "422 Proxy", "422 LT", "422", "422 HQ", "4444", "4444 XQ".
std::optional<ProresProfile> ParseProresProfile(std::string_view name);

// kAudioSampleRate is the sample rate of every generated audio track (stereo AAC).
inline constexpr int kAudioSampleRate = 48000;

// FrameCount is round(duration_seconds * fps), at least 1.
int FrameCount(double duration_seconds, int fps);

// VideoSpec says what to write.
struct VideoSpec {
    int width = 0;   // 2..8192, even for the 4:2:0 and 4:2:2 formats
    int height = 0;  // 2..8192, even for the 4:2:0 formats
    int fps = 24;
    int frame_count = 0;  // exact number of frames WriteFrame will be called with
    VideoFormat format = VideoFormat::kMp4;
    ProresProfile prores_profile = ProresProfile::k4444;
    bool audio = false;  // a stereo 48 kHz AAC track as long as the video (not for sequences)
    int threads = 2;     // encoder threads: fixed, so the bytes do not depend on the machine
};

// AudioSource fills `count` samples per channel starting at sample `first` (48 kHz), values in
// [-1, 1]. Called on the writer's thread, in order, covering exactly frame_count / fps seconds.
using AudioSource = std::function<void(std::int64_t first, int count, float* left, float* right)>;

// RgbImage is a tightly packed RGB24 picture (sRGB, BT.709 primaries): row y starts at
// pixels[3 * width * y].
struct RgbImage {
    int width = 0;
    int height = 0;
    std::vector<std::uint8_t> pixels;

    RgbImage() = default;
    RgbImage(int w, int h) : width(w), height(h), pixels(std::size_t(3) * w * h) {}
    // Reshape makes the picture w x h, keeping its buffer when it already has that size (its
    // contents are then left as they are). A picture moved from keeps its width and height but
    // not its pixels, so the buffer's size is checked too.
    void Reshape(int w, int h) {
        if (width != w || height != h || pixels.size() != std::size_t(3) * w * h) {
            *this = RgbImage(w, h);
        }
    }
    std::uint8_t* Row(int y) { return pixels.data() + std::size_t(3) * width * y; }
    const std::uint8_t* Row(int y) const { return pixels.data() + std::size_t(3) * width * y; }
};

// VideoWriter writes one output file. Frames may be smaller than the output size (a procedural
// scene painted at half size): they are scaled up with bicubic interpolation in the same pass
// that converts them to the output's pixel format. Frames must keep one size per writer.
class VideoWriter {
  public:
    // Opens `path` (created or truncated) and the encoders; throws MediaError for an invalid
    // spec or an encoder this build lacks.
    VideoWriter(const VideoSpec& spec, std::string path, AudioSource audio = {});
    // Removes the file unless Finish completed.
    ~VideoWriter();
    VideoWriter(const VideoWriter&) = delete;
    VideoWriter& operator=(const VideoWriter&) = delete;

    // WriteFrame encodes the next frame (and the audio up to its end time).
    void WriteFrame(const RgbImage& frame);

    // Finish flushes the encoders and closes the file; throws MediaError unless exactly
    // spec.frame_count frames were written.
    void Finish();

    // FramesWritten is how many frames WriteFrame has taken.
    int FramesWritten() const;

    struct Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

// VideoInfo describes an input video.
struct VideoInfo {
    int width = 0;
    int height = 0;
    double frame_rate = 0;
    double duration_seconds = 0;
    bool has_audio = false;
};

// VideoReader decodes an input video file to RGB24 frames, scaled down (never up, aspect kept)
// to fit `max_width` x `max_height`. Bounded: pictures above kMaxDecodePixels, more than
// `max_frames` frames or longer than `max_seconds` are refused with MediaError, and the file is
// read into memory (at most `max_bytes`) and demuxed without access to anything else.
class VideoReader {
  public:
    struct Limits {
        int max_width = 1920;
        int max_height = 1920;
        double max_seconds = 60;
        int max_frames = 60 * 120;
        std::int64_t max_bytes = 256ll * 1024 * 1024;
    };
    // Opens `path`; throws MediaError if it is not a decodable video.
    explicit VideoReader(const std::string& path);
    VideoReader(const std::string& path, const Limits& limits);
    ~VideoReader();
    VideoReader(const VideoReader&) = delete;
    VideoReader& operator=(const VideoReader&) = delete;

    const VideoInfo& info() const;

    // Next decodes the next picture in presentation order into `frame`, with its time in
    // seconds from the start; false at the end of the stream.
    bool Next(RgbImage& frame, double& time_seconds);

    struct Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

// EncodePicture encodes `image` as a PNG or a JPEG file (the encoders and settings of
// RenderImage: bit-exact, sRGB-tagged PNG; full-range 4:2:0 JPEG at about quality 90).
std::string EncodePicture(const RgbImage& image, ImageFormat format);

// LoadImageRgb decodes the first picture of an image (or video) file to RGB24, scaled down to
// fit max_width x max_height (aspect kept); throws MediaError if it is not a decodable picture.
RgbImage LoadImageRgb(const std::string& path, int max_width = 4096, int max_height = 4096);

// Grade is a per-channel colour grade: a tint, a contrast and a brightness, applied in
// fixed point.
struct Grade {
    double tint_r = 1, tint_g = 1, tint_b = 1;  // gains, around 1
    double contrast = 1;                        // around 1, pivot at mid grey
    double brightness = 0;                      // -0.2 .. 0.2
};

// CameraView renders `source` into `out` (its size set by the caller) as a camera looking at a
// window of the source: the largest window of out's aspect that fits (cover), divided by
// `zoom` (>= 1), centred at (center_x, center_y) in [0, 1] source coordinates, clamped so it
// stays inside. Bilinear sampling in fixed point (deterministic); the source should be no more
// than about twice the output size (see Resize). With `grade`, the view comes out graded as
// ApplyGrade(*grade, strength, out) afterwards would make it, each row while it is in the cache.
void CameraView(const RgbImage& source, double zoom, double center_x, double center_y,
                RgbImage& out, const Grade* grade = nullptr, double strength = 1.0);

// Resize scales `source` to width x height (aspect not kept) with swscale's area/bicubic
// filters in bit-exact mode.
RgbImage Resize(const RgbImage& source, int width, int height);

// Letterbox places `source` scaled to fit inside `out` (aspect kept, centred); the bars are an
// "outpainted" fill: the source scaled to cover the frame, darkened and blurred.
void Letterbox(const RgbImage& source, RgbImage& out);

// CrossFade sets out = a * (1 - t) + b * t (same sizes), t in [0, 1].
void CrossFade(const RgbImage& a, const RgbImage& b, double t, RgbImage& out);

// ApplyGrade grades `image` in place by `strength` (0 = unchanged, 1 = full grade).
void ApplyGrade(const Grade& grade, double strength, RgbImage& image);

// PromptGrade derives a grade from the prompt's colours and mood words (via the procedural
// scene's palette): the same words that colour a generated scene tint an edited video.
Grade PromptGrade(std::uint64_t seed, std::string_view prompt);

// MeanColour is the average colour of `image` as 0..1 components {r, g, b}.
std::array<double, 3> MeanColour(const RgbImage& image);

// SceneAnimator is the procedural scene (scene.hpp) for a seed, prompt and optional reference
// pictures (their colours steer the palette), painted at any time and size.
class SceneAnimator {
  public:
    SceneAnimator(std::uint64_t seed, std::string_view prompt,
                  std::span<const RgbImage> references = {});
    ~SceneAnimator();
    SceneAnimator(SceneAnimator&&) noexcept;
    SceneAnimator& operator=(SceneAnimator&&) noexcept;

    // Paint draws the scene at `time_seconds` into `out` (its size set by the caller).
    void Paint(double time_seconds, RgbImage& out) const;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

// ZipEntry is one file of a ZIP archive.
struct ZipEntry {
    std::string name;
    std::string data;
};

// ReadStoredZip parses a ZIP whose entries are stored (method 0), as VideoWriter makes them,
// checking every CRC-32 and that local headers agree with the central directory; throws
// MediaError otherwise.
std::vector<ZipEntry> ReadStoredZip(std::string_view bytes);

// Crc32 is the CRC-32 (ISO 3309, as in ZIP and PNG) of `bytes`, continuing from `crc`.
std::uint32_t Crc32(std::string_view bytes, std::uint32_t crc = 0);

}  // namespace genhost::media
