#include "genhost/http/server.hpp"

#include "genhost/core/clock.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/core/logging.hpp"
#include "genhost/http/wire.hpp"

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
};

namespace {

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
            if (session->context != context || session->deadline > now) continue;
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
            continue;
        }
        if (options_.unix_path.empty()) {
            // Never throws: an exception here would end the accept loop.
            beast::error_code ignored;
            socket.set_option(tcp::no_delay(true), ignored);
        }
        auto session = std::make_shared<Session>(std::move(socket), index);
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
    } catch (const ApiErrorException& e) {
        co_return Response::Error(e.error(), options_.doc_url);
    } catch (const std::exception& e) {
        spdlog::error("request {} {} {} failed: {}", request.request_id, request.method,
                      request.path, e.what());
        co_return Response::Error(ApiError::Internal(), options_.doc_url);
    }
}

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
        // limit, or streamed by a streaming route's handler under the route's own limit).
        bhttp::request_parser<bhttp::empty_body> header_parser;
        header_parser.header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
        header_parser.body_limit(boost::none);  // checked below, once the route is known
        // One limit for the whole request, header and body, from when the server waits for it.
        session->Limit(options_.read_timeout);
        auto [ec, bytes] = co_await bhttp::async_read_header(stream, buffer, header_parser,
                                                             asio::as_tuple(asio::use_awaitable));
        auto [status, message] = ReadFailure(ec, header_parser.got_some());
        Router::Match match;
        std::string target;
        bool linger = false;
        if (!ec) {
            target = OriginForm(header_parser.get().target());
            match = router_.Find(header_parser.get().method_string(),
                                 std::string_view(target).substr(0, target.find('?')));
            const std::size_t limit =
                match.streaming != nullptr ? match.body_limit : options_.max_body_bytes;
            if (const auto length = header_parser.content_length(); length && *length > limit) {
                ec = bhttp::error::body_limit;
                std::tie(status, message) = ReadFailure(ec, true);
                // An upload client is usually still sending: let it read the 413 first.
                linger = match.streaming != nullptr;
            }
        }
        std::optional<bhttp::request_parser<bhttp::string_body>> parser;
        std::optional<bhttp::request_parser<bhttp::buffer_body>> stream_parser;
        if (!ec && match.streaming != nullptr) {
            stream_parser.emplace(std::move(header_parser));
            stream_parser->body_limit(match.body_limit);
        } else if (!ec) {
            parser.emplace(std::move(header_parser));
            parser->body_limit(options_.max_body_bytes);
            if (!parser->is_done()) {
                // A client that sent "Expect: 100-continue" waits for this before its body (curl
                // does for bodies over 1 MB, for a second); one whose body is too large has had
                // its 413 above instead. (An HTTP/1.0 client is never sent a 1xx.)
                const auto expect = parser->get().find(bhttp::field::expect);
                if (parser->get().version() >= 11 && expect != parser->get().end() &&
                    beast::iequals(expect->value(), "100-continue")) {
                    bhttp::response<bhttp::empty_body> proceed{bhttp::status::continue_, 11};
                    std::tie(ec, bytes) = co_await bhttp::async_write(
                        stream, proceed, asio::as_tuple(asio::use_awaitable));
                }
                if (!ec) {
                    std::tie(ec, bytes) = co_await bhttp::async_read(
                        stream, buffer, *parser, asio::as_tuple(asio::use_awaitable));
                }
                std::tie(status, message) = ReadFailure(ec, parser->got_some());
            }
        }
        session->Unlimit();
        if (ec) {
            if (status != 0) {
                const Response failure = Response::JsonText(status, ErrorJson(message));
                session->Limit(std::chrono::seconds(5));
                const beast::error_code wec =
                    co_await WriteResponse(stream, failure, 11, /*keep_alive=*/false,
                                           /*head=*/false, NewRequestId());
                metrics_.ObserveRequest("unmatched", "-", status, 0);
                if (!wec && linger) co_await Linger(*session);
            }
            break;
        }

        session->busy = true;
        ++in_flight_;
        const auto started = std::chrono::steady_clock::now();
        const auto& raw = parser ? parser->get().base() : stream_parser->get().base();
        Request request;
        request.method = std::string(raw.method_string());
        request.target = std::move(target);
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
        if (parser) request.body = std::move(parser->get().body());
        request.remote_address = remote;
        const auto client_id = request.Header("x-request-id");
        request.request_id =
            client_id && SaneRequestId(*client_id) ? std::string(*client_id) : NewRequestId();
        const bool keep_alive =
            parser ? parser->get().keep_alive() : stream_parser->get().keep_alive();

        std::optional<StreamBodyReader> body_reader;
        if (stream_parser) {
            const auto expect = request.Header("expect");
            body_reader.emplace(*session, buffer, *stream_parser, options_.read_timeout,
                                expect && beast::iequals(*expect, "100-continue"));
        }
        Response response =
            co_await Dispatch(request, match, body_reader ? &*body_reader : nullptr);
        // A streaming handler that answered before reading its whole body leaves the rest of it
        // in the connection: that connection cannot carry another request.
        const bool unread_body = body_reader && !body_reader->Done();

        const bool stay = keep_alive && !stopping_ && !unread_body;
        const bool head = request.method == "HEAD";

        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        metrics_.ObserveRequest(request.route, request.method, response.status, seconds);
        // Formatted only when the access log is on (the level may leave it off).
        if (const auto access = AccessLogger(); access->should_log(spdlog::level::info)) {
            access->info(
                R"({{"ts":"{}","level":"info","logger":"access","method":"{}","path":"{}","status":{},"duration_ms":{:.3f},"request_id":"{}","org":"{}","remote":"{}"}})",
                FormatTimestamp(SystemClock::Instance().Now()), JsonEscape(request.method),
                JsonEscape(request.path), response.status, seconds * 1000,
                JsonEscape(request.request_id), JsonEscape(request.org_id), JsonEscape(remote));
        }

        session->Limit(options_.read_timeout);
        const beast::error_code wec =
            co_await WriteResponse(stream, response, raw.version(), stay, head, request.request_id);
        session->Unlimit();
        if (!wec && unread_body && !body_reader->Broken()) co_await Linger(*session);
        --in_flight_;
        session->busy = false;
        if (wec || !stay) break;
    }
    beast::error_code ignored;
    stream.shutdown(asio::socket_base::shutdown_send, ignored);
    stream.close(ignored);
}

void Server::Shutdown(std::chrono::milliseconds timeout) {
    if (shut_down_) return;
    shut_down_ = true;
    stopping_ = true;
    asio::post(acceptor_.get_executor(), [this] {
        beast::error_code ignored;
        acceptor_.close(ignored);
    });
    // Idle keep-alive connections are closed now; busy ones close after their response.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        {
            std::lock_guard lock(sessions_mu_);
            for (const auto& s : live_) {
                if (!s->busy) {
                    asio::post(s->stream.get_executor(), [s] {
                        beast::error_code ignored;
                        s->stream.cancel(ignored);
                    });
                }
            }
        }
        if (sessions_.load() == 0 || std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (auto& context : contexts_) context->stop();
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    threads_.clear();
    // The close posted above may not have run before the contexts stopped; with the I/O threads
    // gone the acceptor can be closed here, so the kernel stops queueing connections nobody will
    // answer.
    beast::error_code ignored;
    acceptor_.close(ignored);
    if (unix_bound_) ::unlink(options_.unix_path.c_str());
}

}  // namespace genhost::http
