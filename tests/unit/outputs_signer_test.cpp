// Tests for UrlSigner of genhost/outputs/output_store.hpp with a ManualClock: the URL shape,
// and Verify for a valid URL, the expiry boundary, and every kind of tampering (signature, path,
// expiry, non-numeric expiry, wrong-length signature, another secret).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "genhost/core/crypto.hpp"
#include "genhost/outputs/output_store.hpp"

namespace genhost::outputs {
namespace {

using namespace std::chrono_literals;
using Check = UrlSigner::Check;

constexpr std::int64_t kStart = 1730851200;  // 2024-11-06T00:00:00Z
constexpr char kTask[] = "0f8b1c2e-1111-4222-8333-444455556666";

SysTime StartTime() { return SysTime{std::chrono::seconds(kStart)}; }

struct Parsed {
    std::string base;  // before the path
    std::string path;
    std::string expires;
    std::string signature;
};

// Parse splits a URL made by UrlSigner::Url.
Parsed Parse(const std::string& url) {
    Parsed p;
    const auto outputs = url.find("/outputs/");
    const auto q = url.find('?');
    EXPECT_NE(outputs, std::string::npos) << url;
    EXPECT_NE(q, std::string::npos) << url;
    p.base = url.substr(0, outputs);
    p.path = url.substr(outputs, q - outputs);
    const std::string query = url.substr(q + 1);
    const auto amp = query.find('&');
    EXPECT_TRUE(query.starts_with("expires=")) << query;
    p.expires = query.substr(8, amp - 8);
    const std::string sig = query.substr(amp + 1);
    EXPECT_TRUE(sig.starts_with("signature=")) << query;
    p.signature = sig.substr(10);
    return p;
}

class UrlSignerTest : public ::testing::Test {
  protected:
    ManualClock clock_{StartTime()};
    UrlSigner signer_{"cluster-secret", "http://127.0.0.1:8080/", clock_};
};

TEST_F(UrlSignerTest, UrlShape) {
    const std::string url = signer_.Url(kTask, "0.png", 3600);
    EXPECT_THAT(url, ::testing::MatchesRegex(
                         "http://127\\.0\\.0\\.1:8080/outputs/0f8b1c2e-1111-4222-8333-444455556666/"
                         "0\\.png\\?expires=1730854800&signature=[0-9a-f]{64}"));
    const Parsed p = Parse(url);
    EXPECT_EQ(p.base, "http://127.0.0.1:8080");  // the trailing slash of the base is dropped
    EXPECT_EQ(p.path, std::string("/outputs/") + kTask + "/0.png");
    EXPECT_EQ(p.expires, std::to_string(kStart + 3600));
}

TEST_F(UrlSignerTest, SignatureIsHmacOfMethodPathAndExpiry) {
    // The signed message is part of the cluster contract: every node must compute the same one.
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 60));
    const std::string message = "GET\n" + p.path + "\n" + p.expires;
    EXPECT_EQ(p.signature, HexEncode(HmacSha256("cluster-secret", message)));
}

TEST_F(UrlSignerTest, ManyTrailingSlashesAndEmptyBase) {
    ManualClock clock(StartTime());
    UrlSigner slashes("s", "https://gen.example.com///", clock);
    EXPECT_TRUE(
        slashes.Url("t", "0.png", 1).starts_with("https://gen.example.com/outputs/t/0.png?"));
    UrlSigner relative("s", "", clock);
    EXPECT_TRUE(relative.Url("t", "0.png", 1).starts_with("/outputs/t/0.png?expires="));
}

TEST_F(UrlSignerTest, VerifyAcceptsAFreshUrl) {
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 3600));
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature), Check::kValid);
}

TEST_F(UrlSignerTest, ValidUntilTheExpirySecondInclusive) {
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 3600));
    clock_.Advance(3599s);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature), Check::kValid);
    clock_.Advance(1s);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature), Check::kValid);
    clock_.Advance(1s);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature), Check::kExpired);
    clock_.Advance(24h);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature), Check::kExpired);
}

TEST_F(UrlSignerTest, DefaultTtlOfADay) {
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 24 * 3600));
    clock_.Advance(23h);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature), Check::kValid);
    clock_.Advance(2h);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature), Check::kExpired);
}

TEST_F(UrlSignerTest, FractionalTtlIsTruncated) {
    EXPECT_EQ(Parse(signer_.Url(kTask, "0.png", 1.9)).expires, std::to_string(kStart + 1));
    EXPECT_EQ(Parse(signer_.Url(kTask, "0.png", 0)).expires, std::to_string(kStart));
}

TEST_F(UrlSignerTest, TamperedSignatureIsInvalid) {
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 3600));
    for (const std::size_t pos : {std::size_t{0}, std::size_t{31}, std::size_t{63}}) {
        std::string sig = p.signature;
        sig[pos] = sig[pos] == '0' ? '1' : '0';
        EXPECT_EQ(signer_.Verify(p.path, p.expires, sig), Check::kInvalid) << pos;
    }
    EXPECT_EQ(signer_.Verify(p.path, p.expires, std::string(64, '0')), Check::kInvalid);
}

TEST_F(UrlSignerTest, UppercaseSignatureIsInvalid) {
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 3600));
    std::string upper = p.signature;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    ASSERT_NE(upper, p.signature);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, upper), Check::kInvalid);
}

TEST_F(UrlSignerTest, TamperedPathIsInvalid) {
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 3600));
    for (const std::string& other :
         {std::string("/outputs/") + kTask + "/1.png", std::string("/outputs/") + kTask + "/0.jpg",
          std::string("/outputs/other-task/0.png"), std::string("/outputs/") + kTask + "/0.png/",
          std::string("/Outputs/") + kTask + "/0.png",
          std::string("/outputs/") + kTask + "/../x/0.png", std::string("")}) {
        EXPECT_EQ(signer_.Verify(other, p.expires, p.signature), Check::kInvalid) << other;
    }
}

TEST_F(UrlSignerTest, TamperedExpiryIsInvalid) {
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 3600));
    EXPECT_EQ(signer_.Verify(p.path, std::to_string(kStart + 3601), p.signature), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(p.path, std::to_string(kStart + 999999), p.signature),
              Check::kInvalid);
    EXPECT_EQ(signer_.Verify(p.path, std::to_string(kStart + 3599), p.signature), Check::kInvalid);
}

TEST_F(UrlSignerTest, TamperedAndExpiredIsInvalidNotExpired) {
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 10));
    clock_.Advance(1h);
    std::string sig = p.signature;
    sig[5] = sig[5] == 'a' ? 'b' : 'a';
    EXPECT_EQ(signer_.Verify(p.path, p.expires, sig), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature), Check::kExpired);
}

TEST_F(UrlSignerTest, NonNumericExpiryIsInvalid) {
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 3600));
    for (const std::string& bad :
         {std::string(""), std::string("abc"), std::string("-1"), std::string("+1730854800"),
          std::string("1730854800.0"), std::string("1.7e9"), std::string(" 1730854800"),
          std::string("1730854800 "), std::string("0x671b2a90"), std::string("17308548OO"),
          std::string("1234567890123"), std::string(40, '9')}) {
        EXPECT_EQ(signer_.Verify(p.path, bad, p.signature), Check::kInvalid) << "'" << bad << "'";
    }
}

TEST_F(UrlSignerTest, WrongLengthSignatureIsInvalid) {
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 3600));
    EXPECT_EQ(signer_.Verify(p.path, p.expires, ""), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature.substr(0, 63)), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature + "0"), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature.substr(0, 32)), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(p.path, p.expires, p.signature + p.signature), Check::kInvalid);
}

TEST_F(UrlSignerTest, DifferentSecretsGiveDifferentSignatures) {
    UrlSigner other("another-secret", "http://127.0.0.1:8080", clock_);
    const Parsed mine = Parse(signer_.Url(kTask, "0.png", 3600));
    const Parsed theirs = Parse(other.Url(kTask, "0.png", 3600));
    EXPECT_EQ(mine.path, theirs.path);
    EXPECT_EQ(mine.expires, theirs.expires);
    EXPECT_NE(mine.signature, theirs.signature);
    EXPECT_EQ(other.Verify(mine.path, mine.expires, mine.signature), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(theirs.path, theirs.expires, theirs.signature), Check::kInvalid);
}

TEST_F(UrlSignerTest, AnotherNodeWithTheSameSecretAccepts) {
    // Nodes may advertise different public URLs; only the path is signed.
    ManualClock other_clock(StartTime() + 10s);
    UrlSigner node2("cluster-secret", "https://node2.example.com", other_clock);
    const Parsed p = Parse(signer_.Url(kTask, "0.png", 3600));
    EXPECT_EQ(node2.Verify(p.path, p.expires, p.signature), Check::kValid);
    EXPECT_EQ(Parse(node2.Url(kTask, "0.png", 3590)).signature, p.signature);
}

TEST_F(UrlSignerTest, DistinctObjectsAndExpiriesGetDistinctSignatures) {
    const std::string a = Parse(signer_.Url(kTask, "0.png", 3600)).signature;
    const std::string b = Parse(signer_.Url(kTask, "1.png", 3600)).signature;
    const std::string c = Parse(signer_.Url(kTask, "0.png", 3601)).signature;
    EXPECT_NE(a, b);
    EXPECT_NE(a, c);
    EXPECT_NE(b, c);
    // Same inputs, same URL.
    EXPECT_EQ(signer_.Url(kTask, "0.png", 3600), signer_.Url(kTask, "0.png", 3600));
}

}  // namespace
}  // namespace genhost::outputs
