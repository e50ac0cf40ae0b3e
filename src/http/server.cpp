#include "genhost/http/server.hpp"

#include "genhost/core/clock.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/core/logging.hpp"
#include "genhost/http/wire.hpp"
#include "websocket_control.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <tuple>

namespace genhost::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using Protocol = asio::generic::stream_protocol;
// A connection over TCP or a unix-domain socket. Its time limits are Session::deadline's, kept by
// Server::Sweep, not Beast's basic_stream timers.
using Stream = Protocol::socket;

struct Server::Session {
    Session(Protocol::socket socket, std::size_t context)
        : stream(std::move(socket)), context(context) {}
    Stream stream;
    std::atomic<bool> busy{false};
    // The I/O thread (index into contexts_) that runs this connection; only that thread touches
    // `deadline` and `timed_out`.
    const std::size_t context;
    // When the read or write now under way must have finished; max() while none is timed. The
    // thread's Sweep cancels the socket's operations once it has passed, and sets timed_out.
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
    bool timed_out = false;

    // Limit gives what comes next on the connection `limit` to finish.
    void Limit(std::chrono::milliseconds limit) {
        deadline = std::chrono::steady_clock::now() + limit;
    }
    void Unlimit() { deadline = std::chrono::steady_clock::time_point::max(); }

    // Once upgraded, the connection is a WebSocket: its socket has moved into `ws`, Sweep leaves
    // it to Beast's WebSocket timeouts, and Shutdown closes it with 1001. `ws` is touched only on
    // the connection's I/O thread (and by Shutdown once the I/O threads have stopped).
    std::atomic<bool> upgraded{false};
    std::shared_ptr<WebSocket> ws;
};

namespace {

// kMaxRefusing bounds the connections being answered 503 at the connection cap at once.
constexpr int kMaxRefusing = 64;

// kWebSocketCloseWait bounds the wait, once a WebSocket route's `run` has returned, for the
// messages it queued and the closing handshake.
constexpr std::chrono::seconds kWebSocketCloseWait{5};

constexpr std::string_view kGoingAwayReason = "The server is shutting down";

// TcpEndpoint reads a generic endpoint that holds an IPv4 or IPv6 address as a TCP endpoint.
tcp::endpoint TcpEndpoint(const Protocol::endpoint& generic) {
    tcp::endpoint out;
    if (generic.size() > out.capacity()) throw std::runtime_error("not an IP endpoint");
    std::memcpy(out.data(), generic.data(), generic.size());
    out.resize(generic.size());
    return out;
}

bool SaneRequestId(std::string_view id) {
    if (id.empty() || id.size() > 128) return false;
    for (const char c : id) {
        if (c < 0x21 || c > 0x7e) return false;
    }
    return true;
}

std::string ErrorJson(std::string_view message) {
    return fmt::format(R"({{"error":"{}"}})", JsonEscape(message));
}

// Fault is the answer to what a handler or a gate threw: its ApiError, or a generic 500 whose
// details go only to the log, with the request id.
Response Fault(const Request& request, std::exception_ptr thrown, std::string_view doc_url) {
    try {
        std::rethrow_exception(thrown);
    } catch (const ApiErrorException& e) {
        return Response::Error(e.error(), doc_url);
    } catch (const std::exception& e) {
        spdlog::error("request {} {} {} failed: {}", request.request_id, request.method,
                      request.path, e.what());
    } catch (...) {
        spdlog::error("request {} {} {} failed: an exception of an unknown type",
                      request.request_id, request.method, request.path);
    }
    return Response::Error(ApiError::Internal(), doc_url);
}

// OriginForm turns an absolute-form request target ("http://host/path?q", which RFC 9112
// section 3.2.2 says a server must accept) into the origin form the router matches ("/path?q");
// any other target is returned as it is.
std::string OriginForm(std::string_view target) {
    for (const std::string_view scheme :
         {std::string_view("http://"), std::string_view("https://")}) {
        if (target.size() < scheme.size() ||
            !beast::iequals(target.substr(0, scheme.size()), scheme)) {
            continue;
        }
        const std::string_view rest = target.substr(scheme.size());
        const std::size_t end = rest.find_first_of("/?");
        if (end == std::string_view::npos) return "/";
        return (rest[end] == '?' ? "/" : "") + std::string(rest.substr(end));
    }
    return std::string(target);
}

// ReadFailure maps a failure to read a request onto the status to answer with and its message;
// status 0 means the connection just closes (the client left, timed out or sent nothing).
std::pair<int, std::string> ReadFailure(const beast::error_code& ec, bool got_some) {
    if (ec == bhttp::error::body_limit) return {413, "Request body too large"};
    if (ec == bhttp::error::header_limit) return {431, "Request headers too large"};
    if (ec != bhttp::error::end_of_stream && ec != asio::error::operation_aborted &&
        ec != beast::error::timeout && ec != asio::error::eof &&
        ec != asio::error::connection_reset && got_some) {
        if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category() &&
            ec != bhttp::error::partial_message) {
            return {400, "Malformed HTTP request"};
        }
    }
    return {0, ""};
}

// FailureResponse is the answer to a request that could not be read or framed: the contract's
// error body for `status` (a 400 with no issues, since no field is at fault).
Response FailureResponse(int status, const std::string& message, std::string_view doc_url) {
    if (status == 400) return Response::Error(ApiError::InvalidRequest(message), doc_url);
    if (status == 413) {
        ApiError e;
        e.code = ErrorCode::kPayloadTooLarge;
        e.message = message;
        return Response::Error(e, doc_url);
    }
    return Response::JsonText(status, ErrorJson(message));
}

// TrimOws removes the optional white space (spaces and tabs) around a list element.
std::string_view TrimOws(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// FramingProblem checks what RFC 9112 asks of a request's framing and Host beyond what Beast's
// parser checks, and returns the status and message to answer with (the connection then closes),
// or nullopt when the request may be read:
// - Transfer-Encoding (section 6.1): in HTTP/1.0 the framing is faulty (400); in HTTP/1.1 the
//   codings of every Transfer-Encoding field, in order, must end with one `chunked`. Anything
//   else leaves the body's length undetermined (400: Beast would read no body and take the body's
//   bytes for the next request, which is request smuggling behind a proxy that reads the framing
//   differently). A coding genhost does not implement before the final chunked is a 400 too
//   (RFC 9112 suggests 501, which no operation of the published contract lists).
// - Host (section 3.2): an HTTP/1.1 request without one, or any request with more than one, is a
//   400.
template <class Fields>
std::optional<std::pair<int, std::string>> FramingProblem(const bhttp::request_header<Fields>& h) {
    std::vector<std::string_view> codings;
    bool has_te = false;
    for (const auto& field : h) {
        if (field.name() != bhttp::field::transfer_encoding) continue;
        has_te = true;
        std::string_view list = field.value();
        while (true) {
            const std::size_t comma = list.find(',');
            const std::string_view element = TrimOws(list.substr(0, comma));
            if (!element.empty()) codings.push_back(element);
            if (comma == std::string_view::npos) break;
            list.remove_prefix(comma + 1);
        }
    }
    if (has_te) {
        if (h.version() < 11) {
            return std::pair<int, std::string>{
                400, "Transfer-Encoding is not allowed in an HTTP/1.0 request"};
        }
        if (codings.empty() || !beast::iequals(codings.back(), "chunked")) {
            return std::pair<int, std::string>{
                400, "Invalid Transfer-Encoding: chunked must be the final transfer coding"};
        }
        for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
            if (beast::iequals(codings[i], "chunked")) {
                return std::pair<int, std::string>{
                    400, "Invalid Transfer-Encoding: chunked may be applied only once"};
            }
            return std::pair<int, std::string>{
                400, "Invalid Transfer-Encoding: the transfer coding " +
                         std::string(codings[i].substr(0, 64)) +
                         " is not supported; send the body with Content-Length or chunked"};
        }
    }
    const std::size_t hosts = h.count(bhttp::field::host);
    if (hosts > 1) return std::pair<int, std::string>{400, "More than one Host header"};
    if (hosts == 0 && h.version() >= 11) {
        return std::pair<int, std::string>{400, "Missing Host header"};
    }
    return std::nullopt;
}

// UpgradeRefusal checks the GET of a WebSocket route (RFC 6455 section 4.2.1): the answer when it
// is not an opening handshake the server can complete (426 without the upgrade or with another
// WebSocket version, 400 when malformed), nullopt when it is. `buffered` counts the bytes read
// past the header: a client sends nothing before the 101.
template <class Fields>
std::optional<Response> UpgradeRefusal(const bhttp::request_header<Fields>& head, bool announced,
                                       std::size_t buffered, std::string_view doc_url) {
    if (!beast::websocket::is_upgrade(head)) {
        Response r = Response::JsonText(
            426, ErrorJson("This endpoint takes WebSocket connections only: send a GET with "
                           "Connection: Upgrade and Upgrade: websocket"));
        r.SetHeader("Upgrade", "websocket");
        return r;
    }
    if (announced || buffered != 0) {
        return Response::Error(
            ApiError::InvalidRequest("A WebSocket opening handshake carries no body"), doc_url);
    }
    const std::string_view version = head[bhttp::field::sec_websocket_version];
    if (version.empty()) {
        return Response::Error(ApiError::InvalidRequest("Missing Sec-WebSocket-Version header"),
                               doc_url);
    }
    if (version != "13") {
        Response r = Response::JsonText(
            426, ErrorJson("Unsupported WebSocket version: this server speaks version 13"));
        r.SetHeader("Sec-WebSocket-Version", "13");
        return r;
    }
    const std::string_view key = head[bhttp::field::sec_websocket_key];
    if (key.empty() || key.size() > 24) {
        return Response::Error(
            ApiError::InvalidRequest("Missing or malformed Sec-WebSocket-Key header"), doc_url);
    }
    return std::nullopt;
}

// MakeRequest is genhost's view of a request whose header has been read (its body is read later,
// into `body`).
template <class Fields>
Request MakeRequest(const bhttp::request_header<Fields>& raw, const std::string& remote) {
    Request request;
    request.method = std::string(raw.method_string());
    request.target = OriginForm(raw.target());
    const auto q = request.target.find('?');
    request.path = request.target.substr(0, q);
    if (q != std::string::npos) request.query = request.target.substr(q + 1);
    request.headers.reserve(static_cast<std::size_t>(std::distance(raw.begin(), raw.end())));
    for (const auto& field : raw) {
        std::string name(field.name_string());
        for (auto& c : name) {
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');  // ASCII only
        }
        request.headers.emplace_back(std::move(name), std::string(field.value()));
    }
    request.remote_address = remote;
    const auto client_id = request.Header("x-request-id");
    request.request_id =
        client_id && SaneRequestId(*client_id) ? std::string(*client_id) : NewRequestId();
    return request;
}

// StreamBodyReader reads the body of a streaming route from the connection as the handler asks
// for it (see body_reader.hpp). Each Read has its own read timeout.
class StreamBodyReader final : public BodyReader {
  public:
    StreamBodyReader(Server::Session& session, beast::flat_buffer& buffer,
                     bhttp::request_parser<bhttp::buffer_body>& parser,
                     std::chrono::milliseconds timeout, bool expect_continue)
        : session_(session),
          buffer_(buffer),
          parser_(parser),
          timeout_(timeout),
          expect_continue_(expect_continue) {}

    std::optional<std::uint64_t> ContentLength() const override {
        const auto n = parser_.content_length();
        return n ? std::optional<std::uint64_t>(*n) : std::nullopt;
    }

    asio::awaitable<Result<std::size_t>> Read(std::span<char> out) override {
        if (error_) co_return *error_;
        if (parser_.is_done()) co_return std::size_t{0};
        if (out.empty()) throw std::invalid_argument("BodyReader::Read needs a buffer");
        if (expect_continue_) {
            expect_continue_ = false;
            bhttp::response<bhttp::empty_body> proceed{bhttp::status::continue_, 11};
            session_.Limit(timeout_);
            auto [wec, unused] = co_await bhttp::async_write(session_.stream, proceed,
                                                             asio::as_tuple(asio::use_awaitable));
            session_.Unlimit();
            if (wec) co_return Fail(wec);
        }
        auto& body = parser_.get().body();
        body.data = out.data();
        body.size = out.size();
        body.more = true;
        session_.Limit(timeout_);
        auto [ec, unused] = co_await bhttp::async_read(session_.stream, buffer_, parser_,
                                                       asio::as_tuple(asio::use_awaitable));
        session_.Unlimit();
        if (ec == bhttp::error::need_buffer) ec = {};
        if (ec) co_return Fail(ec);
        co_return out.size() - body.size;
    }

    bool Done() const override { return parser_.is_done(); }

    // Broken reports whether the connection can no longer be read (a failed read other than the
    // body limit), so the server closes it without waiting for the rest of the body.
    bool Broken() const { return broken_; }

  private:
    ApiError Fail(const beast::error_code& ec) {
        ApiError e;
        if (ec == bhttp::error::body_limit) {
            e.code = ErrorCode::kPayloadTooLarge;
            e.message = "Request body too large";
        } else {
            broken_ = true;
            e = ApiError::InvalidRequest(session_.timed_out
                                             ? "Timed out reading the request body"
                                             : "The request body is incomplete or malformed");
        }
        error_ = e;
        return e;
    }

    Server::Session& session_;
    beast::flat_buffer& buffer_;
    bhttp::request_parser<bhttp::buffer_body>& parser_;
    std::chrono::milliseconds timeout_;
    bool expect_continue_;
    bool broken_ = false;
    std::optional<ApiError> error_;
};

// WriteResponse sends `response` as its head (ResponseHead) and, unless BodySent says not, its
// body, in one gathered write.
asio::awaitable<beast::error_code> WriteResponse(Stream& stream, const Response& response,
                                                 unsigned version, bool keep_alive, bool head,
                                                 std::string_view request_id) {
    const std::string wire_head = ResponseHead(response, version, keep_alive, head, request_id);
    const std::array<asio::const_buffer, 2> wire = {
        asio::buffer(wire_head),
        BodySent(response, head) ? asio::buffer(response.body) : asio::const_buffer()};
    auto [ec, written] =
        co_await asio::async_write(stream, wire, asio::as_tuple(asio::use_awaitable));
    co_return ec;
}

// Linger discards what the client still sends after a response that did not wait for the whole
// body, for a few seconds, so closing the socket with unread data does not reset the connection
// before the client has read the response.
asio::awaitable<void> Linger(Server::Session& session) {
    auto& stream = session.stream;
    beast::error_code ec;
    stream.shutdown(asio::socket_base::shutdown_send, ec);
    if (ec) co_return;
    session.Limit(std::chrono::seconds(5));
    std::array<char, 16 * 1024> scratch;
    for (;;) {
        auto [rec, n] = co_await stream.async_read_some(asio::buffer(scratch),
                                                        asio::as_tuple(asio::use_awaitable));
        if (rec) co_return;
    }
}

// Contexts makes the I/O threads' io_contexts, one per thread (concurrency hint 1: what a
// handler posts from its own thread goes to that thread's private queue, and there is never
// another thread to wake for it).
std::vector<std::unique_ptr<asio::io_context>> Contexts(int threads) {
    std::vector<std::unique_ptr<asio::io_context>> contexts;
    for (int i = 0; i < std::max(threads, 1); ++i) {
        contexts.push_back(std::make_unique<asio::io_context>(1));
    }
    return contexts;
}

}  // namespace

Server::Server(ServerOptions options, const Router& router, Metrics& metrics)
    : options_(std::move(options)),
      router_(router),
      metrics_(metrics),
      contexts_(Contexts(options_.io_threads)),
      acceptor_(*contexts_.front()) {}

Server::~Server() { Shutdown(std::chrono::milliseconds(0)); }

void Server::Listen() {
    if (!options_.unix_path.empty()) {
        // A socket file left by an earlier run is replaced; any other file is not.
        struct stat st {};
        if (::lstat(options_.unix_path.c_str(), &st) == 0) {
            if (!S_ISSOCK(st.st_mode)) {
                throw std::runtime_error(options_.unix_path + " exists and is not a socket");
            }
            ::unlink(options_.unix_path.c_str());
        }
        const asio::local::stream_protocol::endpoint endpoint(options_.unix_path);
        acceptor_.open(Protocol(endpoint.protocol()));
        acceptor_.bind(Protocol::endpoint(endpoint));
        acceptor_.listen(asio::socket_base::max_listen_connections);
        unix_bound_ = true;
        port_ = 0;
        return;
    }
    const auto address = asio::ip::make_address(options_.host);
    const tcp::endpoint endpoint(address, options_.port);
    acceptor_.open(Protocol(endpoint.protocol()));
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(Protocol::endpoint(endpoint));
    acceptor_.listen(asio::socket_base::max_listen_connections);
    port_ = TcpEndpoint(acceptor_.local_endpoint()).port();
}

void Server::Start() {
    // The accept loop and Shutdown's close both run on the first context's thread.
    asio::co_spawn(acceptor_.get_executor(), AcceptLoop(), asio::detached);
    for (std::size_t i = 0; i < contexts_.size(); ++i) {
        asio::co_spawn(*contexts_[i], Sweep(i), asio::detached);
    }
    for (auto& context : contexts_) {
        threads_.emplace_back([this, &io = *context] {
            // A context with no connection yet has no work; it runs until Shutdown stops it.
            auto work = asio::make_work_guard(io);
            for (;;) {
                try {
                    io.run();
                    return;
                } catch (const std::exception& e) {
                    spdlog::error("I/O thread: unexpected exception: {}", e.what());
                }
            }
        });
    }
}

asio::awaitable<void> Server::Sweep(std::size_t context) {
    // A quarter of the read timeout between looks, so a connection is closed at most a quarter
    // late; at least every 10 ms and at most every second.
    const auto tick = std::clamp<std::chrono::milliseconds>(
        options_.read_timeout / 4, std::chrono::milliseconds(10), std::chrono::seconds(1));
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
        timer.expires_after(tick);
        auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
        if (ec) co_return;
        const auto now = std::chrono::steady_clock::now();
        std::lock_guard lock(sessions_mu_);
        for (const auto& session : live_) {
            if (session->context != context || session->deadline > now || session->upgraded) {
                continue;
            }
            session->Unlimit();
            session->timed_out = true;
            beast::error_code ignored;
            session->stream.cancel(ignored);  // the read or write fails with operation_aborted
        }
    }
}

asio::awaitable<void> Server::AcceptLoop() {
    for (;;) {
        // Connections are dealt to the I/O threads in turn.
        const std::size_t index = next_context_++ % contexts_.size();
        auto& io = *contexts_[index];
        auto [ec, socket] =
            co_await acceptor_.async_accept(io, asio::as_tuple(asio::use_awaitable));
        if (stopping_) co_return;
        if (ec) {
            if (ec == asio::error::operation_aborted) co_return;
            spdlog::warn("accept failed: {}", ec.message());
            if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
                ec == asio::error::no_memory || ec.value() == ENFILE) {
                // Out of file descriptors or memory: trying again at once would spin.
                asio::steady_timer pause(acceptor_.get_executor(), std::chrono::milliseconds(50));
                co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
                if (stopping_) co_return;
            }
            continue;
        }
        if (options_.unix_path.empty()) {
            // Never throws: an exception here would end the accept loop.
            beast::error_code ignored;
            socket.set_option(tcp::no_delay(true), ignored);
        }
        auto session = std::make_shared<Session>(std::move(socket), index);
        if (options_.max_connections != 0 &&
            static_cast<std::size_t>(sessions_.load()) >= options_.max_connections) {
            // Past the cap: a 503 instead of one more connection, and a bounded number of those
            // at once (beyond it the connection is just closed).
            ++refusals_;
            if (refusing_.load() >= kMaxRefusing) continue;  // closed as `session` goes
            ++refusing_;
            {
                std::lock_guard lock(sessions_mu_);
                live_.insert(session);
            }
            asio::co_spawn(session->stream.get_executor(), RefuseConnection(session),
                           [this, session](std::exception_ptr) {
                               {
                                   std::lock_guard lock(sessions_mu_);
                                   live_.erase(session);
                               }
                               --refusing_;
                           });
            continue;
        }
        {
            std::lock_guard lock(sessions_mu_);
            live_.insert(session);
        }
        ++sessions_;
        auto executor = session->stream.get_executor();
        asio::co_spawn(executor, RunSession(session), [this, session](std::exception_ptr ep) {
            if (ep) {
                try {
                    std::rethrow_exception(ep);
                } catch (const std::exception& e) {
                    spdlog::error("connection ended by exception: {}", e.what());
                }
            }
            {
                std::lock_guard lock(sessions_mu_);
                live_.erase(session);
            }
            --sessions_;
        });
    }
}

asio::awaitable<Response> Server::Dispatch(Request& request, Router::Match& match,
                                           BodyReader* body) {
    if (match.kind == Router::Match::Kind::kNotFound) {
        request.route = "unmatched";
        co_return Response::Error(ApiError::NotFound("Not found"), options_.doc_url);
    }
    request.route = match.pattern;
    if (match.kind == Router::Match::Kind::kMethodNotAllowed) {
        ApiError e;
        e.code = ErrorCode::kMethodNotAllowed;
        e.message = "Method not allowed";
        e.allow = match.allow;
        co_return Response::Error(e, options_.doc_url);
    }
    request.params = std::move(match.params);
    try {
        if (match.streaming != nullptr) {
            // Only RunSession dispatches, and it hands streaming routes their reader.
            if (body == nullptr) throw std::logic_error("streaming route without a body reader");
            co_return co_await (*match.streaming)(request, *body);
        }
        co_return co_await (*match.handler)(request);
    } catch (...) {
        co_return Fault(request, std::current_exception(), options_.doc_url);
    }
}

asio::awaitable<void> Server::RefuseConnection(std::shared_ptr<Session> session) {
    auto& stream = session->stream;
    const auto started = std::chrono::steady_clock::now();
    // What the client has sent already is read first: closing a socket with unread bytes resets
    // the connection, and the client might lose the answer.
    beast::error_code ec;
    std::array<char, 4096> scratch;
    stream.non_blocking(true, ec);
    for (int i = 0; i < 16 && !ec; ++i) stream.read_some(asio::buffer(scratch), ec);
    stream.non_blocking(false, ec);
    Request request;
    request.method = "-";
    request.path = "-";
    request.route = "refused";
    request.request_id = NewRequestId();
    if (options_.unix_path.empty()) {
        const auto ep = stream.remote_endpoint(ec);
        if (!ec) request.remote_address = TcpEndpoint(ep).address().to_string();
    }
    session->Limit(std::chrono::seconds(2));
    const bool sent = co_await Send(
        *session, request,
        Response::Error(
            ApiError::Unavailable("The server has too many open connections; try again shortly"),
            options_.doc_url),
        11, /*keep_alive=*/false, started);
    if (sent) {
        session->Limit(std::chrono::seconds(1));
        stream.shutdown(asio::socket_base::shutdown_send, ec);
        for (;;) {
            auto [rec, n] = co_await stream.async_read_some(asio::buffer(scratch),
                                                            asio::as_tuple(asio::use_awaitable));
            if (rec) break;
        }
    }
    stream.close(ec);
}

void Server::Log(const Request& request, int status, std::chrono::steady_clock::time_point started,
                 std::string_view task_id) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    metrics_.ObserveRequest(request.route.empty() ? std::string_view("unmatched") : request.route,
                            request.method.empty() ? std::string_view("-") : request.method, status,
                            seconds);
    // Formatted only when the access log is on (the level may leave it off).
    if (const auto access = AccessLogger(); access->should_log(spdlog::level::info)) {
        access->info(
            R"({{"ts":"{}","level":"info","logger":"access","method":"{}","path":"{}","status":{},"duration_ms":{:.3f},"request_id":"{}","org":"{}","remote":"{}"{}{}}})",
            FormatTimestamp(SystemClock::Instance().Now()), JsonEscape(request.method),
            JsonEscape(request.path), status, seconds * 1000, JsonEscape(request.request_id),
            JsonEscape(request.org_id), JsonEscape(request.remote_address),
            request.peer_address.empty() ? std::string()
                                         : ",\"peer\":\"" + JsonEscape(request.peer_address) + "\"",
            task_id.empty() ? std::string() : ",\"task\":\"" + JsonEscape(task_id) + "\"");
    }
}

asio::awaitable<bool> Server::Send(Session& session, const Request& request,
                                   const Response& response, unsigned version, bool keep_alive,
                                   std::chrono::steady_clock::time_point started) {
    Log(request, response.status, started, response.task_id);
    if (session.deadline == std::chrono::steady_clock::time_point::max()) {
        session.Limit(options_.read_timeout);
    }
    const beast::error_code wec =
        co_await WriteResponse(session.stream, response, version, keep_alive,
                               request.method == "HEAD", request.request_id);
    session.Unlimit();
    co_return !wec;
}

bool Server::TakeBodyMemory(std::size_t bytes) {
    if (bytes == 0) return true;
    if (options_.max_body_memory == 0) {
        body_memory_ += bytes;
        return true;
    }
    std::size_t now = body_memory_.load();
    do {
        if (now + bytes > options_.max_body_memory || now + bytes < now) return false;
    } while (!body_memory_.compare_exchange_weak(now, now + bytes));
    return true;
}

void Server::GiveBodyMemory(std::size_t bytes) { body_memory_ -= bytes; }

namespace {

// BodyHold is what one request's body holds of the server's body memory; it gives it back
// when it goes.
class BodyHold {
  public:
    explicit BodyHold(Server& server) : server_(server) {}
    ~BodyHold() { server_.GiveBodyMemory(held_); }
    BodyHold(const BodyHold&) = delete;
    BodyHold& operator=(const BodyHold&) = delete;

    std::size_t Held() const { return held_; }

    // HoldAtLeast makes what is held at least `bytes`; false when the server has no room.
    bool HoldAtLeast(std::size_t bytes) {
        if (bytes <= held_) return true;
        if (!server_.TakeBodyMemory(bytes - held_)) return false;
        held_ = bytes;
        return true;
    }

  private:
    Server& server_;
    std::size_t held_ = 0;
};

// A request whose body held at least this much asks for a trim of the allocator once answered.
constexpr std::size_t kTrimAfterBodyBytes = 1024 * 1024;

// NoRoomForTheBody is the 503 (with Retry-After) of a body the server has no memory left for.
Response NoRoomForTheBody(std::string_view doc_url) {
    return Response::Error(
        ApiError::Unavailable("The server is holding too many request bodies; try again shortly"),
        doc_url);
}

}  // namespace

asio::awaitable<void> Server::RunSession(std::shared_ptr<Session> session) {
    auto& stream = session->stream;
    // The time limits of reading a request and writing its response are kept by the thread's
    // Sweep, from session->deadline, rather than by a timer per operation (Beast's
    // basic_stream), which cost a timer queue entry, its cancellation and a handler per read and
    // per write (docs/performance.md).
    beast::flat_buffer buffer;
    std::string remote;  // the peer's address; empty over a unix-domain socket
    if (options_.unix_path.empty()) {
        beast::error_code ec;
        const auto ep = stream.remote_endpoint(ec);
        if (!ec) remote = TcpEndpoint(ep).address().to_string();
    }

    for (;;) {
        // The header first: the route decides how the body is read (whole, under the server's
        // limit, or streamed by a streaming route's handler under the route's own limit), and its
        // gate whether it is read at all.
        bhttp::request_parser<bhttp::empty_body> header_parser;
        header_parser.header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
        header_parser.body_limit(boost::none);  // checked below, once the route is known
        // One limit for the whole request, header and body, from when the server waits for it.
        session->Limit(options_.read_timeout);
        auto [ec, bytes] = co_await bhttp::async_read_header(stream, buffer, header_parser,
                                                             asio::as_tuple(asio::use_awaitable));
        session->Unlimit();
        const auto started = std::chrono::steady_clock::now();
        if (ec) {
            const auto [status, message] = ReadFailure(ec, header_parser.got_some());
            if (status != 0) {
                // What of the request line was read goes into the access log line.
                Request failed;
                const auto& partial = header_parser.get();
                failed.method =
                    partial.target().empty() ? "-" : std::string(partial.method_string());
                failed.path = partial.target().empty() ? "-" : OriginForm(partial.target());
                failed.path = failed.path.substr(0, failed.path.find('?'));
                failed.route = "unmatched";
                failed.request_id = NewRequestId();
                failed.remote_address = remote;
                session->Limit(std::chrono::seconds(5));
                co_await Send(*session, failed, FailureResponse(status, message, options_.doc_url),
                              11,
                              /*keep_alive=*/false, started);
            }
            break;
        }

        const auto& head = header_parser.get();
        const unsigned version = head.version();
        Request request = MakeRequest(head, remote);
        if (!options_.trusted_proxies.Empty()) {
            // Every X-Forwarded-For line, in order, as one list.
            std::string forwarded;
            bool any = false;
            for (const auto& [name, value] : request.headers) {
                if (name != "x-forwarded-for") continue;
                if (any) forwarded += ',';
                forwarded += value;
                any = true;
            }
            if (any) {
                request.remote_address =
                    ClientAddress(options_.trusted_proxies, remote, std::string_view(forwarded));
                if (request.remote_address != remote) request.peer_address = remote;
            }
        }
        // A body follows the header: a Content-Length above 0, or chunked.
        const bool announced = !header_parser.is_done();
        const bool keep_alive = header_parser.keep_alive();

        // Answered before the body is read: framing, route, gate, size, memory. With a body
        // announced and left unread, the connection cannot carry another request: it closes,
        // after a linger so the client reads the answer before the socket goes.
        std::optional<Response> early;
        bool close = false;
        Router::Match match;
        if (auto problem = FramingProblem(head)) {
            request.route = "unmatched";
            early = FailureResponse(problem->first, problem->second, options_.doc_url);
            close = true;
        } else {
            match = router_.Find(request.method, request.path);
            if (match.kind == Router::Match::Kind::kNotFound ||
                match.kind == Router::Match::Kind::kMethodNotAllowed) {
                early = co_await Dispatch(request, match, nullptr);
            } else if (match.kind == Router::Match::Kind::kUpgrade) {
                // A WebSocket route: the handshake's checks, then the route's accept.
                request.route = match.pattern;
                request.params = match.params;
                early = UpgradeRefusal(head, announced, buffer.size(), options_.doc_url);
                if (early) {
                    close = buffer.size() != 0;  // what was sent after the header is not HTTP
                } else if (match.upgrade->accept) {
                    session->busy = true;
                    early = co_await PassGate(request, match.upgrade->accept);
                    session->busy = false;
                }
            } else {
                request.route = match.pattern;
                if (match.gate != nullptr) {
                    session->busy = true;
                    early = co_await PassGate(request, *match.gate);
                    session->busy = false;
                }
                const std::size_t limit =
                    match.streaming != nullptr ? match.body_limit : options_.max_body_bytes;
                if (const auto length = header_parser.content_length();
                    !early && length && *length > limit) {
                    early = FailureResponse(413, "Request body too large", options_.doc_url);
                }
            }
        }
        BodyHold memory(*this);
        if (!early && match.streaming == nullptr && announced &&
            !memory.HoldAtLeast(static_cast<std::size_t>(header_parser.content_length().value_or(
                std::min<std::uint64_t>(options_.max_body_bytes, 64 * 1024))))) {
            early = NoRoomForTheBody(options_.doc_url);
        }
        if (early) {
            close = close || announced || !keep_alive || stopping_;
            const bool sent = co_await Send(*session, request, *early, version, !close, started);
            if (sent && announced) co_await Linger(*session);
            if (!sent || close) break;
            continue;
        }
        if (match.upgrade != nullptr) {
            // The socket becomes the WebSocket's; the connection ends with the route's session.
            co_await Upgrade(*session, request, *match.upgrade, started);
            co_return;
        }

        std::optional<bhttp::request_parser<bhttp::string_body>> parser;
        std::optional<bhttp::request_parser<bhttp::buffer_body>> stream_parser;
        if (match.streaming != nullptr) {
            stream_parser.emplace(std::move(header_parser));
            stream_parser->body_limit(match.body_limit);
        } else if (announced) {
            parser.emplace(std::move(header_parser));
            parser->body_limit(options_.max_body_bytes);
            // A client that sent "Expect: 100-continue" waits for this before its body (curl
            // does for bodies over 1 MB, for a second); it comes only now that the request has
            // passed every check above. (An HTTP/1.0 client is never sent a 1xx.)
            const auto expect = request.Header("expect");
            session->Limit(options_.read_timeout);
            if (version >= 11 && expect && beast::iequals(*expect, "100-continue")) {
                bhttp::response<bhttp::empty_body> proceed{bhttp::status::continue_, 11};
                std::tie(ec, bytes) = co_await bhttp::async_write(
                    stream, proceed, asio::as_tuple(asio::use_awaitable));
            }
            // Read in pieces, so a chunked body (no length announced) is counted against the
            // body memory as it grows.
            while (!ec && !parser->is_done()) {
                std::tie(ec, bytes) = co_await bhttp::async_read_some(
                    stream, buffer, *parser, asio::as_tuple(asio::use_awaitable));
                // A Content-Length was held in full above; a chunked body holds what it grew to.
                if (!ec && !parser->content_length() &&
                    !memory.HoldAtLeast(parser->get().body().capacity())) {
                    session->Unlimit();
                    if (co_await Send(*session, request, NoRoomForTheBody(options_.doc_url),
                                      version, false, started)) {
                        co_await Linger(*session);
                    }
                    co_await Close(*session);
                    co_return;
                }
            }
            session->Unlimit();
            if (ec) {
                const auto [status, message] = ReadFailure(ec, true);
                if (status != 0) {
                    session->Limit(std::chrono::seconds(5));
                    if (co_await Send(*session, request,
                                      FailureResponse(status, message, options_.doc_url), version,
                                      false, started) &&
                        status == 413) {
                        co_await Linger(*session);
                    }
                }
                break;
            }
            request.body = std::move(parser->get().body());
        }

        session->busy = true;
        ++in_flight_;
        std::optional<StreamBodyReader> body_reader;
        if (stream_parser) {
            const auto expect = request.Header("expect");
            body_reader.emplace(*session, buffer, *stream_parser, options_.read_timeout,
                                version >= 11 && expect && beast::iequals(*expect, "100-continue"));
        }
        Response response =
            co_await Dispatch(request, match, body_reader ? &*body_reader : nullptr);
        // A streaming handler that answered before reading its whole body leaves the rest of it
        // in the connection: that connection cannot carry another request.
        const bool unread_body = body_reader && !body_reader->Done();
        const bool stay = keep_alive && !stopping_ && !unread_body;
        // The body is not needed any more: its memory goes back before the response is written.
        request.body = std::string();
        const bool sent = co_await Send(*session, request, response, version, stay, started);
        if (memory.Held() >= kTrimAfterBodyBytes) trimmer_.Request();
        if (sent && unread_body && !body_reader->Broken()) co_await Linger(*session);
        --in_flight_;
        session->busy = false;
        if (!sent || !stay) break;
    }
    co_await Close(*session);
}

asio::awaitable<void> Server::Upgrade(Session& session, Request& request, const UpgradeRoute& route,
                                      std::chrono::steady_clock::time_point started) {
    // Shutdown leaves the connection to the close frame below rather than cancelling its socket.
    session.busy = true;
    const std::shared_ptr<WebSocket> ws =
        WebSocketControl::Make(std::move(session.stream), request.remote_address,
                               route.max_message_bytes, route.max_queued_bytes);
    // However this coroutine ends (its frame may be destroyed with its I/O context, the
    // connection still open), the WebSocket lets go of its socket and stops counting.
    struct Ending {
        Server& server;
        Session& session;
        WebSocket& ws;
        bool counted = false;
        ~Ending() {
            WebSocketControl::Release(ws);
            session.ws.reset();
            if (counted) --server.websockets_;
        }
    } ending{*this, session, *ws};

    const beast::error_code ec = co_await WebSocketControl::Handshake(
        *ws, request.target, request.headers, request.request_id);
    // Beast answers 400 to a handshake it cannot complete (UpgradeRefusal checked what it checks,
    // so only a failed write is left).
    Log(request, ec ? 400 : 101, started);
    if (ec) co_return;
    session.ws = ws;
    session.upgraded = true;
    ++websockets_;
    ending.counted = true;
    if (stopping_) ws->Close(ws_close::kGoingAway, std::string(kGoingAwayReason));
    try {
        auto running = route.run(request, ws);
        co_await std::move(running);
    } catch (const std::exception& e) {
        spdlog::error("websocket {} {} failed: {}", request.request_id, request.path, e.what());
        ws->Close(ws_close::kInternalError, "Internal error");
    } catch (...) {
        spdlog::error("websocket {} {} failed: an exception of an unknown type", request.request_id,
                      request.path);
        ws->Close(ws_close::kInternalError, "Internal error");
    }
    const std::chrono::milliseconds close_wait = kWebSocketCloseWait;
    co_await WebSocketControl::Finish(*ws, close_wait);
}

asio::awaitable<void> Server::Close(Session& session) {
    beast::error_code ignored;
    session.stream.shutdown(asio::socket_base::shutdown_send, ignored);
    session.stream.close(ignored);
    co_return;
}

asio::awaitable<std::optional<Response>> Server::PassGate(Request& request, const Gate& gate) {
    try {
        co_return co_await gate(request);
    } catch (...) {
        co_return Fault(request, std::current_exception(), options_.doc_url);
    }
}

void Server::Shutdown(std::chrono::milliseconds timeout) { Shutdown(core::Deadline(timeout)); }

void Server::Shutdown(const core::Deadline& deadline) {
    if (shut_down_) return;
    shut_down_ = true;
    stopping_ = true;
    asio::post(acceptor_.get_executor(), [this] {
        beast::error_code ignored;
        acceptor_.close(ignored);
    });
    // Idle keep-alive connections are closed now; busy ones close after their response.
    for (;;) {
        {
            std::lock_guard lock(sessions_mu_);
            for (const auto& s : live_) {
                if (s->upgraded) {
                    // A WebSocket gets a close frame (its route's `run` then sees Read end).
                    asio::post(s->stream.get_executor(), [s] {
                        if (s->ws) {
                            s->ws->Close(ws_close::kGoingAway, std::string(kGoingAwayReason));
                        }
                    });
                } else if (!s->busy) {
                    asio::post(s->stream.get_executor(), [s] {
                        beast::error_code ignored;
                        s->stream.cancel(ignored);
                    });
                }
            }
        }
        if (sessions_.load() == 0 || deadline.Passed()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (auto& context : contexts_) context->stop();
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    threads_.clear();
    // The WebSockets still open are destroyed with the I/O contexts; until then, and after, their
    // Send and Close (another thread may hold them) must not post to a context.
    {
        std::lock_guard lock(sessions_mu_);
        for (const auto& s : live_) {
            if (s->ws) WebSocketControl::Seal(*s->ws);
        }
    }
    // The close posted above may not have run before the contexts stopped; with the I/O threads
    // gone the acceptor can be closed here, so the kernel stops queueing connections nobody will
    // answer.
    beast::error_code ignored;
    acceptor_.close(ignored);
    if (unix_bound_) ::unlink(options_.unix_path.c_str());
}

}  // namespace genhost::http
