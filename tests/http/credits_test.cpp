// Credits, the organization and usage against a real server (docs/credits.md, CLIENTS.md 3.3):
// new organizations open with GENHOST_DEFAULT_CREDITS; GET /v1/organization shows the balance,
// the tier's limits and the day's generations; a request the balance cannot cover, or past the
// 30-day spend cap, is a 400 and stores nothing; tasks show what they cost (moderated: charged;
// cancelled: refunded); usage is net per day and model, its range checked; operators grant and
// show credits from the command line; realtime sessions reserve their maximum.
#include "helpers.hpp"

#include "genhost/core/clock.hpp"
#include "genhost/core/ids.hpp"

#include <gmock/gmock.h>

#include <cmath>
#include <filesystem>

namespace genhost::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The server's own default organization opens with GENHOST_DEFAULT_CREDITS (set below); the
// organizations `genhost keys create` makes open with the command's default, 10,000,000.
constexpr std::int64_t kServerDefault = 100000;
constexpr std::int64_t kOpening = 10000000;

class CreditsApi : public ServerSuite<CreditsApi> {
  protected:
    static void SetUpTestSuite() {
        // Tier 2's 30-day spend cap lowered to USD 1 (100 credits) for the cap test.
        std::ifstream in(std::string(GENHOST_SOURCE_DIR) + "/schemas/tiers.json");
        nlohmann::json tiers = nlohmann::json::parse(in);
        for (auto& t : tiers["tiers"]) {
            if (t["tier"] == 2) t["max_monthly_spend_usd"] = 1;
        }
        tiers_file_ = fs::temp_directory_path() / ("genhost-credits-tiers-" + NewUuid() + ".json");
        std::ofstream(tiers_file_) << tiers.dump();
        StartServer({{"GENHOST_LATENCY_SCALE", "0.1"},
                     {"GENHOST_DEFAULT_CREDITS", std::to_string(kServerDefault)},
                     {"GENHOST_TIERS_FILE", tiers_file_.string()}});
    }
    static void TearDownTestSuite() {
        ServerSuite<CreditsApi>::TearDownTestSuite();
        fs::remove(tiers_file_);
    }

    HttpResponse Send(const std::string& method, const std::string& path,
                      const nlohmann::json& body, const std::string& key) {
        return client_.Send(method, path, AuthHeaders(key), body.is_null() ? "" : body.dump());
    }
    HttpResponse Image(const std::string& key, const std::string& prompt = "a lighthouse") {
        return Send("POST", "/v1/text_to_image",
                    {{"model", "gen4_image"}, {"promptText", prompt}, {"ratio", "1920:1080"}}, key);
    }
    std::int64_t Balance(const std::string& key) {
        return Send("GET", "/v1/organization", nullptr, key).Json()["creditBalance"];
    }
    std::string Command(const std::string& args) {
        std::string out;
        EXPECT_EQ(server_->RunCommand(args, &out), 0) << out;
        return out;
    }

    static inline fs::path tiers_file_;
    HttpClient client_ = Client();
};

TEST_F(CreditsApi, TheOrganizationShowsItsBalanceLimitsAndTodaysGenerations) {
    const std::string key = CreateKey(*server_, "shown", 5);
    auto r = Send("GET", "/v1/organization", nullptr, key);
    ASSERT_EQ(r.status, 200) << r.body;
    auto org = r.Json();
    EXPECT_EQ(org["creditBalance"], kOpening);
    EXPECT_EQ(org["tier"]["maxMonthlyCreditSpend"], 100000 * 100);  // USD 100,000 in credits
    EXPECT_EQ(org["tier"]["models"]["gen4_image"]["maxConcurrentGenerations"], 20);
    EXPECT_EQ(org["tier"]["models"]["gen4_image"]["maxDailyGenerations"], 25000);
    EXPECT_TRUE(org["tier"]["models"].contains("product_ad"));  // recipes are models too
    EXPECT_EQ(org["usage"]["models"]["gen4_image"]["dailyGenerations"], 0);
    ASSERT_EQ(Image(key).status, 200);
    ASSERT_EQ(Image(key).status, 200);
    org = Send("GET", "/v1/organization", nullptr, key).Json();
    EXPECT_EQ(org["creditBalance"], kOpening - 16);
    EXPECT_EQ(org["usage"]["models"]["gen4_image"]["dailyGenerations"], 2);
    // Another organization's numbers are its own.
    EXPECT_EQ(Balance(kTestKey), kServerDefault);
}

TEST_F(CreditsApi, ARequestTheBalanceCannotCoverIsRefusedAndNothingIsStored) {
    const std::string key = CreateKey(*server_, "poor", 5);
    EXPECT_THAT(Command("credits grant --org poor --amount " + std::to_string(10 - kOpening)),
                HasSubstr("balance: 10"));
    const auto ok = Image(key);
    ASSERT_EQ(ok.status, 200) << ok.body;
    const auto refused = Image(key);
    ASSERT_EQ(refused.status, 400) << refused.body;
    const auto body = refused.Json();
    EXPECT_EQ(body["error"], "You do not have enough credits to run this task.");
    ASSERT_EQ(body["issues"].size(), 1u);
    EXPECT_EQ(body["issues"][0]["code"], "insufficient_credits");
    EXPECT_EQ(body["issues"][0]["path"], nlohmann::json::array());
    EXPECT_THAT(body["issues"][0]["message"].get<std::string>(), HasSubstr("8 credits"));
    EXPECT_EQ(Balance(key), 2);
    const auto org = Send("GET", "/v1/organization", nullptr, key).Json();
    EXPECT_EQ(org["usage"]["models"]["gen4_image"]["dailyGenerations"], 1);
    // A realtime session reserves its maxDuration at 20 credits a minute: 20 > 2.
    const auto session = Send("POST", "/v1/realtime_sessions",
                              {{"model", "gwm1_avatars"},
                               {"avatar", {{"type", "service-preset"}, {"presetId", "influencer"}}},
                               {"maxDuration", 60}},
                              key);
    EXPECT_EQ(session.status, 400) << session.body;
    EXPECT_EQ(session.Json()["issues"][0]["code"], "insufficient_credits");
    // The operator tops it up and the same request passes.
    EXPECT_THAT(Command("credits grant --org poor --amount 100 --note top-up"),
                HasSubstr("balance: 102"));
    EXPECT_EQ(Image(key).status, 200);
    const std::string shown = Command("credits show --org poor");
    EXPECT_THAT(shown, HasSubstr("poor  5  94  16"));
    std::string out;
    EXPECT_NE(server_->RunCommand("credits grant --org nobody --amount 5", &out), 0);
    EXPECT_NE(server_->RunCommand("credits grant --org poor --amount -1000", &out), 0);
    EXPECT_NE(server_->RunCommand("credits grant --org poor --amount x", &out), 0);
}

TEST_F(CreditsApi, TasksShowTheirCostModeratedChargedCancelledRefunded) {
    const std::string key = CreateKey(*server_, "costs", 5);
    const std::string ok = Image(key).Json()["id"];
    const std::string moderated = Image(key, "A Torture-Porn scene in a lighthouse").Json()["id"];
    const std::string cancelled = Image(key).Json()["id"];
    std::string out;
    ASSERT_EQ(server_->RunCommand("tasks cancel " + cancelled, &out), 0) << out;
    auto task = WaitForStatus(client_, ok, {"SUCCEEDED", "FAILED"}, std::chrono::seconds(60), key);
    EXPECT_EQ(task["status"], "SUCCEEDED");
    EXPECT_EQ(task["cost"]["credits"], 8);
    task =
        WaitForStatus(client_, moderated, {"SUCCEEDED", "FAILED"}, std::chrono::seconds(60), key);
    EXPECT_EQ(task["status"], "FAILED");
    EXPECT_THAT(task["failureCode"].get<std::string>(), HasSubstr("SAFETY"));
    EXPECT_EQ(task["cost"]["credits"], 8);
    task = Send("GET", "/v1/tasks/" + cancelled, nullptr, key).Json();
    EXPECT_EQ(task["status"], "CANCELLED");
    EXPECT_EQ(task["cost"]["credits"], 0);
    EXPECT_EQ(Balance(key), kOpening - 16);
    // Usage: today's net for the model.
    const auto usage = Send("POST", "/v1/organization/usage", nlohmann::json::object(), key);
    ASSERT_EQ(usage.status, 200) << usage.body;
    const auto u = usage.Json();
    EXPECT_EQ(u["models"], nlohmann::json::array({"gen4_image"}));
    ASSERT_EQ(u["results"].size(), 1u);
    EXPECT_EQ(u["results"][0]["date"],
              FormatTimestamp(std::chrono::time_point_cast<std::chrono::microseconds>(
                                  std::chrono::system_clock::now()))
                  .substr(0, 10));
    EXPECT_EQ(u["results"][0]["usedCredits"],
              nlohmann::json::parse(R"([{"model": "gen4_image", "amount": 16}])"));
    // A range that ends before today shows nothing.
    const auto past = Send("POST", "/v1/organization/usage",
                           {{"startDate", "2026-01-01"}, {"beforeDate", "2026-02-01"}}, key);
    ASSERT_EQ(past.status, 200) << past.body;
    EXPECT_EQ(past.Json()["results"], nlohmann::json::array());
}

TEST_F(CreditsApi, UsageRangesAreChecked) {
    const auto send = [&](const nlohmann::json& body) {
        return Send("POST", "/v1/organization/usage", body, kTestKey);
    };
    auto r = send({{"startDate", "2026-01-01"}, {"beforeDate", "2026-05-01"}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.Json()["issues"][0]["path"], nlohmann::json::array({"beforeDate"}));
    EXPECT_EQ(send({{"startDate", "2026-01-01"}, {"beforeDate", "2026-04-01"}}).status, 200);
    r = send({{"startDate", "2026-03-01"}, {"beforeDate", "2026-03-01"}});
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.Json()["issues"][0]["path"], nlohmann::json::array({"beforeDate"}));
    r = send({{"startDate", "2026-02-30"}});
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.Json()["issues"][0]["path"], nlohmann::json::array({"startDate"}));
    r = send({{"startDate", "yesterday"}, {"extra", 1}});
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.Json()["issues"].size(), 2u);
    EXPECT_EQ(send({{"beforeDate", "2026-03-01"}}).status, 200);
    EXPECT_EQ(client_.Send("GET", "/v1/organization/nothing", AuthHeaders()).status, 404);
    EXPECT_EQ(client_.Send("GET", "/v1/organization", {}).status, 401);
}

TEST_F(CreditsApi, TheThirtyDaySpendCapRefuses) {
    // Tier 2 here may spend 100 credits in 30 days: twelve images of 8.
    const std::string key = CreateKey(*server_, "capped", 2);
    EXPECT_EQ(Send("GET", "/v1/organization", nullptr, key).Json()["tier"]["maxMonthlyCreditSpend"],
              100);
    for (int i = 0; i < 12; ++i) ASSERT_EQ(Image(key).status, 200) << i;
    const auto r = Image(key);
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.Json()["error"], "Your monthly credit spend limit has been reached.");
    EXPECT_EQ(r.Json()["issues"][0]["code"], "monthly_spend_limit");
    EXPECT_EQ(Balance(key), kOpening - 96);
}

TEST_F(CreditsApi, AvatarVideosAndRoutedGenerationAreBilledLikeTasks) {
    const std::string key = CreateKey(*server_, "billed", 5);
    // An avatar video with a script is booked as gwm1_avatar_async_text_to_video (CLIENTS.md
    // 3.3), one with audio as _audio_to_video.
    const auto video =
        Send("POST", "/v1/avatar_videos",
             {{"model", "gwm1_avatars"},
              {"avatar", {{"type", "service-preset"}, {"presetId", "game-character"}}},
              {"speech", {{"type", "text"}, {"text", "Hello there, welcome to the shop."}}}},
             key);
    ASSERT_EQ(video.status, 200) << video.body;
    // Routed generation is billed as the model the router chose.
    ASSERT_EQ(Send("POST", "/v1/routers", {{"slug", "cheap"}}, key).status, 200);
    const auto routed = Send("POST", "/v1/generate/image",
                             {{"configId", "cheap"},
                              {"input", {{"promptText", "a lighthouse"}, {"aspectRatio", "16:9"}}}},
                             key);
    ASSERT_EQ(routed.status, 200) << routed.body;
    const std::string chosen = routed.Json()["routing"]["model"];
    const std::int64_t routed_cost = std::llround(
        std::ceil(routed.Json()["routing"]["estimatedCost"]["credits"].get<double>() - 1e-6));
    const std::int64_t video_cost =
        std::llround(std::ceil(video.Json()["estimatedCost"]["credits"].get<double>() - 1e-6));
    EXPECT_EQ(Balance(key), kOpening - video_cost - routed_cost);
    const auto usage = Send("POST", "/v1/organization/usage", nlohmann::json::object(), key).Json();
    EXPECT_EQ(usage["models"].get<std::set<std::string>>(),
              (std::set<std::string>{"gwm1_avatar_async_text_to_video", chosen}))
        << usage.dump();
    // A routed request the balance cannot cover is refused like a direct one.
    EXPECT_THAT(Command("credits grant --org billed --amount " +
                        std::to_string(-(kOpening - video_cost - routed_cost))),
                HasSubstr("balance: 0"));
    const auto refused =
        Send("POST", "/v1/generate/image",
             {{"configId", "cheap"},
              {"input", {{"promptText", "a lighthouse"}, {"aspectRatio", "16:9"}}}},
             key);
    EXPECT_EQ(refused.status, 400) << refused.body;
    EXPECT_EQ(refused.Json()["issues"][0]["code"], "insufficient_credits");
}
}  // namespace
}  // namespace genhost::testing
