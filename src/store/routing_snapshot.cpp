#include "genhost/store/routing_snapshot.hpp"

#include "genhost/core/ids.hpp"

#include <pqxx/pqxx>

namespace genhost::store {

namespace {

// The organization's slot counts, then its waiting groups: a loose index scan of
// tasks_throttled (org_id, limit_key, ...), one probe per limit key, as tasks_throttled_groups
// does for all organizations (tasks_repo.cpp), instead of reading every waiting task.
constexpr const char* kSlots = "routing_slots";
constexpr const char* kSlotsSql =
    "WITH RECURSIVE waiting AS ("
    " (SELECT t.limit_key FROM tasks t WHERE t.status = 'THROTTLED' AND t.org_id = $1"
    "  ORDER BY t.limit_key LIMIT 1)"
    " UNION ALL"
    " SELECT n.limit_key FROM waiting w CROSS JOIN LATERAL ("
    "  SELECT t.limit_key FROM tasks t"
    "  WHERE t.status = 'THROTTLED' AND t.org_id = $1 AND t.limit_key > w.limit_key"
    "  ORDER BY t.limit_key LIMIT 1) n)"
    " SELECT limit_key, active, false FROM concurrency_slots WHERE org_id = $1"
    " UNION ALL SELECT limit_key, 0, true FROM waiting";
constexpr const char* kLatencies = "routing_latencies";
constexpr const char* kLatenciesSql = "SELECT model, ewma_seconds, samples FROM model_latency";

}  // namespace

void RoutingSnapshotRepo::Prepare(Database& db) {
    db.Prepare(kSlots, kSlotsSql);
    db.Prepare(kLatencies, kLatenciesSql);
}

boost::asio::awaitable<RoutingSnapshotRepo::Slots> RoutingSnapshotRepo::ActiveSlots(
    std::string org_id) {
    Slots out;
    if (!IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec_prepared(kSlots, org_id)) {
            if (row[2].as<bool>()) {
                out.waiting.insert(row[0].as<std::string>());
            } else {
                out.active[row[0].as<std::string>()] = row[1].as<int>();
            }
        }
    });
    co_return out;
}

boost::asio::awaitable<std::map<std::string, RoutingSnapshotRepo::Latency, std::less<>>>
RoutingSnapshotRepo::Latencies(std::chrono::milliseconds max_age) {
    const auto now = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mu_);
        if (read_at_ && now - *read_at_ < max_age) co_return latencies_;
    }
    std::map<std::string, Latency, std::less<>> out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec_prepared(kLatencies)) {
            out[row[0].as<std::string>()] = {row[1].as<double>(), row[2].as<long long>()};
        }
    });
    {
        std::lock_guard lock(mu_);
        // Keep the newest read when concurrent calls both went to the database.
        if (!read_at_ || *read_at_ <= now) {
            read_at_ = now;
            latencies_ = out;
        }
    }
    co_return out;
}

}  // namespace genhost::store
