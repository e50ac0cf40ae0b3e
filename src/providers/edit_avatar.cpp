// The procedural avatar portrait, its lip sync and the avatar voices; see edit_avatar.hpp.
#include "edit_avatar.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "edit_filters.hpp"

namespace genhost::providers::edit {
namespace {

using Rgb = std::array<std::uint8_t, 3>;

std::uint8_t Blend(std::uint8_t p, std::uint8_t c, double a) {
    return static_cast<std::uint8_t>(std::lround(p + (c - p) * a));
}

Rgb Scale(const Rgb& c, double f) {
    Rgb out{};
    for (int i = 0; i < 3; ++i) {
        out[i] = static_cast<std::uint8_t>(std::clamp(std::lround(c[i] * f), 0l, 255l));
    }
    return out;
}

// FillEllipse paints an anti-aliased ellipse, optionally only rows in [clip_top, clip_bottom).
void FillEllipse(media::RgbImage& img, double cx, double cy, double rx, double ry, const Rgb& c,
                 double alpha = 1.0, double clip_top = -1e9, double clip_bottom = 1e9) {
    if (rx <= 0 || ry <= 0) return;
    const int x0 = std::max(0, static_cast<int>(std::floor(cx - rx - 1)));
    const int x1 = std::min(img.width - 1, static_cast<int>(std::ceil(cx + rx + 1)));
    const int y0 = std::max({0, static_cast<int>(std::floor(cy - ry - 1)),
                             static_cast<int>(std::floor(std::max(-1e6, clip_top)))});
    const int y1 = std::min({img.height - 1, static_cast<int>(std::ceil(cy + ry + 1)),
                             static_cast<int>(std::ceil(std::min(1e6, clip_bottom)))});
    const double edge = std::min(rx, ry);
    for (int y = y0; y <= y1; ++y) {
        const double py = y + 0.5;
        if (py < clip_top || py >= clip_bottom) continue;
        const double ny = (py - cy) / ry;
        std::uint8_t* row = img.Row(y);
        for (int x = x0; x <= x1; ++x) {
            const double nx = (x + 0.5 - cx) / rx;
            const double d = std::sqrt(nx * nx + ny * ny);
            const double cover = std::clamp((1.0 - d) * edge + 0.5, 0.0, 1.0) * alpha;
            if (cover <= 0) continue;
            std::uint8_t* px = row + std::size_t(3) * x;
            for (int i = 0; i < 3; ++i) px[i] = Blend(px[i], c[i], cover);
        }
    }
}

// FillTriangle paints a triangle (2x2 supersampled edges).
void FillTriangle(media::RgbImage& img, double ax, double ay, double bx, double by, double cx,
                  double cy, const Rgb& c) {
    const int x0 = std::max(0, static_cast<int>(std::floor(std::min({ax, bx, cx}))));
    const int x1 = std::min(img.width - 1, static_cast<int>(std::ceil(std::max({ax, bx, cx}))));
    const int y0 = std::max(0, static_cast<int>(std::floor(std::min({ay, by, cy}))));
    const int y1 = std::min(img.height - 1, static_cast<int>(std::ceil(std::max({ay, by, cy}))));
    auto side = [](double x0_, double y0_, double x1_, double y1_, double px, double py) {
        return (x1_ - x0_) * (py - y0_) - (y1_ - y0_) * (px - x0_);
    };
    for (int y = y0; y <= y1; ++y) {
        for (int x = x0; x <= x1; ++x) {
            int inside = 0;
            for (int s = 0; s < 4; ++s) {
                const double px = x + 0.25 + 0.5 * (s & 1);
                const double py = y + 0.25 + 0.5 * (s >> 1);
                const double d1 = side(ax, ay, bx, by, px, py);
                const double d2 = side(bx, by, cx, cy, px, py);
                const double d3 = side(cx, cy, ax, ay, px, py);
                const bool neg = d1 < 0 || d2 < 0 || d3 < 0;
                const bool pos = d1 > 0 || d2 > 0 || d3 > 0;
                if (!(neg && pos)) ++inside;
            }
            if (inside == 0) continue;
            std::uint8_t* px = img.Row(y) + std::size_t(3) * x;
            for (int i = 0; i < 3; ++i) px[i] = Blend(px[i], c[i], inside / 4.0);
        }
    }
}

constexpr std::array<Rgb, 7> kSkins = {{{241, 205, 178},
                                        {226, 180, 146},
                                        {198, 146, 108},
                                        {160, 110, 78},
                                        {118, 80, 56},
                                        {236, 196, 160},
                                        {210, 160, 120}}};
constexpr std::array<Rgb, 7> kHair = {{{40, 28, 22},
                                       {92, 58, 34},
                                       {170, 120, 60},
                                       {20, 20, 24},
                                       {140, 50, 30},
                                       {200, 190, 170},
                                       {60, 70, 150}}};
constexpr std::array<Rgb, 8> kClothes = {{{40, 70, 130},
                                          {150, 40, 50},
                                          {40, 110, 80},
                                          {220, 220, 225},
                                          {60, 60, 70},
                                          {200, 140, 40},
                                          {110, 60, 140},
                                          {30, 140, 150}}};
constexpr std::array<Rgb, 6> kBackTop = {{{90, 130, 190},
                                          {200, 170, 140},
                                          {120, 170, 140},
                                          {70, 70, 90},
                                          {190, 120, 150},
                                          {230, 210, 170}}};
constexpr std::array<Rgb, 5> kIris = {
    {{70, 110, 160}, {90, 60, 40}, {60, 120, 70}, {40, 30, 25}, {120, 100, 60}}};

// Pick is a deterministic choice from a hash, a different stream per `salt`.
std::size_t Pick(std::uint64_t hash, std::uint64_t salt, std::size_t n) {
    return static_cast<std::size_t>(Mix64(hash ^ (salt * 0x9e3779b97f4a7c15ull)) % n);
}

void DrawEyes(media::RgbImage& img, const PortraitLayout& l, const Rgb& skin, const Rgb& iris,
              bool cat, bool closed) {
    for (const double side : {-1.0, 1.0}) {
        const double x = l.head_x + side * l.eye_dx;
        if (closed) {
            FillEllipse(img, x, l.eye_y, l.eye_rx * 1.2, l.eye_ry * 1.35, skin);
            FillEllipse(img, x, l.eye_y + l.eye_ry * 0.3, l.eye_rx * 1.05,
                        std::max(1.0, l.eye_ry * 0.16), {45, 30, 30});
            continue;
        }
        FillEllipse(img, x, l.eye_y, l.eye_rx, l.eye_ry,
                    cat ? Rgb{215, 205, 90} : Rgb{246, 246, 242});
        FillEllipse(img, x, l.eye_y, l.eye_ry * 0.78, l.eye_ry * 0.8, iris);
        if (cat) {
            FillEllipse(img, x, l.eye_y, l.eye_ry * 0.18, l.eye_ry * 0.75, {15, 15, 15});
        } else {
            FillEllipse(img, x, l.eye_y, l.eye_ry * 0.36, l.eye_ry * 0.36, {18, 14, 14});
            FillEllipse(img, x + l.eye_ry * 0.2, l.eye_y - l.eye_ry * 0.25, l.eye_ry * 0.13,
                        l.eye_ry * 0.13, {250, 250, 250});
        }
    }
}

void DrawMouth(media::RgbImage& img, const Portrait& p, double openness) {
    const PortraitLayout& l = p.layout;
    const Rgb lips{p.lips[0], p.lips[1], p.lips[2]};
    const double o = std::clamp(openness, 0.0, 1.0);
    const double thickness = l.head_ry * 0.03;
    if (o < 0.02) {
        FillEllipse(img, l.mouth_x, l.mouth_y, l.mouth_half_width, thickness * 1.4, lips);
        FillEllipse(img, l.mouth_x, l.mouth_y, l.mouth_half_width * 0.92,
                    std::max(1.0, thickness * 0.3), Scale(lips, 0.45));
        return;
    }
    const double rx = l.mouth_half_width * (1.0 - 0.15 * o);
    const double ry = thickness * 1.4 + o * l.mouth_max_open;
    FillEllipse(img, l.mouth_x, l.mouth_y, rx, ry, lips);
    const double irx = rx * 0.82;
    const double iry = std::max(1.0, ry - thickness);
    FillEllipse(img, l.mouth_x, l.mouth_y, irx, iry, {62, 22, 28});
    if (o > 0.25) {
        FillEllipse(img, l.mouth_x, l.mouth_y, irx, iry, {236, 232, 222}, 1.0, -1e9,
                    l.mouth_y - iry * 0.45);
        FillEllipse(img, l.mouth_x, l.mouth_y + iry * 0.55, irx * 0.6, iry * 0.45, {170, 70, 80},
                    1.0, l.mouth_y + iry * 0.2, 1e9);
    }
}

}  // namespace

PortraitLayout Layout(int width, int height) {
    PortraitLayout l;
    const double unit = std::min<double>(height, 1.4 * width);
    l.head_x = width / 2.0;
    l.head_y = height * 0.44;
    l.head_ry = unit * 0.27;
    l.head_rx = l.head_ry * 0.78;
    l.mouth_x = l.head_x;
    l.mouth_y = l.head_y + l.head_ry * 0.52;
    l.mouth_half_width = l.head_rx * 0.32;
    l.mouth_max_open = l.head_ry * 0.14;
    l.eye_dx = l.head_rx * 0.4;
    l.eye_y = l.head_y - l.head_ry * 0.06;
    l.eye_rx = l.head_rx * 0.19;
    l.eye_ry = l.head_ry * 0.085;
    return l;
}

Portrait RenderPortrait(std::string_view id, int width, int height) {
    Portrait p;
    p.layout = Layout(width, height);
    const PortraitLayout& l = p.layout;
    const std::uint64_t hash = HashString(id);
    p.cat = id.find("cat") != std::string_view::npos;
    Rgb skin = kSkins[Pick(hash, 1, kSkins.size())];
    Rgb hair = kHair[Pick(hash, 2, kHair.size())];
    const Rgb clothes = kClothes[Pick(hash, 3, kClothes.size())];
    const Rgb back = kBackTop[Pick(hash, 4, kBackTop.size())];
    const Rgb iris = p.cat ? Rgb{110, 160, 60} : kIris[Pick(hash, 5, kIris.size())];
    const bool long_hair = !p.cat && Pick(hash, 6, 2) == 0;
    if (p.cat) {
        skin = {214, 140, 70};
        hair = {180, 110, 50};
    }
    Rgb lips = p.cat ? Rgb{150, 80, 80}
                     : Rgb{static_cast<std::uint8_t>(std::min(255, skin[0] - 20)),
                           static_cast<std::uint8_t>(skin[1] * 0.55),
                           static_cast<std::uint8_t>(skin[2] * 0.6)};
    std::copy(skin.begin(), skin.end(), p.skin);
    std::copy(lips.begin(), lips.end(), p.lips);

    // Background: a vertical gradient from the picked colour to a darker one, with a vignette.
    media::RgbImage& img = p.base;
    img = media::RgbImage(width, height);
    const Rgb bottom = Scale(back, 0.45);
    for (int y = 0; y < height; ++y) {
        const double t = static_cast<double>(y) / std::max(1, height - 1);
        std::uint8_t* row = img.Row(y);
        for (int x = 0; x < width; ++x) {
            const double dx = (x + 0.5) / width - 0.5;
            const double dy = (y + 0.5) / height - 0.45;
            const double vignette = 1.0 - 0.5 * std::min(1.0, dx * dx + dy * dy);
            for (int i = 0; i < 3; ++i) {
                row[3 * x + i] = static_cast<std::uint8_t>(
                    std::lround((back[i] * (1 - t) + bottom[i] * t) * vignette));
            }
        }
    }
    // Body, neck, hair behind the head, ears, head, fringe.
    FillEllipse(img, l.head_x, l.head_y + l.head_ry * 2.45, l.head_rx * 2.5, l.head_ry * 1.3,
                clothes);
    FillEllipse(img, l.head_x, l.head_y + l.head_ry * 1.0, l.head_rx * 0.42, l.head_ry * 0.6,
                Scale(skin, 0.85));
    if (long_hair) {
        FillEllipse(img, l.head_x, l.head_y + l.head_ry * 0.35, l.head_rx * 1.3, l.head_ry * 1.25,
                    hair);
    }
    if (p.cat) {
        for (const double side : {-1.0, 1.0}) {
            FillTriangle(img, l.head_x + side * l.head_rx * 0.95, l.head_y - l.head_ry * 0.35,
                         l.head_x + side * l.head_rx * 0.25, l.head_y - l.head_ry * 0.85,
                         l.head_x + side * l.head_rx * 0.9, l.head_y - l.head_ry * 1.35, skin);
            FillTriangle(img, l.head_x + side * l.head_rx * 0.82, l.head_y - l.head_ry * 0.55,
                         l.head_x + side * l.head_rx * 0.42, l.head_y - l.head_ry * 0.85,
                         l.head_x + side * l.head_rx * 0.82, l.head_y - l.head_ry * 1.15,
                         {230, 160, 160});
        }
    } else {
        FillEllipse(img, l.head_x, l.head_y - l.head_ry * 0.2, l.head_rx * 1.12, l.head_ry * 0.95,
                    hair);
        for (const double side : {-1.0, 1.0}) {
            FillEllipse(img, l.head_x + side * l.head_rx * 0.98, l.head_y + l.head_ry * 0.05,
                        l.head_rx * 0.14, l.head_ry * 0.2, Scale(skin, 0.93));
        }
    }
    FillEllipse(img, l.head_x, l.head_y, l.head_rx, l.head_ry, skin);
    if (p.cat) {
        FillEllipse(img, l.head_x, l.mouth_y - l.head_ry * 0.05, l.head_rx * 0.5, l.head_ry * 0.28,
                    {245, 235, 220});
        FillEllipse(img, l.head_x, l.mouth_y - l.head_ry * 0.25, l.head_rx * 0.1, l.head_ry * 0.06,
                    {210, 110, 120});
    } else {
        // The fringe: its lower edge is the curved hairline above the eyebrows.
        FillEllipse(img, l.head_x, l.head_y - l.head_ry * 0.78, l.head_rx * 1.04, l.head_ry * 0.45,
                    hair);
        // Nose and cheeks.
        FillEllipse(img, l.head_x, l.head_y + l.head_ry * 0.24, l.head_rx * 0.09, l.head_ry * 0.06,
                    Scale(skin, 0.78), 0.6);
        for (const double side : {-1.0, 1.0}) {
            FillEllipse(img, l.head_x + side * l.head_rx * 0.5, l.head_y + l.head_ry * 0.25,
                        l.head_rx * 0.17, l.head_ry * 0.1, {230, 120, 120}, 0.18);
        }
    }
    // Eyebrows and eyes.
    for (const double side : {-1.0, 1.0}) {
        FillEllipse(img, l.head_x + side * l.eye_dx, l.eye_y - l.eye_ry * 2.1, l.eye_rx * 1.1,
                    std::max(1.0, l.eye_ry * 0.3), p.cat ? Scale(skin, 0.8) : Scale(hair, 0.8));
    }
    DrawEyes(img, l, skin, iris, p.cat, false);
    DrawMouth(img, p, 0.0);
    return p;
}

Portrait PortraitFromPicture(const media::RgbImage& picture, int width, int height) {
    Portrait p;
    p.photo = true;
    p.base = media::RgbImage(width, height);
    media::Letterbox(picture, p.base);
    // Where Letterbox put the picture: scaled to fit, centred.
    const double scale = std::min(static_cast<double>(width) / picture.width,
                                  static_cast<double>(height) / picture.height);
    const double w = picture.width * scale;
    const double h = picture.height * scale;
    const double x0 = (width - w) / 2;
    const double y0 = (height - h) / 2;
    PortraitLayout& l = p.layout;
    l.head_x = x0 + w / 2;
    l.head_y = y0 + h * 0.45;
    l.head_ry = h * 0.3;
    l.head_rx = l.head_ry * 0.78;
    l.mouth_x = l.head_x;
    l.mouth_y = y0 + h * 0.66;
    l.mouth_half_width = std::max(4.0, w * 0.055);
    l.mouth_max_open = std::max(3.0, h * 0.04);
    // Lips: the mean colour around the mouth, darkened and reddened.
    double sum[3] = {0, 0, 0};
    int n = 0;
    const int cx = static_cast<int>(l.mouth_x);
    const int cy = static_cast<int>(l.mouth_y);
    const int rx = static_cast<int>(l.mouth_half_width);
    const int ry = std::max(1, rx / 3);
    for (int y = std::max(0, cy - ry); y <= std::min(height - 1, cy + ry); ++y) {
        const std::uint8_t* row = p.base.Row(y);
        for (int x = std::max(0, cx - rx); x <= std::min(width - 1, cx + rx); ++x, ++n) {
            for (int c = 0; c < 3; ++c) sum[c] += row[std::size_t(3) * x + c];
        }
    }
    const Rgb mean =
        n > 0 ? Rgb{static_cast<std::uint8_t>(sum[0] / n), static_cast<std::uint8_t>(sum[1] / n),
                    static_cast<std::uint8_t>(sum[2] / n)}
              : Rgb{180, 120, 110};
    for (int c = 0; c < 3; ++c) p.skin[c] = mean[c];
    const Rgb lips =
        Scale(Rgb{static_cast<std::uint8_t>(std::min(255, mean[0] + 30)), mean[1], mean[2]}, 0.7);
    for (int c = 0; c < 3; ++c) p.lips[c] = lips[c];
    return p;
}

void DrawFrame(const Portrait& portrait, double openness, bool blink, media::RgbImage& frame) {
    frame = portrait.base;
    DrawFeatures(portrait, openness, blink, frame);
}

void DrawFeatures(const Portrait& portrait, double openness, bool blink, media::RgbImage& frame) {
    if (openness >= 0.02) DrawMouth(frame, portrait, openness);
    if (blink && !portrait.photo) {
        const Rgb skin{portrait.skin[0], portrait.skin[1], portrait.skin[2]};
        DrawEyes(frame, portrait.layout, skin, {0, 0, 0}, portrait.cat, true);
    }
}

namespace {

// Box is the pixels FillEllipse may touch for ellipses within cx +- rx, cy +- ry (it reaches one
// pixel beyond the radii), with one more pixel of margin, clipped to width x height.
PixelBox Box(double cx, double cy, double rx, double ry, int width, int height) {
    PixelBox b;
    b.x0 = std::max(0, static_cast<int>(std::floor(cx - rx - 1)) - 1);
    b.y0 = std::max(0, static_cast<int>(std::floor(cy - ry - 1)) - 1);
    b.x1 = std::min(width, static_cast<int>(std::ceil(cx + rx + 1)) + 2);
    b.y1 = std::min(height, static_cast<int>(std::ceil(cy + ry + 1)) + 2);
    return b;
}

}  // namespace

PixelBox MouthBox(const Portrait& portrait) {
    // DrawMouth: every ellipse lies within the lips' ellipse, widest closed (half width) and
    // tallest wide open (thickness * 1.4 + mouth_max_open; the closed line is thinner).
    const PortraitLayout& l = portrait.layout;
    const double thickness = l.head_ry * 0.03;
    const double ry = std::max(1.0, thickness * 1.4) + l.mouth_max_open;
    return Box(l.mouth_x, l.mouth_y, l.mouth_half_width, ry, portrait.base.width,
               portrait.base.height);
}

PixelBox EyesBox(const Portrait& portrait) {
    if (portrait.photo) return {};
    // DrawEyes(closed): a skin ellipse of 1.2 x 1.35 the eye's radii over each eye and a lash
    // line at eye_y + 0.3 eye_ry, at least one pixel thick.
    const PortraitLayout& l = portrait.layout;
    const double ry = std::max(l.eye_ry * 1.35, l.eye_ry * 0.3 + std::max(1.0, l.eye_ry * 0.16));
    return Box(l.head_x, l.eye_y, l.eye_dx + l.eye_rx * 1.2, ry, portrait.base.width,
               portrait.base.height);
}

std::vector<double> MouthOpenness(const media::AudioBuffer& speech, int fps, int frames) {
    std::vector<double> rms(static_cast<std::size_t>(std::max(0, frames)), 0.0);
    const int channels = std::max(1, speech.channels);
    const std::int64_t total = speech.frames();
    for (int k = 0; k < frames; ++k) {
        const std::int64_t begin = std::int64_t{k} * speech.sample_rate / fps;
        const std::int64_t end = std::min(total, std::int64_t{k + 1} * speech.sample_rate / fps);
        double sum = 0;
        std::int64_t n = 0;
        for (std::int64_t i = begin; i < end; ++i, ++n) {
            double mixed = 0;
            for (int c = 0; c < channels; ++c) mixed += speech.samples[i * channels + c];
            mixed /= channels;
            sum += mixed * mixed;
        }
        rms[k] = n > 0 ? std::sqrt(sum / n) : 0.0;
    }
    constexpr double kGate = 0.004;  // -48 dBFS
    std::vector<double> voiced;
    for (const double r : rms) {
        if (r > kGate) voiced.push_back(r);
    }
    double reference = 0.02;
    if (!voiced.empty()) {
        std::sort(voiced.begin(), voiced.end());
        reference = std::max(reference, voiced[voiced.size() * 95 / 100]);
    }
    std::vector<double> out(rms.size(), 0.0);
    double level = 0;
    for (std::size_t k = 0; k < rms.size(); ++k) {
        double target = 0;
        if (rms[k] > kGate) {
            target = std::pow(std::clamp((rms[k] / reference - 0.05) / 0.95, 0.0, 1.0), 0.7);
        }
        level += (target > level ? 0.7 : 0.45) * (target - level);
        out[k] = level < 0.02 ? 0.0 : level;
    }
    return out;
}

bool BlinkAt(std::uint64_t seed, int frame, int fps) {
    std::uint64_t state = Mix64(seed ^ 0xb11dull);
    double start = 1.0 + static_cast<double>(state % 2000) / 1000.0;
    const double t = static_cast<double>(frame) / fps;
    while (start <= t) {
        const int first = static_cast<int>(std::lround(start * fps));
        if (frame >= first && frame < first + 3) return true;
        state = Mix64(state);
        start += 2.5 + static_cast<double>(state % 3000) / 1000.0;
    }
    return false;
}

namespace {

struct AvatarVoiceEntry {
    const char* id;
    const char* language;
    const char* variant;
    int pitch;
    int rate;
};

// The 30 avatar preset voices of common.json's avatarVoiceId, in that order.
constexpr std::array<AvatarVoiceEntry, 30> kAvatarVoices = {{
    {"victoria", "en", "f2", 52, 165},  {"vincent", "en", "m3", 40, 160},
    {"clara", "en-us", "f1", 58, 175},  {"drew", "en-us", "m1", 45, 180},
    {"skye", "en-us", "f4", 66, 185},   {"max", "en-us", "m2", 50, 190},
    {"morgan", "en-us", "f5", 42, 170}, {"felix", "en", "m4", 55, 175},
    {"mia", "en-us", "f3", 62, 180},    {"marcus", "en-us", "m7", 32, 160},
    {"summer", "en-us", "f2", 68, 185}, {"ruby", "en", "f4", 60, 175},
    {"aurora", "en", "f1", 64, 160},    {"jasper", "en", "m5", 46, 170},
    {"leo", "en-us", "m6", 52, 185},    {"adrian", "en", "m2", 42, 165},
    {"nina", "en-us", "f5", 56, 175},   {"emma", "en", "f3", 58, 170},
    {"blake", "en-us", "m3", 38, 175},  {"david", "en-us", "m1", 36, 165},
    {"maya", "en-us", "f4", 54, 180},   {"nathan", "en-us", "m4", 44, 175},
    {"sam", "en-us", "m5", 55, 180},    {"georgia", "en", "f2", 48, 160},
    {"petra", "en", "f1", 46, 165},     {"adam", "en-us", "m6", 40, 170},
    {"zach", "en-us", "m7", 48, 195},   {"violet", "en-us", "f3", 70, 175},
    {"roman", "en", "m4", 34, 155},     {"luna", "en-us", "f5", 74, 170},
}};

}  // namespace

media::SpeechParams AvatarVoice(std::string_view voice_id) {
    const AvatarVoiceEntry* entry = nullptr;
    for (const auto& v : kAvatarVoices) {
        if (voice_id == v.id) entry = &v;
    }
    if (entry == nullptr) entry = &kAvatarVoices[HashString(voice_id) % kAvatarVoices.size()];
    media::SpeechParams params;
    params.voice = std::string(entry->language) + "+" + entry->variant;
    if (!media::SpeechVoiceExists(params.voice)) params.voice = entry->language;
    params.pitch = entry->pitch;
    params.rate_wpm = entry->rate;
    return params;
}

std::string DefaultAvatarVoice(std::string_view avatar_id) {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kDefaults = {{
        {"game-character", "skye"},
        {"music-superstar", "summer"},
        {"game-character-man", "marcus"},
        {"cat-character", "luna"},
        {"influencer", "mia"},
        {"tennis-coach", "max"},
        {"human-resource", "clara"},
        {"fashion-designer", "victoria"},
        {"cooking-teacher", "vincent"},
    }};
    for (const auto& [avatar, voice] : kDefaults) {
        if (avatar == avatar_id) return std::string(voice);
    }
    return kAvatarVoices[Mix64(HashString(avatar_id)) % kAvatarVoices.size()].id;
}

}  // namespace genhost::providers::edit
