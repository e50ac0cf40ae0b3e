// Realtime sessions, conversations and usage against a real server (docs/realtime.md): the
// control plane's lifecycle (NOT_READY, READY with a key, CANCELLED), consume and
// connect_backend with their tokens, CORS and refusals, every rule of the create body at its
// path, the organization's concurrent-session limit (queued), a READY session nobody joins, an
// integration session, a node that dies with its session, and the conversation records and usage
// they leave.
#include "helpers.hpp"

#include "support/ws_client.hpp"

#include "genhost/core/clock.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/media/image.hpp"
#include "genhost/realtime/room_token.hpp"

#include <gmock/gmock.h>
#include <pqxx/pqxx>

#include <csignal>

namespace genhost::testing {
namespace {

using ::testing::HasSubstr;

SysTime NowMicros() {
    return std::chrono::time_point_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now());
}

nlohmann::json PresetSession(int max_duration = 300) {
    return {{"model", "gwm1_avatars"},
            {"avatar", {{"type", "service-preset"}, {"presetId", "tennis-coach"}}},
            {"maxDuration", max_duration}};
}

nlohmann::json Tool(const std::string& name, const std::string& type = "client_event") {
    return {{"type", type},
            {"name", name},
            {"description", "Does " + name},
            {"parameters",
             {{{"type", "string"},
               {"name", "target"},
               {"description", "What"},
               {"enum", {"a", "b"}}}}}};
}

class RealtimeApi : public ServerSuite<RealtimeApi> {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "0"}}); }

    HttpResponse Send(const std::string& method, const std::string& path,
                      const nlohmann::json& body = nullptr, const std::string& key = kTestKey) {
        return client_.Send(method, path, AuthHeaders(key), body.is_null() ? "" : body.dump());
    }

    std::string Create(const nlohmann::json& body, const std::string& key = kTestKey) {
        const auto r = Send("POST", "/v1/realtime_sessions", body, key);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.Json().value("id", "");
    }

    // Until polls session `id` until its status is one of `want` (20 s at most).
    nlohmann::json Until(const std::string& id, const std::set<std::string>& want,
                         const std::string& key = kTestKey) {
        nlohmann::json last;
        for (int i = 0; i < 400; ++i) {
            last = Send("GET", "/v1/realtime_sessions/" + id, nullptr, key).Json();
            if (want.count(last.value("status", ""))) return last;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ADD_FAILURE() << "session " << id << " stayed " << last.dump();
        return last;
    }

    std::string Secret() {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        return n.exec1("SELECT value FROM settings WHERE name = 'media_token_secret'")[0]
            .as<std::string>();
    }

    HttpResponse Consume(const std::string& id, const std::string& authorization) {
        Headers h = {{"Content-Type", "application/json"}};
        if (!authorization.empty()) h.push_back({"Authorization", authorization});
        return client_.Send("POST", "/v1/realtime_sessions/" + id + "/consume", h, "");
    }

    HttpClient client_ = Client();
};

TEST_F(RealtimeApi, ASessionBecomesReadyAndItsKeyIsConsumedOnce) {
    const std::string id = Create(PresetSession());
    ASSERT_TRUE(IsUuid(id));
    const auto created = Send("GET", "/v1/realtime_sessions/" + id).Json();
    EXPECT_EQ(created["id"], id);
    EXPECT_TRUE(created["status"] == "NOT_READY" || created["status"] == "READY") << created;
    const auto ready = Until(id, {"READY"});
    const std::string key = ready.value("sessionKey", "");
    ASSERT_GE(key.size(), 40u);
    const auto expires = ParseTimestamp(ready["expiresAt"].get<std::string>());
    ASSERT_TRUE(expires);
    EXPECT_GT(*expires, NowMicros() + std::chrono::seconds(60));

    // Refused: no key, a wrong key, an API key, two Authorization headers.
    EXPECT_EQ(Consume(id, "").status, 401);
    EXPECT_EQ(Consume(id, "Bearer wrong").status, 401);
    EXPECT_EQ(Consume(id, "Bearer " + kTestKey).status, 401);
    const auto wrong_id = Consume(NewUuid(), "Bearer " + key);
    EXPECT_EQ(wrong_id.status, 401);
    EXPECT_EQ(wrong_id.headers.at("access-control-allow-origin"), "*");
    EXPECT_EQ(wrong_id.Json()["error"], "Invalid session key for this session");

    // The CORS preflight.
    const auto preflight = client_.Send(
        "OPTIONS", "/v1/realtime_sessions/" + id + "/consume",
        {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "POST"}}, "");
    EXPECT_EQ(preflight.status, 204);
    EXPECT_EQ(preflight.headers.at("access-control-allow-origin"), "*");
    EXPECT_THAT(preflight.headers.at("access-control-allow-headers"), HasSubstr("Authorization"));
    EXPECT_THAT(preflight.headers.at("access-control-allow-methods"), HasSubstr("POST"));

    // Consumed: the media plane's URL and a token for this room, once.
    const auto consumed = Consume(id, "Bearer " + key);
    ASSERT_EQ(consumed.status, 200) << consumed.body;
    EXPECT_EQ(consumed.headers.at("access-control-allow-origin"), "*");
    const auto credentials = consumed.Json();
    EXPECT_EQ(credentials["roomName"], id);
    EXPECT_EQ(credentials["url"],
              "ws://127.0.0.1:" + std::to_string(server_->port()) + "/_genhost/realtime");
    std::string why;
    const auto claims = realtime::VerifyRoomToken(credentials["token"].get<std::string>(),
                                                  "genhost", Secret(), NowMicros(), &why);
    ASSERT_TRUE(claims) << why;
    EXPECT_EQ(claims->room, id);
    EXPECT_EQ(claims->identity, "user");
    EXPECT_TRUE(claims->can_publish);
    const auto again = Consume(id, "Bearer " + key);
    EXPECT_EQ(again.status, 409);
    EXPECT_EQ(again.Json()["error"], "The session key was already consumed");
    EXPECT_EQ(again.headers.at("x-should-retry"), "false");

    // The backend handler: the API key without the version header (the helper cannot send
    // it); a wrong version header is still refused.
    const auto backend = client_.Send("POST", "/v1/realtime_sessions/" + id + "/connect_backend",
                                      {{"Authorization", "Bearer " + kTestKey},
                                       {"Content-Type", "application/json"},
                                       {"X-Runway-Version", "2024-11-06"}},
                                      "");
    ASSERT_EQ(backend.status, 200) << backend.body;
    const auto backend_claims = realtime::VerifyRoomToken(
        backend.Json()["token"].get<std::string>(), "genhost", Secret(), NowMicros(), &why);
    ASSERT_TRUE(backend_claims) << why;
    EXPECT_EQ(backend_claims->identity, "backend");
    EXPECT_FALSE(backend_claims->can_publish);
    EXPECT_EQ(
        client_
            .Send("POST", "/v1/realtime_sessions/" + id + "/connect_backend",
                  {{"Authorization", "Bearer " + kTestKey}, {"X-Service-Version", "2020-01-01"}},
                  "")
            .status,
        400);
    EXPECT_EQ(
        client_.Send("POST", "/v1/realtime_sessions/" + id + "/connect_backend", {}, "").status,
        401);

    // Cancelled: DELETE answers 204 (also again), the conversation ended without starting.
    EXPECT_EQ(Send("DELETE", "/v1/realtime_sessions/" + id).status, 204);
    EXPECT_EQ(Until(id, {"CANCELLED"})["status"], "CANCELLED");
    EXPECT_EQ(Send("DELETE", "/v1/realtime_sessions/" + id).status, 204);
    EXPECT_EQ(Send("POST", "/v1/realtime_sessions/" + id + "/connect_backend").status, 409);
    const auto conversation = Send("GET", "/v1/avatar_conversations/" + id).Json();
    EXPECT_EQ(conversation["status"], "ended");
    EXPECT_TRUE(conversation["duration"].is_null());
    EXPECT_TRUE(conversation["startedAt"].is_null());
    EXPECT_FALSE(conversation["endedAt"].is_null());
    EXPECT_EQ(conversation["avatar"],
              nlohmann::json({{"type", "service-preset"}, {"presetId", "tennis-coach"}}));
    EXPECT_EQ(conversation["maxDuration"], 300);
    EXPECT_EQ(conversation["name"], "Conversation with Tennis Coach");
}

TEST_F(RealtimeApi, EveryRuleOfTheBodyIsCheckedAtItsPath) {
    nlohmann::json body = PresetSession(5);
    body["tools"] = {Tool("click"), Tool("click"), Tool("9bad")};
    body["personality"] = std::string(10001, 'p');
    const auto r = Send("POST", "/v1/realtime_sessions", body);
    ASSERT_EQ(r.status, 400) << r.body;
    std::set<std::string> paths;
    const auto answer = r.Json();
    for (const auto& issue : answer["issues"]) {
        std::string p;
        for (const auto& part : issue["path"]) p += "/" + part.get<std::string>();
        paths.insert(p);
    }
    EXPECT_TRUE(paths.count("/maxDuration")) << r.body;
    EXPECT_TRUE(paths.count("/personality")) << r.body;
    EXPECT_TRUE(paths.count("/tools/2/name")) << r.body;

    // Unique names are checked once the body has its shape.
    nlohmann::json twice = PresetSession();
    twice["tools"] = {Tool("click"), Tool("scroll", "backend_rpc"), Tool("click")};
    const auto dup = Send("POST", "/v1/realtime_sessions", twice);
    ASSERT_EQ(dup.status, 400) << dup.body;
    EXPECT_EQ(dup.Json()["issues"][0]["path"], nlohmann::json({"tools", "2", "name"}));
    EXPECT_THAT(dup.Json()["issues"][0]["message"].get<std::string>(), HasSubstr("unique"));

    // A custom avatar must exist (and be this organization's).
    nlohmann::json custom = PresetSession();
    custom["avatar"] = {{"type", "custom"}, {"avatarId", NewUuid()}};
    const auto missing = Send("POST", "/v1/realtime_sessions", custom);
    ASSERT_EQ(missing.status, 400);
    EXPECT_EQ(missing.Json()["issues"][0]["path"], nlohmann::json({"avatar", "avatarId"}));
    EXPECT_EQ(missing.Json()["issues"][0]["message"], "Avatar not found");

    // The clients' own literals are refused like any unknown value.
    nlohmann::json literal = PresetSession();
    literal["avatar"]["type"] = "runway-preset";
    EXPECT_EQ(Send("POST", "/v1/realtime_sessions", literal).status, 400);

    // Unknown, malformed and foreign ids are 404.
    EXPECT_EQ(Send("GET", "/v1/realtime_sessions/" + NewUuid()).status, 404);
    EXPECT_EQ(Send("GET", "/v1/realtime_sessions/nope").status, 404);
    EXPECT_EQ(Send("DELETE", "/v1/realtime_sessions/" + NewUuid()).status, 404);
    EXPECT_EQ(Send("GET", "/v1/avatar_conversations/" + NewUuid()).status, 404);
    EXPECT_EQ(Send("DELETE", "/v1/avatar_conversations/" + NewUuid()).status, 404);
    const std::string other = CreateKey(*server_, "realtime-other");
    const std::string mine = Create(PresetSession());
    EXPECT_EQ(Send("GET", "/v1/realtime_sessions/" + mine, nullptr, other).status, 404);
    EXPECT_EQ(Send("GET", "/v1/avatar_conversations/" + mine, nullptr, other).status, 404);
    EXPECT_EQ(Send("DELETE", "/v1/realtime_sessions/" + mine, nullptr, other).status, 404);
    EXPECT_EQ(
        Send("POST", "/v1/realtime_sessions/" + mine + "/connect_backend", nullptr, other).status,
        404);
    EXPECT_EQ(Send("DELETE", "/v1/realtime_sessions/" + mine).status, 204);
}

TEST_F(RealtimeApi, AnOrganizationsSessionsQueueAtItsLimit) {
    // Tier 1: one session at a time.
    const std::string key = CreateKey(*server_, "realtime-tier1", 1);
    const std::string first = Create(PresetSession(), key);
    Until(first, {"READY"}, key);
    const std::string second = Create(PresetSession(), key);
    nlohmann::json waiting;
    for (int i = 0; i < 100; ++i) {
        waiting = Send("GET", "/v1/realtime_sessions/" + second, nullptr, key).Json();
        if (waiting.value("queued", false)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(waiting["status"], "NOT_READY") << waiting;
    EXPECT_EQ(waiting["queued"], true) << waiting;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(Send("GET", "/v1/realtime_sessions/" + second, nullptr, key).Json()["status"],
              "NOT_READY");
    // The first ends: the second gets its place at once.
    const auto freed = std::chrono::steady_clock::now();
    EXPECT_EQ(Send("DELETE", "/v1/realtime_sessions/" + first, nullptr, key).status, 204);
    const auto ready = Until(second, {"READY"}, key);
    EXPECT_EQ(ready["status"], "READY");
    EXPECT_LT(std::chrono::steady_clock::now() - freed, std::chrono::seconds(3));
    EXPECT_EQ(Send("DELETE", "/v1/realtime_sessions/" + second, nullptr, key).status, 204);
}

TEST_F(RealtimeApi, AnIntegrationSessionFailsClearly) {
    nlohmann::json body = PresetSession();
    body["integration"] = {{"type", "voice_provider"},
                           {"signedUrl", "wss://agents.example.com/v1/convai?token=abc"}};
    const std::string id = Create(body);
    const auto failed = Until(id, {"FAILED"});
    EXPECT_EQ(failed["failureCode"], "THIRD_PARTY.UNSUPPORTED");
    EXPECT_THAT(failed["failure"].get<std::string>(), HasSubstr("voice providers"));
    const auto conversation = Send("GET", "/v1/avatar_conversations/" + id).Json();
    EXPECT_EQ(conversation["status"], "failed");
    EXPECT_EQ(conversation["failureCode"], "THIRD_PARTY.UNSUPPORTED");
    EXPECT_TRUE(conversation["duration"].is_null());

    nlohmann::json deprecated = PresetSession();
    deprecated["rtcroom"] = {{"url", "wss://rooms.example.com"}, {"token", "t"}, {"roomName", "r"}};
    const auto room = Until(Create(deprecated), {"FAILED"});
    EXPECT_EQ(room["failureCode"], "THIRD_PARTY.UNSUPPORTED");
    EXPECT_THAT(room["failure"].get<std::string>(), HasSubstr("rooms"));
}

TEST_F(RealtimeApi, ConversationsListFilterPageAndDelete) {
    const std::string key = CreateKey(*server_, "realtime-conversations", 5);
    std::vector<std::string> ids;
    for (int i = 0; i < 5; ++i) ids.push_back(Create(PresetSession(10 + i), key));
    nlohmann::json tools = PresetSession();
    tools["tools"] = {Tool("click")};
    ids.push_back(Create(tools, key));
    // Newest first, in pages; hasTools; in_progress until they end.
    const auto page = Send("GET", "/v1/avatar_conversations?limit=4", nullptr, key);
    ASSERT_EQ(page.status, 200) << page.body;
    const auto first = page.Json();
    ASSERT_EQ(first["data"].size(), 4u);
    EXPECT_EQ(first["hasMore"], true);
    EXPECT_EQ(first["data"][0]["id"], ids[5]);
    EXPECT_EQ(first["data"][0]["hasTools"], true);
    EXPECT_EQ(first["data"][1]["hasTools"], false);
    EXPECT_EQ(first["data"][0]["status"], "in_progress");
    EXPECT_EQ(first["data"][0]["avatar"]["name"], "Tennis Coach");
    const auto rest =
        Send("GET",
             "/v1/avatar_conversations?limit=4&cursor=" + first["nextCursor"].get<std::string>(),
             nullptr, key)
            .Json();
    ASSERT_EQ(rest["data"].size(), 2u);
    EXPECT_EQ(rest["hasMore"], false);
    EXPECT_EQ(rest["data"][1]["id"], ids[0]);
    // The default page is 20; the date range; an avatar that has none.
    EXPECT_EQ(Send("GET", "/v1/avatar_conversations", nullptr, key).Json()["data"].size(), 6u);
    const std::string past = "2020-01-01T00:00:00Z";
    EXPECT_EQ(
        Send("GET", "/v1/avatar_conversations?endDate=" + past, nullptr, key).Json()["data"].size(),
        0u);
    EXPECT_EQ(
        Send("GET", "/v1/avatar_conversations?startDate=2020-01-01T00:00:00%2B02:00", nullptr, key)
            .Json()["data"]
            .size(),
        6u);
    EXPECT_EQ(Send("GET", "/v1/avatar_conversations?avatar=" + NewUuid(), nullptr, key)
                  .Json()["data"]
                  .size(),
              0u);
    // Bad queries: every issue at its parameter.
    const auto bad =
        Send("GET", "/v1/avatar_conversations?limit=0&avatar=x&startDate=yesterday", nullptr, key);
    ASSERT_EQ(bad.status, 400);
    EXPECT_EQ(bad.Json()["issues"].size(), 3u) << bad.body;

    // The detail: tools, an empty transcript, no recording yet.
    const auto detail = Send("GET", "/v1/avatar_conversations/" + ids[5], nullptr, key).Json();
    EXPECT_EQ(detail["status"], "in_progress");
    EXPECT_EQ(detail["tools"],
              nlohmann::json::array(
                  {{{"type", "client_event"}, {"name", "click"}, {"description", "Does click"}}}));
    EXPECT_EQ(detail["transcript"], nlohmann::json::array());
    EXPECT_TRUE(detail["recordingUrl"].is_null());
    EXPECT_FALSE(detail.contains("endedAt"));

    // An active session's conversation cannot be deleted; an ended one can, with its session.
    const auto active = Send("DELETE", "/v1/avatar_conversations/" + ids[0], nullptr, key);
    EXPECT_EQ(active.status, 409);
    EXPECT_THAT(active.Json()["error"].get<std::string>(), HasSubstr("cancel it first"));
    for (const auto& id : ids) {
        EXPECT_EQ(Send("DELETE", "/v1/realtime_sessions/" + id, nullptr, key).status, 204);
    }
    EXPECT_EQ(Send("DELETE", "/v1/avatar_conversations/" + ids[0], nullptr, key).status, 204);
    EXPECT_EQ(Send("GET", "/v1/avatar_conversations/" + ids[0], nullptr, key).status, 404);
    EXPECT_EQ(Send("GET", "/v1/realtime_sessions/" + ids[0], nullptr, key).status, 404);
    EXPECT_EQ(Send("GET", "/v1/avatar_conversations", nullptr, key).Json()["data"].size(), 5u);
}

TEST_F(RealtimeApi, UsageCountsEveryDayOfTheRange) {
    const std::string key = CreateKey(*server_, "realtime-usage", 5);
    for (int i = 0; i < 3; ++i) {
        const std::string id = Create(PresetSession(), key);
        EXPECT_EQ(Send("DELETE", "/v1/realtime_sessions/" + id, nullptr, key).status, 204);
    }
    // Durations measured by the database: one of 42 s, one of 18 s, one never started.
    {
        pqxx::connection c(db_->dsn());
        pqxx::work w(c);
        const auto org = w.exec1("SELECT id FROM organizations WHERE name = 'realtime-usage'")[0]
                             .as<std::string>();
        w.exec(
            "WITH s AS (SELECT id, row_number() OVER (ORDER BY created_at) AS n"
            " FROM realtime_sessions WHERE org_id = '" +
            org +
            "') UPDATE realtime_sessions r SET duration = CASE s.n WHEN 1 THEN 42 WHEN 2 THEN 18"
            " END FROM s WHERE r.id = s.id");
        w.commit();
    }
    const auto now = NowMicros();
    const std::string start = FormatTimestamp(now - std::chrono::hours(24 * 3));
    const std::string end = FormatTimestamp(now + std::chrono::hours(1));
    const auto r =
        Send("GET", "/v1/avatar_usage?startDate=" + start + "&endDate=" + end, nullptr, key);
    ASSERT_EQ(r.status, 200) << r.body;
    const auto usage = r.Json();
    EXPECT_EQ(usage["totalSessions"], 3);
    EXPECT_EQ(usage["totalSeconds"], 60);
    EXPECT_EQ(usage["avgDurationSeconds"], 30);
    ASSERT_GE(usage["byDay"].size(), 4u);
    ASSERT_LE(usage["byDay"].size(), 5u);
    EXPECT_EQ(usage["byDay"][0]["sessions"], 0);
    EXPECT_EQ(usage["byDay"][0]["seconds"], 0);
    int sessions = 0;
    for (const auto& day : usage["byDay"]) sessions += day["sessions"].get<int>();
    EXPECT_EQ(sessions, 3);
    // An empty range answers zeros; more than 90 days, a reversed range or a missing date is 400.
    const auto empty =
        Send("GET", "/v1/avatar_usage?startDate=" + start + "&endDate=" + start, nullptr, key)
            .Json();
    EXPECT_EQ(empty["totalSessions"], 0);
    EXPECT_EQ(empty["avgDurationSeconds"], 0);
    EXPECT_EQ(empty["byDay"], nlohmann::json::array());
    const auto long_range = Send("GET",
                                 "/v1/avatar_usage?startDate=2026-01-01T00:00:00Z&endDate=2026-"
                                 "04-02T00:00:01Z",
                                 nullptr, key);
    EXPECT_EQ(long_range.status, 400);
    EXPECT_EQ(long_range.Json()["issues"][0]["path"], nlohmann::json({"endDate"}));
    EXPECT_EQ(
        Send("GET", "/v1/avatar_usage?startDate=" + end + "&endDate=" + start, nullptr, key).status,
        400);
    const auto missing = Send("GET", "/v1/avatar_usage?startDate=" + start, nullptr, key);
    EXPECT_EQ(missing.status, 400);
    EXPECT_EQ(missing.Json()["issues"][0]["path"], nlohmann::json({"endDate"}));
}

// Joined returns the credentials of a READY session, consumed.
nlohmann::json ConsumedCredentials(HttpClient& client, const std::string& id,
                                   const std::string& key) {
    const auto r = client.Send("POST", "/v1/realtime_sessions/" + id + "/consume",
                               {{"Authorization", "Bearer " + key}}, "");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json();
}

std::string TargetOf(const nlohmann::json& credentials) {
    const std::string url = credentials["url"];
    return PathOf(url) + "?access_token=" + credentials["token"].get<std::string>();
}

TEST_F(RealtimeApi, ASessionRunsWhileTheUserIsJoinedAndCompletesOnHangUp) {
    nlohmann::json body = PresetSession();
    body["tools"] = {Tool("click")};
    const std::string id = Create(body);
    const auto ready = Until(id, {"READY"});
    const auto credentials = ConsumedCredentials(client_, id, ready["sessionKey"]);

    // The media plane refuses a missing or forged token, and a room this node does not run.
    {
        WsClient none(server_->port());
        EXPECT_EQ(none.Handshake("/_genhost/realtime"), 401);
        WsClient forged(server_->port());
        std::string refused;
        EXPECT_EQ(forged.Handshake("/_genhost/realtime?access_token=" +
                                       credentials["token"].get<std::string>() + "x",
                                   &refused),
                  401);
        EXPECT_THAT(refused, HasSubstr("Invalid access token"));
        realtime::RoomTokenClaims claims;
        claims.identity = "user";
        claims.room = NewUuid();
        claims.not_before = NowMicros() - std::chrono::seconds(5);
        claims.expires = NowMicros() + std::chrono::seconds(60);
        WsClient elsewhere(server_->port());
        EXPECT_EQ(elsewhere.Handshake("/_genhost/realtime?access_token=" +
                                      realtime::MintRoomToken("genhost", Secret(), claims)),
                  404);
    }

    WsClient user(server_->port());
    ASSERT_EQ(user.Handshake(TargetOf(credentials)), 101);
    const auto joined = user.ReadText();
    ASSERT_TRUE(joined);
    EXPECT_EQ(nlohmann::json::parse(*joined)["type"], "joined");
    const auto running = Until(id, {"RUNNING"});
    EXPECT_EQ(running["status"], "RUNNING");
    EXPECT_FALSE(running.contains("sessionKey"));
    auto conversation = Send("GET", "/v1/avatar_conversations/" + id).Json();
    EXPECT_EQ(conversation["status"], "in_progress");
    EXPECT_FALSE(conversation["startedAt"].is_null());
    EXPECT_TRUE(conversation["duration"].is_number_integer());

    // A second connection of the same identity is refused; the backend joins once.
    WsClient twin(server_->port());
    ASSERT_EQ(twin.Handshake(TargetOf(credentials)), 101);
    const auto refused = twin.ReadText();
    ASSERT_TRUE(refused);
    EXPECT_EQ(nlohmann::json::parse(*refused)["type"], "error");
    EXPECT_FALSE(twin.ReadText());
    EXPECT_EQ(twin.close_code(), 1008);
    const auto backend_credentials =
        Send("POST", "/v1/realtime_sessions/" + id + "/connect_backend").Json();
    WsClient backend(server_->port());
    ASSERT_EQ(backend.Handshake(TargetOf(backend_credentials)), 101);
    ASSERT_TRUE(backend.ReadText());
    bool connected = false;
    for (int i = 0; i < 100 && !connected; ++i) {
        connected = Send("POST", "/v1/realtime_sessions/" + id + "/connect_backend").status == 409;
        if (!connected) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(connected) << "connect_backend kept answering while a backend was connected";
    backend.Close();

    // Hang up: COMPLETED with its duration; the conversation ended.
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    ASSERT_TRUE(user.Write(R"({"type": "END_CALL"})"));
    const auto completed = Until(id, {"COMPLETED"});
    EXPECT_GE(completed["duration"].get<int>(), 1);
    EXPECT_FALSE(user.ReadText());  // the server closes the socket
    EXPECT_EQ(user.close_code(), 1000);
    conversation = Send("GET", "/v1/avatar_conversations/" + id).Json();
    EXPECT_EQ(conversation["status"], "ended");
    EXPECT_EQ(conversation["duration"], completed["duration"]);
    EXPECT_FALSE(conversation["endedAt"].is_null());
}

TEST_F(RealtimeApi, CancellingARunningSessionDisconnectsIt) {
    const std::string id = Create(PresetSession());
    const auto credentials = ConsumedCredentials(client_, id, Until(id, {"READY"})["sessionKey"]);
    WsClient user(server_->port());
    ASSERT_EQ(user.Handshake(TargetOf(credentials)), 101);
    ASSERT_TRUE(user.ReadText());
    Until(id, {"RUNNING"});
    const auto cancelled = std::chrono::steady_clock::now();
    EXPECT_EQ(Send("DELETE", "/v1/realtime_sessions/" + id).status, 204);
    EXPECT_FALSE(user.ReadText());
    EXPECT_EQ(user.close_code(), 1000);
    // Issue 32: the cancel reaches the node by NOTIFY (genhost_sessions); the row is otherwise
    // reread only every 30 s, so this bound fails without the notification.
    EXPECT_LT(std::chrono::steady_clock::now() - cancelled, std::chrono::seconds(10));
    EXPECT_EQ(Until(id, {"CANCELLED"})["status"], "CANCELLED");
    EXPECT_EQ(Send("GET", "/v1/avatar_conversations/" + id).Json()["status"], "ended");
}

TEST_F(RealtimeApi, LeavingCompletesTheSessionAndMaxDurationEndsIt) {
    // The user's connection drops: COMPLETED.
    const std::string id = Create(PresetSession());
    {
        const auto credentials =
            ConsumedCredentials(client_, id, Until(id, {"READY"})["sessionKey"]);
        WsClient user(server_->port());
        ASSERT_EQ(user.Handshake(TargetOf(credentials)), 101);
        ASSERT_TRUE(user.ReadText());
        Until(id, {"RUNNING"});
        user.Close();
    }
    EXPECT_EQ(Until(id, {"COMPLETED"})["status"], "COMPLETED");

    // maxDuration (10 s, the least) reached while the user stays: COMPLETED at about 10 s.
    const std::string timed = Create(PresetSession(10));
    const auto credentials =
        ConsumedCredentials(client_, timed, Until(timed, {"READY"})["sessionKey"]);
    WsClient user(server_->port(), 20000);
    ASSERT_EQ(user.Handshake(TargetOf(credentials)), 101);
    ASSERT_TRUE(user.ReadText());
    const auto started = std::chrono::steady_clock::now();
    EXPECT_FALSE(user.ReadText());  // closed by the server at maxDuration
    const auto lasted = std::chrono::steady_clock::now() - started;
    EXPECT_GE(lasted, std::chrono::milliseconds(9500));
    EXPECT_LE(lasted, std::chrono::milliseconds(12000));
    const auto done = Until(timed, {"COMPLETED"});
    EXPECT_GE(done["duration"].get<int>(), 9);
    EXPECT_LE(done["duration"].get<int>(), 11);
}

// Short READY and lease times: a session nobody joins, and a node that dies.
class RealtimeTimeouts : public ServerSuite<RealtimeTimeouts> {
  protected:
    static void SetUpTestSuite() {
        StartServer(
            {{"GENHOST_REALTIME_READY_SECONDS", "1"}, {"GENHOST_REALTIME_LEASE_SECONDS", "2"}});
    }
    HttpClient client_ = Client();
};

TEST_F(RealtimeTimeouts, AReadySessionNobodyJoinsFails) {
    const auto r =
        client_.Send("POST", "/v1/realtime_sessions", AuthHeaders(), PresetSession().dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string id = r.Json()["id"];
    nlohmann::json last;
    for (int i = 0; i < 100; ++i) {
        last = client_.Send("GET", "/v1/realtime_sessions/" + id, AuthHeaders()).Json();
        if (last["status"] == "FAILED") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(last["status"], "FAILED");
    EXPECT_EQ(last["failureCode"], "SESSION.NOT_JOINED");
    // Counted where it ended (issue 32's realtime metrics); no session is live here now.
    EXPECT_GE(MetricValue(client_,
                          "genhost_realtime_sessions_ended_total{status=\"FAILED\","
                          "code=\"SESSION.NOT_JOINED\"}"),
              1);
    for (int i = 0; i < 100 && MetricValue(client_, "genhost_realtime_sessions_live") != 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(MetricValue(client_, "genhost_realtime_sessions_live"), 0);
    const auto conversation =
        client_.Send("GET", "/v1/avatar_conversations/" + id, AuthHeaders()).Json();
    EXPECT_EQ(conversation["status"], "failed");
    EXPECT_EQ(conversation["failureCode"], "SESSION.NOT_JOINED");
    EXPECT_TRUE(conversation["startedAt"].is_null());
}

// SessionOn creates sessions through `node` until one is held by that node (not by the suite's
// node, whose sessions end after 1 s unjoined): answers its id and the node's lease owner name,
// or empty strings.
std::pair<std::string, std::string> SessionOn(HttpClient& node, const std::string& dsn) {
    pqxx::connection c(dsn);
    std::string id;
    std::string owner;
    for (int attempt = 0; attempt < 20 && owner.empty(); ++attempt) {
        const auto r =
            node.Send("POST", "/v1/realtime_sessions", AuthHeaders(), PresetSession().dump());
        EXPECT_EQ(r.status, 200) << r.body;
        if (r.status != 200) break;
        const std::string candidate = r.Json()["id"];
        for (int i = 0; i < 100; ++i) {
            pqxx::nontransaction n(c);
            const auto row = n.exec1(
                "SELECT status, coalesce(owner, '') FROM realtime_sessions"
                " WHERE id = '" +
                candidate + "'");
            if (row[0].as<std::string>() == "READY") {
                // Which node took it: only the doomed one answers READY for 600 s.
                const auto expires = n.exec1(
                    "SELECT expires_at > clock_timestamp() + interval '60 seconds' FROM"
                    " realtime_sessions WHERE id = '" +
                    candidate + "'");
                if (expires[0].as<bool>()) {
                    id = candidate;
                    owner = row[1].as<std::string>();
                }
                break;
            }
            if (row[0].as<std::string>() != "NOT_READY") break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    return {id, owner};
}

// UntilFailed polls session `id` through `node` until it is FAILED or `limit` passes; answers
// its last body.
nlohmann::json UntilFailed(HttpClient& node, const std::string& id,
                           std::chrono::milliseconds limit) {
    nlohmann::json last;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        last = node.Send("GET", "/v1/realtime_sessions/" + id, AuthHeaders()).Json();
        if (last["status"] == "FAILED") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return last;
}

TEST_F(RealtimeTimeouts, ASessionWhoseNodeDiesFails) {
    // A second node on the same database takes the session; it is killed; this node ends it.
    ServerProcess doomed(db_->dsn(), {{"GENHOST_REALTIME_READY_SECONDS", "600"},
                                      {"GENHOST_REALTIME_LEASE_SECONDS", "2"}});
    doomed.Start();
    HttpClient other("127.0.0.1", doomed.port());
    const auto [id, owner] = SessionOn(other, db_->dsn());
    ASSERT_FALSE(id.empty()) << "the doomed node never took a session";
    doomed.Signal(SIGKILL);
    doomed.WaitExit(std::chrono::seconds(10));
    const nlohmann::json last = UntilFailed(client_, id, std::chrono::seconds(15));
    EXPECT_EQ(last["status"], "FAILED") << last;
    EXPECT_EQ(last["failureCode"], "INTERNAL.NODE_LOST");
    EXPECT_EQ(client_.Send("GET", "/v1/avatar_conversations/" + id, AuthHeaders()).Json()["status"],
              "failed");
}

// Issue 32, node death across lanes. The doomed node runs a realtime session (lease 2 s) while
// its `jobs` lane (lease 30 s, renewed every 10 s) has an avatar's run in flight and renews it.
// The run is held in flight deterministically: a trigger makes the avatar's end wait for an
// advisory lock this test holds. The node is killed right after its jobs lane renewed the
// avatar's lease; the session's lease must not have been stretched to the avatar's, and this node
// ends the session INTERNAL.NODE_LOST within the session's own lease plus one claim interval.
TEST_F(RealtimeTimeouts, ASessionWhoseNodeDiesWithAnAvatarRunInFlightFailsWithinItsOwnLease) {
    constexpr int kHold = 3232;
    pqxx::connection holder(db_->dsn());
    pqxx::nontransaction hold(holder);
    hold.exec(
        "CREATE FUNCTION test_hold_avatar_end() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN PERFORM pg_advisory_xact_lock(" +
        std::to_string(kHold) + "); RETURN NEW; END $$");
    hold.exec(
        "CREATE TRIGGER test_hold_avatar_end BEFORE UPDATE ON avatars FOR EACH ROW"
        " WHEN (NEW.status <> 'PROCESSING') EXECUTE FUNCTION test_hold_avatar_end()");
    hold.exec("SELECT pg_advisory_lock(" + std::to_string(kHold) + ")");
    struct Release {
        pqxx::nontransaction& n;
        ~Release() {
            n.exec("SELECT pg_advisory_unlock_all()");
            n.exec("DROP TRIGGER test_hold_avatar_end ON avatars");
            n.exec("DROP FUNCTION test_hold_avatar_end()");
        }
    } release{hold};

    ServerProcess doomed(db_->dsn(), {{"GENHOST_REALTIME_READY_SECONDS", "600"},
                                      {"GENHOST_REALTIME_LEASE_SECONDS", "2"},
                                      {"GENHOST_JOB_LEASE_SECONDS", "30"}});
    doomed.Start();
    HttpClient other("127.0.0.1", doomed.port());
    const auto [session, owner] = SessionOn(other, db_->dsn());
    ASSERT_FALSE(session.empty()) << "the doomed node never took a session";

    // An avatar whose run the doomed node holds (this node may claim one first: its run waits
    // for the lock too, and then another avatar is made).
    media::RgbImage picture(64, 64);
    const std::string png = media::EncodePicture(picture, media::ImageFormat::kPng);
    const nlohmann::json avatar = {
        {"name", "Held"},
        {"referenceImage", DataUri("image/png", png)},
        {"personality", "Patient."},
        {"voice", {{"type", "service-live-preset"}, {"presetId", "clara"}}}};
    pqxx::connection c(db_->dsn());
    const auto job_lease = [&](const std::string& kind, const std::string& subject) {
        pqxx::nontransaction n(c);
        const auto r = n.exec(
            "SELECT coalesce(lease_owner, ''), extract(epoch FROM lease_expires_at -"
            " clock_timestamp()) FROM jobs WHERE status = 'RUNNING' AND kind = " +
            n.quote(kind) + " AND subject = " + n.quote(subject));
        return r.empty() ? std::make_pair(std::string(), 0.0)
                         : std::make_pair(r[0][0].as<std::string>(), r[0][1].as<double>());
    };
    std::string held;
    for (int attempt = 0; attempt < 10 && held.empty(); ++attempt) {
        const auto r = other.Send("POST", "/v1/avatars", AuthHeaders(), avatar.dump());
        ASSERT_EQ(r.status, 200) << r.body;
        const std::string id = r.Json()["id"];
        for (int i = 0; i < 200; ++i) {
            const auto [by, left] = job_lease("avatar", id);
            if (!by.empty()) {
                if (by == owner) held = id;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
    }
    ASSERT_FALSE(held.empty()) << "the doomed node never ran an avatar";

    // Wait for the doomed jobs lane's heartbeat (10 s after the claim): the avatar's lease goes
    // back up to about 30 s.
    double avatar_left = job_lease("avatar", held).second;
    for (int i = 0; i < 300; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const double now_left = job_lease("avatar", held).second;
        if (now_left > avatar_left + 1) {
            avatar_left = now_left;
            break;
        }
        avatar_left = now_left;
    }
    ASSERT_GT(avatar_left, 25.0) << "the jobs lane never renewed the avatar's lease";
    // Right after that renewal, the session's lease is still its own 2 s.
    const auto [session_owner, session_left] = job_lease("realtime_session", session);
    EXPECT_EQ(session_owner, owner);
    EXPECT_LE(session_left, 2.05);

    doomed.Signal(SIGKILL);
    const auto killed = std::chrono::steady_clock::now();
    doomed.WaitExit(std::chrono::seconds(10));
    const nlohmann::json last = UntilFailed(client_, session, std::chrono::seconds(30));
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
    EXPECT_EQ(last["status"], "FAILED") << last;
    EXPECT_EQ(last["failureCode"], "INTERNAL.NODE_LOST");
    // Its own lease (2 s) plus one claim interval (2 s), with room for a loaded machine; the
    // avatar's lease would have been about 30 s.
    EXPECT_LT(took, 10.0);
}

}  // namespace
}  // namespace genhost::testing
