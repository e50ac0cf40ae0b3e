// Tests for the builtin editing pipelines (src/providers/pipelines_edit.cpp and image_upscale in
// pipelines_image.cpp): image_upscale, video_upscale, video_to_hdr, character_performance and
// avatar_videos run through BuiltinProvider::Run with data-URI inputs made at run time (tiny
// pictures, videos and WAVs) and a scratch folder; outputs are checked with libavformat
// (media::ProbeMediaFile): container, codec, size, duration (± one frame), frame rate, audio,
// HDR primaries and transfer; plus determinism, the lip sync and motion drivers, corrupt inputs
// (ASSET.INVALID) and cancellation. Latency scale 0 throughout.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../../src/providers/edit_avatar.hpp"
#include "../../src/providers/edit_filters.hpp"
#include "genhost/catalog/catalog.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/media/audio.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/video.hpp"
#include "genhost/providers/builtin.hpp"
#include "genhost/providers/inputs.hpp"
#include "provider_test_catalog.hpp"

namespace genhost::providers {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

using test::ReadSource;
std::string ReadPath(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

using test::TheCatalog;

std::string DataUri(const std::string& type, const std::string& bytes) {
    return "data:" + type + ";base64," + Base64Encode(bytes);
}

// --- Fixtures made with the media module -----------------------------------------------------

std::string Png(int width, int height, std::uint64_t seed = 3) {
    media::ImageSpec spec;
    spec.width = width;
    spec.height = height;
    spec.seed = seed;
    spec.prompt = "a lighthouse at dusk";
    return media::RenderImage(spec);
}

// Mp4 is `frames` frames of an animated scene at `fps` (optionally with a tone track), or a
// still picture when `still`.
std::string Mp4(int width, int height, int frames, int fps = 24, bool audio = false,
                bool still = false, std::uint64_t seed = 5) {
    const fs::path path = fs::temp_directory_path() /
                          ("providers_edit_fixture_" + std::to_string(::getpid()) + ".mp4");
    {
        media::VideoSpec spec;
        spec.width = width;
        spec.height = height;
        spec.fps = fps;
        spec.frame_count = frames;
        spec.audio = audio;
        media::VideoWriter writer(
            spec, path.string(),
            audio ? media::AudioSource([](std::int64_t first, int count, float* l, float* r) {
                for (int i = 0; i < count; ++i) {
                    l[i] = r[i] = 0.3f * static_cast<float>(
                                             std::sin(2 * M_PI * 440.0 * (first + i) / 48000.0));
                }
            })
                  : media::AudioSource{});
        media::SceneAnimator scene(seed, "waves rolling on a beach");
        media::RgbImage frame(width, height);
        for (int i = 0; i < frames; ++i) {
            scene.Paint(still ? 0.0 : 4.0 * i / fps, frame);
            writer.WriteFrame(frame);
        }
        writer.Finish();
    }
    std::string bytes = ReadPath(path.string());
    fs::remove(path);
    return bytes;
}

// Wav is `silence` seconds of silence then `tone` seconds of a 220 Hz tone, 48 kHz mono.
std::string Wav(double silence, double tone) {
    media::AudioBuffer audio;
    audio.sample_rate = 48000;
    audio.channels = 1;
    const int quiet = static_cast<int>(silence * 48000);
    const int loud = static_cast<int>(tone * 48000);
    audio.samples.assign(quiet + loud, 0.0f);
    for (int i = 0; i < loud; ++i) {
        audio.samples[quiet + i] =
            0.5f * static_cast<float>(std::sin(2 * M_PI * 220.0 * i / 48000));
    }
    media::AudioEncoding encoding;
    encoding.format = media::AudioFormat::kWav;
    encoding.sample_rate = 48000;
    encoding.channels = 1;
    return media::WriteAudio(audio, encoding);
}

// --- Running a pipeline ------------------------------------------------------------------------

struct RunResult {
    std::vector<Output> outputs;
    std::vector<double> progress;
    fs::path scratch;
};

class EditTest : public ::testing::Test {
  protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("providers_edit_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }

    // RunTask runs the pipeline; `cancel` cancels it before it starts, `cancel_at` once progress
    // reaches that fraction.
    RunResult RunTask(const std::string& endpoint, const json& input, bool cancel = false,
                      double cancel_at = 2.0) {
        RunResult r;
        r.scratch = root_ / ("run" + std::to_string(runs_++));
        last_scratch_ = r.scratch;
        std::atomic<bool> cancelled{cancel};
        auto progress = [&](double p) {
            r.progress.push_back(p);
            if (p >= cancel_at) cancelled = true;
        };
        TaskContext ctx("0f8b1c2e-1111-4222-8333-444455556666", endpoint, input.value("model", ""),
                        input, cancelled, progress, r.scratch.string(), &resolver_);
        BuiltinProvider provider(TheCatalog(), 0);
        r.outputs = provider.Run(ctx);
        return r;
    }

    // Failure runs the task and returns the TaskFailure code ("" when it succeeded).
    std::string FailureCode(const std::string& endpoint, const json& input) {
        try {
            RunTask(endpoint, input);
        } catch (const TaskFailure& e) {
            return e.code();
        }
        return "";
    }

    static const std::string& File(const RunResult& r) {
        EXPECT_EQ(r.outputs.size(), 1u);
        EXPECT_TRUE(r.outputs.at(0).data.empty());
        EXPECT_TRUE(fs::exists(r.outputs.at(0).file)) << r.outputs.at(0).file;
        EXPECT_EQ(fs::path(r.outputs.at(0).file).parent_path(), r.scratch);
        return r.outputs.at(0).file;
    }

    static void ExpectProgress(const RunResult& r) {
        ASSERT_FALSE(r.progress.empty());
        for (std::size_t i = 1; i < r.progress.size(); ++i) {
            EXPECT_GE(r.progress[i], r.progress[i - 1] - 1e-9);
        }
        EXPECT_DOUBLE_EQ(r.progress.back(), 1.0);
    }

    // Frames decodes a whole output video.
    static std::vector<media::RgbImage> Frames(const std::string& path) {
        media::VideoReader::Limits limits;
        limits.max_width = 4096;
        limits.max_height = 4096;
        media::VideoReader reader(path, limits);
        std::vector<media::RgbImage> frames;
        media::RgbImage frame;
        double t = 0;
        while (reader.Next(frame, t)) frames.push_back(frame);
        return frames;
    }

    fs::path root_;
    fs::path last_scratch_;
    int runs_ = 0;
    DataUriResolver resolver_;
};

// MeanDiff is the mean absolute difference of two pictures in a box (whole picture if empty).
double MeanDiff(const media::RgbImage& a, const media::RgbImage& b, int x0 = 0, int y0 = 0,
                int x1 = -1, int y1 = -1) {
    if (x1 < 0) x1 = a.width;
    if (y1 < 0) y1 = a.height;
    double sum = 0;
    std::int64_t n = 0;
    for (int y = y0; y < y1; ++y) {
        for (int x = 3 * x0; x < 3 * x1; ++x) {
            sum += std::abs(int{a.Row(y)[x]} - int{b.Row(y)[x]});
            ++n;
        }
    }
    return n ? sum / n : 0;
}

// --- image_upscale -----------------------------------------------------------------------------

json UpscaleInput(const std::string& png, int factor) {
    return {{"model", "upscale_precision_upscaler_v2"},
            {"imageUri", DataUri("image/png", png)},
            {"scaleFactor", factor}};
}

TEST_F(EditTest, ImageUpscaleMultipliesEachSide) {
    const std::string png = Png(64, 48);
    const RunResult r = RunTask("image_upscale", UpscaleInput(png, 4));
    EXPECT_EQ(r.outputs.at(0).suffix, "0.png");
    const auto info = media::ProbeMediaFile(File(r));
    EXPECT_EQ(info.video_codec, "png");
    EXPECT_EQ(info.width, 256);
    EXPECT_EQ(info.height, 192);
    EXPECT_EQ(info.pixel_format, "rgb24");
    ExpectProgress(r);

    // Lanczos, not a pixel copy: the upscale downscaled again is close to the input.
    const auto input_path = root_ / "in.png";
    { std::ofstream(input_path, std::ios::binary) << png; }
    const auto original = media::LoadImageRgb(input_path.string());
    const auto back = media::Resize(media::LoadImageRgb(File(r)), 64, 48);
    EXPECT_LT(MeanDiff(original, back), 6.0);
}

TEST_F(EditTest, ImageUpscaleFiltersChangeThePictureDeterministically) {
    const std::string png = Png(48, 48);
    json plain = UpscaleInput(png, 2);
    json filtered = plain;
    filtered["sharpen"] = 80;
    filtered["smartGrain"] = 60;
    filtered["ultraDetail"] = 70;
    filtered["flavor"] = "photo_denoiser";
    filtered["seed"] = 11;
    const std::string a = ReadPath(File(RunTask("image_upscale", plain)));
    const std::string b = ReadPath(File(RunTask("image_upscale", filtered)));
    const std::string c = ReadPath(File(RunTask("image_upscale", filtered)));
    EXPECT_NE(a, b);
    EXPECT_EQ(b, c);  // same seed and input: same bytes
    filtered["seed"] = 12;
    EXPECT_NE(ReadPath(File(RunTask("image_upscale", filtered))), b);  // the grain follows the seed
}

TEST_F(EditTest, ImageUpscaleTinyAndOddSizes) {
    for (const auto& [w, h, factor] :
         {std::tuple{1, 1, 2}, std::tuple{7, 5, 8}, std::tuple{3, 9, 16}}) {
        json input = UpscaleInput(Png(w, h), factor);
        input["sharpen"] = 100;
        input["ultraDetail"] = 100;
        input["smartGrain"] = 100;
        const auto info = media::ProbeMediaFile(File(RunTask("image_upscale", input)));
        EXPECT_EQ(info.width, w * factor);
        EXPECT_EQ(info.height, h * factor);
    }
}

TEST_F(EditTest, ImageUpscaleCapsTheLongSide) {
    const RunResult r = RunTask("image_upscale", UpscaleInput(Png(600, 30), 16));
    const auto info = media::ProbeMediaFile(File(r));
    EXPECT_EQ(info.width, 8000);  // 9600 x 480 asked: the long side capped, the aspect kept
    EXPECT_EQ(info.height, 400);
}

TEST_F(EditTest, ImageUpscaleRejectsCorruptInput) {
    json input = UpscaleInput("not a picture at all", 2);
    EXPECT_EQ(FailureCode("image_upscale", input), "ASSET.INVALID");
}

// --- video_upscale -----------------------------------------------------------------------------

TEST_F(EditTest, VideoUpscaleScalesToTheResolution) {
    const json input = {{"model", "upscale_video_upscaler_creative"},
                        {"videoUri", DataUri("video/mp4", Mp4(160, 90, 6, 24, true))},
                        {"resolution", "720p"},
                        {"sharpen", 50},
                        {"smartGrain", 40},
                        {"creativity", 30},
                        {"flavor", "vivid"}};
    const RunResult r = RunTask("video_upscale", input);
    EXPECT_EQ(r.outputs.at(0).suffix, "0.mp4");
    const auto info = media::ProbeMediaFile(File(r));
    EXPECT_EQ(info.video_codec, "h264");
    EXPECT_EQ(info.width, 1280);
    EXPECT_EQ(info.height, 720);
    EXPECT_NEAR(info.frame_rate, 24, 0.01);
    EXPECT_NEAR(info.duration_seconds, 0.25, 1.0 / 24 + 1e-3);
    EXPECT_TRUE(info.audio_codec.empty());  // the model has no audio output
    ExpectProgress(r);
    EXPECT_EQ(Frames(File(r)).size(), 6u);
}

TEST_F(EditTest, VideoUpscaleFpsBoostDoublesTheFrames) {
    const json input = {{"model", "upscale_video_upscaler_creative"},
                        {"videoUri", DataUri("video/mp4", Mp4(96, 128, 6, 20))},
                        {"resolution", "720p"},
                        {"fpsBoost", true}};
    const RunResult r = RunTask("video_upscale", input);
    const auto info = media::ProbeMediaFile(File(r));
    EXPECT_EQ(info.width, 960);  // portrait: the long side is 1280
    EXPECT_EQ(info.height, 1280);
    EXPECT_NEAR(info.frame_rate, 40, 0.01);
    EXPECT_NEAR(info.duration_seconds, 0.3, 1.0 / 40 + 1e-3);
    const auto frames = Frames(File(r));
    ASSERT_EQ(frames.size(), 12u);
    // An inserted frame lies between its neighbours.
    media::RgbImage mid(frames[2].width, frames[2].height);
    media::CrossFade(frames[2], frames[4], 0.5, mid);
    EXPECT_LT(MeanDiff(frames[3], mid), MeanDiff(frames[2], frames[4]));
}

TEST_F(EditTest, VideoUpscaleRejectsCorruptVideo) {
    const json input = {{"model", "upscale_video_upscaler_creative"},
                        {"videoUri", DataUri("video/mp4", std::string(2000, 'x'))}};
    EXPECT_EQ(FailureCode("video_upscale", input), "ASSET.INVALID");
    // A truncated MP4 (header cut off) fails the same way.
    const std::string mp4 = Mp4(64, 64, 6);
    const json cut = {{"model", "upscale_video_upscaler_creative"},
                      {"videoUri", DataUri("video/mp4", mp4.substr(mp4.size() / 2))}};
    EXPECT_EQ(FailureCode("video_upscale", cut), "ASSET.INVALID");
}

// --- video_to_hdr ------------------------------------------------------------------------------

json HdrInput(const std::string& mp4, const std::string& format) {
    return {{"model", "ruby"}, {"videoUri", DataUri("video/mp4", mp4)}, {"outputFormat", format}};
}

TEST_F(EditTest, VideoToHdrHdr10AndHlg) {
    const std::string mp4 = Mp4(128, 72, 12, 24, true);
    {
        const RunResult r = RunTask("video_to_hdr", HdrInput(mp4, "hdr10"));
        EXPECT_EQ(r.outputs.at(0).suffix, "0.mp4");
        const auto info = media::ProbeMediaFile(File(r));
        EXPECT_EQ(info.video_codec, "hevc");
        EXPECT_EQ(info.width, 128);
        EXPECT_EQ(info.height, 72);
        EXPECT_EQ(info.pixel_format, "yuv420p10le");
        EXPECT_EQ(info.color_primaries, "bt2020");
        EXPECT_EQ(info.color_transfer, "smpte2084");
        EXPECT_NEAR(info.duration_seconds, 0.5, 1.0 / 24 + 1e-3);
        EXPECT_EQ(info.audio_codec, "aac");  // the input's track is kept
        EXPECT_EQ(info.sample_rate, 48000);
        ExpectProgress(r);
    }
    {
        const RunResult r = RunTask("video_to_hdr", HdrInput(mp4, "hlg"));
        const auto info = media::ProbeMediaFile(File(r));
        EXPECT_EQ(info.video_codec, "hevc");
        EXPECT_EQ(info.color_primaries, "bt2020");
        EXPECT_EQ(info.color_transfer, "arib-std-b67");
    }
}

TEST_F(EditTest, VideoToHdrProresAndExr) {
    const std::string mp4 = Mp4(64, 36, 6);
    {
        json input = HdrInput(mp4, "hdr_prores");
        input["proresProfile"] = "422 HQ";
        const RunResult r = RunTask("video_to_hdr", input);
        EXPECT_EQ(r.outputs.at(0).suffix, "0.mov");
        const auto info = media::ProbeMediaFile(File(r));
        EXPECT_EQ(info.video_codec, "prores");
        EXPECT_EQ(info.width, 64);
        EXPECT_EQ(info.height, 36);
        EXPECT_EQ(info.color_primaries, "bt2020");
        EXPECT_EQ(info.color_transfer, "smpte2084");
        EXPECT_NEAR(info.duration_seconds, 0.25, 1.0 / 24 + 1e-3);
    }
    for (const char* format :
         {"hdr_exr_sequence", "hdr_exr_acescg_sequence_1_3", "hdr_exr_acescg_sequence_2_0"}) {
        const RunResult r = RunTask("video_to_hdr", HdrInput(mp4, format));
        EXPECT_EQ(r.outputs.at(0).suffix, "0.zip") << format;
        const auto entries = media::ReadStoredZip(ReadPath(File(r)));
        ASSERT_EQ(entries.size(), 6u) << format;
        for (const auto& e : entries) {
            EXPECT_THAT(e.name, ::testing::EndsWith(".exr"));
            EXPECT_EQ(e.data.substr(0, 4), std::string("\x76\x2f\x31\x01", 4));  // EXR magic
        }
    }
}

TEST_F(EditTest, VideoToHdrKeepsOddSizesEvenAndRejectsCorruptInput) {
    const RunResult r = RunTask("video_to_hdr", HdrInput(Mp4(66, 38, 3), "hdr10"));
    const auto info = media::ProbeMediaFile(File(r));
    EXPECT_EQ(info.width % 2, 0);
    EXPECT_EQ(info.height % 2, 0);
    EXPECT_EQ(FailureCode("video_to_hdr", HdrInput(std::string(500, '\0'), "hlg")),
              "ASSET.INVALID");
}

// --- character_performance ---------------------------------------------------------------------

json PerformanceInput(const std::string& reference_mp4, const std::string& ratio) {
    return {{"model", "act_two"},
            {"character", {{"type", "image"}, {"uri", DataUri("image/png", Png(320, 240, 9))}}},
            {"reference", {{"type", "video"}, {"uri", DataUri("video/mp4", reference_mp4)}}},
            {"ratio", ratio},
            {"seed", 4}};
}

TEST_F(EditTest, CharacterPerformanceFollowsTheReference) {
    const std::string moving = Mp4(96, 64, 12, 24);
    const RunResult r = RunTask("character_performance", PerformanceInput(moving, "832:1104"));
    EXPECT_EQ(r.outputs.at(0).suffix, "0.mp4");
    const auto info = media::ProbeMediaFile(File(r));
    EXPECT_EQ(info.video_codec, "h264");
    EXPECT_EQ(info.width, 832);
    EXPECT_EQ(info.height, 1104);
    EXPECT_NEAR(info.frame_rate, 24, 0.01);
    EXPECT_NEAR(info.duration_seconds, 0.5, 1.0 / 24 + 1e-3);  // the reference's duration
    EXPECT_TRUE(info.audio_codec.empty());
    ExpectProgress(r);

    // Deterministic for a seed and input.
    const std::string first = ReadPath(File(r));
    EXPECT_EQ(
        ReadPath(File(RunTask("character_performance", PerformanceInput(moving, "832:1104")))),
        first);

    // A still reference leaves the character nearly still; a moving one moves it.
    const auto still_frames = Frames(File(RunTask(
        "character_performance", PerformanceInput(Mp4(96, 64, 12, 24, false, true), "832:1104"))));
    const auto moving_frames = Frames(File(r));
    ASSERT_EQ(still_frames.size(), moving_frames.size());
    double still_motion = 0;
    double moved = 0;
    for (std::size_t i = 1; i < still_frames.size(); ++i) {
        still_motion += MeanDiff(still_frames[i], still_frames[i - 1]);
        moved += MeanDiff(moving_frames[i], still_frames[i]);
    }
    EXPECT_GT(moved, 2 * still_motion);
}

TEST_F(EditTest, CharacterPerformanceVideoCharacterAndCorruptReference) {
    json input = PerformanceInput(Mp4(96, 64, 12, 24), "1584:672");
    input["character"] = {{"type", "video"}, {"uri", DataUri("video/mp4", Mp4(160, 120, 6))}};
    input["bodyControl"] = true;
    input["expressionIntensity"] = 5;
    const auto info = media::ProbeMediaFile(File(RunTask("character_performance", input)));
    EXPECT_EQ(info.width, 1584);
    EXPECT_EQ(info.height, 672);
    EXPECT_NEAR(info.duration_seconds, 0.5, 1.0 / 24 + 1e-3);

    json bad = PerformanceInput("garbage", "960:960");
    bad["reference"]["uri"] = DataUri("video/mp4", std::string(300, 'g'));
    EXPECT_EQ(FailureCode("character_performance", bad), "ASSET.INVALID");
    json bad_character = PerformanceInput(Mp4(96, 64, 6), "960:960");
    bad_character["character"]["uri"] = DataUri("image/png", "\x89PNG broken");
    EXPECT_EQ(FailureCode("character_performance", bad_character), "ASSET.INVALID");
}

// --- avatar_videos -----------------------------------------------------------------------------

TEST_F(EditTest, AvatarVideosLipSyncsTheAudio) {
    const json input = {
        {"model", "gwm1_avatars"},
        {"avatar", {{"type", "service-preset"}, {"presetId", "cooking-teacher"}}},
        {"speech", {{"type", "audio"}, {"audio", DataUri("audio/wav", Wav(0.5, 0.5))}}}};
    const RunResult r = RunTask("avatar_videos", input);
    EXPECT_EQ(r.outputs.at(0).suffix, "0.mp4");
    const auto info = media::ProbeMediaFile(File(r));
    EXPECT_EQ(info.video_codec, "h264");
    EXPECT_EQ(info.width, 1280);
    EXPECT_EQ(info.height, 720);
    EXPECT_NEAR(info.duration_seconds, 1.0, 1.0 / 24 + 1e-3);
    EXPECT_EQ(info.audio_codec, "aac");
    EXPECT_EQ(info.sample_rate, 48000);
    ExpectProgress(r);

    const auto frames = Frames(File(r));
    ASSERT_EQ(frames.size(), 24u);
    const auto l = edit::Layout(1280, 720);
    const int x0 = static_cast<int>(l.mouth_x - l.mouth_half_width);
    const int x1 = static_cast<int>(l.mouth_x + l.mouth_half_width);
    const int y0 = static_cast<int>(l.mouth_y - l.mouth_max_open);
    const int y1 = static_cast<int>(l.mouth_y + l.mouth_max_open);
    // Silent: the mouth stays shut. Speaking: it opens.
    EXPECT_LT(MeanDiff(frames[3], frames[9], x0, y0, x1, y1), 2.0);
    EXPECT_GT(MeanDiff(frames[3], frames[20], x0, y0, x1, y1), 15.0);
    // The same request gives the same file.
    EXPECT_EQ(ReadPath(File(RunTask("avatar_videos", input))), ReadPath(File(r)));
}

TEST_F(EditTest, AvatarVideosSpeaksText) {
    const json input = {{"model", "gwm1_avatars"},
                        {"avatar", {{"type", "service-preset"}, {"presetId", "cat-character"}}},
                        {"speech",
                         {{"type", "text"},
                          {"text", "Hello there."},
                          {"voice", {{"type", "preset"}, {"presetId", "leo"}}}}}};
    const RunResult r = RunTask("avatar_videos", input);
    const auto info = media::ProbeMediaFile(File(r));
    EXPECT_EQ(info.video_codec, "h264");
    EXPECT_EQ(info.audio_codec, "aac");
    EXPECT_GT(info.duration_seconds, 0.4);
    EXPECT_LT(info.duration_seconds, 4.0);
}

TEST_F(EditTest, AvatarVideosCustomAvatarAndCorruptAudio) {
    json input = {
        {"model", "gwm1_avatars"},
        {"avatar", {{"type", "custom"}, {"avatarId", "7d3c1b2a-0000-4000-8000-000000000001"}}},
        {"speech", {{"type", "audio"}, {"audio", DataUri("audio/wav", Wav(0.2, 0.3))}}}};
    const auto info = media::ProbeMediaFile(File(RunTask("avatar_videos", input)));
    EXPECT_NEAR(info.duration_seconds, 0.5, 1.0 / 24 + 1e-3);
    input["speech"]["audio"] = DataUri("audio/wav", "RIFF....WAVEjunk");
    EXPECT_EQ(FailureCode("avatar_videos", input), "ASSET.INVALID");
}

// --- helpers and cancellation --------------------------------------------------------------------

TEST(EditHelpers, PortraitsAreDeterministicAndDistinct) {
    const auto a = edit::RenderPortrait("influencer", 160, 90);
    const auto b = edit::RenderPortrait("influencer", 160, 90);
    const auto c = edit::RenderPortrait("tennis-coach", 160, 90);
    EXPECT_EQ(a.base.pixels, b.base.pixels);
    EXPECT_NE(a.base.pixels, c.base.pixels);
    media::RgbImage open;
    edit::DrawFrame(a, 1.0, false, open);
    EXPECT_NE(open.pixels, a.base.pixels);
}

TEST(EditHelpers, APictureBecomesAPortraitWhoseMouthAloneMoves) {
    // A 400x600 picture: a flat grey frame with a skin-coloured box where the mouth goes.
    media::RgbImage picture(400, 600);
    for (int y = 0; y < 600; ++y) {
        for (int x = 0; x < 400; ++x) {
            const bool face = std::abs(x - 200) < 60 && std::abs(y - 396) < 30;
            const std::uint8_t c[3] = {static_cast<std::uint8_t>(face ? 220 : 90),
                                       static_cast<std::uint8_t>(face ? 170 : 90),
                                       static_cast<std::uint8_t>(face ? 150 : 90)};
            std::copy(c, c + 3, picture.Row(y) + 3 * x);
        }
    }
    const auto portrait = edit::PortraitFromPicture(picture, 320, 180);
    EXPECT_TRUE(portrait.photo);
    // Fitted by height (600 -> 180): the mouth sits two thirds down the picture, centred.
    EXPECT_NEAR(portrait.layout.mouth_x, 160, 1);
    EXPECT_NEAR(portrait.layout.mouth_y, 180 * 0.66, 1);
    EXPECT_GT(portrait.lips[0], portrait.lips[2]);  // sampled from the skin box, reddened
    media::RgbImage closed;
    edit::DrawFrame(portrait, 0.0, true, closed);  // no eyes are drawn over a picture
    EXPECT_EQ(closed.pixels, portrait.base.pixels);
    media::RgbImage open;
    edit::DrawFrame(portrait, 1.0, false, open);
    int changed_far = 0;
    int changed_near = 0;
    for (int y = 0; y < 180; ++y) {
        for (int x = 0; x < 320; ++x) {
            const bool differs = std::memcmp(open.Row(y) + 3 * x, portrait.base.Row(y) + 3 * x, 3);
            const bool near = std::abs(x - 160) < 20 && std::abs(y - 119) < 15;
            (near ? changed_near : changed_far) += differs ? 1 : 0;
        }
    }
    EXPECT_GT(changed_near, 50);
    EXPECT_EQ(changed_far, 0);
}

TEST(EditHelpers, MotionBlendFollowsAPan) {
    const fs::path path =
        fs::temp_directory_path() / ("providers_edit_pan_" + std::to_string(::getpid()) + ".png");
    edit::WriteFile(path.string(), Png(640, 360, 21));
    const media::RgbImage source = media::LoadImageRgb(path.string());
    fs::remove(path);
    auto view = [&](double cx) {
        media::RgbImage out(320, 180);
        media::CameraView(source, 1.5, cx, 0.5, out);
        return out;
    };
    const auto a = view(0.45);
    const auto truth = view(0.46);
    const auto b = view(0.47);
    media::RgbImage blend(320, 180);
    media::CrossFade(a, b, 0.5, blend);
    const auto middle = edit::MotionBlend(a, b);
    EXPECT_LT(MeanDiff(middle, truth), 0.5 * MeanDiff(blend, truth));
    // Identical pictures stay identical.
    EXPECT_EQ(edit::MotionBlend(a, a).pixels, a.pixels);
}

TEST(EditHelpers, MouthOpennessFollowsLoudness) {
    media::AudioBuffer audio;
    audio.sample_rate = 48000;
    audio.channels = 1;
    audio.samples.assign(48000, 0.0f);
    for (int i = 24000; i < 48000; ++i) audio.samples[i] = (i / 40) % 2 ? 0.4f : -0.4f;
    const auto open = edit::MouthOpenness(audio, 24, 24);
    ASSERT_EQ(open.size(), 24u);
    for (int k = 0; k < 12; ++k) EXPECT_EQ(open[k], 0.0) << k;
    EXPECT_GT(open[20], 0.8);
}

TEST(EditHelpers, AvatarVoicesExist) {
    for (const char* id : {"victoria", "marcus", "luna", "not-a-preset"}) {
        EXPECT_TRUE(media::SpeechVoiceExists(edit::AvatarVoice(id).voice)) << id;
    }
    EXPECT_EQ(edit::DefaultAvatarVoice("cooking-teacher"), "vincent");
}

TEST_F(EditTest, CancelledTasksStop) {
    const json input = {{"model", "upscale_precision_upscaler_v2"},
                        {"imageUri", DataUri("image/png", Png(16, 16))}};
    EXPECT_THROW(RunTask("image_upscale", input, true), Cancelled);
    const json hdr = HdrInput(Mp4(64, 36, 3), "hdr10");
    EXPECT_THROW(RunTask("video_to_hdr", hdr, true), Cancelled);

    // Cancelled in the middle of the frames: no partial output is left behind.
    const json upscale = {{"model", "upscale_video_upscaler_creative"},
                          {"videoUri", DataUri("video/mp4", Mp4(64, 36, 12))},
                          {"resolution", "720p"}};
    EXPECT_THROW(RunTask("video_upscale", upscale, false, 0.5), Cancelled);
    EXPECT_FALSE(fs::exists(last_scratch_ / "video_upscale.mp4"));
    const json avatar = {
        {"model", "gwm1_avatars"},
        {"avatar", {{"type", "service-preset"}, {"presetId", "influencer"}}},
        {"speech", {{"type", "audio"}, {"audio", DataUri("audio/wav", Wav(0.2, 0.8))}}}};
    EXPECT_THROW(RunTask("avatar_videos", avatar, false, 0.5), Cancelled);
    EXPECT_FALSE(fs::exists(last_scratch_ / "avatar_videos.mp4"));
}

}  // namespace
}  // namespace genhost::providers

// libx265 (the HDR10 / HLG encoder) keeps a few small allocations of every encoder it opens
// past x265_encoder_close; they are the library's, not genhost's.
extern "C" const char* __lsan_default_suppressions() { return "leak:libx265.so\n"; }
