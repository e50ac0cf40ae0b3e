// ParseAssetUrl: https only, DNS names only, no credentials; the request target it derives.
#include "genhost/assets/url.hpp"

#include <gtest/gtest.h>

namespace genhost::assets {
namespace {

FailureKind FailureOf(std::string_view url) {
    const auto r = ParseAssetUrl(url);
    EXPECT_FALSE(r.has_value()) << url;
    return r ? FailureKind::kFetchFailed : r.error().kind;
}

TEST(ParseAssetUrl, ReadsHostPortAndTarget) {
    const auto r = ParseAssetUrl("https://CDN.Example.com/a/b.png?x=1&y=2#frag");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->host, "cdn.example.com");
    EXPECT_EQ(r->port, 443);
    EXPECT_EQ(r->target, "/a/b.png?x=1&y=2");
    EXPECT_EQ(r->host_header, "cdn.example.com");
}

TEST(ParseAssetUrl, DefaultsAndExplicitPort) {
    auto r = ParseAssetUrl("https://example.com");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->target, "/");
    r = ParseAssetUrl("https://example.com:8443?q");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->port, 8443);
    EXPECT_EQ(r->target, "/?q");
    EXPECT_EQ(r->host_header, "example.com:8443");
    r = ParseAssetUrl("HTTPS://example.com./x");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->host, "example.com");
}

TEST(ParseAssetUrl, EncodesWhatARequestLineCannotCarry) {
    const auto r = ParseAssetUrl("https://example.com/a b/\xc3\xa9.png");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->target, "/a%20b/%C3%A9.png");
}

TEST(ParseAssetUrl, OnlyHttps) {
    EXPECT_EQ(FailureOf("http://example.com/a.png"), FailureKind::kHttpsOnly);
    EXPECT_EQ(FailureOf("ftp://example.com/a.png"), FailureKind::kHttpsOnly);
    EXPECT_EQ(FailureOf("file:///etc/passwd"), FailureKind::kHttpsOnly);
    EXPECT_EQ(FailureOf("gopher://example.com"), FailureKind::kHttpsOnly);
    EXPECT_EQ(ParseAssetUrl("http://example.com").error().message, "Only HTTPS URLs are allowed");
}

TEST(ParseAssetUrl, RefusesIpLiterals) {
    for (const char* url :
         {"https://127.0.0.1/a.png", "https://2130706433/a.png", "https://0x7f.1/a.png",
          "https://0177.0.0.1/a.png", "https://127.1/", "https://[::1]/a.png",
          "https://[::ffff:169.254.169.254]/", "https://[fe80::1%25eth0]:443/",
          "https://169.254.169.254/latest/meta-data/", "https://8.8.8.8:443/x",
          "https://example.123/"}) {
        EXPECT_EQ(FailureOf(url), FailureKind::kIpLiteral) << url;
    }
    EXPECT_EQ(ParseAssetUrl("https://127.0.0.1/").error().message,
              "The URL must be a domain, not an IP address");
}

TEST(ParseAssetUrl, RefusesMalformedUrls) {
    for (const char* url :
         {"", "https:", "https:/example.com", "https://", "https:///path", "://example.com",
          "https://user:pass@example.com/", "https://user@example.com/", "https://example.com:0/",
          "https://example.com:65536/", "https://example.com:12ab/", "https://exa mple.com/",
          "https://exa\x01mple.com/", "https://example.com/\n", "https://%65xample.com/",
          "https://ex\\ample.com/",
          "https://b\xc3\xbc"
          "cher.de/",
          "https://a..b/", "not a url"}) {
        EXPECT_EQ(FailureOf(url), FailureKind::kInvalidUrl) << url;
    }
    EXPECT_EQ(ParseAssetUrl("https://user:pw@example.com/").error().message, "Invalid URL");
}

}  // namespace
}  // namespace genhost::assets
