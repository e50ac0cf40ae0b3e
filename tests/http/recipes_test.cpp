// The seven recipes (CLIENTS.md 3.4, docs/recipes.md) end to end through a real server: each is
// created, polled to SUCCEEDED, and every output is downloaded and read with libavformat: the
// final media (durations within a frame or two, sizes, audio streams, image counts), each
// step's media and the steps.json manifest that lists them. Then bad input: a missing version,
// custom shots that do not add up, an unknown field, a reference video too short, an unknown
// recipe; and a recipe's price.
#include "helpers.hpp"
#include "support/media_fixtures.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/media/image.hpp"

#include <gmock/gmock.h>

#include <set>

namespace genhost::testing {
namespace {

using nlohmann::json;

constexpr double kFrame = 1.0 / 24;

class Recipes : public ServerSuite<Recipes> {
  public:
    static unsigned short Port() { return server_->port(); }

  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "0"}}); }
};

std::string Png(int w, int h) { return "data:image/png;base64," + Base64Encode(MakePng(w, h)); }

json Image(int w, int h) { return {{"uri", Png(w, h)}}; }

// Ran is a finished recipe: its outputs by their name's suffix (the manifest's names), in order.
struct Ran {
    json task;
    json manifest;
    std::vector<std::pair<std::string, std::string>> files;  // suffix, bytes

    const std::string& File(const std::string& suffix) const {
        for (const auto& [name, bytes] : files) {
            if (name == suffix) return bytes;
        }
        throw std::runtime_error("no output " + suffix);
    }
    std::vector<std::string> Finals() const {
        std::vector<std::string> out;
        for (const auto& f : manifest["final"]) out.push_back(f.get<std::string>());
        return out;
    }
    media::MediaInfo Probe(const std::string& suffix) const {
        return media::ProbeMedia(File(suffix));
    }
    // StepOutputs lists the files of the steps whose name starts with `prefix`.
    std::vector<std::string> StepOutputs(const std::string& prefix) const {
        std::vector<std::string> out;
        for (const auto& step : manifest["steps"]) {
            if (step["name"].get<std::string>().rfind(prefix, 0) != 0) continue;
            for (const auto& o : step["outputs"]) out.push_back(o["file"]);
        }
        return out;
    }
};

Ran RunRecipe(const std::string& recipe, const json& body) {
    HttpClient client("127.0.0.1", Recipes::Port());
    const auto created = client.Send("POST", "/v1/recipes/" + recipe, AuthHeaders(), body.dump());
    EXPECT_EQ(created.status, 200) << created.body;
    Ran ran;
    if (created.status != 200) return ran;
    EXPECT_GT(created.Json()["estimatedCost"]["credits"].get<double>(), 0);
    ran.task = WaitForStatus(client, created.Json()["id"], {"SUCCEEDED", "FAILED", "CANCELLED"},
                             std::chrono::seconds(240));
    EXPECT_EQ(ran.task["status"], "SUCCEEDED") << ran.task.dump();
    if (ran.task["status"] != "SUCCEEDED") return ran;
    for (const auto& url : ran.task["output"]) {
        const auto file = client.Send("GET", PathOf(url), {});
        EXPECT_EQ(file.status, 200) << url;
        std::string name = PathOf(url);
        name = name.substr(0, name.find('?'));
        name = name.substr(name.rfind('/') + 1);
        ran.files.emplace_back(name, file.body);
    }
    // The manifest is the last output; every output's name ends with the suffix it lists.
    EXPECT_THAT(ran.files.back().first, ::testing::EndsWith("steps.json"));
    ran.manifest = json::parse(ran.files.back().second);
    EXPECT_EQ(ran.manifest["recipe"], recipe);
    EXPECT_EQ(ran.manifest["outputs"].size(), ran.files.size());
    for (std::size_t i = 0; i < ran.files.size() && i < ran.manifest["outputs"].size(); ++i) {
        const std::string suffix = ran.manifest["outputs"][i];
        EXPECT_THAT(ran.files[i].first, ::testing::EndsWith(suffix));
        ran.files[i].first = suffix;
    }
    // Every step's files are outputs, and every output but the manifest belongs to a step.
    std::set<std::string> listed;
    for (const auto& step : ran.manifest["steps"]) {
        EXPECT_TRUE(step.contains("endpoint") || step.contains("operation")) << step.dump();
        for (const auto& o : step["outputs"]) listed.insert(o["file"].get<std::string>());
    }
    for (std::size_t i = 0; i + 1 < ran.files.size(); ++i) {
        EXPECT_TRUE(listed.count(ran.files[i].first)) << ran.files[i].first;
        EXPECT_NO_THROW(media::ProbeMedia(ran.files[i].second)) << ran.files[i].first;
    }
    return ran;
}

void ExpectVideo(const media::MediaInfo& info, int width, int height, double seconds, bool audio) {
    EXPECT_EQ(info.video_codec, "h264");
    EXPECT_EQ(info.width, width);
    EXPECT_EQ(info.height, height);
    EXPECT_NEAR(info.frame_rate, 24.0, 0.01);
    EXPECT_NEAR(info.duration_seconds, seconds, 2 * kFrame);
    EXPECT_EQ(info.audio_codec.empty(), !audio) << info.audio_codec;
}

TEST_F(Recipes, MultiShotVideoAutoMakesFiveShotsJoinedWithSound) {
    const Ran ran =
        RunRecipe("multi_shot_video",
                  {{"mode", "auto"},
                   {"prompt", "A fox wakes. It runs to the river. It drinks. The sun sets."},
                   {"version", "2026-06"},
                   {"duration", 5},
                   {"audio", true}});
    ASSERT_EQ(ran.Finals().size(), 1u);
    ExpectVideo(ran.Probe(ran.Finals()[0]), 1280, 720, 5, true);
    const auto shots = ran.StepOutputs("shot_");
    ASSERT_EQ(shots.size(), 5u);
    double sum = 0;
    for (const auto& s : shots) {
        const auto info = ran.Probe(s);
        EXPECT_EQ(info.width, 1280);
        EXPECT_TRUE(info.audio_codec.empty());
        sum += info.duration_seconds;
    }
    EXPECT_NEAR(sum, 5, 5 * kFrame);
    ASSERT_EQ(ran.StepOutputs("soundtrack").size(), 1u);
    EXPECT_FALSE(ran.Probe(ran.StepOutputs("soundtrack")[0]).audio_codec.empty());
    EXPECT_EQ(ran.manifest["steps"][0]["endpoint"], "text_to_video");
    EXPECT_THAT(ran.manifest["steps"][0]["inputs"]["promptText"].get<std::string>(),
                ::testing::StartsWith("Establishing wide shot: A fox wakes."));
}

TEST_F(Recipes, MultiShotVideoCustomMakesTheShotsGiven) {
    const Ran ran =
        RunRecipe("multi_shot_video", {{"mode", "custom"},
                                       {"shots",
                                        {{{"prompt", "a door opens"}, {"duration", 1.5}},
                                         {{"prompt", "a cat walks in"}, {"duration", 2}},
                                         {{"prompt", "the cat sleeps"}, {"duration", 1.5}}}},
                                       {"version", "unsafe-latest"},
                                       {"duration", 5},
                                       {"ratio", "720:1280"},
                                       {"firstFrame", Image(360, 640)}});
    ASSERT_EQ(ran.Finals().size(), 1u);
    ExpectVideo(ran.Probe(ran.Finals()[0]), 720, 1280, 5, false);
    const auto shots = ran.StepOutputs("shot_");
    ASSERT_EQ(shots.size(), 3u);
    EXPECT_NEAR(ran.Probe(shots[0]).duration_seconds, 1.5, kFrame);
    EXPECT_NEAR(ran.Probe(shots[1]).duration_seconds, 2.0, kFrame);
    EXPECT_EQ(ran.manifest["steps"][0]["endpoint"], "image_to_video");
    EXPECT_EQ(ran.manifest["steps"][0]["inputs"]["promptImage"], "request /firstFrame/uri");
    EXPECT_EQ(ran.manifest["steps"][1]["endpoint"], "text_to_video");
    EXPECT_TRUE(ran.StepOutputs("soundtrack").empty());
}

TEST_F(Recipes, ProductAdBuildsAShotAroundEachProductImage) {
    const Ran ran = RunRecipe("product_ad", {{"productImages", {Image(400, 400), Image(300, 400)}},
                                             {"styleImages", {Image(200, 200)}},
                                             {"version", "2026-07"},
                                             {"duration", 4},
                                             {"ratio", "960:960"},
                                             {"productInfo", "a ceramic mug"}});
    ASSERT_EQ(ran.Finals().size(), 1u);
    ExpectVideo(ran.Probe(ran.Finals()[0]), 960, 960, 4, false);
    const auto shots = ran.StepOutputs("shot_");
    ASSERT_EQ(shots.size(), 2u);
    for (const auto& s : shots) EXPECT_NEAR(ran.Probe(s).duration_seconds, 2, kFrame);
    const auto& first = ran.manifest["steps"][0];
    EXPECT_EQ(first["endpoint"], "image_to_video");
    EXPECT_EQ(first["inputs"]["promptImage"][0]["uri"], "request /productImages/0/uri");
    EXPECT_EQ(first["inputs"]["promptImage"][1]["uri"], "request /styleImages/0/uri");
    EXPECT_EQ(ran.manifest["steps"][1]["inputs"]["promptImage"][0]["uri"],
              "request /productImages/1/uri");
}

TEST_F(Recipes, ProductSwapPutsTheNewProductIntoTheReferenceVideo) {
    const std::string video = "data:video/mp4;base64," + Base64Encode(MakeMp4(320, 180, 2.0));
    const Ran ran = RunRecipe("product_swap",
                              {{"newProductImages", {{{"uri", Png(200, 300)}, {"view", "front"}}}},
                               {"originalProductImage", Image(100, 100)},
                               {"referenceVideo", {{"uri", video}}},
                               {"version", "2026-06"},
                               {"duration", 4},
                               {"audio", true}});
    ASSERT_EQ(ran.Finals().size(), 1u);
    // The reference's length (under `duration`) and aspect, at 720p, with a soundtrack.
    ExpectVideo(ran.Probe(ran.Finals()[0]), 1280, 720, 2, true);
    ASSERT_EQ(ran.StepOutputs("restyle").size(), 1u);
    EXPECT_EQ(ran.manifest["steps"][0]["endpoint"], "video_to_video");
    ASSERT_EQ(ran.StepOutputs("locate").size(), 1u);
    ASSERT_EQ(ran.StepOutputs("cutout").size(), 1u);
    EXPECT_EQ(ran.Probe(ran.StepOutputs("cutout")[0]).video_codec, "png");
}

TEST_F(Recipes, ProductUgcMakesACharacterVideoWithTheProductAndAVoiceover) {
    const Ran ran = RunRecipe("product_ugc", {{"characterImage", Image(360, 640)},
                                              {"productImage", Image(300, 300)},
                                              {"version", "2026-06"},
                                              {"duration", 4},
                                              {"audio", true},
                                              {"productInfo", "water bottle"}});
    ASSERT_EQ(ran.Finals().size(), 1u);
    ExpectVideo(ran.Probe(ran.Finals()[0]), 720, 1280, 4, true);
    ASSERT_EQ(ran.StepOutputs("voiceover").size(), 1u);
    const auto voice = ran.Probe(ran.StepOutputs("voiceover")[0]);
    EXPECT_EQ(voice.audio_codec, "mp3");
    EXPECT_TRUE(voice.video_codec.empty());
    EXPECT_EQ(ran.manifest["steps"][0]["endpoint"], "image_to_video");
}

TEST_F(Recipes, AdLocalizationDrawsTheLocalizedLine) {
    const Ran ran = RunRecipe(
        "ad_localization",
        {{"referenceImage", Image(640, 360)}, {"targetLanguage", "de"}, {"version", "2026-06"}});
    ASSERT_EQ(ran.Finals().size(), 1u);
    const auto info = ran.Probe(ran.Finals()[0]);
    EXPECT_EQ(info.video_codec, "png");
    EXPECT_EQ(info.width, 640);
    EXPECT_EQ(info.height, 360);
    ASSERT_EQ(ran.StepOutputs("clear_text").size(), 1u);
    EXPECT_NE(ran.File(ran.Finals()[0]), ran.File(ran.StepOutputs("clear_text")[0]));
    const auto& caption = ran.manifest["steps"][1];
    EXPECT_EQ(caption["inputs"]["targetLanguage"], "de");
    EXPECT_EQ(caption["inputs"]["text"], "Jetzt entdecken");
}

TEST_F(Recipes, MarketingStockImageMakesOutputCountImages) {
    const Ran ran =
        RunRecipe("marketing_stock_image", {{"prompt", "a runner at dawn, for Instagram"},
                                            {"version", "2026-06"},
                                            {"outputCount", 2},
                                            {"quality", "low"}});
    ASSERT_EQ(ran.Finals().size(), 2u);
    for (const auto& f : ran.Finals()) {
        const auto info = ran.Probe(f);
        EXPECT_EQ(info.video_codec, "png");
        EXPECT_EQ(info.width, 1920);
        EXPECT_EQ(info.height, 1088);
    }
    EXPECT_EQ(ran.files.size(), 3u);  // the two images and steps.json
    EXPECT_EQ(ran.manifest["steps"][0]["model"], "image_gen_2");
}

TEST_F(Recipes, ProductCampaignImageMakesFourImagesOfTheProduct) {
    const Ran ran = RunRecipe(
        "product_campaign_image",
        {{"image", Image(300, 300)}, {"prompt", "summer, playful"}, {"version", "2026-06"}});
    ASSERT_EQ(ran.Finals().size(), 4u);
    const std::vector<std::pair<int, int>> sizes = {
        {1080, 1080}, {1080, 1440}, {1440, 1080}, {1920, 1080}};
    for (std::size_t i = 0; i < 4; ++i) {
        const auto info = ran.Probe(ran.Finals()[i]);
        EXPECT_EQ(info.video_codec, "png");
        EXPECT_EQ(std::pair(info.width, info.height), sizes[i]);
    }
    EXPECT_EQ(ran.StepOutputs("background_").size(), 4u);
    EXPECT_EQ(ran.StepOutputs("cutout").size(), 1u);
}

json Issues(const HttpResponse& r) { return r.Json()["issues"]; }

TEST_F(Recipes, BadInputIsA400WithItsIssues) {
    HttpClient client("127.0.0.1", Port());
    const auto no_version = client.Send("POST", "/v1/recipes/product_campaign_image", AuthHeaders(),
                                        json{{"image", Image(64, 64)}, {"prompt", "x"}}.dump());
    ASSERT_EQ(no_version.status, 400) << no_version.body;
    ASSERT_EQ(Issues(no_version).size(), 1u);
    EXPECT_EQ(Issues(no_version)[0]["path"], json::array({"version"}));
    EXPECT_TRUE(no_version.Json().contains("docUrl"));

    const auto sum = client.Send("POST", "/v1/recipes/multi_shot_video", AuthHeaders(),
                                 json{{"mode", "custom"},
                                      {"shots",
                                       {{{"prompt", "a"}, {"duration", 3}},
                                        {{"prompt", "b"}, {"duration", 3}},
                                        {{"prompt", "c"}, {"duration", 3}}}},
                                      {"version", "2026-06"}}
                                     .dump());
    ASSERT_EQ(sum.status, 400) << sum.body;
    ASSERT_EQ(Issues(sum).size(), 1u);
    EXPECT_EQ(Issues(sum)[0]["path"], json::array({"shots"}));
    EXPECT_EQ(Issues(sum)[0]["code"], "custom");

    const auto few = client.Send(
        "POST", "/v1/recipes/multi_shot_video", AuthHeaders(),
        json{{"mode", "custom"},
             {"shots", {{{"prompt", "a"}, {"duration", 5}}, {{"prompt", "b"}, {"duration", 5}}}},
             {"version", "2026-06"}}
            .dump());
    ASSERT_EQ(few.status, 400);
    EXPECT_EQ(Issues(few)[0]["path"], json::array({"shots"}));

    const auto unknown = client.Send("POST", "/v1/recipes/ad_localization", AuthHeaders(),
                                     json{{"referenceImage", Image(64, 64)},
                                          {"targetLanguage", "fr"},
                                          {"version", "2026-07"},
                                          {"model", "x"}}
                                         .dump());
    ASSERT_EQ(unknown.status, 400);
    std::set<std::string> codes;
    for (const auto& issue : Issues(unknown)) codes.insert(issue["code"]);
    EXPECT_THAT(codes, ::testing::UnorderedElementsAre("invalid_enum_value", "unrecognized_keys"));

    const std::string short_video = "data:video/mp4;base64," + Base64Encode(MakeMp4(160, 90, 1));
    const auto too_short = client.Send("POST", "/v1/recipes/product_swap", AuthHeaders(),
                                       json{{"newProductImages", {Image(64, 64)}},
                                            {"originalProductImage", Image(64, 64)},
                                            {"referenceVideo", {{"uri", short_video}}},
                                            {"version", "2026-06"}}
                                           .dump());
    ASSERT_EQ(too_short.status, 400) << too_short.body;
    EXPECT_EQ(Issues(too_short)[0]["path"], json::array({"referenceVideo", "uri"}));

    const auto missing = client.Send("POST", "/v1/recipes/product_dance", AuthHeaders(), "{}");
    EXPECT_EQ(missing.status, 404);
}

TEST_F(Recipes, AreBilledByTheirCatalogPrice) {
    HttpClient client("127.0.0.1", Port());
    const auto created = client.Send("POST", "/v1/recipes/multi_shot_video", AuthHeaders(),
                                     json{{"mode", "auto"},
                                          {"prompt", "rain"},
                                          {"version", "2026-06"},
                                          {"ratio", "1920:1080"},
                                          {"audio", true}}
                                         .dump());
    ASSERT_EQ(created.status, 200) << created.body;
    // 20 per second at the pro tier, 10 s by default, +25 % with audio.
    EXPECT_EQ(created.Json()["estimatedCost"]["credits"], 250);
    const std::string id = created.Json()["id"];
    const auto task = client.Send("GET", "/v1/tasks/" + id, AuthHeaders());
    EXPECT_EQ(task.status, 200);
    client.Send("DELETE", "/v1/tasks/" + id, AuthHeaders());
    const auto stock =
        client.Send("POST", "/v1/recipes/marketing_stock_image", AuthHeaders(),
                    json{{"prompt", "x"}, {"version", "2026-06"}, {"quality", "medium"}}.dump());
    ASSERT_EQ(stock.status, 200);
    EXPECT_EQ(stock.Json()["estimatedCost"]["credits"], 24);  // 4 images at 6
    client.Send("DELETE", "/v1/tasks/" + stock.Json()["id"].get<std::string>(), AuthHeaders());
}

}  // namespace
}  // namespace genhost::testing
