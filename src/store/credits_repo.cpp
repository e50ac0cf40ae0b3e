#include "genhost/store/credits_repo.hpp"

#include "genhost/core/ids.hpp"

#include <pqxx/pqxx>

#include <stdexcept>

namespace genhost::store {

namespace {

constexpr const char* kBalance = "credits_balance";
constexpr const char* kBalanceSql =
    "SELECT coalesce((SELECT balance FROM credit_accounts WHERE org_id = $1), 0)";

// The daily limit's window (migration 0004: buckets within the last 24 h 15 min).
constexpr const char* kDaily = "credits_daily_generations";
constexpr const char* kDailySql =
    "SELECT model, sum(count)::bigint FROM daily_generations"
    " WHERE org_id = $1 AND bucket > now() - interval '24 hours 15 minutes' AND count > 0"
    " GROUP BY model";

constexpr const char* kUsage = "credits_usage";
constexpr const char* kUsageSql =
    "SELECT to_char(day, 'YYYY-MM-DD'), model, (charged - refunded)::bigint FROM credit_usage"
    " WHERE org_id = $1 AND day >= $2::date AND day < $3::date ORDER BY day, model";

constexpr const char* kFindOrg = "credits_find_org";
constexpr const char* kFindOrgSql = "SELECT id FROM organizations WHERE name = $1";

constexpr const char* kGrant = "credits_grant";
constexpr const char* kGrantSql = "SELECT genhost_credit_grant($1, $2, $3)";

constexpr const char* kAccounts = "credits_accounts";
constexpr const char* kAccountsSql =
    "SELECT o.name, o.tier, coalesce(a.balance, 0), genhost_credit_spent(o.id),"
    " coalesce(a.granted, 0), coalesce(a.charged, 0), coalesce(a.refunded, 0),"
    " coalesce(a.metered, true)"
    " FROM organizations o LEFT JOIN credit_accounts a ON a.org_id = o.id"
    " WHERE $1 = '' OR o.name = $1 ORDER BY o.name";

}  // namespace

void CreditRepo::Prepare(Database& db) {
    db.Prepare(kBalance, kBalanceSql);
    db.Prepare(kDaily, kDailySql);
    db.Prepare(kUsage, kUsageSql);
    db.Prepare(kFindOrg, kFindOrgSql);
    db.Prepare(kGrant, kGrantSql);
    db.Prepare(kAccounts, kAccountsSql);
}

boost::asio::awaitable<OrganizationCredits> CreditRepo::Organization(std::string org_id) {
    OrganizationCredits out;
    if (!IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::read_transaction t(c);
        out.balance = t.exec_prepared(kBalance, org_id)[0][0].as<std::int64_t>();
        for (const auto& row : t.exec_prepared(kDaily, org_id)) {
            out.daily_generations[row[0].as<std::string>()] = row[1].as<std::int64_t>();
        }
    });
    co_return out;
}

boost::asio::awaitable<std::vector<UsageRow>> CreditRepo::Usage(std::string org_id,
                                                                std::string start,
                                                                std::string before) {
    std::vector<UsageRow> out;
    if (!IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec_prepared(kUsage, org_id, start, before)) {
            out.push_back(
                {row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::int64_t>()});
        }
    });
    co_return out;
}

std::optional<std::int64_t> CreditRepo::GrantSync(const std::string& org_name, std::int64_t amount,
                                                  const std::string& note) {
    std::optional<std::int64_t> out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto org = w.exec_prepared(kFindOrg, org_name);
        if (org.empty()) return;
        try {
            out = w.exec_prepared(kGrant, org[0][0].as<std::string>(), amount, note)[0][0]
                      .as<std::int64_t>();
        } catch (const pqxx::check_violation&) {
            throw std::invalid_argument("the balance cannot go below zero");
        }
        w.commit();
    });
    return out;
}

std::vector<AccountInfo> CreditRepo::AccountsSync(const std::string& org_name) {
    std::vector<AccountInfo> out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::read_transaction t(c);
        for (const auto& row : t.exec_prepared(kAccounts, org_name)) {
            AccountInfo a;
            a.org_name = row[0].as<std::string>();
            a.tier = row[1].as<int>();
            a.balance = row[2].as<std::int64_t>();
            a.spent_30_days = row[3].as<std::int64_t>();
            a.granted = row[4].as<std::int64_t>();
            a.charged = row[5].as<std::int64_t>();
            a.refunded = row[6].as<std::int64_t>();
            a.metered = row[7].as<bool>();
            out.push_back(std::move(a));
        }
    });
    return out;
}

}  // namespace genhost::store
