// genhost/net/url.hpp
//
// Provides HttpUrl and ParseHttpUrl: the one reading of the absolute http and https URLs that
// genhost sends requests to (the asset fetcher, the HTTP providers, the chat-completions engine
// and S3), on Boost.URL's RFC 3986 parser. Each user adds its own policy on top (the asset
// fetcher: https only, DNS names only; S3: no path), never a parser of its own.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace genhost::net {

// HttpUrl is an absolute http or https URL split for a request.
struct HttpUrl {
    std::string scheme;       // "http" or "https"
    bool tls = false;         // https
    std::string host;         // a lower-case DNS name, or an IP address without brackets
    bool ip_literal = false;  // the host is an IPv4 address or a bracketed IPv6 (or future) one
    std::uint16_t port = 0;   // the URL's port, or the scheme's
    bool default_port = true;
    std::string path;   // percent-encoded, at least "/"
    std::string query;  // percent-encoded, without the '?'; empty when none
    bool has_query = false;

    std::string PortString() const { return std::to_string(port); }
    // Target is the origin-form request target: the path and the query.
    std::string Target() const { return has_query ? path + "?" + query : path; }
    // HostHeader is host[:port] as a Host header carries it (brackets for IPv6, no port when it is
    // the scheme's).
    std::string HostHeader() const;
    // Origin is scheme://HostHeader().
    std::string Origin() const { return scheme + "://" + HostHeader(); }
};

// UrlProblem says why a text is not an HttpUrl.
enum class UrlProblem {
    kSyntax,    // not an absolute URL (RFC 3986), or characters a URL cannot hold
    kScheme,    // a scheme other than http or https
    kUserInfo,  // credentials in the URL
    kFragment,  // a fragment, where none is allowed
    kHost,      // no host
    kPort,      // a port of 0 or above 65535
};

struct UrlOptions {
    // Bytes a request line cannot carry raw (space, non-ASCII, `"<>\^`{|}`) are percent-encoded
    // before parsing instead of refused (an asset URL pasted from a browser).
    bool encode_raw = false;
    // A fragment is dropped (it never leaves the client) instead of refused.
    bool drop_fragment = false;
};

struct ParsedUrl {
    std::optional<HttpUrl> url;
    UrlProblem problem = UrlProblem::kSyntax;  // when !url
    std::string scheme;                        // the scheme read, lower-case, even when refused
};

// ParseHttpUrl reads `text`; see UrlProblem for what it refuses.
ParsedUrl ParseHttpUrl(std::string_view text, UrlOptions options = {});

// Resolve answers `reference` as a URL: an absolute http(s) URL as it is, a path beginning with a
// single "/" against `base`'s origin. nullopt for anything else (a relative path, a
// network-path reference, a fragment, another scheme).
std::optional<HttpUrl> Resolve(const HttpUrl& base, std::string_view reference);

}  // namespace genhost::net
