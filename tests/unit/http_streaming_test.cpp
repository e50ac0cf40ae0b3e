// Tests for streaming routes (Router::AddStreaming, BodyReader) against a real Server on a
// loopback port: the handler reads the body in chunks past the server-wide body limit, under the
// route's own limit (413 from the announced length before the handler runs, 413 from Read for a
// chunked body); keep-alive after a fully read body; a handler that answers before reading gets
// its response to the client and the connection closed; `Expect: 100-continue` is answered only
// when the handler reads (and by ordinary routes before they read the body); a stalled body times
// out per read; ordinary routes behave as before.
//
// Every client socket has a watchdog so a hang fails the test instead of stalling the suite.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "genhost/http/server.hpp"
#include "http_test_client.hpp"

namespace genhost::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using json = nlohmann::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

using test::StringResponse;

using Client = test::TestClient;

std::string PostHead(const std::string& target, std::uint64_t length,
                     const std::string& extra = "") {
    return "POST " + target + " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(length) +
           "\r\n" + extra + "\r\n";
}

std::string ChunkedHead(const std::string& target) {
    return "POST " + target + " HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
}

std::string Chunk(const std::string& data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return size + data + "\r\n";
}

std::string Pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 31 + i / 7) % 26);
    return s;
}

class StreamingTest : public ::testing::Test {
  protected:
    static constexpr std::size_t kRouteLimit = 256 * 1024;

    void SetUp() override {
        // Reads the whole body in small chunks and answers its length and a checksum.
        router_.AddStreaming("POST", "/stream/{name}", kRouteLimit,
                             [this](Request& req, BodyReader& body) -> asio::awaitable<Response> {
                                 ++calls_;
                                 std::array<char, 1000> chunk;
                                 std::uint64_t total = 0;
                                 std::uint64_t sum = 0;
                                 int reads = 0;
                                 for (;;) {
                                     const auto n = co_await body.Read(chunk);
                                     if (!n) {
                                         {
                                             std::lock_guard lock(mu_);
                                             last_message_ = n.error().message;
                                         }
                                         last_error_ = static_cast<int>(n.error().code);
                                         co_return Response::Error(n.error(),
                                                                   "http://docs.test/errors");
                                     }
                                     if (*n == 0) break;
                                     ++reads;
                                     for (std::size_t i = 0; i < *n; ++i) {
                                         sum = sum * 131 + static_cast<unsigned char>(chunk[i]);
                                     }
                                     total += *n;
                                 }
                                 const auto length = body.ContentLength();
                                 json announced = nullptr;
                                 if (length) announced = *length;
                                 co_return Response::Json(200, {{"name", req.params.at("name")},
                                                                {"bytes", total},
                                                                {"sum", sum},
                                                                {"reads", reads},
                                                                {"body_empty", req.body.empty()},
                                                                {"announced", announced},
                                                                {"done", body.Done()},
                                                                {"route", req.route}});
                             });
        // Answers at once without reading the body.
        router_.AddStreaming("POST", "/refuse", kRouteLimit,
                             [this](Request&, BodyReader& body) -> asio::awaitable<Response> {
                                 ++calls_;
                                 refused_done_ = body.Done();
                                 ApiError e;
                                 e.code = ErrorCode::kForbidden;
                                 e.message = "No";
                                 co_return Response::Error(e, "");
                             });
        router_.Add("POST", "/echo", [](Request& req) -> asio::awaitable<Response> {
            Response r;
            r.body = req.body;
            co_return r;
        });
        router_.Add("GET", "/hello", [](Request&) -> asio::awaitable<Response> {
            co_return Response::Json(200, {{"hello", "world"}});
        });
        StartServer(5000ms);
    }

    void TearDown() override {
        if (server_) server_->Shutdown(2000ms);
    }

    void StartServer(std::chrono::milliseconds read_timeout) {
        ServerOptions options;
        options.host = "127.0.0.1";
        options.port = 0;
        options.io_threads = 2;
        options.max_body_bytes = 1024;  // far below what the streaming route takes
        options.max_header_bytes = 2048;
        options.read_timeout = read_timeout;
        if (server_) server_->Shutdown(2000ms);
        server_ = std::make_unique<Server>(options, router_, metrics_);
        server_->Listen();
        server_->Start();
    }

    static std::uint64_t Sum(const std::string& s) {
        std::uint64_t sum = 0;
        for (const char c : s) sum = sum * 131 + static_cast<unsigned char>(c);
        return sum;
    }

    Router router_;
    Metrics metrics_;
    std::unique_ptr<Server> server_;
    std::atomic<int> calls_{0};
    std::atomic<int> last_error_{-1};
    std::mutex mu_;
    std::string last_message_;  // set before last_error_
    std::atomic<bool> refused_done_{true};
};

TEST_F(StreamingTest, HandlerReadsABodyLargerThanTheServerLimitInChunks) {
    const std::string body = Pattern(200 * 1024);
    Client c(server_->Port());
    c.WriteRaw(PostHead("/stream/a?x=1", body.size()) + body);
    const auto res = c.Read();
    ASSERT_EQ(res.result_int(), 200) << res.body();
    const auto j = json::parse(res.body());
    EXPECT_EQ(j["name"], "a");
    EXPECT_EQ(j["bytes"], body.size());
    EXPECT_EQ(j["sum"], Sum(body));
    EXPECT_GE(j["reads"].get<int>(), 200);  // 1000-byte reads: never the whole body at once
    EXPECT_EQ(j["body_empty"], true);
    EXPECT_EQ(j["announced"], body.size());
    EXPECT_EQ(j["done"], true);
    EXPECT_EQ(j["route"], "/stream/{name}");
}

TEST_F(StreamingTest, KeepsTheConnectionAfterAFullyReadBody) {
    Client c(server_->Port());
    for (int i = 0; i < 3; ++i) {
        const std::string body = Pattern(5000 + i);
        c.WriteRaw(PostHead("/stream/k", body.size()) + body);
        const auto res = c.Read();
        ASSERT_EQ(res.result_int(), 200);
        EXPECT_TRUE(res.keep_alive());
        EXPECT_EQ(json::parse(res.body())["bytes"], body.size());
    }
    c.WriteRaw("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
    EXPECT_EQ(c.Read().result_int(), 200);
}

TEST_F(StreamingTest, ReadsAChunkedBodyAndAnEmptyOne) {
    const std::string a = Pattern(3000);
    const std::string b = Pattern(70000);
    Client c(server_->Port());
    c.WriteRaw(ChunkedHead("/stream/c") + Chunk(a) + Chunk(b) + "0\r\n\r\n");
    auto res = c.Read();
    ASSERT_EQ(res.result_int(), 200);
    auto j = json::parse(res.body());
    EXPECT_EQ(j["bytes"], a.size() + b.size());
    EXPECT_EQ(j["sum"], Sum(a + b));
    EXPECT_TRUE(j["announced"].is_null());

    c.WriteRaw(PostHead("/stream/empty", 0));
    res = c.Read();
    ASSERT_EQ(res.result_int(), 200);
    j = json::parse(res.body());
    EXPECT_EQ(j["bytes"], 0);
    EXPECT_EQ(j["reads"], 0);
}

TEST_F(StreamingTest, AnnouncedLengthPastTheRouteLimitIs413BeforeTheHandler) {
    Client c(server_->Port());
    c.WriteRaw(PostHead("/stream/big", kRouteLimit + 1));
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 413);
    EXPECT_THAT(res.body(), HasSubstr("Request body too large"));
    EXPECT_EQ(calls_.load(), 0);
    EXPECT_TRUE(c.Closed());
}

TEST_F(StreamingTest, ExactlyTheRouteLimitIsAccepted) {
    const std::string body = Pattern(kRouteLimit);
    Client c(server_->Port());
    c.WriteRaw(PostHead("/stream/edge", body.size()) + body);
    const auto res = c.Read();
    ASSERT_EQ(res.result_int(), 200);
    EXPECT_EQ(json::parse(res.body())["bytes"], kRouteLimit);
}

TEST_F(StreamingTest, ChunkedBodyPastTheRouteLimitFailsTheReadWith413) {
    Client c(server_->Port());
    c.WriteRaw(ChunkedHead("/stream/chunky"));
    const std::string piece = Pattern(64 * 1024);
    bool writing = true;
    for (int i = 0; i < 6 && writing; ++i) writing = c.TryWrite(Chunk(piece));
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 413);
    EXPECT_EQ(last_error_.load(), static_cast<int>(ErrorCode::kPayloadTooLarge));
    EXPECT_FALSE(res.keep_alive());
}

TEST_F(StreamingTest, AnswerBeforeReadingReachesTheClientAndClosesTheConnection) {
    const std::string body = Pattern(200 * 1024);
    Client c(server_->Port());
    // The whole body is sent although the handler never reads it: the client still gets the
    // response (no reset), and the connection is closed after it.
    c.WriteRaw(PostHead("/refuse", body.size()) + body);
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 403);
    EXPECT_EQ(json::parse(res.body())["error"], "No");
    EXPECT_FALSE(res.keep_alive());
    EXPECT_FALSE(refused_done_.load());
    EXPECT_TRUE(c.Closed());
}

TEST_F(StreamingTest, ExpectContinueIsAnsweredWhenTheHandlerReads) {
    const std::string body = Pattern(4096);
    Client c(server_->Port());
    c.WriteRaw(PostHead("/stream/e", body.size(), "Expect: 100-continue\r\n"));
    const auto interim = c.ReadInterim();
    EXPECT_EQ(interim.result_int(), 100);
    c.WriteRaw(body);
    const auto res = c.Read();
    ASSERT_EQ(res.result_int(), 200);
    EXPECT_EQ(json::parse(res.body())["bytes"], body.size());
}

TEST_F(StreamingTest, ExpectContinueIsNotAnsweredWhenTheHandlerRefuses) {
    Client c(server_->Port());
    c.WriteRaw(PostHead("/refuse", 200 * 1024, "Expect: 100-continue\r\n"));
    // The final response comes straight away: the client never has to send the body.
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 403);
    EXPECT_TRUE(c.Closed());
}

TEST_F(StreamingTest, AStalledBodyTimesOutPerRead) {
    StartServer(300ms);
    Client c(server_->Port());
    c.WriteRaw(PostHead("/stream/slow", 10000) + Pattern(2000));
    const auto started = std::chrono::steady_clock::now();
    // The timed-out stream is closed: the handler's 400 may or may not make it out first.
    EXPECT_TRUE(c.Closed() || c.Closed());
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
    // The close can reach the client before the handler has recorded its error.
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (last_error_.load() < 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(5ms);
    }
    EXPECT_EQ(last_error_.load(), static_cast<int>(ErrorCode::kInvalidRequest));
    std::lock_guard lock(mu_);
    EXPECT_EQ(last_message_, "Timed out reading the request body");
}

TEST_F(StreamingTest, ATruncatedBodyFailsTheRead) {
    {
        Client c(server_->Port());
        c.WriteRaw(PostHead("/stream/cut", 10000) + Pattern(3000));
        // The client goes away mid-body.
    }
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (last_error_.load() < 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(5ms);
    }
    EXPECT_EQ(last_error_.load(), static_cast<int>(ErrorCode::kInvalidRequest));
    std::lock_guard lock(mu_);
    EXPECT_EQ(last_message_, "The request body is incomplete or malformed");
}

TEST_F(StreamingTest, OrdinaryRoutesKeepTheServerLimitAndMethodRules) {
    Client c(server_->Port());
    c.WriteRaw(PostHead("/echo", 10) + "0123456789");
    auto res = c.Read();
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), "0123456789");
    c.WriteRaw("GET /stream/a HTTP/1.1\r\nHost: t\r\n\r\n");
    res = c.Read();
    EXPECT_EQ(res.result_int(), 405);
    EXPECT_EQ(res[bhttp::field::allow], "POST");
    // An unknown route is answered from the header; its body is never read, so the connection
    // closes.
    c.WriteRaw(PostHead("/nowhere", 3) + "abc");
    res = c.Read();
    EXPECT_EQ(res.result_int(), 404);
    EXPECT_FALSE(res.keep_alive());
    EXPECT_TRUE(c.Closed());
    Client d(server_->Port());
    d.WriteRaw(PostHead("/nowhere", 0));
    res = d.Read();
    EXPECT_EQ(res.result_int(), 404);
    EXPECT_TRUE(res.keep_alive());  // no body: the connection stays
    // The absolute form of a target is routed like its origin form (RFC 9112, 3.2.2).
    for (const char* target : {"http://t/hello", "HTTPS://t:8443/hello?x=1"}) {
        d.WriteRaw(std::string("GET ") + target + " HTTP/1.1\r\nHost: t\r\n\r\n");
        res = d.Read();
        EXPECT_EQ(res.result_int(), 200) << target;
        EXPECT_EQ(json::parse(res.body())["hello"], "world");
    }
    d.WriteRaw("GET http://t HTTP/1.1\r\nHost: t\r\n\r\n");
    EXPECT_EQ(d.Read().result_int(), 404);  // "/", which is no route here
    d.WriteRaw(PostHead("/echo", 2000));
    res = d.Read();
    EXPECT_EQ(res.result_int(), 413);  // the server-wide limit (1024) still holds
    EXPECT_EQ(calls_.load(), 0);
}

TEST_F(StreamingTest, OrdinaryRoutesAnswerExpectContinueBeforeReadingTheBody) {
    Client c(server_->Port());
    c.WriteRaw(PostHead("/echo", 10, "Expect: 100-continue\r\n"));
    EXPECT_EQ(c.ReadInterim().result_int(), 100);
    c.WriteRaw("0123456789");
    auto res = c.Read();
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), "0123456789");
    // Over the limit: the 413 at once, no 100, and the body is never needed.
    c.WriteRaw(PostHead("/echo", 2000, "Expect: 100-continue\r\n"));
    res = c.Read();
    EXPECT_EQ(res.result_int(), 413);
    // An HTTP/1.0 client is never sent a 1xx: the first thing it reads is the final answer.
    Client old(server_->Port());
    old.WriteRaw("POST /echo HTTP/1.0\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc");
    res = old.Read();
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), "abc");
}

TEST_F(StreamingTest, ManyConcurrentStreamsEachGetTheirOwnBody) {
    constexpr int kClients = 8;
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int i = 0; i < kClients; ++i) {
        threads.emplace_back([&, i] {
            const std::string body = Pattern(100000 + i * 1000);
            Client c(server_->Port());
            c.WriteRaw(PostHead("/stream/p" + std::to_string(i), body.size()));
            for (std::size_t at = 0; at < body.size(); at += 7000) {
                c.WriteRaw(std::string_view(body).substr(at, 7000));
            }
            const auto res = c.Read();
            const auto j = json::parse(res.body());
            if (res.result_int() == 200 && j["bytes"] == body.size() && j["sum"] == Sum(body) &&
                j["name"] == "p" + std::to_string(i)) {
                ++ok;
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), kClients);
}

}  // namespace
}  // namespace genhost::http
