// genhost/providers/live_avatar.hpp
//
// Provides the builtin avatar_videos avatar (src/providers/edit_avatar.hpp) live, piece by
// piece, for realtime avatar sessions:
// - LiveAvatar: an avatar's voice (Speak: a sentence at a time, PCM16 mono 16 kHz) and picture
//   (Frame: one JPEG video frame with the mouth open by a given amount and the eyes open or
//   closed; BlinkAt: the avatar's own blinking);
// - Mouth: the mouth opening of each video frame from the speech samples as they are played.
//
// The avatar is resolved as avatar_videos resolves it: a preset avatar id paints the procedural
// portrait of that id; a custom avatar's processed picture (its `portrait`) is fitted into the
// frame; the voice is a preset voice's espeak-ng settings (edit::AvatarVoice) or a custom voice's
// profile (media::SpeakWithProfile), so the same text sounds the same in both.
//
// Cost (256x256, quality 70; tests/unit/providers_live_avatar_test.cpp prints it): Frame
// redraws only the mouth and eye boxes on a working copy of the portrait (edit::DrawFeatures),
// converts only those boxes to YCbCr and encodes with one MJPEG encoder kept open
// (media::JpegEncoder): about 0.3 ms in the sanitized debug build. Openness is quantised to 1/64
// (0.15 px of mouth at 256x256), so there are 130 distinct frames; each is kept once encoded
// (about 4.5 KB each at 256x256; at most 4 MB per avatar, larger frames are not all kept), after
// which Frame is a copy of the bytes. The
// constructor costs a few milliseconds (the portrait, the encoder). Speak forks an espeak-ng
// child per call (media::SynthesizeSpeech): about 20 ms for a 10-word sentence with a preset
// voice, 150-250 ms with a custom profile (its pitch shift and filters run in FFmpeg).
//
// Thread safety: every method may be called from any thread at once. Frame and BlinkAt take a
// per-avatar mutex (their buffers and encoder are shared); Speak touches no shared state, and
// concurrent Speak calls (of one avatar or many) synthesise in parallel, each in its own forked
// espeak-ng process (media/speech.cpp locks only around fork(), though audio.hpp calls the
// calls serialised). A Mouth belongs to one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "genhost/media/video.hpp"

namespace genhost::providers {

// LiveAvatarSpec says which avatar to bring to life and how large its frames are.
struct LiveAvatarSpec {
    // A preset avatar id ("tennis-coach"), or a custom avatar's id (it seeds the procedural
    // portrait when there is no picture, the blink pattern and the default voice).
    std::string avatar_key;
    // Custom avatars: the processed picture (JPEG or any picture libavcodec decodes, e.g. the
    // bytes of the avatar's `portrait` data URI); "" for presets (the procedural portrait).
    std::string portrait_jpeg;
    // The voice as avatar_videos takes it: {type: "service-live-preset", presetId} (any type
    // other than "custom" reads presetId), or {type: "custom", id, profile?} (profile:
    // media::ProfileToJson's JSON; a custom voice without one speaks with the default voice).
    // null: the avatar's default voice (edit::DefaultAvatarVoice of avatar_key).
    nlohmann::json voice;
    int width = 256, height = 256;  // video frame size, 16..1920 each
    int jpeg_quality = 70;          // 1..100, libjpeg's scale (media::JpegEncoder)
};

class LiveAvatar {
  public:
    // kSampleRate is the rate of Speak's output and of what Mouth consumes.
    static constexpr int kSampleRate = 16000;

    // LiveAvatar paints the portrait, opens the JPEG encoder and reads the voice. Throws
    // std::invalid_argument on a bad spec: an empty avatar_key, a size or quality out of range,
    // an undecodable portrait, a voice that is not an object or null, or a custom voice profile
    // media::ProfileFromJson rejects. Blocking (decodes the picture, asks espeak-ng about the
    // voice): call it on a worker thread.
    explicit LiveAvatar(const LiveAvatarSpec& spec);
    ~LiveAvatar();
    LiveAvatar(const LiveAvatar&) = delete;
    LiveAvatar& operator=(const LiveAvatar&) = delete;

    // Speak synthesises `text` in the avatar's voice: PCM16 mono at kSampleRate, as long as
    // espeak-ng speaks it (no padding). Empty text gives no samples. `keep_going` (optional) is
    // asked about every 50 ms; when it returns false, Speak returns no samples promptly.
    // Blocking; throws media::MediaError when espeak-ng or FFmpeg fail.
    std::vector<std::int16_t> Speak(std::string_view text,
                                    const std::function<bool()>& keep_going = {}) const;

    // Frame renders one video frame as a JPEG file of width() x height(): the portrait with the
    // mouth open by `openness` (0 closed .. 1 wide, clamped, quantised to 1/64) and the eyes
    // closed when `blink` (a photo portrait's eyes stay as they are).
    std::string Frame(double openness, bool blink) const;
    // FrameRgb draws the same frame as Frame, as pixels into `out` (a recording re-renders the
    // frames it sent). Touches no shared state.
    void FrameRgb(double openness, bool blink, media::RgbImage& out) const;

    // BlinkAt reports whether the eyes are closed at video frame `frame` (from 0) at `fps`: a
    // 3-frame blink every 2.5 to 5.5 s, the pattern fixed by avatar_key (edit::BlinkAt with seed
    // HashString(avatar_key); avatar_videos also mixes in the task's seed). Cheap for frames
    // asked in increasing order (it keeps its place); false for a negative frame or fps.
    bool BlinkAt(std::int64_t frame, int fps) const;

    int width() const;
    int height() const;
    // photo is true when the portrait is the custom avatar's picture.
    bool photo() const;
    // voice_description names the voice: "preset:<id>" or "custom:<id>".
    const std::string& voice_description() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Mouth turns speech into mouth openness frame by frame as it is played: streaming and stateful,
// close to what avatar_videos' MouthOpenness gives for a whole buffer. Each frame's RMS is gated
// below -48 dBFS and taken relative to a running estimate of the speech's 95th-percentile
// frame level (MouthOpenness uses the whole buffer's; the estimate starts at 0.2, near the 0.23
// of espeak-ng's speech, and settles within a few seconds of other speech), then followed with
// the same fast attack (70% of the way per frame) and slower release (45%).
class Mouth {
  public:
    // fps 1..120; throws std::invalid_argument otherwise.
    explicit Mouth(int fps);

    // Next is the openness 0..1 of the next frame from its samples (kSampleRate / fps of them,
    // PCM16 mono at LiveAvatar::kSampleRate); an empty span is a silent frame.
    double Next(std::span<const std::int16_t> samples_of_one_frame);

    // Reset forgets the level (a new conversation); the loudness estimate is kept.
    void Reset();

    int fps() const { return fps_; }
    // samples_per_frame is kSampleRate / fps, rounded down.
    int samples_per_frame() const { return LiveAvatar::kSampleRate / fps_; }

  private:
    int fps_;
    double reference_;  // the running 95th-percentile RMS of voiced frames
    double level_ = 0;
};

}  // namespace genhost::providers
