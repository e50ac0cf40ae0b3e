// The builtin pipelines end to end (issue 5): a real server takes a generation request of each
// endpoint family, the worker runs the pipeline, the task SUCCEEDS, and the signed output URL
// serves a file that libavformat reads as what was asked (container, size, duration, audio).
#include "helpers.hpp"
#include "support/media_fixtures.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/media/image.hpp"

#include <gmock/gmock.h>

#include <cmath>

namespace genhost::testing {
namespace {

using nlohmann::json;

std::string DataUri(const std::string& type, const std::string& bytes) {
    return "data:" + type + ";base64," + Base64Encode(bytes);
}

struct Case {
    std::string name;
    std::string endpoint;
    json body;
    std::string content_type;  // of the first output
    int width = 0;             // 0: not checked
    int height = 0;
    double seconds = 0;  // 0: not checked
    bool audio = false;  // an audio stream is expected
    bool video = true;   // a video (or picture) stream is expected
};

// Media placeholders in the bodies are replaced by data URIs when the test runs (not when every
// process of the http suite lists its tests).
const char kPng[] = "$png";
const char kMp4[] = "$mp4";
const char kWav[] = "$wav";

void FillMedia(json& j) {
    if (j.is_string()) {
        const std::string s = j;
        if (s == kPng) j = DataUri("image/png", MakePng(320, 240));
        if (s == kMp4) j = DataUri("video/mp4", MakeMp4(320, 240, 1.0, 10));
        if (s == kWav) j = DataUri("audio/wav", MakeWav(5.0, 16000));
        if (s == "$mp4long") j = DataUri("video/mp4", MakeMp4(320, 240, 3.0, 10));
    } else if (j.is_structured()) {
        for (auto& v : j) FillMedia(v);
    }
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> Cases() {
    const std::string png = kPng;
    const std::string mp4 = kMp4;
    const std::string wav = kWav;
    return {
        {"TextToVideo", "text_to_video",
         json{{"model", "imagine_1_5"},
              {"promptText", "a red fox running through snow"},
              {"ratio", "16:9"},
              {"resolution", "480p"},
              {"duration", 1}},
         "video/mp4", 854, 480, 1.0},
        {"ImageToVideo", "image_to_video",
         json{{"model", "gen4_turbo"},
              {"promptText", "slow zoom in"},
              {"promptImage", png},
              {"ratio", "960:960"},
              {"duration", 2}},
         "video/mp4", 960, 960, 2.0},
        {"VideoToVideo", "video_to_video",
         json{{"model", "omni_flash"}, {"promptText", "make it snow"}, {"videoUri", mp4}},
         "video/mp4", 1280, 720, 1.0},
        {"ImageUpscale", "image_upscale",
         json{{"model", "upscale_precision_upscaler_v2"}, {"imageUri", png}, {"scaleFactor", 2}},
         "image/png", 640, 480},
        {"SoundEffect", "sound_effect",
         json{{"model", "voice_text_to_sound_v2"},
              {"promptText", "a door creaks open"},
              {"duration", 1}},
         "", 0, 0, 1.0, true, false},
        {"TextToSpeech", "text_to_speech",
         json{{"model", "voice_multilingual_v2"},
              {"promptText", "Hello there."},
              {"voice", {{"type", "service-preset"}, {"presetId", "Maya"}}}},
         "", 0, 0, 0, true, false},
        {"VoiceIsolation", "voice_isolation", json{{"model", "voice_isolation"}, {"audioUri", wav}},
         "", 0, 0, 5.0, true, false},
        {"SpeechToSpeech", "speech_to_speech",
         json{{"model", "voice_multilingual_sts_v2"},
              {"media", {{"type", "audio"}, {"uri", wav}}},
              {"voice", {{"type", "service-preset"}, {"presetId", "Maya"}}}},
         "", 0, 0, 5.0, true, false},
        {"VoiceDubbing", "voice_dubbing",
         json{{"model", "voice_dubbing"}, {"audioUri", wav}, {"targetLang", "es"}}, "", 0, 0, 5.0,
         true, false},
        {"VideoUpscale", "video_upscale",
         json{{"model", "upscale_video_upscaler_creative"},
              {"videoUri", mp4},
              {"resolution", "720p"}},
         "video/mp4", 1280, 960, 1.0},
        {"VideoToHdr", "video_to_hdr",
         json{{"model", "ruby"}, {"videoUri", mp4}, {"outputFormat", "hdr10"}}, "", 320, 240, 1.0},
        {"CharacterPerformance", "character_performance",
         json{{"model", "act_two"},
              {"character", {{"type", "image"}, {"uri", png}}},
              {"reference", {{"type", "video"}, {"uri", "$mp4long"}}},
              {"ratio", "832:1104"}},
         "video/mp4", 832, 1104, 3.0},
        {"AvatarVideos", "avatar_videos",
         json{{"model", "gwm1_avatars"},
              {"avatar", {{"type", "service-preset"}, {"presetId", "cooking-teacher"}}},
              {"speech", {{"type", "audio"}, {"audio", wav}}}},
         "video/mp4", 1280, 720, 5.0, true},
    };
}

class Pipelines : public ::testing::TestWithParam<Case> {
  protected:
    static void SetUpTestSuite() {
        db_ = new TestDatabase();
        server_ = new ServerProcess(db_->dsn(), {{"GENHOST_LATENCY_SCALE", "0"}});
        server_->Start();
    }
    static void TearDownTestSuite() {
        delete server_;
        delete db_;
    }
    static TestDatabase* db_;
    static ServerProcess* server_;
};
TestDatabase* Pipelines::db_ = nullptr;
ServerProcess* Pipelines::server_ = nullptr;

TEST_P(Pipelines, MakeWhatWasAsked) {
    const Case& c = GetParam();
    HttpClient client("127.0.0.1", server_->port());
    json body = c.body;
    FillMedia(body);
    const auto created = client.Send("POST", "/v1/" + c.endpoint, AuthHeaders(), body.dump());
    ASSERT_EQ(created.status, 200) << created.body;
    const std::string id = created.Json()["id"];
    const auto task =
        WaitForStatus(client, id, {"SUCCEEDED", "FAILED", "CANCELLED"}, std::chrono::seconds(240));
    ASSERT_EQ(task["status"], "SUCCEEDED") << task.dump() << "\n" << server_->Log();
    ASSERT_TRUE(task["output"].is_array());
    ASSERT_GE(task["output"].size(), 1u);

    const auto file = client.Send("GET", PathOf(task["output"][0]), {});
    ASSERT_EQ(file.status, 200);
    if (!c.content_type.empty()) EXPECT_EQ(file.Header("content-type"), c.content_type);
    EXPECT_EQ(file.Header("content-length"), std::to_string(file.body.size()));
    const media::MediaInfo info = media::ProbeMedia(file.body);
    if (c.video) EXPECT_FALSE(info.video_codec.empty()) << info.container;
    if (c.width > 0) {
        EXPECT_EQ(info.width, c.width);
        EXPECT_EQ(info.height, c.height);
    }
    if (c.seconds > 0) EXPECT_NEAR(info.duration_seconds, c.seconds, 0.1);
    if (c.audio) {
        EXPECT_FALSE(info.audio_codec.empty()) << info.container;
        EXPECT_GT(info.sample_rate, 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Builtin, Pipelines, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace genhost::testing
