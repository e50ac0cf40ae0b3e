#include "genhost/outputs/s3_store.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/net/tls.hpp"
#include "genhost/net/url.hpp"
#include "genhost/outputs/sigv4.hpp"

#include <openssl/ssl.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <filesystem>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace genhost::outputs {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

void AppendUtf8(std::string& out, unsigned long cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x110000) {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

// XmlDecode replaces the five predefined entities and character references.
std::string XmlDecode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '&') {
            out.push_back(s[i]);
            continue;
        }
        const auto semi = s.find(';', i);
        if (semi == std::string_view::npos || semi - i > 12) {
            out.push_back('&');
            continue;
        }
        const std::string_view ent = s.substr(i + 1, semi - i - 1);
        if (ent == "amp") {
            out.push_back('&');
        } else if (ent == "lt") {
            out.push_back('<');
        } else if (ent == "gt") {
            out.push_back('>');
        } else if (ent == "quot") {
            out.push_back('"');
        } else if (ent == "apos") {
            out.push_back('\'');
        } else if (ent.size() > 1 && ent[0] == '#') {
            try {
                const bool hex = ent[1] == 'x' || ent[1] == 'X';
                AppendUtf8(
                    out, std::stoul(std::string(ent.substr(hex ? 2 : 1)), nullptr, hex ? 16 : 10));
            } catch (const std::exception&) {
                out.append(s.substr(i, semi - i + 1));
            }
        } else {
            out.append(s.substr(i, semi - i + 1));
        }
        i = semi;
    }
    return out;
}

// Element returns the decoded text of the first <tag>...</tag> in `xml` at or after `from`.
std::optional<std::string> Element(std::string_view xml, std::string_view tag,
                                   std::size_t from = 0) {
    const std::string open = "<" + std::string(tag) + ">";
    const std::string close = "</" + std::string(tag) + ">";
    const auto a = xml.find(open, from);
    if (a == std::string_view::npos) return std::nullopt;
    const auto b = xml.find(close, a + open.size());
    if (b == std::string_view::npos) return std::nullopt;
    return XmlDecode(xml.substr(a + open.size(), b - a - open.size()));
}

// ParseEndpoint reads the endpoint: scheme://host[:port] (a trailing '/' allowed), nothing more.
net::HttpUrl ParseEndpoint(const std::string& url) {
    const auto parsed = net::ParseHttpUrl(url);
    if (!parsed.url) {
        if (parsed.problem == net::UrlProblem::kScheme ||
            parsed.problem == net::UrlProblem::kSyntax) {
            throw std::invalid_argument("S3 endpoint must be an http:// or https:// URL: " + url);
        }
        throw std::invalid_argument("bad S3 endpoint: " + url);
    }
    if (parsed.url->path != "/" || parsed.url->has_query) {
        throw std::invalid_argument("S3 endpoint must be scheme://host[:port] without a path: " +
                                    url);
    }
    return *parsed.url;
}

struct Outcome {
    unsigned status = 0;
    std::string body;
    std::string content_type;
    std::optional<std::uint64_t> content_length;
    bool keep_alive = false;  // the server keeps the connection open for another request
};

// Connection is one open connection to the endpoint, with the I/O context its requests run on
// (declared first: the streams go before it).
struct Connection {
    asio::io_context ioc{1};
    std::unique_ptr<beast::tcp_stream> plain;
    std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
    std::chrono::steady_clock::time_point idle_since;
    bool open() const { return plain != nullptr || tls != nullptr; }
};

// Idle connections are kept this long at most (under the common servers' keep-alive timeouts),
// and this many at most.
constexpr auto kIdleFor = std::chrono::seconds(15);
constexpr std::size_t kMaxIdle = 8;

}  // namespace

ListPage ParseListObjectsV2(std::string_view xml) {
    ListPage page;
    std::size_t pos = 0;
    while (true) {
        const auto a = xml.find("<Contents>", pos);
        if (a == std::string_view::npos) break;
        const auto b = xml.find("</Contents>", a);
        if (b == std::string_view::npos) break;
        if (auto key = Element(xml.substr(a, b - a), "Key")) page.keys.push_back(std::move(*key));
        pos = b;
    }
    page.truncated = Element(xml, "IsTruncated").value_or("false") == "true";
    page.next_token = Element(xml, "NextContinuationToken").value_or("");
    return page;
}

struct S3OutputStore::Impl {
    S3Options options;
    net::HttpUrl endpoint;
    std::string host_header;  // Host of every request (bucket.host when virtual-hosted)
    std::string connect_host;
    std::unique_ptr<ssl::context> tls;
    sigv4::Credentials credentials;
    metrics::Family* requests = nullptr;   // genhost_s3_requests_total, when counted
    metrics::Family* durations = nullptr;  // genhost_s3_request_duration_seconds
    mutable std::mutex idle_mu;
    mutable std::vector<std::unique_ptr<Connection>> idle;  // the newest last

    explicit Impl(S3Options o) : options(std::move(o)) {
        if (options.metrics != nullptr) {
            requests = &options.metrics->Counter(
                "genhost_s3_requests_total",
                "Requests to the S3 output store by method and status class (2xx, 4xx, 5xx, ...; "
                "error: no answer, such as a refused connection or a timeout).",
                {"method", "status"});
            durations = &options.metrics->Histogram(
                "genhost_s3_request_duration_seconds",
                "Time of a request to the S3 output store, answered or not, by method.", {"method"},
                metrics::kShortSecondsBuckets);
        }
        if (options.bucket.empty()) throw std::invalid_argument("S3 bucket is not set");
        if (options.access_key_id.empty() || options.secret_access_key.empty()) {
            throw std::invalid_argument("S3 access key id and secret access key are not set");
        }
        if (options.region.empty()) options.region = "us-east-1";
        if (options.list_max_keys < 1) options.list_max_keys = 1000;
        if (options.attempts < 1) options.attempts = 1;
        endpoint = ParseEndpoint(options.endpoint);
        const std::string port_suffix = endpoint.default_port ? "" : ":" + endpoint.PortString();
        if (options.path_style) {
            connect_host = endpoint.host;
            host_header = endpoint.HostHeader();
        } else {
            connect_host = options.bucket + "." + endpoint.host;
            host_header = connect_host + port_suffix;
        }
        credentials = sigv4::Credentials{options.access_key_id, options.secret_access_key,
                                         options.region, "s3"};
        if (endpoint.tls) {
            tls = net::ClientTlsContext({options.ca_file.empty(), options.ca_file});
        }
    }

    std::string Key(std::string_view task_id, std::string_view name) const {
        if (!IsSafeObjectName(task_id) || !IsSafeObjectName(name)) {
            throw std::invalid_argument("unsafe object name");
        }
        std::string key = options.prefix;
        key.append(task_id).append("/").append(name);
        return key;
    }

    // Path returns the encoded request path of `key` (the bucket itself for an empty key).
    std::string Path(const std::string& key) const {
        std::string path;
        if (options.path_style) path = "/" + sigv4::UriEncode(options.bucket, true);
        if (!key.empty() || path.empty()) path += "/" + sigv4::UriEncode(key, false);
        return path;
    }

    // Sign sets the method, target, Host, x-amz-* headers and Authorization of `req`.
    template <class Body>
    void Sign(http::request<Body>& req, const std::string& method, const std::string& path,
              const sigv4::Pairs& query, const std::string& payload_hash) const {
        const std::string date = sigv4::AmzDate(std::chrono::system_clock::now());
        sigv4::Request sr;
        sr.method = method;
        sr.canonical_uri = path;
        sr.query = query;
        sr.headers = {
            {"host", host_header}, {"x-amz-content-sha256", payload_hash}, {"x-amz-date", date}};
        sr.payload_hash = payload_hash;
        const std::string q = sigv4::CanonicalQuery(query);
        req.method_string(method);
        req.target(q.empty() ? path : path + "?" + q);
        req.version(11);
        req.set(http::field::host, host_header);
        req.set(http::field::user_agent, "genhost");
        req.set("x-amz-content-sha256", payload_hash);
        req.set("x-amz-date", date);
        req.set(http::field::authorization, sigv4::Authorization(credentials, date, sr));
    }

    template <class Stream, class Body>
    asio::awaitable<void> Exchange(Stream& stream, beast::tcp_stream& lowest,
                                   http::request<Body>& req, bool head, std::uint64_t body_limit,
                                   Outcome& out) const {
        // The timeout bounds each step (a stalled transfer), not the whole transfer, so large
        // files stream as long as they keep moving.
        http::request_serializer<Body> serializer(req);
        while (!serializer.is_done()) {
            lowest.expires_after(options.timeout);
            co_await http::async_write_some(stream, serializer, asio::use_awaitable);
        }
        beast::flat_buffer buffer;
        http::response_parser<http::string_body> parser;
        parser.header_limit(64 * 1024);
        parser.body_limit(body_limit);
        if (head) parser.skip(true);
        while (!parser.is_done()) {
            lowest.expires_after(options.timeout);
            co_await http::async_read_some(stream, buffer, parser, asio::use_awaitable);
        }
        auto& res = parser.get();
        out.status = res.result_int();
        out.content_type = std::string(res[http::field::content_type]);
        const auto length = res[http::field::content_length];
        if (!length.empty()) {
            try {
                out.content_length = std::stoull(std::string(length));
            } catch (const std::exception&) {
            }
        }
        out.body = std::move(res.body());
        out.keep_alive = res.keep_alive();
    }

    // Run sends `req` on `conn`, connecting it first when it is not open.
    template <class Body>
    asio::awaitable<void> Run(Connection& conn, http::request<Body>& req, bool head,
                              std::uint64_t body_limit, Outcome& out) const {
        auto ex = co_await asio::this_coro::executor;
        if (!conn.open()) {
            tcp::resolver resolver(ex);
            const auto results = co_await resolver.async_resolve(
                connect_host, endpoint.PortString(), asio::use_awaitable);
            if (endpoint.tls) {
                conn.tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ex, *tls);
                auto& stream = *conn.tls;
                net::VerifyHost(stream.native_handle(), connect_host);
                auto& lowest = beast::get_lowest_layer(stream);
                lowest.expires_after(options.timeout);
                co_await lowest.async_connect(results, asio::use_awaitable);
                lowest.expires_after(options.timeout);
                co_await stream.async_handshake(ssl::stream_base::client, asio::use_awaitable);
            } else {
                conn.plain = std::make_unique<beast::tcp_stream>(ex);
                conn.plain->expires_after(options.timeout);
                co_await conn.plain->async_connect(results, asio::use_awaitable);
            }
        }
        if (conn.tls) {
            co_await Exchange(*conn.tls, beast::get_lowest_layer(*conn.tls), req, head, body_limit,
                              out);
        } else {
            co_await Exchange(*conn.plain, *conn.plain, req, head, body_limit, out);
        }
    }

    // TakeIdle returns an idle connection that is still young enough, or a new, unopened one.
    std::unique_ptr<Connection> TakeIdle() const {
        std::lock_guard lock(idle_mu);
        const auto now = std::chrono::steady_clock::now();
        while (!idle.empty()) {
            auto conn = std::move(idle.back());
            idle.pop_back();
            if (now - conn->idle_since < kIdleFor) return conn;
        }
        return std::make_unique<Connection>();
    }

    void GiveBack(std::unique_ptr<Connection> conn) const {
        conn->idle_since = std::chrono::steady_clock::now();
        std::lock_guard lock(idle_mu);
        if (idle.size() >= kMaxIdle) idle.erase(idle.begin());
        idle.push_back(std::move(conn));
    }

    void DropIdle() const {
        std::lock_guard lock(idle_mu);
        idle.clear();
    }

    // Send performs the request, again after a transport failure or a 5xx while attempts are
    // left (options.attempts, backing off from options.retry_base); `rewind` readies the body for
    // another attempt. Transport failures become std::runtime_error naming the request.
    template <class Body>
    Outcome Send(http::request<Body>& req, const std::string& what, bool head,
                 std::uint64_t body_limit, const std::function<void()>& rewind = {}) const {
        auto delay = options.retry_base;
        for (int attempt = 1;; ++attempt) {
            const bool last = attempt >= options.attempts;
            bool stale = false;
            try {
                Outcome out = SendOnce(req, what, head, body_limit, stale);
                if (out.status < 500 || last) return out;
            } catch (const std::runtime_error&) {
                if (stale) {
                    // A kept connection the server had closed meanwhile: the others are likely
                    // closed too. Sent again on a new one at once, not counted as an attempt.
                    DropIdle();
                    if (rewind) rewind();
                    --attempt;
                    continue;
                }
                if (last) throw;
            }
            std::this_thread::sleep_for(delay);
            delay *= 2;
            if (rewind) rewind();
        }
    }

    // SendOnce performs one request, on an idle connection when there is one (kept for the next
    // request when the server allows it). `stale` turns true when a kept connection failed.
    template <class Body>
    Outcome SendOnce(http::request<Body>& req, const std::string& what, bool head,
                     std::uint64_t body_limit, bool& stale) const {
        auto conn = TakeIdle();
        const bool reused = conn->open();
        Outcome out;
        std::exception_ptr error;
        const auto started = std::chrono::steady_clock::now();
        asio::co_spawn(conn->ioc, Run(*conn, req, head, body_limit, out),
                       [&](std::exception_ptr e) { error = std::move(e); });
        conn->ioc.restart();
        conn->ioc.run();
        if (!error && out.keep_alive) GiveBack(std::move(conn));
        if (error && reused) {
            stale = true;
            throw std::runtime_error("S3 " + what + ": a kept connection was closed");
        }
        if (requests != nullptr) {
            const std::string method(req.method_string());
            const std::string status = error ? "error" : std::to_string(out.status / 100) + "xx";
            requests->Inc({method, status});
            durations->Observe(
                {method},
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        }
        if (error) {
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                throw std::runtime_error("S3 " + what + ": " + e.what());
            }
        }
        return out;
    }

    [[noreturn]] static void Fail(const std::string& what, const Outcome& out) {
        std::string message = "S3 " + what + ": " + std::to_string(out.status);
        if (auto code = Element(out.body, "Code")) {
            message += " " + *code;
            if (auto text = Element(out.body, "Message"); text && !text->empty()) {
                message += ": " + *text;
            }
        }
        throw std::runtime_error(message);
    }

    // Simple sends a request with a small in-memory body and reads the whole response.
    Outcome Simple(const std::string& method, const std::string& key, const sigv4::Pairs& query,
                   std::string_view body, const std::string& content_type,
                   const std::string& extra_name, const std::string& extra_value,
                   std::uint64_t body_limit) const {
        http::request<http::string_body> req;
        const std::string path = Path(key);
        Sign(req, method, path, query, HexEncode(Sha256(body)));
        if (!content_type.empty()) req.set(http::field::content_type, content_type);
        if (!extra_name.empty()) req.set(extra_name, extra_value);
        req.body() = std::string(body);
        if (method == "PUT" || method == "POST" || !body.empty()) req.prepare_payload();
        return Send(req, method + " " + key, method == "HEAD", body_limit);
    }

    ListPage ListPageOf(const std::string& prefix, const std::string& token) const {
        sigv4::Pairs query = {{"list-type", "2"},
                              {"prefix", prefix},
                              {"max-keys", std::to_string(options.list_max_keys)}};
        if (!token.empty()) query.emplace_back("continuation-token", token);
        const Outcome out = Simple("GET", "", query, "", "", "", "", 64 * 1024 * 1024);
        if (out.status != 200) Fail("GET list " + prefix, out);
        return ParseListObjectsV2(out.body);
    }

    std::vector<std::string> ListKeys(const std::string& prefix) const {
        std::vector<std::string> keys;
        std::string token;
        while (true) {
            ListPage page = ListPageOf(prefix, token);
            for (auto& k : page.keys) keys.push_back(std::move(k));
            if (!page.truncated) break;
            if (page.next_token.empty() || page.next_token == token) {
                throw std::runtime_error("S3 GET list " + prefix +
                                         ": truncated listing without a continuation token");
            }
            token = std::move(page.next_token);
        }
        return keys;
    }

    void DeleteKey(const std::string& key) const {
        const Outcome out = Simple("DELETE", key, {}, "", "", "", "", 1024 * 1024);
        if (out.status / 100 != 2 && out.status != 404) Fail("DELETE " + key, out);
    }
};

S3OutputStore::S3OutputStore(S3Options options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

S3OutputStore::~S3OutputStore() = default;

void S3OutputStore::Put(std::string_view task_id, std::string_view name, std::string_view data) {
    const std::string key = impl_->Key(task_id, name);
    const Outcome out =
        impl_->Simple("PUT", key, {}, data, ContentTypeFor(name), "", "", 1024 * 1024);
    if (out.status / 100 != 2) Impl::Fail("PUT " + key, out);
}

void S3OutputStore::PutFile(std::string_view task_id, std::string_view name,
                            const std::string& path) {
    const std::string key = impl_->Key(task_id, name);
    http::request<http::file_body> req;
    beast::error_code ec;
    req.body().open(path.c_str(), beast::file_mode::scan, ec);
    if (ec)
        throw std::runtime_error("S3 PUT " + key + ": cannot open " + path + ": " + ec.message());
    const std::string target = impl_->Path(key);
    impl_->Sign(req, "PUT", target, {}, std::string(sigv4::kUnsignedPayload));
    req.set(http::field::content_type, ContentTypeFor(name));
    req.prepare_payload();  // Content-Length from the file's size; the body streams in chunks
    const Outcome out = impl_->Send(req, "PUT " + key, false, 1024 * 1024, [&] {
        beast::error_code seek_error;
        req.body().file().seek(0, seek_error);  // the next attempt sends the file from its start
        if (seek_error) {
            throw std::runtime_error("S3 PUT " + key + ": cannot rewind " + path + ": " +
                                     seek_error.message());
        }
    });
    if (out.status / 100 != 2) Impl::Fail("PUT " + key, out);
    req.body().close();
    std::filesystem::remove(path);
}

std::optional<ObjectInfo> S3OutputStore::Stat(std::string_view task_id, std::string_view name) {
    if (!IsSafeObjectName(task_id) || !IsSafeObjectName(name)) return std::nullopt;
    const std::string key = impl_->Key(task_id, name);
    const Outcome out = impl_->Simple("HEAD", key, {}, "", "", "", "", 0);
    if (out.status == 404) return std::nullopt;
    if (out.status / 100 != 2) Impl::Fail("HEAD " + key, out);
    ObjectInfo info;
    info.size = out.content_length.value_or(0);
    info.content_type = out.content_type.empty() ? ContentTypeFor(name) : out.content_type;
    return info;
}

std::string S3OutputStore::Read(std::string_view task_id, std::string_view name,
                                std::uint64_t offset, std::uint64_t length) {
    const std::string key = impl_->Key(task_id, name);
    if (length == 0) return std::string();
    const std::uint64_t last = offset + length - 1;
    const Outcome out =
        impl_->Simple("GET", key, {}, "", "", "Range",
                      "bytes=" + std::to_string(offset) + "-" + std::to_string(last),
                      offset + length + 64 * 1024);
    if (out.status == 206) {
        std::string body = out.body;
        if (body.size() > length) body.resize(static_cast<std::size_t>(length));
        return body;
    }
    if (out.status == 200) {  // a server that ignores Range sends the whole object
        if (offset >= out.body.size()) return std::string();
        return out.body.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
    }
    if (out.status == 416) return std::string();  // the range starts past the end
    Impl::Fail("GET " + key, out);
}

void S3OutputStore::DeleteObject(std::string_view task_id, std::string_view name) {
    if (!IsSafeObjectName(task_id) || !IsSafeObjectName(name)) return;
    impl_->DeleteKey(impl_->Key(task_id, name));
}

std::vector<std::string> S3OutputStore::ListTask(std::string_view task_id) {
    if (!IsSafeObjectName(task_id)) return {};
    const std::string prefix = impl_->options.prefix + std::string(task_id) + "/";
    std::vector<std::string> names;
    for (auto& key : impl_->ListKeys(prefix)) {
        if (key.rfind(prefix, 0) == 0) names.push_back(key.substr(prefix.size()));
    }
    return names;
}

void S3OutputStore::DeleteTask(std::string_view task_id) {
    if (!IsSafeObjectName(task_id)) return;
    const std::string prefix = impl_->options.prefix + std::string(task_id) + "/";
    for (const auto& key : impl_->ListKeys(prefix)) {
        if (key.rfind(prefix, 0) == 0) impl_->DeleteKey(key);
    }
}

}  // namespace genhost::outputs
