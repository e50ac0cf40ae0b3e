// LiveAvatar and Mouth: the avatar_videos avatar frame by frame; see live_avatar.hpp.
#include "genhost/providers/live_avatar.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "edit_avatar.hpp"
#include "edit_filters.hpp"
#include "genhost/media/audio.hpp"
#include "genhost/media/jpeg_encoder.hpp"
#include "genhost/media/video.hpp"
#include "genhost/media/voice_profile.hpp"

namespace genhost::providers {
namespace {

constexpr int kMinSide = 16;
constexpr int kMaxSide = 1920;
// A custom avatar's picture is decoded no larger than this (as avatar_videos decodes it).
constexpr int kMaxPictureSide = 2048;
// Frame quantises openness to steps of 1/kOpennessSteps.
constexpr int kOpennessSteps = 64;
constexpr std::size_t kFrameKeys = std::size_t{2} * (kOpennessSteps + 1);
// Encoded frames are kept up to this many bytes per avatar (all 130 at 256x256 take ~0.6 MB).
constexpr std::size_t kMaxCachedBytes = std::size_t{4} << 20;

// DecodePicture decodes picture bytes with media::LoadImageRgb (the decoder avatar_videos uses,
// so the live portrait matches the rendered one) through a private temporary file.
media::RgbImage DecodePicture(const std::string& bytes) {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
    if (ec) dir = "/tmp";
    std::string name = (dir / "genhost-live-avatar-XXXXXX").string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0) throw media::MediaError("cannot create a temporary file for the portrait");
    struct Remove {
        const std::string& path;
        ~Remove() { ::unlink(path.c_str()); }
    } remove{name};
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n <= 0) {
            ::close(fd);
            throw media::MediaError("cannot write the portrait to a temporary file");
        }
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return media::LoadImageRgb(name, kMaxPictureSide, kMaxPictureSide);
}

void Restore(const media::RgbImage& base, const edit::PixelBox& box, media::RgbImage& frame) {
    if (box.empty()) return;
    const std::size_t bytes = std::size_t{3} * (box.x1 - box.x0);
    for (int y = box.y0; y < box.y1; ++y) {
        std::copy_n(base.Row(y) + std::size_t{3} * box.x0, bytes,
                    frame.Row(y) + std::size_t{3} * box.x0);
    }
}

media::PixelRect Rect(const edit::PixelBox& box) {
    if (box.empty()) return {};
    return {box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0};
}

}  // namespace

struct LiveAvatar::Impl {
    std::string avatar_key;
    std::uint64_t seed = 0;
    // The voice: a profile for custom voices, else espeak-ng settings.
    std::optional<media::VoiceProfile> profile;
    media::SpeechParams params;
    std::string voice_description;

    edit::Portrait portrait;
    edit::PixelBox mouth_box, eyes_box;
    std::array<media::PixelRect, 2> changed;

    // Under `mu`: the working frame (the base outside the boxes), the encoder, the encoded
    // frames by (openness step, blink), the blink cursor.
    mutable std::mutex mu;
    mutable media::RgbImage work;
    mutable std::unique_ptr<media::JpegEncoder> encoder;
    mutable std::array<std::string, kFrameKeys> frames;
    mutable std::size_t cached_bytes = 0;

    // The blink cursor: the first blink (edit::BlinkAt's sequence: state and start time) that
    // does not end before frame `from` at `fps`.
    struct Cursor {
        int fps = 0;
        std::int64_t from = 0;
        std::uint64_t state = 0;
        double start = 0;
    };
    mutable Cursor cursor;

    void ResetCursor(int fps) const {
        // As edit::BlinkAt starts.
        cursor.fps = fps;
        cursor.from = 0;
        cursor.state = edit::Mix64(seed ^ 0xb11dull);
        cursor.start = 1.0 + static_cast<double>(cursor.state % 2000) / 1000.0;
    }
};

LiveAvatar::LiveAvatar(const LiveAvatarSpec& spec) : impl_(std::make_unique<Impl>()) {
    Impl& s = *impl_;
    if (spec.avatar_key.empty()) throw std::invalid_argument("avatar_key is empty");
    if (spec.width < kMinSide || spec.width > kMaxSide || spec.height < kMinSide ||
        spec.height > kMaxSide) {
        throw std::invalid_argument("frame size " + std::to_string(spec.width) + "x" +
                                    std::to_string(spec.height) + " is outside 16..1920 per side");
    }
    if (spec.jpeg_quality < 1 || spec.jpeg_quality > 100) {
        throw std::invalid_argument("jpeg_quality " + std::to_string(spec.jpeg_quality) +
                                    " is outside 1..100");
    }
    s.avatar_key = spec.avatar_key;
    s.seed = edit::HashString(spec.avatar_key);

    // The voice, chosen as avatar_videos chooses it.
    std::string voice_id = edit::DefaultAvatarVoice(spec.avatar_key);
    std::string custom_id;
    if (!spec.voice.is_null()) {
        if (!spec.voice.is_object()) {
            throw std::invalid_argument("voice must be an object or null");
        }
        try {
            if (spec.voice.value("type", "") == "custom") {
                if (spec.voice.contains("profile")) {
                    s.profile = media::ProfileFromJson(spec.voice.at("profile"));
                    custom_id = spec.voice.value("id", "");
                }
            } else {
                voice_id = spec.voice.value("presetId", voice_id);
            }
        } catch (const nlohmann::json::exception& e) {
            throw std::invalid_argument(std::string("voice: ") + e.what());
        }
    }
    if (s.profile) {
        s.voice_description = "custom:" + custom_id;
    } else {
        s.params = edit::AvatarVoice(voice_id);
        s.voice_description = "preset:" + voice_id;
    }

    // The portrait.
    if (!spec.portrait_jpeg.empty()) {
        media::RgbImage picture;
        try {
            picture = DecodePicture(spec.portrait_jpeg);
        } catch (const media::MediaError& e) {
            throw std::invalid_argument(std::string("the portrait is not a decodable picture: ") +
                                        e.what());
        }
        s.portrait = edit::PortraitFromPicture(picture, spec.width, spec.height);
    } else {
        s.portrait = edit::RenderPortrait(spec.avatar_key, spec.width, spec.height);
    }
    s.mouth_box = edit::MouthBox(s.portrait);
    s.eyes_box = edit::EyesBox(s.portrait);
    s.changed = {Rect(s.mouth_box), Rect(s.eyes_box)};
    s.work = s.portrait.base;
    s.encoder = std::make_unique<media::JpegEncoder>(spec.width, spec.height, spec.jpeg_quality);
}

LiveAvatar::~LiveAvatar() = default;

int LiveAvatar::width() const { return impl_->portrait.base.width; }
int LiveAvatar::height() const { return impl_->portrait.base.height; }
bool LiveAvatar::photo() const { return impl_->portrait.photo; }
const std::string& LiveAvatar::voice_description() const { return impl_->voice_description; }

std::vector<std::int16_t> LiveAvatar::Speak(std::string_view text,
                                            const std::function<bool()>& keep_going) const {
    const Impl& s = *impl_;
    if (text.empty()) return {};
    media::AudioBuffer spoken;
    if (s.profile) {
        spoken = media::SpeakWithProfile(*s.profile, text, keep_going);
    } else {
        media::SpeechParams params = s.params;
        params.text = std::string(text);
        spoken = media::SynthesizeSpeech(params, keep_going);
    }
    if (spoken.samples.empty() || (keep_going && !keep_going())) return {};
    const media::AudioBuffer audio = media::Resample(spoken, kSampleRate, 1);
    std::vector<std::int16_t> pcm(audio.samples.size());
    for (std::size_t i = 0; i < pcm.size(); ++i) {
        const float v = std::clamp(audio.samples[i], -1.0f, 1.0f);
        pcm[i] = static_cast<std::int16_t>(std::lround(v * 32767.0f));
    }
    return pcm;
}

std::string LiveAvatar::Frame(double openness, bool blink) const {
    const Impl& s = *impl_;
    const double clamped = std::isnan(openness) ? 0.0 : std::clamp(openness, 0.0, 1.0);
    const int step = static_cast<int>(std::lround(clamped * kOpennessSteps));
    const std::size_t key = std::size_t{2} * step + (blink ? 1 : 0);
    std::lock_guard lock(s.mu);
    std::string& cached = s.frames[key];
    if (!cached.empty()) return cached;
    // The working frame is the base outside the boxes; put the base back inside them, draw.
    Restore(s.portrait.base, s.mouth_box, s.work);
    Restore(s.portrait.base, s.eyes_box, s.work);
    edit::DrawFeatures(s.portrait, static_cast<double>(step) / kOpennessSteps, blink, s.work);
    std::string jpeg = s.encoder->Encode(s.work, s.changed);
    if (s.cached_bytes + jpeg.size() <= kMaxCachedBytes) {
        s.cached_bytes += jpeg.size();
        cached = jpeg;
    }
    return jpeg;
}

void LiveAvatar::FrameRgb(double openness, bool blink, media::RgbImage& out) const {
    const Impl& s = *impl_;
    const double clamped = std::isnan(openness) ? 0.0 : std::clamp(openness, 0.0, 1.0);
    const int step = static_cast<int>(std::lround(clamped * kOpennessSteps));
    edit::DrawFrame(s.portrait, static_cast<double>(step) / kOpennessSteps, blink, out);
}

bool LiveAvatar::BlinkAt(std::int64_t frame, int fps) const {
    if (fps <= 0 || frame < 0) return false;
    const Impl& s = *impl_;
    std::lock_guard lock(s.mu);
    Impl::Cursor& c = s.cursor;
    if (c.fps != fps || frame < c.from) s.ResetCursor(fps);
    // Skip the blinks that end before `frame` (edit::BlinkAt's loop passes them too).
    while (std::lround(c.start * fps) + 3 <= frame) {
        c.state = edit::Mix64(c.state);
        c.start += 2.5 + static_cast<double>(c.state % 3000) / 1000.0;
    }
    c.from = frame;
    // edit::BlinkAt's loop from the cursor on.
    std::uint64_t state = c.state;
    double start = c.start;
    const double t = static_cast<double>(frame) / fps;
    while (start <= t) {
        const std::int64_t first = std::lround(start * fps);
        if (frame >= first && frame < first + 3) return true;
        state = edit::Mix64(state);
        start += 2.5 + static_cast<double>(state % 3000) / 1000.0;
    }
    return false;
}

namespace {

// As edit::MouthOpenness.
constexpr double kGate = 0.004;  // -48 dBFS
constexpr double kMinReference = 0.02;
// The reference before any speech: about the 95th-percentile frame RMS of espeak-ng's speech.
constexpr double kInitialReference = 0.2;
// The reference moves by exp(+0.95 k) on a voiced frame above it and exp(-0.05 k) on one below,
// which settles where 5% of the voiced frames are above it.
constexpr double kQuantileStep = 0.2;

}  // namespace

Mouth::Mouth(int fps) : fps_(fps), reference_(kInitialReference) {
    if (fps < 1 || fps > 120) {
        throw std::invalid_argument("Mouth: fps " + std::to_string(fps) + " is outside 1..120");
    }
}

void Mouth::Reset() { level_ = 0; }

double Mouth::Next(std::span<const std::int16_t> samples) {
    double rms = 0;
    if (!samples.empty()) {
        double sum = 0;
        for (const std::int16_t v : samples) {
            const double x = v / 32768.0;
            sum += x * x;
        }
        rms = std::sqrt(sum / static_cast<double>(samples.size()));
    }
    double target = 0;
    if (rms > kGate) {
        reference_ *= std::exp(rms > reference_ ? 0.95 * kQuantileStep : -0.05 * kQuantileStep);
        reference_ = std::max(reference_, kMinReference);
        target = std::pow(std::clamp((rms / reference_ - 0.05) / 0.95, 0.0, 1.0), 0.7);
    }
    level_ += (target > level_ ? 0.7 : 0.45) * (target - level_);
    return level_ < 0.02 ? 0.0 : level_;
}

}  // namespace genhost::providers
