// genhost/assets/address_policy.hpp
//
// Provides the address policy of the asset fetcher, as pure functions (no I/O, no DNS):
//
// - IsIpLiteralHost: whether a URL's host is an IP address written in any form a URL parser or
//   inet_aton would accept (dotted IPv4, its short, decimal, octal and hex forms such as
//   `2130706433`, `0x7f.1`, `0177.0.0.1`; IPv6 with or without brackets, zone ids included).
//   Such URLs are refused before any lookup ("the URL must be a domain, not an IP address").
// - IsDomainName: whether a host is a plain ASCII DNS name genhost will look up.
// - RefusedRange: after DNS, whether an address may be connected to. Everything that is not
//   public unicast is refused: loopback, private, link-local (the 169.254.169.254 metadata
//   service included), CGNAT, multicast, broadcast, unspecified, "this network", reserved,
//   benchmarking and documentation ranges; for IPv6 the same plus ULA, link-local, site-local,
//   multicast, and the IPv4 address inside IPv4-mapped (::ffff:0:0/96), IPv4-compatible,
//   NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses is judged as IPv4.
//
// Thread-safe: no state.
#pragma once

#include <boost/asio/ip/address.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace genhost::assets {

// IsIpLiteralHost reports whether `host` (as written in a URL authority, brackets allowed) is
// an IP address literal. It follows the WHATWG URL host parser: a host whose last label is a
// number (decimal digits, or 0x/0X and hex digits) is an IPv4 address, whatever its other
// labels look like; a host with a ':' or in brackets is IPv6. `1e100.net` and `123.example`
// are names; `example.123` is not (a URL parser would read it as IPv4, so it is refused too).
bool IsIpLiteralHost(std::string_view host);

// IsDomainName reports whether `host` (lower case, without a trailing dot) is an ASCII DNS name
// genhost accepts: labels of letters, digits, '-' and '_', 1 to 63 characters each, at most 253
// in all. Percent signs, non-ASCII characters and empty labels are refused.
bool IsDomainName(std::string_view host);

// RefusedRange returns the name of the special-purpose range `address` lies in (for example
// "loopback", "private", "link-local", "IPv4-mapped loopback"), or nullopt when it is public
// unicast and may be connected to.
std::optional<std::string> RefusedRange(const boost::asio::ip::address& address);

}  // namespace genhost::assets
