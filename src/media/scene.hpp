// src/media/scene.hpp (private to the media module)
//
// Provides the procedural picture behind the builtin provider: ComposeScene turns (seed, prompt,
// reference colours) into a Scene, a small resolution-independent description (a multi-stop
// gradient, a soft glow, translucent bands and soft orbs over a palette taken from the prompt's
// words), and PaintScene rasterises a Scene into an RGB24 buffer of any size, optionally at a
// point in time so that video frames can animate the same scene (orbs and bands drift).
//
// Everything is deterministic: the same inputs give the same Scene and the same pixels. Only
// +, -, *, /, sqrt and exact operations (floor, ceil, rounding, min/max) are used (correctly
// rounded in IEEE 754), never libm transcendental functions whose last bit may vary between
// library versions, and randomness comes from prng.hpp. Pure functions of their arguments: safe
// on any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace genhost::media {

// Rgb is a colour with components in [0, 1] (sRGB-encoded, as stored in 8-bit pictures).
struct Rgb {
    double r = 0;
    double g = 0;
    double b = 0;
};

// Positions below are in "frame units": x and y in [-1, 1] span the picture's width and height
// (so a layout keeps its place at every aspect ratio), while lengths (radii, widths) are in units
// of half the geometric mean of width and height (so circles stay round).
struct GradientStop {
    double position = 0;  // 0..1 along the gradient direction, increasing
    Rgb colour;
};

struct Glow {
    double x = 0;
    double y = 0;
    double radius = 1;
    double strength = 0;  // 0..1, blended with "screen"
    Rgb colour;
};

struct Band {
    double x = 0;  // a point on the band's centre line
    double y = 0;
    double normal_x = 1;  // unit normal of the centre line, in pixel space
    double normal_y = 0;
    double half_width = 0.1;
    double softness = 0.5;  // fraction of half_width over which the edge fades
    double alpha = 0.2;
    double drift = 0;  // centre-line movement along the normal, length units per second
    Rgb colour;
};

struct Orb {
    double x = 0;
    double y = 0;
    double radius = 0.1;
    double softness = 0.5;  // fraction of the radius over which the edge fades
    double alpha = 0.5;
    double velocity_x = 0;  // frame units per second
    double velocity_y = 0;
    Rgb colour;
};

struct Scene {
    std::vector<Rgb> palette;
    double gradient_x = 1;  // unit direction of the background gradient, in pixel space
    double gradient_y = 0;
    std::vector<GradientStop> stops;  // at least two, first at 0 and last at 1
    Glow glow;
    std::vector<Band> bands;
    std::vector<Orb> orbs;
    double vignette = 0;  // darkening at the corners, 0..1
};

// ComposeScene derives a Scene. The palette comes from the prompt's words (colour words such as
// "red", "ocean" or "sunset" are honoured; other words pick a hue family and harmony by hash;
// mood words such as "dark", "pastel" or "neon" shift value and saturation), with a small
// seed-dependent hue shift; the layout comes from a generator seeded by (seed, prompt). Each
// colour of `reference_tones` (if any) is blended strongly into the palette, so reference
// pictures steer the result's colours.
Scene ComposeScene(std::uint64_t seed, std::string_view prompt,
                   std::span<const Rgb> reference_tones = {});

// PaintScene draws `scene` at `time_seconds` (0 for a still) into `rgb24`, a width x height RGB24
// picture whose rows are `linesize` bytes apart (linesize >= 3 * width). Only the first 3 * width
// bytes of each row are written. Uses one row of scratch memory; width and height must be >= 1.
void PaintScene(const Scene& scene, double time_seconds, int width, int height, std::uint8_t* rgb24,
                int linesize);

}  // namespace genhost::media
