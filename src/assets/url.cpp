#include "genhost/assets/url.hpp"

#include "genhost/assets/address_policy.hpp"
#include "genhost/net/url.hpp"

namespace genhost::assets {
namespace {

AssetFailure Invalid(std::string detail) {
    return Fail(FailureKind::kInvalidUrl, messages::kInvalidUrl, std::move(detail));
}

}  // namespace

Result<AssetUrl> ParseAssetUrl(std::string_view url) {
    // An IPv6 literal, whatever follows it (a zone, a malformed bracket): it is an IP address.
    const std::size_t authority = url.find("://");
    if (authority != std::string_view::npos && url.substr(authority + 3, 1) == "[") {
        return Fail(FailureKind::kIpLiteral, messages::kIpLiteral, "bracketed host");
    }
    // The syntax is net's (the one URL parser); what follows is the asset fetcher's policy.
    const auto parsed = net::ParseHttpUrl(url, {.encode_raw = true, .drop_fragment = true});
    if (!parsed.url) {
        switch (parsed.problem) {
            case net::UrlProblem::kScheme:
                return Fail(FailureKind::kHttpsOnly, messages::kHttpsOnly,
                            "scheme " + parsed.scheme);
            case net::UrlProblem::kUserInfo:
                return Invalid("credentials in the URL");
            case net::UrlProblem::kHost:
                return Invalid("no DNS name as host");
            case net::UrlProblem::kPort:
                return Invalid("bad port");
            case net::UrlProblem::kSyntax:
            case net::UrlProblem::kFragment:
                break;
        }
        return Invalid("not a URL");
    }
    const net::HttpUrl& u = *parsed.url;
    if (!u.tls) return Fail(FailureKind::kHttpsOnly, messages::kHttpsOnly, "scheme " + u.scheme);
    AssetUrl out;
    out.host = u.host;
    out.port = u.port;
    if (u.ip_literal || IsIpLiteralHost(out.host)) {
        return Fail(FailureKind::kIpLiteral, messages::kIpLiteral, "host " + out.host);
    }
    if (out.host.back() == '.') out.host.pop_back();
    if (!IsDomainName(out.host)) return Invalid("not a DNS name: " + out.host);
    out.host_header = out.port == 443 ? out.host : out.host + ":" + std::to_string(out.port);
    out.target = u.Target();
    return out;
}

}  // namespace genhost::assets
