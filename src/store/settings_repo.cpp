#include "genhost/store/settings_repo.hpp"

#include <pqxx/pqxx>

namespace genhost::store {

namespace {
constexpr const char* kInsert = "settings_insert";
constexpr const char* kInsertSql =
    "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING";
constexpr const char* kGet = "settings_get";
constexpr const char* kGetSql = "SELECT value FROM settings WHERE name = $1";
}  // namespace

void SettingsRepo::Prepare(Database& db) {
    db.Prepare(kInsert, kInsertSql);
    db.Prepare(kGet, kGetSql);
}

std::string SettingsRepo::GetOrCreateSync(const std::string& name,
                                          const std::function<std::string()>& make) {
    std::string value;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        n.exec_prepared(kInsert, name, make());
        value = n.exec_prepared(kGet, name)[0][0].as<std::string>();
    });
    return value;
}

}  // namespace genhost::store
