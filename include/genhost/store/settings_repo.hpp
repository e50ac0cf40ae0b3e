// genhost/store/settings_repo.hpp
//
// Provides SettingsRepo: cluster-wide values every node must agree on (for example the secret
// that signs output URLs), kept in the `settings` table. Blocking; call at start-up.
#pragma once

#include "genhost/store/database.hpp"

#include <functional>
#include <string>

namespace genhost::store {

class SettingsRepo {
  public:
    // Registers the repository's statements with `db` (Prepare), at any time.
    explicit SettingsRepo(Database& db) : db_(db) { Prepare(db); }

    // Prepare registers this repository's statements with `db` (before db.Start()).
    static void Prepare(Database& db);

    // GetOrCreateSync returns the value of `name`, storing `make()` first if it has none. When
    // several nodes race, all of them get the first stored value.
    std::string GetOrCreateSync(const std::string& name, const std::function<std::string()>& make);

  private:
    Database& db_;
};

}  // namespace genhost::store
