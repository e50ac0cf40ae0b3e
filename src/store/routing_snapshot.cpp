#include "genhost/store/routing_snapshot.hpp"

#include <pqxx/pqxx>

namespace genhost::store {

namespace {

constexpr const char* kLatencies = "routing_latencies";
constexpr const char* kLatenciesSql = "SELECT model, ewma_seconds, samples FROM model_latency";

}  // namespace

void RoutingSnapshotRepo::Prepare(Database& db) { db.Prepare(kLatencies, kLatenciesSql); }

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
