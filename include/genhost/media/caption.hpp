// genhost/media/caption.hpp
//
// Provides DrawCaption: a line of text drawn on a picture with libavfilter's drawtext (FreeType
// glyphs of the font fontconfig picks), for the ad_localization recipe's localized caption.
// drawtext shapes no text: scripts that need shaping (Arabic, Devanagari, Thai) come out as
// isolated glyphs, and glyphs the chosen font lacks come out as boxes (docs/recipes.md).
//
// Runs on the calling thread (a worker thread). Failures throw MediaError.
#pragma once

#include "genhost/media/video.hpp"

#include <string>

namespace genhost::media {

// CaptionSpec says what DrawCaption draws.
struct CaptionSpec {
    std::string text;              // UTF-8, one line; drawn literally (no % expansion)
    std::string language;          // an ISO 639 code, to ask fontconfig for a font covering it
    int font_size = 32;            // pixels
    double band_opacity = 0.6;     // the dark band behind the text
    double bottom_fraction = 0.1;  // the text's distance from the bottom, of the height
};

// DrawCaption draws `spec.text` centred near the bottom of `image` (white on a dark band).
// Throws MediaError when drawtext or any font is unavailable.
void DrawCaption(RgbImage& image, const CaptionSpec& spec);

}  // namespace genhost::media
