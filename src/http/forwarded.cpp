#include "genhost/http/forwarded.hpp"

#include <boost/asio/ip/network_v4.hpp>
#include <boost/asio/ip/network_v6.hpp>

#include <algorithm>

namespace genhost::http {

namespace ip = boost::asio::ip;

namespace {

std::string_view Trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::optional<ip::address> ParseAddress(std::string_view text) {
    boost::system::error_code ec;
    auto address = ip::make_address(std::string(text), ec);
    if (ec) return std::nullopt;
    // An IPv4-mapped IPv6 address is the IPv4 address it maps.
    if (address.is_v6() && address.to_v6().is_v4_mapped()) {
        return ip::address(ip::make_address_v4(ip::v4_mapped, address.to_v6()));
    }
    return address;
}

}  // namespace

std::optional<TrustedProxies> TrustedProxies::Parse(std::string_view list, std::string* error) {
    TrustedProxies out;
    while (!list.empty()) {
        const auto comma = list.find(',');
        const auto entry = Trim(list.substr(0, comma));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        if (entry.empty()) continue;
        if (entry == "unix") {
            out.unix_ = true;
            continue;
        }
        const auto slash = entry.find('/');
        const auto address = ParseAddress(entry.substr(0, slash));
        Network network;
        bool ok = address.has_value();
        if (ok) {
            network.base = *address;
            const unsigned bits = address->is_v4() ? 32 : 128;
            network.prefix = bits;
            if (slash != std::string_view::npos) {
                const auto digits = entry.substr(slash + 1);
                ok = !digits.empty() && digits.size() <= 3 &&
                     std::all_of(digits.begin(), digits.end(),
                                 [](char c) { return c >= '0' && c <= '9'; });
                if (ok) {
                    network.prefix = static_cast<unsigned>(std::stoul(std::string(digits)));
                    ok = network.prefix <= bits;
                }
            }
        }
        if (!ok) {
            if (error != nullptr) {
                *error = "not an address or network: " + std::string(entry);
            }
            return std::nullopt;
        }
        // Canonical once here, so that Trusts only masks the address it checks.
        if (network.base.is_v4()) {
            network.base =
                ip::make_network_v4(network.base.to_v4(), network.prefix).canonical().address();
        } else {
            network.base =
                ip::make_network_v6(network.base.to_v6(), network.prefix).canonical().address();
        }
        out.networks_.push_back(network);
    }
    return out;
}

bool TrustedProxies::Trusts(std::string_view text) const {
    if (text.empty()) return unix_;
    const auto address = ParseAddress(text);
    if (!address) return false;
    for (const auto& n : networks_) {
        if (n.base.is_v4() != address->is_v4()) continue;
        const ip::address masked =
            address->is_v4()
                ? ip::address(ip::make_network_v4(address->to_v4(), n.prefix).canonical().address())
                : ip::address(
                      ip::make_network_v6(address->to_v6(), n.prefix).canonical().address());
        if (masked == n.base) return true;
    }
    return false;
}

std::string ClientAddress(const TrustedProxies& trusted, const std::string& peer,
                          std::optional<std::string_view> forwarded_for) {
    if (!forwarded_for || trusted.Empty() || !trusted.Trusts(peer)) return peer;
    std::string client = peer;
    std::string_view rest = *forwarded_for;
    while (!rest.empty()) {
        const auto comma = rest.rfind(',');
        const auto entry = Trim(comma == std::string_view::npos ? rest : rest.substr(comma + 1));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(0, comma);
        const auto address = ParseAddress(entry);
        if (!address) break;
        client = address->to_string();
        if (!trusted.Trusts(client)) break;
    }
    return client;
}

}  // namespace genhost::http
