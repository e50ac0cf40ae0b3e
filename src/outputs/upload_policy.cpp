#include "genhost/outputs/upload_policy.hpp"

#include "genhost/core/crypto.hpp"

#include <nlohmann/json.hpp>

namespace genhost::outputs {

namespace {
// Longest policy text accepted: a policy genhost made is about 150 characters.
constexpr std::size_t kMaxPolicyChars = 1024;
}  // namespace

UploadPolicySigner::UploadPolicySigner(std::string secret, std::string public_url,
                                       const Clock& clock)
    : secret_(std::move(secret)), public_url_(std::move(public_url)), clock_(clock) {
    while (!public_url_.empty() && public_url_.back() == '/') public_url_.pop_back();
}

std::string UploadPolicySigner::Sign(std::string_view encoded_policy) const {
    std::string message = "genhost-upload-policy\n";
    message.append(encoded_policy);
    return HexEncode(HmacSha256(secret_, message));
}

std::map<std::string, std::string> UploadPolicySigner::Fields(const UploadPolicy& policy) const {
    const nlohmann::json doc = {{"v", 1},
                                {"id", policy.upload_id},
                                {"maxBytes", policy.max_bytes},
                                {"expires", policy.expires}};
    std::string encoded = Base64Encode(doc.dump());
    std::string signature = Sign(encoded);
    return {{"policy", std::move(encoded)}, {"signature", std::move(signature)}};
}

std::string UploadPolicySigner::UploadUrl(std::string_view upload_id) const {
    return public_url_ + "/uploads/" + std::string(upload_id);
}

UploadPolicySigner::Check UploadPolicySigner::Verify(std::string_view upload_id,
                                                     std::string_view policy,
                                                     std::string_view signature,
                                                     UploadPolicy* out) const {
    if (policy.empty() || policy.size() > kMaxPolicyChars || signature.size() != 64) {
        return Check::kInvalid;
    }
    if (!ConstantTimeEqual(Sign(policy), signature)) return Check::kInvalid;
    // Signed by this cluster: the content is trusted from here on, but still read defensively.
    const auto text = Base64Decode(policy);
    if (!text) return Check::kInvalid;
    const auto doc = nlohmann::json::parse(*text, nullptr, false);
    if (!doc.is_object() || doc.value("v", 0) != 1) return Check::kInvalid;
    const auto id = doc.find("id");
    const auto max_bytes = doc.find("maxBytes");
    const auto expires = doc.find("expires");
    if (id == doc.end() || !id->is_string() || max_bytes == doc.end() ||
        !max_bytes->is_number_unsigned() || expires == doc.end() || !expires->is_number_integer()) {
        return Check::kInvalid;
    }
    if (id->get<std::string>() != upload_id) return Check::kInvalid;
    UploadPolicy parsed{id->get<std::string>(), max_bytes->get<std::uint64_t>(),
                        expires->get<std::int64_t>()};
    const bool expired = parsed.expires < UnixSeconds(clock_.Now());
    if (out != nullptr) *out = std::move(parsed);
    return expired ? Check::kExpired : Check::kValid;
}

}  // namespace genhost::outputs
