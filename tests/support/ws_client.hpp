// WsClient is a blocking WebSocket client for the HTTP tests (the realtime media plane): Beast
// over a loopback TCP connection, with a receive timeout so that a test waiting for a message
// that never comes fails instead of hanging.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <sys/socket.h>
#include <sys/time.h>

#include <optional>
#include <string>

namespace genhost::testing {

class WsClient {
  public:
    struct Message {
        bool binary = false;
        std::string data;
    };

    // Connects to 127.0.0.1:`port`; `timeout_ms` bounds every read.
    explicit WsClient(unsigned short port, int timeout_ms = 10000) : ws_(io_) {
        namespace asio = boost::asio;
        ws_.next_layer().connect(
            asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
        timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
        ::setsockopt(ws_.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }

    // Handshake upgrades on `target`; the HTTP status the server answered (101 on success).
    int Handshake(const std::string& target, std::string* body = nullptr) {
        namespace websocket = boost::beast::websocket;
        websocket::response_type response;
        boost::beast::error_code ec;
        ws_.handshake(response, "127.0.0.1", target, ec);
        if (body != nullptr) *body = response.body();
        return static_cast<int>(response.result_int());
    }

    bool Write(const std::string& data, bool binary = false) {
        boost::beast::error_code ec;
        ws_.binary(binary);
        ws_.write(boost::asio::buffer(data), ec);
        return !ec;
    }

    // Read returns the next message, or nullopt when the connection closed (close_code() then
    // says how), failed or timed out.
    std::optional<Message> Read() {
        boost::beast::flat_buffer buffer;
        boost::beast::error_code ec;
        ws_.read(buffer, ec);
        if (ec) {
            if (ec == boost::beast::websocket::error::closed) close_code_ = ws_.reason().code;
            return std::nullopt;
        }
        return Message{ws_.got_binary(), boost::beast::buffers_to_string(buffer.data())};
    }

    // ReadText skips binary messages and returns the next text one.
    std::optional<std::string> ReadText() {
        for (;;) {
            auto m = Read();
            if (!m) return std::nullopt;
            if (!m->binary) return m->data;
        }
    }

    void Close() {
        boost::beast::error_code ec;
        ws_.close(boost::beast::websocket::close_code::normal, ec);
    }

    int close_code() const { return close_code_; }

  private:
    boost::asio::io_context io_;
    boost::beast::websocket::stream<boost::asio::ip::tcp::socket> ws_;
    int close_code_ = 0;
};

}  // namespace genhost::testing
