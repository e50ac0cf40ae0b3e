#include "genhost/http/server.hpp"

#include "genhost/core/clock.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/core/logging.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace genhost::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

struct Server::Session {
    explicit Session(tcp::socket socket) : stream(std::move(socket)) {}
    beast::tcp_stream stream;
    std::atomic<bool> busy{false};
};

namespace {

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

}  // namespace

Server::Server(ServerOptions options, const Router& router, Metrics& metrics)
    : options_(std::move(options)),
      router_(router),
      metrics_(metrics),
      io_(options_.io_threads),
      acceptor_(asio::make_strand(io_)) {}

Server::~Server() { Shutdown(std::chrono::milliseconds(0)); }

void Server::Listen() {
    const auto address = asio::ip::make_address(options_.host);
    const tcp::endpoint endpoint(address, options_.port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
    port_ = acceptor_.local_endpoint().port();
}

void Server::Start() {
    // The accept loop and Shutdown's close both run on the acceptor's strand.
    asio::co_spawn(acceptor_.get_executor(), AcceptLoop(), asio::detached);
    for (int i = 0; i < options_.io_threads; ++i) {
        threads_.emplace_back([this] {
            for (;;) {
                try {
                    io_.run();
                    return;
                } catch (const std::exception& e) {
                    spdlog::error("I/O thread: unexpected exception: {}", e.what());
                }
            }
        });
    }
}

asio::awaitable<void> Server::AcceptLoop() {
    for (;;) {
        auto [ec, socket] = co_await acceptor_.async_accept(asio::make_strand(io_),
                                                            asio::as_tuple(asio::use_awaitable));
        if (stopping_) co_return;
        if (ec) {
            if (ec == asio::error::operation_aborted) co_return;
            spdlog::warn("accept failed: {}", ec.message());
            continue;
        }
        socket.set_option(tcp::no_delay(true));
        auto session = std::make_shared<Session>(std::move(socket));
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

asio::awaitable<Response> Server::Dispatch(Request& request) {
    const auto match = router_.Find(request.method, request.path);
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
    request.params = match.params;
    try {
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
    beast::flat_buffer buffer;
    std::string remote;
    {
        beast::error_code ec;
        const auto ep = stream.socket().remote_endpoint(ec);
        if (!ec) remote = ep.address().to_string();
    }

    for (;;) {
        bhttp::request_parser<bhttp::string_body> parser;
        parser.header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
        parser.body_limit(options_.max_body_bytes);
        stream.expires_after(options_.read_timeout);
        auto [ec, bytes] =
            co_await bhttp::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
        if (ec) {
            int status = 0;
            std::string message;
            if (ec == bhttp::error::body_limit) {
                status = 413;
                message = "Request body too large";
            } else if (ec == bhttp::error::header_limit) {
                status = 431;
                message = "Request headers too large";
            } else if (ec != bhttp::error::end_of_stream && ec != asio::error::operation_aborted &&
                       ec != beast::error::timeout && ec != asio::error::eof &&
                       ec != asio::error::connection_reset && parser.got_some()) {
                if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category() &&
                    ec != bhttp::error::partial_message) {
                    status = 400;
                    message = "Malformed HTTP request";
                }
            }
            if (status != 0) {
                bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(status), 11};
                res.set(bhttp::field::content_type, "application/json");
                res.set("X-Request-Id", NewUuid());
                res.keep_alive(false);
                res.body() = ErrorJson(message);
                res.prepare_payload();
                stream.expires_after(std::chrono::seconds(5));
                co_await bhttp::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
                metrics_.ObserveRequest("unmatched", "-", status, 0);
            }
            break;
        }

        session->busy = true;
        ++in_flight_;
        const auto started = std::chrono::steady_clock::now();
        auto& raw = parser.get();
        Request request;
        request.method = std::string(raw.method_string());
        request.target = std::string(raw.target());
        const auto q = request.target.find('?');
        request.path = request.target.substr(0, q);
        if (q != std::string::npos) request.query = request.target.substr(q + 1);
        for (const auto& field : raw) {
            std::string name(field.name_string());
            for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            request.headers.emplace_back(std::move(name), std::string(field.value()));
        }
        request.body = std::move(raw.body());
        request.remote_address = remote;
        const auto client_id = request.Header("x-request-id");
        request.request_id =
            client_id && SaneRequestId(*client_id) ? std::string(*client_id) : NewUuid();
        const bool keep_alive = raw.keep_alive();

        Response response = co_await Dispatch(request);

        bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(response.status),
                                                raw.version()};
        for (const auto& [k, v] : response.headers) res.set(k, v);
        res.set("X-Request-Id", request.request_id);
        const bool stay = keep_alive && !stopping_;
        res.keep_alive(stay);
        if (request.method == "HEAD") {
            res.content_length(response.head_length.value_or(response.body.size()));
        } else {
            res.body() = std::move(response.body);
            res.prepare_payload();
        }

        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        metrics_.ObserveRequest(request.route, request.method, response.status, seconds);
        AccessLogger()->info(
            R"({{"ts":"{}","level":"info","logger":"access","method":"{}","path":"{}","status":{},"duration_ms":{:.3f},"request_id":"{}","org":"{}","remote":"{}"}})",
            FormatTimestamp(SystemClock::Instance().Now()), JsonEscape(request.method),
            JsonEscape(request.path), response.status, seconds * 1000,
            JsonEscape(request.request_id), JsonEscape(request.org_id), JsonEscape(remote));

        stream.expires_after(options_.read_timeout);
        bhttp::serializer<false, bhttp::string_body> serializer(res);
        if (request.method == "HEAD") serializer.split(true);
        beast::error_code wec;
        if (request.method == "HEAD") {
            std::tie(wec, std::ignore) = co_await bhttp::async_write_header(
                stream, serializer, asio::as_tuple(asio::use_awaitable));
        } else {
            std::tie(wec, std::ignore) = co_await bhttp::async_write(
                stream, serializer, asio::as_tuple(asio::use_awaitable));
        }
        --in_flight_;
        session->busy = false;
        if (wec || !stay) break;
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream.close();
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
                    asio::post(s->stream.get_executor(), [s] { s->stream.cancel(); });
                }
            }
        }
        if (sessions_.load() == 0 || std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    io_.stop();
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    threads_.clear();
    // The close posted above may not have run before io_.stop(); with the I/O threads gone the
    // acceptor can be closed here, so the kernel stops queueing connections nobody will answer.
    beast::error_code ignored;
    acceptor_.close(ignored);
}

}  // namespace genhost::http
