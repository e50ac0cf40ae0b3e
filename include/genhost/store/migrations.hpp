// genhost/store/migrations.hpp
//
// Provides Migrate: applies the numbered SQL files of migrations/ (embedded in the binary) that
// the database has not seen, in order, each in its own transaction, under a PostgreSQL advisory
// lock so several nodes starting together apply each migration exactly once. Applied versions
// are recorded in `schema_migrations`. Blocking: call from main or a worker thread.
#pragma once

#include <string>

namespace genhost::store {

// Migrate brings the database at `dsn` up to date and returns how many migrations it applied.
// Throws on a connection failure or a failing migration (the failing file is named).
int Migrate(const std::string& dsn);

}  // namespace genhost::store
