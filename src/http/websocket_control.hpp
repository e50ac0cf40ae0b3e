// src/http/websocket_control.hpp (internal to the http module)
//
// Provides WebSocketControl: what the server does with a WebSocket that its route's `run` does
// not (make it over an accepted socket, complete the opening handshake, close it when `run`
// returns, and let go of the socket).
//
// Lifetime: a WebSocket holds its socket until Release, which the server calls on the
// connection's I/O thread when the connection ends (or, when the server stops with the
// connection still open, while the I/O context is being destroyed); Seal, thread-safe, stops
// Send and Close from reaching the executor, and the server calls it on every WebSocket still
// open once its I/O threads have stopped, so nothing posts to an I/O context being destroyed.
#pragma once

#include "genhost/http/websocket.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/beast/core/error.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace genhost::http {

class WebSocketControl {
  public:
    using Socket = boost::asio::generic::stream_protocol::socket;
    using Fields = std::vector<std::pair<std::string, std::string>>;

    // Make wraps an accepted connection whose upgrade request has been read (and checked).
    static std::shared_ptr<WebSocket> Make(Socket socket, std::string remote_address,
                                           std::size_t max_message_bytes,
                                           std::size_t max_queued_bytes);

    // Handshake answers the upgrade request (method GET, `target`, header `fields`) with 101;
    // the response carries X-Request-Id `request_id`. Under Beast's handshake timeout.
    static boost::asio::awaitable<boost::beast::error_code> Handshake(
        WebSocket& ws, const std::string& target, const Fields& fields,
        const std::string& request_id);

    // Finish closes the WebSocket with 1000 unless it is closing or closed already, and waits up
    // to `limit` for the queued messages and the closing handshake.
    static boost::asio::awaitable<void> Finish(WebSocket& ws, std::chrono::milliseconds limit);

    // Seal makes Send refuse and Close do nothing from now on. Thread-safe.
    static void Seal(WebSocket& ws);

    // Release seals the WebSocket, closes its socket and destroys what ties it to the I/O
    // context. On the connection's I/O thread (or with that context's threads stopped).
    static void Release(WebSocket& ws);
};

}  // namespace genhost::http
