// genhost/store/credits_repo.hpp
//
// Provides CreditRepo: the credit ledger of migrations/0014_credits.sql as the organization
// endpoints and the operator's `genhost credits` commands read and change it. Charges and refunds
// are not made here: task creation (genhost_create_tasks), the end of a task (the tasks_settle
// trigger) and realtime sessions book them inside their own transactions (docs/credits.md).
//
// Awaitable methods run on the database pool and are for I/O-thread coroutines; *Sync methods
// block and are for the command line. Errors: DatabaseUnavailable when the database is
// unreachable; std::runtime_error for unexpected SQL failures.
#pragma once

#include "genhost/store/database.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

// OrganizationCredits is what GET /v1/organization reads: the balance, and the generations per
// model in the rolling 24 hours of the daily limit (models with none are absent).
struct OrganizationCredits {
    std::int64_t balance = 0;
    std::map<std::string, std::int64_t> daily_generations;
};

// UsageRow is one (UTC day, usage model)'s net credits: charges minus refunds booked that day.
struct UsageRow {
    std::string day;  // YYYY-MM-DD
    std::string model;
    std::int64_t amount = 0;
};

// AccountInfo is one organization's account, as `genhost credits show` prints it.
struct AccountInfo {
    std::string org_name;
    int tier = 1;
    std::int64_t balance = 0;
    std::int64_t spent_30_days = 0;  // net charges over the 30 UTC days ending today
    std::int64_t granted = 0;        // every grant, the opening balance included
    std::int64_t charged = 0;        // every charge
    std::int64_t refunded = 0;       // every refund
    bool metered = true;
};

class CreditRepo {
  public:
    // Registers the repository's statements with `db` (Prepare), at any time.
    explicit CreditRepo(Database& db) : db_(db) { Prepare(db); }

    static void Prepare(Database& db);

    // Organization reads organization `org_id`'s balance (0 without an account) and its daily
    // generation counts.
    boost::asio::awaitable<OrganizationCredits> Organization(std::string org_id);

    // Usage returns the net credits per UTC day and usage model booked for `org_id` on days in
    // [start, before) (dates YYYY-MM-DD), ordered by day and model; days and models without
    // entries are absent.
    boost::asio::awaitable<std::vector<UsageRow>> Usage(std::string org_id, std::string start,
                                                        std::string before);

    // GrantSync adds `amount` credits (negative: takes back) to organization `org_name` as a
    // grant entry with `note`; returns the new balance, or nullopt when there is no such
    // organization. Throws std::invalid_argument when a take-back exceeds the balance.
    std::optional<std::int64_t> GrantSync(const std::string& org_name, std::int64_t amount,
                                          const std::string& note);

    // AccountsSync lists every organization's account (with `org_name`: that one only), by name.
    std::vector<AccountInfo> AccountsSync(const std::string& org_name = {});

  private:
    Database& db_;
};

}  // namespace genhost::store
