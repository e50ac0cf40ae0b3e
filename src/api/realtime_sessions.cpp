// /v1/realtime_sessions: realtime avatar sessions (docs/realtime.md, CLIENTS.md 3.12 and 6).
//
// POST validates the body (schemas/realtime_sessions.json; tool names unique, a custom avatar
// READY and the organization's), stores the session NOT_READY and answers `{id}`; its job on a
// node's realtime engine provisions, runs and ends it. GET answers the status union; DELETE
// cancels an active session. consume trades a READY session's key (the bearer; no API key, no
// version header; CORS for browsers) for the media plane's URL and a participant token, once;
// connect_backend gives the customer's backend tool handler the same while the session is READY
// or RUNNING.
#include "genhost/api/realtime_routes.hpp"
#include "handlers.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/core/resources.hpp"
#include "genhost/realtime/room_token.hpp"

#include <set>

namespace genhost::api {

namespace asio = boost::asio;

namespace {

// PresetName is a preset avatar's display name: "tennis-coach" gives "Tennis Coach".
std::string PresetName(std::string_view preset) {
    std::string out;
    bool start = true;
    for (const char c : preset) {
        if (c == '-' || c == '_') {
            out += ' ';
            start = true;
        } else {
            out += start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
            start = false;
        }
    }
    return out;
}

http::Response NotFound(const App& app) {
    return http::Response::Error(ApiError::NotFound("Realtime session not found"), app.doc_url);
}

// Queued: a NOT_READY session waits for capacity when its organization had no place for it, or
// when no node took it within a second of its creation (every node's places are taken).
bool Queued(const store::RealtimeSession& s) {
    return s.queued || (s.owner.empty() && s.now - s.created_at > std::chrono::seconds(1));
}

nlohmann::json SessionJson(const store::RealtimeSession& s) {
    nlohmann::json out = {{"id", s.id},
                          {"createdAt", FormatTimestamp(s.created_at)},
                          {"status", store::SessionStatusName(s.status)}};
    switch (s.status) {
        case store::SessionStatus::kNotReady:
            out["queued"] = Queued(s);
            break;
        case store::SessionStatus::kReady:
            out["expiresAt"] = FormatTimestamp(s.expires_at.value_or(s.now));
            out["sessionKey"] = s.session_key;
            break;
        case store::SessionStatus::kCompleted:
            out["duration"] = s.duration.value_or(0);
            break;
        case store::SessionStatus::kFailed:
            out["failure"] = s.failure;
            out["failureCode"] = s.failure_code;
            break;
        default:
            break;
    }
    return out;
}

// Credentials are the media plane's URL and a token of `identity` for the session's room.
nlohmann::json Credentials(const App& app, const store::RealtimeSession& s,
                           const std::string& identity, bool can_publish) {
    realtime::RoomTokenClaims claims;
    claims.identity = identity;
    claims.name = identity;
    claims.room = s.id;
    claims.can_publish = can_publish;
    claims.can_subscribe = true;
    claims.can_publish_data = true;
    claims.not_before = s.now - std::chrono::seconds(10);  // tolerate clocks a little apart
    claims.expires = s.now + std::chrono::milliseconds(
                                 static_cast<std::int64_t>(app.realtime.token_seconds * 1000));
    return {{"url", s.media_url},
            {"token",
             realtime::MintRoomToken(app.realtime.token_issuer, app.realtime.token_secret, claims)},
            {"roomName", s.id}};
}

asio::awaitable<http::Response> CreateSession(App& app, http::Request& req,
                                              const auth::Principal& who) {
    auto checked =
        co_await CheckedBody(app, std::move(req.body), "realtime_sessions", /*defaults=*/true);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    const nlohmann::json input = std::move(*checked);
    std::vector<Issue> issues;
    // Tool names are unique within a session (SPEC.md, Limits).
    std::set<std::string> names;
    const nlohmann::json tools = input.value("tools", nlohmann::json::array());
    for (std::size_t i = 0; i < tools.size(); ++i) {
        const std::string name = tools[i].at("name").get<std::string>();
        if (!names.insert(name).second) {
            issues.push_back(
                {"custom",
                 {"tools", std::to_string(i), "name"},
                 "Tool names must be unique within a session: '" + name + "' is used twice"});
        }
    }
    store::NewRealtimeSession s;
    s.id = NewUuid();
    s.org_id = who.org_id;
    s.model = input.at("model").get<std::string>();
    const auto& avatar = input.at("avatar");
    s.avatar_type = avatar.at("type").get<std::string>();
    if (s.avatar_type == "custom") {
        s.avatar_id = LowerUuid(avatar.at("avatarId").get<std::string>());
        std::optional<store::AvatarRecord> found;
        if (app.avatars.repo != nullptr) {
            found = co_await app.avatars.repo->Get(who.org_id, s.avatar_id);
        }
        if (!found) {
            issues.push_back({"custom", {"avatar", "avatarId"}, "Avatar not found"});
        } else if (found->status != store::ProcessingStatus::kReady) {
            issues.push_back({"custom",
                              {"avatar", "avatarId"},
                              "The avatar is " +
                                  std::string(store::ProcessingStatusName(found->status)) +
                                  "; only a READY avatar can be used"});
        } else {
            s.avatar_name = found->name;
        }
    } else {
        s.preset_id = avatar.at("presetId").get<std::string>();
        s.avatar_name = PresetName(s.preset_id);
    }
    if (!issues.empty()) {
        co_return http::Response::Error(ApiError::InvalidRequest("Invalid request body", issues),
                                        app.doc_url);
    }
    s.name = "Conversation with " + s.avatar_name;
    s.max_duration = input.at("maxDuration").get<int>();
    OptionalField(input, "personality", s.personality);
    OptionalField(input, "startScript", s.start_script);
    s.tools_json = tools.dump();
    if (input.contains("integration")) {
        s.integration_json = input.at("integration").dump();
    } else if (input.contains("rtcroom")) {
        // The deprecated top-level field is the rtcroom integration.
        nlohmann::json integration = input.at("rtcroom");
        integration["type"] = "rtcroom";
        s.integration_json = integration.dump();
    }
    // Billed by the minute: maxDuration is reserved, the time it ran charged when it ends.
    const double reserve = app.catalog->EstimateCredits("realtime_sessions", input);
    nlohmann::json minute = input;
    minute["maxDuration"] = 60;
    s.reserve_credits = store::ReservedCredits(reserve);
    s.credits_per_minute =
        store::ReservedCredits(app.catalog->EstimateCredits("realtime_sessions", minute));
    s.max_spend_credits = LimitsFor(*app.catalog, who.tier, s.model).max_spend_credits;
    const auto created = co_await app.realtime.repo->Create(std::move(s));
    if (!created.session) {
        const auto kind = created.refused == "spend_limited"
                              ? store::CreateResult::Kind::kSpendLimited
                              : store::CreateResult::Kind::kInsufficientCredits;
        co_return http::Response::Error(CreditRefusal(kind, store::ReservedCredits(reserve)),
                                        app.doc_url);
    }
    if (app.realtime.kick) app.realtime.kick();
    co_return http::Response::Json(200, {{"id", created.session->id}});
}

asio::awaitable<http::Response> GetSession(App& app, http::Request& req,
                                           const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    const auto s = co_await app.realtime.repo->Get(who.org_id, id);
    if (!s) co_return NotFound(app);
    co_return http::Response::Json(200, SessionJson(*s));
}

asio::awaitable<http::Response> CancelSession(App& app, http::Request& req,
                                              const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    const auto s = co_await app.realtime.repo->Cancel(who.org_id, id);
    if (!s) co_return NotFound(app);
    co_return http::Response::NoContent();
}

// WithCors adds what lets a page of any origin read the answer (the session key is the only
// credential: nothing of the browser's is used).
http::Response WithCors(http::Response r) {
    r.SetHeader("Access-Control-Allow-Origin", "*");
    return r;
}

asio::awaitable<http::Response> PreflightConsume(App&, http::Request&) {
    http::Response r = http::Response::NoContent();
    r.SetHeader("Access-Control-Allow-Methods", "POST, OPTIONS");
    r.SetHeader("Access-Control-Allow-Headers", "Authorization, Content-Type");
    r.SetHeader("Access-Control-Max-Age", "600");
    co_return WithCors(std::move(r));
}

asio::awaitable<http::Response> ConsumeSession(App& app, http::Request& req) {
    const std::string id = LowerUuid(req.params["id"]);
    std::size_t authorizations = 0;
    for (const auto& [name, value] : req.headers) authorizations += name == "authorization";
    const auto header = req.Header("authorization");
    std::string key;
    if (header && authorizations == 1 && header->size() > 7 &&
        http::IEquals(header->substr(0, 7), "bearer ")) {
        key = std::string(header->substr(7));
    }
    if (key.empty()) {
        co_return WithCors(http::Response::Error(
            ApiError::Unauthorized("Missing session key: send Authorization: Bearer <sessionKey>"),
            app.doc_url));
    }
    const auto consumed = co_await app.realtime.repo->Consume(id, key);
    switch (consumed.outcome) {
        case store::ConsumeOutcome::kConsumed:
            co_return WithCors(
                http::Response::Json(200, Credentials(app, *consumed.session, "user", true)));
        case store::ConsumeOutcome::kUnknown:
            co_return WithCors(http::Response::Error(
                ApiError::Unauthorized("Invalid session key for this session"), app.doc_url));
        case store::ConsumeOutcome::kAlreadyConsumed:
            co_return WithCors(FinalConflict(app, "The session key was already consumed"));
        case store::ConsumeOutcome::kEnded:
            co_return WithCors(FinalConflict(
                app, "The session can no longer be joined: it is " +
                         std::string(store::SessionStatusName(consumed.session->status)) +
                         (consumed.session->status == store::SessionStatus::kReady
                              ? " but its key expired"
                              : "")));
        case store::ConsumeOutcome::kNotReady:
            break;
    }
    co_return WithCors(FinalConflict(app, "The session is not READY"));
}

asio::awaitable<http::Response> ConnectBackend(App& app, http::Request& req,
                                               const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    const auto s = co_await app.realtime.repo->Get(who.org_id, id);
    if (!s) co_return NotFound(app);
    if (s->status != store::SessionStatus::kReady && s->status != store::SessionStatus::kRunning) {
        co_return FinalConflict(
            app, "The session is " + std::string(store::SessionStatusName(s->status)) +
                     ": a backend handler connects while it is READY or RUNNING");
    }
    if (s->backend_connected) {
        co_return FinalConflict(app,
                                "A backend handler is already connected to this session (one "
                                "per session)");
    }
    co_return http::Response::Json(200, Credentials(app, *s, "backend", false));
}

// The page of GET /_genhost/realtime/page (web/realtime.html, compiled into the binary).
asio::awaitable<http::Response> RealtimePage(App&, http::Request&) {
    http::Response r;
    r.body =
        std::string(FindResource("web/realtime.html").value_or("web/realtime.html is missing"));
    r.SetHeader("Content-Type", "text/html; charset=utf-8");
    r.SetHeader("Cache-Control", "no-cache");
    co_return r;
}

}  // namespace

void RegisterRealtimeRoutes(Bindings& b) {
    b.Public("getRealtimePage", RealtimePage);
    b.Authed("createRealtimeSession", CreateSession);
    b.Authed("getRealtimeSession", GetSession);
    b.Authed("cancelRealtimeSession", CancelSession);
    b.Public("consumeRealtimeSession", ConsumeSession);
    b.Public("preflightConsumeRealtimeSession", PreflightConsume);
    b.Authed("connectRealtimeBackend", ConnectBackend);
}

}  // namespace genhost::api
