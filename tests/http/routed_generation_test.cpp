// Routed generation against a real server (docs/routers.md): a dry run answers what the real
// call then does; the task is an ordinary task of the chosen model; bad input, unknown and
// deleted routers, and requests no model can serve get their 400 and 404; the decision log lists
// every call with its pipeline; with fallback.onCapacity a model at the organization's
// concurrency limit is skipped for the next one, and when all are, the task really queues
// THROTTLED.
#include "helpers.hpp"
#include "support/media_fixtures.hpp"

#include "genhost/core/crypto.hpp"

#include <gmock/gmock.h>

namespace genhost::testing {
namespace {

using nlohmann::json;

class RoutedBase {
  protected:
    static HttpResponse Send(HttpClient& c, const std::string& method, const std::string& path,
                             const json& body, const std::string& key) {
        return c.Send(method, path, AuthHeaders(key), body.is_null() ? "" : body.dump());
    }

    static json MakeRouter(HttpClient& c, const std::string& key, const json& body) {
        const auto r = Send(c, "POST", "/v1/routers", body, key);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.Json();
    }

    static json Log(HttpClient& c, const std::string& key, const std::string& router_id,
                    const std::string& query = "") {
        const auto r =
            Send(c, "GET", "/v1/routers/" + router_id + "/requests" + query, nullptr, key);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.Json();
    }

    static std::vector<std::string> Paths(const json& error) {
        std::vector<std::string> out;
        for (const auto& i : error["issues"]) out.push_back(i["path"].dump());
        return out;
    }
};

class RoutedGeneration : public ServerSuite<RoutedGeneration>, public RoutedBase {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "0"}}); }
    HttpClient c_ = Client();
};

TEST_F(RoutedGeneration, ADryRunAnswersWhatTheRealCallDoes) {
    const auto router = MakeRouter(c_, kTestKey, {{"slug", "images"}});
    const json input = {{"promptText", "a lighthouse at dusk"}, {"aspectRatio", "16:9"}};
    const auto dry = Send(c_, "POST", "/v1/generate/image",
                          {{"configId", "images"}, {"dryRun", true}, {"input", input}}, kTestKey);
    ASSERT_EQ(dry.status, 200) << dry.body;
    const auto d = dry.Json();
    EXPECT_EQ(d["dryRun"], true);
    EXPECT_FALSE(d.contains("id"));
    EXPECT_EQ(d["routing"]["configId"], "images");
    EXPECT_EQ(d["routing"]["resolvedSettings"],
              json({{"optimizeFor", "cost"}, {"priceCeiling", nullptr}}));
    EXPECT_EQ(d["routing"]["resolvedInput"]["aspectRatio"], "16:9");
    EXPECT_THAT(d["routing"]["resolvedInput"]["resolution"].get<std::string>(),
                ::testing::AnyOf("1k", "2k", "4k"));
    EXPECT_FALSE(d["routing"].contains("capacityFallback"));

    const auto real = Send(c_, "POST", "/v1/generate/image",
                           {{"configId", "images"}, {"input", input}}, kTestKey);
    ASSERT_EQ(real.status, 200) << real.body;
    const auto r = real.Json();
    EXPECT_EQ(r["dryRun"], false);
    EXPECT_EQ(r["routing"], d["routing"]);
    // An ordinary task of the chosen model, at its price and in the resolved ratio.
    const auto task = WaitForStatus(c_, r["id"], {"SUCCEEDED", "FAILED"}, std::chrono::seconds(60));
    ASSERT_EQ(task["status"], "SUCCEEDED") << task.dump();
    EXPECT_EQ(task["estimatedCost"], r["routing"]["estimatedCost"]);
    const auto png = c_.Send("GET", PathOf(task["output"][0]), {});
    ASSERT_EQ(png.status, 200);
    const auto [w, h] = PngSize(png.body);
    int rw = 0, rh = 0;
    ParseRatioForTest(r["routing"]["resolvedInput"]["ratio"], rw, rh);
    EXPECT_EQ(w, rw);
    EXPECT_EQ(h, rh);

    // Both are in the log, newest first, the real one with its task.
    const auto log = Log(c_, kTestKey, router["id"]);
    ASSERT_EQ(log["data"].size(), 2u) << log.dump();
    const auto& newest = log["data"][0];
    EXPECT_EQ(newest["status"], "routed");
    EXPECT_EQ(newest["dryRun"], false);
    EXPECT_EQ(newest["taskId"], r["id"]);
    EXPECT_EQ(newest["model"], r["routing"]["model"]);
    EXPECT_EQ(newest["provider"], "builtin");
    EXPECT_EQ(newest["reasonCode"], "lowest_cost");
    EXPECT_EQ(newest["emptiedBy"], json::array());
    EXPECT_EQ(newest["routerVersion"], 1);
    ASSERT_EQ(newest["pipeline"].size(), 7u);
    EXPECT_EQ(newest["pipeline"][0]["filter"], "capability");
    EXPECT_EQ(newest["pipeline"][5]["type"], "capacity");
    EXPECT_EQ(newest["pipeline"][6], json({{"type", "rank"}, {"outcome", "cost"}}));
    EXPECT_THAT(newest["reason"].get<std::string>(),
                ::testing::HasSubstr("gen4_image_turbo (input_support"));
    EXPECT_EQ(log["data"][1]["dryRun"], true);
    EXPECT_TRUE(log["data"][1]["taskId"].is_null());
    EXPECT_EQ(log["data"][1]["model"], newest["model"]);
}

TEST_F(RoutedGeneration, SettingsSteerTheChoiceAndDecisionsRecordTheirVersion) {
    const auto router = MakeRouter(c_, kTestKey, {{"slug", "steer"}});
    const std::string id = router["id"];
    const json body = {{"configId", "steer"},
                       {"dryRun", true},
                       {"input", {{"promptText", "a fox"}, {"duration", 8}}}};
    const auto cheap = Send(c_, "POST", "/v1/generate/video", body, kTestKey).Json();
    // Quality: the best score among the models that make 8 s.
    auto patched = Send(c_, "PATCH", "/v1/routers/" + id,
                        {{"settings", {{"optimizeFor", "quality"}}}}, kTestKey);
    ASSERT_EQ(patched.status, 200);
    const auto best = Send(c_, "POST", "/v1/generate/video", body, kTestKey).Json();
    EXPECT_NE(best["routing"]["model"], cheap["routing"]["model"]);
    EXPECT_EQ(best["routing"]["resolvedSettings"]["optimizeFor"], "quality");
    // A video cap below the best model's price moves the choice down.
    patched = Send(c_, "PATCH", "/v1/routers/" + id,
                   {{"settings", {{"maxCreditsPerGeneration", {{"video", 100}}}}}}, kTestKey);
    const auto capped = Send(c_, "POST", "/v1/generate/video", body, kTestKey).Json();
    EXPECT_LE(capped["routing"]["estimatedCost"]["credits"].get<double>(), 100);
    EXPECT_EQ(capped["routing"]["resolvedSettings"]["priceCeiling"], 100);
    // Deny the cheap one: never chosen again.
    patched = Send(c_, "PATCH", "/v1/routers/" + id,
                   {{"settings",
                     {{"optimizeFor", "cost"},
                      {"maxCreditsPerGeneration", json::object()},
                      {"models", {{"ids", {cheap["routing"]["model"]}}}}}}},
                   kTestKey);
    ASSERT_EQ(patched.status, 200) << patched.body;
    const auto denied = Send(c_, "POST", "/v1/generate/video", body, kTestKey).Json();
    EXPECT_NE(denied["routing"]["model"], cheap["routing"]["model"]);
    const auto log = Log(c_, kTestKey, id);
    ASSERT_EQ(log["data"].size(), 4u);
    EXPECT_EQ(log["data"][0]["routerVersion"], 4);
    EXPECT_EQ(log["data"][3]["routerVersion"], 1);
    EXPECT_THAT(log["data"][0]["reason"].get<std::string>(),
                ::testing::HasSubstr(cheap["routing"]["model"].get<std::string>() +
                                     " (allow_deny: in the deny list)"));
}

TEST_F(RoutedGeneration, BadInputUnknownRoutersAndNoEligibleModel) {
    const auto router = MakeRouter(c_, kTestKey, {{"slug", "strict"}});
    const std::string id = router["id"];
    // Every issue of the input, at its path; logged as invalid_request.
    auto r = Send(c_, "POST", "/v1/generate/video",
                  {{"configId", "strict"},
                   {"input",
                    {{"duration", 1},
                     {"aspectRatio", "5:4"},
                     {"referenceImages",
                      {{{"uri", "https://example.com/a.png"}, {"role", "first"}},
                       {{"uri", "https://example.com/b.png"}, {"role", "first"}}}},
                     {"keyframes", {{{"uri", "https://example.com/k.png"}, {"seconds", 1}}}},
                     {"colour", "red"}}}},
                  kTestKey);
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_THAT(Paths(r.Json()),
                ::testing::IsSupersetOf({R"(["input","duration"])", R"(["input","aspectRatio"])",
                                         R"(["input","referenceImages"])",
                                         R"(["input","keyframes"])", R"(["input"])"}));
    r = Send(c_, "POST", "/v1/generate/audio",
             {{"configId", "strict"},
              {"input", {{"type", "speech"}, {"promptText", "hi"}, {"duration", 3}}}},
             kTestKey);
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_THAT(Paths(r.Json()), ::testing::ElementsAre(R"(["input","duration"])"));
    r = Send(c_, "POST", "/v1/generate/image", {{"input", {{"promptText", "x"}}}}, kTestKey);
    ASSERT_EQ(r.status, 400);
    EXPECT_THAT(Paths(r.Json()), ::testing::ElementsAre(R"(["configId"])"));
    // Unknown router: 404.
    r = Send(c_, "POST", "/v1/generate/image",
             {{"configId", "nobody"}, {"input", {{"promptText", "x"}}}}, kTestKey);
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.Json()["error"], "Router not found");
    // No eligible model: 400 naming the filter; logged with emptiedBy.
    r = Send(c_, "POST", "/v1/generate/image",
             {{"configId", "strict"},
              {"input", {{"promptText", "x"}, {"seed", 1}, {"outputCount", 10}}}},
             kTestKey);
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.Json()["error"], "No eligible model: the capability filter left none");
    EXPECT_THAT(r.body, ::testing::HasSubstr("gen4_image (capability): outputCount 10"));
    // Another organization does not see the router.
    const std::string other = CreateKey(*server_, "routed-other");
    EXPECT_EQ(Send(c_, "POST", "/v1/generate/image",
                   {{"configId", "strict"}, {"input", {{"promptText", "x"}}}}, other)
                  .status,
              404);
    EXPECT_EQ(Send(c_, "GET", "/v1/routers/" + id + "/requests", nullptr, other).status, 404);
    // Deleted: 404, and the log (still readable) says router_config_not_found.
    ASSERT_EQ(Send(c_, "DELETE", "/v1/routers/" + id, nullptr, kTestKey).status, 204);
    r = Send(c_, "POST", "/v1/generate/image",
             {{"configId", "strict"}, {"input", {{"promptText", "x"}}}}, kTestKey);
    EXPECT_EQ(r.status, 404);
    const auto log = Log(c_, kTestKey, id);
    std::vector<std::string> statuses;
    for (const auto& e : log["data"]) statuses.push_back(e["status"]);
    EXPECT_EQ(statuses, (std::vector<std::string>{"router_config_not_found", "no_eligible_model",
                                                  "invalid_request", "invalid_request"}));
    const auto& none = log["data"][1];
    EXPECT_EQ(none["emptiedBy"], json::array({"capability"}));
    EXPECT_TRUE(none["model"].is_null());
    EXPECT_TRUE(none["reasonCode"].is_null());
    EXPECT_EQ(none["pipeline"].size(), 5u);
    EXPECT_EQ(none["pipeline"][0]["models"], json::array());
    // Pages of the log.
    const auto first = Log(c_, kTestKey, id, "?limit=3");
    EXPECT_EQ(first["data"].size(), 3u);
    EXPECT_EQ(first["hasMore"], true);
    const auto second =
        Log(c_, kTestKey, id, "?limit=3&cursor=" + first["nextCursor"].get<std::string>());
    ASSERT_EQ(second["data"].size(), 1u);
    EXPECT_EQ(second["data"][0]["id"], log["data"][3]["id"]);
    EXPECT_EQ(Send(c_, "GET", "/v1/routers/" + id + "/requests?limit=0", nullptr, kTestKey).status,
              400);
}

TEST_F(RoutedGeneration, SpeechAndSoundsAreRoutedToTheModelsThatCanMakeThem) {
    MakeRouter(c_, kTestKey, {{"slug", "voices"}, {"settings", {{"optimizeFor", "quality"}}}});
    auto r = Send(c_, "POST", "/v1/generate/audio",
                  {{"configId", "voices"},
                   {"input",
                    {{"type", "speech"},
                     {"promptText", "Routed speech works."},
                     {"voice", {{"type", "preset"}, {"presetId", "Maya"}}}}}},
                  kTestKey);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Json()["routing"]["model"], "voice_v3");  // the best quality with presets
    EXPECT_EQ(r.Json()["routing"]["resolvedInput"],
              json({{"type", "speech"}, {"voice", "preset"}}));
    auto task =
        WaitForStatus(c_, r.Json()["id"], {"SUCCEEDED", "FAILED"}, std::chrono::seconds(60));
    EXPECT_EQ(task["status"], "SUCCEEDED") << task.dump();
    // A cloned voice goes to the model that clones; the clip is fetched like any input.
    const std::string wav = "data:audio/wav;base64," + Base64Encode(MakeWav(3.0));
    r = Send(c_, "POST", "/v1/generate/audio",
             {{"configId", "voices"},
              {"input",
               {{"type", "speech"},
                {"promptText", "Cloned."},
                {"voice", {{"type", "reference-audio"}, {"audioUri", wav}}}}}},
             kTestKey);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Json()["routing"]["model"], "seed_audio");
    task = WaitForStatus(c_, r.Json()["id"], {"SUCCEEDED", "FAILED"}, std::chrono::seconds(60));
    EXPECT_EQ(task["status"], "SUCCEEDED") << task.dump();
    // A looping sound of 4 s.
    r = Send(
        c_, "POST", "/v1/generate/audio",
        {{"configId", "voices"},
         {"input", {{"type", "audio"}, {"promptText", "rain"}, {"duration", 4}, {"loop", true}}}},
        kTestKey);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Json()["routing"]["model"], "voice_text_to_sound_v2");
    EXPECT_EQ(r.Json()["routing"]["resolvedInput"], json({{"type", "audio"}, {"voice", "none"}}));
    // A media input that cannot be read: 400 at the routed input's path.
    r = Send(c_, "POST", "/v1/generate/audio",
             {{"configId", "voices"},
              {"input",
               {{"type", "speech"},
                {"promptText", "Cloned."},
                {"voice",
                 {{"type", "reference-audio"},
                  {"audioUri", "data:audio/wav;base64," + Base64Encode("not audio")}}}}}},
             kTestKey);
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_THAT(Paths(r.Json()), ::testing::ElementsAre(R"(["input","voice","audioUri"])"));
}

// Tasks that take long enough to hold their concurrency slot, in a tier-1 organization (one
// running task per model).
class RoutedCapacity : public ServerSuite<RoutedCapacity>, public RoutedBase {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "1"}}); }
    HttpClient c_ = Client();
};

TEST_F(RoutedCapacity, AModelAtItsLimitIsSkippedAndWhenAllAreTheTaskQueues) {
    const std::string key = CreateKey(*server_, "capacity-org", 1);
    MakeRouter(c_, key, {{"slug", "spill"}, {"settings", {{"fallback", {{"onCapacity", true}}}}}});
    MakeRouter(c_, key, {{"slug", "queue"}});
    const json input = {{"promptText", "a quiet harbour"}};
    auto create = [&](const std::string& slug) {
        const auto r =
            Send(c_, "POST", "/v1/generate/image", {{"configId", slug}, {"input", input}}, key);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.Json();
    };
    auto status = [&](const std::string& id) {
        return Send(c_, "GET", "/v1/tasks/" + id, nullptr, key).Json()["status"].get<std::string>();
    };
    const auto first = create("spill");
    const std::string top = first["routing"]["model"];
    EXPECT_FALSE(first["routing"].contains("capacityFallback"));
    EXPECT_THAT(status(first["id"]), ::testing::AnyOf("PENDING", "RUNNING"));
    // The top model holds its one slot: the next is chosen, and runs.
    const auto second = create("spill");
    EXPECT_NE(second["routing"]["model"], top);
    EXPECT_EQ(second["routing"]["capacityFallback"],
              json({{"skipped", {top}}, {"allExhausted", false}}));
    EXPECT_THAT(status(second["id"]), ::testing::AnyOf("PENDING", "RUNNING"));
    // Without onCapacity the top model is used and the task queues THROTTLED.
    const auto queued = create("queue");
    EXPECT_EQ(queued["routing"]["model"], top);
    EXPECT_FALSE(queued["routing"].contains("capacityFallback"));
    EXPECT_EQ(status(queued["id"]), "THROTTLED");
    // Allow only the two busy models with onCapacity: all exhausted, the best-ranked queues.
    MakeRouter(
        c_, key,
        {{"slug", "busy"},
         {"settings",
          {{"fallback", {{"onCapacity", true}}},
           {"models", {{"mode", "allowlist_only"}, {"ids", {top, second["routing"]["model"]}}}}}}});
    const auto exhausted = create("busy");
    EXPECT_EQ(exhausted["routing"]["model"], top);
    EXPECT_EQ(exhausted["routing"]["capacityFallback"],
              json({{"skipped", json::array()}, {"allExhausted", true}}));
    EXPECT_EQ(status(exhausted["id"]), "THROTTLED");
    // A dry run in the same state picks the same.
    const auto dry = Send(c_, "POST", "/v1/generate/image",
                          {{"configId", "busy"}, {"dryRun", true}, {"input", input}}, key);
    EXPECT_EQ(dry.Json()["routing"], exhausted["routing"]);
    for (const auto& id : {first["id"], second["id"], queued["id"], exhausted["id"]}) {
        Send(c_, "DELETE", "/v1/tasks/" + id.get<std::string>(), nullptr, key);
    }
}

}  // namespace
}  // namespace genhost::testing
