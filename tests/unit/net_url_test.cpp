// net::ParseHttpUrl: the one reading of outbound http(s) URLs.
#include "genhost/net/url.hpp"

#include <gtest/gtest.h>

namespace genhost::net {
namespace {

TEST(HttpUrl, ReadsSchemeHostPortPathAndQuery) {
    auto u = ParseHttpUrl("HTTPS://Api.Example.com/v1/x?a=1&b=2").url;
    ASSERT_TRUE(u);
    EXPECT_TRUE(u->tls);
    EXPECT_EQ(u->scheme, "https");
    EXPECT_EQ(u->host, "api.example.com");
    EXPECT_EQ(u->port, 443);
    EXPECT_TRUE(u->default_port);
    EXPECT_EQ(u->Target(), "/v1/x?a=1&b=2");
    EXPECT_EQ(u->HostHeader(), "api.example.com");
    EXPECT_EQ(u->Origin(), "https://api.example.com");

    u = ParseHttpUrl("http://127.0.0.1:8080").url;
    ASSERT_TRUE(u);
    EXPECT_FALSE(u->tls);
    EXPECT_TRUE(u->ip_literal);
    EXPECT_EQ(u->PortString(), "8080");
    EXPECT_EQ(u->Target(), "/");
    EXPECT_EQ(u->HostHeader(), "127.0.0.1:8080");

    u = ParseHttpUrl("http://[::1]:80/p").url;
    ASSERT_TRUE(u);
    EXPECT_EQ(u->host, "::1");
    EXPECT_TRUE(u->ip_literal);
    EXPECT_TRUE(u->default_port);  // 80 is http's
    EXPECT_EQ(u->HostHeader(), "[::1]");
    u = ParseHttpUrl("http://[::1]:9000/p").url;
    ASSERT_TRUE(u);
    EXPECT_EQ(u->Origin(), "http://[::1]:9000");
    // An empty port is the scheme's.
    u = ParseHttpUrl("http://example.com:/x").url;
    ASSERT_TRUE(u);
    EXPECT_EQ(u->port, 80);
}

TEST(HttpUrl, RefusesWithTheReason) {
    const auto problem = [](std::string_view text) {
        const auto p = ParseHttpUrl(text);
        EXPECT_FALSE(p.url) << text;
        return p.problem;
    };
    EXPECT_EQ(problem("ftp://example.com/"), UrlProblem::kScheme);
    EXPECT_EQ(ParseHttpUrl("gopher://x y").scheme, "gopher");  // said even when malformed
    EXPECT_EQ(problem("file:///etc/passwd"), UrlProblem::kScheme);
    EXPECT_EQ(problem("https://user:pw@example.com/"), UrlProblem::kUserInfo);
    EXPECT_EQ(problem("https://example.com/#top"), UrlProblem::kFragment);
    EXPECT_EQ(problem("https:///path"), UrlProblem::kHost);
    EXPECT_EQ(problem("https:/example.com"), UrlProblem::kHost);
    EXPECT_EQ(problem("https://%65xample.com/"), UrlProblem::kHost);
    EXPECT_EQ(problem("https://example.com:0/"), UrlProblem::kPort);
    EXPECT_EQ(problem("https://example.com:65536/"), UrlProblem::kPort);
    EXPECT_EQ(problem("https://example.com:123456/"), UrlProblem::kPort);
    EXPECT_EQ(problem("https://example.com:12ab/"), UrlProblem::kSyntax);
    for (const char* text :
         {"", "example.com", "://example.com", "https://exa mple.com/", "https://example.com/a b",
          "https://ex\x01.com/", "https://example.com/\n"}) {
        EXPECT_EQ(problem(text), UrlProblem::kSyntax) << text;
    }
}

TEST(HttpUrl, OptionsEncodeRawBytesAndDropTheFragment) {
    const auto u = ParseHttpUrl("https://example.com/a b/\xc3\xa9.png?q=\"x\"#frag",
                                {.encode_raw = true, .drop_fragment = true})
                       .url;
    ASSERT_TRUE(u);
    EXPECT_EQ(u->Target(), "/a%20b/%C3%A9.png?q=%22x%22");
    // Control characters are never encoded.
    EXPECT_FALSE(ParseHttpUrl("https://example.com/\x01", {.encode_raw = true}).url);
    // A raw byte in the host encodes to a percent-encoded host, which is refused.
    EXPECT_FALSE(ParseHttpUrl("https://b\xc3\xbc"
                              "cher.de/",
                              {.encode_raw = true})
                     .url);
}

TEST(HttpUrl, ResolvesAbsolutePathsAgainstTheBaseOnly) {
    const auto base = ParseHttpUrl("http://provider:9000/api").url;
    ASSERT_TRUE(base);
    auto u = Resolve(*base, "/files/out.png?sig=1");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->Origin(), "http://provider:9000");
    EXPECT_EQ(u->Target(), "/files/out.png?sig=1");
    u = Resolve(*base, "https://cdn.example.com/o.png");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->host, "cdn.example.com");
    EXPECT_FALSE(Resolve(*base, "//evil.example.com/x"));  // a network-path reference
    EXPECT_FALSE(Resolve(*base, "relative/x"));
    EXPECT_FALSE(Resolve(*base, "/x#frag"));
    EXPECT_FALSE(Resolve(*base, "ftp://example.com/x"));
}

}  // namespace
}  // namespace genhost::net
