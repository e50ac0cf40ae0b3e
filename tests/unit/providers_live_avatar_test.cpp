// Tests for LiveAvatar and Mouth (src/providers/live_avatar.cpp): the avatar_videos avatar live.
// Speech: the preset voice is avatar_videos' (the same espeak-ng settings, resampled to 16 kHz),
// a custom profile moves the pitch. Frames: decodable JPEGs of the requested size, the open mouth
// and the closed eyes change only their own region, a custom picture is used, the partial
// YCbCr conversion gives the same bytes as a full one. Mouth: silence, onset, release, close to
// the whole-buffer MouthOpenness. BlinkAt: avatar_videos' pattern. Timings are printed as
// "[timing]" lines.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../src/providers/edit_avatar.hpp"
#include "../../src/providers/edit_filters.hpp"
#include "genhost/media/audio.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/jpeg_encoder.hpp"
#include "genhost/media/video.hpp"
#include "genhost/media/voice_profile.hpp"
#include "genhost/providers/live_avatar.hpp"

namespace genhost::providers {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Ten words.
constexpr const char* kSentence =
    "Good morning, let us practise your backhand swing together today.";

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Decode decodes picture bytes with the media module (through a temporary file).
media::RgbImage Decode(const std::string& bytes) {
    static std::atomic<int> counter{0};
    const fs::path path =
        fs::temp_directory_path() / ("live_avatar_test_" + std::to_string(::getpid()) + "_" +
                                     std::to_string(counter++) + ".jpg");
    {
        std::ofstream out(path, std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    media::RgbImage image = media::LoadImageRgb(path.string());
    fs::remove(path);
    return image;
}

media::AudioBuffer ToBuffer(const std::vector<std::int16_t>& pcm) {
    media::AudioBuffer audio;
    audio.sample_rate = LiveAvatar::kSampleRate;
    audio.channels = 1;
    audio.samples.reserve(pcm.size());
    for (const std::int16_t v : pcm) audio.samples.push_back(v / 32768.0f);
    return audio;
}

// What avatar_videos speaks for `params`, at 16 kHz PCM16 as Speak delivers it.
std::vector<std::int16_t> Expected(media::SpeechParams params, const std::string& text) {
    params.text = text;
    const media::AudioBuffer audio =
        media::Resample(media::SynthesizeSpeech(params), LiveAvatar::kSampleRate, 1);
    std::vector<std::int16_t> pcm;
    for (const float v : audio.samples) {
        pcm.push_back(static_cast<std::int16_t>(std::lround(std::clamp(v, -1.0f, 1.0f) * 32767)));
    }
    return pcm;
}

// Spec and WithPortrait make specs (designated initialisers that skip members warn with GCC).
LiveAvatarSpec Spec(const std::string& key, json voice = nullptr, int width = 256, int height = 256,
                    int quality = 70) {
    LiveAvatarSpec spec;
    spec.avatar_key = key;
    spec.voice = std::move(voice);
    spec.width = width;
    spec.height = height;
    spec.jpeg_quality = quality;
    return spec;
}

LiveAvatarSpec WithPortrait(const std::string& key, std::string picture) {
    LiveAvatarSpec spec = Spec(key);
    spec.portrait_jpeg = std::move(picture);
    return spec;
}

double Semitones(double f1, double f0) { return 12 * std::log2(f1 / f0); }

// MaxDiff is the largest channel difference between a and b inside (or outside) a box.
int MaxDiff(const media::RgbImage& a, const media::RgbImage& b, const edit::PixelBox& box,
            bool inside) {
    int worst = 0;
    for (int y = 0; y < a.height; ++y) {
        for (int x = 0; x < a.width; ++x) {
            const bool in = x >= box.x0 && x < box.x1 && y >= box.y0 && y < box.y1;
            if (in != inside) continue;
            for (int c = 0; c < 3; ++c) {
                worst = std::max(worst, std::abs(a.Row(y)[3 * x + c] - b.Row(y)[3 * x + c]));
            }
        }
    }
    return worst;
}

double MeanAbsDiff(const media::RgbImage& a, const media::RgbImage& b) {
    double sum = 0;
    for (std::size_t i = 0; i < a.pixels.size(); ++i) sum += std::abs(a.pixels[i] - b.pixels[i]);
    return sum / static_cast<double>(a.pixels.size());
}

// Mcu widens a box to the 16x16 blocks (4:2:0 MCUs) it touches.
edit::PixelBox Mcu(const edit::PixelBox& b) {
    return {b.x0 / 16 * 16, b.y0 / 16 * 16, (b.x1 + 15) / 16 * 16, (b.y1 + 15) / 16 * 16};
}

TEST(LiveAvatar, PresetSpeaksWithAvatarVideosVoice) {
    const LiveAvatar avatar(Spec("tennis-coach"));
    EXPECT_EQ(avatar.voice_description(), "preset:max");
    const auto start = Clock::now();
    const std::vector<std::int16_t> pcm = avatar.Speak(kSentence);
    const double ms = Ms(Clock::now() - start);
    const double seconds = static_cast<double>(pcm.size()) / LiveAvatar::kSampleRate;
    std::printf("[timing] Speak (10 words, preset): %.1f ms for %.2f s of speech\n", ms, seconds);
    // Ten words at 190 words per minute: about 3 s.
    EXPECT_GT(seconds, 1.5);
    EXPECT_LT(seconds, 6.0);
    EXPECT_GT(media::RmsLevel(ToBuffer(pcm)), 0.02);
    // avatar_videos: AvatarVoice(DefaultAvatarVoice(id)) spoken by espeak-ng.
    EXPECT_EQ(pcm,
              Expected(edit::AvatarVoice(edit::DefaultAvatarVoice("tennis-coach")), kSentence));

    // A preset voice chosen for the avatar.
    const LiveAvatar luna(
        Spec("tennis-coach", {{"type", "service-live-preset"}, {"presetId", "luna"}}));
    EXPECT_EQ(luna.voice_description(), "preset:luna");
    const std::vector<std::int16_t> luna_pcm = luna.Speak("Hello there.");
    EXPECT_EQ(luna_pcm, Expected(edit::AvatarVoice("luna"), "Hello there."));
    EXPECT_NE(luna_pcm, avatar.Speak("Hello there."));

    // Nothing to say, or told to stop.
    EXPECT_TRUE(avatar.Speak("").empty());
    EXPECT_TRUE(avatar.Speak(kSentence, [] { return false; }).empty());
}

TEST(LiveAvatar, ConcurrentSpeakCallsAgree) {
    const LiveAvatar avatar(Spec("influencer"));
    const std::vector<std::int16_t> alone = avatar.Speak(kSentence);
    constexpr int kThreads = 4;
    std::vector<std::vector<std::int16_t>> out(kThreads);
    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&, i] { out[i] = avatar.Speak(kSentence); });
    }
    for (auto& t : threads) t.join();
    std::printf("[timing] Speak (10 words) x %d threads at once: %.1f ms wall\n", kThreads,
                Ms(Clock::now() - start));
    for (const auto& pcm : out) EXPECT_EQ(pcm, alone);
}

TEST(LiveAvatar, CustomVoiceProfileMovesThePitch) {
    const LiveAvatar preset(Spec("tennis-coach"));
    media::VoiceProfile profile;
    profile.base_voice = "en-us+m2";  // max's variant: only the pitch differs much
    profile.rate_wpm = 190;
    profile.pitch_shift_semitones = 7;
    const LiveAvatar custom(
        Spec("tennis-coach",
             {{"type", "custom"}, {"id", "voice_1"}, {"profile", media::ProfileToJson(profile)}}));
    EXPECT_EQ(custom.voice_description(), "custom:voice_1");
    const auto start = Clock::now();
    const std::vector<std::int16_t> pcm = custom.Speak(kSentence);
    std::printf("[timing] Speak (10 words, custom profile, +7 semitones): %.1f ms\n",
                Ms(Clock::now() - start));
    ASSERT_FALSE(pcm.empty());
    const double f_custom = media::EstimatePitch(ToBuffer(pcm));
    const double f_preset = media::EstimatePitch(ToBuffer(preset.Speak(kSentence)));
    std::printf("[pitch] preset max %.1f Hz, custom %.1f Hz (target %.1f Hz)\n", f_preset, f_custom,
                media::ProfileTargetF0(profile));
    EXPECT_NEAR(Semitones(f_custom, f_preset), 7, 2);
    EXPECT_NEAR(Semitones(f_custom, media::ProfileTargetF0(profile)), 0, 2);

    // A custom voice without its profile speaks with the avatar's default voice.
    const LiveAvatar no_profile(Spec("tennis-coach", {{"type", "custom"}, {"id", "voice_gone"}}));
    EXPECT_EQ(no_profile.voice_description(), "preset:max");
}

TEST(LiveAvatar, RejectsBadSpecs) {
    EXPECT_THROW(LiveAvatar(Spec("")), std::invalid_argument);
    EXPECT_THROW(LiveAvatar(Spec("influencer", nullptr, 8, 256)), std::invalid_argument);
    EXPECT_THROW(LiveAvatar(Spec("influencer", nullptr, 256, 256, 0)), std::invalid_argument);
    EXPECT_THROW(LiveAvatar(WithPortrait("av_1", "not a picture")), std::invalid_argument);
    EXPECT_THROW(LiveAvatar(Spec("influencer", "luna")), std::invalid_argument);
    EXPECT_THROW(
        LiveAvatar(Spec("influencer", {{"type", "custom"}, {"profile", {{"version", 9}}}})),
        std::invalid_argument);
    EXPECT_THROW(Mouth(0), std::invalid_argument);
}

TEST(LiveAvatar, FramesAreJpegsWhoseMouthAndEyesAloneMove) {
    const LiveAvatar avatar(Spec("tennis-coach"));
    EXPECT_FALSE(avatar.photo());
    const std::string closed_jpeg = avatar.Frame(0.0, false);
    const media::MediaInfo info = media::ProbeMedia(closed_jpeg);
    EXPECT_EQ(info.video_codec, "mjpeg");
    EXPECT_EQ(info.width, 256);
    EXPECT_EQ(info.height, 256);
    const media::RgbImage closed = Decode(closed_jpeg);
    const media::RgbImage open = Decode(avatar.Frame(1.0, false));
    const media::RgbImage blink = Decode(avatar.Frame(0.0, true));
    ASSERT_EQ(closed.width, 256);
    ASSERT_EQ(closed.height, 256);

    // The picture is avatar_videos' portrait.
    const edit::Portrait portrait = edit::RenderPortrait("tennis-coach", 256, 256);
    EXPECT_LT(MeanAbsDiff(closed, portrait.base), 2.5);
    const edit::PixelBox mouth = edit::MouthBox(portrait);
    const edit::PixelBox eyes = edit::EyesBox(portrait);
    ASSERT_FALSE(mouth.empty());
    ASSERT_FALSE(eyes.empty());
    // JPEG blocks are coded independently: outside the 16x16 blocks the change touches, the
    // decoded pictures are identical.
    EXPECT_GT(MaxDiff(closed, open, mouth, true), 100);
    EXPECT_EQ(MaxDiff(closed, open, Mcu(mouth), false), 0);
    EXPECT_GT(MaxDiff(closed, blink, eyes, true), 100);
    EXPECT_EQ(MaxDiff(closed, blink, Mcu(eyes), false), 0);
    // Asking again gives the same bytes; openness is clamped.
    EXPECT_EQ(avatar.Frame(0.0, false), closed_jpeg);
    EXPECT_EQ(avatar.Frame(-3.0, false), closed_jpeg);
    EXPECT_EQ(avatar.Frame(7.0, false), avatar.Frame(1.0, false));
}

TEST(LiveAvatar, MouthAndEyesBoxesBoundWhatAFrameChanges) {
    media::RgbImage picture(300, 400);
    for (std::size_t i = 0; i < picture.pixels.size(); ++i) picture.pixels[i] = i * 13 % 256;
    std::vector<edit::Portrait> portraits;
    for (const char* id : {"influencer", "cat-character", "tennis-coach", "av_custom_3"}) {
        for (const auto& [w, h] : {std::pair{256, 256}, {160, 90}, {480, 270}, {90, 160}}) {
            portraits.push_back(edit::RenderPortrait(id, w, h));
        }
    }
    portraits.push_back(edit::PortraitFromPicture(picture, 256, 256));
    portraits.push_back(edit::PortraitFromPicture(picture, 640, 360));
    for (const edit::Portrait& p : portraits) {
        const edit::PixelBox mouth = edit::MouthBox(p);
        const edit::PixelBox eyes = edit::EyesBox(p);
        EXPECT_EQ(eyes.empty(), p.photo);
        for (const double openness : {0.0, 0.02, 0.3, 0.7, 1.0}) {
            for (const bool blink : {false, true}) {
                media::RgbImage frame;
                edit::DrawFrame(p, openness, blink, frame);
                int outside = 0;
                for (int y = 0; y < frame.height; ++y) {
                    for (int x = 0; x < frame.width; ++x) {
                        const auto in = [&](const edit::PixelBox& b) {
                            return x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1;
                        };
                        if (in(mouth) || in(eyes)) continue;
                        outside += std::memcmp(frame.Row(y) + 3 * x, p.base.Row(y) + 3 * x, 3) != 0;
                    }
                }
                EXPECT_EQ(outside, 0)
                    << p.base.width << "x" << p.base.height << " " << openness << " " << blink;
            }
        }
    }
}

TEST(LiveAvatar, PartialConversionEncodesAsAFullOne) {
    // Frames drawn out of order on the working copy (only the boxes converted again) are the
    // bytes a fresh encoder gives the whole drawn picture.
    const LiveAvatar avatar(Spec("cat-character", nullptr, 200, 150));
    const edit::Portrait portrait = edit::RenderPortrait("cat-character", 200, 150);
    for (const auto& [openness, blink] : std::vector<std::pair<double, bool>>{
             {0.5, false}, {1.0, true}, {0.0, false}, {0.25, true}, {0.75, false}, {0.0, true}}) {
        media::RgbImage drawn;
        edit::DrawFrame(portrait, openness, blink, drawn);
        media::JpegEncoder fresh(200, 150, 70);
        EXPECT_EQ(avatar.Frame(openness, blink), fresh.Encode(drawn)) << openness << " " << blink;
    }
}

TEST(LiveAvatar, CustomPortraitIsUsed) {
    // A 320x320 picture: a teal background, a skin-coloured face, dark hair.
    media::RgbImage picture(320, 320);
    for (int y = 0; y < 320; ++y) {
        for (int x = 0; x < 320; ++x) {
            const double dx = (x - 160) / 80.0, dy = (y - 150) / 110.0;
            const bool face = dx * dx + dy * dy < 1;
            const bool hair = face && y < 80;
            std::uint8_t* p = picture.Row(y) + 3 * x;
            p[0] = hair ? 50 : face ? 225 : 30;
            p[1] = hair ? 35 : face ? 180 : 140 + y / 8;
            p[2] = hair ? 25 : face ? 155 : 150;
        }
    }
    const std::string jpeg = media::EncodePicture(picture, media::ImageFormat::kJpeg);
    const LiveAvatar avatar(WithPortrait("av_custom_7", jpeg));
    EXPECT_TRUE(avatar.photo());
    const media::RgbImage frame = Decode(avatar.Frame(0.0, false));
    const media::RgbImage expected = media::Resize(Decode(jpeg), 256, 256);
    const auto mean = media::MeanColour(frame);
    const auto want = media::MeanColour(expected);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(mean[c], want[c], 0.02) << c;
    EXPECT_LT(MeanAbsDiff(frame, expected), 6);
    // Not the procedural portrait of that id.
    EXPECT_GT(MeanAbsDiff(frame, edit::RenderPortrait("av_custom_7", 256, 256).base), 20);
    // The mouth moves (two thirds down, centred); a picture's eyes are left alone.
    const media::RgbImage open = Decode(avatar.Frame(1.0, false));
    const edit::PixelBox mouth{118, 160, 138, 180};
    EXPECT_GT(MaxDiff(frame, open, mouth, true), 60);
    EXPECT_EQ(avatar.Frame(0.0, true), avatar.Frame(0.0, false));
}

TEST(LiveAvatar, BlinksAsAvatarVideos) {
    const LiveAvatar a(Spec("influencer"));
    const LiveAvatar b(Spec("influencer"));
    const LiveAvatar other(Spec("music-superstar"));
    const std::uint64_t seed = edit::HashString("influencer");
    constexpr int kFps = 15;
    int closed = 0, differs = 0;
    for (int f = 0; f < 60 * kFps; ++f) {
        const bool blink = a.BlinkAt(f, kFps);
        ASSERT_EQ(blink, edit::BlinkAt(seed, f, kFps)) << f;
        ASSERT_EQ(blink, b.BlinkAt(f, kFps)) << f;
        closed += blink ? 1 : 0;
        differs += blink != other.BlinkAt(f, kFps) ? 1 : 0;
    }
    // A 3-frame blink every 2.5 to 5.5 s: 11 to 24 in a minute.
    EXPECT_GE(closed, 3 * 11);
    EXPECT_LE(closed, 3 * 24);
    EXPECT_GT(differs, 0);
    // Asked out of order, at another rate, far into a session.
    for (const std::int64_t f : {500, 20, 899, 0, 100000, 3}) {
        EXPECT_EQ(a.BlinkAt(f, kFps), edit::BlinkAt(seed, static_cast<int>(f), kFps)) << f;
        EXPECT_EQ(a.BlinkAt(f, 24), edit::BlinkAt(seed, static_cast<int>(f), 24)) << f;
    }
}

TEST(Mouth, FollowsSpeechAsItIsPlayed) {
    const LiveAvatar avatar(Spec("human-resource"));
    const std::vector<std::int16_t> speech = avatar.Speak(kSentence);
    ASSERT_FALSE(speech.empty());
    constexpr int kFps = 15;
    constexpr int kRate = LiveAvatar::kSampleRate;
    // Half a second of silence, the sentence, a second of silence.
    std::vector<std::int16_t> stream(kRate / 2, 0);
    stream.insert(stream.end(), speech.begin(), speech.end());
    stream.insert(stream.end(), kRate, 0);
    const int frames = static_cast<int>(stream.size() * kFps / kRate);

    Mouth mouth(kFps);
    EXPECT_EQ(mouth.samples_per_frame(), kRate / kFps);
    std::vector<double> live;
    std::vector<double> rms;
    for (int k = 0; k < frames; ++k) {
        const std::size_t begin = std::size_t{static_cast<std::size_t>(k)} * kRate / kFps;
        const std::size_t end = std::size_t{static_cast<std::size_t>(k) + 1} * kRate / kFps;
        const std::span<const std::int16_t> frame(stream.data() + begin, end - begin);
        double sum = 0;
        for (const std::int16_t v : frame) sum += (v / 32768.0) * (v / 32768.0);
        rms.push_back(std::sqrt(sum / static_cast<double>(frame.size())));
        live.push_back(mouth.Next(frame));
    }
    const auto voiced = [&](int k) { return rms[k] > 0.004; };
    int onset = 0;
    while (onset < frames && !voiced(onset)) ++onset;
    int last = frames - 1;
    while (last > 0 && !voiced(last)) --last;
    ASSERT_LT(onset, last);
    for (int k = 0; k < onset; ++k) EXPECT_EQ(live[k], 0.0) << k;
    // Opens within a frame or two of the first sound, shuts within half a second of the last.
    EXPECT_GT(std::max(live[onset], live[onset + 1]), 0.3);
    for (int k = last + 8; k < frames; ++k) EXPECT_EQ(live[k], 0.0) << k;
    EXPECT_EQ(mouth.Next({}), 0.0);

    // Close to MouthOpenness over the whole buffer.
    const std::vector<double> whole = edit::MouthOpenness(ToBuffer(stream), kFps, frames);
    double diff = 0, mean_live = 0, mean_whole = 0;
    for (int k = 0; k < frames; ++k) {
        diff += std::abs(live[k] - whole[k]);
        mean_live += live[k];
        mean_whole += whole[k];
    }
    mean_live /= frames;
    mean_whole /= frames;
    double cov = 0, var_live = 0, var_whole = 0;
    for (int k = 0; k < frames; ++k) {
        cov += (live[k] - mean_live) * (whole[k] - mean_whole);
        var_live += (live[k] - mean_live) * (live[k] - mean_live);
        var_whole += (whole[k] - mean_whole) * (whole[k] - mean_whole);
    }
    const double correlation = cov / std::sqrt(var_live * var_whole);
    std::vector<double> voiced_rms;
    for (int k = 0; k < frames; ++k) {
        if (voiced(k)) voiced_rms.push_back(rms[k]);
    }
    std::sort(voiced_rms.begin(), voiced_rms.end());
    std::printf(
        "[mouth] %d frames: mean |live - whole| %.3f, correlation %.3f, means %.3f/%.3f, "
        "95th-percentile voiced frame RMS %.3f\n",
        frames, diff / frames, correlation, mean_live, mean_whole,
        voiced_rms[voiced_rms.size() * 95 / 100]);
    EXPECT_LT(diff / frames, 0.08);
    EXPECT_GT(correlation, 0.9);
}

TEST(LiveAvatar, Timings) {
    const LiveAvatar avatar(Spec("fashion-designer"));
    // Every (openness step, blink) pair once: each is drawn and encoded.
    auto start = Clock::now();
    std::size_t bytes = 0;
    int drawn = 0;
    for (int step = 0; step <= 64; ++step) {
        for (const bool blink : {false, true}) {
            bytes += avatar.Frame(step / 64.0, blink).size();
            ++drawn;
        }
    }
    const double per_drawn = Ms(Clock::now() - start) / drawn;
    // A session's frames: an openness track with blinks, now all cached.
    constexpr int kFrames = 3000;
    start = Clock::now();
    for (int i = 0; i < kFrames; ++i) {
        const double openness = 0.5 + 0.5 * std::sin(i * 0.37);
        bytes += avatar.Frame(openness, avatar.BlinkAt(i, 15)).size();
    }
    const double per_cached = Ms(Clock::now() - start) / kFrames;
    std::printf(
        "[timing] Frame 256x256 q70: %.3f ms drawn+encoded, %.4f ms cached (+BlinkAt); "
        "%.1f KB per frame\n",
        per_drawn, per_cached, bytes / 1024.0 / (drawn + kFrames));

    // The encoders alone, on a whole 256x256 picture.
    const edit::Portrait portrait = edit::RenderPortrait("fashion-designer", 256, 256);
    media::RgbImage picture;
    edit::DrawFrame(portrait, 0.6, false, picture);
    constexpr int kRuns = 100;
    start = Clock::now();
    for (int i = 0; i < kRuns; ++i)
        bytes += media::EncodePicture(picture, media::ImageFormat::kJpeg).size();
    const double per_picture = Ms(Clock::now() - start) / kRuns;
    media::JpegEncoder encoder(256, 256, 70);
    start = Clock::now();
    for (int i = 0; i < kRuns; ++i) bytes += encoder.Encode(picture).size();
    const double per_full = Ms(Clock::now() - start) / kRuns;
    start = Clock::now();
    for (int i = 0; i < kRuns; ++i) edit::DrawFrame(portrait, (i % 10) / 10.0, i % 7 == 0, picture);
    const double per_draw = Ms(Clock::now() - start) / kRuns;
    std::printf(
        "[timing] 256x256: media::EncodePicture JPEG %.3f ms, JpegEncoder::Encode (full "
        "conversion) %.3f ms, edit::DrawFrame (whole copy) %.3f ms\n",
        per_picture, per_full, per_draw);

    // Ten sessions at once on two threads, every frame drawn (no cache hits): new avatars whose
    // openness track never repeats a step before all 130 are drawn.
    constexpr int kSessions = 10;
    std::vector<std::unique_ptr<LiveAvatar>> sessions;
    start = Clock::now();
    for (int i = 0; i < kSessions; ++i) {
        sessions.push_back(
            std::make_unique<LiveAvatar>(Spec(i % 2 ? "game-character" : "cooking-teacher")));
    }
    const double per_construct = Ms(Clock::now() - start) / kSessions;
    start = Clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&, t] {
            for (int i = t; i < kSessions; i += 2) {
                for (int step = 0; step <= 64; ++step) {
                    sessions[i]->Frame(step / 64.0, false);
                    sessions[i]->Frame(step / 64.0, true);
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    const double wall = Ms(Clock::now() - start);
    std::printf(
        "[timing] LiveAvatar construction %.1f ms; %d sessions x 130 drawn frames on 2 threads: "
        "%.1f ms wall, %.3f ms per frame per thread\n",
        per_construct, kSessions, wall, wall * 2 / (kSessions * 130));
    EXPECT_GT(bytes, 0u);
}

TEST(JpegEncoder, QualityFollowsLibjpegScale) {
    // The second zigzag entry of the luminance and chrominance tables: 11 and 18 in the standard
    // tables (quality 50), scaled by qscale/8 (quality 75: qscale 4).
    const auto dqt = [](const std::string& jpeg) {
        std::vector<int> second;  // of every table of every DQT segment
        const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(jpeg[i]); };
        for (std::size_t i = 0; i + 4 < jpeg.size(); ++i) {
            if (byte(i) != 0xFF || byte(i + 1) != 0xDB) continue;
            const std::size_t end = std::min(jpeg.size(), i + 2 + (byte(i + 2) << 8 | byte(i + 3)));
            for (std::size_t t = i + 4; t + 65 <= end; t += 65) second.push_back(byte(t + 2));
        }
        return second;
    };
    media::RgbImage picture(64, 48);
    for (std::size_t i = 0; i < picture.pixels.size(); ++i) picture.pixels[i] = i * 7 % 251;
    EXPECT_EQ(dqt(media::JpegEncoder(64, 48, 50).Encode(picture)), (std::vector<int>{11, 18}));
    EXPECT_EQ(dqt(media::JpegEncoder(64, 48, 75).Encode(picture)), (std::vector<int>{5, 9}));
    EXPECT_LT(media::JpegEncoder(64, 48, 30).Encode(picture).size(),
              media::JpegEncoder(64, 48, 90).Encode(picture).size());
    // Odd sizes decode to their own size.
    media::RgbImage odd(33, 17);
    for (std::size_t i = 0; i < odd.pixels.size(); ++i) odd.pixels[i] = 96 + i % 64;
    const media::RgbImage back = Decode(media::JpegEncoder(33, 17).Encode(odd));
    EXPECT_EQ(back.width, 33);
    EXPECT_EQ(back.height, 17);
    EXPECT_LT(MeanAbsDiff(back, odd), 12);
    EXPECT_THROW(media::JpegEncoder(0, 10), media::MediaError);
    EXPECT_THROW(media::JpegEncoder(10, 10, 101), media::MediaError);
    media::JpegEncoder encoder(16, 16);
    EXPECT_THROW(encoder.Encode(picture), media::MediaError);
}

}  // namespace
}  // namespace genhost::providers
