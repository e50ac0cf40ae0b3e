// genhost/http/websocket.hpp
//
// Provides WebSocket, one upgraded connection as the session coroutine of a WebSocket route
// (Router::AddUpgrade) sees it. The server completes the opening handshake, hands the route's
// `run` coroutine a std::shared_ptr<WebSocket>, and closes the connection once `run` returns.
//
// Threads: the connection stays on its I/O thread. Read must be called from the `run` coroutine
// (or another coroutine on executor()), one at a time, and should be called continually: the
// peer's pings and close frame are answered only while a Read is pending. Send and Close may be
// called from any thread: they queue what they are given and the connection's own executor
// writes it, one message at a time, in order. A WebSocket may outlive its connection (another
// thread may still hold it): Send then returns false and Close does nothing.
//
// Limits: a message from the peer larger than the route's max_message_bytes fails the
// connection with close code 1009 (Read returns nullopt). Send refuses a message (returns false,
// drops it) when the bytes queued and not yet written would pass max_queued_bytes, so a peer that
// does not read cannot make the server hold an unbounded backlog. Idle connections are pinged,
// and closed when the peer does not answer (Beast's suggested server timeouts: pings after 150 s
// of silence, closed after 300 s; 30 s for the opening and closing handshakes).
//
// Shutdown: Server::Shutdown sends every open WebSocket a close frame with code 1001 (going
// away) and waits, within its drain time, for their `run` coroutines to return.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace genhost::http {

// WsMessage is one whole message received from the peer.
struct WsMessage {
    bool binary = false;  // a binary message; false for text (UTF-8, checked by nobody)
    std::string data;
};

// Close codes (RFC 6455 section 7.4.1) a route may use.
namespace ws_close {
inline constexpr std::uint16_t kNormal = 1000;
inline constexpr std::uint16_t kGoingAway = 1001;
inline constexpr std::uint16_t kPolicyViolation = 1008;
inline constexpr std::uint16_t kTooBig = 1009;
inline constexpr std::uint16_t kInternalError = 1011;
}  // namespace ws_close

class WebSocket {
  public:
    // What the server keeps of the connection (src/http/websocket.cpp); only the server makes
    // WebSockets.
    struct Impl;
    explicit WebSocket(std::shared_ptr<Impl> impl);
    ~WebSocket();
    WebSocket(const WebSocket&) = delete;
    WebSocket& operator=(const WebSocket&) = delete;

    // Read waits for the next whole message; nullopt once the peer closed, the connection failed
    // or timed out, a message was too large, or the connection was closed on this side (Close, or
    // the server's shutdown) and its closing handshake is done. Call it on executor() only, one
    // Read at a time.
    boost::asio::awaitable<std::optional<WsMessage>> Read();

    // Send queues `data` as one text (`binary` false) or binary message. Thread-safe; messages go
    // out in the order of their Send calls. False, and the message dropped, when the connection
    // is closing or closed, or when the bytes queued would pass max_queued_bytes().
    bool Send(std::string data, bool binary);

    // Close sends a close frame with `code` and `reason` (cut to 123 bytes) once the messages
    // already queued have been written; later Sends return false. Thread-safe; only the first
    // call (or the first failure) counts.
    void Close(std::uint16_t code, std::string reason);

    // open reports whether Send still takes messages (no Close yet, no failure, no close frame
    // from the peer seen by Read).
    bool open() const;

    // queued_bytes returns the bytes of the messages Sent and not yet written.
    std::size_t queued_bytes() const;
    std::size_t max_queued_bytes() const;
    // set_max_queued_bytes changes the limit for the Sends that follow.
    void set_max_queued_bytes(std::size_t bytes);

    // remote_address returns the peer's IP address (empty over a unix-domain socket).
    std::string remote_address() const;

    // executor returns the connection's executor (its I/O thread). Posting to it is valid only
    // while the server runs.
    const boost::asio::any_io_executor& executor() const;

  private:
    friend class WebSocketControl;  // the server's side (src/http/websocket_control.hpp)
    std::shared_ptr<Impl> impl_;
};

}  // namespace genhost::http
