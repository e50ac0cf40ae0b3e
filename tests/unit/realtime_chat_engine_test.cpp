// The OpenAI-compatible conversation engine (MakeChatCompletionsEngine) against a fake endpoint in
// this file: a loopback HTTP(S) server on its own thread that records each request and answers a
// scripted response, piece by piece with delays between the pieces.
//
// - Streaming: content deltas reach on_text in order and as they arrive (a piece sent 300 ms
//   after the first arrives about 300 ms later, before the response ends); CRLF line endings,
//   comments, events split across reads, a body ending at the connection's close, a server that
//   ignores `stream` and answers one JSON completion.
// - The request: POST {base}/chat/completions, model, stream, temperature, max_tokens, the system
//   message (avatar, personality, speaking style, the knowledge the search callback found for the
//   last utterance, with document names; none when it finds nothing), the history mapped (user,
//   assistant with tool calls, one tool message per result or error), the tools as functions with
//   their JSON Schema; Authorization only with an api key.
// - Tool calls: one split across many deltas, two in parallel with interleaved deltas, arguments
//   that do not parse (the call stays, with no arguments), a call without an id.
// - Failures as Reply::error, never exceptions: a 500 (status and body start), connection
//   refused, a server that never answers and one that stalls mid-stream (within the timeout, the
//   partial text kept), a malformed event, an error event, a URL that is not http(s).
// - Cancel during a slow stream returns within 100 ms with the partial text and closes the
//   connection.
// - TLS: a server whose self-signed certificate is trusted (SSL_CERT_FILE) answers, with SNI; the
//   same server untrusted, or reached by a name its certificate does not hold, is refused.
#include "genhost/realtime/engine.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace genhost::realtime {
namespace {

using nlohmann::json;
using testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

long long Since(Clock::time_point start, Clock::time_point t) {
    return std::chrono::duration_cast<milliseconds>(t - start).count();
}

// ---- A self-signed certificate for the TLS tests --------------------------------------------

struct Certificate {
    std::string cert_pem;
    std::string key_pem;
};

std::string BioText(BIO* bio) {
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<std::size_t>(size));
}

// SelfSigned makes a P-256 certificate for the DNS name `host` (CA:TRUE, so it can be its own
// trust anchor).
Certificate SelfSigned(const std::string& host) {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 42);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(host.c_str()), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
    const std::string san = "DNS:" + host;
    const std::pair<int, std::string> extensions[] = {
        {NID_basic_constraints, "critical,CA:TRUE"},
        {NID_subject_key_identifier, "hash"},
        {NID_subject_alt_name, san},
    };
    for (const auto& [nid, value] : extensions) {
        X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
        X509_add_ext(cert, ext, -1);
        X509_EXTENSION_free(ext);
    }
    X509_sign(cert, key, EVP_sha256());
    Certificate out;
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, cert);
    out.cert_pem = BioText(bio);
    BIO_free(bio);
    bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
    out.key_pem = BioText(bio);
    BIO_free(bio);
    X509_free(cert);
    EVP_PKEY_free(key);
    return out;
}

// ---- The fake endpoint ------------------------------------------------------------------------

struct Piece {
    int delay_ms = 0;  // before this piece is written
    std::string bytes;
};

// Script is one response: the status line and headers, then the body's pieces.
struct Script {
    std::string status = "200 OK";
    std::string content_type = "text/event-stream";
    enum class Framing { kChunked, kUntilClose, kLength } framing = Framing::kChunked;
    std::vector<Piece> pieces;
    bool answer = true;     // false: read the request and never answer
    int hold_ms = 0;        // keep the connection open this long after the last piece
    bool truncate = false;  // chunked: close without the last (empty) chunk
};

struct Recorded {
    std::string method;
    std::string target;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
    std::string sni;

    json Json() const { return json::parse(body); }
};

class FakeEndpoint {
  public:
    explicit FakeEndpoint(const Certificate* tls = nullptr) {
        if (tls != nullptr) {
            ctx_ = SSL_CTX_new(TLS_server_method());
            BIO* bio =
                BIO_new_mem_buf(tls->cert_pem.data(), static_cast<int>(tls->cert_pem.size()));
            X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
            BIO_free(bio);
            bio = BIO_new_mem_buf(tls->key_pem.data(), static_cast<int>(tls->key_pem.size()));
            EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
            BIO_free(bio);
            SSL_CTX_use_certificate(ctx_, cert);
            SSL_CTX_use_PrivateKey(ctx_, key);
            X509_free(cert);
            EVP_PKEY_free(key);
        }
        listener_ = socket(AF_INET, SOCK_STREAM, 0);
        const int one = 1;
        setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        if (bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            listen(listener_, 8) != 0) {
            ADD_FAILURE() << "cannot listen on the loopback interface";
        }
        socklen_t len = sizeof addr;
        getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { Loop(); });
    }

    ~FakeEndpoint() {
        stop_ = true;
        thread_.join();
        close(listener_);
        if (ctx_ != nullptr) SSL_CTX_free(ctx_);
    }

    FakeEndpoint(const FakeEndpoint&) = delete;
    FakeEndpoint& operator=(const FakeEndpoint&) = delete;

    int port() const { return port_; }
    std::string Base(const std::string& host = "127.0.0.1") const {
        return std::string(ctx_ != nullptr ? "https://" : "http://") + host + ":" +
               std::to_string(port_) + "/v1";
    }

    // Serve queues the response of the next connection.
    void Serve(Script script) {
        std::lock_guard lock(mutex_);
        scripts_.push_back(std::move(script));
    }

    std::vector<Recorded> Requests() const {
        std::lock_guard lock(mutex_);
        return requests_;
    }

    // ClientClosed reports whether a client closed its connection while a response was pending.
    bool ClientClosed() const { return client_closed_; }
    Clock::time_point ClientClosedAt() const {
        std::lock_guard lock(mutex_);
        return client_closed_at_;
    }

  private:
    struct Conn {
        int fd = -1;
        SSL* ssl = nullptr;

        long Read(char* buf, int size) {
            if (ssl != nullptr) return SSL_read(ssl, buf, size);
            return recv(fd, buf, static_cast<std::size_t>(size), 0);
        }
        bool Write(std::string_view data) {
            while (!data.empty()) {
                long n = ssl != nullptr ? SSL_write(ssl, data.data(), static_cast<int>(data.size()))
                                        : send(fd, data.data(), data.size(), MSG_NOSIGNAL);
                if (n <= 0) return false;
                data.remove_prefix(static_cast<std::size_t>(n));
            }
            return true;
        }
        // Closed reports whether the peer closed the connection (without consuming data).
        bool Closed() const {
            pollfd p{fd, POLLIN, 0};
            if (poll(&p, 1, 0) <= 0) return false;
            char c;
            return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0 ||
                   (p.revents & (POLLHUP | POLLERR)) != 0;
        }
    };

    void Loop() {
        while (!stop_) {
            pollfd p{listener_, POLLIN, 0};
            if (poll(&p, 1, 10) <= 0) continue;
            const int fd = accept(listener_, nullptr, nullptr);
            if (fd < 0) continue;
            timeval tv{5, 0};
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
            Conn conn{fd, nullptr};
            Recorded request;
            bool ok = true;
            if (ctx_ != nullptr) {
                conn.ssl = SSL_new(ctx_);
                SSL_set_fd(conn.ssl, fd);
                ok = SSL_accept(conn.ssl) == 1;
                if (ok) {
                    const char* sni = SSL_get_servername(conn.ssl, TLSEXT_NAMETYPE_host_name);
                    request.sni = sni != nullptr ? sni : "";
                }
                ERR_clear_error();
            }
            if (ok && ReadRequest(conn, request)) {
                Script script;
                {
                    std::lock_guard lock(mutex_);
                    requests_.push_back(request);
                    if (!scripts_.empty()) {
                        script = std::move(scripts_.front());
                        scripts_.pop_front();
                    }
                }
                Answer(conn, script);
            }
            if (conn.ssl != nullptr) SSL_free(conn.ssl);
            close(fd);
        }
    }

    static bool ReadRequest(Conn& conn, Recorded& out) {
        std::string data;
        char buf[4096];
        std::size_t header_end;
        while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
            const long n = conn.Read(buf, sizeof buf);
            if (n <= 0) return false;
            data.append(buf, static_cast<std::size_t>(n));
        }
        const std::string head = data.substr(0, header_end);
        std::size_t pos = head.find("\r\n");
        const std::string request_line = head.substr(0, pos);
        const auto sp1 = request_line.find(' ');
        const auto sp2 = request_line.find(' ', sp1 + 1);
        out.method = request_line.substr(0, sp1);
        out.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
        while (pos != std::string::npos && pos < head.size()) {
            const auto next = head.find("\r\n", pos + 2);
            const std::string line = head.substr(
                pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
            const auto colon = line.find(':');
            if (colon != std::string::npos) {
                std::string name = line.substr(0, colon);
                std::transform(name.begin(), name.end(), name.begin(),
                               [](unsigned char c) { return std::tolower(c); });
                std::string value = line.substr(colon + 1);
                value.erase(0, value.find_first_not_of(' '));
                out.headers[name] = value;
            }
            pos = next;
        }
        const std::size_t length = out.headers.count("content-length") != 0
                                       ? std::stoul(out.headers["content-length"])
                                       : 0;
        out.body = data.substr(header_end + 4);
        while (out.body.size() < length) {
            const long n = conn.Read(buf, sizeof buf);
            if (n <= 0) return false;
            out.body.append(buf, static_cast<std::size_t>(n));
        }
        return true;
    }

    // Wait sleeps `ms` in slices; false when the endpoint stops or the client closed.
    bool Wait(const Conn& conn, int ms) {
        const auto until = Clock::now() + milliseconds(ms);
        while (true) {
            if (stop_) return false;
            if (conn.Closed()) {
                NoteClientClosed();
                return false;
            }
            if (Clock::now() >= until) return true;
            std::this_thread::sleep_for(milliseconds(2));
        }
    }

    void NoteClientClosed() {
        std::lock_guard lock(mutex_);
        if (!client_closed_) client_closed_at_ = Clock::now();
        client_closed_ = true;
    }

    void Answer(Conn& conn, const Script& script) {
        if (!script.answer) {
            while (Wait(conn, 10)) {
            }
            return;
        }
        std::string head = "HTTP/1.1 " + script.status + "\r\n";
        head += "Content-Type: " + script.content_type + "\r\n";
        switch (script.framing) {
            case Script::Framing::kChunked:
                head += "Transfer-Encoding: chunked\r\n";
                break;
            case Script::Framing::kUntilClose:
                head += "Connection: close\r\n";
                break;
            case Script::Framing::kLength: {
                std::size_t length = 0;
                for (const auto& piece : script.pieces) length += piece.bytes.size();
                head += "Content-Length: " + std::to_string(length) + "\r\n";
                break;
            }
        }
        head += "\r\n";
        if (!conn.Write(head)) return;
        for (const auto& piece : script.pieces) {
            if (piece.delay_ms > 0 && !Wait(conn, piece.delay_ms)) return;
            std::string bytes = piece.bytes;
            if (script.framing == Script::Framing::kChunked) {
                char size[32];
                std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
                bytes = size + bytes + "\r\n";
            }
            if (!conn.Write(bytes)) {
                NoteClientClosed();
                return;
            }
        }
        if (script.truncate) return;
        if (script.framing == Script::Framing::kChunked && !conn.Write("0\r\n\r\n")) return;
        if (script.hold_ms > 0) Wait(conn, script.hold_ms);
    }

    SSL_CTX* ctx_ = nullptr;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    mutable std::mutex mutex_;
    std::deque<Script> scripts_;
    std::vector<Recorded> requests_;
    std::atomic<bool> client_closed_{false};
    Clock::time_point client_closed_at_;
};

// ---- Stream pieces ------------------------------------------------------------------------------

std::string Event(const json& chunk) { return "data: " + chunk.dump() + "\n\n"; }

json Chunk(const json& delta, const json& finish = nullptr) {
    return {{"id", "chatcmpl-1"},
            {"object", "chat.completion.chunk"},
            {"model", "m"},
            {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}};
}

std::string Text(const std::string& piece) { return Event(Chunk({{"content", piece}})); }

std::string Finish(const std::string& reason = "stop") {
    return Event(Chunk(json::object(), reason));
}

const std::string kDone = "data: [DONE]\n\n";

// CallDelta is one tool_calls delta: the id, type and name only when given.
std::string CallDelta(int index, const std::string& id, const std::string& name,
                      const std::string& arguments) {
    json call = {{"index", index}};
    json function = json::object();
    if (!id.empty()) {
        call["id"] = id;
        call["type"] = "function";
    }
    if (!name.empty()) function["name"] = name;
    function["arguments"] = arguments;
    call["function"] = function;
    return Event(Chunk({{"tool_calls", json::array({call})}}));
}

Script Stream(std::vector<Piece> pieces) {
    Script s;
    s.pieces = std::move(pieces);
    return s;
}

// ---- Running the engine -------------------------------------------------------------------------

struct Outcome {
    Reply reply;
    std::vector<std::string> pieces;
    std::vector<Clock::time_point> arrivals;
    Clock::time_point start;
    Clock::time_point end;

    long long ElapsedMs() const { return Since(start, end); }
};

ChatCompletionsOptions Options(const std::string& base) {
    ChatCompletionsOptions o;
    o.base_url = base;
    o.model = "test-model";
    o.timeout = milliseconds(5000);
    return o;
}

EngineContext Context() {
    EngineContext c;
    c.avatar_name = "Ada";
    c.personality = "A cheerful museum guide who loves steam engines.";
    return c;
}

std::vector<Turn> Hello() {
    Turn t;
    t.role = Turn::Role::kUser;
    t.text = "Hello there";
    return {t};
}

Outcome Respond(Engine& engine, const EngineContext& context, const std::vector<Turn>& history,
                const std::atomic<bool>& cancel) {
    Outcome run;
    run.start = Clock::now();
    auto on_text = [&](std::string_view piece) {
        run.pieces.emplace_back(piece);
        run.arrivals.push_back(Clock::now());
    };
    EXPECT_NO_THROW(run.reply = engine.Respond(context, history, on_text, cancel));
    run.end = Clock::now();
    return run;
}

Outcome Respond(const ChatCompletionsOptions& options, const EngineContext& context = Context(),
                const std::vector<Turn>& history = Hello()) {
    auto engine = MakeChatCompletionsEngine(options);
    std::atomic<bool> cancel{false};
    return Respond(*engine, context, history, cancel);
}

// ---- Streaming -------------------------------------------------------------------------------

TEST(ChatEngine, StreamsTextPiecesAsTheyArrive) {
    FakeEndpoint server;
    server.Serve(Stream({{0, Text("Hello")},
                         {0, Text(", I am")},
                         {300, Text(" Ada.")},
                         {200, Finish()},
                         {0, kDone}}));
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_EQ(run.reply.error, "");
    EXPECT_EQ(run.reply.text, "Hello, I am Ada.");
    EXPECT_TRUE(run.reply.tool_calls.empty());
    ASSERT_THAT(run.pieces, testing::ElementsAre("Hello", ", I am", " Ada."));
    // The third piece was sent 300 ms after the first two and arrived about that much later; the
    // response ended 200 ms after it.
    const auto gap = Since(run.arrivals[1], run.arrivals[2]);
    EXPECT_GE(gap, 250);
    EXPECT_LE(gap, 600);
    EXPECT_GE(Since(run.arrivals[0], run.end), 450);
    EXPECT_GE(Since(run.arrivals[2], run.end), 150);
}

TEST(ChatEngine, ToleratesCrLfCommentsAndEventsSplitAcrossReads) {
    FakeEndpoint server;
    const std::string first = "data: " + Chunk({{"content", "Split "}}).dump() + "\r\n\r\n";
    const std::string second = "data: " + Chunk({{"content", "event"}}).dump() + "\r\n\r\n";
    server.Serve(Stream({
        {0, ": keep-alive comment\r\n\r\n"},
        {0, "event: message\r\nid: 1\r\n" + first.substr(0, 20)},
        {30, first.substr(20, 15)},
        {30, first.substr(35) + second.substr(0, second.size() - 3)},
        {30, second.substr(second.size() - 3)},
        {30, "retry: 1000\r\n\r\ndata:" + Chunk({{"content", "!"}}).dump() + "\r\n"},
        {30, "\r\ndata: [DO"},
        {30, "NE]\r\n\r\n"},
    }));
    // A trailing '/' on the base is not doubled.
    const Outcome run = Respond(Options(server.Base() + "/"));
    EXPECT_EQ(run.reply.error, "");
    EXPECT_EQ(run.reply.text, "Split event!");
    EXPECT_THAT(run.pieces, testing::ElementsAre("Split ", "event", "!"));
    ASSERT_EQ(server.Requests().size(), 1u);
    EXPECT_EQ(server.Requests()[0].target, "/v1/chat/completions");
}

TEST(ChatEngine, ReadsABodyThatEndsWithTheConnectionAndNoDone) {
    FakeEndpoint server;
    Script script = Stream({{0, Text("Until ")}, {20, Text("close")}, {0, Finish()}});
    script.framing = Script::Framing::kUntilClose;
    server.Serve(script);
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_EQ(run.reply.error, "");
    EXPECT_EQ(run.reply.text, "Until close");
}

TEST(ChatEngine, ReadsAServerThatIgnoresStreamAndAnswersOneCompletion) {
    FakeEndpoint server;
    Script script;
    script.content_type = "application/json";
    script.framing = Script::Framing::kLength;
    const json completion = {
        {"id", "chatcmpl-9"},
        {"object", "chat.completion"},
        {"choices",
         {{{"index", 0},
           {"message",
            {{"role", "assistant"},
             {"content", "All at once."},
             {"tool_calls",
              {{{"id", "call_w"},
                {"type", "function"},
                {"function", {{"name", "weather"}, {"arguments", R"({"city":"Rome"})"}}}}}}}},
           {"finish_reason", "tool_calls"}}}}};
    script.pieces = {{0, completion.dump()}};
    server.Serve(script);
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_EQ(run.reply.error, "");
    EXPECT_EQ(run.reply.text, "All at once.");
    EXPECT_THAT(run.pieces, testing::ElementsAre("All at once."));
    ASSERT_EQ(run.reply.tool_calls.size(), 1u);
    EXPECT_EQ(run.reply.tool_calls[0].id, "call_w");
    EXPECT_EQ(run.reply.tool_calls[0].name, "weather");
    EXPECT_EQ(run.reply.tool_calls[0].arguments, json({{"city", "Rome"}}));
}

// ---- The request -----------------------------------------------------------------------------

TEST(ChatEngine, SendsTheRequestTheEndpointExpects) {
    FakeEndpoint server;
    server.Serve(Stream({{0, Text("Sure.")}, {0, Finish()}, {0, kDone}}));

    EngineContext context = Context();
    context.tools = ToolSpecs(json::parse(R"([
      {"type": "backend_rpc", "name": "lookup", "description": "Looks a city up.",
       "parameters": [
         {"type": "string", "name": "city", "description": "The city.", "enum": ["Paris", "Rome"]},
         {"type": "array", "name": "tags", "description": "Tags.", "items": {"type": "string"},
          "required": false}
       ]},
      {"type": "client_event", "name": "show_slide", "description": "Shows a slide."}
    ])"));
    std::vector<std::pair<std::string, int>> searches;
    context.search = [&](const std::string& query, int limit) {
        searches.emplace_back(query, limit);
        return std::vector<Knowledge>{
            {"Opening hours.pdf", "Summer", "Open from 9 to 18 every day."},
            {"Engines.md", "", "The Rocket was built in 1829."}};
    };

    std::vector<Turn> history(5);
    history[0].role = Turn::Role::kUser;
    history[0].text = "What is the weather in Rome?";
    history[1].role = Turn::Role::kAssistant;
    history[1].text = "Let me check.";
    history[1].tool_calls = {{"call_1", "lookup", {{"city", "Rome"}}},
                             {"call_2", "show_slide", json::object()}};
    history[2].role = Turn::Role::kTool;
    history[2].tool_results = {{"call_1", "lookup", {{"temp", 21}}, std::nullopt, 12},
                               {"call_2", "show_slide", nullptr, "timed out", 4000}};
    history[3].role = Turn::Role::kAssistant;
    history[3].text = "It is 21 degrees.";
    history[4].role = Turn::Role::kUser;
    history[4].text = "When does the museum open?";

    ChatCompletionsOptions options = Options(server.Base());
    options.temperature = 0.25;
    options.max_tokens = 123;
    const Outcome run = Respond(options, context, history);
    EXPECT_EQ(run.reply.error, "");
    EXPECT_EQ(run.reply.text, "Sure.");

    ASSERT_THAT(searches,
                testing::ElementsAre(std::pair<std::string, int>("When does the museum open?", 4)));

    const auto requests = server.Requests();
    ASSERT_EQ(requests.size(), 1u);
    const Recorded& request = requests[0];
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.target, "/v1/chat/completions");
    EXPECT_THAT(request.headers.at("content-type"), HasSubstr("application/json"));
    EXPECT_EQ(request.headers.at("host"), "127.0.0.1:" + std::to_string(server.port()));
    EXPECT_EQ(request.headers.count("authorization"), 0u);

    const json body = request.Json();
    EXPECT_EQ(body["model"], "test-model");
    EXPECT_EQ(body["stream"], true);
    EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.25);
    EXPECT_EQ(body["max_tokens"], 123);
    EXPECT_EQ(body["tool_choice"], "auto");

    const json& messages = body["messages"];
    ASSERT_EQ(messages.size(), 7u) << messages.dump(2);
    EXPECT_EQ(messages[0]["role"], "system");
    const std::string system = messages[0]["content"];
    EXPECT_THAT(system, HasSubstr("Ada"));
    EXPECT_THAT(system, HasSubstr("A cheerful museum guide who loves steam engines."));
    EXPECT_THAT(system, HasSubstr("spoken aloud"));
    EXPECT_THAT(system, HasSubstr("one to three"));
    EXPECT_THAT(system, HasSubstr("markdown"));
    EXPECT_THAT(system, HasSubstr("Opening hours.pdf"));
    EXPECT_THAT(system, HasSubstr("Summer"));
    EXPECT_THAT(system, HasSubstr("Open from 9 to 18 every day."));
    EXPECT_THAT(system, HasSubstr("Engines.md"));
    EXPECT_THAT(system, HasSubstr("The Rocket was built in 1829."));

    EXPECT_EQ(messages[1], json({{"role", "user"}, {"content", "What is the weather in Rome?"}}));
    const json assistant = {
        {"role", "assistant"},
        {"content", "Let me check."},
        {"tool_calls",
         {{{"id", "call_1"},
           {"type", "function"},
           {"function", {{"name", "lookup"}, {"arguments", R"({"city":"Rome"})"}}}},
          {{"id", "call_2"},
           {"type", "function"},
           {"function", {{"name", "show_slide"}, {"arguments", "{}"}}}}}}};
    EXPECT_EQ(messages[2], assistant);
    EXPECT_EQ(messages[3],
              json({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", R"({"temp":21})"}}));
    EXPECT_EQ(messages[4], json({{"role", "tool"},
                                 {"tool_call_id", "call_2"},
                                 {"content", R"({"error":"timed out"})"}}));
    EXPECT_EQ(messages[5], json({{"role", "assistant"}, {"content", "It is 21 degrees."}}));
    EXPECT_EQ(messages[6], json({{"role", "user"}, {"content", "When does the museum open?"}}));

    const json tools = json::parse(R"([
      {"type": "function", "function": {
        "name": "lookup", "description": "Looks a city up.",
        "parameters": {"type": "object",
          "properties": {
            "city": {"type": "string", "description": "The city.", "enum": ["Paris", "Rome"]},
            "tags": {"type": "array", "description": "Tags.", "items": {"type": "string"}}},
          "required": ["city"], "additionalProperties": false}}},
      {"type": "function", "function": {
        "name": "show_slide", "description": "Shows a slide.",
        "parameters": {"type": "object", "properties": {}, "required": [],
                       "additionalProperties": false}}}
    ])");
    EXPECT_EQ(body["tools"], tools) << body["tools"].dump(2);
}

TEST(ChatEngine, AToolOnlyAssistantTurnHasNullContent) {
    FakeEndpoint server;
    server.Serve(Stream({{0, Text("Done.")}, {0, kDone}}));
    std::vector<Turn> history(3);
    history[0].role = Turn::Role::kUser;
    history[0].text = "Show the next slide";
    history[1].role = Turn::Role::kAssistant;
    history[1].tool_calls = {{"c9", "show_slide", {{"n", 2}}}};
    history[2].role = Turn::Role::kTool;
    history[2].tool_results = {{"c9", "show_slide", "ok", std::nullopt, 1}};
    const Outcome run = Respond(Options(server.Base()), Context(), history);
    EXPECT_EQ(run.reply.error, "");
    const json messages = server.Requests().at(0).Json()["messages"];
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_TRUE(messages[2]["content"].is_null());
    EXPECT_EQ(messages[2]["tool_calls"][0]["function"]["arguments"], R"({"n":2})");
    EXPECT_EQ(messages[3]["content"], R"("ok")");
}

TEST(ChatEngine, NoToolsAndNoKnowledgeLeaveThemOut) {
    FakeEndpoint server;
    server.Serve(Stream({{0, Text("Hi.")}, {0, kDone}}));
    server.Serve(Stream({{0, Text("Hi.")}, {0, kDone}}));
    EngineContext context = Context();
    int searched = 0;
    context.search = [&](const std::string&, int) {
        ++searched;
        return std::vector<Knowledge>{};
    };
    EXPECT_EQ(Respond(Options(server.Base()), context).reply.error, "");
    EXPECT_EQ(searched, 1);
    EXPECT_EQ(Respond(Options(server.Base()), Context()).reply.error, "");  // no search at all

    const auto requests = server.Requests();
    ASSERT_EQ(requests.size(), 2u);
    for (const auto& request : requests) {
        const json body = request.Json();
        EXPECT_FALSE(body.contains("tools"));
        EXPECT_FALSE(body.contains("tool_choice"));
        ASSERT_EQ(body["messages"].size(), 2u);
        const std::string system = body["messages"][0]["content"];
        EXPECT_THAT(system, HasSubstr("Ada"));
        EXPECT_THAT(system, testing::Not(HasSubstr("Reference")));
        EXPECT_EQ(body["messages"][1], json({{"role", "user"}, {"content", "Hello there"}}));
    }
}

TEST(ChatEngine, SendsTheApiKeyAsBearerOnlyWhenSet) {
    FakeEndpoint server;
    server.Serve(Stream({{0, kDone}}));
    server.Serve(Stream({{0, kDone}}));
    ChatCompletionsOptions options = Options(server.Base());
    options.api_key = "sk-test-123";
    EXPECT_EQ(Respond(options).reply.error, "");
    options.api_key.clear();
    EXPECT_EQ(Respond(options).reply.error, "");
    const auto requests = server.Requests();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[0].headers.at("authorization"), "Bearer sk-test-123");
    EXPECT_EQ(requests[1].headers.count("authorization"), 0u);
}

// ---- Tool calls ------------------------------------------------------------------------------

TEST(ChatEngine, AssemblesAToolCallSplitAcrossDeltas) {
    FakeEndpoint server;
    server.Serve(Stream({{0, CallDelta(0, "call_abc", "lookup", "")},
                         {10, CallDelta(0, "", "", "{\"ci")},
                         {10, CallDelta(0, "", "", "ty\": \"Pa")},
                         {10, CallDelta(0, "", "", "ris\", \"tags\": [\"a\"")},
                         {10, CallDelta(0, "", "", "]}")},
                         {0, Finish("tool_calls")},
                         {0, kDone}}));
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_EQ(run.reply.error, "");
    EXPECT_EQ(run.reply.text, "");
    EXPECT_TRUE(run.pieces.empty());
    ASSERT_EQ(run.reply.tool_calls.size(), 1u);
    EXPECT_EQ(run.reply.tool_calls[0].id, "call_abc");
    EXPECT_EQ(run.reply.tool_calls[0].name, "lookup");
    EXPECT_EQ(run.reply.tool_calls[0].arguments,
              json({{"city", "Paris"}, {"tags", json::array({"a"})}}));
}

TEST(ChatEngine, AssemblesTwoParallelToolCalls) {
    FakeEndpoint server;
    server.Serve(Stream({{0, Text("One moment.")},
                         {0, CallDelta(0, "call_a", "lookup", "")},
                         {0, CallDelta(1, "call_b", "show_slide", "")},
                         {5, CallDelta(0, "", "", "{\"city\":")},
                         {5, CallDelta(1, "", "", "{\"n\":")},
                         {5, CallDelta(1, "", "", "3}")},
                         {5, CallDelta(0, "", "", "\"Rome\"}")},
                         {0, Finish("tool_calls")},
                         {0, kDone}}));
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_EQ(run.reply.error, "");
    EXPECT_EQ(run.reply.text, "One moment.");
    ASSERT_EQ(run.reply.tool_calls.size(), 2u);
    EXPECT_EQ(run.reply.tool_calls[0].id, "call_a");
    EXPECT_EQ(run.reply.tool_calls[0].name, "lookup");
    EXPECT_EQ(run.reply.tool_calls[0].arguments, json({{"city", "Rome"}}));
    EXPECT_EQ(run.reply.tool_calls[1].id, "call_b");
    EXPECT_EQ(run.reply.tool_calls[1].name, "show_slide");
    EXPECT_EQ(run.reply.tool_calls[1].arguments, json({{"n", 3}}));
}

TEST(ChatEngine, KeepsACallWhoseArgumentsDoNotParseAndNamesACallWithoutId) {
    FakeEndpoint server;
    server.Serve(Stream({{0, CallDelta(0, "call_x", "lookup", "{\"city\": ")},
                         {0, CallDelta(1, "", "show_slide", "")},
                         {0, Finish("tool_calls")},
                         {0, kDone}}));
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_EQ(run.reply.error, "");
    ASSERT_EQ(run.reply.tool_calls.size(), 2u);
    EXPECT_EQ(run.reply.tool_calls[0].id, "call_x");
    EXPECT_EQ(run.reply.tool_calls[0].arguments, json::object());
    EXPECT_EQ(run.reply.tool_calls[1].name, "show_slide");
    EXPECT_FALSE(run.reply.tool_calls[1].id.empty());
    EXPECT_NE(run.reply.tool_calls[1].id, "call_x");
    EXPECT_EQ(run.reply.tool_calls[1].arguments, json::object());
}

// ---- Failures
// ------------------------------------------------------------------------------------

TEST(ChatEngine, AFailureStatusGivesTheStatusAndTheStartOfTheBody) {
    FakeEndpoint server;
    Script script;
    script.status = "500 Internal Server Error";
    script.content_type = "application/json";
    script.framing = Script::Framing::kLength;
    script.pieces = {{0, R"({"error": {"message": "the model exploded"}})"}};
    server.Serve(script);
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_THAT(run.reply.error, HasSubstr("500"));
    EXPECT_THAT(run.reply.error, HasSubstr("the model exploded"));
    EXPECT_EQ(run.reply.text, "");
    EXPECT_TRUE(run.reply.tool_calls.empty());
}

TEST(ChatEngine, AFailureStatusWithAHugeBodyShowsOnlyItsStart) {
    FakeEndpoint server;
    Script script;
    script.status = "401 Unauthorized";
    script.content_type = "text/plain";
    script.pieces = {{0, "bad key " + std::string(100000, 'x')}};
    server.Serve(script);
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_THAT(run.reply.error, HasSubstr("401"));
    EXPECT_THAT(run.reply.error, HasSubstr("bad key"));
    EXPECT_LT(run.reply.error.size(), 500u);
}

TEST(ChatEngine, AnErrorBodyThatIsNotUtf8GivesAValidUtf8Error) {
    FakeEndpoint server;
    Script script;
    script.status = "502 Bad Gateway";
    script.content_type = "text/plain";
    script.framing = Script::Framing::kLength;
    script.pieces = {{0, "bad \xff\xfe gateway \xc3\xa9\ncut \xe2\x82"}};
    server.Serve(script);
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_THAT(run.reply.error, HasSubstr("502"));
    EXPECT_THAT(run.reply.error, HasSubstr("bad ?? gateway \xc3\xa9 cut ??"));
    EXPECT_NO_THROW((void)json(run.reply.error).dump());
}

TEST(ChatEngine, ConnectionRefusedGivesAnError) {
    int port = 0;
    {
        FakeEndpoint closed;
        port = closed.port();
    }
    const Outcome run = Respond(Options("http://127.0.0.1:" + std::to_string(port) + "/v1"));
    EXPECT_THAT(run.reply.error, HasSubstr("refused"));
    EXPECT_THAT(run.reply.error, HasSubstr(std::to_string(port)));
    EXPECT_EQ(run.reply.text, "");
}

TEST(ChatEngine, AServerThatNeverAnswersTimesOut) {
    FakeEndpoint server;
    Script script;
    script.answer = false;
    server.Serve(script);
    ChatCompletionsOptions options = Options(server.Base());
    options.timeout = milliseconds(500);
    const Outcome run = Respond(options);
    EXPECT_THAT(run.reply.error, HasSubstr("did not answer within 500 ms"));
    EXPECT_EQ(run.reply.text, "");
    EXPECT_GE(run.ElapsedMs(), 450);
    EXPECT_LE(run.ElapsedMs(), 900);
}

TEST(ChatEngine, AStreamThatStallsTimesOutWithThePartialText) {
    FakeEndpoint server;
    server.Serve(Stream({{0, Text("I was saying")}, {5000, Text(" more")}}));
    ChatCompletionsOptions options = Options(server.Base());
    options.timeout = milliseconds(500);
    const Outcome run = Respond(options);
    EXPECT_THAT(run.reply.error, HasSubstr("did not finish within 500 ms"));
    EXPECT_EQ(run.reply.text, "I was saying");
    EXPECT_THAT(run.pieces, testing::ElementsAre("I was saying"));
    EXPECT_LE(run.ElapsedMs(), 900);
}

TEST(ChatEngine, AMalformedEventGivesAnError) {
    FakeEndpoint server;
    server.Serve(Stream({{0, Text("Fine ")},
                         {0, "data: {\"choices\": [nope\n\n"},
                         {0, Text("never")},
                         {0, kDone}}));
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_THAT(run.reply.error, HasSubstr("malformed"));
    EXPECT_EQ(run.reply.text, "Fine ");
}

TEST(ChatEngine, AnErrorEventGivesAnError) {
    FakeEndpoint server;
    server.Serve(Stream({{0, Text("Fine ")},
                         {0, Event({{"error", {{"message", "context length exceeded"}}}})},
                         {0, kDone}}));
    const Outcome run = Respond(Options(server.Base()));
    EXPECT_THAT(run.reply.error, HasSubstr("context length exceeded"));
    EXPECT_EQ(run.reply.text, "Fine ");
}

TEST(ChatEngine, ABodyWithoutDoneIsWholeAndABrokenOneIsAnError) {
    // A body of announced length that ends without [DONE] or a finish_reason is still whole.
    FakeEndpoint server;
    Script whole = Stream({{0, Text("Half")}});
    whole.framing = Script::Framing::kLength;
    server.Serve(whole);
    const Outcome run_whole = Respond(Options(server.Base()));
    EXPECT_EQ(run_whole.reply.error, "");
    EXPECT_EQ(run_whole.reply.text, "Half");
    // A chunked body whose connection closes before its last chunk (and before any
    // finish_reason) broke off: an error, the text so far kept.
    Script cut = Stream({{0, Text("Half")}});
    cut.truncate = true;
    server.Serve(cut);
    const Outcome run_cut = Respond(Options(server.Base()));
    EXPECT_THAT(run_cut.reply.error, HasSubstr("broke off"));
    EXPECT_EQ(run_cut.reply.text, "Half");
    // The same, but after a finish_reason: the reply is whole all the same.
    Script finished = Stream({{0, Text("Whole")}, {0, Finish()}});
    finished.truncate = true;
    server.Serve(finished);
    const Outcome run_finished = Respond(Options(server.Base()));
    EXPECT_EQ(run_finished.reply.error, "");
    EXPECT_EQ(run_finished.reply.text, "Whole");
}

TEST(ChatEngine, ABaseThatIsNotAnHttpUrlGivesAnError) {
    for (const char* base : {"", "ftp://example.com/v1", "http://", "localhost:8081/v1",
                             "http://host:99999/v1", "http://a b/v1"}) {
        const Outcome run = Respond(Options(base));
        EXPECT_THAT(run.reply.error, HasSubstr("URL")) << base;
    }
}

// ---- Cancel -----------------------------------------------------------------------------------

TEST(ChatEngine, CancelDuringASlowStreamReturnsPromptlyWithThePartialText) {
    FakeEndpoint server;
    server.Serve(Stream({{0, Text("The first part")}, {3000, Text(" and the rest")}, {0, kDone}}));
    auto engine = MakeChatCompletionsEngine(Options(server.Base()));
    std::atomic<bool> cancel{false};
    std::atomic<bool> started{false};
    Clock::time_point cancelled_at;
    std::thread barge_in([&] {
        while (!started) std::this_thread::sleep_for(milliseconds(1));
        std::this_thread::sleep_for(milliseconds(150));
        cancelled_at = Clock::now();
        cancel = true;
    });
    Outcome run;
    run.start = Clock::now();
    run.reply = engine->Respond(
        Context(), Hello(),
        [&](std::string_view piece) {
            run.pieces.emplace_back(piece);
            started = true;
        },
        cancel);
    run.end = Clock::now();
    barge_in.join();
    EXPECT_EQ(run.reply.error, "");
    EXPECT_EQ(run.reply.text, "The first part");
    EXPECT_THAT(run.pieces, testing::ElementsAre("The first part"));
    EXPECT_LE(Since(cancelled_at, run.end), 100);
    // The engine let go of the connection.
    const auto until = Clock::now() + milliseconds(1000);
    while (!server.ClientClosed() && Clock::now() < until) {
        std::this_thread::sleep_for(milliseconds(5));
    }
    EXPECT_TRUE(server.ClientClosed());
}

TEST(ChatEngine, CancelBeforeAnyAnswerReturnsPromptly) {
    FakeEndpoint server;
    Script script;
    script.answer = false;
    server.Serve(script);
    auto engine = MakeChatCompletionsEngine(Options(server.Base()));
    std::atomic<bool> cancel{false};
    std::thread barge_in([&] {
        std::this_thread::sleep_for(milliseconds(200));
        cancel = true;
    });
    const Outcome run = Respond(*engine, Context(), Hello(), cancel);
    barge_in.join();
    EXPECT_EQ(run.reply.error, "");
    EXPECT_EQ(run.reply.text, "");
    EXPECT_GE(run.ElapsedMs(), 190);
    EXPECT_LE(run.ElapsedMs(), 300);
}

// ---- TLS --------------------------------------------------------------------------------------

class ChatEngineTls : public testing::Test {
  protected:
    void SetUp() override {
        cert_ = SelfSigned("localhost");
        path_ = std::filesystem::temp_directory_path() /
                ("genhost-chat-engine-ca-" + std::to_string(getpid()) + ".pem");
        std::ofstream(path_) << cert_.cert_pem;
        const char* previous = std::getenv("SSL_CERT_FILE");
        if (previous != nullptr) previous_ = previous;
    }
    void TearDown() override {
        if (previous_) {
            setenv("SSL_CERT_FILE", previous_->c_str(), 1);
        } else {
            unsetenv("SSL_CERT_FILE");
        }
        std::filesystem::remove(path_);
    }
    void Trust() { setenv("SSL_CERT_FILE", path_.c_str(), 1); }

    Certificate cert_;
    std::filesystem::path path_;
    std::optional<std::string> previous_;
};

TEST_F(ChatEngineTls, ATrustedServerAnswersWithSni) {
    FakeEndpoint server(&cert_);
    server.Serve(Stream({{0, Text("Secure hello.")}, {0, kDone}}));
    Trust();
    ChatCompletionsOptions options = Options(server.Base("localhost"));
    options.api_key = "sk-tls";
    const Outcome run = Respond(options);
    EXPECT_EQ(run.reply.error, "");
    EXPECT_EQ(run.reply.text, "Secure hello.");
    const auto requests = server.Requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].sni, "localhost");
    EXPECT_EQ(requests[0].target, "/v1/chat/completions");
    EXPECT_EQ(requests[0].headers.at("authorization"), "Bearer sk-tls");
}

TEST_F(ChatEngineTls, AnUntrustedCertificateIsRefused) {
    FakeEndpoint server(&cert_);
    server.Serve(Stream({{0, Text("Should not be read.")}, {0, kDone}}));
    unsetenv("SSL_CERT_FILE");
    const Outcome run = Respond(Options(server.Base("localhost")));
    EXPECT_THAT(run.reply.error, HasSubstr("TLS"));
    EXPECT_THAT(run.reply.error, HasSubstr("certificate verify failed"));
    EXPECT_EQ(run.reply.text, "");
    EXPECT_TRUE(server.Requests().empty());
}

TEST_F(ChatEngineTls, ACertificateForAnotherNameIsRefused) {
    FakeEndpoint server(&cert_);
    server.Serve(Stream({{0, Text("Should not be read.")}, {0, kDone}}));
    Trust();
    // Trusted, but issued to "localhost", not to 127.0.0.1.
    const Outcome run = Respond(Options(server.Base("127.0.0.1")));
    EXPECT_THAT(run.reply.error, HasSubstr("TLS"));
    EXPECT_THAT(run.reply.error, HasSubstr("certificate verify failed"));
    EXPECT_EQ(run.reply.text, "");
    EXPECT_TRUE(server.Requests().empty());
}

}  // namespace
}  // namespace genhost::realtime
