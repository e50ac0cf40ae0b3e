// Tests for genhost/http/server.hpp against a real Server on a loopback port chosen by the
// kernel, driven with Boost.Beast's synchronous client API: keep-alive and pipelining,
// X-Request-Id echoed or generated, 413 answered from the headers, 431, 400 for a malformed
// request, a handler exception becoming a generic 500 (logged with the request id), HEAD, 404 and
// 405, the access log and metrics, the read timeout, and Shutdown() draining an in-flight request
// while closing idle connections.
//
// Every client socket has a watchdog: if a test hangs, the socket is shut down after a few
// seconds so the blocking read fails instead of stalling the suite.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "genhost/core/ids.hpp"
#include "genhost/http/server.hpp"
#include "http_test_client.hpp"
#include "support/wait_for.hpp"

namespace genhost::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using json = nlohmann::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

using test::StringRequest;
using test::StringResponse;

constexpr char kSecret[] = "hunter2-connection-string";

// CaptureSink keeps every logged message (the payload only) for inspection.
class CaptureSink final : public spdlog::sinks::base_sink<std::mutex> {
  public:
    std::vector<std::string> Lines() {
        std::lock_guard lock(mutex_);
        return lines_;
    }
    void Clear() {
        std::lock_guard lock(mutex_);
        lines_.clear();
    }

  protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        lines_.emplace_back(msg.payload.data(), msg.payload.size());
    }
    void flush_() override {}

  private:
    std::vector<std::string> lines_;
};

std::shared_ptr<CaptureSink>& Sink() {
    static std::shared_ptr<CaptureSink> sink = [] {
        auto s = std::make_shared<CaptureSink>();
        // The access logger falls back to the default logger (SetupLogging is not called), so
        // both the access lines and the error lines land here.
        auto logger = std::make_shared<spdlog::logger>("test", s);
        logger->set_level(spdlog::level::info);
        spdlog::set_default_logger(logger);
        return s;
    }();
    return sink;
}

using Client = test::TestClient;

StringRequest Get(std::string target, bhttp::verb verb = bhttp::verb::get) {
    StringRequest req{verb, target, 11};
    req.set(bhttp::field::host, "127.0.0.1");
    return req;
}

using genhost::test::WaitFor;
using test::IsClosed;

class ServerTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { (void)Sink(); }

    void SetUp() override {
        Sink()->Clear();
        router_.Add("GET", "/hello", [](Request&) -> asio::awaitable<Response> {
            co_return Response::Json(200, {{"hello", "world"}});
        });
        router_.Add("DELETE", "/hello",
                    [](Request&) -> asio::awaitable<Response> { co_return Response::NoContent(); });
        router_.Add("POST", "/echo", [](Request& req) -> asio::awaitable<Response> {
            Response r;
            r.body = req.body;
            r.SetHeader("Content-Type", "application/octet-stream");
            co_return r;
        });
        router_.Add("GET", "/id", [](Request& req) -> asio::awaitable<Response> {
            co_return Response::Json(200, {{"request_id", req.request_id},
                                           {"path", req.path},
                                           {"query", req.query},
                                           {"q", req.QueryParam("q").value_or("<none>")},
                                           {"auth", req.Header("Authorization").value_or("")}});
        });
        router_.Add("GET", "/items/{id}", [](Request& req) -> asio::awaitable<Response> {
            co_return Response::Json(200, {{"id", req.params.at("id")}, {"route", req.route}});
        });
        router_.Add("GET", "/boom", [](Request&) -> asio::awaitable<Response> {
            throw std::runtime_error(std::string("database exploded: ") + kSecret);
            co_return Response{};
        });
        router_.Add("GET", "/api-error", [](Request&) -> asio::awaitable<Response> {
            throw ApiErrorException(ApiError::NotFound("Task not found"));
            co_return Response{};
        });
        router_.Add("GET", "/slow", [this](Request&) -> asio::awaitable<Response> {
            slow_started_ = true;
            asio::steady_timer timer(co_await asio::this_coro::executor, 150ms);
            co_await timer.async_wait(asio::use_awaitable);
            slow_finished_ = true;
            co_return Response::Json(200, {{"slow", true}});
        });
        // A gated route: the gate lets through the key "good" (and hands the handler what it
        // found), answers 401 otherwise; gate_calls_ and gated_calls_ count what ran.
        GatedHandler gated;
        gated.gate = [this](Request& req) -> asio::awaitable<std::optional<Response>> {
            ++gate_calls_;
            if (req.Header("x-key").value_or("") != "good") {
                co_return Response::Error(ApiError::Unauthorized(), "http://docs.test/errors");
            }
            req.auth = std::string("caller-1");
            co_return std::nullopt;
        };
        gated.handler = [this](Request& req) -> asio::awaitable<Response> {
            ++gated_calls_;
            co_return Response::Json(
                200, {{"who", std::any_cast<std::string>(req.auth)}, {"body", req.body}});
        };
        router_.Add("POST", "/gated", std::move(gated));
        StartServer(5000ms);
    }

    void TearDown() override {
        if (server_) server_->Shutdown(2000ms);
    }

    void StartServer(std::chrono::milliseconds read_timeout,
                     const std::function<void(ServerOptions&)>& tweak = {}) {
        ServerOptions options;
        options.host = "127.0.0.1";
        options.port = 0;
        options.io_threads = 2;
        options.max_body_bytes = 1024;
        options.max_header_bytes = 2048;
        options.read_timeout = read_timeout;
        options.doc_url = "http://docs.test/errors";
        if (tweak) tweak(options);
        if (server_) server_->Shutdown(2000ms);
        server_ = std::make_unique<Server>(options, router_, metrics_);
        server_->Listen();
        ASSERT_NE(server_->Port(), 0);
        server_->Start();
    }

    Router router_;
    Metrics metrics_;
    std::unique_ptr<Server> server_;
    std::atomic<int> gate_calls_{0};
    std::atomic<int> gated_calls_{0};
    std::atomic<bool> slow_started_{false};
    std::atomic<bool> slow_finished_{false};
};

// --- basic exchanges -----------------------------------------------------------------------

TEST_F(ServerTest, AnswersAGet) {
    Client c(server_->Port());
    const auto res = c.Roundtrip(Get("/hello"));
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res[bhttp::field::content_type], "application/json");
    EXPECT_EQ(json::parse(res.body()), (json{{"hello", "world"}}));
    EXPECT_EQ(res[bhttp::field::content_length], std::to_string(res.body().size()));
}

TEST_F(ServerTest, KeepAliveAcrossSeveralRequestsOnOneConnection) {
    Client c(server_->Port());
    for (int i = 0; i < 6; ++i) {
        StringResponse res;
        if (i % 2 == 0) {
            res = c.Roundtrip(Get("/hello"));
            EXPECT_EQ(res.result_int(), 200) << i;
        } else {
            auto req = Get("/echo", bhttp::verb::post);
            req.body() = "payload " + std::to_string(i);
            res = c.Roundtrip(req);
            EXPECT_EQ(res.result_int(), 200) << i;
            EXPECT_EQ(res.body(), "payload " + std::to_string(i));
        }
        EXPECT_TRUE(res.keep_alive()) << i;
    }
    // Errors keep the connection open too.
    EXPECT_EQ(c.Roundtrip(Get("/nope")).result_int(), 404);
    EXPECT_EQ(c.Roundtrip(Get("/boom")).result_int(), 500);
    const auto last = c.Roundtrip(Get("/hello"));
    EXPECT_EQ(last.result_int(), 200);
    EXPECT_TRUE(last.keep_alive());
}

TEST_F(ServerTest, PipelinedRequestsAreAnsweredInOrder) {
    Client c(server_->Port());
    c.WriteRaw(
        "GET /items/one HTTP/1.1\r\nHost: x\r\n\r\n"
        "GET /items/two HTTP/1.1\r\nHost: x\r\n\r\n"
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nthree");
    EXPECT_EQ(json::parse(c.Read().body()).at("id"), "one");
    EXPECT_EQ(json::parse(c.Read().body()).at("id"), "two");
    EXPECT_EQ(c.Read().body(), "three");
}

TEST_F(ServerTest, ClientConnectionCloseIsHonoured) {
    Client c(server_->Port());
    auto req = Get("/hello");
    req.keep_alive(false);
    const auto res = c.Roundtrip(req);
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_FALSE(res.keep_alive());
    EXPECT_TRUE(IsClosed(c.ReadError()));
}

TEST_F(ServerTest, Http10ClosesAfterTheResponse) {
    Client c(server_->Port());
    c.WriteRaw("GET /hello HTTP/1.0\r\n\r\n");
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.version(), 10);
    EXPECT_TRUE(IsClosed(c.ReadError()));
}

TEST_F(ServerTest, PassesPathQueryHeadersAndParams) {
    Client c(server_->Port());
    auto req = Get("/id?q=a+b%21&x=1");
    req.set(bhttp::field::authorization, "Bearer abc");
    const auto res = c.Roundtrip(req);
    ASSERT_EQ(res.result_int(), 200);
    const json body = json::parse(res.body());
    EXPECT_EQ(body.at("path"), "/id");
    EXPECT_EQ(body.at("query"), "q=a+b%21&x=1");
    EXPECT_EQ(body.at("q"), "a b!");
    EXPECT_EQ(body.at("auth"), "Bearer abc");

    const auto item = c.Roundtrip(Get("/items/42"));
    ASSERT_EQ(item.result_int(), 200);
    EXPECT_EQ(json::parse(item.body()), (json{{"id", "42"}, {"route", "/items/{id}"}}));
}

// --- X-Request-Id --------------------------------------------------------------------------

TEST_F(ServerTest, EchoesTheClientsRequestId) {
    Client c(server_->Port());
    auto req = Get("/id");
    req.set("X-Request-Id", "client-chosen-id-123");
    const auto res = c.Roundtrip(req);
    EXPECT_EQ(res["X-Request-Id"], "client-chosen-id-123");
    EXPECT_EQ(json::parse(res.body()).at("request_id"), "client-chosen-id-123");
}

TEST_F(ServerTest, GeneratesARequestIdWhenAbsent) {
    Client c(server_->Port());
    const auto a = c.Roundtrip(Get("/id"));
    const auto b = c.Roundtrip(Get("/id"));
    const std::string id_a(a["X-Request-Id"]);
    const std::string id_b(b["X-Request-Id"]);
    EXPECT_TRUE(IsUuidV4(id_a)) << id_a;
    EXPECT_TRUE(IsUuidV4(id_b)) << id_b;
    EXPECT_NE(id_a, id_b);
    EXPECT_EQ(json::parse(a.body()).at("request_id"), id_a);
}

TEST_F(ServerTest, ReplacesAnInsaneRequestId) {
    Client c(server_->Port());
    for (const std::string& bad : {std::string("has space"), std::string(129, 'x'),
                                   std::string("tab\tinside"), std::string("caf\xc3\xa9")}) {
        auto req = Get("/id");
        req.set("X-Request-Id", bad);
        const auto res = c.Roundtrip(req);
        EXPECT_TRUE(IsUuidV4(std::string(res["X-Request-Id"]))) << bad;
    }
    auto ok = Get("/id");
    ok.set("X-Request-Id", std::string(128, 'y'));
    EXPECT_EQ(c.Roundtrip(ok)["X-Request-Id"], std::string(128, 'y'));
}

TEST_F(ServerTest, ErrorResponsesCarryARequestIdToo) {
    Client c(server_->Port());
    auto req = Get("/nope");
    req.set("X-Request-Id", "rid-404");
    EXPECT_EQ(c.Roundtrip(req)["X-Request-Id"], "rid-404");
    EXPECT_TRUE(IsUuidV4(std::string(c.Roundtrip(Get("/boom"))["X-Request-Id"])));
}

// --- limits and malformed input ------------------------------------------------------------

TEST_F(ServerTest, BodyWithinTheLimitIsAccepted) {
    Client c(server_->Port());
    auto req = Get("/echo", bhttp::verb::post);
    req.body() = std::string(1024, 'b');
    const auto res = c.Roundtrip(req);
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body().size(), 1024u);
}

TEST_F(ServerTest, AnnouncedBodyAboveTheLimitIs413FromTheHeaders) {
    Client c(server_->Port());
    // Only the headers are sent: the 413 must come without the server waiting for the body.
    c.WriteRaw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n");
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 413);
    EXPECT_FALSE(res.keep_alive());
    EXPECT_EQ(res[bhttp::field::content_type], "application/json");
    EXPECT_EQ(json::parse(res.body()).at("error"), "Request body too large");
    EXPECT_TRUE(IsUuidV4(std::string(res["X-Request-Id"])));
    EXPECT_TRUE(IsClosed(c.ReadError()));
}

TEST_F(ServerTest, ChunkedBodyAboveTheLimitIs413) {
    Client c(server_->Port());
    std::string raw = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    raw += "600\r\n" + std::string(0x600, 'c') + "\r\n0\r\n\r\n";
    c.WriteRaw(raw);
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 413);
}

TEST_F(ServerTest, OversizedHeadersAre431) {
    Client c(server_->Port());
    auto req = Get("/hello");
    req.set("X-Big", std::string(3000, 'h'));
    c.Send(req);
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 431);
    EXPECT_FALSE(res.keep_alive());
    EXPECT_EQ(json::parse(res.body()).at("error"), "Request headers too large");
}

TEST_F(ServerTest, MalformedRequestLineIs400) {
    Client c(server_->Port());
    c.WriteRaw("THIS IS NOT HTTP\r\n\r\n");
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 400);
    EXPECT_FALSE(res.keep_alive());
    EXPECT_EQ(json::parse(res.body()).at("error"), "Malformed HTTP request");
    EXPECT_TRUE(IsClosed(c.ReadError()));
}

TEST_F(ServerTest, MalformedHeaderLineIs400) {
    Client c(server_->Port());
    c.WriteRaw("GET /hello HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n");
    EXPECT_EQ(c.Read().result_int(), 400);
}

TEST_F(ServerTest, ConnectionClosedBeforeAnyByteGetsNoResponse) {
    { Client c(server_->Port()); }
    // The server survives and keeps serving.
    Client c(server_->Port());
    EXPECT_EQ(c.Roundtrip(Get("/hello")).result_int(), 200);
}

TEST_F(ServerTest, ReadTimeoutClosesAStalledConnection) {
    StartServer(100ms);
    Client c(server_->Port());
    c.WriteRaw("GET /hello HTTP/1.1\r\nHost: x\r\n");  // never finished
    const auto started = std::chrono::steady_clock::now();
    EXPECT_TRUE(IsClosed(c.ReadError()));
    EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
}

TEST_F(ServerTest, ReadTimeoutCoversABodyThatStopsComing) {
    // The limit is for the whole request: a header in time and a body that never ends is closed
    // within the read timeout (plus the sweep's quarter of it), and the server still answers.
    StartServer(200ms);
    Client c(server_->Port());
    c.WriteRaw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
    const auto started = std::chrono::steady_clock::now();
    EXPECT_TRUE(IsClosed(c.ReadError()));
    const auto waited = std::chrono::steady_clock::now() - started;
    EXPECT_GE(waited, 150ms);
    EXPECT_LT(waited, 3s);
    Client again(server_->Port());
    EXPECT_EQ(again.Roundtrip(Get("/hello")).result_int(), 200);
}

TEST_F(ServerTest, ABusyConnectionIsNotClosedByTheReadTimeout) {
    // Keep-alive requests that each come in time keep their connection past several timeouts.
    StartServer(150ms);
    Client c(server_->Port());
    for (int i = 0; i < 6; ++i) {
        EXPECT_EQ(c.Roundtrip(Get("/hello")).result_int(), 200) << i;
        std::this_thread::sleep_for(60ms);
    }
}

TEST_F(ServerTest, IdleKeepAliveConnectionTimesOut) {
    StartServer(100ms);
    Client c(server_->Port());
    EXPECT_EQ(c.Roundtrip(Get("/hello")).result_int(), 200);
    EXPECT_TRUE(IsClosed(c.ReadError()));
}

// --- errors --------------------------------------------------------------------------------

TEST_F(ServerTest, HandlerExceptionIsAGeneric500) {
    Client c(server_->Port());
    auto req = Get("/boom");
    req.set("X-Request-Id", "rid-boom-1");
    const auto res = c.Roundtrip(req);
    EXPECT_EQ(res.result_int(), 500);
    EXPECT_EQ(json::parse(res.body()), (json{{"error", "Internal server error"}}));
    EXPECT_THAT(res.body(), Not(HasSubstr(kSecret)));
    EXPECT_THAT(res.body(), Not(HasSubstr("exploded")));
    for (const auto& field : res) {
        EXPECT_THAT(std::string(field.value()), Not(HasSubstr(kSecret)));
    }
    // The details go to the log, with the request id.
    bool logged = false;
    for (const auto& line : Sink()->Lines()) {
        if (line.find("rid-boom-1") != std::string::npos &&
            line.find(kSecret) != std::string::npos) {
            logged = true;
        }
    }
    EXPECT_TRUE(logged);
}

TEST_F(ServerTest, ApiErrorExceptionKeepsItsStatusAndMessage) {
    Client c(server_->Port());
    const auto res = c.Roundtrip(Get("/api-error"));
    EXPECT_EQ(res.result_int(), 404);
    EXPECT_EQ(json::parse(res.body()), (json{{"error", "Task not found"}}));
}

TEST_F(ServerTest, UnknownPathIs404ForEveryMethod) {
    Client c(server_->Port());
    for (const auto verb : {bhttp::verb::get, bhttp::verb::post, bhttp::verb::delete_,
                            bhttp::verb::put, bhttp::verb::patch}) {
        const auto res = c.Roundtrip(Get("/v1/unknown", verb));
        EXPECT_EQ(res.result_int(), 404) << bhttp::to_string(verb);
        EXPECT_EQ(json::parse(res.body()), (json{{"error", "Not found"}}));
    }
}

TEST_F(ServerTest, WrongMethodIs405WithAllow) {
    Client c(server_->Port());
    const auto res = c.Roundtrip(Get("/hello", bhttp::verb::put));
    EXPECT_EQ(res.result_int(), 405);
    EXPECT_EQ(res[bhttp::field::allow], "GET, HEAD, DELETE");
    EXPECT_EQ(json::parse(res.body()).at("error"), "Method not allowed");

    const auto post_only = c.Roundtrip(Get("/echo"));
    EXPECT_EQ(post_only.result_int(), 405);
    EXPECT_EQ(post_only[bhttp::field::allow], "POST");
}

// --- HEAD ----------------------------------------------------------------------------------

TEST_F(ServerTest, HeadSendsHeadersWithoutABody) {
    Client c(server_->Port());
    const auto get = c.Roundtrip(Get("/hello"));
    ASSERT_EQ(get.result_int(), 200);

    c.Send(Get("/hello", bhttp::verb::head));
    auto head = c.ReadHead();
    EXPECT_EQ(head.result_int(), 200);
    EXPECT_EQ(head[bhttp::field::content_length], std::to_string(get.body().size()));
    EXPECT_EQ(head[bhttp::field::content_type], "application/json");
    EXPECT_TRUE(head.keep_alive());
    EXPECT_EQ(c.Buffered(), 0u);

    // Had a body been sent, it would be read as the start of the next response.
    const auto after = c.Roundtrip(Get("/items/next"));
    EXPECT_EQ(after.result_int(), 200);
    EXPECT_EQ(json::parse(after.body()).at("id"), "next");
}

TEST_F(ServerTest, HeadOfAnErrorHasNoBodyEither) {
    Client c(server_->Port());
    c.Send(Get("/nope", bhttp::verb::head));
    auto head = c.ReadHead();
    EXPECT_EQ(head.result_int(), 404);
    EXPECT_NE(head[bhttp::field::content_length], "0");
    EXPECT_EQ(c.Roundtrip(Get("/hello")).result_int(), 200);
}

// --- framing (RFC 9112) ----------------------------------------------------------------------

// Smuggle sends a POST to /echo with `framing` header lines and a body that is itself a complete
// request: whatever the server does, that second request must never be answered.
std::string Smuggle(const std::string& framing, const std::string& version = "1.1") {
    return "POST /echo HTTP/" + version + "\r\nHost: x\r\n" + framing +
           "\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
}

// StatusOf sends `raw` on a new connection and returns the status of the answer.
int StatusOf(unsigned short port, const std::string& raw) {
    Client c(port);
    c.WriteRaw(raw);
    return c.Read().result_int();
}

TEST_F(ServerTest, UnknownTransferCodingsAre400AndCloseTheConnection) {
    for (const std::string te :
         {"xchunked", "identity", "chunked, identity", "chunked;ext=1", "CHUNKED , gzip", ","}) {
        Client c(server_->Port());
        c.WriteRaw(Smuggle("Transfer-Encoding: " + te));
        const auto res = c.Read();
        EXPECT_EQ(res.result_int(), 400) << te;
        EXPECT_FALSE(res.keep_alive()) << te;
        EXPECT_THAT(json::parse(res.body()).at("error").get<std::string>(),
                    HasSubstr("Transfer-Encoding"))
            << te;
        // The body was not taken for a request: the connection ends after the 400.
        EXPECT_TRUE(IsClosed(c.ReadError())) << te;
    }
    // The codings of several Transfer-Encoding lines count together, in order.
    Client c(server_->Port());
    c.WriteRaw(Smuggle("Transfer-Encoding: chunked\r\nTransfer-Encoding: identity"));
    EXPECT_EQ(c.Read().result_int(), 400);
    EXPECT_TRUE(IsClosed(c.ReadError()));
}

TEST_F(ServerTest, ACodingBeforeChunkedIsRefusedToo) {
    Client c(server_->Port());
    c.WriteRaw(
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, "
        "chunked\r\n\r\n3\r\nabc\r\n0\r\n"
        "\r\n");
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 400);
    EXPECT_THAT(json::parse(res.body()).at("error").get<std::string>(), HasSubstr("gzip"));
    EXPECT_FALSE(res.keep_alive());
    EXPECT_TRUE(IsClosed(c.ReadError()));
}

TEST_F(ServerTest, TransferEncodingInHttp10AndBesideContentLengthIs400) {
    {
        Client c(server_->Port());
        c.WriteRaw(Smuggle("Transfer-Encoding: chunked", "1.0"));
        EXPECT_EQ(c.Read().result_int(), 400);
        EXPECT_TRUE(IsClosed(c.ReadError()));
    }
    for (const std::string framing : {"Content-Length: 5\r\nTransfer-Encoding: chunked",
                                      "Transfer-Encoding: chunked\r\nContent-Length: 5",
                                      "Transfer-Encoding: xchunked\r\nContent-Length: 5"}) {
        Client c(server_->Port());
        c.WriteRaw(Smuggle(framing));
        EXPECT_EQ(c.Read().result_int(), 400) << framing;
        EXPECT_TRUE(IsClosed(c.ReadError())) << framing;
    }
}

TEST_F(ServerTest, ChunkedAloneStillWorksAndKeepsTheConnection) {
    Client c(server_->Port());
    c.WriteRaw(
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:  Chunked \r\n\r\n3\r\nabc\r\n0\r\n"
        "\r\n");
    auto res = c.Read();
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), "abc");
    EXPECT_TRUE(res.keep_alive());
    EXPECT_EQ(c.Roundtrip(Get("/hello")).result_int(), 200);
}

TEST_F(ServerTest, Http11WithoutHostOrWithTwoIs400) {
    {
        Client c(server_->Port());
        c.WriteRaw("GET /hello HTTP/1.1\r\n\r\n");
        const auto res = c.Read();
        EXPECT_EQ(res.result_int(), 400);
        EXPECT_EQ(json::parse(res.body()).at("error"), "Missing Host header");
        EXPECT_TRUE(IsClosed(c.ReadError()));
    }
    EXPECT_EQ(StatusOf(server_->Port(), "GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400);
    // HTTP/1.0 needs none; an empty Host is allowed.
    EXPECT_EQ(StatusOf(server_->Port(), "GET /hello HTTP/1.0\r\n\r\n"), 200);
    EXPECT_EQ(StatusOf(server_->Port(), "GET /hello HTTP/1.1\r\nHost:\r\n\r\n"), 200);
}

// --- gates: answered before the body ---------------------------------------------------------

TEST_F(ServerTest, AGateRefusesFromTheHeaderWithoutReadingTheBody) {
    Client c(server_->Port());
    // Only the header is sent: the 401 must come without the server waiting for the body.
    c.WriteRaw("POST /gated HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 401);
    EXPECT_FALSE(res.keep_alive());  // a body was announced and is not read
    EXPECT_TRUE(IsClosed(c.ReadError()));
    EXPECT_EQ(gate_calls_.load(), 1);
    EXPECT_EQ(gated_calls_.load(), 0);
}

TEST_F(ServerTest, AGateRefusalGetsNo100Continue) {
    Client c(server_->Port());
    c.WriteRaw(
        "POST /gated HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n");
    // The first thing back is the final 401, not 100 Continue.
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 401);
    EXPECT_TRUE(IsClosed(c.ReadError()));
}

TEST_F(ServerTest, APassedGateGets100ContinueThenTheHandlerGetsTheBody) {
    Client c(server_->Port());
    c.WriteRaw(
        "POST /gated HTTP/1.1\r\nHost: x\r\nX-Key: good\r\nContent-Length: 5\r\nExpect: "
        "100-continue\r\n\r\n");
    EXPECT_EQ(c.ReadInterim().result_int(), 100);
    c.WriteRaw("hello");
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 200);
    const json body = json::parse(res.body());
    EXPECT_EQ(body.at("who"), "caller-1");
    EXPECT_EQ(body.at("body"), "hello");
    EXPECT_TRUE(res.keep_alive());
    EXPECT_EQ(gated_calls_.load(), 1);
}

TEST_F(ServerTest, AGateRefusalWithoutABodyKeepsTheConnection) {
    Client c(server_->Port());
    c.WriteRaw("POST /gated HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    const auto res = c.Read();
    EXPECT_EQ(res.result_int(), 401);
    EXPECT_TRUE(res.keep_alive());
    EXPECT_EQ(c.Roundtrip(Get("/hello")).result_int(), 200);
}

TEST_F(ServerTest, TheGateComesBeforeTheSizeLimit) {
    // Check order: route, gate (the key), then the size of the body.
    Client c(server_->Port());
    c.WriteRaw("POST /gated HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n");
    EXPECT_EQ(c.Read().result_int(), 401);
    Client d(server_->Port());
    d.WriteRaw("POST /gated HTTP/1.1\r\nHost: x\r\nX-Key: good\r\nContent-Length: 5000\r\n\r\n");
    EXPECT_EQ(d.Read().result_int(), 413);
    EXPECT_EQ(gate_calls_.load(), 2);
    EXPECT_EQ(gated_calls_.load(), 0);
}

// --- caps: connections and body memory -------------------------------------------------------

TEST_F(ServerTest, ConnectionsPastTheCapAre503WithRetryAfter) {
    StartServer(5000ms, [](ServerOptions& o) { o.max_connections = 2; });
    auto a = std::make_unique<Client>(server_->Port());
    Client b(server_->Port());
    EXPECT_EQ(a->Roundtrip(Get("/hello")).result_int(), 200);
    EXPECT_EQ(b.Roundtrip(Get("/hello")).result_int(), 200);
    {
        Client c(server_->Port());
        c.WriteRaw("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto res = c.Read();
        EXPECT_EQ(res.result_int(), 503);
        EXPECT_EQ(res[bhttp::field::retry_after], "1");
        EXPECT_FALSE(res.keep_alive());
        EXPECT_THAT(json::parse(res.body()).at("error").get<std::string>(),
                    HasSubstr("too many open connections"));
        EXPECT_TRUE(IsClosed(c.ReadError()));
    }
    EXPECT_GE(server_->Refusals(), 1u);
    EXPECT_EQ(server_->Connections(), 2);
    a.reset();  // a place frees up
    EXPECT_TRUE(WaitFor([&] { return server_->Connections() == 1; }));
    Client d(server_->Port());
    EXPECT_EQ(d.Roundtrip(Get("/hello")).result_int(), 200);
}

TEST_F(ServerTest, BodiesPastTheBodyMemoryAre503WithRetryAfter) {
    StartServer(5000ms, [](ServerOptions& o) { o.max_body_memory = 1500; });
    // A holds 1000 bytes of body memory while its body trickles in.
    Client a(server_->Port());
    a.WriteRaw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc");
    EXPECT_TRUE(WaitFor([&] { return server_->BodyMemory() == 1000; }));
    {
        // B's 1000 do not fit beside them: 503 from the header, nothing read.
        Client b(server_->Port());
        b.WriteRaw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
        const auto res = b.Read();
        EXPECT_EQ(res.result_int(), 503);
        EXPECT_EQ(res[bhttp::field::retry_after], "1");
        EXPECT_TRUE(IsClosed(b.ReadError()));
        // 400 do.
        Client small(server_->Port());
        auto req = Get("/echo", bhttp::verb::post);
        req.body() = std::string(400, 's');
        EXPECT_EQ(small.Roundtrip(req).result_int(), 200);
    }
    {
        // A chunked body is counted as it grows, and refused once it passes what is left.
        Client b(server_->Port());
        b.WriteRaw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
        b.WriteRaw("3e8\r\n" + std::string(1000, 'c') + "\r\n");
        const auto res = b.Read();
        EXPECT_EQ(res.result_int(), 503);
        EXPECT_TRUE(IsClosed(b.ReadError()));
    }
    a.WriteRaw(std::string(997, 'd'));
    const auto res = a.Read();
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body().size(), 1000u);
    EXPECT_TRUE(WaitFor([&] { return server_->BodyMemory() == 0; }));
}

// --- access log lines of requests that could not be read -------------------------------------

TEST_F(ServerTest, RequestsThatCannotBeReadWriteAnAccessLineToo) {
    {
        Client c(server_->Port());
        auto req = Get("/hello");
        req.set("X-Big", std::string(3000, 'h'));
        c.Send(req);
        EXPECT_EQ(c.Read().result_int(), 431);
    }
    EXPECT_EQ(StatusOf(server_->Port(),
                       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"),
              413);
    EXPECT_EQ(StatusOf(server_->Port(), "THIS IS NOT HTTP\r\n\r\n"), 400);
    EXPECT_EQ(StatusOf(server_->Port(), Smuggle("Transfer-Encoding: xchunked")), 400);
    server_->Shutdown(2000ms);
    std::map<int, int> statuses;
    for (const auto& line : Sink()->Lines()) {
        const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!j.is_object() || j.value("logger", "") != "access") continue;
        ++statuses[j.at("status").get<int>()];
        EXPECT_TRUE(j.at("method").is_string());
        EXPECT_TRUE(j.at("path").is_string());
    }
    EXPECT_EQ(statuses[431], 1);
    EXPECT_EQ(statuses[413], 1);
    EXPECT_EQ(statuses[400], 2);
}

// --- access log and metrics ----------------------------------------------------------------

TEST_F(ServerTest, WritesOneJsonAccessLinePerRequest) {
    {
        Client c(server_->Port());
        auto req = Get("/items/7?x=1");
        req.set("X-Request-Id", "rid-access-1");
        EXPECT_EQ(c.Roundtrip(req).result_int(), 200);
    }
    server_->Shutdown(2000ms);
    int found = 0;
    for (const auto& line : Sink()->Lines()) {
        if (line.find("rid-access-1") == std::string::npos) continue;
        const json j = json::parse(line);
        if (j.value("logger", "") != "access") continue;
        ++found;
        EXPECT_EQ(j.at("method"), "GET");
        EXPECT_EQ(j.at("path"), "/items/7");
        EXPECT_EQ(j.at("status"), 200);
        EXPECT_EQ(j.at("request_id"), "rid-access-1");
        EXPECT_TRUE(j.at("duration_ms").is_number());
        EXPECT_EQ(j.at("remote"), "127.0.0.1");
        EXPECT_TRUE(j.contains("org"));
    }
    EXPECT_EQ(found, 1);
}

TEST_F(ServerTest, AccessLineOfAHostilePathIsStillJson) {
    Client c(server_->Port());
    c.WriteRaw("GET /a\"b\\c HTTP/1.1\r\nHost: x\r\nX-Request-Id: rid-hostile\r\n\r\n");
    EXPECT_EQ(c.Read().result_int(), 404);
    server_->Shutdown(2000ms);
    int found = 0;
    for (const auto& line : Sink()->Lines()) {
        if (line.find("rid-hostile") == std::string::npos) continue;
        const json j = json::parse(line);
        if (j.value("logger", "") != "access") continue;
        ++found;
        EXPECT_EQ(j.at("path"), "/a\"b\\c");
    }
    EXPECT_EQ(found, 1);
}

TEST_F(ServerTest, CountsRequestsInMetrics) {
    {
        Client c(server_->Port());
        c.Roundtrip(Get("/items/1"));
        c.Roundtrip(Get("/items/2"));
        c.Roundtrip(Get("/nope"));
        c.Roundtrip(Get("/hello", bhttp::verb::put));
    }
    {
        Client c(server_->Port());
        c.WriteRaw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n");
        c.Read();
    }
    server_->Shutdown(2000ms);
    const std::string text = metrics_.Render({});
    EXPECT_THAT(
        text,
        HasSubstr(
            R"(genhost_http_requests_total{route="/items/{id}",method="GET",status="200"} 2)"));
    EXPECT_THAT(
        text,
        HasSubstr(R"(genhost_http_requests_total{route="unmatched",method="GET",status="404"} 1)"));
    EXPECT_THAT(
        text,
        HasSubstr(R"(genhost_http_requests_total{route="/hello",method="PUT",status="405"} 1)"));
    EXPECT_THAT(
        text,
        HasSubstr(R"(genhost_http_requests_total{route="/echo",method="POST",status="413"} 1)"));
}

// --- shutdown ------------------------------------------------------------------------------

TEST_F(ServerTest, ShutdownLetsAnInFlightRequestFinish) {
    Client busy(server_->Port());
    Client idle(server_->Port());
    EXPECT_EQ(idle.Roundtrip(Get("/hello")).result_int(), 200);

    busy.Send(Get("/slow"));
    ASSERT_TRUE(WaitFor([&] { return slow_started_.load() && server_->InFlight() == 1; }));

    auto stopped = std::async(std::launch::async, [&] { server_->Shutdown(5000ms); });

    const auto res = busy.Read();
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(json::parse(res.body()), (json{{"slow", true}}));
    EXPECT_FALSE(res.keep_alive());  // Connection: close while draining
    EXPECT_TRUE(slow_finished_);
    EXPECT_TRUE(IsClosed(busy.ReadError()));
    EXPECT_TRUE(IsClosed(idle.ReadError()));  // the idle keep-alive connection was closed

    ASSERT_EQ(stopped.wait_for(3s), std::future_status::ready);
    stopped.get();
    EXPECT_EQ(server_->InFlight(), 0);
}

TEST_F(ServerTest, ShutdownStopsAccepting) {
    const unsigned short port = server_->Port();
    server_->Shutdown(1000ms);
    asio::io_context io;
    tcp::socket s(io);
    beast::error_code ec;
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
    EXPECT_TRUE(ec) << "connected after Shutdown";
}

TEST_F(ServerTest, ShutdownWithOnlyIdleConnectionsIsQuick) {
    Client idle(server_->Port());
    EXPECT_EQ(idle.Roundtrip(Get("/hello")).result_int(), 200);
    const auto started = std::chrono::steady_clock::now();
    server_->Shutdown(5000ms);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
    EXPECT_TRUE(IsClosed(idle.ReadError()));
}

TEST_F(ServerTest, ShutdownTwiceIsSafe) {
    server_->Shutdown(100ms);
    server_->Shutdown(100ms);
    server_.reset();
}

TEST(ServerListen, PortZeroPicksAFreePortAndTwoServersCoexist) {
    Router router;
    Metrics metrics;
    ServerOptions options;
    options.port = 0;
    options.io_threads = 1;
    Server a(options, router, metrics);
    Server b(options, router, metrics);
    a.Listen();
    b.Listen();
    EXPECT_NE(a.Port(), 0);
    EXPECT_NE(b.Port(), 0);
    EXPECT_NE(a.Port(), b.Port());
}

TEST(ServerListen, BusyPortThrows) {
    Router router;
    Metrics metrics;
    ServerOptions options;
    options.port = 0;
    options.io_threads = 1;
    Server a(options, router, metrics);
    a.Listen();
    options.port = a.Port();
    Server b(options, router, metrics);
    EXPECT_ANY_THROW(b.Listen());
}

// --- a unix-domain socket instead of host and port ------------------------------------------

// UnixExchange sends `request` over a new connection to the unix-domain socket at `path` and
// returns everything the server sent until it closed the connection ("" when it cannot connect).
sockaddr_un UnixAddress(const std::string& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
    return address;
}

std::string UnixExchange(const std::string& path, const std::string& request) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address = UnixAddress(path);
    std::string out;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size())) {
        char buf[4096];
        for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, n);
    }
    ::close(fd);
    return out;
}

std::string UnixPath() { return "/tmp/genhost-test-" + NewUuid().substr(0, 8) + ".sock"; }

TEST(ServerUnixSocket, AnswersOverTheSocketAndRemovesItAtShutdown) {
    Router router;
    router.Add("GET", "/hello", [](Request& req) -> asio::awaitable<Response> {
        co_return Response::Json(200, {{"hello", "world"}, {"remote", req.remote_address}});
    });
    Metrics metrics;
    ServerOptions options;
    options.unix_path = UnixPath();
    options.io_threads = 2;
    Server server(options, router, metrics);
    server.Listen();
    EXPECT_EQ(server.Port(), 0);
    server.Start();
    for (int i = 0; i < 2; ++i) {
        const std::string response =
            UnixExchange(options.unix_path,
                         "GET /hello HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
        EXPECT_THAT(response, HasSubstr("X-Request-Id: "));
        EXPECT_THAT(response, HasSubstr(R"({"hello":"world","remote":""})"));
    }
    const std::string missing = UnixExchange(
        options.unix_path, "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(missing.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << missing;
    server.Shutdown(1000ms);
    struct stat st {};
    EXPECT_NE(::lstat(options.unix_path.c_str(), &st), 0) << "the socket file is left behind";
}

TEST(ServerUnixSocket, ReplacesAStaleSocketFileButNoOtherFile) {
    Router router;
    Metrics metrics;
    ServerOptions options;
    options.unix_path = UnixPath();
    options.io_threads = 1;
    {
        // A socket file whose server is gone, as a crash leaves it.
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un address = UnixAddress(options.unix_path);
        ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
        ::close(fd);
    }
    {
        Server server(options, router, metrics);
        EXPECT_NO_THROW(server.Listen());
    }
    ::unlink(options.unix_path.c_str());
    { std::ofstream(options.unix_path) << "not a socket"; }
    Server server(options, router, metrics);
    EXPECT_ANY_THROW(server.Listen());
    std::ifstream kept(options.unix_path);
    std::string text;
    std::getline(kept, text);
    EXPECT_EQ(text, "not a socket");
    ::unlink(options.unix_path.c_str());
}

}  // namespace
}  // namespace genhost::http
