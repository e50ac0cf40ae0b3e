// The front end against a real server: authentication, versioning, routing, body limits,
// request ids, health and metrics, validation errors and the first real outputs.
#include "helpers.hpp"

#include <gmock/gmock.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

namespace genhost::testing {
namespace {

using ::testing::HasSubstr;

class Basics : public ServerSuite<Basics> {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_MAX_BODY_BYTES", "1048576"}}); }
};

TEST_F(Basics, HealthAndReadinessNeedNoKey) {
    auto c = Client();
    auto r = c.Send("GET", "/healthz");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.Json()["status"], "ok");
    r = c.Send("GET", "/readyz");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.Json()["status"], "ready");
}

TEST_F(Basics, AuthenticationMatrix) {
    auto c = Client();
    const std::string path = "/v1/tasks/00000000-0000-4000-8000-000000000000";
    const std::vector<std::pair<std::string, std::optional<std::string>>> bad = {
        {"missing", std::nullopt},
        {"empty", ""},
        {"no scheme", kTestKey},
        {"lowercase scheme", "bearer " + kTestKey},
        {"other prefix", "Bearer sk_" + std::string(128, 'a')},
        {"uppercase hex", "Bearer key_" + std::string(128, 'A')},
        {"too short", "Bearer key_" + std::string(127, 'a')},
        {"too long", "Bearer key_" + std::string(129, 'a')},
        {"non-hex", "Bearer key_" + std::string(127, 'a') + "g"},
        {"two spaces", "Bearer  " + kTestKey},
        {"unknown key", "Bearer key_" + std::string(128, 'b')},
    };
    for (const auto& [name, value] : bad) {
        Headers h = {{"X-Service-Version", "2024-11-06"}};
        if (value) h.emplace_back("Authorization", *value);
        const auto r = c.Send("GET", path, h);
        EXPECT_EQ(r.status, 401) << name;
        EXPECT_TRUE(r.Json()["error"].is_string()) << name;
    }
    // Whitespace around the key inside the value is refused too. (Whitespace at the very ends of
    // a header value is not part of the value in HTTP: the parser drops it before genhost sees it.)
    for (const std::string& v :
         {"Bearer \t" + kTestKey, "Bearer " + kTestKey + " x", "Bearer\t" + kTestKey}) {
        const auto r = c.SendRaw("GET " + path +
                                 " HTTP/1.1\r\nHost: x\r\nX-Service-Version: 2024-11-06\r\n"
                                 "Authorization: " +
                                 v + "\r\nConnection: close\r\n\r\n");
        EXPECT_EQ(r.status, 401) << v;
    }
    // The configured key works: the task simply does not exist.
    EXPECT_EQ(c.Send("GET", path, AuthHeaders()).status, 404);
}

TEST_F(Basics, VersionHeaderIsRequired) {
    auto c = Client();
    const std::string path = "/v1/tasks/00000000-0000-4000-8000-000000000000";
    Headers no_version = {{"Authorization", "Bearer " + kTestKey}};
    auto r = c.Send("GET", path, no_version);
    EXPECT_EQ(r.status, 400);
    auto body = r.Json();
    EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("X-Service-Version"));
    EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("2024-11-06"));
    EXPECT_TRUE(body["docUrl"].is_string());
    ASSERT_EQ(body["issues"].size(), 1u);
    EXPECT_EQ(body["issues"][0]["path"], nlohmann::json({"headers", "X-Service-Version"}));

    Headers wrong = {{"Authorization", "Bearer " + kTestKey}, {"X-Service-Version", "2023-09-06"}};
    r = c.Send("GET", path, wrong);
    EXPECT_EQ(r.status, 400);
    EXPECT_THAT(r.Json()["error"].get<std::string>(), HasSubstr("2024-11-06"));

    // The official Node client's own header alone is not enough; alongside ours it is ignored.
    Headers node_only = {{"Authorization", "Bearer " + kTestKey},
                         {"X-Runway-Version", "2024-11-06"}};
    EXPECT_EQ(c.Send("GET", path, node_only).status, 400);
    Headers both = AuthHeaders();
    both.emplace_back("X-Runway-Version", "2024-11-06");
    EXPECT_EQ(c.Send("GET", path, both).status, 404);
}

TEST_F(Basics, MoreThanOneAuthorizationHeaderIsNeverAuthenticated) {
    auto c = Client();
    const std::string path = "/v1/tasks/00000000-0000-4000-8000-000000000000";
    const std::string good = "Bearer " + kTestKey;
    const std::string bad = "Bearer key_" + std::string(128, 'b');
    for (const auto& [first, second] :
         std::vector<std::pair<std::string, std::string>>{{good, bad}, {bad, good}, {good, good}}) {
        // Raw: a client library would fold or replace a repeated header.
        const auto r = c.SendRaw("GET " + path +
                                 " HTTP/1.1\r\nHost: x\r\nX-Service-Version: 2024-11-06\r\n"
                                 "Authorization: " +
                                 first + "\r\nAuthorization: " + second + "\r\n\r\n");
        EXPECT_EQ(r.status, 401) << first.substr(0, 12) << " then " << second.substr(0, 12);
        EXPECT_THAT(r.Json()["error"].get<std::string>(), HasSubstr("More than one Authorization"));
    }
    EXPECT_EQ(c.Send("GET", path, AuthHeaders()).status, 404);
}

TEST_F(Basics, TheKeyAndVersionAreCheckedBeforeTheBodyIsRead) {
    auto c = Client();
    // Only the header of a 900 kB body is sent: each answer comes without the server waiting for
    // (or asking for, with Expect: 100-continue) the body, and the connection closes.
    const std::string head =
        "POST /v1/text_to_image HTTP/1.1\r\nHost: x\r\n"
        "Content-Type: application/json\r\nContent-Length: 900000\r\n";
    for (const std::string& expect : {std::string(), std::string("Expect: 100-continue\r\n")}) {
        auto r = c.SendRaw(head + expect + "X-Service-Version: 2024-11-06\r\n\r\n");
        EXPECT_EQ(r.status, 401) << expect;
        EXPECT_EQ(r.Header("connection"), "close");
        r = c.SendRaw(head + expect +
                      "X-Service-Version: 2024-11-06\r\nAuthorization: Bearer key_" +
                      std::string(128, 'b') + "\r\n\r\n");
        EXPECT_EQ(r.status, 401) << expect;
        r = c.SendRaw(head + expect + "Authorization: Bearer " + kTestKey + "\r\n\r\n");
        EXPECT_EQ(r.status, 400) << expect;
        EXPECT_THAT(r.Json()["error"].get<std::string>(), HasSubstr("X-Service-Version"));
    }
    // With the key and version, Expect: 100-continue is answered and the body is read.
    const auto r = c.SendRaw(head +
                             "Expect: 100-continue\r\nX-Service-Version: 2024-11-06\r\n"
                             "Authorization: Bearer " +
                             kTestKey + "\r\n\r\n");
    EXPECT_EQ(r.status, 100);
}

TEST_F(Basics, UnknownPathsAre404ForEveryMethodAndWrongMethodsAre405) {
    auto c = Client();
    for (const std::string method : {"GET", "POST", "PATCH", "PUT", "DELETE"}) {
        const auto r =
            c.Send(method, "/_stainless_unknown_path", AuthHeaders(), method == "GET" ? "" : "{}");
        EXPECT_EQ(r.status, 404) << method;
        EXPECT_TRUE(r.Json()["error"].is_string());
    }
    EXPECT_EQ(c.Send("GET", "/v1/tasks", AuthHeaders()).status, 404);
    auto r = c.Send("PUT", "/v1/tasks/00000000-0000-4000-8000-000000000000", AuthHeaders(), "{}");
    EXPECT_EQ(r.status, 405);
    EXPECT_EQ(r.Header("allow"), "GET, HEAD, DELETE");
    r = c.Send("GET", "/v1/text_to_image", AuthHeaders());
    EXPECT_EQ(r.status, 405);
    EXPECT_EQ(r.Header("allow"), "POST");
}

TEST_F(Basics, RequestIdIsEchoedOrMade) {
    auto c = Client();
    auto h = AuthHeaders();
    h.emplace_back("X-Request-Id", "trace-123");
    EXPECT_EQ(c.Send("GET", "/healthz", h).Header("x-request-id"), "trace-123");
    const auto made = c.Send("GET", "/healthz").Header("x-request-id");
    EXPECT_EQ(made.size(), 36u);
    EXPECT_EQ(c.Send("GET", "/nope").Header("x-request-id").size(), 36u);
}

TEST_F(Basics, BadBodiesAre400And413) {
    auto c = Client();
    auto r = c.Send("POST", "/v1/text_to_image", AuthHeaders(), "{not json");
    EXPECT_EQ(r.status, 400);
    auto body = r.Json();
    EXPECT_TRUE(body["docUrl"].is_string());
    EXPECT_EQ(body["issues"].size(), 1u);

    r = c.Send("POST", "/v1/text_to_image", AuthHeaders(),
               std::string(100000, '[') + std::string(100000, ']'));
    EXPECT_EQ(r.status, 400);
    EXPECT_THAT(r.Json()["issues"][0]["message"].get<std::string>(), HasSubstr("nesting"));

    r = c.Send("POST", "/v1/text_to_image", AuthHeaders(),
               "{\"model\": \"gen4_image\", \"promptText\": \"\xff\xfe\"}");
    EXPECT_EQ(r.status, 400);

    r = c.Send("POST", "/v1/text_to_image", AuthHeaders(), "[1,2,3]");
    EXPECT_EQ(r.status, 400);

    // A body over 64 kB is parsed and validated on the blocking pool: the same 400, with every
    // issue and its path.
    r = c.Send("POST", "/v1/text_to_image", AuthHeaders(),
               R"({"model": "gen4_image", "ratio": "nope", "padding": ")" +
                   std::string(100000, 'x') + "\"}");
    ASSERT_EQ(r.status, 400);
    std::set<nlohmann::json> paths;
    const auto large = r.Json();
    for (const auto& issue : large["issues"]) paths.insert(issue["path"]);
    EXPECT_EQ(paths,
              (std::set<nlohmann::json>{nlohmann::json::array(), {"promptText"}, {"ratio"}}));

    // Over the 1 MiB limit this server was started with: refused from the headers alone.
    r = c.SendRaw("POST /v1/text_to_image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                  kTestKey +
                  "\r\nX-Service-Version: 2024-11-06\r\nContent-Type: application/json\r\n"
                  "Content-Length: 2000000\r\n\r\n{\"model\":");
    EXPECT_EQ(r.status, 413);
    EXPECT_TRUE(r.Json()["error"].is_string());
    // The server is still fine.
    EXPECT_EQ(c.Send("GET", "/healthz").status, 200);
}

TEST_F(Basics, MalformedHttpIs400) {
    auto c = Client();
    const auto r = c.SendRaw("GARBAGE\r\n\r\n");
    EXPECT_EQ(r.status, 400);
}

TEST_F(Basics, ValidationErrorsListEveryIssueWithPaths) {
    auto c = Client();
    nlohmann::json body = {{"model", "gen4_image_turbo"},
                           {"promptText", std::string(1001, 'x')},
                           {"ratio", "1:1"},
                           {"seed", -1},
                           {"extra", true}};
    const auto r = c.Send("POST", "/v1/text_to_image", AuthHeaders(), body.dump());
    ASSERT_EQ(r.status, 400) << r.body;
    const auto j = r.Json();
    EXPECT_TRUE(j["error"].is_string());
    EXPECT_TRUE(j["docUrl"].is_string());
    std::set<std::vector<std::string>> paths;
    for (const auto& issue : j["issues"]) {
        EXPECT_TRUE(issue["code"].is_string());
        EXPECT_TRUE(issue["message"].is_string());
        paths.insert(issue["path"].get<std::vector<std::string>>());
    }
    EXPECT_TRUE(paths.count({"promptText"}));
    EXPECT_TRUE(paths.count({"ratio"}));
    EXPECT_TRUE(paths.count({"seed"}));
    EXPECT_TRUE(paths.count({"referenceImages"}));
    EXPECT_TRUE(paths.count({}));  // unrecognized_keys at the object

    const auto unknown = c.Send("POST", "/v1/text_to_image", AuthHeaders(),
                                R"({"model":"gen3a_turbo","promptText":"x"})");
    ASSERT_EQ(unknown.status, 400);
    EXPECT_EQ(unknown.Json()["issues"][0]["path"], nlohmann::json({"model"}));
    EXPECT_THAT(unknown.Json()["issues"][0]["message"].get<std::string>(), HasSubstr("gen4_image"));
}

TEST_F(Basics, StringsHoldingNulAre400AndDoNotFailCreationsBatchedWithThem) {
    // PostgreSQL's jsonb cannot hold U+0000. Such a body used to reach the database and fail
    // its whole creation batch with 500, other clients' creations included.
    const std::string nul_body =
        R"({"model":"gen4_image","promptText":"a\u0000b","ratio":"1280:720"})";
    std::vector<std::thread> threads;
    std::atomic<int> created{0}, refused{0}, other{0};
    for (int t = 0; t < 6; ++t) {
        threads.emplace_back([&, t] {
            auto c = Client();
            for (int i = 0; i < 10; ++i) {
                const bool nul = t % 2 == 0;
                const auto r = c.Send("POST", "/v1/text_to_image", AuthHeaders(),
                                      nul ? nul_body : ImageRequest().dump());
                if (nul && r.status == 400 &&
                    r.Json()["issues"] ==
                        nlohmann::json::parse(R"([{"code":"invalid_string","path":["promptText"],
                            "message":"String must not contain U+0000"}])")) {
                    ++refused;
                } else if (!nul && r.status == 200) {
                    ++created;
                } else {
                    ++other;
                    ADD_FAILURE() << r.status << " " << r.body;
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(refused, 30);
    EXPECT_EQ(created, 30);
    EXPECT_EQ(other, 0);
}

TEST_F(Basics, TextToImageMakesARealPngOfTheRatiosSize) {
    auto c = Client();
    for (const auto& [model, ratio, credits] :
         std::vector<std::tuple<std::string, std::string, int>>{{"gen4_image", "1920:1080", 8},
                                                                {"gen4_image", "720:1280", 5}}) {
        const auto created =
            c.Send("POST", "/v1/text_to_image", AuthHeaders(), ImageRequest(model, ratio).dump());
        ASSERT_EQ(created.status, 200) << created.body;
        const auto j = created.Json();
        EXPECT_EQ(j["estimatedCost"]["credits"], credits) << model << " " << ratio;
        const std::string id = j["id"];
        const auto task = WaitForStatus(c, id, {"SUCCEEDED", "FAILED"});
        ASSERT_EQ(task["status"], "SUCCEEDED") << task.dump();
        EXPECT_EQ(task["estimatedCost"]["credits"], credits);
        EXPECT_TRUE(task["createdAt"].get<std::string>().ends_with("Z"));
        ASSERT_EQ(task["output"].size(), 1u);
        const std::string url = task["output"][0];
        const auto file = c.Send("GET", PathOf(url));
        ASSERT_EQ(file.status, 200);
        EXPECT_EQ(file.Header("content-type"), "image/png");
        int w = 0, h = 0;
        ParseRatioForTest(ratio, w, h);
        EXPECT_EQ(PngSize(file.body), std::make_pair(w, h));
    }
}

TEST_F(Basics, SameSeedAndPromptGiveTheSameImage) {
    auto c = Client();
    std::vector<std::string> files;
    for (int i = 0; i < 2; ++i) {
        const auto created = c.Send("POST", "/v1/text_to_image", AuthHeaders(),
                                    ImageRequest("gen4_image", "1024:1024", 7).dump());
        ASSERT_EQ(created.status, 200);
        const auto task = WaitForStatus(c, created.Json()["id"], {"SUCCEEDED", "FAILED"});
        ASSERT_EQ(task["status"], "SUCCEEDED");
        files.push_back(c.Send("GET", PathOf(task["output"][0])).body);
    }
    EXPECT_EQ(files[0], files[1]);
    EXPECT_FALSE(files[0].empty());
}

TEST_F(Basics, TurboNeedsReferenceImagesAndCostsTwo) {
    auto c = Client();
    auto body = ImageRequest("gen4_image_turbo", "1280:720");
    EXPECT_EQ(c.Send("POST", "/v1/text_to_image", AuthHeaders(), body.dump()).status, 400);
    // A tiny valid PNG as a data URI.
    body["referenceImages"] = {{{"uri",
                                 "data:image/"
                                 "png;base64,"
                                 "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQD"
                                 "wAEhQGAhKmMIQAAAABJRU5ErkJggg=="},
                                {"tag", "hero"}}};
    const auto r = c.Send("POST", "/v1/text_to_image", AuthHeaders(), body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Json()["estimatedCost"]["credits"], 2);
}

TEST_F(Basics, OutputUrlsAreSignedAndTamperingIsRefused) {
    auto c = Client();
    const auto created = c.Send("POST", "/v1/text_to_image", AuthHeaders(), ImageRequest().dump());
    const auto task = WaitForStatus(c, created.Json()["id"], {"SUCCEEDED"});
    ASSERT_EQ(task["status"], "SUCCEEDED");
    const std::string path = PathOf(task["output"][0]);
    EXPECT_EQ(c.Send("GET", path).status, 200);

    std::string tampered = path;
    tampered[tampered.size() - 1] = tampered.back() == '0' ? '1' : '0';
    EXPECT_EQ(c.Send("GET", tampered).status, 403);
    std::string longer = path;
    const auto e = longer.find("expires=") + 8;
    longer[e] = longer[e] == '9' ? '8' : '9';
    EXPECT_EQ(c.Send("GET", longer).status, 403);
    EXPECT_EQ(c.Send("GET", path.substr(0, path.find('?'))).status, 403);

    // Range requests and HEAD, for video players.
    const auto full = c.Send("GET", path);
    auto h = Headers{{"Range", "bytes=0-9"}};
    const auto part = c.Send("GET", path, h);
    EXPECT_EQ(part.status, 206);
    EXPECT_EQ(part.body, full.body.substr(0, 10));
    EXPECT_EQ(part.Header("content-range"), "bytes 0-9/" + std::to_string(full.body.size()));
    const auto head = c.Send("HEAD", path);
    EXPECT_EQ(head.status, 200);
    EXPECT_EQ(head.Header("content-length"), std::to_string(full.body.size()));
    EXPECT_EQ(head.Header("accept-ranges"), "bytes");
    h = {{"Range", "bytes=999999999-"}};
    EXPECT_EQ(c.Send("GET", path, h).status, 416);
}

TEST_F(Basics, DeletingAFinishedTaskRemovesItAndItsOutputs) {
    auto c = Client();
    const auto created = c.Send("POST", "/v1/text_to_image", AuthHeaders(), ImageRequest().dump());
    const std::string id = created.Json()["id"];
    const auto task = WaitForStatus(c, id, {"SUCCEEDED"});
    ASSERT_EQ(task["status"], "SUCCEEDED");
    const std::string path = PathOf(task["output"][0]);
    auto h = AuthHeaders();
    h.emplace_back("Accept", "*/*");
    const auto del = c.Send("DELETE", "/v1/tasks/" + id, h);
    EXPECT_EQ(del.status, 204);
    EXPECT_TRUE(del.body.empty());
    EXPECT_EQ(c.Send("GET", "/v1/tasks/" + id, AuthHeaders()).status, 404);
    EXPECT_EQ(c.Send("GET", path).status, 404);
    EXPECT_EQ(c.Send("DELETE", "/v1/tasks/" + id, AuthHeaders()).status, 404);
}

TEST_F(Basics, AnIdInCapitalsNamesTheSameTaskAndItsFiles) {
    auto c = Client();
    const auto created = c.Send("POST", "/v1/text_to_image", AuthHeaders(), ImageRequest().dump());
    const std::string id = created.Json()["id"];
    ASSERT_EQ(WaitForStatus(c, id, {"SUCCEEDED"})["status"], "SUCCEEDED");
    std::string upper = id;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    const auto task = c.Send("GET", "/v1/tasks/" + upper, AuthHeaders());
    ASSERT_EQ(task.status, 200);
    EXPECT_EQ(task.Json()["id"], id);
    const std::string path = PathOf(task.Json()["output"][0]);
    ASSERT_EQ(c.Send("GET", path).status, 200);
    // Deleted by its id in capitals: the record and the output files both go.
    EXPECT_EQ(c.Send("DELETE", "/v1/tasks/" + upper, AuthHeaders()).status, 204);
    EXPECT_EQ(c.Send("GET", "/v1/tasks/" + id, AuthHeaders()).status, 404);
    EXPECT_EQ(c.Send("GET", path).status, 404);
}

TEST_F(Basics, MalformedTaskIdsAre404) {
    auto c = Client();
    for (const std::string id :
         {"nope", "00000000-0000-4000-8000-00000000000", "%27%3B%20DROP%20TABLE%20tasks%3B%20--"}) {
        EXPECT_EQ(c.Send("GET", "/v1/tasks/" + id, AuthHeaders()).status, 404) << id;
    }
}

TEST_F(Basics, OrganizationsCannotSeeEachOthersTasks) {
    auto c = Client();
    const std::string other = CreateKey(*server_, "other-org");
    const auto created = c.Send("POST", "/v1/text_to_image", AuthHeaders(), ImageRequest().dump());
    const std::string id = created.Json()["id"];
    EXPECT_EQ(c.Send("GET", "/v1/tasks/" + id, AuthHeaders(other)).status, 404);
    EXPECT_EQ(c.Send("DELETE", "/v1/tasks/" + id, AuthHeaders(other)).status, 404);
    EXPECT_EQ(c.Send("GET", "/v1/tasks/" + id, AuthHeaders()).status, 200);
}

TEST_F(Basics, DisabledKeysAndSuspendedOrganizationsAre401) {
    auto c = Client();
    const std::string key = CreateKey(*server_, "doomed");
    const std::string key2 = CreateKey(*server_, "suspended-org");
    const std::string probe = "/v1/tasks/00000000-0000-4000-8000-000000000000";
    EXPECT_EQ(c.Send("GET", probe, AuthHeaders(key)).status, 404);
    EXPECT_EQ(c.Send("GET", probe, AuthHeaders(key2)).status, 404);

    std::string out;
    ASSERT_EQ(server_->RunCommand("keys list", &out), 0);
    const auto line_end = out.find("doomed");
    ASSERT_NE(line_end, std::string::npos) << out;
    const std::string key_id = out.substr(out.rfind('\n', line_end) + 1, 36);
    ASSERT_EQ(server_->RunCommand("keys disable " + key_id, &out), 0) << out;
    ASSERT_EQ(server_->RunCommand("orgs suspend suspended-org", &out), 0) << out;
    // Every node drops its cache on the notification; allow it a moment to arrive.
    int a = 0, b = 0;
    for (int i = 0; i < 100 && (a != 401 || b != 401); ++i) {
        a = c.Send("GET", probe, AuthHeaders(key)).status;
        b = c.Send("GET", probe, AuthHeaders(key2)).status;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(a, 401);
    EXPECT_EQ(b, 401);
    ASSERT_EQ(server_->RunCommand("orgs resume suspended-org", &out), 0) << out;
    for (int i = 0; i < 100 && b != 404; ++i) {
        b = c.Send("GET", probe, AuthHeaders(key2)).status;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(b, 404);
}

TEST_F(Basics, MetricsArePrometheusText) {
    auto c = Client();
    c.Send("GET", "/healthz");
    const auto r = c.Send("GET", "/metrics");
    ASSERT_EQ(r.status, 200);
    EXPECT_THAT(r.Header("content-type"), HasSubstr("text/plain"));
    EXPECT_THAT(
        r.body,
        HasSubstr("genhost_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"}"));
    EXPECT_THAT(r.body,
                HasSubstr("genhost_http_request_duration_seconds_bucket{route=\"/healthz\""));
    EXPECT_THAT(r.body, HasSubstr("genhost_tasks{status=\"PENDING\"}"));
    EXPECT_THAT(r.body, HasSubstr("genhost_queue_depth"));
    EXPECT_THAT(r.body, HasSubstr("genhost_db_pool_connections"));
    // Issue 32: build and process metrics.
    EXPECT_THAT(r.body, HasSubstr("genhost_build_info{version=\""));
    EXPECT_GT(MetricValue(c, "process_resident_memory_bytes"), 1e6);
    EXPECT_GT(MetricValue(c, "process_threads"), 1);
    EXPECT_GT(MetricValue(c, "process_open_fds"), 3);
    EXPECT_GE(MetricValue(c, "process_cpu_seconds_total"), 0);
    // Prometheus conventions: a family is a counter exactly when its name ends in _total.
    std::istringstream lines(c.Send("GET", "/metrics").body);
    int families = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("# TYPE ", 0) != 0) continue;
        ++families;
        std::istringstream fields(line.substr(7));
        std::string name, type;
        fields >> name >> type;
        const bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
        EXPECT_EQ(total, type == "counter") << line;
    }
    EXPECT_GT(families, 15);
}

// Issue 32: per-model task metrics, and each task's start and end logged with the task named in
// the access line of the request that created it.
TEST_F(Basics, TasksAreCountedByModelAndLoggedAtTheirStartAndEnd) {
    auto c = Client();
    const std::string done =
        "genhost_tasks_finished_total{model=\"gen4_image\",status=\"SUCCEEDED\"}";
    const double before = std::max(0.0, MetricValue(c, done));
    const std::string provider_runs =
        "genhost_provider_runs_total{provider=\"builtin\",outcome=\"succeeded\"}";
    const double provider_before = std::max(0.0, MetricValue(c, provider_runs));
    const auto created =
        c.Send("POST", "/v1/text_to_image", AuthHeaders(), ImageRequest("gen4_image").dump());
    ASSERT_EQ(created.status, 200) << created.body;
    const std::string id = created.Json()["id"];
    ASSERT_EQ(WaitForStatus(c, id, {"SUCCEEDED"})["status"], "SUCCEEDED");
    EXPECT_EQ(MetricValue(c, done), before + 1);
    EXPECT_GE(MetricValue(c, "genhost_task_duration_seconds_count{model=\"gen4_image\"}"), 1);
    // The provider's run is counted too, by provider and outcome.
    EXPECT_EQ(MetricValue(c, provider_runs), provider_before + 1);
    EXPECT_GE(MetricValue(c, "genhost_provider_run_duration_seconds_count{provider=\"builtin\"}"),
              1);
    bool access = false, start = false, end = false;
    for (int i = 0; i < 40 && !(access && start && end); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::istringstream in(server_->Log());
        for (std::string l; std::getline(in, l);) {
            const auto j = nlohmann::json::parse(l, nullptr, /*allow_exceptions=*/false);
            if (!j.is_object() || j.value("task", "") != id) continue;
            if (j["logger"] == "access") access = j["path"] == "/v1/text_to_image";
            if (j["logger"] == "task" && j["event"] == "start") start = j["model"] == "gen4_image";
            if (j["logger"] == "task" && j["event"] == "end") {
                end = j["outcome"] == "SUCCEEDED" && j["duration_ms"].get<double>() > 0;
            }
        }
    }
    EXPECT_TRUE(access);
    EXPECT_TRUE(start);
    EXPECT_TRUE(end);
}

TEST_F(Basics, AccessLinesOfInvalidUtf8AndUnreadableRequestsAreJsonToo) {
    auto c = Client();
    // A path with bytes that are not UTF-8, a header too large (431), a body too large (413),
    // and a request that is not HTTP (400): each writes one access line, and each is JSON.
    EXPECT_EQ(c.SendRaw("GET /v1/tasks/\xff\xfe\xc3(probe-utf8 HTTP/1.1\r\nHost: x\r\n\r\n").status,
              401);
    EXPECT_EQ(c.SendRaw("GET /probe-431 HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'h') +
                        "\r\n\r\n")
                  .status,
              431);
    EXPECT_EQ(c.SendRaw("POST /v1/text_to_image HTTP/1.1\r\nHost: x\r\nX-Request-Id: probe-413\r\n"
                        "X-Service-Version: 2024-11-06\r\nAuthorization: Bearer " +
                        kTestKey + "\r\nContent-Length: 9000000\r\n\r\n")
                  .status,
              413);
    EXPECT_EQ(c.SendRaw("NOT HTTP AT ALL\r\n\r\n").status, 400);
    std::map<int, int> statuses;
    bool utf8 = false;
    for (int i = 0; i < 60; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        statuses.clear();
        std::istringstream in(server_->Log());
        std::string l;
        while (std::getline(in, l)) {
            if (l.empty()) continue;
            const auto j = nlohmann::json::parse(l, nullptr, /*allow_exceptions=*/false);
            ASSERT_TRUE(j.is_object()) << "not a JSON line: " << l;
            if (j.value("logger", "") != "access") continue;
            const std::string path = j.value("path", "");
            if (path.find("probe-utf8") != std::string::npos) {
                utf8 = true;
                EXPECT_EQ(path, "/v1/tasks/\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd(probe-utf8");
            }
            if (path == "/probe-431" || j.value("request_id", "") == "probe-413" || path == "-") {
                ++statuses[j["status"].get<int>()];
            }
        }
        if (utf8 && statuses[431] && statuses[413] && statuses[400]) break;
    }
    EXPECT_TRUE(utf8);
    EXPECT_EQ(statuses[431], 1);
    EXPECT_EQ(statuses[413], 1);
    EXPECT_GE(statuses[400], 1);
}

TEST_F(Basics, AccessLogHasOneJsonLinePerRequest) {
    auto c = Client();
    auto h = AuthHeaders();
    h.emplace_back("X-Request-Id", "access-log-probe");
    c.Send("GET", "/v1/tasks/00000000-0000-4000-8000-000000000000", h);
    std::string line;
    for (int i = 0; i < 60 && line.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::istringstream in(server_->Log());
        std::string l;
        while (std::getline(in, l)) {
            if (l.find("access-log-probe") != std::string::npos) line = l;
        }
    }
    ASSERT_FALSE(line.empty());
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["method"], "GET");
    EXPECT_EQ(j["status"], 404);
    EXPECT_EQ(j["request_id"], "access-log-probe");
    EXPECT_FALSE(j["org"].get<std::string>().empty());
    EXPECT_TRUE(j["duration_ms"].is_number());
}

}  // namespace
}  // namespace genhost::testing
