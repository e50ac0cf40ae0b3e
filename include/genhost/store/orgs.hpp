// genhost/store/orgs.hpp
//
// Provides OrgRepo: organizations and their API keys. Keys are stored only as SHA-256 hashes;
// this repository never sees a plaintext key. Changing a key or an organization's standing
// notifies every node (channel `genhost_keys`) so their authentication caches drop stale entries.
//
// Awaitable methods run their SQL on the database pool and are for I/O-thread coroutines; the
// *Sync methods block and are for the command line and worker threads. Errors: DatabaseUnavailable
// when the database is unreachable; std::runtime_error for unexpected SQL failures.
#pragma once

#include "genhost/core/clock.hpp"
#include "genhost/store/database.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

struct Organization {
    std::string id;
    std::string name;
    int tier = 1;
    bool suspended = false;
};

// KeyOwner is what a key hash resolves to.
struct KeyOwner {
    std::string key_id;
    std::string key_hash;  // raw 32 bytes
    bool key_disabled = false;
    Organization org;
};

struct ApiKeyInfo {
    std::string id;
    std::string org_name;
    SysTime created_at;
    bool disabled = false;
};

class OrgRepo {
  public:
    // Registers the repository's statements with `db` (Prepare), at any time.
    explicit OrgRepo(Database& db) : db_(db) { Prepare(db); }

    // Prepare registers this repository's statements with `db` (before db.Start()).
    static void Prepare(Database& db);

    // FindKey returns the key with SHA-256 hash `key_hash` (raw bytes) and its organization.
    boost::asio::awaitable<std::optional<KeyOwner>> FindKey(std::string key_hash);

    // EnsureOrganizationSync returns the organization called `name`, creating it with `tier` if
    // absent (an existing organization keeps its tier unless `force_tier`). An organization
    // without a credit account gets one holding `opening_credits` (a grant; docs/credits.md).
    Organization EnsureOrganizationSync(const std::string& name, int tier, bool force_tier,
                                        std::int64_t opening_credits = kOpeningCredits);

    // kOpeningCredits is the default opening balance (GENHOST_DEFAULT_CREDITS's default).
    static constexpr std::int64_t kOpeningCredits = 10000000;

    // FindOrganizationSync returns the organization called `name`.
    std::optional<Organization> FindOrganizationSync(const std::string& name);

    // AddKeySync stores a key hash for `org_id` and returns the key id; if the hash is already
    // stored, returns the existing key's id (and re-enables it when `reenable`).
    std::string AddKeySync(const std::string& org_id, const std::string& key_hash, bool reenable);

    // DisableKeySync disables key `key_id`; false if there is no such key.
    bool DisableKeySync(const std::string& key_id);

    // ListKeysSync lists every key, oldest first.
    std::vector<ApiKeyInfo> ListKeysSync();

    // SetSuspendedSync suspends or resumes organization `name`; suspending cancels its unfinished
    // tasks (they show CANCELLED). Returns false if there is no such organization.
    bool SetSuspendedSync(const std::string& name, bool suspended);

  private:
    Database& db_;
};

}  // namespace genhost::store
