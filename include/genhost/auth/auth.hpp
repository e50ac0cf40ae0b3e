// genhost/auth/auth.hpp
//
// Provides API-key authentication: the key format of SPEC.md (`key_` + exactly 128 lowercase hex
// characters, nothing around it), key generation and hashing, and Authenticator, which resolves
// an Authorization header to the calling organization.
//
// Keys are never stored: only their SHA-256 hashes. The hash found in the database is compared
// with the computed one in constant time. Authenticator caches resolved keys for a short time;
// any change to keys or organizations (notified on `genhost_keys`) clears the cache on every node.
#pragma once

#include "genhost/core/error.hpp"
#include "genhost/store/orgs.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace genhost::auth {

// Principal is the authenticated caller.
struct Principal {
    std::string key_id;
    std::string org_id;
    std::string org_name;
    int tier = 1;
};

// IsWellFormedKey reports whether `key` is `key_` + 128 lowercase hex characters.
bool IsWellFormedKey(std::string_view key);

// ParseBearer extracts the key from an Authorization header value (`Bearer <key>`, exactly one
// space); nullopt when the header is not of that form or the key is not well formed.
std::optional<std::string_view> ParseBearer(std::string_view header);

// GenerateKey returns a new random key.
std::string GenerateKey();

// HashKey returns the raw SHA-256 of `key`, as stored.
std::string HashKey(std::string_view key);

class Authenticator {
  public:
    Authenticator(store::OrgRepo& orgs, std::chrono::milliseconds cache_ttl);

    // Authenticate resolves `authorization` (the header value; empty when absent) to a Principal,
    // or a 401 ApiError for a missing, malformed, unknown or disabled key or a suspended
    // organization. Throws DatabaseUnavailable when the key is not cached and the database is
    // unreachable. `authorization` must stay valid until the call completes.
    boost::asio::awaitable<Result<Principal>> Authenticate(std::string_view authorization);

    // Invalidate drops every cached key (called on `genhost_keys` notifications).
    void Invalidate();

  private:
    struct Entry {
        std::optional<Principal> principal;  // nullopt: known bad
        std::chrono::steady_clock::time_point expires;
    };
    store::OrgRepo& orgs_;
    std::chrono::milliseconds ttl_;
    std::mutex mu_;
    std::unordered_map<std::string, Entry> cache_;
    std::uint64_t generation_ = 0;
};

}  // namespace genhost::auth
