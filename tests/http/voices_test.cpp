// Custom voices against a real server (docs/voices.md): a voice is PROCESSING, then READY with
// a preview genhost serves; avatar_videos speaks with a custom voice's own pitch; a voice that is
// not READY, another organization's or unknown is refused at its path; previews of the same
// description are the same file; bad bodies get every issue.
#include "helpers.hpp"

#include "support/media_fixtures.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/media/audio.hpp"
#include "genhost/media/voice_profile.hpp"

#include <gmock/gmock.h>
#include <pqxx/pqxx>

#include <cmath>
#include <filesystem>

namespace genhost::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class VoicesApi : public ServerSuite<VoicesApi> {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "0"}}); }

    HttpResponse Send(const std::string& method, const std::string& path,
                      const nlohmann::json& body = nullptr, const std::string& key = kTestKey) {
        return client_.Send(method, path, AuthHeaders(key), body.is_null() ? "" : body.dump());
    }

    // Settled polls voice `id` until it is not PROCESSING (30 s at most).
    nlohmann::json Settled(const std::string& id, const std::string& key = kTestKey) {
        nlohmann::json last;
        for (int i = 0; i < 600; ++i) {
            last = Send("GET", "/v1/voices/" + id, nullptr, key).Json();
            if (last.value("status", "") != "PROCESSING") break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return last;
    }

    std::string Designed(const std::string& prompt, const std::string& key = kTestKey) {
        const auto r =
            Send("POST", "/v1/voices",
                 {{"name", "Designed"},
                  {"from", {{"type", "text"}, {"model", "voice_ttv_v3"}, {"prompt", prompt}}}},
                 key);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.Json()["id"];
    }

    double TargetF0(const std::string& voice_id) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        const auto r = n.exec("SELECT profile::text FROM voices WHERE id = '" + voice_id + "'");
        return media::ProfileTargetF0(
            media::ProfileFromJson(nlohmann::json::parse(r[0][0].as<std::string>())));
    }

    // SpokenPitch makes an avatar video speaking `text` with `voice` and measures its audio's F0.
    double SpokenPitch(const nlohmann::json& voice) {
        const nlohmann::json request = {
            {"model", "gwm1_avatars"},
            {"avatar", {{"type", "service-preset"}, {"presetId", "game-character"}}},
            {"speech",
             {{"type", "text"},
              {"text",
               "Every morning the baker opens his shop before sunrise, and people line up."},
              {"voice", voice}}}};
        const auto r = Send("POST", "/v1/avatar_videos", request);
        EXPECT_EQ(r.status, 200) << r.body;
        const auto task = WaitForStatus(client_, r.Json()["id"], {"SUCCEEDED", "FAILED"});
        EXPECT_EQ(task["status"], "SUCCEEDED") << task.dump();
        const auto video = client_.Send("GET", PathOf(task["output"][0]));
        const fs::path file = fs::path(server_->data_dir()) / ("pitch-" + NewUuid() + ".mp4");
        std::ofstream(file, std::ios::binary) << video.body;
        media::AudioReadOptions read;
        read.sample_rate = 16000;
        const double f0 = media::EstimatePitch(media::ReadAudio(file.string(), read));
        fs::remove(file);
        return f0;
    }

    HttpClient client_ = Client();
};

TEST_F(VoicesApi, ADesignedVoiceIsReadyWithAPreviewGenhostServes) {
    const auto made = Send("POST", "/v1/voices",
                           {{"name", "Guide"},
                            {"description", "Museum tours"},
                            {"from",
                             {{"type", "text"},
                              {"model", "voice_multilingual_ttv_v2"},
                              {"prompt", "A friendly middle-aged German woman, calm pace"}}}});
    ASSERT_EQ(made.status, 200) << made.body;
    const auto body = made.Json();
    EXPECT_EQ(body.size(), 1u) << made.body;  // {id} only
    const auto voice = Settled(body["id"]);
    ASSERT_EQ(voice["status"], "READY") << voice.dump();
    EXPECT_EQ(voice["name"], "Guide");
    EXPECT_EQ(voice["description"], "Museum tours");
    const auto preview = client_.Send("GET", PathOf(voice["previewUrl"]));
    ASSERT_EQ(preview.status, 200);
    EXPECT_EQ(preview.Header("content-type"), "audio/mpeg");
    EXPECT_GT(preview.body.size(), 10000u);
}

TEST_F(VoicesApi, AvatarVideosSpeakWithTheCustomVoicesPitch) {
    const std::string low = Designed("A very deep, low voice of an old man, slow and calm");
    const std::string high = Designed("A high, squeaky voice of a young girl, fast and bright");
    const auto low_voice = Settled(low);
    const auto high_voice = Settled(high);
    ASSERT_EQ(low_voice["status"], "READY") << low_voice.dump() << server_->Log();
    ASSERT_EQ(high_voice["status"], "READY") << high_voice.dump() << server_->Log();
    const double low_f0 = SpokenPitch({{"type", "custom"}, {"id", low}});
    const double high_f0 = SpokenPitch({{"type", "custom"}, {"id", high}});
    EXPECT_LT(std::abs(12 * std::log2(low_f0 / TargetF0(low))), 2.5) << low_f0;
    EXPECT_LT(std::abs(12 * std::log2(high_f0 / TargetF0(high))), 2.5) << high_f0;
    EXPECT_GT(high_f0, low_f0 * 1.5);
}

TEST_F(VoicesApi, VoicesNotReadyForeignOrUnknownAreRefusedAtTheirPath) {
    // A tone is not speech: the voice ends FAILED with the reason.
    const auto toned = Send(
        "POST", "/v1/voices",
        {{"name", "Tone"},
         {"from",
          {{"type", "audio"}, {"audio", "data:audio/wav;base64," + Base64Encode(MakeWav(5))}}}});
    ASSERT_EQ(toned.status, 200) << toned.body;
    const auto failed = Settled(toned.Json()["id"]);
    EXPECT_EQ(failed["status"], "FAILED");
    EXPECT_EQ(failed["failureReason"], "The sample holds no speech");
    EXPECT_FALSE(failed.contains("previewUrl"));

    const std::string other = CreateKey(*server_, "voices-other");
    const std::string theirs = Designed("A calm low voice of a middle-aged man", other);
    EXPECT_EQ(Send("GET", "/v1/voices/" + theirs).status, 404);
    EXPECT_EQ(Send("PATCH", "/v1/voices/" + theirs, nlohmann::json::object()).status, 404);
    EXPECT_EQ(Send("DELETE", "/v1/voices/" + theirs).status, 404);

    const auto speak = [&](const std::string& id) {
        return Send(
            "POST", "/v1/avatar_videos",
            {{"model", "gwm1_avatars"},
             {"avatar", {{"type", "service-preset"}, {"presetId", "game-character"}}},
             {"speech",
              {{"type", "text"}, {"text", "Hi"}, {"voice", {{"type", "custom"}, {"id", id}}}}}});
    };
    const std::string failed_id = failed["id"];
    for (const std::string& id :
         std::vector<std::string>{failed_id, theirs, "182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e"}) {
        const auto r = speak(id);
        ASSERT_EQ(r.status, 400) << r.body;
        EXPECT_EQ(r.Json()["issues"][0]["path"], nlohmann::json::array({"speech", "voice", "id"}));
    }
    EXPECT_THAT(speak(failed_id).body, HasSubstr("The voice is FAILED"));
}

TEST_F(VoicesApi, PreviewsOfOneDescriptionAreOneFileAndBadBodiesGetEveryIssue) {
    const nlohmann::json ask = {{"model", "voice_ttv_v3"},
                                {"prompt", "An energetic young Australian man, quick"}};
    const auto a = Send("POST", "/v1/voices/preview", ask);
    const auto b = Send("POST", "/v1/voices/preview", ask);
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_EQ(PathOf(a.Json()["url"]).substr(0, 60), PathOf(b.Json()["url"]).substr(0, 60));
    EXPECT_EQ(a.Json()["durationSecs"], b.Json()["durationSecs"]);
    EXPECT_GT(a.Json()["durationSecs"].get<double>(), 2);

    auto r = Send("POST", "/v1/voices/preview", {{"model", "eleven_ttv_v3"}, {"prompt", "short"}});
    ASSERT_EQ(r.status, 400);
    std::vector<std::string> paths;
    const auto refused = r.Json();
    for (const auto& i : refused["issues"]) paths.push_back(i["path"].dump());
    EXPECT_THAT(paths, ElementsAre(R"(["model"])", R"(["prompt"])"));
    r = Send("POST", "/v1/voices", {{"from", {{"type", "audio"}, {"audio", "ftp://x"}}}});
    ASSERT_EQ(r.status, 400);
    EXPECT_EQ(Send("POST", "/v1/voices",
                   {{"name", "x"},
                    {"from", {{"type", "audio"}, {"audio", "data:audio/wav;base64,AAAA"}}}})
                  .status,
              400);
    EXPECT_EQ(Send("GET", "/v1/voices?limit=0").status, 400);
    EXPECT_EQ(client_.Send("GET", "/v1/voices").status, 401);
}

}  // namespace
}  // namespace genhost::testing
