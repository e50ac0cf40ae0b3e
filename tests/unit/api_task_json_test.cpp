// Tests for genhost/api/task_json.hpp: TaskJson writes, for every status, the bytes nlohmann's
// dump gives for the JSON tree of the task record (CLIENTS.md 3.1), strings that need escaping
// and invalid UTF-8 included.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "genhost/api/task_json.hpp"
#include "genhost/core/clock.hpp"

namespace genhost::api {
namespace {

using json = nlohmann::json;

// TreeJson is the record as GET /v1/tasks/{id} built it before TaskJson, as a JSON tree.
std::string TreeJson(const store::TaskRecord& task, const std::vector<std::string>& urls) {
    const double c = task.estimated_credits;
    json credits = c;
    if (std::isfinite(c) && std::floor(c) == c && std::fabs(c) < 1e15) {
        credits = static_cast<std::int64_t>(c);
    }
    json body = {{"id", task.id},
                 {"createdAt", FormatTimestamp(task.created_at)},
                 {"status", store::TaskStatusName(task.status)},
                 {"estimatedCost", {{"credits", credits}}}};
    if (task.status == store::TaskStatus::kRunning) {
        body["progress"] = task.progress.value_or(0.0);
    } else if (task.status == store::TaskStatus::kSucceeded) {
        body["output"] = urls;
    } else if (task.status == store::TaskStatus::kFailed) {
        body["failure"] = task.failure.value_or("The task failed.");
        body["failureCode"] = task.failure_code.value_or("INTERNAL");
    }
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

store::TaskRecord Task(std::string status) {
    store::TaskRecord t;
    t.id = "0b6f1c1e-3a53-4e7f-9d4c-2f0e5a6b7c8d";
    t.status = store::ParseTaskStatus(status);
    t.created_at = SysTime(std::chrono::milliseconds(1795000000123));
    t.estimated_credits = 5;
    return t;
}

TEST(TaskJson, EveryStatusIsWhatTheJsonTreeGave) {
    int compared = 0;
    for (const char* status :
         {"PENDING", "THROTTLED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"}) {
        for (const double credits : {0.0, 5.0, 2.5, 1.0 / 3.0, 1e20}) {
            for (const auto progress :
                 {std::optional<double>(), std::optional<double>(0.0), std::optional<double>(0.25),
                  std::optional<double>(1.0), std::optional<double>(2.0 / 3.0)}) {
                auto t = Task(status);
                t.estimated_credits = credits;
                t.progress = progress;
                for (const auto& urls :
                     {std::vector<std::string>{},
                      std::vector<std::string>{"http://127.0.0.1:8080/outputs/a/b.png?sig=1"},
                      std::vector<std::string>{"http://h/1", "http://h/2?x=\"q\""}}) {
                    EXPECT_EQ(TaskJson(t, urls), TreeJson(t, urls)) << status << " " << credits;
                    ++compared;
                }
            }
        }
    }
    EXPECT_EQ(compared, 6 * 5 * 5 * 3);
}

TEST(TaskJson, FailureTextIsEscapedAsTheTreeEscapedIt) {
    auto t = Task("FAILED");
    for (const std::string& failure :
         {std::string("plain"), std::string("quote \" backslash \\ slash /"),
          std::string("line\nbreak\ttab\bbs\fff\r\x01\x1f"),
          std::string("caf\xc3\xa9 \xe2\x9c\x93"), std::string("bad \xff\xfe utf-8"),
          std::string("del \x7f"), std::string()}) {
        t.failure = failure;
        t.failure_code = "SAFETY.INPUT.TEXT";
        EXPECT_EQ(TaskJson(t, {}), TreeJson(t, {})) << failure;
        EXPECT_FALSE(json::parse(TaskJson(t, {})).is_discarded());
    }
    t.failure.reset();
    t.failure_code.reset();
    const auto parsed = json::parse(TaskJson(t, {}));
    EXPECT_EQ(parsed["failure"], "The task failed.");
    EXPECT_EQ(parsed["failureCode"], "INTERNAL");
}

TEST(TaskJson, ShapesFollowTheStatus) {
    auto running = Task("RUNNING");
    running.progress = 0.5;
    EXPECT_EQ(TaskJson(running, {}),
              R"({"createdAt":"2026-11-18T11:06:40.123Z","estimatedCost":{"credits":5},)"
              R"("id":"0b6f1c1e-3a53-4e7f-9d4c-2f0e5a6b7c8d","progress":0.5,"status":"RUNNING"})");
    const auto done = json::parse(TaskJson(Task("SUCCEEDED"), {"u1", "u2"}));
    EXPECT_EQ(done["output"], json::array({"u1", "u2"}));
    EXPECT_FALSE(done.contains("progress"));
    const auto waiting = json::parse(TaskJson(Task("THROTTLED"), {"ignored"}));
    EXPECT_FALSE(waiting.contains("output"));
    EXPECT_FALSE(waiting.contains("failure"));
}

}  // namespace
}  // namespace genhost::api
