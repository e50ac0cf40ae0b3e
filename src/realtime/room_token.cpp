// HS256 room tokens in LiveKit's claim layout (genhost/realtime/room_token.hpp).
#include "genhost/realtime/room_token.hpp"

#include "genhost/core/crypto.hpp"

#include <nlohmann/json.hpp>

namespace genhost::realtime {

namespace {

using nlohmann::json;

long long Seconds(SysTime t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

SysTime FromSeconds(long long s) { return SysTime{std::chrono::seconds{s}}; }

std::string Signature(std::string_view secret, std::string_view signing_input) {
    const auto mac = HmacSha256(secret, signing_input);
    return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

std::optional<RoomTokenClaims> Refuse(std::string* why, const char* reason) {
    if (why != nullptr) *why = reason;
    return std::nullopt;
}

}  // namespace

std::string MintRoomToken(std::string_view api_key, std::string_view api_secret,
                          const RoomTokenClaims& claims) {
    static const std::string header = Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})");
    json payload = {{"iss", api_key},
                    {"sub", claims.identity},
                    {"nbf", Seconds(claims.not_before)},
                    {"exp", Seconds(claims.expires)},
                    {"video",
                     {{"room", claims.room},
                      {"roomJoin", true},
                      {"canPublish", claims.can_publish},
                      {"canSubscribe", claims.can_subscribe},
                      {"canPublishData", claims.can_publish_data}}}};
    if (!claims.name.empty()) payload["name"] = claims.name;
    if (!claims.metadata.empty()) payload["metadata"] = claims.metadata;
    std::string token = header + "." + Base64UrlEncode(payload.dump());
    const std::string signature = Signature(api_secret, token);
    token += ".";
    token += signature;
    return token;
}

std::optional<RoomTokenClaims> VerifyRoomToken(std::string_view token, std::string_view api_key,
                                               std::string_view api_secret, SysTime now,
                                               std::string* why) {
    const auto first = token.find('.');
    const auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
    if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
        return Refuse(why, "not a JWT (three dot-separated parts)");
    }
    const auto header_text = Base64UrlDecode(token.substr(0, first));
    const auto payload_text = Base64UrlDecode(token.substr(first + 1, second - first - 1));
    if (!header_text || !payload_text) return Refuse(why, "a part is not base64url");
    const json header = json::parse(*header_text, nullptr, false);
    const json payload = json::parse(*payload_text, nullptr, false);
    if (!header.is_object() || !payload.is_object())
        return Refuse(why, "a part is not a JSON object");
    const auto alg = header.find("alg");
    if (alg == header.end() || *alg != "HS256") return Refuse(why, "the algorithm is not HS256");
    const std::string expected = Signature(api_secret, token.substr(0, second));
    if (!ConstantTimeEqual(expected, token.substr(second + 1))) {
        return Refuse(why, "the signature does not match");
    }
    auto string_claim = [&](const char* name) -> std::optional<std::string> {
        const auto it = payload.find(name);
        if (it == payload.end() || !it->is_string()) return std::nullopt;
        return it->get<std::string>();
    };
    auto time_claim = [&](const char* name) -> std::optional<long long> {
        const auto it = payload.find(name);
        if (it == payload.end() || !it->is_number_integer()) return std::nullopt;
        return it->get<long long>();
    };
    const auto iss = string_claim("iss");
    const auto sub = string_claim("sub");
    const auto nbf = time_claim("nbf");
    const auto exp = time_claim("exp");
    if (!iss || *iss != api_key) return Refuse(why, "the issuer is not this API key");
    if (!sub || sub->empty()) return Refuse(why, "no identity (sub)");
    if (!nbf || !exp) return Refuse(why, "no nbf or exp");
    const long long at = Seconds(now);
    if (at < *nbf) return Refuse(why, "not valid yet (nbf)");
    if (at >= *exp) return Refuse(why, "expired (exp)");
    const auto video = payload.find("video");
    if (video == payload.end() || !video->is_object() || video->value("roomJoin", false) != true ||
        !video->contains("room") || !video->at("room").is_string()) {
        return Refuse(why, "no room join grant (video.roomJoin, video.room)");
    }
    RoomTokenClaims claims;
    claims.identity = *sub;
    claims.room = video->at("room").get<std::string>();
    claims.name = string_claim("name").value_or("");
    claims.metadata = string_claim("metadata").value_or("");
    claims.can_publish = video->value("canPublish", false);
    claims.can_subscribe = video->value("canSubscribe", false);
    claims.can_publish_data = video->value("canPublishData", false);
    claims.not_before = FromSeconds(*nbf);
    claims.expires = FromSeconds(*exp);
    return claims;
}

}  // namespace genhost::realtime
