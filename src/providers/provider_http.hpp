// The outbound HTTP client of the HTTP provider, private to src/providers: one request per
// connection over plain HTTP or verified TLS, every wait bounded by a deadline, and a caller's
// cancellation predicate polled every 20 ms so a cancelled request lets go at once.
//
// Blocking: each call runs its own io_context on the calling (worker) thread.
#pragma once

#include "genhost/net/url.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace genhost::providers::detail {

// Url is an absolute http or https URL split for a request (genhost/net/url.hpp, the one URL
// parser).
using Url = net::HttpUrl;

// ParseUrl reads an absolute http:// or https:// URL; nullopt when it is anything else
// (another scheme, user info, a fragment, characters a URL cannot hold, an empty host).
inline std::optional<Url> ParseUrl(std::string_view url) { return net::ParseHttpUrl(url).url; }

// Resolve returns `reference` as a URL: absolute http(s) URLs as they are, paths beginning with
// "/" against `base`'s scheme, host and port. nullopt for anything else.
inline std::optional<Url> Resolve(const Url& base, std::string_view reference) {
    return net::Resolve(base, reference);
}

// TransportError is a failure to get an HTTP response at all: DNS, connect, TLS (including a
// certificate that does not verify), a timeout, a malformed or oversized response.
class TransportError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Aborted is thrown when the caller's cancellation predicate turned true mid-request.
class Aborted : public std::runtime_error {
  public:
    Aborted() : std::runtime_error("request aborted") {}
};

struct Response {
    int status = 0;
    std::string content_type;
    std::string body;  // empty for Download
};

using Headers = std::vector<std::pair<std::string, std::string>>;

class OutboundHttp {
  public:
    // `ca_file`: PEM bundle trusted for https (empty: the system's trust store).
    explicit OutboundHttp(const std::string& ca_file);
    ~OutboundHttp();
    OutboundHttp(const OutboundHttp&) = delete;
    OutboundHttp& operator=(const OutboundHttp&) = delete;

    // Request sends `method target` with `body` (JSON when non-empty) and reads the response
    // whole, at most `max_body` bytes. Throws TransportError or Aborted.
    Response Request(const std::string& method, const Url& url, const Headers& headers,
                     const std::string& body, std::chrono::milliseconds timeout,
                     std::size_t max_body, const std::function<bool()>& cancelled) const;

    // Download GETs `url` and streams a 2xx body into the file `path` (created or truncated),
    // refusing bodies over `max_bytes` (TransportError with `too_large` set). A non-2xx status
    // is returned without writing. Throws TransportError or Aborted.
    Response Download(const Url& url, const Headers& headers, const std::string& path,
                      std::chrono::milliseconds timeout, std::uint64_t max_bytes,
                      const std::function<bool()>& cancelled, bool* too_large) const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace genhost::providers::detail
