// Tests for UploadPolicySigner of genhost/outputs/upload_policy.hpp with a ManualClock: the
// fields and URL it makes, Verify for a valid policy, the expiry boundary, and every kind of
// tampering (policy text, signature, another upload id, another secret, lengths), including
// policies that are validly signed but malformed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

#include "genhost/core/crypto.hpp"
#include "genhost/outputs/upload_policy.hpp"

namespace genhost::outputs {
namespace {

using namespace std::chrono_literals;
using Check = UploadPolicySigner::Check;

constexpr std::int64_t kStart = 1730851200;  // 2024-11-06T00:00:00Z
constexpr char kId[] = "0f8b1c2e-1111-4222-8333-444455556666";
constexpr char kOtherId[] = "0f8b1c2e-1111-4222-8333-444455556667";
constexpr char kSecret[] = "upload-secret";

SysTime StartTime() { return SysTime{std::chrono::seconds(kStart)}; }

UploadPolicy Policy() { return UploadPolicy{kId, 200ull * 1024 * 1024, kStart + 86400}; }

// SignRaw signs an arbitrary policy text the way the signer does.
std::string SignRaw(const std::string& encoded) {
    return HexEncode(HmacSha256(kSecret, "genhost-upload-policy\n" + encoded));
}

class UploadPolicyTest : public ::testing::Test {
  protected:
    ManualClock clock_{StartTime()};
    UploadPolicySigner signer_{kSecret, "https://genhost.test:8443/", clock_};
};

TEST_F(UploadPolicyTest, FieldsCarryABase64JsonPolicyAndItsSignature) {
    const auto fields = signer_.Fields(Policy());
    ASSERT_EQ(fields.size(), 2u);
    const auto& policy = fields.at("policy");
    const auto& signature = fields.at("signature");
    EXPECT_EQ(signature.size(), 64u);
    EXPECT_EQ(signature, SignRaw(policy));
    const auto text = Base64Decode(policy);
    ASSERT_TRUE(text);
    const auto doc = nlohmann::json::parse(*text);
    EXPECT_EQ(doc, (nlohmann::json{{"v", 1},
                                   {"id", kId},
                                   {"maxBytes", 200ull * 1024 * 1024},
                                   {"expires", kStart + 86400}}));
}

TEST_F(UploadPolicyTest, UploadUrlIsAbsoluteWithoutADoubleSlash) {
    EXPECT_EQ(signer_.UploadUrl(kId), std::string("https://genhost.test:8443/uploads/") + kId);
}

TEST_F(UploadPolicyTest, VerifyAcceptsItsOwnPolicyForTheSameUpload) {
    const auto fields = signer_.Fields(Policy());
    UploadPolicy out;
    EXPECT_EQ(signer_.Verify(kId, fields.at("policy"), fields.at("signature"), &out),
              Check::kValid);
    EXPECT_EQ(out.upload_id, kId);
    EXPECT_EQ(out.max_bytes, 200ull * 1024 * 1024);
    EXPECT_EQ(out.expires, kStart + 86400);
    EXPECT_EQ(signer_.Verify(kId, fields.at("policy"), fields.at("signature"), nullptr),
              Check::kValid);
}

TEST_F(UploadPolicyTest, ExpiresAfterItsLastSecond) {
    const auto fields = signer_.Fields(Policy());
    clock_.Set(SysTime{std::chrono::seconds(kStart + 86400)});
    EXPECT_EQ(signer_.Verify(kId, fields.at("policy"), fields.at("signature"), nullptr),
              Check::kValid);
    clock_.Advance(1s);
    UploadPolicy out;
    EXPECT_EQ(signer_.Verify(kId, fields.at("policy"), fields.at("signature"), &out),
              Check::kExpired);
    EXPECT_EQ(out.upload_id, kId);
}

TEST_F(UploadPolicyTest, RefusesAnotherUploadId) {
    const auto fields = signer_.Fields(Policy());
    EXPECT_EQ(signer_.Verify(kOtherId, fields.at("policy"), fields.at("signature"), nullptr),
              Check::kInvalid);
}

TEST_F(UploadPolicyTest, RefusesTampering) {
    const auto fields = signer_.Fields(Policy());
    const std::string& policy = fields.at("policy");
    const std::string& signature = fields.at("signature");

    // A policy granting more, signed by nobody.
    const std::string bigger = Base64Encode(nlohmann::json{
        {"v", 1},
        {"id", kId},
        {"maxBytes", 1ull << 40},
        {"expires", kStart + 86400}}.dump());
    EXPECT_EQ(signer_.Verify(kId, bigger, signature, nullptr), Check::kInvalid);

    std::string flipped = signature;
    flipped[10] = flipped[10] == 'a' ? 'b' : 'a';
    EXPECT_EQ(signer_.Verify(kId, policy, flipped, nullptr), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(kId, policy, signature.substr(1), nullptr), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(kId, policy, "", nullptr), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(kId, "", signature, nullptr), Check::kInvalid);
    EXPECT_EQ(signer_.Verify(kId, std::string(2000, 'A'), SignRaw(std::string(2000, 'A')), nullptr),
              Check::kInvalid);

    UploadPolicySigner other("another-secret", "https://genhost.test", clock_);
    EXPECT_EQ(other.Verify(kId, policy, signature, nullptr), Check::kInvalid);
}

TEST_F(UploadPolicyTest, RefusesSignedButMalformedPolicies) {
    const auto check = [&](const std::string& encoded) {
        return signer_.Verify(kId, encoded, SignRaw(encoded), nullptr);
    };
    EXPECT_EQ(check("not base64!"), Check::kInvalid);
    EXPECT_EQ(check(Base64Encode("not json")), Check::kInvalid);
    EXPECT_EQ(check(Base64Encode("[1,2]")), Check::kInvalid);
    const nlohmann::json good = {{"v", 1}, {"id", kId}, {"maxBytes", 10}, {"expires", kStart + 10}};
    EXPECT_EQ(check(Base64Encode(good.dump())), Check::kValid);
    for (const char* key : {"v", "id", "maxBytes", "expires"}) {
        auto broken = good;
        broken.erase(key);
        EXPECT_EQ(check(Base64Encode(broken.dump())), Check::kInvalid) << key;
    }
    auto v2 = good;
    v2["v"] = 2;
    EXPECT_EQ(check(Base64Encode(v2.dump())), Check::kInvalid);
    auto negative = good;
    negative["maxBytes"] = -5;
    EXPECT_EQ(check(Base64Encode(negative.dump())), Check::kInvalid);
    auto text_expiry = good;
    text_expiry["expires"] = "tomorrow";
    EXPECT_EQ(check(Base64Encode(text_expiry.dump())), Check::kInvalid);
}

}  // namespace
}  // namespace genhost::outputs
