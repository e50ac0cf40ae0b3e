#include "genhost/assets/address_policy.hpp"

#include <array>
#include <cstdint>

namespace genhost::assets {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// IsNumericLabel: the WHATWG "ends in a number" test for one label: all decimal digits, or
// 0x / 0X followed by hex digits (none at all counts: "0x" is the number zero).
bool IsNumericLabel(std::string_view label) {
    if (label.empty()) return false;
    if (label.size() >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X')) {
        for (char c : label.substr(2)) {
            if (!IsHex(c)) return false;
        }
        return true;
    }
    for (char c : label) {
        if (!IsDigit(c)) return false;
    }
    return true;
}

struct V4Range {
    std::uint32_t base;
    int prefix;
    const char* name;
};

constexpr std::uint32_t V4(unsigned a, unsigned b, unsigned c, unsigned d) {
    return (a << 24) | (b << 16) | (c << 8) | d;
}

// Every IPv4 range that is not public unicast (IANA special-purpose registry), most specific
// first where they nest (broadcast inside 240/4).
constexpr std::array<V4Range, 17> kV4Refused = {{
    {V4(255, 255, 255, 255), 32, "broadcast"},
    {V4(0, 0, 0, 0), 32, "unspecified"},
    {V4(0, 0, 0, 0), 8, "this network"},
    {V4(10, 0, 0, 0), 8, "private"},
    {V4(100, 64, 0, 0), 10, "shared address space (CGNAT)"},
    {V4(127, 0, 0, 0), 8, "loopback"},
    {V4(169, 254, 169, 254), 32, "link-local (metadata service)"},
    {V4(169, 254, 0, 0), 16, "link-local"},
    {V4(172, 16, 0, 0), 12, "private"},
    {V4(192, 0, 0, 0), 24, "IETF protocol assignments"},
    {V4(192, 0, 2, 0), 24, "documentation"},
    {V4(192, 88, 99, 0), 24, "6to4 relay anycast"},
    {V4(192, 168, 0, 0), 16, "private"},
    {V4(198, 18, 0, 0), 15, "benchmarking"},
    {V4(198, 51, 100, 0), 24, "documentation"},
    {V4(203, 0, 113, 0), 24, "documentation"},
    {V4(224, 0, 0, 0), 4, "multicast"},
}};

std::optional<std::string> RefusedV4(std::uint32_t a) {
    for (const V4Range& r : kV4Refused) {
        const std::uint32_t mask = r.prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - r.prefix);
        if ((a & mask) == r.base) return std::string(r.name);
    }
    if ((a >> 28) == 0xF) return std::string("reserved");  // 240.0.0.0/4
    return std::nullopt;
}

using Bytes16 = boost::asio::ip::address_v6::bytes_type;

bool HasPrefix(const Bytes16& b, std::initializer_list<std::uint8_t> prefix, int bits) {
    int i = 0;
    for (std::uint8_t p : prefix) {
        const int remaining = bits - i * 8;
        if (remaining <= 0) break;
        const std::uint8_t mask =
            remaining >= 8 ? 0xFF : static_cast<std::uint8_t>(0xFF << (8 - remaining));
        if ((b[static_cast<std::size_t>(i)] & mask) != (p & mask)) return false;
        ++i;
    }
    return true;
}

std::uint32_t V4At(const Bytes16& b, std::size_t at) {
    return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) |
           (std::uint32_t{b[at + 2]} << 8) | std::uint32_t{b[at + 3]};
}

std::optional<std::string> Embedded(const char* form, std::uint32_t v4) {
    if (auto range = RefusedV4(v4)) return std::string(form) + " " + *range;
    return std::nullopt;
}

std::optional<std::string> RefusedV6(const boost::asio::ip::address_v6& address) {
    const Bytes16 b = address.to_bytes();
    bool zero_96 = true;
    for (std::size_t i = 0; i < 12; ++i) zero_96 = zero_96 && b[i] == 0;
    if (zero_96) {
        const std::uint32_t low = V4At(b, 12);
        if (low == 0) return std::string("unspecified");
        if (low == 1) return std::string("loopback");
        // ::a.b.c.d, the deprecated IPv4-compatible form: never public unicast.
        return std::string("IPv4-compatible");
    }
    bool mapped = b[10] == 0xFF && b[11] == 0xFF;
    for (std::size_t i = 0; i < 10; ++i) mapped = mapped && b[i] == 0;
    if (mapped) {
        // ::ffff:a.b.c.d reaches the IPv4 host a.b.c.d on a dual-stack socket.
        return Embedded("IPv4-mapped", V4At(b, 12));
    }
    if (HasPrefix(b, {0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0}, 96)) {
        // 64:ff9b::/96, the well-known NAT64 prefix: the gateway connects to the embedded IPv4.
        return Embedded("NAT64", V4At(b, 12));
    }
    if (HasPrefix(b, {0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01}, 48)) {
        return std::string("local-use NAT64");
    }
    if (HasPrefix(b, {0x20, 0x02}, 16)) {
        // 6to4 2002:V4ADDR::/48: the relay tunnels to the embedded IPv4 address.
        if (auto refused = Embedded("6to4", V4At(b, 2))) return refused;
    }
    if (HasPrefix(b, {0x01, 0x00, 0, 0, 0, 0, 0, 0}, 64)) return std::string("discard-only");
    if (HasPrefix(b, {0x20, 0x01, 0x0D, 0xB8}, 32)) return std::string("documentation");
    if (HasPrefix(b, {0x3F, 0xFF, 0x00}, 20)) return std::string("documentation");
    if (HasPrefix(b, {0x20, 0x01, 0x00}, 23)) {
        // 2001::/23: Teredo (2001::/32, which tunnels to an obfuscated IPv4), benchmarking,
        // ORCHID and other IETF protocol assignments.
        return std::string("IETF protocol assignments");
    }
    if (HasPrefix(b, {0xFC}, 7)) return std::string("unique local");
    if (HasPrefix(b, {0xFE, 0x80}, 10)) return std::string("link-local");
    if (HasPrefix(b, {0xFE, 0xC0}, 10)) return std::string("site-local");
    if (HasPrefix(b, {0xFF}, 8)) return std::string("multicast");
    if (!HasPrefix(b, {0x20}, 3)) return std::string("not global unicast");  // 2000::/3
    return std::nullopt;
}

}  // namespace

bool IsIpLiteralHost(std::string_view host) {
    if (host.empty()) return false;
    if (host.front() == '[' || host.find(':') != std::string_view::npos) return true;
    if (host.back() == '.') host.remove_suffix(1);  // "127.0.0.1." is still 127.0.0.1
    const std::size_t dot = host.rfind('.');
    const std::string_view last = dot == std::string_view::npos ? host : host.substr(dot + 1);
    return IsNumericLabel(last);
}

bool IsDomainName(std::string_view host) {
    if (host.empty() || host.size() > 253) return false;
    std::size_t label = 0;
    for (char c : host) {
        if (c == '.') {
            if (label == 0) return false;
            label = 0;
            continue;
        }
        const bool ok = (c >= 'a' && c <= 'z') || IsDigit(c) || c == '-' || c == '_';
        if (!ok || ++label > 63) return false;
    }
    return label > 0;
}

std::optional<std::string> RefusedRange(const boost::asio::ip::address& address) {
    if (address.is_v4()) return RefusedV4(address.to_v4().to_uint());
    return RefusedV6(address.to_v6());
}

}  // namespace genhost::assets
