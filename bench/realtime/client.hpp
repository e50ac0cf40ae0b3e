// bench/realtime/client.hpp: what the realtime benchmark drivers (drive.cpp, flood.cpp) share: a
// blocking HTTP request to genhost with the key and version headers, and a session made READY.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace genhost::bench {

// Request sends one request to 127.0.0.1:`port` with `key` as the bearer and answers its JSON
// body (an empty object for an empty body, a discarded value for one that is not JSON).
inline nlohmann::json Request(unsigned short port, const std::string& key,
                              boost::beast::http::verb verb, const std::string& target,
                              const std::string& body = "") {
    namespace asio = boost::asio;
    namespace http = boost::beast::http;
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    socket.connect({asio::ip::make_address("127.0.0.1"), port});
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::authorization, "Bearer " + key);
    req.set("X-Service-Version", "2024-11-06");
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    if (res.body().empty()) return nlohmann::json::object();
    return nlohmann::json::parse(res.body(), nullptr, false);
}

// ReadySession creates a realtime session of `body` and polls it until READY; its JSON (with
// `id` and `sessionKey`). Throws when it is not created or never READY.
inline nlohmann::json ReadySession(unsigned short port, const std::string& key,
                                   const nlohmann::json& body) {
    namespace http = boost::beast::http;
    const nlohmann::json created =
        Request(port, key, http::verb::post, "/v1/realtime_sessions", body.dump());
    const std::string id = created.value("id", "");
    if (id.empty()) throw std::runtime_error("create: " + created.dump());
    nlohmann::json session;
    for (int i = 0; i < 600; ++i) {
        session = Request(port, key, http::verb::get, "/v1/realtime_sessions/" + id);
        if (session.value("status", "") == "READY") return session;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("never READY: " + session.dump());
}

}  // namespace genhost::bench
