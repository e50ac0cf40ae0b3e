// genhost/assets/url.hpp
//
// Provides ParseAssetUrl: the strict reading of an asset URL before anything is looked up.
// Only `https` is accepted; the host must be a DNS name (never an IP literal in any spelling,
// see address_policy.hpp); user information (credentials) is refused; the fragment is dropped;
// bytes a request line cannot carry (spaces, non-ASCII) are percent-encoded, control
// characters refused. Pure: no I/O. Thread-safe.
#pragma once

#include "genhost/assets/failure.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace genhost::assets {

struct AssetUrl {
    std::string host;  // lower case, without a trailing dot, e.g. "cdn.example.com"
    std::uint16_t port = 443;
    std::string target;       // origin-form request target: path (at least "/") and query
    std::string host_header;  // the Host header: host, plus ":port" when not 443
};

// ParseAssetUrl reads `url`. Failures: kInvalidUrl (cannot be parsed, credentials, a bad port,
// not a DNS name), kHttpsOnly (another scheme), kIpLiteral (the host is an IP address).
Result<AssetUrl> ParseAssetUrl(std::string_view url);

}  // namespace genhost::assets
