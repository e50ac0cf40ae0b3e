// The embedded media plane: the WebSocket endpoint `GET /_genhost/realtime?access_token=<JWT>`
// that consume and connect_backend point at (docs/realtime.md, "The media plane").
//
// The token (or `Authorization: Bearer <JWT>`) is verified with the cluster's media secret; its
// room must be a session this node runs (LiveSessions), else the upgrade is refused (401, or 404
// for a session that is not live here). Once upgraded, the participant is attached to the live
// session under the token's identity (one connection per identity), told `{"type": "joined"}`,
// and every message it sends is posted to the session's runtime: text messages are JSON data
// messages, binary messages media. Closing the socket detaches it. A participant whose messages
// pile up past LiveSession::kMaxQueuedBytes unread is told why and closed with 1008.
#include "handlers.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/realtime/room_token.hpp"

namespace genhost::api {

namespace asio = boost::asio;

namespace {

// SocketParticipant is a WebSocket as the session's runtime sees it.
class SocketParticipant : public tasks::Participant {
  public:
    explicit SocketParticipant(std::shared_ptr<http::WebSocket> ws) : ws_(std::move(ws)) {}
    bool Send(std::string data, bool binary) override { return ws_->Send(std::move(data), binary); }
    void Close(std::uint16_t code, std::string reason) override {
        ws_->Close(code, std::move(reason));
    }

  private:
    std::shared_ptr<http::WebSocket> ws_;
};

constexpr const char* kFloodReason =
    "flooding: over 1 MiB of messages waiting for the session; send audio at real-time pace";

http::Response Refuse(const App& app, const ApiError& error) {
    return http::Response::Error(error, app.doc_url);
}

asio::awaitable<std::optional<http::Response>> Accept(App& app, http::Request& req) {
    std::string token = req.QueryParam("access_token").value_or("");
    if (token.empty()) {
        const auto header = req.Header("authorization");
        if (header && header->size() > 7 && http::IEquals(header->substr(0, 7), "bearer ")) {
            token = std::string(header->substr(7));
        }
    }
    if (token.empty()) {
        co_return Refuse(app, ApiError::Unauthorized(
                                  "Missing access token: connect with ?access_token=<token>"));
    }
    std::string why;
    const auto claims =
        realtime::VerifyRoomToken(token, app.realtime.token_issuer, app.realtime.token_secret,
                                  SystemClock::Instance().Now(), &why);
    if (!claims) co_return Refuse(app, ApiError::Unauthorized("Invalid access token: " + why));
    if (app.realtime.live == nullptr || !app.realtime.live->Find(claims->room)) {
        co_return Refuse(app, ApiError::NotFound("The session is not running on this node"));
    }
    req.auth = *claims;
    co_return std::nullopt;
}

asio::awaitable<void> Run(App& app, http::Request& req, std::shared_ptr<http::WebSocket> ws) {
    const auto& claims = std::any_cast<const realtime::RoomTokenClaims&>(req.auth);
    const auto live = app.realtime.live->Find(claims.room);
    if (!live) {
        ws->Close(http::ws_close::kNormal, "the session has ended");
        co_return;
    }
    auto participant = std::make_shared<SocketParticipant>(ws);
    std::string why;
    const std::string welcome = nlohmann::json{
        {"type", "joined"},
        {"identity", claims.identity},
        {"room", live->id()}}.dump();
    if (!live->Attach(claims.identity, participant, &why, welcome)) {
        ws->Send(nlohmann::json{{"type", "error"}, {"message", why}}.dump(), false);
        ws->Close(http::ws_close::kPolicyViolation, why);
        co_return;
    }
    for (;;) {
        auto message = co_await ws->Read();
        // Closed on this side (the session ended, or disconnected this participant for
        // flooding): nothing more it sends is read; the server tears the connection down.
        if (!message || !ws->open()) break;
        // A participant without publish rights (the backend) sends data, never media.
        if (message->binary && !claims.can_publish) continue;
        const bool taken = live->Post(
            {message->binary ? tasks::RoomEvent::Kind::kBinary : tasks::RoomEvent::Kind::kText,
             claims.identity, std::move(message->data)});
        if (!taken) {
            // It sends faster than the session takes what it sends (a flood, or audio far past
            // real time): what it queued is bounded, and the socket closed.
            const std::string why = kFloodReason;
            ws->Send(nlohmann::json{{"type", "error"}, {"message", why}}.dump(), false);
            ws->Close(http::ws_close::kPolicyViolation, why);
            break;
        }
    }
    live->Detach(claims.identity, participant.get());
}

}  // namespace

void AddMediaPlane(http::Router& router, App& app) {
    http::UpgradeRoute route;
    route.accept = [&app](http::Request& req) { return Accept(app, req); };
    route.run = [&app](http::Request& req, std::shared_ptr<http::WebSocket> ws) {
        return Run(app, req, std::move(ws));
    };
    // A second of 16 kHz PCM16 is 32 kB; data messages are small. Video goes out, not in.
    route.max_message_bytes = 256 * 1024;
    router.AddUpgrade("/_genhost/realtime", std::move(route));
}

}  // namespace genhost::api
