#include "genhost/assets/url.hpp"

#include "genhost/assets/address_policy.hpp"

namespace genhost::assets {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

AssetFailure Invalid(std::string detail) {
    return Fail(FailureKind::kInvalidUrl, messages::kInvalidUrl, std::move(detail));
}

// NeedsEncoding: bytes that may not appear raw in an HTTP request target.
bool NeedsEncoding(unsigned char c) {
    return c >= 0x80 || c == ' ' || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' ||
           c == '`' || c == '{' || c == '|' || c == '}';
}

}  // namespace

Result<AssetUrl> ParseAssetUrl(std::string_view url) {
    // scheme ":" per RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
    const std::size_t colon = url.find(':');
    if (colon == std::string_view::npos || colon == 0 || !IsAlpha(url[0])) {
        return Invalid("no scheme");
    }
    std::string scheme;
    for (char c : url.substr(0, colon)) {
        if (!IsAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.') {
            return Invalid("bad scheme");
        }
        scheme.push_back(Lower(c));
    }
    if (scheme != "https") {
        return Fail(FailureKind::kHttpsOnly, messages::kHttpsOnly, "scheme " + scheme);
    }
    std::string_view rest = url.substr(colon + 1);
    if (rest.substr(0, 2) != "//") return Invalid("no authority");
    rest.remove_prefix(2);

    for (char c : rest) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return Invalid("control character");
    }
    const std::size_t authority_end = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, authority_end);
    std::string_view tail =
        authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
    if (authority.find('@') != std::string_view::npos) return Invalid("credentials in the URL");
    if (authority.find('\\') != std::string_view::npos) return Invalid("backslash in authority");

    AssetUrl out;
    std::string_view host = authority;
    std::string_view port;
    if (!authority.empty() && authority.front() == '[') {
        // An IPv6 literal; whatever follows, it is an IP address.
        return Fail(FailureKind::kIpLiteral, messages::kIpLiteral, "bracketed host");
    }
    const std::size_t port_colon = authority.rfind(':');
    if (port_colon != std::string_view::npos) {
        host = authority.substr(0, port_colon);
        port = authority.substr(port_colon + 1);
        if (host.find(':') != std::string_view::npos) {
            // Unbracketed IPv6 (not valid URL syntax, but never a domain either).
            return Fail(FailureKind::kIpLiteral, messages::kIpLiteral, "IPv6 host");
        }
    }
    if (host.empty()) return Invalid("empty host");
    if (!port.empty()) {
        unsigned value = 0;
        for (char c : port) {
            if (!IsDigit(c) || port.size() > 5) return Invalid("bad port");
            value = value * 10 + static_cast<unsigned>(c - '0');
        }
        if (value == 0 || value > 65535) return Invalid("bad port");
        out.port = static_cast<std::uint16_t>(value);
    }
    for (char c : host) out.host.push_back(Lower(c));
    if (IsIpLiteralHost(out.host)) {
        return Fail(FailureKind::kIpLiteral, messages::kIpLiteral, "host " + out.host);
    }
    if (out.host.back() == '.') out.host.pop_back();
    if (!IsDomainName(out.host)) return Invalid("not a DNS name: " + out.host);
    out.host_header = out.port == 443 ? out.host : out.host + ":" + std::to_string(out.port);

    // Path and query; the fragment never leaves the client.
    tail = tail.substr(0, tail.find('#'));
    if (tail.empty() || tail.front() == '?') out.target = "/";
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (char ch : tail) {
        const auto c = static_cast<unsigned char>(ch);
        if (NeedsEncoding(c)) {
            out.target.push_back('%');
            out.target.push_back(kHex[c >> 4]);
            out.target.push_back(kHex[c & 0xF]);
        } else {
            out.target.push_back(ch);
        }
    }
    return out;
}

}  // namespace genhost::assets
