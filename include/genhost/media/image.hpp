// genhost/media/image.hpp
//
// Provides RenderImage: a deterministic picture of exact size made and encoded with FFmpeg's
// libraries (libavcodec's PNG and MJPEG encoders, libswscale), and ProbeMedia: what libavformat
// and libavcodec say a file is (used by tests and by input checks; ProbeMediaFile bounds the work
// on untrusted files).
//
// Runs on the calling thread (a worker or media-pool thread, never an I/O thread). Thread-safe:
// no shared state. Failures throw MediaError.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::media {

class MediaError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

enum class ImageFormat { kPng, kJpeg };

// ImageSpec says what to draw. The same spec always gives byte-identical output.
struct ImageSpec {
    int width = 0;   // 1..8000
    int height = 0;  // 1..8000
    std::uint64_t seed = 0;
    std::string prompt;  // steers the palette and composition
    ImageFormat format = ImageFormat::kPng;
    // Optional decoded reference pictures (encoded bytes, any format libavcodec reads) whose
    // colours are blended into the result; may be empty.
    std::vector<std::string> references;
};

// RenderImage draws `spec` and returns the encoded file bytes.
std::string RenderImage(const ImageSpec& spec);

// MediaInfo is the result of probing a file.
struct MediaInfo {
    std::string container;    // libavformat short name, e.g. "png_pipe", "mov,mp4,m4a,3gp,3g2,mj2"
    std::string video_codec;  // e.g. "png", "h264"; empty without a video stream
    int width = 0;
    int height = 0;
    std::string pixel_format;     // e.g. "rgb24", "yuv420p"
    double duration_seconds = 0;  // 0 for still images
    double frame_rate = 0;
    std::string audio_codec;  // empty without an audio stream
    int sample_rate = 0;
    int channels = 0;
    std::string color_transfer;   // e.g. "smpte2084"; empty if unspecified
    std::string color_primaries;  // e.g. "bt2020"; empty if unspecified
};

// ProbeMedia reads the container header of `bytes` and decodes the first frame of the first video
// stream (if any) to confirm it is decodable; throws MediaError if libav cannot read it.
MediaInfo ProbeMedia(std::string_view bytes);

// ProbeLimits bounds ProbeMediaFile's work on an untrusted file.
struct ProbeLimits {
    std::chrono::milliseconds timeout{10000};  // wall clock for opening, analysis and decoding
    int max_side = 8000;  // a picture with a longer side is reported (its size), not decoded
};

// ProbeMediaFile is ProbeMedia for the file at `path`, read through a private I/O context (no
// protocols, no nested opens) within `limits`: decoders refuse pictures of more than
// max_side^2 pixels (decompression bombs), and every read stops once the timeout passes. Files
// without video also get their first audio frame decoded. A picture with a side over max_side
// is returned with its header size and no decode. Throws MediaError (unreadable, undecodable,
// over time).
MediaInfo ProbeMediaFile(const std::string& path, const ProbeLimits& limits = {});

}  // namespace genhost::media
