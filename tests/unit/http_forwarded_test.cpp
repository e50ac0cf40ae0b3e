// Tests for genhost/http/forwarded.hpp: GENHOST_TRUSTED_PROXIES and the client address of a
// request from a proxy.

#include <gtest/gtest.h>

#include <string>

#include "genhost/http/forwarded.hpp"

namespace genhost::http {
namespace {

TrustedProxies Trusted(const std::string& list) {
    std::string error;
    auto t = TrustedProxies::Parse(list, &error);
    EXPECT_TRUE(t.has_value()) << error;
    return t.value_or(TrustedProxies{});
}

TEST(TrustedProxies, ParsesAddressesNetworksAndUnix) {
    const auto t = Trusted(" 10.0.0.0/8, 192.168.1.7 ,::1,fd00::/8,unix");
    EXPECT_TRUE(t.Trusts("10.200.3.4"));
    EXPECT_FALSE(t.Trusts("11.0.0.1"));
    EXPECT_TRUE(t.Trusts("192.168.1.7"));
    EXPECT_FALSE(t.Trusts("192.168.1.8"));
    EXPECT_TRUE(t.Trusts("::1"));
    EXPECT_TRUE(t.Trusts("fd12::5"));
    EXPECT_FALSE(t.Trusts("2001:db8::1"));
    EXPECT_TRUE(t.Trusts("::ffff:10.1.2.3"));  // IPv4-mapped: the IPv4 address
    EXPECT_TRUE(t.Trusts(""));                 // the peer of a unix-domain socket
    EXPECT_FALSE(t.Trusts("not-an-address"));
    EXPECT_TRUE(Trusted("").Empty());
    EXPECT_FALSE(Trusted("").Trusts(""));
}

TEST(TrustedProxies, RefusesBadEntriesByName) {
    for (const std::string bad : {"10.0.0.0/33", "::1/129", "10.0.0.0/", "10.0.0.0/x", "proxy",
                                  "10.0.0.256", "1.2.3.4/8/8"}) {
        std::string error;
        EXPECT_FALSE(TrustedProxies::Parse("127.0.0.1," + bad, &error).has_value()) << bad;
        EXPECT_EQ(error, "not an address or network: " + bad);
    }
}

TEST(ClientAddress, IsReadFromTheRightSkippingTrustedProxies) {
    const auto t = Trusted("127.0.0.1,10.0.0.0/8");
    // Untrusted peer: its header is ignored, whatever it says.
    EXPECT_EQ(ClientAddress(t, "203.0.113.9", "198.51.100.1"), "203.0.113.9");
    // Trusted peer: the first address from the right that is not a trusted proxy.
    EXPECT_EQ(ClientAddress(t, "127.0.0.1", "198.51.100.1"), "198.51.100.1");
    EXPECT_EQ(ClientAddress(t, "127.0.0.1", "6.6.6.6, 198.51.100.1, 10.1.1.1"), "198.51.100.1");
    // Every entry trusted: the leftmost.
    EXPECT_EQ(ClientAddress(t, "127.0.0.1", "10.2.2.2, 10.1.1.1"), "10.2.2.2");
    // A malformed entry ends the walk at the last address read.
    EXPECT_EQ(ClientAddress(t, "127.0.0.1", "198.51.100.1, junk, 10.1.1.1"), "10.1.1.1");
    EXPECT_EQ(ClientAddress(t, "127.0.0.1", "junk"), "127.0.0.1");
    EXPECT_EQ(ClientAddress(t, "127.0.0.1", std::nullopt), "127.0.0.1");
    // IPv6, and nothing trusted at all.
    EXPECT_EQ(ClientAddress(Trusted("::1"), "::1", "2001:db8::7"), "2001:db8::7");
    EXPECT_EQ(ClientAddress(Trusted(""), "127.0.0.1", "198.51.100.1"), "127.0.0.1");
}

}  // namespace
}  // namespace genhost::http
