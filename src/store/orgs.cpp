#include "genhost/store/orgs.hpp"

#include "genhost/core/ids.hpp"

#include <pqxx/pqxx>

namespace genhost::store {

namespace {
// Statements, prepared on every connection of the pool.
constexpr const char* kFindKey = "orgs_find_key";
constexpr const char* kFindKeySql =
    "SELECT k.id, k.key_hash, k.disabled_at IS NOT NULL, o.id, o.name, o.tier,"
    " o.status = 'suspended'"
    " FROM api_keys k JOIN organizations o ON o.id = k.org_id WHERE k.key_hash = $1";
constexpr const char* kInsertOrg = "orgs_insert";
constexpr const char* kInsertOrgSql =
    "INSERT INTO organizations (id, name, tier) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING";
constexpr const char* kSetTier = "orgs_set_tier";
constexpr const char* kSetTierSql = "UPDATE organizations SET tier = $2 WHERE name = $1";
constexpr const char* kFindOrg = "orgs_find";
constexpr const char* kFindOrgSql =
    "SELECT id, name, tier, status = 'suspended' FROM organizations WHERE name = $1";
constexpr const char* kInsertKey = "orgs_insert_key";
constexpr const char* kInsertKeySql =
    "INSERT INTO api_keys (id, org_id, key_hash) VALUES ($1, $2, $3)"
    " ON CONFLICT (key_hash) DO NOTHING";
constexpr const char* kEnableKey = "orgs_enable_key";
constexpr const char* kEnableKeySql = "UPDATE api_keys SET disabled_at = NULL WHERE key_hash = $1";
constexpr const char* kKeyId = "orgs_key_id";
constexpr const char* kKeyIdSql = "SELECT id FROM api_keys WHERE key_hash = $1";
constexpr const char* kDisableKey = "orgs_disable_key";
constexpr const char* kDisableKeySql =
    "UPDATE api_keys SET disabled_at = coalesce(disabled_at, now()) WHERE id = $1 RETURNING id";
constexpr const char* kListKeys = "orgs_list_keys";
constexpr const char* kListKeysSql =
    "SELECT k.id, o.name, (extract(epoch FROM k.created_at) * 1000000)::bigint,"
    " k.disabled_at IS NOT NULL FROM api_keys k JOIN organizations o ON o.id = k.org_id"
    " ORDER BY k.created_at, k.id";
constexpr const char* kSetStatus = "orgs_set_status";
constexpr const char* kSetStatusSql =
    "UPDATE organizations SET status = $2 WHERE name = $1 RETURNING id";
constexpr const char* kCancelOrgTasks = "orgs_cancel_tasks";
constexpr const char* kCancelOrgTasksSql =
    "SELECT genhost_cancel_task(id, org_id, false) FROM tasks"
    " WHERE org_id = $1 AND status IN ('PENDING', 'THROTTLED', 'RUNNING') AND NOT deleted";
constexpr const char* kOpenAccount = "orgs_open_account";
constexpr const char* kOpenAccountSql = "SELECT genhost_credit_open($1, $2)";
constexpr const char* kNotifyKeys = "orgs_notify_keys";
constexpr const char* kNotifyKeysSql = "SELECT pg_notify('genhost_keys', '')";

Organization ReadOrg(const pqxx::row& r, int first) {
    Organization o;
    o.id = r[first].as<std::string>();
    o.name = r[first + 1].as<std::string>();
    o.tier = r[first + 2].as<int>();
    o.suspended = r[first + 3].as<bool>();
    return o;
}

}  // namespace

void OrgRepo::Prepare(Database& db) {
    const std::pair<const char*, const char*> statements[] = {{kFindKey, kFindKeySql},
                                                              {kInsertOrg, kInsertOrgSql},
                                                              {kSetTier, kSetTierSql},
                                                              {kFindOrg, kFindOrgSql},
                                                              {kInsertKey, kInsertKeySql},
                                                              {kEnableKey, kEnableKeySql},
                                                              {kKeyId, kKeyIdSql},
                                                              {kDisableKey, kDisableKeySql},
                                                              {kListKeys, kListKeysSql},
                                                              {kSetStatus, kSetStatusSql},
                                                              {kCancelOrgTasks, kCancelOrgTasksSql},
                                                              {kOpenAccount, kOpenAccountSql},
                                                              {kNotifyKeys, kNotifyKeysSql}};
    for (const auto& [name, sql] : statements) db.Prepare(name, sql);
}

boost::asio::awaitable<std::optional<KeyOwner>> OrgRepo::FindKey(std::string key_hash) {
    std::optional<KeyOwner> out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const pqxx::binarystring hash(key_hash);
        const auto r = n.exec_prepared(kFindKey, hash);
        if (r.empty()) return;
        KeyOwner k;
        k.key_id = r[0][0].as<std::string>();
        k.key_hash = pqxx::binarystring(r[0][1]).str();
        k.key_disabled = r[0][2].as<bool>();
        k.org = ReadOrg(r[0], 3);
        out = std::move(k);
    });
    co_return out;
}

Organization OrgRepo::EnsureOrganizationSync(const std::string& name, int tier, bool force_tier,
                                             std::int64_t opening_credits) {
    Organization org;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        w.exec_prepared(kInsertOrg, NewUuid(), name, tier);
        if (force_tier) w.exec_prepared(kSetTier, name, tier);
        org = ReadOrg(w.exec_prepared(kFindOrg, name)[0], 0);
        w.exec_prepared(kOpenAccount, org.id, opening_credits);
        w.exec_prepared(kNotifyKeys);
        w.commit();
    });
    return org;
}

std::optional<Organization> OrgRepo::FindOrganizationSync(const std::string& name) {
    std::optional<Organization> org;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kFindOrg, name);
        if (!r.empty()) org = ReadOrg(r[0], 0);
    });
    return org;
}

std::string OrgRepo::AddKeySync(const std::string& org_id, const std::string& key_hash,
                                bool reenable) {
    std::string id;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const pqxx::binarystring hash(key_hash);
        w.exec_prepared(kInsertKey, NewUuid(), org_id, hash);
        if (reenable) w.exec_prepared(kEnableKey, hash);
        id = w.exec_prepared(kKeyId, hash)[0][0].as<std::string>();
        w.exec_prepared(kNotifyKeys);
        w.commit();
    });
    return id;
}

bool OrgRepo::DisableKeySync(const std::string& key_id) {
    if (!IsUuid(key_id)) return false;
    bool found = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        found = !w.exec_prepared(kDisableKey, key_id).empty();
        w.exec_prepared(kNotifyKeys);
        w.commit();
    });
    return found;
}

std::vector<ApiKeyInfo> OrgRepo::ListKeysSync() {
    std::vector<ApiKeyInfo> keys;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec_prepared(kListKeys)) {
            keys.push_back(ApiKeyInfo{row[0].as<std::string>(), row[1].as<std::string>(),
                                      FromEpochMicros(row[2].as<long long>()), row[3].as<bool>()});
        }
    });
    return keys;
}

bool OrgRepo::SetSuspendedSync(const std::string& name, bool suspended) {
    bool found = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(kSetStatus, name, suspended ? "suspended" : "active");
        found = !r.empty();
        if (found && suspended) w.exec_prepared(kCancelOrgTasks, r[0][0].as<std::string>());
        w.exec_prepared(kNotifyKeys);
        w.commit();
    });
    return found;
}

}  // namespace genhost::store
