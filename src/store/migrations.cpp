#include "genhost/store/migrations.hpp"

#include "genhost/core/resources.hpp"

#include <spdlog/spdlog.h>
#include <pqxx/pqxx>

#include <stdexcept>

namespace genhost::store {

namespace {
// Arbitrary constant that identifies genhost's migration lock among advisory locks.
constexpr long long kMigrationLockId = 0x67656e686f7374;  // "genhost"
}  // namespace

int Migrate(const std::string& dsn) {
    pqxx::connection conn(dsn);
    {
        pqxx::nontransaction n(conn);
        n.exec("SET client_min_messages = warning");
        n.exec_params("SELECT pg_advisory_lock($1)", kMigrationLockId);
    }
    int applied = 0;
    try {
        {
            pqxx::work w(conn);
            w.exec(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version integer PRIMARY KEY, name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())");
            w.commit();
        }
        for (const auto& resource : EmbeddedResources()) {
            const std::string_view path = resource.path;
            if (path.rfind("migrations/", 0) != 0 || path.size() < 16) continue;
            const std::string name(path.substr(std::string_view("migrations/").size()));
            const int version = std::stoi(name.substr(0, name.find('_')));
            pqxx::work w(conn);
            const auto seen =
                w.exec_params("SELECT 1 FROM schema_migrations WHERE version = $1", version);
            if (!seen.empty()) continue;
            try {
                w.exec(std::string(resource.content));
            } catch (const std::exception& e) {
                throw std::runtime_error("migration " + name + " failed: " + e.what());
            }
            w.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", version,
                          name);
            w.commit();
            spdlog::info("applied migration {}", name);
            ++applied;
        }
    } catch (...) {
        pqxx::nontransaction n(conn);
        n.exec_params("SELECT pg_advisory_unlock($1)", kMigrationLockId);
        throw;
    }
    pqxx::nontransaction n(conn);
    n.exec_params("SELECT pg_advisory_unlock($1)", kMigrationLockId);
    return applied;
}

}  // namespace genhost::store
