#include "genhost/net/url.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <algorithm>

namespace genhost::net {

namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// NeedsEncoding: bytes that may not appear raw in a URL (and an HTTP request target).
bool NeedsEncoding(unsigned char c) {
    return c >= 0x80 || c == ' ' || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' ||
           c == '`' || c == '{' || c == '|' || c == '}';
}

std::string EncodeRaw(std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (NeedsEncoding(c)) {
            out.push_back('%');
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xF]);
        } else {
            out.push_back(ch);
        }
    }
    return out;
}

ParsedUrl Refuse(UrlProblem problem, std::string scheme = {}) {
    ParsedUrl out;
    out.problem = problem;
    out.scheme = std::move(scheme);
    return out;
}

}  // namespace

std::string HttpUrl::HostHeader() const {
    const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return default_port ? h : h + ":" + PortString();
}

// SchemeOf reads the scheme ahead of ':' (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )),
// lower-case; empty when there is none.
std::string SchemeOf(std::string_view text) {
    const auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos || colon == 0 || !alpha(text[0])) return {};
    std::string scheme;
    for (const char c : text.substr(0, colon)) {
        if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return {};
        scheme.push_back(Lower(c));
    }
    return scheme;
}

ParsedUrl ParseHttpUrl(std::string_view text, UrlOptions options) {
    // Another scheme is said so even when the rest would not parse (file:, gopher:, ...).
    const std::string scheme_ahead = SchemeOf(text);
    if (!scheme_ahead.empty() && scheme_ahead != "http" && scheme_ahead != "https") {
        return Refuse(UrlProblem::kScheme, scheme_ahead);
    }
    // Control characters are never encoded: they are refused, as Boost.URL refuses them.
    for (const char c : text) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return Refuse(UrlProblem::kSyntax);
    }
    std::string encoded;
    if (options.encode_raw) {
        encoded = EncodeRaw(text);
        text = encoded;
    }
    const auto parsed = boost::urls::parse_uri(text);
    if (!parsed) return Refuse(UrlProblem::kSyntax);
    const boost::urls::url_view& u = *parsed;
    std::string scheme(u.scheme());
    std::transform(scheme.begin(), scheme.end(), scheme.begin(), Lower);
    if (scheme != "http" && scheme != "https") return Refuse(UrlProblem::kScheme, scheme);
    if (u.has_userinfo()) return Refuse(UrlProblem::kUserInfo, scheme);
    if (u.has_fragment() && !options.drop_fragment) return Refuse(UrlProblem::kFragment, scheme);
    if (!u.has_authority()) return Refuse(UrlProblem::kHost, scheme);
    HttpUrl url;
    url.scheme = scheme;
    url.tls = scheme == "https";
    switch (u.host_type()) {
        case boost::urls::host_type::name:
            // A percent-encoded name is refused: no DNS name needs one, and it would hide what
            // a policy on names checks.
            url.host = std::string(u.encoded_host_name());
            if (url.host.find('%') != std::string::npos) return Refuse(UrlProblem::kHost, scheme);
            std::transform(url.host.begin(), url.host.end(), url.host.begin(), Lower);
            break;
        case boost::urls::host_type::ipv4:
        case boost::urls::host_type::ipv6:
        case boost::urls::host_type::ipvfuture:
            url.host = u.host_address();
            url.ip_literal = true;
            break;
        case boost::urls::host_type::none:
            break;
    }
    if (url.host.empty()) return Refuse(UrlProblem::kHost, scheme);
    url.port = url.tls ? 443 : 80;
    if (u.has_port() && !u.port().empty()) {
        const std::string_view port(u.port().data(), u.port().size());
        if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) {
            return Refuse(UrlProblem::kPort, scheme);
        }
        unsigned value = 0;
        for (const char c : port) value = value * 10 + static_cast<unsigned>(c - '0');
        if (value == 0 || value > 65535) return Refuse(UrlProblem::kPort, scheme);
        url.port = static_cast<std::uint16_t>(value);
        url.default_port = url.port == (url.tls ? 443 : 80);
    }
    url.path = std::string(u.encoded_path());
    // After an authority the path is empty or begins with '/' (RFC 3986 path-abempty); Boost.URL
    // 1.81 reads "host:12ab/" as port 12 and path "ab/".
    if (!url.path.empty() && url.path.front() != '/') return Refuse(UrlProblem::kSyntax, scheme);
    if (url.path.empty()) url.path = "/";
    url.has_query = u.has_query();
    url.query = std::string(u.encoded_query());
    ParsedUrl out;
    out.url = std::move(url);
    out.scheme = std::move(scheme);
    return out;
}

std::optional<HttpUrl> Resolve(const HttpUrl& base, std::string_view reference) {
    if (reference.size() >= 2 && reference[0] == '/' && reference[1] != '/') {
        return ParseHttpUrl(base.Origin() + std::string(reference)).url;
    }
    return ParseHttpUrl(reference).url;
}

}  // namespace genhost::net
