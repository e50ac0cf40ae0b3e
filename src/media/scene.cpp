#include "scene.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "prng.hpp"

namespace genhost::media {
namespace {

constexpr std::size_t kPaletteSize = 5;

struct NamedColour {
    std::string_view word;
    std::uint8_t r, g, b;
};

// Colour words and the sRGB colour each one asks for.
constexpr NamedColour kNamedColours[] = {
    {"red", 220, 40, 50},        {"crimson", 180, 20, 50},  {"scarlet", 240, 50, 30},
    {"cherry", 200, 30, 60},     {"ruby", 190, 20, 60},     {"wine", 110, 20, 40},
    {"orange", 250, 140, 40},    {"amber", 255, 190, 60},   {"yellow", 250, 220, 70},
    {"lemon", 250, 240, 90},     {"gold", 230, 180, 60},    {"golden", 230, 180, 60},
    {"lime", 160, 220, 60},      {"green", 60, 170, 90},    {"emerald", 40, 160, 110},
    {"jade", 60, 160, 120},      {"forest", 30, 90, 50},    {"grass", 90, 170, 60},
    {"leaf", 80, 160, 70},       {"moss", 90, 110, 50},     {"olive", 120, 130, 50},
    {"mint", 150, 230, 190},     {"teal", 30, 140, 140},    {"turquoise", 60, 210, 200},
    {"cyan", 60, 200, 230},      {"aqua", 90, 220, 230},    {"blue", 50, 100, 220},
    {"azure", 60, 140, 240},     {"sapphire", 30, 60, 170}, {"navy", 20, 30, 90},
    {"ocean", 20, 90, 160},      {"sea", 30, 110, 170},     {"sky", 120, 180, 240},
    {"indigo", 70, 50, 150},     {"purple", 130, 60, 180},  {"violet", 150, 90, 220},
    {"lavender", 190, 170, 240}, {"plum", 120, 50, 100},    {"magenta", 220, 50, 170},
    {"pink", 245, 150, 190},     {"rose", 230, 100, 130},   {"berry", 150, 30, 90},
    {"candy", 250, 120, 200},    {"coral", 250, 120, 100},  {"peach", 250, 190, 150},
    {"brown", 120, 80, 50},      {"chocolate", 90, 50, 30}, {"coffee", 110, 70, 45},
    {"copper", 190, 110, 60},    {"bronze", 170, 120, 60},  {"rust", 170, 70, 30},
    {"earth", 120, 90, 60},      {"sand", 220, 200, 150},   {"desert", 210, 160, 100},
    {"beige", 230, 215, 180},    {"cream", 250, 240, 210},  {"white", 245, 245, 240},
    {"snow", 240, 245, 250},     {"ice", 190, 230, 245},    {"cloud", 220, 225, 235},
    {"silver", 190, 195, 205},   {"grey", 130, 130, 135},   {"gray", 130, 130, 135},
    {"stone", 150, 145, 135},    {"smoke", 150, 150, 160},  {"storm", 80, 90, 110},
    {"charcoal", 50, 50, 55},    {"black", 15, 15, 20},     {"night", 25, 30, 70},
    {"midnight", 20, 20, 60},    {"space", 10, 10, 30},     {"galaxy", 80, 40, 140},
    {"aurora", 70, 220, 150},    {"sunset", 250, 110, 70},  {"sunrise", 255, 170, 90},
    {"fire", 240, 90, 30},       {"flame", 240, 110, 30},   {"lava", 200, 50, 20},
    {"autumn", 200, 110, 40},    {"spring", 140, 210, 110}, {"summer", 250, 200, 80},
    {"winter", 200, 220, 240},
};

enum class Mood { kNone, kDark, kPastel, kVivid, kMuted };

struct MoodWord {
    std::string_view word;
    Mood mood;
};

constexpr MoodWord kMoodWords[] = {
    {"dark", Mood::kDark},      {"night", Mood::kDark},        {"midnight", Mood::kDark},
    {"noir", Mood::kDark},      {"moody", Mood::kDark},        {"gloomy", Mood::kDark},
    {"shadow", Mood::kDark},    {"dusk", Mood::kDark},         {"pastel", Mood::kPastel},
    {"soft", Mood::kPastel},    {"dreamy", Mood::kPastel},     {"light", Mood::kPastel},
    {"pale", Mood::kPastel},    {"airy", Mood::kPastel},       {"gentle", Mood::kPastel},
    {"misty", Mood::kPastel},   {"foggy", Mood::kPastel},      {"neon", Mood::kVivid},
    {"vivid", Mood::kVivid},    {"vibrant", Mood::kVivid},     {"bold", Mood::kVivid},
    {"electric", Mood::kVivid}, {"psychedelic", Mood::kVivid}, {"saturated", Mood::kVivid},
    {"muted", Mood::kMuted},    {"vintage", Mood::kMuted},     {"faded", Mood::kMuted},
    {"retro", Mood::kMuted},    {"dusty", Mood::kMuted},
};

// Words that say nothing about the picture; they do not steer the palette.
constexpr std::string_view kStopWords[] = {"a",  "an", "the",  "of",  "and",  "in", "on",
                                           "at", "to", "with", "for", "from", "by", "is"};

double Clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

Rgb Mix(const Rgb& a, const Rgb& b, double t) {
    return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

Rgb Scale(const Rgb& c, double k) { return {c.r * k, c.g * k, c.b * k}; }

// HsvToRgb: hue wraps around [0, 1); saturation and value are clamped to [0, 1].
Rgb HsvToRgb(double h, double s, double v) {
    h -= std::floor(h);
    s = Clamp01(s);
    v = Clamp01(v);
    const double sector = h * 6.0;
    const int i = std::min(static_cast<int>(sector), 5);
    const double f = sector - i;
    const double p = v * (1 - s);
    const double q = v * (1 - s * f);
    const double t = v * (1 - s * (1 - f));
    switch (i) {
        case 0:
            return {v, t, p};
        case 1:
            return {q, v, p};
        case 2:
            return {p, v, t};
        case 3:
            return {p, q, v};
        case 4:
            return {t, p, v};
        default:
            return {v, p, q};
    }
}

struct Hsv {
    double h = 0;
    double s = 0;
    double v = 0;
};

Hsv RgbToHsv(const Rgb& c) {
    const double max = std::max({c.r, c.g, c.b});
    const double min = std::min({c.r, c.g, c.b});
    const double delta = max - min;
    Hsv out;
    out.v = max;
    out.s = max > 0 ? delta / max : 0;
    if (delta <= 0) {
        return out;
    }
    double h = 0;
    if (max == c.r) {
        h = (c.g - c.b) / delta;
    } else if (max == c.g) {
        h = 2 + (c.b - c.r) / delta;
    } else {
        h = 4 + (c.r - c.g) / delta;
    }
    h /= 6.0;
    out.h = h - std::floor(h);
    return out;
}

// Words is the prompt split into lower-case words: runs of ASCII letters and digits, with bytes
// >= 0x80 (UTF-8 sequences) kept inside words so that non-English prompts still count.
std::vector<std::string> Words(std::string_view prompt) {
    std::vector<std::string> words;
    std::string current;
    for (const char ch : prompt) {
        const auto byte = static_cast<unsigned char>(ch);
        if ((byte >= 'a' && byte <= 'z') || (byte >= '0' && byte <= '9') || byte >= 0x80) {
            current.push_back(ch);
        } else if (byte >= 'A' && byte <= 'Z') {
            current.push_back(static_cast<char>(byte - 'A' + 'a'));
        } else if (!current.empty()) {
            words.push_back(std::move(current));
            current.clear();
        }
    }
    if (!current.empty()) {
        words.push_back(std::move(current));
    }
    return words;
}

// Lookup finds `word` (or its singular, for a trailing "s") in a table of {word, ...} entries.
template <typename Entry, std::size_t N>
const Entry* Lookup(const Entry (&table)[N], std::string_view word) {
    for (int pass = 0; pass < 2; ++pass) {
        for (const Entry& entry : table) {
            if (entry.word == word) {
                return &entry;
            }
        }
        if (word.size() < 3 || word.back() != 's') {
            break;
        }
        word.remove_suffix(1);
    }
    return nullptr;
}

bool IsStopWord(std::string_view word) {
    return std::find(std::begin(kStopWords), std::end(kStopWords), word) != std::end(kStopWords);
}

Rgb FromBytes(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    return {r / 255.0, g / 255.0, b / 255.0};
}

// RandomDirection is a uniformly distributed unit vector (rejection sampling in the unit disc;
// the fallback after many rejections is practically unreachable but keeps the loop bounded).
void RandomDirection(Xoshiro256& rng, double& x, double& y) {
    for (int attempt = 0; attempt < 64; ++attempt) {
        const double cx = rng.Uniform(-1, 1);
        const double cy = rng.Uniform(-1, 1);
        const double r2 = cx * cx + cy * cy;
        if (r2 > 0.01 && r2 <= 1) {
            const double r = std::sqrt(r2);
            x = cx / r;
            y = cy / r;
            return;
        }
    }
    x = 1;
    y = 0;
}

std::vector<Rgb> ComposePalette(std::uint64_t seed, const std::vector<std::string>& words,
                                std::span<const Rgb> reference_tones) {
    std::vector<Rgb> named;
    Mood mood = Mood::kNone;
    std::string content;  // the words that steer hue, joined
    for (const std::string& word : words) {
        if (const MoodWord* m = Lookup(kMoodWords, word); m != nullptr && mood == Mood::kNone) {
            mood = m->mood;
        }
        if (const NamedColour* c = Lookup(kNamedColours, word); c != nullptr) {
            const Rgb colour = FromBytes(c->r, c->g, c->b);
            const bool seen = std::any_of(named.begin(), named.end(), [&](const Rgb& n) {
                return n.r == colour.r && n.g == colour.g && n.b == colour.b;
            });
            if (!seen && named.size() < 3) {
                named.push_back(colour);
            }
        } else if (!IsStopWord(word)) {
            content += word;
            content += ' ';
        }
    }

    Xoshiro256 rng(Mix64(Fnv1a64(content) ^ 0x70616c6574746521ULL));
    // The seed nudges the hue a little: same prompt, same colour family.
    Xoshiro256 seed_rng(Mix64(seed ^ 0x6875652d73686966ULL));
    const double hue_shift = (seed_rng.Uniform() - 0.5) * 0.06;

    double base_hue = rng.Uniform();
    if (!named.empty()) {
        const Hsv hsv = RgbToHsv(named.front());
        if (hsv.s > 0.15) {
            base_hue = hsv.h;
        }
    }
    // The first three colours are one family (the background gradient uses them); the last two
    // are accents placed by a colour-harmony scheme (used by orbs, bands and the glow).
    constexpr double kSchemes[4][kPaletteSize] = {
        {0.0, 0.06, -0.06, 0.14, -0.12},       // analogous
        {0.0, 0.05, -0.05, 0.5, 0.46},         // complementary
        {0.0, 0.05, -0.05, 1.0 / 3, 2.0 / 3},  // triadic
        {0.0, 0.05, -0.05, 0.42, 0.58},        // split complementary
    };
    const auto& offsets = kSchemes[rng.Below(4)];
    double saturation = rng.Uniform(0.45, 0.8);
    double value = rng.Uniform(0.65, 0.92);
    switch (mood) {
        case Mood::kDark:
            value *= 0.55;
            break;
        case Mood::kPastel:
            saturation *= 0.5;
            value = 0.88 + value * 0.1;
            break;
        case Mood::kVivid:
            saturation = 0.9 + saturation * 0.1;
            value = std::max(value, 0.85);
            break;
        case Mood::kMuted:
            saturation *= 0.55;
            value *= 0.85;
            break;
        case Mood::kNone:
            break;
    }

    std::vector<Rgb> palette(kPaletteSize);
    for (std::size_t i = 0; i < kPaletteSize; ++i) {
        const double s = saturation + rng.Uniform(-0.1, 0.1);
        const double v = value + rng.Uniform(-0.12, 0.08);
        palette[i] = HsvToRgb(base_hue + hue_shift + offsets[i], s, v);
    }
    for (std::size_t i = 0; i < named.size(); ++i) {
        palette[i] = named[i];
    }
    if (!reference_tones.empty()) {
        for (std::size_t i = 0; i < kPaletteSize; ++i) {
            palette[i] = Mix(palette[i], reference_tones[i % reference_tones.size()], 0.7);
        }
    }
    return palette;
}

// SmoothStep is the cubic Hermite step from 0 at e0 to 1 at e1 (e0 < e1).
double SmoothStep(double e0, double e1, double x) {
    const double t = Clamp01((x - e0) / (e1 - e0));
    return t * t * (3 - 2 * t);
}

Rgb EvalStops(const std::vector<GradientStop>& stops, double t) {
    if (t <= stops.front().position) {
        return stops.front().colour;
    }
    for (std::size_t i = 1; i < stops.size(); ++i) {
        if (t <= stops[i].position) {
            const double span = stops[i].position - stops[i - 1].position;
            const double local = span > 0 ? (t - stops[i - 1].position) / span : 1.0;
            return Mix(stops[i - 1].colour, stops[i].colour, SmoothStep(0, 1, local));
        }
    }
    return stops.back().colour;
}

// Pixel is one working colour of a row, components nominally in [0, 1].
struct Pixel {
    float r, g, b;
};

// Quantise rounds a 0..255 value to a byte, clamping what blending pushed out of range.
std::uint8_t Quantise(float v) {
    return static_cast<std::uint8_t>(std::clamp(v + 0.5f, 0.0f, 255.0f));
}

// Pixel-space forms of the scene elements at one point in time.
struct PixelOrb {
    double cx, cy, radius, inner, alpha;
    double highlight_x, highlight_y;  // offset of the specular highlight from the centre
    float r, g, b;
};

struct PixelBand {
    double bx, by, nx, ny, half_width, inner, alpha, shift;
    float r, g, b;
};

// ColumnRange is [first, last) of the pixel columns whose centres fall in [lo, hi], clamped to
// the picture.
void ColumnRange(double lo, double hi, int width, int& first, int& last) {
    const double f = std::clamp(std::floor(lo - 0.5), 0.0, static_cast<double>(width));
    const double l = std::clamp(std::ceil(hi - 0.5) + 1, 0.0, static_cast<double>(width));
    first = static_cast<int>(f);
    last = static_cast<int>(l);
}

}  // namespace

Scene ComposeScene(std::uint64_t seed, std::string_view prompt,
                   std::span<const Rgb> reference_tones) {
    const std::vector<std::string> words = Words(prompt);
    std::string normalised;
    for (const std::string& word : words) {
        normalised += word;
        normalised += ' ';
    }

    Scene scene;
    scene.palette = ComposePalette(seed, words, reference_tones);
    const std::vector<Rgb>& palette = scene.palette;
    Xoshiro256 rng(Mix64(Fnv1a64(normalised)) ^ Mix64(seed + 0x9e3779b97f4a7c15ULL));
    const auto pick = [&]() -> const Rgb& { return palette[rng.Below(kPaletteSize)]; };
    const Rgb white{1, 1, 1};

    RandomDirection(rng, scene.gradient_x, scene.gradient_y);
    // Stops are spread evenly with some jitter, so no two are close enough to make a hard edge;
    // their colours run through the palette's main family (with an accent blend in between when
    // there are four), one of them deepened for contrast.
    const int stop_count = 3 + static_cast<int>(rng.Below(2));
    const std::uint32_t first_colour = rng.Below(3);
    const std::uint32_t deep_stop = rng.Below(static_cast<std::uint32_t>(stop_count));
    const double spacing = 1.0 / (stop_count - 1);
    for (int i = 0; i < stop_count; ++i) {
        GradientStop stop;
        stop.position = i * spacing;
        if (i != 0 && i != stop_count - 1) {
            stop.position += rng.Uniform(-0.2, 0.2) * spacing;
        }
        if (stop_count == 4 && i == 2) {
            // The fourth stop is a half-way blend towards an accent, so the ends still differ.
            stop.colour = Mix(palette[(first_colour + 1) % 3], palette[3 + rng.Below(2)], 0.5);
        } else {
            const auto family = static_cast<std::uint32_t>(i == 3 ? 2 : i);
            stop.colour = palette[(first_colour + family) % 3];
        }
        if (static_cast<std::uint32_t>(i) == deep_stop) {
            stop.colour = Scale(stop.colour, 0.45);
        }
        scene.stops.push_back(stop);
    }

    scene.glow.x = rng.Uniform(-0.7, 0.7);
    scene.glow.y = rng.Uniform(-0.7, 0.7);
    scene.glow.radius = rng.Uniform(0.7, 1.4);
    scene.glow.strength = rng.Uniform(0.2, 0.45);
    scene.glow.colour = Mix(pick(), white, 0.55);

    const int band_count = 1 + static_cast<int>(rng.Below(3));
    for (int i = 0; i < band_count; ++i) {
        Band band;
        band.x = rng.Uniform(-0.6, 0.6);
        band.y = rng.Uniform(-0.6, 0.6);
        RandomDirection(rng, band.normal_x, band.normal_y);
        band.half_width = rng.Uniform(0.04, 0.22);
        band.softness = rng.Uniform(0.5, 1.0);
        band.alpha = rng.Uniform(0.1, 0.3);
        band.drift = rng.Uniform(-0.05, 0.05);
        band.colour = Mix(pick(), white, 0.2);
        scene.bands.push_back(band);
    }

    const int orb_count = 4 + static_cast<int>(rng.Below(7));
    for (int i = 0; i < orb_count; ++i) {
        Orb orb;
        orb.x = rng.Uniform(-0.95, 0.95);
        orb.y = rng.Uniform(-0.95, 0.95);
        const double u = rng.Uniform();
        orb.radius = 0.05 + 0.32 * u * u;
        orb.softness = rng.Uniform(0.25, 0.9);
        orb.alpha = rng.Uniform(0.35, 0.8);
        orb.velocity_x = rng.Uniform(-0.04, 0.04);
        orb.velocity_y = rng.Uniform(-0.04, 0.04);
        orb.colour = pick();
        scene.orbs.push_back(orb);
    }
    // Large orbs first, so the small ones sit on top.
    std::stable_sort(scene.orbs.begin(), scene.orbs.end(),
                     [](const Orb& a, const Orb& b) { return a.radius > b.radius; });

    scene.vignette = rng.Uniform(0.15, 0.35);
    return scene;
}

void PaintScene(const Scene& scene, double time_seconds, int width, int height, std::uint8_t* rgb24,
                int linesize) {
    const double half_w = width * 0.5;
    const double half_h = height * 0.5;
    const double unit = std::sqrt(static_cast<double>(width) * height) * 0.5;

    // The gradient is looked up from a table: a few multiplies per pixel instead of a stop search.
    constexpr int kLutSteps = 4096;
    std::vector<Pixel> lut(kLutSteps + 1);
    for (int i = 0; i <= kLutSteps; ++i) {
        const Rgb c = EvalStops(scene.stops, static_cast<double>(i) / kLutSteps);
        lut[i] = {static_cast<float>(c.r), static_cast<float>(c.g), static_cast<float>(c.b)};
    }
    const double gx = scene.gradient_x;
    const double gy = scene.gradient_y;
    // Half the extent of the picture along the gradient, so the gradient spans it exactly.
    const double extent = std::abs(gx) * half_w + std::abs(gy) * half_h;

    const double glow_x = half_w + scene.glow.x * half_w;
    const double glow_y = half_h + scene.glow.y * half_h;
    const double glow_r = scene.glow.radius * unit;
    const double glow_r2 = glow_r * glow_r;
    const auto glow_strength = static_cast<float>(scene.glow.strength);
    const auto glow_r_c = static_cast<float>(scene.glow.colour.r);
    const auto glow_g_c = static_cast<float>(scene.glow.colour.g);
    const auto glow_b_c = static_cast<float>(scene.glow.colour.b);

    std::vector<PixelBand> bands;
    for (const Band& b : scene.bands) {
        const double hw = b.half_width * unit;
        bands.push_back({half_w + b.x * half_w, half_h + b.y * half_h, b.normal_x, b.normal_y, hw,
                         hw * (1 - b.softness), b.alpha, b.drift * time_seconds * unit,
                         static_cast<float>(b.colour.r), static_cast<float>(b.colour.g),
                         static_cast<float>(b.colour.b)});
    }
    std::vector<PixelOrb> orbs;
    for (const Orb& o : scene.orbs) {
        const double r = o.radius * unit;
        orbs.push_back({half_w + (o.x + o.velocity_x * time_seconds) * half_w,
                        half_h + (o.y + o.velocity_y * time_seconds) * half_h, r,
                        r * (1 - o.softness), o.alpha, -0.3 * r, -0.3 * r,
                        static_cast<float>(o.colour.r), static_cast<float>(o.colour.g),
                        static_cast<float>(o.colour.b)});
    }
    const double vignette = scene.vignette;

    std::vector<Pixel> row(static_cast<std::size_t>(width));
    for (int y = 0; y < height; ++y) {
        const double py = y + 0.5;

        // Background gradient: the lookup position is linear in x along the row.
        const double g0 = ((0.5 - half_w) * gx + (py - half_h) * gy) / extent * 0.5 + 0.5;
        const double gstep = gx / extent * 0.5;
        for (int x = 0; x < width; ++x) {
            const double s = std::clamp(g0 + gstep * x, 0.0, 1.0);
            row[x] = lut[std::lround(s * kLutSteps)];
        }

        // Glow, blended with "screen": brightens without washing out.
        const double gdy = py - glow_y;
        if (gdy * gdy < glow_r2) {
            const double half = std::sqrt(glow_r2 - gdy * gdy);
            int first = 0;
            int last = 0;
            ColumnRange(glow_x - half, glow_x + half, width, first, last);
            for (int x = first; x < last; ++x) {
                const double dx = x + 0.5 - glow_x;
                const double d2 = dx * dx + gdy * gdy;
                if (d2 >= glow_r2) {
                    continue;
                }
                auto f = static_cast<float>(1 - d2 / glow_r2);
                f = f * f * glow_strength;
                Pixel& p = row[x];
                p.r += (1 - p.r) * glow_r_c * f;
                p.g += (1 - p.g) * glow_g_c * f;
                p.b += (1 - p.b) * glow_b_c * f;
            }
        }

        // Bands: the signed distance to the centre line is linear in x.
        for (const PixelBand& b : bands) {
            const double a = (py - b.by) * b.ny - b.bx * b.nx - b.shift;
            int first = 0;
            int last = width;
            if (std::abs(b.nx) < 1e-9) {
                if (std::abs(a) >= b.half_width) {
                    continue;
                }
            } else {
                double lo = (-b.half_width - a) / b.nx;
                double hi = (b.half_width - a) / b.nx;
                if (lo > hi) {
                    std::swap(lo, hi);
                }
                ColumnRange(lo, hi, width, first, last);
            }
            for (int x = first; x < last; ++x) {
                const double dist = std::abs(a + b.nx * (x + 0.5));
                if (dist >= b.half_width) {
                    continue;
                }
                const auto k =
                    static_cast<float>(b.alpha * (1 - SmoothStep(b.inner, b.half_width, dist)));
                Pixel& p = row[x];
                p.r += (b.r - p.r) * k;
                p.g += (b.g - p.g) * k;
                p.b += (b.b - p.b) * k;
            }
        }

        // Orbs: soft-edged discs with an off-centre highlight.
        for (const PixelOrb& o : orbs) {
            const double dy = py - o.cy;
            const double r2 = o.radius * o.radius;
            if (dy * dy >= r2) {
                continue;
            }
            const double half = std::sqrt(r2 - dy * dy);
            int first = 0;
            int last = 0;
            ColumnRange(o.cx - half, o.cx + half, width, first, last);
            const double inner2 = o.inner * o.inner;
            const double hy = dy - o.highlight_y;
            for (int x = first; x < last; ++x) {
                const double dx = x + 0.5 - o.cx;
                const double d2 = dx * dx + dy * dy;
                if (d2 >= r2) {
                    continue;
                }
                const double cover =
                    d2 <= inner2 ? 1.0 : 1 - SmoothStep(o.inner, o.radius, std::sqrt(d2));
                const double hx = dx - o.highlight_x;
                const auto shine =
                    static_cast<float>(0.35 * std::max(0.0, 1 - (hx * hx + hy * hy) / r2));
                const auto k = static_cast<float>(o.alpha * cover);
                const float cr = o.r + (1 - o.r) * shine;
                const float cg = o.g + (1 - o.g) * shine;
                const float cb = o.b + (1 - o.b) * shine;
                Pixel& p = row[x];
                p.r += (cr - p.r) * k;
                p.g += (cg - p.g) * k;
                p.b += (cb - p.b) * k;
            }
        }

        // Vignette and quantisation to 8 bits.
        const double vy = (py - half_h) / half_h;
        const double vy2 = vy * vy;
        std::uint8_t* out = rgb24 + static_cast<std::ptrdiff_t>(y) * linesize;
        for (int x = 0; x < width; ++x) {
            const double vx = (x + 0.5 - half_w) / half_w;
            const auto shade = static_cast<float>((1 - vignette * 0.5 * (vx * vx + vy2)) * 255);
            const Pixel& p = row[x];
            *out++ = Quantise(p.r * shade);
            *out++ = Quantise(p.g * shade);
            *out++ = Quantise(p.b * shade);
        }
    }
}

}  // namespace genhost::media
