// src/providers/edit_avatar.hpp (private to src/providers)
//
// Provides the pieces of the builtin avatar_videos pipeline: a deterministic procedural
// portrait for an avatar id (the 9 preset avatars, or a custom avatar's id), its mouth and eyes
// redrawn per frame, the mouth opening derived from the loudness envelope of the speech, and
// the espeak-ng voice of each of the 30 avatar preset voices.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "genhost/media/audio.hpp"
#include "genhost/media/video.hpp"

namespace genhost::providers::edit {

// PortraitLayout is where the face parts of a portrait of width x height are (pixels).
struct PortraitLayout {
    double head_x = 0, head_y = 0, head_rx = 0, head_ry = 0;
    double mouth_x = 0, mouth_y = 0, mouth_half_width = 0, mouth_max_open = 0;
    double eye_dx = 0, eye_y = 0, eye_rx = 0, eye_ry = 0;
};

// Layout is the layout every portrait of width x height uses.
PortraitLayout Layout(int width, int height);

// Portrait is an avatar's picture: a base frame (mouth closed, eyes open) and its palette.
struct Portrait {
    media::RgbImage base;
    PortraitLayout layout;
    std::uint8_t skin[3] = {0, 0, 0};
    std::uint8_t lips[3] = {0, 0, 0};
    bool cat = false;
    bool photo = false;  // a custom avatar's picture: no eyes are drawn over it
};

// RenderPortrait paints the portrait of avatar `id` (a preset id or a custom avatar id) at
// width x height; the same id always gives the same picture.
Portrait RenderPortrait(std::string_view id, int width, int height);

// PortraitFromPicture makes the portrait of a custom avatar from its processed picture: the
// picture fitted into width x height (Letterbox), the mouth assumed where a centred
// head-and-shoulders picture has it (half way across, two thirds down; faces are not detected),
// its lip colour sampled there.
Portrait PortraitFromPicture(const media::RgbImage& picture, int width, int height);

// DrawFrame sets `frame` to the portrait with the mouth open by `openness` (0 closed .. 1 wide)
// and the eyes closed when `blink`.
void DrawFrame(const Portrait& portrait, double openness, bool blink, media::RgbImage& frame);

// PixelBox is the pixels [x0, x1) x [y0, y1) of a picture (empty when x0 >= x1 or y0 >= y1).
struct PixelBox {
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    bool empty() const { return x0 >= x1 || y0 >= y1; }
};

// MouthBox and EyesBox bound what DrawFrame changes in the portrait's base: the mouth at any
// openness, and both closed eyes (empty for a photo portrait, whose eyes are not drawn); clipped
// to the picture. Outside them a frame is the base.
PixelBox MouthBox(const Portrait& portrait);
PixelBox EyesBox(const Portrait& portrait);

// DrawFeatures is DrawFrame on a `frame` (of the portrait's size) that already equals the
// portrait's base inside MouthBox and EyesBox: it draws only the open mouth and the closed eyes,
// so a live renderer can restore those boxes from the base instead of copying the whole picture.
// DrawFrame(p, o, b, f) is `f = p.base; DrawFeatures(p, o, b, f)`.
void DrawFeatures(const Portrait& portrait, double openness, bool blink, media::RgbImage& frame);

// MouthOpenness is one value per video frame (fps, `frames` of them) from the loudness of
// `speech` (any rate, interleaved channels mixed): per-frame RMS relative to the speech's
// 95th-percentile level, gated below -48 dBFS, with a fast attack and slower release.
std::vector<double> MouthOpenness(const media::AudioBuffer& speech, int fps, int frames);

// BlinkAt reports whether the eyes are closed at frame `frame` (a 3-frame blink every 2.5 to
// 5.5 s, the pattern derived from `seed`).
bool BlinkAt(std::uint64_t seed, int frame, int fps);

// AvatarVoice is the espeak-ng speech settings of avatar preset voice `voice_id` (one of the
// 30); an unknown id (a custom voice id) is mapped onto one of them by hash.
media::SpeechParams AvatarVoice(std::string_view voice_id);

// DefaultAvatarVoice is the voice of a preset avatar (its id); a custom avatar id is mapped
// onto one of the 30 preset voices by hash.
std::string DefaultAvatarVoice(std::string_view avatar_id);

}  // namespace genhost::providers::edit
