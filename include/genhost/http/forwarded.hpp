// genhost/http/forwarded.hpp
//
// Provides TrustedProxies and ClientAddress: which peers may say, in X-Forwarded-For, whom they
// forward for (GENHOST_TRUSTED_PROXIES), and the client address a request is logged under.
//
// The rule is the usual one: when the peer is trusted, X-Forwarded-For is read from its right
// end, skipping the addresses of trusted proxies; the first address that is not one is the
// client. An untrusted peer's header is ignored, so a client cannot choose the address it is
// logged under; a malformed entry ends the walk at the last address read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/address.hpp>

namespace genhost::http {

class TrustedProxies {
  public:
    // Parse reads "10.0.0.0/8,192.168.1.7,::1,unix" (addresses and CIDR networks, IPv4 or IPv6;
    // `unix` trusts the peer of a unix-domain socket); nullopt with `error` set on a bad entry.
    static std::optional<TrustedProxies> Parse(std::string_view list, std::string* error);

    bool Empty() const { return networks_.empty() && !unix_; }
    // Trusts reports whether `address` is in one of the networks (an empty address: the unix
    // socket's peer).
    bool Trusts(std::string_view address) const;

  private:
    // A network, canonical (host bits cleared) once at Parse.
    struct Network {
        boost::asio::ip::address base;
        unsigned prefix = 0;
    };
    std::vector<Network> networks_;
    bool unix_ = false;
};

// ClientAddress is the client a request from `peer` (empty over a unix-domain socket) stands
// for, given its X-Forwarded-For header (all of its lines, joined by commas).
std::string ClientAddress(const TrustedProxies& trusted, const std::string& peer,
                          std::optional<std::string_view> forwarded_for);

}  // namespace genhost::http
