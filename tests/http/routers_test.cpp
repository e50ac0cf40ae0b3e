// Model routers against a real server (docs/routers.md): the record with its effective settings
// (defaults filled), a slug unique among the organization's live routers (409), unknown model
// ids refused at their path, PATCH merging settings field by field with the version growing only
// when they change (and every version kept), keyset pages, other organizations' routers not
// found, and a deleted router's slug free again.
#include "helpers.hpp"

#include <gmock/gmock.h>
#include <pqxx/pqxx>

namespace genhost::testing {
namespace {

class RoutersApi : public ServerSuite<RoutersApi> {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "0"}}); }

    HttpResponse Send(const std::string& method, const std::string& path,
                      const nlohmann::json& body = nullptr, const std::string& key = kTestKey) {
        return client_.Send(method, path, AuthHeaders(key), body.is_null() ? "" : body.dump());
    }

    nlohmann::json Create(const nlohmann::json& body) {
        const auto r = Send("POST", "/v1/routers", body);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.Json();
    }

    HttpClient client_ = Client();
};

TEST_F(RoutersApi, ARouterHasItsEffectiveSettingsAndAUniqueSlug) {
    const auto made = Create({{"slug", "plain"}});
    EXPECT_EQ(made["name"], "plain");
    EXPECT_TRUE(made["description"].is_null());
    EXPECT_EQ(made["version"], 1);
    EXPECT_EQ(made["settings"], nlohmann::json::parse(R"({"schemaVersion": 1, "optimizeFor": "cost",
                  "models": {"mode": "allow_new_except", "ids": []},
                  "maxCreditsPerGeneration": {}, "fallback": {"onCapacity": false}})"));
    const auto dup = Send("POST", "/v1/routers", {{"slug", "plain"}, {"name", "Again"}});
    EXPECT_EQ(dup.status, 409);
    EXPECT_THAT(dup.body, ::testing::HasSubstr("slug plain already exists"));
    // Another organization may use the same slug.
    const std::string other = CreateKey(*server_, "routers-other");
    EXPECT_EQ(Send("POST", "/v1/routers", {{"slug", "plain"}}, other).status, 200);
    EXPECT_EQ(Send("GET", "/v1/routers/" + made["id"].get<std::string>(), nullptr, other).status,
              404);
}

TEST_F(RoutersApi, BadSlugsModelsAndSettingsGetEveryIssue) {
    const auto r = Send("POST", "/v1/routers",
                        {{"slug", "Not OK"},
                         {"name", ""},
                         {"description", std::string(2001, 'd')},
                         {"settings",
                          {{"schemaVersion", 2},
                           {"optimizeFor", "speed"},
                           {"maxCreditsPerGeneration", {{"video", 0}}},
                           {"models", {{"mode", "deny"}}}}}});
    ASSERT_EQ(r.status, 400);
    std::vector<std::string> paths;
    const auto body = r.Json();
    for (const auto& i : body["issues"]) paths.push_back(i["path"].dump());
    EXPECT_THAT(paths, ::testing::IsSupersetOf({R"(["slug"])", R"(["name"])", R"(["description"])",
                                                R"(["settings","schemaVersion"])",
                                                R"(["settings","optimizeFor"])",
                                                R"(["settings","maxCreditsPerGeneration","video"])",
                                                R"(["settings","models","mode"])"}));
    const auto unknown = Send(
        "POST", "/v1/routers",
        {{"slug", "models"},
         {"settings",
          {{"models",
            {{"ids",
              {"gen4_image", "gpt_image_2", "nope", "veo3.1", "gwm1_avatars", "seed_audio"}}}}}}});
    ASSERT_EQ(unknown.status, 400) << unknown.body;
    const auto issues = unknown.Json()["issues"];
    // gpt_image_2 is the client's name (not the catalog's), nope is nothing, gwm1_avatars makes
    // avatar videos, not generations from a prompt; veo3.1 and seed_audio are routable.
    ASSERT_EQ(issues.size(), 3u) << unknown.body;
    EXPECT_EQ(issues[0]["path"], nlohmann::json::parse(R"(["settings","models","ids","1"])"));
    EXPECT_EQ(issues[1]["path"], nlohmann::json::parse(R"(["settings","models","ids","2"])"));
    EXPECT_EQ(issues[2]["path"], nlohmann::json::parse(R"(["settings","models","ids","4"])"));
}

TEST_F(RoutersApi, PatchMergesFieldByFieldAndTheVersionFollowsTheSettings) {
    const auto made = Create(nlohmann::json::parse(R"({"slug": "merge", "settings": {
        "models": {"mode": "allowlist_only", "ids": ["gen4_image", "gen4_turbo"]},
        "maxCreditsPerGeneration": {"video": 100, "image": 10}}})"));
    const std::string path = "/v1/routers/" + made["id"].get<std::string>();
    // Only optimizeFor: models and caps stay; version 2.
    auto r = Send("PATCH", path, {{"settings", {{"optimizeFor", "latency"}}}}).Json();
    EXPECT_EQ(r["version"], 2);
    EXPECT_EQ(r["settings"]["models"]["ids"], nlohmann::json({"gen4_image", "gen4_turbo"}));
    EXPECT_EQ(r["settings"]["maxCreditsPerGeneration"],
              nlohmann::json({{"video", 100}, {"image", 10}}));
    // The same settings again, a name and a description: no new version.
    r = Send("PATCH", path,
             {{"name", "Merged"},
              {"description", "for tests"},
              {"settings", {{"optimizeFor", "latency"}}}})
            .Json();
    EXPECT_EQ(r["version"], 2);
    EXPECT_EQ(r["name"], "Merged");
    // Within models, a missing ids keeps its value; one cap changes, the other stays.
    r = Send("PATCH", path,
             {{"settings",
               {{"models", {{"mode", "allow_new_except"}}},
                {"maxCreditsPerGeneration", {{"video", 50}}}}}})
            .Json();
    EXPECT_EQ(r["version"], 3);
    EXPECT_EQ(r["settings"]["models"], nlohmann::json::parse(R"({"mode": "allow_new_except",
                                                                "ids": ["gen4_image", "gen4_turbo"]})"));
    EXPECT_EQ(r["settings"]["maxCreditsPerGeneration"],
              nlohmann::json({{"video", 50}, {"image", 10}}));
    EXPECT_EQ(r["slug"], "merge");
    // The slug cannot change.
    EXPECT_EQ(Send("PATCH", path, {{"slug", "renamed"}}).status, 400);
    // Every version is kept.
    pqxx::connection c(db_->dsn());
    pqxx::nontransaction n(c);
    const auto versions =
        n.exec("SELECT version, settings->>'optimizeFor' FROM router_versions WHERE router_id = '" +
               made["id"].get<std::string>() + "' ORDER BY version");
    ASSERT_EQ(versions.size(), 3u);
    EXPECT_EQ(versions[0][1].as<std::string>(), "cost");
    EXPECT_EQ(versions[1][1].as<std::string>(), "latency");
}

TEST_F(RoutersApi, PagesNotFoundAndADeletedSlugIsFreeAgain) {
    std::vector<std::string> made;
    for (int i = 0; i < 3; ++i)
        made.push_back(Create({{"slug", "page-" + std::to_string(i)}})["id"]);
    std::vector<std::string> seen;
    std::string cursor;
    for (int pages = 0; pages < 20; ++pages) {
        const auto page =
            Send("GET", "/v1/routers?limit=2" + (cursor.empty() ? "" : "&cursor=" + cursor)).Json();
        for (const auto& r : page["data"]) seen.push_back(r["id"]);
        if (page["nextCursor"].is_null()) break;
        cursor = page["nextCursor"];
    }
    for (const auto& id : made) EXPECT_NE(std::find(seen.begin(), seen.end(), id), seen.end());
    EXPECT_EQ(Send("GET", "/v1/routers?limit=101").status, 400);
    EXPECT_EQ(Send("GET", "/v1/routers/182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e").status, 404);
    EXPECT_EQ(
        Send("PATCH", "/v1/routers/182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e", {{"name", "x"}}).status,
        404);

    EXPECT_EQ(Send("DELETE", "/v1/routers/" + made[0]).status, 204);
    EXPECT_EQ(Send("DELETE", "/v1/routers/" + made[0]).status, 404);
    EXPECT_EQ(Send("GET", "/v1/routers/" + made[0]).status, 404);
    const auto again = Create({{"slug", "page-0"}});
    EXPECT_NE(again["id"], made[0]);
    EXPECT_EQ(again["version"], 1);
    EXPECT_EQ(client_.Send("GET", "/v1/routers").status, 401);
}

}  // namespace
}  // namespace genhost::testing
