// genhost/media/jpeg_encoder.hpp
//
// Provides JpegEncoder: JPEG encoding of a stream of RGB pictures of one size for live video
// (a realtime avatar's frames, several sessions at once). EncodePicture (video.hpp) opens an
// MJPEG encoder and a swscale context for every picture; JpegEncoder keeps one libavcodec MJPEG
// encoder open and one YCbCr frame between pictures, converts RGB to full-range BT.601 4:2:0
// (JFIF) with a fixed-point loop, and can convert only the rectangles that changed since the
// previous picture.
//
// Output: baseline JFIF, 4:2:0, square pixels, standard Huffman tables, the quantisation
// tables of the JPEG standard (T.81 Annex K) scaled by libjpeg's quality scale. Encoding uses
// libavcodec's fastest DCT for the CPU, so the bytes may differ between machines (the decoded
// picture barely); for stored files use EncodePicture. Objects belong to one thread. Failures
// throw MediaError.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "genhost/media/video.hpp"

namespace genhost::media {

// PixelRect is the pixels [x, x + width) x [y, y + height) of a picture.
struct PixelRect {
    int x = 0, y = 0, width = 0, height = 0;
};

class JpegEncoder {
  public:
    // JpegEncoder encodes width x height pictures (1..8000 per side) at `quality` 1..100,
    // libjpeg's scale: the tables scaled by 5000/q % below 50 and (200 - 2q) % from 50, rounded
    // to libavcodec's quantiser steps of 1/8 (quality 50: the tables; 75: half; 90: a quarter;
    // 91..100 all give an eighth, the finest it has; 1..13 all give 31/8). The DC step is 8
    // throughout. Throws MediaError for an out-of-range argument or when libavcodec has no MJPEG
    // encoder.
    JpegEncoder(int width, int height, int quality = 75);
    ~JpegEncoder();
    JpegEncoder(const JpegEncoder&) = delete;
    JpegEncoder& operator=(const JpegEncoder&) = delete;

    // Encode returns the JPEG file of `image`, which must be width x height.
    std::string Encode(const RgbImage& image);

    // Encode with `changed` converts only those rectangles (clipped to the picture; the 2x2
    // chroma blocks they touch) to YCbCr: the caller promises that `image` equals the picture of
    // the previous Encode call everywhere else. The first call converts everything regardless.
    std::string Encode(const RgbImage& image, std::span<const PixelRect> changed);

    int width() const;
    int height() const;
    int quality() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace genhost::media
