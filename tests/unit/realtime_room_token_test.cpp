// Media-plane access tokens (genhost/realtime/room_token.hpp): the exact bytes of a token for
// known claims (a vector computed independently with Python's hmac and json), the round trip, and
// every refusal of VerifyRoomToken: another secret or issuer, a changed payload, alg none or
// HS512, not yet valid, expired, no room grant, malformed text.
#include "genhost/realtime/room_token.hpp"

#include "genhost/core/crypto.hpp"

#include <gtest/gtest.h>

namespace genhost::realtime {
namespace {

constexpr const char* kKey = "devkey";
constexpr const char* kSecret = "secret-of-32-bytes-for-the-tests";

SysTime At(long long s) { return SysTime{std::chrono::seconds{s}}; }

RoomTokenClaims Claims() {
    RoomTokenClaims c;
    c.identity = "user";
    c.room = "session-1";
    c.name = "Ada";
    c.can_publish_data = false;
    c.not_before = At(1795000000);
    c.expires = At(1795000600);
    return c;
}

TEST(RoomToken, MintsTheBytesAnIndependentHs256ImplementationMakes) {
    // python3: header {"alg":"HS256","typ":"JWT"}, payload json.dumps(sort_keys=True,
    // separators=(',', ':')), hmac.new(secret, header.payload, sha256), base64url unpadded.
    EXPECT_EQ(MintRoomToken(kKey, kSecret, Claims()),
              "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
              "eyJleHAiOjE3OTUwMDA2MDAsImlzcyI6ImRldmtleSIsIm5hbWUiOiJBZGEiLCJuYmYiOjE3OTUwMDAwMDAs"
              "InN1YiI6InVzZXIiLCJ2aWRlbyI6eyJjYW5QdWJsaXNoIjp0cnVlLCJjYW5QdWJsaXNoRGF0YSI6ZmFsc2Us"
              "ImNhblN1YnNjcmliZSI6dHJ1ZSwicm9vbSI6InNlc3Npb24tMSIsInJvb21Kb2luIjp0cnVlfX0."
              "-yhKRpByQtAg-PYa5nXfkl11F4OD-5BwNurAnSltro0");
}

TEST(RoomToken, VerifiesItsOwnTokensWithinTheirWindow) {
    const auto token = MintRoomToken(kKey, kSecret, Claims());
    const auto claims = VerifyRoomToken(token, kKey, kSecret, At(1795000000));
    ASSERT_TRUE(claims.has_value());
    EXPECT_EQ(claims->identity, "user");
    EXPECT_EQ(claims->room, "session-1");
    EXPECT_EQ(claims->name, "Ada");
    EXPECT_TRUE(claims->can_publish);
    EXPECT_TRUE(claims->can_subscribe);
    EXPECT_FALSE(claims->can_publish_data);
    EXPECT_EQ(claims->expires, At(1795000600));
    EXPECT_TRUE(VerifyRoomToken(token, kKey, kSecret, At(1795000599)).has_value());
}

TEST(RoomToken, RefusesEverythingElse) {
    const auto token = MintRoomToken(kKey, kSecret, Claims());
    auto refused = [](std::string_view t, std::string_view key, std::string_view secret,
                      long long at) {
        std::string why;
        const auto claims = VerifyRoomToken(t, key, secret, At(at), &why);
        EXPECT_FALSE(claims.has_value());
        return why;
    };
    EXPECT_EQ(refused(token, kKey, "another-secret", 1795000100), "the signature does not match");
    EXPECT_EQ(refused(token, "otherkey", kSecret, 1795000100), "the issuer is not this API key");
    EXPECT_EQ(refused(token, kKey, kSecret, 1794999999), "not valid yet (nbf)");
    EXPECT_EQ(refused(token, kKey, kSecret, 1795000600), "expired (exp)");
    // A payload changed after signing (another room).
    const auto dot1 = token.find('.');
    const auto dot2 = token.find('.', dot1 + 1);
    auto payload = *Base64UrlDecode(token.substr(dot1 + 1, dot2 - dot1 - 1));
    payload.replace(payload.find("session-1"), 9, "session-2");
    const std::string forged =
        token.substr(0, dot1 + 1) + Base64UrlEncode(payload) + token.substr(dot2);
    EXPECT_EQ(refused(forged, kKey, kSecret, 1795000100), "the signature does not match");
    // alg none (no signature) and another algorithm.
    const std::string none =
        Base64UrlEncode(R"({"alg":"none","typ":"JWT"})") + "." + Base64UrlEncode(payload) + ".";
    EXPECT_EQ(refused(none, kKey, kSecret, 1795000100), "the algorithm is not HS256");
    const std::string hs512 =
        Base64UrlEncode(R"({"alg":"HS512","typ":"JWT"})") + token.substr(dot1);
    EXPECT_EQ(refused(hs512, kKey, kSecret, 1795000100), "the algorithm is not HS256");
    // Malformed.
    EXPECT_EQ(refused("abc", kKey, kSecret, 1795000100), "not a JWT (three dot-separated parts)");
    EXPECT_EQ(refused("a.b.c.d", kKey, kSecret, 1795000100),
              "not a JWT (three dot-separated parts)");
    EXPECT_EQ(refused("***.***.***", kKey, kSecret, 1795000100), "a part is not base64url");
    // Signed correctly but without a room grant.
    const std::string header = Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})");
    const std::string body = Base64UrlEncode(
        R"({"iss":"devkey","sub":"user","nbf":1795000000,"exp":1795000600,"video":{"room":"r"}})");
    const auto mac = HmacSha256(kSecret, header + "." + body);
    const std::string no_join =
        header + "." + body + "." +
        Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
    EXPECT_EQ(refused(no_join, kKey, kSecret, 1795000100),
              "no room join grant (video.roomJoin, video.room)");
}

}  // namespace
}  // namespace genhost::realtime
