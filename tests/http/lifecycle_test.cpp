// The task lifecycle against a real server whose tasks take seconds: progress, cancellation,
// THROTTLED promotion, operator cancel, the daily limit and output URL expiry.
#include "genhost/core/crypto.hpp"
#include "helpers.hpp"
#include "support/media_fixtures.hpp"

#include <gmock/gmock.h>

#include <cstdio>

namespace genhost::testing {
namespace {

// A tier-1 organization (1 concurrent generation per model) whose gen4_image tasks take 3 s.
class SlowTasks : public ServerSuite<SlowTasks> {
  protected:
    static void SetUpTestSuite() {
        StartServer({{"GENHOST_DEFAULT_TIER", "1"},
                     {"GENHOST_WORKERS", "4"},
                     {"GENHOST_LATENCY_SCALE", LatencyScaleFor(3.0)}});
    }
    std::string Create(HttpClient& c, const std::string& key = kTestKey) {
        const auto r = c.Send("POST", "/v1/text_to_image", AuthHeaders(key), ImageRequest().dump());
        EXPECT_EQ(r.status, 200) << r.body;
        return r.Json()["id"];
    }
};

TEST_F(SlowTasks, RunningTasksReportRisingProgress) {
    auto c = Client();
    const std::string key = CreateKey(*server_, "progress-org", 1);
    const std::string id = Create(c, key);
    auto task = WaitForStatus(c, id, {"RUNNING"}, std::chrono::seconds(30), key);
    ASSERT_EQ(task["status"], "RUNNING");
    double first = task["progress"];
    EXPECT_GE(first, 0.0);
    EXPECT_LE(first, 1.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    task = c.Send("GET", "/v1/tasks/" + id, AuthHeaders(key)).Json();
    if (task["status"] == "RUNNING") {
        EXPECT_GT(task["progress"].get<double>(), first);
    }
    task = WaitForStatus(c, id, {"SUCCEEDED", "FAILED"}, std::chrono::seconds(30), key);
    EXPECT_EQ(task["status"], "SUCCEEDED");
    EXPECT_FALSE(task.contains("progress"));
}

TEST_F(SlowTasks, DeletingARunningTaskStopsItWithinASecond) {
    auto c = Client();
    const std::string key = CreateKey(*server_, "cancel-org", 1);
    const std::string id = Create(c, key);
    ASSERT_EQ(WaitForStatus(c, id, {"RUNNING"}, std::chrono::seconds(30), key)["status"],
              "RUNNING");
    const double before = MetricValue(c, "genhost_workers_running");
    EXPECT_GE(before, 1);
    EXPECT_EQ(c.Send("DELETE", "/v1/tasks/" + id, AuthHeaders(key)).status, 204);
    EXPECT_EQ(c.Send("GET", "/v1/tasks/" + id, AuthHeaders(key)).status, 404);
    // The worker lets go within a second, and no output file is left behind.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    double running = before;
    while (std::chrono::steady_clock::now() < deadline && running >= before) {
        running = MetricValue(c, "genhost_workers_running");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_LT(running, before);
    std::this_thread::sleep_for(std::chrono::seconds(3));
    EXPECT_FALSE(std::filesystem::exists(server_->data_dir() + "/data/outputs/" + id));
}

TEST_F(SlowTasks, TasksBeyondTheConcurrencyLimitWaitThrottledAndStartByThemselves) {
    auto c = Client();
    const std::string key = CreateKey(*server_, "throttle-org", 1);
    std::vector<std::string> ids;
    for (int i = 0; i < 3; ++i) ids.push_back(Create(c, key));
    auto status = [&](const std::string& id) {
        return c.Send("GET", "/v1/tasks/" + id, AuthHeaders(key))
            .Json()["status"]
            .get<std::string>();
    };
    EXPECT_THAT(status(ids[0]), ::testing::AnyOf("PENDING", "RUNNING"));
    EXPECT_EQ(status(ids[1]), "THROTTLED");
    EXPECT_EQ(status(ids[2]), "THROTTLED");
    // Oldest first: the second starts before the third, and never two at once.
    const auto second = WaitForStatus(c, ids[1], {"PENDING", "RUNNING", "SUCCEEDED"},
                                      std::chrono::seconds(30), key);
    EXPECT_NE(second["status"], "THROTTLED");
    EXPECT_EQ(status(ids[0]), "SUCCEEDED");
    EXPECT_EQ(status(ids[2]), "THROTTLED");
    for (const auto& id : ids) {
        EXPECT_EQ(
            WaitForStatus(c, id, {"SUCCEEDED", "FAILED"}, std::chrono::seconds(60), key)["status"],
            "SUCCEEDED");
    }
}

TEST_F(SlowTasks, DeletingAThrottledTaskFreesNothingAndOthersStillRun) {
    auto c = Client();
    const std::string key = CreateKey(*server_, "throttle-delete-org", 1);
    const std::string a = Create(c, key);
    const std::string b = Create(c, key);
    const std::string d = Create(c, key);
    EXPECT_EQ(c.Send("DELETE", "/v1/tasks/" + b, AuthHeaders(key)).status, 204);
    EXPECT_EQ(c.Send("GET", "/v1/tasks/" + b, AuthHeaders(key)).status, 404);
    EXPECT_EQ(WaitForStatus(c, a, {"SUCCEEDED"}, std::chrono::seconds(30), key)["status"],
              "SUCCEEDED");
    EXPECT_EQ(WaitForStatus(c, d, {"SUCCEEDED"}, std::chrono::seconds(30), key)["status"],
              "SUCCEEDED");
}

TEST_F(SlowTasks, AnOperatorCancelShowsCancelled) {
    auto c = Client();
    const std::string key = CreateKey(*server_, "operator-org", 1);
    const std::string id = Create(c, key);
    std::string out;
    ASSERT_EQ(server_->RunCommand("tasks cancel " + id, &out), 0) << out;
    const auto task = c.Send("GET", "/v1/tasks/" + id, AuthHeaders(key)).Json();
    EXPECT_EQ(task["status"], "CANCELLED");
    EXPECT_FALSE(task.contains("output"));
    EXPECT_TRUE(task["estimatedCost"].is_object());
    // A cancelled task can then be deleted.
    EXPECT_EQ(c.Send("DELETE", "/v1/tasks/" + id, AuthHeaders(key)).status, 204);
    EXPECT_EQ(c.Send("GET", "/v1/tasks/" + id, AuthHeaders(key)).status, 404);
}

TEST_F(SlowTasks, SuspendingAnOrganizationCancelsItsTasks) {
    auto c = Client();
    const std::string key = CreateKey(*server_, "suspend-tasks-org", 1);
    const std::string id = Create(c, key);
    std::string out;
    ASSERT_EQ(server_->RunCommand("orgs suspend suspend-tasks-org", &out), 0) << out;
    ASSERT_EQ(server_->RunCommand("orgs resume suspend-tasks-org", &out), 0) << out;
    nlohmann::json task;
    for (int i = 0; i < 100; ++i) {
        const auto r = c.Send("GET", "/v1/tasks/" + id, AuthHeaders(key));
        if (r.status == 200) {
            task = r.Json();
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(task["status"], "CANCELLED");
}

// A tier whose daily limit is 2 generations, and output URLs that live 2 seconds.
class Limits : public ServerSuite<Limits> {
  protected:
    static void SetUpTestSuite() {
        tiers_ = std::string(std::tmpnam(nullptr)) + ".json";
        std::ofstream(tiers_) << R"({"tiers": [{"tier": 1, "max_concurrent_generations": 1,
            "max_daily_generations": 2, "max_monthly_spend_usd": 100}]})";
        StartServer({{"GENHOST_TIERS_FILE", tiers_},
                     {"GENHOST_DEFAULT_TIER", "1"},
                     {"GENHOST_OUTPUT_URL_TTL", "2"}});
    }
    static void TearDownTestSuite() {
        ServerSuite::TearDownTestSuite();
        std::remove(tiers_.c_str());
    }
    static inline std::string tiers_;
};

// Routed generation meets the chosen model's daily limit as direct generation does: a 429 with
// Retry-After, and the router's log says why the decision made no task.
TEST_F(Limits, ARoutedRequestOverTheChosenModelsDailyLimitIs429) {
    HttpClient c("127.0.0.1", server_->port());
    const auto router = c.Send("POST", "/v1/routers", AuthHeaders(),
                               R"({"slug": "daily", "settings": {"models":
                                   {"mode": "allowlist_only", "ids": ["image_flash_2_5"]}}})");
    ASSERT_EQ(router.status, 200) << router.body;
    const std::string body = R"({"configId": "daily", "input": {"promptText": "a cat"}})";
    HttpResponse r;
    for (int i = 0; i < 3; ++i) {  // the suite's other tests may have used the two already
        r = c.Send("POST", "/v1/generate/image", AuthHeaders(), body);
        if (r.status != 200) break;
    }
    ASSERT_EQ(r.status, 429) << r.body;
    EXPECT_EQ(r.Json(), nlohmann::json({{"error", "Your daily task limit has been reached."}}));
    EXPECT_GT(std::stoi(r.Header("retry-after")), 0);
    const auto log =
        c.Send("GET", "/v1/routers/" + router.Json()["id"].get<std::string>() + "/requests?limit=1",
               AuthHeaders());
    ASSERT_EQ(log.status, 200) << log.body;
    const auto entry = log.Json()["data"][0];
    EXPECT_EQ(entry["status"], "error");
    EXPECT_EQ(entry["model"], "image_flash_2_5");
    EXPECT_TRUE(entry["taskId"].is_null());
    EXPECT_THAT(entry["reason"].get<std::string>(),
                ::testing::HasSubstr("The task was not created: Your daily task limit"));
}

TEST_F(Limits, TheDailyLimitAnswers429WithRetryAfter) {
    HttpClient c("127.0.0.1", server_->port());
    std::vector<std::string> ids;
    for (int i = 0; i < 2; ++i) {
        const auto r = c.Send("POST", "/v1/text_to_image", AuthHeaders(), ImageRequest().dump());
        ASSERT_EQ(r.status, 200) << r.body;
        ids.push_back(r.Json()["id"]);
    }
    const auto r = c.Send("POST", "/v1/text_to_image", AuthHeaders(), ImageRequest().dump());
    EXPECT_EQ(r.status, 429);
    EXPECT_EQ(r.Json(), nlohmann::json({{"error", "Your daily task limit has been reached."}}));
    const int retry_after = std::stoi(r.Header("retry-after"));
    EXPECT_GT(retry_after, 0);
    EXPECT_LE(retry_after, 24 * 3600 + 15 * 60);
    // Another model has its own count.
    const auto other =
        c.Send("POST", "/v1/text_to_image", AuthHeaders(),
               nlohmann::json(
                   {{"model", "gen4_image_turbo"},
                    {"promptText", "x"},
                    {"ratio", "720:720"},
                    {"referenceImages",
                     {{{"uri", "data:image/png;base64," +
                                   genhost::Base64Encode(genhost::testing::MakePng(64, 64))}}}}})
                   .dump());
    EXPECT_EQ(other.status, 200) << other.body;

    // Output URLs of this server expire after 2 s; a fresh GET signs new ones.
    const auto task = WaitForStatus(c, ids[0], {"SUCCEEDED"});
    ASSERT_EQ(task["status"], "SUCCEEDED");
    const std::string path = PathOf(task["output"][0]);
    EXPECT_EQ(c.Send("GET", path).status, 200);
    std::this_thread::sleep_for(std::chrono::seconds(4));
    const auto expired = c.Send("GET", path);
    EXPECT_EQ(expired.status, 403);
    EXPECT_THAT(expired.Json()["error"].get<std::string>(), ::testing::HasSubstr("expired"));
    const auto fresh = c.Send("GET", "/v1/tasks/" + ids[0], AuthHeaders()).Json();
    EXPECT_EQ(c.Send("GET", PathOf(fresh["output"][0])).status, 200);
}

}  // namespace
}  // namespace genhost::testing
