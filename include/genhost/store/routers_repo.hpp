// genhost/store/routers_repo.hpp
//
// Provides RouterRepo: the model routers of migrations/0011_routers.sql. Every read and change is
// scoped to an organization and sees live routers only (a deleted router is not found). Settings
// travel as the JSON text of their effective form (api/routers.cpp makes it); every version
// reached is kept in router_versions by the same transaction (a trigger).
//
// Errors: DatabaseUnavailable when the database is unreachable; std::runtime_error for
// unexpected SQL failures. Ids that are not UUIDs are reported as not found, never sent to SQL.
#pragma once

#include "genhost/core/clock.hpp"
#include "genhost/store/async_pg.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/keyset.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace genhost::store {

struct RouterRecord {
    std::string id;
    std::string org_id;
    std::string slug;
    std::string name;
    std::optional<std::string> description;
    int version = 1;
    std::string settings_json;
    SysTime created_at;
    SysTime updated_at;
    bool deleted = false;  // only GetAny and ForGenerate return deleted routers
};

struct NewRouter {
    std::string id;
    std::string org_id;
    std::string slug;
    std::string name;
    std::optional<std::string> description;
    std::string settings_json;
};

// RouterChange is what PATCH changes; unset members stay. With `change_settings`, Update's
// `merge` makes the new effective settings from the stored ones: the version grows only when
// they differ.
struct RouterChange {
    std::optional<std::string> name;
    bool set_description = false;
    std::optional<std::string> description;  // with set_description: nullopt clears it
    bool change_settings = false;
};

// GenerateContext is what a generate request reads before routing, in one round trip: the router
// (the live one with that slug, else the most recently deleted one) and the organization's
// concurrency slots: `active` maps each limit key with a slots row to the slots its PENDING and
// RUNNING tasks hold, `waiting` holds the limit keys THROTTLED tasks wait for.
struct GenerateContext {
    std::optional<RouterRecord> router;
    std::map<std::string, int, std::less<>> active;
    std::set<std::string, std::less<>> waiting;
};

struct RouterPage {
    std::vector<RouterRecord> routers;
    bool more = false;
};

// RouterCache keeps the live routers generate requests named, by (organization, slug), so a
// routed request needs no query for its router. An entry is used for at most `max_age`; every
// change or deletion clears the cache: on this node at once (the handlers call Clear), on the
// others when the `genhost_routers` notification arrives (store::Listener), and after the listener
// reconnects. Thread-safe.
class RouterCache {
  public:
    explicit RouterCache(std::chrono::milliseconds max_age = std::chrono::seconds(2))
        : max_age_(max_age) {}
    std::optional<RouterRecord> Find(const std::string& org_id, const std::string& slug);
    // Epoch counts the clears: read it before querying a router, and Put stores the answer only
    // when no clear came in between (a change committed meanwhile is not hidden by an old read).
    std::uint64_t Epoch();
    void Put(const RouterRecord& router, std::uint64_t epoch);  // live routers only
    void Clear();

  private:
    struct Entry {
        RouterRecord router;
        std::chrono::steady_clock::time_point at;
    };
    std::chrono::milliseconds max_age_;
    std::mutex mu_;
    std::uint64_t epoch_ = 0;
    std::map<std::pair<std::string, std::string>, Entry> entries_;
};

class RouterRepo {
  public:
    explicit RouterRepo(Database& db);
    ~RouterRepo();
    static void Prepare(Database& db);

    // Create stores a router at version 1; nullopt, storing nothing, when the organization has a
    // live router with that slug.
    boost::asio::awaitable<std::optional<RouterRecord>> Create(NewRouter router);
    boost::asio::awaitable<std::optional<RouterRecord>> Get(std::string org_id, std::string id);
    // ForGenerate reads a generate request's GenerateContext. Concurrent calls share one query on
    // the request path's non-blocking connections (AsyncBatcher, one lane per I/O thread).
    boost::asio::awaitable<GenerateContext> ForGenerate(std::string org_id, std::string slug);
    // GetAny is Get, deleted routers included (their decision log stays readable).
    boost::asio::awaitable<std::optional<RouterRecord>> GetAny(std::string org_id, std::string id);
    boost::asio::awaitable<RouterPage> List(std::string org_id, int limit,
                                            std::optional<Keyset> after);
    // Update applies `change` under a row lock (concurrent PATCHes merge one after the other:
    // `merge` turns the stored settings into the new ones); nullopt when there is no such router.
    boost::asio::awaitable<std::optional<RouterRecord>> Update(
        std::string org_id, std::string id, RouterChange change,
        std::function<std::string(const std::string& stored_settings)> merge);
    boost::asio::awaitable<bool> Delete(std::string org_id, std::string id);
    // VersionSettings returns the settings router `id` had at `version` (any organization).
    std::optional<std::string> VersionSettingsSync(const std::string& id, int version);

  private:
    struct SlugKey {
        std::string org_id;
        std::string slug;
    };
    boost::asio::awaitable<std::optional<RouterRecord>> GetBy(const char* statement,
                                                              std::string org_id, std::string id);

    Database& db_;
    AsyncBatcher<SlugKey, GenerateContext> generate_batch_;
};

}  // namespace genhost::store
