// Media files for tests and benchmarks, made at run time with FFmpeg's libraries (nothing
// checked in): PNG pictures of any size, MP4 videos of a given length, WAV audio, and a PNG
// whose header claims a picture far too large to decode (a decompression bomb).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace genhost::testing {

// MakePng encodes a `width` x `height` RGB picture (a gradient; `noise` makes it incompressible).
std::string MakePng(int width, int height, bool noise = false);

// MakeMp4 encodes `seconds` of `width` x `height` video at `fps` (MPEG-4 Part 2 in MP4); `noise`
// makes every frame random, so the file is large (about 1.9 * width * height bytes a frame).
std::string MakeMp4(int width, int height, double seconds, int fps = 10, bool noise = false);

// MakeWav returns `seconds` of a 440 Hz tone, 16-bit mono PCM WAV at `rate`.
std::string MakeWav(double seconds, int rate = 16000);

// MakePngBomb returns a small PNG whose header says `side` x `side` pixels.
std::string MakePngBomb(int side);

// FillMediaPlaceholders replaces, anywhere in `j`, the placeholders of
// tests/http/model_requests.json with data URIs made now: "$png" (320x240), "$mp4" (5 s,
// 854x480, 24 fps) and "$wav" (5.5 s at 16 kHz).
void FillMediaPlaceholders(nlohmann::json& j);

}  // namespace genhost::testing
