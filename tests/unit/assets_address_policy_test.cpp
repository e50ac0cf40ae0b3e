// The asset fetcher's address policy: IP literals in every spelling, and every special-purpose
// range after DNS (IPv4, IPv6, and IPv4 inside IPv6).
#include "genhost/assets/address_policy.hpp"

#include <gtest/gtest.h>

namespace genhost::assets {
namespace {

using boost::asio::ip::make_address;

TEST(IsIpLiteralHost, RefusesDottedIpv4) {
    EXPECT_TRUE(IsIpLiteralHost("127.0.0.1"));
    EXPECT_TRUE(IsIpLiteralHost("10.0.0.1"));
    EXPECT_TRUE(IsIpLiteralHost("169.254.169.254"));
    EXPECT_TRUE(IsIpLiteralHost("8.8.8.8"));
    EXPECT_TRUE(IsIpLiteralHost("127.0.0.1."));  // trailing dot
}

TEST(IsIpLiteralHost, RefusesDecimalHexOctalAndShortForms) {
    EXPECT_TRUE(IsIpLiteralHost("2130706433"));  // 127.0.0.1 as one number
    EXPECT_TRUE(IsIpLiteralHost("0x7f000001"));
    EXPECT_TRUE(IsIpLiteralHost("0X7F000001"));
    EXPECT_TRUE(IsIpLiteralHost("0x7f.1"));
    EXPECT_TRUE(IsIpLiteralHost("0177.0.0.1"));  // octal
    EXPECT_TRUE(IsIpLiteralHost("017700000001"));
    EXPECT_TRUE(IsIpLiteralHost("127.1"));    // short form
    EXPECT_TRUE(IsIpLiteralHost("127.0.1"));  // short form
    EXPECT_TRUE(IsIpLiteralHost("0"));
    EXPECT_TRUE(IsIpLiteralHost("0x"));
    EXPECT_TRUE(IsIpLiteralHost("4294967295"));
    EXPECT_TRUE(IsIpLiteralHost("99999999999"));  // out of range is still not a name
}

TEST(IsIpLiteralHost, RefusesIpv6InEveryForm) {
    EXPECT_TRUE(IsIpLiteralHost("[::1]"));
    EXPECT_TRUE(IsIpLiteralHost("::1"));
    EXPECT_TRUE(IsIpLiteralHost("[::ffff:127.0.0.1]"));
    EXPECT_TRUE(IsIpLiteralHost("[fe80::1%25eth0]"));  // zone id
    EXPECT_TRUE(IsIpLiteralHost("fe80::1%eth0"));
    EXPECT_TRUE(IsIpLiteralHost("[2001:db8::1]"));
}

TEST(IsIpLiteralHost, AcceptsNamesThatLookNumeric) {
    EXPECT_FALSE(IsIpLiteralHost("example.com"));
    EXPECT_FALSE(IsIpLiteralHost("1e100.net"));
    EXPECT_FALSE(IsIpLiteralHost("123.example"));
    EXPECT_FALSE(IsIpLiteralHost("127.0.0.1.nip.io"));  // a name; DNS decides, then the policy
    EXPECT_FALSE(IsIpLiteralHost("0x7f.example"));
    EXPECT_FALSE(IsIpLiteralHost("1-2-3-4.example.net"));
    EXPECT_FALSE(IsIpLiteralHost("localhost"));
    EXPECT_FALSE(IsIpLiteralHost("0xg"));  // not hex
}

TEST(IsIpLiteralHost, RefusesNamesAUrlParserWouldReadAsIpv4) {
    EXPECT_TRUE(IsIpLiteralHost("example.123"));
    EXPECT_TRUE(IsIpLiteralHost("foo.0x10"));
}

TEST(IsDomainName, AcceptsAsciiNames) {
    EXPECT_TRUE(IsDomainName("example.com"));
    EXPECT_TRUE(IsDomainName("a-b.c_d.example"));
    EXPECT_TRUE(IsDomainName("localhost"));
    EXPECT_TRUE(IsDomainName("xn--bcher-kva.example"));
}

TEST(IsDomainName, RefusesOtherHosts) {
    EXPECT_FALSE(IsDomainName(""));
    EXPECT_FALSE(IsDomainName("a..b"));
    EXPECT_FALSE(IsDomainName(".example"));
    EXPECT_FALSE(IsDomainName("%31%32%37.0.0.1"));
    EXPECT_FALSE(
        IsDomainName("b\xc3\xbc"
                     "cher.example"));
    EXPECT_FALSE(IsDomainName("exa mple.com"));
    EXPECT_FALSE(IsDomainName("Example.com"));  // callers lower-case first
    EXPECT_FALSE(IsDomainName(std::string(64, 'a') + ".com"));
    EXPECT_FALSE(IsDomainName(std::string(254, 'a')));
}

struct RangeCase {
    const char* address;
    const char* range;  // nullptr: public
};

class RefusedRangeTest : public ::testing::TestWithParam<RangeCase> {};

TEST_P(RefusedRangeTest, Classifies) {
    const RangeCase& c = GetParam();
    const auto refused = RefusedRange(make_address(c.address));
    if (c.range == nullptr) {
        EXPECT_FALSE(refused.has_value()) << c.address << " refused as " << refused.value_or("");
    } else {
        ASSERT_TRUE(refused.has_value()) << c.address << " accepted";
        EXPECT_EQ(*refused, c.range) << c.address;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Ipv4, RefusedRangeTest,
    ::testing::Values(
        RangeCase{"0.0.0.0", "unspecified"}, RangeCase{"0.1.2.3", "this network"},
        RangeCase{"10.0.0.1", "private"}, RangeCase{"10.255.255.255", "private"},
        RangeCase{"100.64.0.1", "shared address space (CGNAT)"},
        RangeCase{"100.127.255.255", "shared address space (CGNAT)"},
        RangeCase{"100.128.0.1", nullptr}, RangeCase{"127.0.0.1", "loopback"},
        RangeCase{"127.255.0.1", "loopback"},
        RangeCase{"169.254.169.254", "link-local (metadata service)"},
        RangeCase{"169.254.1.1", "link-local"}, RangeCase{"172.16.0.1", "private"},
        RangeCase{"172.31.255.255", "private"}, RangeCase{"172.32.0.1", nullptr},
        RangeCase{"172.15.255.255", nullptr}, RangeCase{"192.0.0.8", "IETF protocol assignments"},
        RangeCase{"192.0.2.1", "documentation"}, RangeCase{"192.88.99.1", "6to4 relay anycast"},
        RangeCase{"192.168.1.1", "private"}, RangeCase{"198.18.0.1", "benchmarking"},
        RangeCase{"198.19.255.255", "benchmarking"}, RangeCase{"198.51.100.7", "documentation"},
        RangeCase{"203.0.113.9", "documentation"}, RangeCase{"224.0.0.1", "multicast"},
        RangeCase{"239.255.255.250", "multicast"}, RangeCase{"240.0.0.1", "reserved"},
        RangeCase{"255.255.255.255", "broadcast"}, RangeCase{"8.8.8.8", nullptr},
        RangeCase{"1.1.1.1", nullptr}, RangeCase{"93.184.216.34", nullptr},
        RangeCase{"223.255.255.255", nullptr}));

INSTANTIATE_TEST_SUITE_P(
    Ipv6, RefusedRangeTest,
    ::testing::Values(
        RangeCase{"::", "unspecified"}, RangeCase{"::1", "loopback"},
        RangeCase{"::127.0.0.1", "IPv4-compatible"}, RangeCase{"fc00::1", "unique local"},
        RangeCase{"fd12:3456::1", "unique local"}, RangeCase{"fe80::1", "link-local"},
        RangeCase{"febf::1", "link-local"}, RangeCase{"fec0::1", "site-local"},
        RangeCase{"ff02::1", "multicast"}, RangeCase{"ff05::2", "multicast"},
        RangeCase{"2001:db8::1", "documentation"}, RangeCase{"3fff::1", "documentation"},
        RangeCase{"2001::1", "IETF protocol assignments"},    // Teredo
        RangeCase{"2001:2::1", "IETF protocol assignments"},  // benchmarking
        RangeCase{"100::1", "discard-only"}, RangeCase{"64:ff9b:1::1", "local-use NAT64"},
        RangeCase{"4000::1", "not global unicast"},
        RangeCase{"::ffff:0:808:808", "not global unicast"},  // IPv4-translated
        RangeCase{"2606:4700:4700::1111", nullptr}, RangeCase{"2001:4860:4860::8888", nullptr},
        RangeCase{"2a00:1450:4001::1", nullptr}));

INSTANTIATE_TEST_SUITE_P(
    Ipv4InsideIpv6, RefusedRangeTest,
    ::testing::Values(
        RangeCase{"::ffff:127.0.0.1", "IPv4-mapped loopback"},
        RangeCase{"::ffff:10.1.2.3", "IPv4-mapped private"},
        RangeCase{"::ffff:172.16.0.1", "IPv4-mapped private"},
        RangeCase{"::ffff:192.168.0.1", "IPv4-mapped private"},
        RangeCase{"::ffff:169.254.169.254", "IPv4-mapped link-local (metadata service)"},
        RangeCase{"::ffff:100.64.0.1", "IPv4-mapped shared address space (CGNAT)"},
        RangeCase{"::ffff:0.0.0.0", "IPv4-mapped unspecified"},
        RangeCase{"::ffff:224.0.0.1", "IPv4-mapped multicast"},
        RangeCase{"::ffff:255.255.255.255", "IPv4-mapped broadcast"},
        RangeCase{"::ffff:240.0.0.1", "IPv4-mapped reserved"}, RangeCase{"::ffff:8.8.8.8", nullptr},
        RangeCase{"64:ff9b::127.0.0.1", "NAT64 loopback"},
        RangeCase{"64:ff9b::10.0.0.1", "NAT64 private"},
        RangeCase{"64:ff9b::169.254.169.254", "NAT64 link-local (metadata service)"},
        RangeCase{"64:ff9b::8.8.8.8", nullptr}, RangeCase{"2002:7f00:1::1", "6to4 loopback"},
        RangeCase{"2002:c0a8:101::1", "6to4 private"}, RangeCase{"2002:808:808::1", nullptr}));

}  // namespace
}  // namespace genhost::assets
