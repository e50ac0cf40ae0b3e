// src/providers/recipe_plan.hpp (private to the builtin provider)
//
// The pure planning of the recipes (pipelines_recipes.cpp, docs/recipes.md): a story split into
// shot prompts, shot lengths turned into whole frame counts that add up exactly to the total,
// and the background colour of a product photo keyed out into a matte. No I/O, deterministic.
#pragma once

#include "genhost/media/video.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace genhost::providers::recipes {

// SplitStory splits `story` into exactly `count` (>= 1) shot prompts. The story's sentences (cut
// after . ! ? ; 。！？ and line breaks) are grouped in order, as evenly as possible; with fewer
// sentences than shots, sentences are reused in order. Each prompt starts with its framing
// ("Establishing wide shot: ", "Medium shot: ", "Close-up: ", "Detail shot: ", "Closing wide
// shot: "), so reused sentences still make different shots.
std::vector<std::string> SplitStory(std::string_view story, int count);

// ShotFraming is the framing words of shot `index` of `count` (SplitStory's prefixes).
std::string ShotFraming(int index, int count);

// AllocateFrames turns shot lengths in seconds into frame counts at `fps` whose sum is
// round(sum(seconds) * fps): each shot ends at its rounded cumulative boundary, so rounding
// never accumulates. A shot that would get no frame gets one, taken from the longest shot.
std::vector<int> AllocateFrames(const std::vector<double>& seconds, int fps);

// EqualShots is `count` equal lengths adding up to `total_seconds`.
std::vector<double> EqualShots(double total_seconds, int count);

// Matte is a picture with a coverage (alpha) per pixel, 0 transparent .. 255 opaque.
struct Matte {
    media::RgbImage rgb;
    std::vector<std::uint8_t> alpha;  // width * height
};

// KeyOutBackground makes a matte of a product photo: the colour of its border (the median of
// the outermost rows and columns) is the background when the border is nearly uniform, and
// pixels near it become transparent with a soft edge. A busy border (a photo with a scene
// behind the product) keeps the whole picture opaque.
Matte KeyOutBackground(const media::RgbImage& photo);

// ResizeMatte scales a matte to width x height (its picture and its alpha alike).
Matte ResizeMatte(const Matte& matte, int width, int height);

// Composite draws `matte` over `frame` with its top-left corner at (x, y), blending by the
// matte's alpha times `opacity` (0..1); parts outside the frame are clipped.
void Composite(const Matte& matte, int x, int y, double opacity, media::RgbImage& frame);

// Box is a rectangle in pixels.
struct Box {
    int x = 0;
    int y = 0;
    int width = 0;
    int height = 0;
};

// LocateProduct finds where `product` best matches inside `frame`: the window (at a few sizes,
// the product's aspect kept) with the smallest mean colour difference on small copies of both.
Box LocateProduct(const media::RgbImage& frame, const media::RgbImage& product);

}  // namespace genhost::providers::recipes
