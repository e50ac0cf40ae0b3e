#include "genhost/auth/auth.hpp"

#include "genhost/core/crypto.hpp"

namespace genhost::auth {

namespace {
constexpr std::string_view kPrefix = "key_";
constexpr std::size_t kHexLength = 128;
constexpr std::size_t kMaxCacheEntries = 100000;
}  // namespace

bool IsWellFormedKey(std::string_view key) {
    if (key.size() != kPrefix.size() + kHexLength || key.substr(0, kPrefix.size()) != kPrefix) {
        return false;
    }
    for (const char c : key.substr(kPrefix.size())) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

std::optional<std::string_view> ParseBearer(std::string_view header) {
    constexpr std::string_view kBearer = "Bearer ";
    if (header.substr(0, kBearer.size()) != kBearer) return std::nullopt;
    const std::string_view key = header.substr(kBearer.size());
    if (!IsWellFormedKey(key)) return std::nullopt;
    return key;
}

std::string GenerateKey() { return std::string(kPrefix) + HexEncode(RandomBytes(kHexLength / 2)); }

std::string HashKey(std::string_view key) {
    const auto digest = Sha256(key);
    return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

Authenticator::Authenticator(store::OrgRepo& orgs, std::chrono::milliseconds cache_ttl)
    : orgs_(orgs), ttl_(cache_ttl) {}

void Authenticator::Invalidate() {
    std::lock_guard lock(mu_);
    cache_.clear();
    ++generation_;
}

boost::asio::awaitable<Result<Principal>> Authenticator::Authenticate(
    std::string_view authorization) {
    const auto key = ParseBearer(authorization);
    if (!key) co_return ApiError::Unauthorized("Missing or malformed API key");
    const std::string hash = HashKey(*key);
    const auto now = std::chrono::steady_clock::now();
    std::uint64_t generation = 0;
    {
        std::lock_guard lock(mu_);
        generation = generation_;
        const auto it = cache_.find(hash);
        if (it != cache_.end() && it->second.expires > now) {
            if (it->second.principal) co_return *it->second.principal;
            co_return ApiError::Unauthorized("Invalid API key");
        }
    }

    const auto owner = co_await orgs_.FindKey(hash);
    std::optional<Principal> principal;
    std::string reason = "Invalid API key";
    if (owner && ConstantTimeEqual(owner->key_hash, hash)) {
        if (owner->key_disabled) {
            reason = "API key disabled";
        } else if (owner->org.suspended) {
            reason = "Organization suspended";
        } else {
            principal = Principal{owner->key_id, owner->org.id, owner->org.name, owner->org.tier};
        }
    }
    {
        std::lock_guard lock(mu_);
        // A notification that arrived while we read would make this entry stale: skip caching.
        if (generation == generation_) {
            if (cache_.size() >= kMaxCacheEntries) cache_.clear();
            cache_[hash] = Entry{principal, now + ttl_};
        }
    }
    if (principal) co_return *principal;
    co_return ApiError::Unauthorized(reason);
}

}  // namespace genhost::auth
