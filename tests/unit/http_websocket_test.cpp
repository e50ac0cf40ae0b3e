// Tests for WebSocket routes (Router::AddUpgrade, WebSocket) against a real Server on a loopback
// port, with a Beast WebSocket client: echo of text and binary messages; `accept` refusing with a
// 401 the client reads, and seeing the query string; a GET without the upgrade gets 426 (HEAD
// and POST a 405); Send from another thread while the session waits in Read, in order; a message
// over the route's limit closes with 1009; Shutdown closes an open WebSocket with 1001 and
// returns once it has ended (and at its deadline when the peer never answers); Send after the
// peer closed, after the session ended and after the server is gone returns false; the
// queued-bytes limit refuses Sends to a client that does not read; a peer that vanishes
// mid-message, a `run` that throws (1011), Send racing with Shutdown; an open WebSocket counts
// against the connection cap; a WebSocket over a unix-domain socket.
//
// Every client has a watchdog that shuts its socket down when the test hangs, and every wait has
// a timeout, so a failure cannot stall the suite.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "genhost/http/server.hpp"
#include "genhost/http/websocket.hpp"
#include "http_test_client.hpp"

namespace genhost::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace websocket = boost::beast::websocket;
using tcp = asio::ip::tcp;
using json = nlohmann::json;
using namespace std::chrono_literals;

// WaitFor polls `done` until it holds or `limit` passes; returns its last value.
bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(2ms);
    }
    return true;
}

// BasicWsClient is a blocking Beast WebSocket client, with a watchdog that fails the test and
// shuts the socket down when the test hangs for 10 s.
template <class Socket>
class BasicWsClient {
  public:
    explicit BasicWsClient(const typename Socket::endpoint_type& endpoint) : ws_(io_) {
        ws_.next_layer().connect(endpoint);
        watchdog_ = std::thread([this] {
            std::unique_lock lock(mu_);
            if (!cv_.wait_for(lock, 10s, [this] { return done_; })) {
                ADD_FAILURE() << "websocket client watchdog fired: the test hung";
                ::shutdown(ws_.next_layer().native_handle(), SHUT_RDWR);
            }
        });
    }
    ~BasicWsClient() {
        {
            std::lock_guard lock(mu_);
            done_ = true;
        }
        cv_.notify_all();
        watchdog_.join();
    }
    BasicWsClient(const BasicWsClient&) = delete;
    BasicWsClient& operator=(const BasicWsClient&) = delete;

    beast::error_code Handshake(const std::string& target,
                                websocket::response_type* response = nullptr) {
        beast::error_code ec;
        websocket::response_type ignored;
        ws_.handshake(response != nullptr ? *response : ignored, "127.0.0.1", target, ec);
        return ec;
    }

    void Write(const std::string& data, bool binary = false) {
        ws_.binary(binary);
        ws_.write(asio::buffer(data));
    }

    // Read returns the next message, or nullopt with `ec` set when the read fails.
    std::optional<WsMessage> Read(beast::error_code* ec = nullptr) {
        beast::flat_buffer buffer;
        beast::error_code e;
        ws_.read(buffer, e);
        if (ec != nullptr) *ec = e;
        if (e) return std::nullopt;
        return WsMessage{ws_.got_binary(), beast::buffers_to_string(buffer.data())};
    }

    // ReadUntilClosed reads until the server closes; returns the close code it sent (0: none).
    std::uint16_t ReadUntilClosed() {
        for (;;) {
            beast::error_code ec;
            if (!Read(&ec)) return ec == websocket::error::closed ? ws_.reason().code : 0;
        }
    }

    void Close() {
        beast::error_code ec;
        ws_.close(websocket::close_code::normal, ec);
    }

    websocket::stream<Socket>& ws() { return ws_; }

  private:
    asio::io_context io_;
    websocket::stream<Socket> ws_;
    std::thread watchdog_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
};

// WsClient connects to the server's loopback port.
class WsClient : public BasicWsClient<tcp::socket> {
  public:
    explicit WsClient(unsigned short port)
        : BasicWsClient(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port)) {}
};

class WebSocketTest : public ::testing::Test {
  protected:
    static constexpr std::size_t kSmallMessage = 1024;
    static constexpr std::size_t kSmallQueue = 64 * 1024;

    void SetUp() override {
        UpgradeRoute echo;
        echo.run = [](Request&, std::shared_ptr<WebSocket> ws) -> asio::awaitable<void> {
            for (;;) {
                auto message = co_await ws->Read();
                if (!message) break;
                ws->Send(std::move(message->data), message->binary);
            }
        };
        router_.AddUpgrade("/echo", echo);

        UpgradeRoute small = echo;
        small.max_message_bytes = kSmallMessage;
        router_.AddUpgrade("/small", small);

        UpgradeRoute auth;
        auth.accept = [this](Request& req) -> asio::awaitable<std::optional<Response>> {
            {
                std::lock_guard lock(mu_);
                seen_query_ = req.query;
            }
            if (req.QueryParam("access_token") != "good") {
                co_return Response::Error(ApiError::Unauthorized("Invalid access token"), "");
            }
            req.org_id = "org-" + req.params.at("room");
            co_return std::nullopt;
        };
        auth.run = [](Request& req, std::shared_ptr<WebSocket> ws) -> asio::awaitable<void> {
            ws->Send(req.org_id + " " + req.QueryParam("x").value_or("-"), false);
            for (;;) {
                const auto message = co_await ws->Read();
                if (!message) break;
            }
        };
        router_.AddUpgrade("/rooms/{room}", auth);

        // Hands its WebSocket to the test, reads until the peer goes, then tries one more Send.
        UpgradeRoute push;
        push.run = [this](Request&, std::shared_ptr<WebSocket> ws) -> asio::awaitable<void> {
            Publish(ws);
            for (;;) {
                const auto message = co_await ws->Read();
                if (!message) break;
            }
            const bool late = ws->Send("late", false);
            {
                std::lock_guard lock(mu_);
                late_send_ = late;
                ended_ = true;
            }
            cv_.notify_all();
        };
        router_.AddUpgrade("/push", push);

        UpgradeRoute slow = push;
        slow.max_queued_bytes = kSmallQueue;
        router_.AddUpgrade("/slow", slow);

        UpgradeRoute fails;
        fails.run = [](Request&, std::shared_ptr<WebSocket> ws) -> asio::awaitable<void> {
            const auto message = co_await ws->Read();
            if (message) throw std::runtime_error("the session broke");
        };
        router_.AddUpgrade("/fails", fails);

        router_.Add("GET", "/hello", [](Request&) -> asio::awaitable<Response> {
            co_return Response::Json(200, {{"hello", "world"}});
        });
        StartServer(ServerOptions{});
    }

    void TearDown() override {
        if (server_) server_->Shutdown(2000ms);
    }

    void StartServer(ServerOptions options) {
        options.host = "127.0.0.1";
        options.port = 0;
        options.io_threads = 2;
        options.read_timeout = 5000ms;
        if (server_) server_->Shutdown(2000ms);
        server_ = std::make_unique<Server>(options, router_, metrics_);
        server_->Listen();
        server_->Start();
    }

    void Publish(std::shared_ptr<WebSocket> ws) {
        {
            std::lock_guard lock(mu_);
            published_ = std::move(ws);
        }
        cv_.notify_all();
    }

    // Published waits for the WebSocket a /push or /slow session hands over.
    std::shared_ptr<WebSocket> Published() {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, 5s, [this] { return published_ != nullptr; });
        return published_;
    }

    // Ended waits for a /push or /slow session to end; returns what its late Send returned.
    std::optional<bool> Ended() {
        std::unique_lock lock(mu_);
        if (!cv_.wait_for(lock, 5s, [this] { return ended_; })) return std::nullopt;
        return late_send_;
    }

    Router router_;
    Metrics metrics_;
    std::unique_ptr<Server> server_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::string seen_query_;
    std::shared_ptr<WebSocket> published_;
    bool ended_ = false;
    bool late_send_ = true;
};

TEST_F(WebSocketTest, EchoesTextAndBinaryMessages) {
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/echo"));
    EXPECT_TRUE(WaitFor([&] { return server_->WebSockets() == 1; }));
    EXPECT_EQ(server_->InFlight(), 0);

    c.Write("hello");
    auto text = c.Read();
    ASSERT_TRUE(text);
    EXPECT_FALSE(text->binary);
    EXPECT_EQ(text->data, "hello");

    const std::string bytes("\0\1\2\xff binary", 11);
    c.Write(bytes, true);
    auto binary = c.Read();
    ASSERT_TRUE(binary);
    EXPECT_TRUE(binary->binary);
    EXPECT_EQ(binary->data, bytes);

    const std::string big(200 * 1024, 'x');
    c.Write(big);
    auto echoed = c.Read();
    ASSERT_TRUE(echoed);
    EXPECT_EQ(echoed->data, big);

    c.Close();
    EXPECT_TRUE(WaitFor([&] { return server_->WebSockets() == 0; }));
    EXPECT_TRUE(WaitFor([&] { return server_->Connections() == 0; }));
    // The upgrade is counted and logged as a request answered 101.
    EXPECT_THAT(metrics_.Render({}),
                ::testing::HasSubstr(R"(route="/echo",method="GET",status="101"} 1)"));
}

TEST_F(WebSocketTest, TheHandshakeResponseCarriesTheRequestId) {
    WsClient c(server_->Port());
    websocket::response_type response;
    c.ws().set_option(websocket::stream_base::decorator(
        [](websocket::request_type& req) { req.set("X-Request-Id", "ws-test-1"); }));
    ASSERT_FALSE(c.Handshake("/echo", &response));
    EXPECT_EQ(response.result_int(), 101);
    EXPECT_EQ(response["X-Request-Id"], "ws-test-1");
    EXPECT_THAT(std::string(response[bhttp::field::server]),
                ::testing::Not(::testing::HasSubstr("Beast")));
    c.Close();
}

TEST_F(WebSocketTest, AcceptRefusesWith401AndTheClientReadsIt) {
    WsClient c(server_->Port());
    websocket::response_type response;
    const auto ec = c.Handshake("/rooms/r1?access_token=bad", &response);
    EXPECT_EQ(ec, websocket::error::upgrade_declined);
    EXPECT_EQ(response.result_int(), 401);
    EXPECT_EQ(json::parse(response.body()), json({{"error", "Invalid access token"}}));
    EXPECT_EQ(server_->WebSockets(), 0);
}

TEST_F(WebSocketTest, TheQueryStringAndPathParametersReachAcceptAndRun) {
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/rooms/r7?access_token=good&x=42"));
    {
        std::lock_guard lock(mu_);
        EXPECT_EQ(seen_query_, "access_token=good&x=42");
    }
    // What accept put in the request reaches run.
    auto hello = c.Read();
    ASSERT_TRUE(hello);
    EXPECT_EQ(hello->data, "org-r7 42");
    c.Close();
}

TEST_F(WebSocketTest, APlainGetGets426AndOtherMethods405) {
    test::TestClient client(server_->Port());
    test::StringRequest get{bhttp::verb::get, "/echo", 11};
    get.set(bhttp::field::host, "t");
    const auto res = client.Roundtrip(get);
    EXPECT_EQ(res.result_int(), 426);
    EXPECT_EQ(res[bhttp::field::upgrade], "websocket");
    EXPECT_EQ(res[bhttp::field::content_type], "application/json");
    EXPECT_THAT(json::parse(res.body()).at("error").get<std::string>(),
                ::testing::HasSubstr("WebSocket"));
    // The connection stays usable.
    test::StringRequest hello{bhttp::verb::get, "/hello", 11};
    hello.set(bhttp::field::host, "t");
    EXPECT_EQ(client.Roundtrip(hello).result_int(), 200);

    test::StringRequest post{bhttp::verb::post, "/echo", 11};
    post.set(bhttp::field::host, "t");
    const auto refused = client.Roundtrip(post);
    EXPECT_EQ(refused.result_int(), 405);
    EXPECT_EQ(refused[bhttp::field::allow], "GET");

    client.WriteRaw("HEAD /echo HTTP/1.1\r\nHost: t\r\n\r\n");
    const auto head = client.ReadHead();
    EXPECT_EQ(head.result_int(), 405);
    EXPECT_EQ(head[bhttp::field::allow], "GET");
}

TEST_F(WebSocketTest, AnotherWebSocketVersionGets426) {
    test::TestClient client(server_->Port());
    client.WriteRaw(
        "GET /echo HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n");
    const auto res = client.Read();
    EXPECT_EQ(res.result_int(), 426);
    EXPECT_EQ(res[bhttp::field::sec_websocket_version], "13");

    client.WriteRaw(
        "GET /echo HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n");
    EXPECT_EQ(client.Read().result_int(), 400);  // no Sec-WebSocket-Key
}

TEST_F(WebSocketTest, SendFromAnotherThreadArrivesInOrder) {
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/push"));
    const auto ws = Published();
    ASSERT_NE(ws, nullptr);
    EXPECT_TRUE(ws->open());
    EXPECT_EQ(ws->remote_address(), "127.0.0.1");
    constexpr int kMessages = 1000;
    std::atomic<int> refused{0};
    std::thread sender([&] {
        for (int i = 0; i < kMessages; ++i) {
            if (!ws->Send("message " + std::to_string(i), i % 2 == 1)) ++refused;
        }
    });
    for (int i = 0; i < kMessages; ++i) {
        auto message = c.Read();
        ASSERT_TRUE(message) << "after " << i << " messages";
        ASSERT_EQ(message->data, "message " + std::to_string(i));
        ASSERT_EQ(message->binary, i % 2 == 1);
    }
    sender.join();
    EXPECT_EQ(refused.load(), 0);
    EXPECT_TRUE(WaitFor([&] { return ws->queued_bytes() == 0; }));
    c.Close();
    EXPECT_EQ(Ended(), std::optional<bool>(false));
}

TEST_F(WebSocketTest, AMessageOverTheRouteLimitClosesWith1009) {
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/small"));
    const std::string fits(kSmallMessage, 'a');
    c.Write(fits);
    auto echoed = c.Read();
    ASSERT_TRUE(echoed);
    EXPECT_EQ(echoed->data, fits);

    c.Write(std::string(kSmallMessage + 1, 'b'));
    EXPECT_EQ(c.ReadUntilClosed(), 1009);
    EXPECT_TRUE(WaitFor([&] { return server_->WebSockets() == 0; }));
}

TEST_F(WebSocketTest, ShutdownClosesAnOpenWebSocketWith1001AndReturns) {
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/echo"));
    ASSERT_TRUE(WaitFor([&] { return server_->WebSockets() == 1; }));
    const auto started = std::chrono::steady_clock::now();
    std::thread stopper([&] { server_->Shutdown(5000ms); });
    // The client answers the close frame as it reads it; the drain then ends well before its
    // deadline.
    EXPECT_EQ(c.ReadUntilClosed(), 1001);
    stopper.join();
    EXPECT_LT(std::chrono::steady_clock::now() - started, 4000ms);
    EXPECT_EQ(server_->WebSockets(), 0);
    EXPECT_EQ(server_->Connections(), 0);
}

TEST_F(WebSocketTest, ShutdownReturnsAtItsDeadlineWhenThePeerDoesNotAnswerTheClose) {
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/push"));
    const auto ws = Published();
    ASSERT_NE(ws, nullptr);
    // The client reads nothing: the close frame stays unanswered, and the connection is still
    // open when the I/O threads stop.
    const auto started = std::chrono::steady_clock::now();
    server_->Shutdown(300ms);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 3000ms);
    EXPECT_FALSE(ws->Send("after shutdown", false));
    server_.reset();
    EXPECT_FALSE(ws->Send("after the server", false));
    ws->Close(1000, "");
    EXPECT_FALSE(ws->open());
}

TEST_F(WebSocketTest, SendAfterThePeerClosedReturnsFalse) {
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/push"));
    const auto ws = Published();
    ASSERT_NE(ws, nullptr);
    c.Close();
    // The session's own Send, after Read saw the close.
    EXPECT_EQ(Ended(), std::optional<bool>(false));
    // Another thread's, after the session ended.
    EXPECT_TRUE(WaitFor([&] { return server_->WebSockets() == 0; }));
    EXPECT_FALSE(ws->open());
    EXPECT_FALSE(ws->Send("after", false));
    ws->Close(1000, "again");  // idempotent, and nothing to close
    // And once the server is gone.
    server_->Shutdown(1000ms);
    server_.reset();
    EXPECT_FALSE(ws->Send("after the server", true));
    ws->Close(1000, "");
}

TEST_F(WebSocketTest, TheQueueLimitRefusesSendsToAClientThatDoesNotRead) {
    WsClient c(server_->Port());
    // A small receive buffer, so the server's socket fills soon.
    c.ws().next_layer().set_option(asio::socket_base::receive_buffer_size(4096));
    ASSERT_FALSE(c.Handshake("/slow"));
    const auto ws = Published();
    ASSERT_NE(ws, nullptr);
    EXPECT_EQ(ws->max_queued_bytes(), kSmallQueue);
    const std::string chunk(16 * 1024, 'q');
    int accepted = 0;
    bool refused = false;
    // Bounded: the kernel buffers of a loopback connection hold a few megabytes at most.
    for (int i = 0; i < 20000 && !refused; ++i) {
        if (ws->Send(chunk, true)) {
            ++accepted;
            EXPECT_LE(ws->queued_bytes(), kSmallQueue);
        } else {
            refused = true;
        }
    }
    EXPECT_TRUE(refused) << accepted << " messages accepted";
    EXPECT_LE(ws->queued_bytes(), kSmallQueue);
    EXPECT_FALSE(ws->Send(std::string(kSmallQueue + 1, 'x'), true));  // never fits
    EXPECT_TRUE(ws->open());  // refusing a message does not close the connection
    // The peer vanishes with the server's writes pending.
    beast::error_code ignored;
    c.ws().next_layer().close(ignored);
    EXPECT_EQ(Ended(), std::optional<bool>(false));
    EXPECT_TRUE(WaitFor([&] { return server_->WebSockets() == 0; }));
    EXPECT_FALSE(ws->Send("after", false));
}

TEST_F(WebSocketTest, APeerThatVanishesMidMessageEndsTheSession) {
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/echo"));
    ASSERT_TRUE(WaitFor([&] { return server_->WebSockets() == 1; }));
    // A masked text frame announcing 1000 bytes, of which 10 arrive.
    std::string frame = {'\x81', static_cast<char>(0x80 | 126), '\x03', '\xe8', 'k', 'e', 'y', 's'};
    frame += std::string(10, 'z');
    asio::write(c.ws().next_layer(), asio::buffer(frame));
    beast::error_code ignored;
    c.ws().next_layer().close(ignored);
    EXPECT_TRUE(WaitFor([&] { return server_->WebSockets() == 0; }));
    EXPECT_TRUE(WaitFor([&] { return server_->Connections() == 0; }));
}

TEST_F(WebSocketTest, ARunThatThrowsClosesWith1011) {
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/fails"));
    c.Write("boom");
    EXPECT_EQ(c.ReadUntilClosed(), 1011);
    EXPECT_TRUE(WaitFor([&] { return server_->WebSockets() == 0; }));
}

TEST_F(WebSocketTest, SendRacingWithShutdownNeitherCrashesNorLeaks) {
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/push"));
    const auto ws = Published();
    ASSERT_NE(ws, nullptr);
    std::atomic<bool> stop{false};
    std::atomic<int> accepted{0};
    std::thread sender([&] {
        while (!stop) {
            if (ws->Send("tick", false)) ++accepted;
        }
    });
    std::thread reader([&] { c.ReadUntilClosed(); });
    ASSERT_TRUE(WaitFor([&] { return accepted > 100; }));
    server_->Shutdown(2000ms);
    EXPECT_FALSE(ws->Send("after shutdown", false));
    server_.reset();
    EXPECT_FALSE(ws->Send("after the server", false));
    stop = true;
    sender.join();
    reader.join();
}

TEST_F(WebSocketTest, AnOpenWebSocketCountsAgainstTheConnectionCap) {
    ServerOptions options;
    options.max_connections = 1;
    StartServer(options);
    WsClient c(server_->Port());
    ASSERT_FALSE(c.Handshake("/echo"));
    ASSERT_TRUE(WaitFor([&] { return server_->WebSockets() == 1; }));
    EXPECT_EQ(server_->Connections(), 1);
    {
        test::TestClient other(server_->Port());
        test::StringRequest get{bhttp::verb::get, "/hello", 11};
        get.set(bhttp::field::host, "t");
        EXPECT_EQ(other.Roundtrip(get).result_int(), 503);
    }
    c.Close();
    ASSERT_TRUE(WaitFor([&] { return server_->Connections() == 0; }));
    test::TestClient other(server_->Port());
    test::StringRequest get{bhttp::verb::get, "/hello", 11};
    get.set(bhttp::field::host, "t");
    EXPECT_EQ(other.Roundtrip(get).result_int(), 200);
}

}  // namespace
}  // namespace genhost::http

namespace genhost::http {
namespace {

TEST(WebSocketRouter, AnUpgradeRouteMatchesGetOnlyAndIsToldApart) {
    Router router;
    UpgradeRoute route;
    route.max_message_bytes = 77;
    router.AddUpgrade("/rooms/{id}/ws", route);
    router.Add("GET", "/rooms/{id}",
               [](Request&) -> asio::awaitable<Response> { co_return Response::NoContent(); });
    const auto get = router.Find("GET", "/rooms/r1/ws");
    EXPECT_EQ(get.kind, Router::Match::Kind::kUpgrade);
    ASSERT_NE(get.upgrade, nullptr);
    EXPECT_EQ(get.upgrade->max_message_bytes, 77u);
    EXPECT_EQ(get.handler, nullptr);
    EXPECT_EQ(get.pattern, "/rooms/{id}/ws");
    EXPECT_EQ(get.params.at("id"), "r1");
    for (const char* method : {"HEAD", "POST"}) {
        const auto other = router.Find(method, "/rooms/r1/ws");
        EXPECT_EQ(other.kind, Router::Match::Kind::kMethodNotAllowed) << method;
        EXPECT_EQ(other.allow, std::vector<std::string>{"GET"}) << method;
    }
    EXPECT_EQ(router.Find("GET", "/rooms/r1").kind, Router::Match::Kind::kFound);
}

TEST(WebSocketUnixSocket, EchoesOverAUnixDomainSocket) {
    Router router;
    UpgradeRoute echo;
    echo.run = [](Request& req, std::shared_ptr<WebSocket> ws) -> asio::awaitable<void> {
        ws->Send("remote=" + ws->remote_address(), false);
        for (;;) {
            auto message = co_await ws->Read();
            if (!message) break;
            ws->Send(std::move(message->data), message->binary);
        }
    };
    router.AddUpgrade("/echo", echo);
    Metrics metrics;
    ServerOptions options;
    options.unix_path = "/tmp/genhost-ws-test-" + std::to_string(::getpid()) + ".sock";
    options.io_threads = 1;
    Server server(options, router, metrics);
    server.Listen();
    server.Start();
    {
        BasicWsClient<asio::local::stream_protocol::socket> c(
            asio::local::stream_protocol::endpoint(options.unix_path));
        ASSERT_FALSE(c.Handshake("/echo"));
        auto hello = c.Read();
        ASSERT_TRUE(hello);
        EXPECT_EQ(hello->data, "remote=");
        c.Write("over unix", true);
        auto echoed = c.Read();
        ASSERT_TRUE(echoed);
        EXPECT_TRUE(echoed->binary);
        EXPECT_EQ(echoed->data, "over unix");
        c.Close();
    }
    EXPECT_TRUE(WaitFor([&] { return server.Connections() == 0; }));
    server.Shutdown(1000ms);
}

}  // namespace
}  // namespace genhost::http
