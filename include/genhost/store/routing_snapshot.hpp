// genhost/store/routing_snapshot.hpp
//
// Provides RoutingSnapshotRepo: the measured latency of every model (model_latency of
// migrations/0012_routing.sql), which routers ranking by latency read. (An organization's
// concurrency slots come with its router: RouterRepo::ForGenerate.)
//
// Errors: DatabaseUnavailable when the database is unreachable; std::runtime_error for
// unexpected SQL failures.
#pragma once

#include "genhost/store/database.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace genhost::store {

class RoutingSnapshotRepo {
  public:
    // Registers the statements with `db` (Prepare).
    explicit RoutingSnapshotRepo(Database& db) : db_(db) { Prepare(db); }
    static void Prepare(Database& db);

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
