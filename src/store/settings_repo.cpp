#include "genhost/store/settings_repo.hpp"

#include <pqxx/pqxx>

namespace genhost::store {

std::string SettingsRepo::GetOrCreateSync(const std::string& name,
                                          const std::function<std::string()>& make) {
    std::string value;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        n.exec_params("INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                      name, make());
        value = n.exec_params("SELECT value FROM settings WHERE name = $1", name)[0][0]
                    .as<std::string>();
    });
    return value;
}

}  // namespace genhost::store
