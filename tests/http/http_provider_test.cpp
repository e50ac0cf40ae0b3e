// The HTTP provider end to end: a real genhost whose gen4_image and gen4.5 are routed by
// GENHOST_MODEL_PROVIDERS to a FakeProvider configured in GENHOST_PROVIDERS_FILE. Tasks succeed
// with the provider's output served by genhost, send their media inputs, show the provider's
// progress, fail with the mapped codes, and DELETE /v1/tasks/{id} deletes the provider's job
// within a second. A model routed to a provider that is not configured fails INTERNAL, and
// genhost warned about it at start.
#include "helpers.hpp"
#include "support/fake_provider.hpp"
#include "support/media_fixtures.hpp"

#include "genhost/core/crypto.hpp"

#include <gmock/gmock.h>

#include <filesystem>

namespace genhost::testing {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

class HttpProviderEndToEnd : public ServerSuite<HttpProviderEndToEnd> {
  protected:
    static void SetUpTestSuite() {
        fake_ = new FakeProvider();
        char tmpl[] = "/tmp/genhost-providers.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        const json file = {{"providers",
                            {{"fake",
                              {{"url", fake_->Url()},
                               {"poll_interval", 0.05},
                               {"request_timeout", 2},
                               {"retries", 2},
                               {"backoff", 0.02}}}}}};
        std::ofstream(dir_ + "/providers.json") << file.dump(2);
        StartServer(
            {{"GENHOST_WORKERS", "2"},
             {"GENHOST_PROVIDERS_FILE", dir_ + "/providers.json"},
             {"GENHOST_MODEL_PROVIDERS", "gen4_image=fake,gen4.5=fake,image_flash_2_5=nowhere"}});
    }
    static void TearDownTestSuite() {
        ServerSuite::TearDownTestSuite();
        delete fake_;
        std::filesystem::remove_all(dir_);
    }

    // Create posts a gen4_image task whose prompt scripts the fake; returns its id.
    std::string Create(HttpClient& c, const std::string& prompt) {
        const auto r = c.Send(
            "POST", "/v1/text_to_image", AuthHeaders(),
            json{{"model", "gen4_image"}, {"promptText", prompt}, {"ratio", "1280:720"}}.dump());
        EXPECT_EQ(r.status, 200) << r.body;
        return r.Json().value("id", "");
    }

    json Finished(HttpClient& c, const std::string& id) {
        return WaitForStatus(c, id, {"SUCCEEDED", "FAILED", "CANCELLED"}, std::chrono::seconds(30));
    }

    static FakeProvider* fake_;
    static std::string dir_;
};
FakeProvider* HttpProviderEndToEnd::fake_ = nullptr;
std::string HttpProviderEndToEnd::dir_;

TEST_F(HttpProviderEndToEnd, ATaskSucceedsWithTheProvidersOutput) {
    auto c = Client();
    const std::string id = Create(c, "succeed a lighthouse at dusk");
    const auto task = Finished(c, id);
    ASSERT_EQ(task["status"], "SUCCEEDED") << task.dump();
    ASSERT_EQ(task["output"].size(), 1u);
    const std::string url = task["output"][0];
    EXPECT_THAT(url, HasSubstr(".png"));
    const auto file = c.Send("GET", PathOf(url));
    EXPECT_EQ(file.status, 200);
    EXPECT_EQ(file.body, fake_->OutputPng());
    EXPECT_EQ(file.Header("content-type"), "image/png");

    const auto job = fake_->JobOf(id);
    ASSERT_FALSE(job.empty());
    bool seen = false;
    for (const auto& s : fake_->Submissions()) {
        if (s["taskId"] != id) continue;
        seen = true;
        EXPECT_EQ(s["endpoint"], "text_to_image");
        EXPECT_EQ(s["model"], "gen4_image");
        EXPECT_EQ(s["input"]["promptText"], "succeed a lighthouse at dusk");
        EXPECT_EQ(s["input"]["ratio"], "1280:720");
    }
    EXPECT_TRUE(seen);
}

TEST_F(HttpProviderEndToEnd, MediaInputsReachTheProvider) {
    auto c = Client();
    const std::string png = MakePng(64, 36);
    const auto r = c.Send("POST", "/v1/image_to_video", AuthHeaders(),
                          json{{"model", "gen4.5"},
                               {"promptText", "succeed a slow pan"},
                               {"promptImage", "data:image/png;base64," + Base64Encode(png)},
                               {"ratio", "1280:720"},
                               {"duration", 5}}
                              .dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string id = r.Json()["id"].get<std::string>();
    ASSERT_EQ(Finished(c, id)["status"], "SUCCEEDED");
    bool seen = false;
    for (const auto& s : fake_->Submissions()) {
        if (s["taskId"] != id) continue;
        seen = true;
        ASSERT_EQ(s["inputs"].size(), 1u) << s.dump();
        EXPECT_EQ(s["inputs"][0]["pointer"], "/promptImage");
        EXPECT_EQ(s["inputs"][0]["kind"], "image");
        const std::string url = s["inputs"][0]["url"];
        const std::string prefix = "data:image/png;base64,";
        ASSERT_EQ(url.rfind(prefix, 0), 0u) << url.substr(0, 60);
        EXPECT_EQ(Base64Decode(url.substr(prefix.size())).value_or(""), png);
        EXPECT_EQ(s["input"]["promptImage"], url);
    }
    EXPECT_TRUE(seen);
}

TEST_F(HttpProviderEndToEnd, RunningTasksShowTheProvidersProgress) {
    auto c = Client();
    const std::string id = Create(c, "slow a lighthouse");
    std::vector<double> seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    json task;
    while (std::chrono::steady_clock::now() < deadline) {
        task = c.Send("GET", "/v1/tasks/" + id, AuthHeaders()).Json();
        if (task["status"] == "RUNNING" && task.contains("progress")) {
            seen.push_back(task["progress"]);
        }
        if (task["status"] == "SUCCEEDED" || task["status"] == "FAILED") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(task["status"], "SUCCEEDED");
    ASSERT_GE(seen.size(), 3u);
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_LT(seen.front(), 0.5);
    EXPECT_GT(seen.back(), seen.front());
}

TEST_F(HttpProviderEndToEnd, ProviderFailuresMapToFailureCodes) {
    auto c = Client();
    const std::string refused = Create(c, "refuse purple");
    const std::string down = Create(c, "down");
    const std::string garbage = Create(c, "garbage");
    const std::string moderated = Create(c, "fail-safety");
    auto task = Finished(c, refused);
    EXPECT_EQ(task["status"], "FAILED");
    EXPECT_EQ(task["failureCode"], "THIRD_PARTY.INPUT_VALIDATION");
    EXPECT_EQ(task["failure"], "The fake provider refuses purple.");
    task = Finished(c, down);
    EXPECT_EQ(task["status"], "FAILED");
    EXPECT_EQ(task["failureCode"], "THIRD_PARTY.UNAVAILABLE");
    task = Finished(c, garbage);
    EXPECT_EQ(task["status"], "FAILED");
    EXPECT_EQ(task["failureCode"], "INTERNAL");
    EXPECT_THAT(task["failure"].get<std::string>(), ::testing::Not(HasSubstr("html")));
    task = Finished(c, moderated);
    EXPECT_EQ(task["failureCode"], "SAFETY.INPUT.TEXT");
    EXPECT_FALSE(task.contains("output"));
}

TEST_F(HttpProviderEndToEnd, DeletingATaskDeletesTheProvidersJobWithinASecond) {
    auto c = Client();
    const std::string id = Create(c, "forever a lighthouse");
    ASSERT_EQ(WaitForStatus(c, id, {"RUNNING"}, std::chrono::seconds(20))["status"], "RUNNING");
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (fake_->JobOf(id).empty() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const std::string job = fake_->JobOf(id);
    ASSERT_FALSE(job.empty());
    const auto deleted_at = std::chrono::steady_clock::now();
    EXPECT_EQ(c.Send("DELETE", "/v1/tasks/" + id, AuthHeaders()).status, 204);
    std::optional<FakeProvider::Seen> del;
    while (!del && std::chrono::steady_clock::now() < deleted_at + std::chrono::seconds(3)) {
        del = fake_->Find("DELETE", "/v1/tasks/" + job);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(del) << "the provider's job was never deleted";
    EXPECT_LT(del->at - deleted_at, std::chrono::seconds(1));
    EXPECT_EQ(c.Send("GET", "/v1/tasks/" + id, AuthHeaders()).status, 404);
}

TEST_F(HttpProviderEndToEnd, AModelRoutedToAnUnknownProviderFailsInternal) {
    EXPECT_THAT(server_->Log(), HasSubstr("image_flash_2_5 is served by provider nowhere"));
    auto c = Client();
    const auto r = c.Send(
        "POST", "/v1/text_to_image", AuthHeaders(),
        json{{"model", "image_flash_2_5"}, {"promptText", "a lighthouse"}, {"ratio", "1024:1024"}}
            .dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const auto task = Finished(c, r.Json()["id"].get<std::string>());
    EXPECT_EQ(task["status"], "FAILED");
    EXPECT_EQ(task["failureCode"], "INTERNAL");
    EXPECT_THAT(task["failure"].get<std::string>(), HasSubstr("nowhere"));
}

}  // namespace
}  // namespace genhost::testing
