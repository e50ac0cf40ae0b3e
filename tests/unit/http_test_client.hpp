// Shared by http_server_test.cpp and http_streaming_test.cpp: TestClient, one blocking
// connection to a server on loopback, with a watchdog that fails the test and shuts the socket
// down when the test hangs for 10 s.
#pragma once

#include <gtest/gtest.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string_view>
#include <thread>

namespace genhost::http::test {

namespace bhttp = boost::beast::http;
using StringResponse = bhttp::response<bhttp::string_body>;
using StringRequest = bhttp::request<bhttp::string_body>;

// IsClosed reports whether a read error means the server closed the connection.
inline bool IsClosed(const boost::beast::error_code& ec) {
    return ec == bhttp::error::end_of_stream || ec == boost::asio::error::eof ||
           ec == boost::asio::error::connection_reset;
}

class TestClient {
  public:
    explicit TestClient(unsigned short port) : stream_(io_) {
        stream_.connect(
            boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
        watchdog_ = std::thread([this] {
            std::unique_lock lock(mu_);
            if (!cv_.wait_for(lock, std::chrono::seconds(10), [this] { return done_; })) {
                ADD_FAILURE() << "client watchdog fired: the test hung";
                ::shutdown(stream_.socket().native_handle(), SHUT_RDWR);
            }
        });
    }
    ~TestClient() {
        {
            std::lock_guard lock(mu_);
            done_ = true;
        }
        cv_.notify_all();
        watchdog_.join();
    }
    TestClient(const TestClient&) = delete;
    TestClient& operator=(const TestClient&) = delete;

    void WriteRaw(std::string_view raw) {
        boost::asio::write(stream_.socket(), boost::asio::buffer(raw));
    }

    // TryWrite writes and reports whether the server still took the bytes.
    bool TryWrite(std::string_view raw) {
        boost::beast::error_code ec;
        boost::asio::write(stream_.socket(), boost::asio::buffer(raw), ec);
        return !ec;
    }

    void Send(StringRequest req) {
        req.prepare_payload();
        bhttp::write(stream_, req);
    }

    StringResponse Read() {
        StringResponse res;
        bhttp::read(stream_, buffer_, res);
        return res;
    }

    StringResponse Roundtrip(StringRequest req) {
        Send(std::move(req));
        return Read();
    }

    // ReadInterim reads a 1xx response (headers only).
    bhttp::response<bhttp::empty_body> ReadInterim() {
        bhttp::response_parser<bhttp::empty_body> parser;
        bhttp::read_header(stream_, buffer_, parser);
        return parser.release();
    }

    // ReadHead reads a response to HEAD: headers only, whatever Content-Length says.
    bhttp::response<bhttp::empty_body> ReadHead() {
        bhttp::response_parser<bhttp::empty_body> parser;
        parser.skip(true);
        bhttp::read(stream_, buffer_, parser);
        return parser.release();
    }

    // ReadError reads and returns the error of the next read (expecting the server to close).
    boost::beast::error_code ReadError() {
        StringResponse res;
        boost::beast::error_code ec;
        bhttp::read(stream_, buffer_, res, ec);
        return ec;
    }

    // Closed reports whether the server closed the connection (after any buffered response).
    bool Closed() { return IsClosed(ReadError()); }

    std::size_t Buffered() const { return buffer_.size(); }

  private:
    boost::asio::io_context io_;
    boost::beast::tcp_stream stream_;
    boost::beast::flat_buffer buffer_;
    std::thread watchdog_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
};

}  // namespace genhost::http::test
