#include "genhost/assets/fetcher.hpp"

#include "genhost/net/tls.hpp"

#include "genhost/assets/address_policy.hpp"
#include "genhost/assets/content_types.hpp"
#include "genhost/assets/url.hpp"
#include "genhost/core/version.hpp"

#include <openssl/ssl.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace genhost::assets {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kChunkBytes = 64 * 1024;
constexpr std::uint32_t kHeaderLimit = 16 * 1024;

struct FileCloser {
    void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

double Seconds(std::chrono::milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }

// Job is one download: what it needs and where its outcome goes.
struct Job {
    const AssetUrl& url;
    const std::vector<tcp::endpoint>& endpoints;
    MediaKind kind;
    std::uint64_t max_bytes;
    const std::string& destination;
    Clock::time_point deadline;
    std::chrono::milliseconds timeout;
    const std::string& user_agent;
    Result<FetchedAsset>& outcome;
};

AssetFailure NetworkFailure(const Job& job, const char* stage,
                            const boost::system::error_code& ec) {
    if (ec == beast::error::timeout || Clock::now() >= job.deadline) {
        return Fail(FailureKind::kTimeout, messages::Timeout(Seconds(job.timeout)),
                    std::string(stage) + ": timed out");
    }
    return Fail(FailureKind::kFetchFailed, messages::kFetchFailed,
                std::string(stage) + ": " + ec.message());
}

asio::awaitable<void> Download(ssl::context& tls, Job job) {
    const auto executor = co_await asio::this_coro::executor;
    beast::ssl_stream<beast::tcp_stream> stream(executor, tls);
    // SNI, and the certificate must name the host (OpenSSL checks it during the handshake).
    net::VerifyHost(stream.native_handle(), job.url.host);
    auto& socket = beast::get_lowest_layer(stream);
    socket.expires_at(job.deadline);
    boost::system::error_code ec;

    co_await socket.async_connect(job.endpoints, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        job.outcome = NetworkFailure(job, "connect", ec);
        co_return;
    }
    co_await stream.async_handshake(ssl::stream_base::client,
                                    asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        job.outcome = NetworkFailure(job, "TLS handshake", ec);
        co_return;
    }

    http::request<http::empty_body> request{http::verb::get, job.url.target, 11};
    request.set(http::field::host, job.url.host_header);
    request.set(http::field::user_agent, job.user_agent);
    request.set(http::field::accept, "*/*");
    request.set(http::field::accept_encoding, "identity");
    request.set(http::field::connection, "close");
    co_await http::async_write(stream, request, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        job.outcome = NetworkFailure(job, "sending the request", ec);
        co_return;
    }

    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(boost::none);  // the kind's cap is enforced below, after the status
    co_await http::async_read_header(stream, buffer, parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        job.outcome = NetworkFailure(job, "reading the response header", ec);
        co_return;
    }
    auto& response = parser.get();
    if (response.result_int() != 200) {
        job.outcome = Fail(FailureKind::kHttpStatus, messages::HttpStatus(response.result_int()),
                           "status " + std::to_string(response.result_int()));
        co_return;
    }
    const auto content_type = response[http::field::content_type];
    if (content_type.empty()) {
        job.outcome = Fail(FailureKind::kContentType, messages::kContentTypeMissing);
        co_return;
    }
    const std::string media_type = NormalizeMediaType(content_type);
    if (!IsApprovedMediaType(media_type, job.kind)) {
        job.outcome = Fail(FailureKind::kContentType,
                           messages::ContentType(media_type, MediaKindName(job.kind)));
        co_return;
    }
    if (parser.chunked() || !parser.content_length()) {
        job.outcome = Fail(FailureKind::kNoContentLength, messages::kNoContentLength);
        co_return;
    }
    const std::uint64_t expected = *parser.content_length();
    if (expected > job.max_bytes) {
        job.outcome = Fail(FailureKind::kTooLarge, messages::kTooLarge,
                           "Content-Length " + std::to_string(expected));
        co_return;
    }

    FilePtr file(std::fopen(job.destination.c_str(), "wb"));
    if (!file) throw std::runtime_error("cannot create " + job.destination);
    std::vector<char> chunk(kChunkBytes);
    std::uint64_t received = 0;
    while (!parser.is_done()) {
        response.body().data = chunk.data();
        response.body().size = chunk.size();
        co_await http::async_read(stream, buffer, parser,
                                  asio::redirect_error(asio::use_awaitable, ec));
        if (ec == http::error::need_buffer) ec = {};
        const std::size_t n = chunk.size() - response.body().size;
        if (n > 0) {
            received += n;
            if (received > job.max_bytes) {  // unreachable with a Content-Length; kept as a bound
                job.outcome = Fail(FailureKind::kTooLarge, messages::kTooLarge, "body too large");
                co_return;
            }
            if (std::fwrite(chunk.data(), 1, n, file.get()) != n) {
                throw std::runtime_error("cannot write " + job.destination);
            }
        }
        if (!ec) continue;
        if (ec == http::error::partial_message || ec == asio::error::eof ||
            ec == ssl::error::stream_truncated) {
            // The server closed before Content-Length bytes arrived.
            job.outcome = Fail(FailureKind::kTooLarge, messages::kTooLarge,
                               "received " + std::to_string(received) + " of " +
                                   std::to_string(expected) + " bytes");
        } else {
            job.outcome = NetworkFailure(job, "reading the body", ec);
        }
        co_return;
    }
    if (buffer.size() > 0) {
        // Bytes beyond Content-Length arrived with the body.
        job.outcome = Fail(FailureKind::kTooLarge, messages::kTooLarge,
                           "more bytes than Content-Length " + std::to_string(expected));
        co_return;
    }
    if (std::fflush(file.get()) != 0) throw std::runtime_error("cannot write " + job.destination);
    file.reset();
    job.outcome = FetchedAsset{job.destination, media_type, received};
}

}  // namespace

struct Fetcher::Impl {
    std::unique_ptr<ssl::context> tls;
};

std::map<std::string, TestEndpoint> ParseTestHosts(std::string_view spec) {
    std::map<std::string, TestEndpoint> out;
    while (!spec.empty()) {
        const std::size_t comma = spec.find(',');
        const std::string_view entry = spec.substr(0, comma);
        spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
        if (entry.empty()) continue;
        const std::size_t eq = entry.find('=');
        const std::size_t colon = entry.rfind(':');
        if (eq == std::string_view::npos || colon == std::string_view::npos || colon < eq) {
            throw std::invalid_argument("test host entry is not name=address:port: " +
                                        std::string(entry));
        }
        std::string name(entry.substr(0, eq));
        std::string address(entry.substr(eq + 1, colon - eq - 1));
        if (address.size() > 2 && address.front() == '[' && address.back() == ']') {
            address = address.substr(1, address.size() - 2);
        }
        boost::system::error_code ec;
        const auto parsed = asio::ip::make_address(address, ec);
        if (ec || !parsed.is_loopback()) {
            throw std::invalid_argument("test host address must be a loopback address: " +
                                        std::string(entry));
        }
        int port = 0;
        try {
            port = std::stoi(std::string(entry.substr(colon + 1)));
        } catch (const std::exception&) {
            port = 0;
        }
        if (port <= 0 || port > 65535) {
            throw std::invalid_argument("test host port is invalid: " + std::string(entry));
        }
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        out[name] = TestEndpoint{address, static_cast<std::uint16_t>(port)};
    }
    return out;
}

Fetcher::Fetcher(FetcherOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
    if (options_.user_agent.empty()) {
        options_.user_agent =
            std::string("genhost/") + genhost::Version() + " API/2024-11-06 (asset fetcher)";
    }
    impl_->tls = net::ClientTlsContext({options_.system_cas, options_.test_ca_file});
}

Fetcher::~Fetcher() = default;

Result<FetchedAsset> Fetcher::Fetch(std::string_view url, MediaKind kind, std::uint64_t max_bytes,
                                    const std::string& destination) const {
    const auto deadline = Clock::now() + options_.timeout;
    auto parsed = ParseAssetUrl(url);
    if (!parsed) return parsed.error();
    const AssetUrl& target = *parsed;

    asio::io_context io(1);
    std::vector<tcp::endpoint> endpoints;
    if (const auto mapped = options_.test_hosts.find(target.host);
        mapped != options_.test_hosts.end()) {
        endpoints.emplace_back(asio::ip::make_address(mapped->second.address), mapped->second.port);
    } else {
        tcp::resolver resolver(io);
        boost::system::error_code ec;
        const auto results = resolver.resolve(target.host, std::to_string(target.port), ec);
        if (Clock::now() >= deadline) {
            return Fail(FailureKind::kTimeout, messages::Timeout(Seconds(options_.timeout)),
                        "DNS lookup of " + target.host + " timed out");
        }
        if (ec || results.empty()) {
            return Fail(FailureKind::kFetchFailed, messages::kFetchFailed,
                        "DNS lookup of " + target.host + ": " + ec.message());
        }
        for (const auto& entry : results) {
            const tcp::endpoint endpoint = entry.endpoint();
            if (const auto refused = RefusedRange(endpoint.address())) {
                return Fail(FailureKind::kFetchFailed, messages::kFetchFailed,
                            target.host + " resolves to " + endpoint.address().to_string() + " (" +
                                *refused + ")");
            }
            if (std::find(endpoints.begin(), endpoints.end(), endpoint) == endpoints.end()) {
                endpoints.push_back(endpoint);
            }
        }
    }

    Result<FetchedAsset> outcome =
        Fail(FailureKind::kFetchFailed, messages::kFetchFailed, "download did not finish");
    std::exception_ptr error;
    asio::co_spawn(
        io,
        Download(*impl_->tls, Job{target, endpoints, kind, max_bytes, destination, deadline,
                                  options_.timeout, options_.user_agent, outcome}),
        [&error](std::exception_ptr e) { error = e; });
    io.run();
    if (error || !outcome) {
        std::error_code ignored;
        std::filesystem::remove(destination, ignored);
    }
    if (error) std::rethrow_exception(error);
    return outcome;
}

}  // namespace genhost::assets
