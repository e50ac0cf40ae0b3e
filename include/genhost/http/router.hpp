// genhost/http/router.hpp
//
// Provides Router, the explicit route table: method + path pattern + handler. Patterns are
// literal segments and `{name}` parameters (one whole segment each). Matching an unknown path
// gives kNotFound for every method; a known path with another method gives kMethodNotAllowed
// with the methods it does allow (HEAD is allowed wherever GET is).
//
// A route is either ordinary (its Handler gets the whole body, read under the server's body
// limit) or streaming (AddStreaming: its StreamingHandler reads the body itself through a
// BodyReader, under the route's own limit).
//
// A route may have a Gate, which the server runs once the header is read, before any of the body:
// it lets the request through, or answers it itself (a 401, say) without the body ever being read.
//
// A WebSocket route (AddUpgrade) answers GET only (HEAD and the other methods get a 405 with
// Allow: GET); the server upgrades the connection when the route's `accept` lets it (see
// UpgradeRoute and websocket.hpp).
#pragma once

#include "genhost/http/body_reader.hpp"
#include "genhost/http/message.hpp"
#include "genhost/http/websocket.hpp"

#include <boost/asio/awaitable.hpp>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::http {

using Handler = std::function<boost::asio::awaitable<Response>(Request&)>;
// StreamingHandler answers a request whose body it reads itself (`Request::body` stays empty).
using StreamingHandler = std::function<boost::asio::awaitable<Response>(Request&, BodyReader&)>;
// Gate sees a request whose header alone has been read (`Request::body` is still empty): nullopt
// lets it through to the body and the handler; a response is sent as it is, the body is never
// read, and the connection closes when a body was announced. What it learns for the handler goes
// into the request (Request::auth).
using Gate = std::function<boost::asio::awaitable<std::optional<Response>>(Request&)>;

// GatedHandler is a handler with the gate it runs behind.
struct GatedHandler {
    Handler handler;
    Gate gate;
};

// UpgradeRoute is a WebSocket endpoint. The server checks that the GET asks for a WebSocket
// upgrade (else 426 Upgrade Required, or 400 for a malformed handshake), then runs `accept` on the
// request as read (header, query string, path parameters; no body): a response refuses the
// upgrade and is sent as an ordinary HTTP answer (a 401, say); nullopt accepts it (and what it
// learns for `run` goes into the request, as a Gate's does). An exception from `accept` is
// answered as a handler's is. The server then completes the handshake (101) and runs `run` with
// the same request until it returns, and closes the connection (code 1000 unless `run` closed
// it; 1011 when `run` threw).
struct UpgradeRoute {
    // Empty: every upgrade is accepted.
    std::function<boost::asio::awaitable<std::optional<Response>>(Request&)> accept;
    std::function<boost::asio::awaitable<void>(Request&, std::shared_ptr<WebSocket>)> run;
    // A larger message from the peer fails the connection with close code 1009.
    std::size_t max_message_bytes = 1 << 20;
    // WebSocket::Send refuses a message once the bytes queued and unwritten would pass this.
    std::size_t max_queued_bytes = 8 << 20;
};

class Router {
  public:
    // Add registers `handler` for `method` on `pattern` (e.g. "/v1/tasks/{id}").
    void Add(std::string method, std::string pattern, Handler handler);
    // Add registers `route.handler` behind `route.gate`.
    void Add(std::string method, std::string pattern, GatedHandler route);

    // AddStreaming registers a streaming route: the server reads only the header, then runs
    // `handler`, which reads at most `max_body_bytes` of body (413 beyond; the server-wide body
    // limit does not apply to this route).
    void AddStreaming(std::string method, std::string pattern, std::size_t max_body_bytes,
                      StreamingHandler handler);

    // AddUpgrade registers a WebSocket route for GET on `pattern`.
    void AddUpgrade(std::string pattern, UpgradeRoute route);

    struct Match {
        // kUpgrade: a GET on a WebSocket route (`upgrade` is set, and no handler).
        enum class Kind { kFound, kNotFound, kMethodNotAllowed, kUpgrade } kind = Kind::kNotFound;
        const Handler* handler = nullptr;
        const StreamingHandler* streaming = nullptr;  // set instead of handler for streaming routes
        const UpgradeRoute* upgrade = nullptr;        // WebSocket routes only
        const Gate* gate = nullptr;                   // the route's gate, if it has one
        std::size_t body_limit = 0;                   // streaming routes only
        // The route's own pattern, valid while the router lives and gets no further route.
        std::string_view pattern;
        std::map<std::string, std::string> params;
        std::vector<std::string> allow;
    };

    // Find matches `method` and `path` as received (not percent-decoded: ids never need it, and
    // an encoded slash must not create a segment).
    Match Find(std::string_view method, std::string_view path) const;

  private:
    struct Route {
        std::string method;
        std::string pattern;
        std::vector<std::string> segments;
        Handler handler;
        StreamingHandler streaming;
        Gate gate;
        std::size_t body_limit = 0;
        std::optional<UpgradeRoute> upgrade;
    };
    // A path of more segments than this matches no route.
    static constexpr std::size_t kMaxSegments = 16;
    static bool MatchSegments(const Route& route, std::span<const std::string_view> segments,
                              std::map<std::string, std::string>* params);
    std::vector<Route> routes_;
};

}  // namespace genhost::http
