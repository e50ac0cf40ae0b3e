// Tests for the builtin provider's video pipelines (src/providers/pipelines_video.cpp):
// text_to_video, image_to_video and video_to_video with the catalog of the source tree. Every
// output is probed with libavformat (media::ProbeMediaFile): container, codec, exact width and
// height, duration within one frame, 24 fps, pixel format, audio present or absent; the zipped
// sequences are opened and counted. Also: determinism, keyframes, extend and edit modes,
// corrupt inputs failing with ASSET.INVALID, cancellation leaving no output, progress reaching 1.
// Sizes and durations are the smallest the models allow: the build runs under AddressSanitizer.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "genhost/catalog/catalog.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/video.hpp"
#include "genhost/providers/builtin.hpp"
#include "genhost/providers/inputs.hpp"
#include "provider_test_catalog.hpp"

namespace genhost::providers {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

constexpr char kTaskId[] = "7a1d0c3e-2222-4333-8444-555566667777";

using test::ReadSource;
std::string ReadBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

using test::TheCatalog;

// ScratchDir is a private folder removed at the end of the test.
class ScratchDir {
  public:
    ScratchDir() {
        static int counter = 0;
        path_ =
            (std::filesystem::temp_directory_path() /
             ("genhost_video_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
                .string();
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

// --- fixtures -------------------------------------------------------------------------------

std::string DataUri(const std::string& type, const std::string& bytes) {
    return "data:" + type + ";base64," + Base64Encode(bytes);
}

std::string PngUri(int width, int height, std::uint64_t seed = 1, std::string prompt = "a meadow") {
    media::ImageSpec spec;
    spec.width = width;
    spec.height = height;
    spec.seed = seed;
    spec.prompt = std::move(prompt);
    return DataUri("image/png", media::RenderImage(spec));
}

// Mp4Uri encodes `frames` frames (24 fps) of a moving gradient at width x height.
std::string Mp4Uri(int width, int height, int frames) {
    ScratchDir dir;
    const std::string path = dir.path() + "/fixture.mp4";
    media::VideoSpec spec;
    spec.width = width;
    spec.height = height;
    spec.frame_count = frames;
    {
        media::VideoWriter writer(spec, path);
        media::RgbImage frame(width, height);
        for (int i = 0; i < frames; ++i) {
            for (int y = 0; y < height; ++y) {
                auto* row = frame.Row(y);
                for (int x = 0; x < width; ++x) {
                    row[3 * x] = static_cast<std::uint8_t>((x * 255 / width + 8 * i) & 255);
                    row[3 * x + 1] = static_cast<std::uint8_t>(y * 255 / height);
                    row[3 * x + 2] = static_cast<std::uint8_t>(128 + 4 * i);
                }
            }
            writer.WriteFrame(frame);
        }
        writer.Finish();
    }
    return DataUri("video/mp4", ReadBytes(path));
}

const std::string& SmallLandscapeVideo() {
    static const std::string uri = Mp4Uri(160, 90, 24);  // 1 s
    return uri;
}

// --- running --------------------------------------------------------------------------------

struct RunResult {
    std::vector<Output> outputs;
    std::vector<double> progress;
};

RunResult RunVideo(const std::string& endpoint, const json& input, const ScratchDir& scratch,
                   const std::string& task_id = kTaskId) {
    RunResult r;
    std::atomic<bool> cancelled{false};
    static const DataUriResolver resolver;
    TaskContext ctx(
        task_id, endpoint, input.at("model").get<std::string>(), input, cancelled,
        [&](double p) { r.progress.push_back(p); }, scratch.path(), &resolver);
    BuiltinProvider provider(TheCatalog(), 0);
    r.outputs = provider.Run(ctx);
    return r;
}

// Expect checks one probed output.
struct Expect {
    std::string codec = "h264";
    std::string extension = "mp4";
    int width = 0;
    int height = 0;
    double seconds = 0;
    bool audio = false;
    std::string pixel_format = "yuv420p";
};

media::MediaInfo CheckOutput(const RunResult& r, const Expect& e) {
    EXPECT_EQ(r.outputs.size(), 1u);
    if (r.outputs.empty()) return {};
    const Output& out = r.outputs[0];
    EXPECT_EQ(out.suffix, "0." + e.extension);
    EXPECT_TRUE(out.data.empty());
    EXPECT_TRUE(std::filesystem::exists(out.file)) << out.file;
    EXPECT_EQ(std::filesystem::path(out.file).extension().string(), "." + e.extension);
    const auto info = media::ProbeMediaFile(out.file);
    EXPECT_EQ(info.video_codec, e.codec);
    EXPECT_EQ(info.width, e.width);
    EXPECT_EQ(info.height, e.height);
    EXPECT_NEAR(info.duration_seconds, e.seconds, 1.0 / 24 + 1e-6);
    EXPECT_NEAR(info.frame_rate, 24.0, 1e-6);
    if (!e.pixel_format.empty()) {
        EXPECT_EQ(info.pixel_format, e.pixel_format);
    }
    if (e.audio) {
        EXPECT_EQ(info.audio_codec, "aac");
        EXPECT_EQ(info.sample_rate, 48000);
        EXPECT_EQ(info.channels, 2);
    } else {
        EXPECT_EQ(info.audio_codec, "");
    }
    if (!r.progress.empty()) {
        EXPECT_EQ(r.progress.back(), 1.0);
        for (std::size_t i = 1; i < r.progress.size(); ++i) {
            EXPECT_GE(r.progress[i], r.progress[i - 1]);
        }
    }
    return info;
}

// --- text_to_video --------------------------------------------------------------------------

TEST(BuiltinTextToVideo, AspectAtResolutionForOneSecond) {
    ScratchDir scratch;
    const auto r = RunVideo("text_to_video",
                            json{{"model", "imagine_1_5"},
                                 {"promptText", "a red fox running through snow"},
                                 {"ratio", "16:9"},
                                 {"resolution", "480p"},
                                 {"duration", 1}},
                            scratch);
    CheckOutput(r, {.width = 854, .height = 480, .seconds = 1});
}

TEST(BuiltinTextToVideo, PixelRatioWithAudioTrack) {
    ScratchDir scratch;
    const auto r = RunVideo("text_to_video",
                            json{{"model", "wan3"},
                                 {"promptText", "rain on a tin roof at night"},
                                 {"ratio", "480:832"},
                                 {"audio", true},
                                 {"duration", 2}},
                            scratch);
    CheckOutput(r, {.width = 480, .height = 832, .seconds = 2, .audio = true});
}

TEST(BuiltinTextToVideo, AudioDefaultsFromTheCatalogAndCanBeTurnedOff) {
    {
        ScratchDir scratch;  // seedance2_mini: audio on unless asked otherwise
        const auto r = RunVideo("text_to_video",
                                json{{"model", "seedance2_mini"},
                                     {"promptText", "waves on a beach"},
                                     {"ratio", "640:640"},
                                     {"duration", 4}},
                                scratch);
        CheckOutput(r, {.width = 640, .height = 640, .seconds = 4, .audio = true});
    }
    {
        ScratchDir scratch;
        const auto r = RunVideo("text_to_video",
                                json{{"model", "seedance2_mini"},
                                     {"promptText", "waves on a beach"},
                                     {"ratio", "640:640"},
                                     {"audio", false},
                                     {"duration", 4}},
                                scratch);
        CheckOutput(r, {.width = 640, .height = 640, .seconds = 4, .audio = false});
    }
}

TEST(BuiltinTextToVideo, AutoOrMissingDurationIsTheCatalogDefault) {
    // omni_flash_1.1's default is 8 s; imagine_1_5's 6 s.
    {
        ScratchDir scratch;
        const auto r = RunVideo("text_to_video",
                                json{{"model", "omni_flash_1.1"},
                                     {"promptText", "a lighthouse"},
                                     {"ratio", "640:360"},
                                     {"duration", "auto"}},
                                scratch);
        CheckOutput(r, {.width = 640, .height = 360, .seconds = 8});
    }
    {
        ScratchDir scratch;
        const auto r = RunVideo("text_to_video",
                                json{{"model", "imagine_1_5"},
                                     {"promptText", "a lighthouse"},
                                     {"ratio", "1:1"},
                                     {"resolution", "480p"}},
                                scratch);
        CheckOutput(r, {.width = 480, .height = 480, .seconds = 6});
    }
}

TEST(BuiltinTextToVideo, IsDeterministicAndSeedDependent) {
    const json input{{"model", "imagine_1_5"}, {"promptText", "a blue whale"},
                     {"ratio", "1:1"},         {"resolution", "480p"},
                     {"duration", 1},          {"seed", 11}};
    ScratchDir s1;
    ScratchDir s2;
    ScratchDir s3;
    const auto a = RunVideo("text_to_video", input, s1);
    const auto b = RunVideo("text_to_video", input, s2);
    json other = input;
    other["seed"] = 12;
    const auto c = RunVideo("text_to_video", other, s3);
    const std::string bytes = ReadBytes(a.outputs.at(0).file);
    EXPECT_FALSE(bytes.empty());
    EXPECT_TRUE(bytes == ReadBytes(b.outputs.at(0).file));
    EXPECT_TRUE(bytes != ReadBytes(c.outputs.at(0).file));
}

TEST(BuiltinTextToVideo, ReferencesSteerTheScene) {
    const json base{{"model", "imagine_1_5"}, {"promptText", "a garden"},
                    {"ratio", "1:1"},         {"resolution", "480p"},
                    {"duration", 1},          {"seed", 3}};
    json with = base;
    with["references"] = json::array({json{{"uri", PngUri(64, 64, 9, "deep purple night")}}});
    ScratchDir s1;
    ScratchDir s2;
    const auto a = RunVideo("text_to_video", base, s1);
    const auto b = RunVideo("text_to_video", with, s2);
    CheckOutput(b, {.width = 480, .height = 480, .seconds = 1});
    EXPECT_TRUE(ReadBytes(a.outputs.at(0).file) != ReadBytes(b.outputs.at(0).file));
}

// gen4.5's output formats (its smallest output: 1280x720 for 2 s).
json Gen45(const std::string& format, const std::string& profile = {}) {
    json input{{"model", "gen4.5"}, {"promptText", "city lights"}, {"ratio", "1280:720"},
               {"duration", 2},     {"outputFormat", format},      {"seed", 5}};
    if (!profile.empty()) input["proresProfile"] = profile;
    return input;
}

TEST(BuiltinTextToVideo, ProresInMov) {
    ScratchDir scratch;
    const auto r = RunVideo("text_to_video", Gen45("prores", "422 Proxy"), scratch);
    CheckOutput(r, {.codec = "prores",
                    .extension = "mov",
                    .width = 1280,
                    .height = 720,
                    .seconds = 2,
                    .pixel_format = "yuv422p10le"});
    // The sample description's fourcc names the profile: apco is 422 Proxy.
    EXPECT_NE(ReadBytes(r.outputs.at(0).file).find("apco"), std::string::npos);
}

TEST(BuiltinTextToVideo, PngSequenceZipped) {
    ScratchDir scratch;
    const auto r = RunVideo("text_to_video", Gen45("png_sequence"), scratch);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].suffix, "0.zip");
    const auto entries = media::ReadStoredZip(ReadBytes(r.outputs[0].file));
    ASSERT_EQ(entries.size(), 48u);
    const auto info = media::ProbeMedia(entries.front().data);
    EXPECT_EQ(info.video_codec, "png");
    EXPECT_EQ(info.width, 1280);
    EXPECT_EQ(info.height, 720);
}

TEST(BuiltinTextToVideo, Hdr10AndHlgAreTenBitHevc) {
    for (const auto& [format, transfer] :
         {std::pair{"hdr10", "smpte2084"}, std::pair{"hlg", "arib-std-b67"}}) {
        ScratchDir scratch;
        const auto r = RunVideo("text_to_video", Gen45(format), scratch);
        const auto info = CheckOutput(r, {.codec = "hevc",
                                          .width = 1280,
                                          .height = 720,
                                          .seconds = 2,
                                          .pixel_format = "yuv420p10le"});
        EXPECT_EQ(info.color_transfer, transfer) << format;
        EXPECT_EQ(info.color_primaries, "bt2020") << format;
    }
}

TEST(BuiltinTextToVideo, ExrSequenceZipped) {
    ScratchDir scratch;
    const auto r = RunVideo("text_to_video", Gen45("hdr_exr_sequence"), scratch);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].suffix, "0.zip");
    const auto entries = media::ReadStoredZip(ReadBytes(r.outputs[0].file));
    ASSERT_EQ(entries.size(), 48u);
    EXPECT_EQ(entries.front().data.substr(0, 4), std::string("\x76\x2f\x31\x01", 4));
}

// --- image_to_video -------------------------------------------------------------------------

TEST(BuiltinImageToVideo, AnimatesThePromptImage) {
    ScratchDir scratch;
    const auto r = RunVideo("image_to_video",
                            json{{"model", "gen4_turbo"},
                                 {"promptText", "slow zoom in"},
                                 {"promptImage", PngUri(320, 240)},
                                 {"ratio", "960:960"},
                                 {"duration", 2}},
                            scratch);
    CheckOutput(r, {.width = 960, .height = 960, .seconds = 2});
}

TEST(BuiltinImageToVideo, ResolutionOnlyFollowsTheImageAspect) {
    ScratchDir scratch;  // happyhorse: 720p, aspect of the (portrait) image
    const auto r = RunVideo(
        "image_to_video",
        json{{"model", "happyhorse_1_0"},
             {"promptImage", json::array({json{{"uri", PngUri(180, 320)}, {"position", "first"}}})},
             {"resolution", "720p"},
             {"duration", 3}},
        scratch);
    CheckOutput(r, {.width = 720, .height = 1280, .seconds = 3});
}

TEST(BuiltinImageToVideo, FirstAndLastKeyframesWithAutoRatio) {
    ScratchDir scratch;  // wan3 auto_480p: the 480p ratio closest to the portrait image
    const auto r = RunVideo(
        "image_to_video",
        json{{"model", "wan3"},
             {"promptText", "pan right"},
             {"promptImage", json::array({json{{"uri", PngUri(120, 200, 1)}, {"position", "first"}},
                                          json{{"uri", PngUri(120, 200, 2, "a desert at dusk")},
                                               {"position", "last"}}})},
             {"ratio", "auto_480p"},
             {"duration", 2}},
        scratch);
    CheckOutput(r, {.width = 480, .height = 832, .seconds = 2});
}

TEST(BuiltinImageToVideo, AdaptiveRatioWithReferenceImages) {
    ScratchDir scratch;  // hailuo3: unpositioned images are references; adaptive follows them
    const auto r = RunVideo("image_to_video",
                            json{{"model", "hailuo3"},
                                 {"promptText", "a portrait in soft light"},
                                 {"promptImage", json::array({json{{"uri", PngUri(90, 160, 1)}},
                                                              json{{"uri", PngUri(64, 64, 2)}}})},
                                 {"ratio", "adaptive"},
                                 {"duration", 5}},
                            scratch);
    CheckOutput(r, {.width = 768, .height = 1366, .seconds = 5});
}

TEST(BuiltinImageToVideo, VeoKeyframesWithAudio) {
    ScratchDir scratch;
    const auto r = RunVideo(
        "image_to_video",
        json{
            {"model", "veo3.1_fast"},
            {"promptImage", json::array({json{{"uri", PngUri(160, 90, 1)}, {"position", "first"}},
                                         json{{"uri", PngUri(160, 90, 2)}, {"position", "last"}}})},
            {"ratio", "1280:720"},
            {"duration", 4}},
        scratch);
    CheckOutput(r, {.width = 1280, .height = 720, .seconds = 4, .audio = true});
}

TEST(BuiltinImageToVideo, IsDeterministic) {
    const json input{{"model", "imagine_1_5"}, {"promptImage", PngUri(200, 200)},
                     {"ratio", "1:1"},         {"resolution", "480p"},
                     {"duration", 1},          {"promptText", "tilt up"}};
    ScratchDir s1;
    ScratchDir s2;
    const auto a = RunVideo("image_to_video", input, s1);
    const auto b = RunVideo("image_to_video", input, s2);
    CheckOutput(a, {.width = 480, .height = 480, .seconds = 1});
    EXPECT_TRUE(ReadBytes(a.outputs.at(0).file) == ReadBytes(b.outputs.at(0).file));
}

// --- video_to_video -------------------------------------------------------------------------

TEST(BuiltinVideoToVideo, OmniFlashKeepsDurationAndOrientationAt720p) {
    ScratchDir scratch;
    const auto r = RunVideo("video_to_video",
                            json{{"model", "omni_flash"},
                                 {"videoUri", SmallLandscapeVideo()},
                                 {"promptText", "make it sepia"}},
                            scratch);
    CheckOutput(r, {.width = 1280, .height = 720, .seconds = 1});
}

TEST(BuiltinVideoToVideo, OmniFlashPortraitInputGivesPortraitOutput) {
    ScratchDir scratch;
    const auto r = RunVideo("video_to_video",
                            json{{"model", "omni_flash"},
                                 {"videoUri", Mp4Uri(90, 160, 12)},
                                 {"promptText", "make it blue"}},
                            scratch);
    CheckOutput(r, {.width = 720, .height = 1280, .seconds = 0.5});
}

TEST(BuiltinVideoToVideo, ExtendAppendsTheDuration) {
    ScratchDir scratch;  // 1 s input + 4 s of new footage
    const auto r = RunVideo("video_to_video",
                            json{{"model", "seedance2_5"},
                                 {"promptVideo", SmallLandscapeVideo()},
                                 {"promptText", "the camera keeps moving forward"},
                                 {"mode", "extend"},
                                 {"ratio", "854:480"},
                                 {"audio", false},
                                 {"duration", 4}},
                            scratch);
    CheckOutput(r, {.width = 854, .height = 480, .seconds = 5});
}

TEST(BuiltinVideoToVideo, EditKeepsTheInputDuration) {
    ScratchDir scratch;
    const auto r = RunVideo("video_to_video",
                            json{{"model", "omni_flash_1.1"},
                                 {"videoUri", SmallLandscapeVideo()},
                                 {"promptText", "turn day into night"},
                                 {"mode", "edit"},
                                 {"ratio", "640:360"}},
                            scratch);
    CheckOutput(r, {.width = 640, .height = 360, .seconds = 1});
}

TEST(BuiltinVideoToVideo, ReferenceModeLoopsToTheDurationWithAudio) {
    ScratchDir scratch;
    const auto r = RunVideo("video_to_video",
                            json{{"model", "seedance2_mini"},
                                 {"promptVideo", SmallLandscapeVideo()},
                                 {"promptText", "warm golden light"},
                                 {"ratio", "864:496"},
                                 {"duration", 4}},
                            scratch);
    CheckOutput(r, {.width = 864, .height = 496, .seconds = 4, .audio = true});
}

TEST(BuiltinVideoToVideo, Aleph2KeyframesOutpaintingAndPngSequence) {
    ScratchDir scratch;  // 160x90 input outpainted to 1:1 -> 160x160, as long as the input
    const auto r = RunVideo(
        "video_to_video",
        json{{"model", "aleph2"},
             {"videoUri", SmallLandscapeVideo()},
             {"promptText", "cold blue grade"},
             {"targetAspectRatio", "1:1"},
             {"keyframes", json::array({json{{"uri", PngUri(64, 64, 4)}, {"seconds", 0.5}}})},
             {"outputFormat", "png_sequence"}},
        scratch);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].suffix, "0.zip");
    const auto entries = media::ReadStoredZip(ReadBytes(r.outputs[0].file));
    ASSERT_EQ(entries.size(), 24u);
    const auto info = media::ProbeMedia(entries.front().data);
    EXPECT_EQ(info.width, 160);
    EXPECT_EQ(info.height, 160);
}

TEST(BuiltinVideoToVideo, Aleph2ProresKeepsInputSize) {
    ScratchDir scratch;
    const auto r = RunVideo("video_to_video",
                            json{{"model", "aleph2"},
                                 {"videoUri", SmallLandscapeVideo()},
                                 {"promptText", "film look"},
                                 {"outputFormat", "prores"},
                                 {"proresProfile", "4444"}},
                            scratch);
    CheckOutput(r, {.codec = "prores",
                    .extension = "mov",
                    .width = 160,
                    .height = 90,
                    .seconds = 1,
                    .pixel_format = "yuva444p12le"});  // 4444: alpha present, opaque
    EXPECT_NE(ReadBytes(r.outputs.at(0).file).find("ap4h"), std::string::npos);  // 4444 fourcc
}

TEST(BuiltinVideoToVideo, PromptChangesTheGrade) {
    const json base{{"model", "omni_flash"}, {"videoUri", SmallLandscapeVideo()}, {"seed", 1}};
    json red = base;
    red["promptText"] = "deep red sunset";
    json blue = base;
    blue["promptText"] = "icy blue winter";
    ScratchDir s1;
    ScratchDir s2;
    ScratchDir s3;
    const auto a = RunVideo("video_to_video", red, s1);
    const auto b = RunVideo("video_to_video", blue, s2);
    const auto c = RunVideo("video_to_video", red, s3);
    const std::string bytes = ReadBytes(a.outputs.at(0).file);
    EXPECT_TRUE(bytes != ReadBytes(b.outputs.at(0).file));
    EXPECT_TRUE(bytes == ReadBytes(c.outputs.at(0).file));  // deterministic
}

// --- failures, cancellation -----------------------------------------------------------------

void ExpectAssetInvalid(const std::string& endpoint, const json& input) {
    ScratchDir scratch;
    try {
        RunVideo(endpoint, input, scratch);
        ADD_FAILURE() << "no TaskFailure for " << endpoint;
    } catch (const TaskFailure& e) {
        EXPECT_EQ(e.code(), "ASSET.INVALID") << e.what();
    }
}

TEST(BuiltinVideoFailures, CorruptInputsFailWithAssetInvalid) {
    const std::string garbage(4096, '\x5a');
    ExpectAssetInvalid("image_to_video", json{{"model", "gen4_turbo"},
                                              {"promptImage", DataUri("image/png", garbage)},
                                              {"ratio", "960:960"},
                                              {"duration", 2}});
    ExpectAssetInvalid("video_to_video", json{{"model", "omni_flash"},
                                              {"videoUri", DataUri("video/mp4", garbage)},
                                              {"promptText", "x"}});
    // A truncated MP4.
    const auto full = DecodeDataUri(SmallLandscapeVideo()).value().bytes;
    ExpectAssetInvalid("video_to_video",
                       json{{"model", "omni_flash"},
                            {"videoUri", DataUri("video/mp4", full.substr(0, full.size() / 3))},
                            {"promptText", "x"}});
    ExpectAssetInvalid(
        "text_to_video",
        json{{"model", "imagine_1_5"},
             {"promptText", "x"},
             {"ratio", "1:1"},
             {"resolution", "480p"},
             {"duration", 1},
             {"references", json::array({json{{"uri", DataUri("image/png", garbage)}}})}});
}

TEST(BuiltinVideoFailures, CancelledDuringEncodingLeavesNoOutput) {
    ScratchDir scratch;
    std::atomic<bool> cancelled{false};
    static const DataUriResolver resolver;
    const json input{{"model", "imagine_1_5"},
                     {"promptText", "x"},
                     {"ratio", "1:1"},
                     {"resolution", "480p"},
                     {"duration", 6}};
    int calls = 0;
    TaskContext ctx(
        kTaskId, "text_to_video", "imagine_1_5", input, cancelled,
        [&](double p) {
            ++calls;
            if (p > 0.4) cancelled = true;
        },
        scratch.path(), &resolver);
    BuiltinProvider provider(TheCatalog(), 0);
    EXPECT_THROW(provider.Run(ctx), Cancelled);
    EXPECT_GT(calls, 1);
    for (const auto& entry : std::filesystem::directory_iterator(scratch.path())) {
        ADD_FAILURE() << "left behind: " << entry.path();
    }
}

TEST(BuiltinVideoFailures, WithoutScratchFolderFailsInternal) {
    std::atomic<bool> cancelled{false};
    const json input{{"model", "imagine_1_5"},
                     {"promptText", "x"},
                     {"ratio", "1:1"},
                     {"resolution", "480p"},
                     {"duration", 1}};
    TaskContext ctx(kTaskId, "text_to_video", "imagine_1_5", input, cancelled, [](double) {});
    BuiltinProvider provider(TheCatalog(), 0);
    try {
        provider.Run(ctx);
        FAIL() << "no TaskFailure";
    } catch (const TaskFailure& e) {
        EXPECT_EQ(e.code(), "INTERNAL");
        EXPECT_THAT(e.what(), HasSubstr("scratch"));
    }
}

}  // namespace
}  // namespace genhost::providers
