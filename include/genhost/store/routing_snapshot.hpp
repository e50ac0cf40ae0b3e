// genhost/store/routing_snapshot.hpp
//
// Provides RoutingSnapshotRepo: what a model router reads about the moment it decides in
// (migrations/0001_init.sql, 0012_routing.sql): an organization's concurrency slots in use and
// the groups whose tasks wait for one (THROTTLED), and the measured latency of every model.
//
// Errors: DatabaseUnavailable when the database is unreachable; std::runtime_error for
// unexpected SQL failures. An organization id that is not a UUID has no slots, never sent to SQL.
#pragma once

#include "genhost/store/database.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace genhost::store {

class RoutingSnapshotRepo {
  public:
    // Registers the statements with `db` (Prepare).
    explicit RoutingSnapshotRepo(Database& db) : db_(db) { Prepare(db); }
    static void Prepare(Database& db);

    // Slots: `active` maps each limit key (concurrency group) of the organization's
    // concurrency_slots rows to the slots its PENDING and RUNNING tasks hold (keys whose slots
    // are all free may be listed with 0, or missing); `waiting` holds the limit keys for which
    // THROTTLED tasks of the organization wait.
    struct Slots {
        std::map<std::string, int, std::less<>> active;
        std::set<std::string, std::less<>> waiting;
    };
    // ActiveSlots reads both in one statement (the waiting keys by one probe of the index
    // tasks_throttled per key, however many tasks wait).
    boost::asio::awaitable<Slots> ActiveSlots(std::string org_id);

    struct Latency {
        double ewma_seconds = 0;
        long long samples = 0;
    };
    // Latencies returns every model_latency row, model -> latency. The answer is kept: a call
    // within `max_age` of the last read answers that copy without a query (0 always reads).
    boost::asio::awaitable<std::map<std::string, Latency, std::less<>>> Latencies(
        std::chrono::milliseconds max_age = std::chrono::seconds(1));

  private:
    Database& db_;
    std::mutex mu_;  // the cache
    std::optional<std::chrono::steady_clock::time_point> read_at_;
    std::map<std::string, Latency, std::less<>> latencies_;
};

}  // namespace genhost::store
