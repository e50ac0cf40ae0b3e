#include "provider_http.hpp"

#include "genhost/net/tls.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/ssl.h>

#include <algorithm>
#include <cctype>
#include <thread>

namespace genhost::providers::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;

namespace {

constexpr auto kSlice = std::chrono::milliseconds(20);
constexpr std::uint32_t kHeaderLimit = 16 * 1024;

}  // namespace

struct OutboundHttp::Impl {
    std::unique_ptr<ssl::context> tls;
};

OutboundHttp::OutboundHttp(const std::string& ca_file) : impl_(std::make_unique<Impl>()) {
    // The providers file's ca_file replaces the system's store.
    impl_->tls = net::ClientTlsContext({ca_file.empty(), ca_file});
}

OutboundHttp::~OutboundHttp() = default;

namespace {

using Clock = std::chrono::steady_clock;
using Request = http::request<http::string_body>;

// Exchange writes `req` on a connected stream and reads the response into `parser`. With
// `header_first`, a response whose status is not 2xx is returned after its header.
template <class Stream, class Parser>
asio::awaitable<void> Exchange(Stream& stream, const Request& req, Parser& parser,
                               bool header_first, const std::function<void(Parser&)>& on_2xx) {
    co_await http::async_write(stream, req, asio::use_awaitable);
    beast::flat_buffer buffer;
    co_await http::async_read_header(stream, buffer, parser, asio::use_awaitable);
    const int status = static_cast<int>(parser.get().result_int());
    if (header_first && (status < 200 || status > 299)) co_return;
    if (on_2xx) on_2xx(parser);
    co_await http::async_read(stream, buffer, parser, asio::use_awaitable);
}

template <class Parser>
asio::awaitable<void> Fetch(ssl::context& tls, const Url& url, const Request& req, Parser& parser,
                            Clock::time_point deadline, bool header_first,
                            std::function<void(Parser&)> on_2xx) {
    const auto ex = co_await asio::this_coro::executor;
    asio::ip::tcp::resolver resolver(ex);
    const auto endpoints =
        co_await resolver.async_resolve(url.host, url.PortString(), asio::use_awaitable);
    if (url.tls) {
        beast::ssl_stream<beast::tcp_stream> stream(ex, tls);
        auto& tcp = beast::get_lowest_layer(stream);
        tcp.expires_at(deadline);
        co_await tcp.async_connect(endpoints, asio::use_awaitable);
        net::VerifyHost(stream.native_handle(), url.host);
        co_await stream.async_handshake(ssl::stream_base::client, asio::use_awaitable);
        co_await Exchange(stream, req, parser, header_first, on_2xx);
        // No TLS shutdown: the response is complete and a peer may never answer close_notify.
    } else {
        beast::tcp_stream stream(ex);
        stream.expires_at(deadline);
        co_await stream.async_connect(endpoints, asio::use_awaitable);
        co_await Exchange(stream, req, parser, header_first, on_2xx);
    }
}

// Drive runs `op` on `ioc` until it completes, translating its failure; throws Aborted when
// `cancelled` turns true and TransportError when the deadline passes first.
void Drive(asio::io_context& ioc, asio::awaitable<void> op, Clock::time_point deadline,
           const std::function<bool()>& cancelled, bool* too_large) {
    bool done = false;
    std::exception_ptr error;
    asio::co_spawn(ioc, std::move(op), [&](std::exception_ptr e) {
        error = std::move(e);
        done = true;
    });
    while (!done) {
        ioc.run_for(kSlice);
        if (done) break;
        if (cancelled && cancelled()) {
            ioc.stop();
            throw Aborted();
        }
        // The stream's own timer fires at the deadline; this catches name resolution.
        if (Clock::now() > deadline + kSlice) {
            ioc.stop();
            throw TransportError("timed out");
        }
    }
    if (!error) return;
    try {
        std::rethrow_exception(error);
    } catch (const boost::system::system_error& e) {
        if (e.code() == http::error::body_limit) {
            if (too_large != nullptr) *too_large = true;
            throw TransportError("response body larger than allowed");
        }
        if (e.code() == beast::error::timeout) throw TransportError("timed out");
        throw TransportError(e.code().message());
    }
}

Request MakeRequest(const std::string& method, const Url& url, const Headers& headers,
                    const std::string& body) {
    Request req;
    req.method_string(method);
    req.target(url.Target());
    req.version(11);
    req.set(http::field::host, url.HostHeader());
    req.set(http::field::user_agent, "genhost");
    req.set(http::field::accept, "application/json");
    for (const auto& [name, value] : headers) req.set(name, value);
    req.keep_alive(false);
    if (!body.empty()) {
        req.set(http::field::content_type, "application/json");
        req.body() = body;
    }
    req.prepare_payload();
    return req;
}

}  // namespace

Response OutboundHttp::Request(const std::string& method, const Url& url, const Headers& headers,
                               const std::string& body, std::chrono::milliseconds timeout,
                               std::size_t max_body, const std::function<bool()>& cancelled) const {
    const auto req = MakeRequest(method, url, headers, body);
    http::response_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(max_body);
    asio::io_context ioc;
    const auto deadline = Clock::now() + timeout;
    Drive(ioc, Fetch(*impl_->tls, url, req, parser, deadline, false, {}), deadline, cancelled,
          nullptr);
    Response out;
    out.status = static_cast<int>(parser.get().result_int());
    out.content_type = std::string(parser.get()[http::field::content_type]);
    out.body = std::move(parser.get().body());
    return out;
}

Response OutboundHttp::Download(const Url& url, const Headers& headers, const std::string& path,
                                std::chrono::milliseconds timeout, std::uint64_t max_bytes,
                                const std::function<bool()>& cancelled, bool* too_large) const {
    auto req = MakeRequest("GET", url, headers, "");
    req.set(http::field::accept, "*/*");
    using Parser = http::response_parser<http::file_body>;
    Parser parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(max_bytes);
    std::function<void(Parser&)> open = [&path](Parser& p) {
        beast::error_code ec;
        p.get().body().open(path.c_str(), beast::file_mode::write, ec);
        if (ec) throw std::runtime_error("cannot write " + path + ": " + ec.message());
    };
    asio::io_context ioc;
    const auto deadline = Clock::now() + timeout;
    Drive(ioc, Fetch(*impl_->tls, url, req, parser, deadline, true, std::move(open)), deadline,
          cancelled, too_large);
    Response out;
    out.status = static_cast<int>(parser.get().result_int());
    out.content_type = std::string(parser.get()[http::field::content_type]);
    return out;
}

}  // namespace genhost::providers::detail
