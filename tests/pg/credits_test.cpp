// The credit ledger against a real PostgreSQL (migrations/0014_credits.sql): reservations taken
// with task creation never oversell, even with creations racing on two nodes (two pools, each
// with its own creation lanes); the entries, the balance and the usage stay in step (balance +
// charges - refunds = grants); tasks settle by the documented rules when they end; the 30-day
// spend cap refuses; realtime sessions reserve their maxDuration and are charged the time they
// ran; unmetered organizations book nothing; grants cannot take the balance below zero.
#include "support/org_database.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/store/credits_repo.hpp"
#include "genhost/store/realtime_repo.hpp"
#include "genhost/store/tasks_repo.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <pqxx/pqxx>

#include <future>
#include <thread>

namespace genhost::testing {
namespace {

namespace asio = boost::asio;
using Kind = store::CreateResult::Kind;

class CreditsTest : public OrgDatabaseTest {
  protected:
    void SetUp() override {
        OrgDatabaseTest::SetUp();
        if (IsSkipped()) return;
        store::OrgRepo orgs(*pool_);
        // An organization opened with nothing, then granted exactly what a test needs.
        ledger_org_ = orgs.EnsureOrganizationSync("ledger", 5, false, 0).id;
        credits_ = std::make_unique<store::CreditRepo>(*pool_);
        tasks_ = std::make_unique<store::TaskRepo>(*pool_, 2);
    }

    store::NewTask Task(double credits, std::int64_t max_spend = -1) {
        return store::NewTask{NewOrderedUuid(), ledger_org_,
                              "text_to_image",  "gen4_image",
                              "gen4_image",     R"({"model":"gen4_image"})",
                              credits,          1000,
                              100000,           "",
                              max_spend};
    }

    store::CreateResult Create(const store::NewTask& t) { return tasks_->CreateSync(t); }

    std::int64_t Scalar(const std::string& sql) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        const auto r = n.exec1(sql);
        return r[0].is_null() ? 0 : r[0].as<std::int64_t>();
    }

    void Sql(const std::string& sql) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        n.exec(sql);
    }

    std::int64_t Balance() {
        return Scalar("SELECT balance FROM credit_accounts WHERE org_id = '" + ledger_org_ + "'");
    }
    std::int64_t Sum(const std::string& kind) {
        return Scalar("SELECT coalesce(sum(amount), 0) FROM credit_entries WHERE org_id = '" +
                      ledger_org_ + "' AND kind = '" + kind + "'");
    }
    // ExpectInStep checks the ledger's invariants: balance + charges - refunds = grants, and the
    // usage table holds exactly the entries' charges and refunds.
    void ExpectInStep() {
        EXPECT_EQ(Balance() + Sum("charge") - Sum("refund"), Sum("grant"));
        EXPECT_EQ(Scalar("SELECT coalesce(sum(charged), 0) FROM credit_usage WHERE org_id = '" +
                         ledger_org_ + "'"),
                  Sum("charge"));
        EXPECT_EQ(Scalar("SELECT coalesce(sum(refunded), 0) FROM credit_usage WHERE org_id = '" +
                         ledger_org_ + "'"),
                  Sum("refund"));
    }

    // Run claims `id` (the oldest PENDING task) and finishes it.
    void Run(const std::string& id, store::TaskStatus status, const std::string& code = "",
             std::optional<std::int64_t> cost = std::nullopt) {
        const auto claimed = tasks_->ClaimSync("node", 30);
        ASSERT_TRUE(claimed);
        ASSERT_EQ(claimed->id, id);
        ASSERT_TRUE(tasks_->FinishSync(id, "node", status, {"out.png"},
                                       code.empty() ? "" : "failed", code, cost));
    }

    std::int64_t Cost(const std::string& id) {
        return Scalar("SELECT cost_credits FROM tasks WHERE id = '" + id + "'");
    }

    std::string ledger_org_;
    std::unique_ptr<store::CreditRepo> credits_;
    std::unique_ptr<store::TaskRepo> tasks_;
};

TEST_F(CreditsTest, ANewOrganizationOpensWithItsGrantAndOperatorsGrantAndTakeBack) {
    EXPECT_EQ(Balance(), 0);
    EXPECT_EQ(credits_->GrantSync("ledger", 500, "test"), 500);
    EXPECT_EQ(credits_->GrantSync("ledger", -200, "back"), 300);
    EXPECT_THROW(credits_->GrantSync("ledger", -301, "too much"), std::invalid_argument);
    EXPECT_EQ(Balance(), 300);
    EXPECT_FALSE(credits_->GrantSync("nobody", 5, "x"));
    // The fixture's organizations opened with the default balance.
    const auto accounts = credits_->AccountsSync();
    ASSERT_EQ(accounts.size(), 3u);
    EXPECT_EQ(accounts[0].org_name, "acme");
    EXPECT_EQ(accounts[0].balance, store::OrgRepo::kOpeningCredits);
    EXPECT_EQ(accounts[0].granted, store::OrgRepo::kOpeningCredits);
    EXPECT_EQ(accounts[2].org_name, "ledger");
    EXPECT_EQ(accounts[2].granted, 300);
    ExpectInStep();
}

TEST_F(CreditsTest, ATaskTheBalanceCannotCoverIsRefusedAndNotStored) {
    credits_->GrantSync("ledger", 20, "test");
    const auto a = Task(7.2);  // reserves 8
    EXPECT_EQ(Create(a).kind, Kind::kCreated);
    EXPECT_EQ(Create(Task(8)).kind, Kind::kCreated);
    const auto refused = Task(5);
    EXPECT_EQ(Create(refused).kind, Kind::kInsufficientCredits);
    EXPECT_EQ(Scalar("SELECT count(*) FROM tasks WHERE id = '" + refused.id + "'"), 0);
    EXPECT_EQ(Create(Task(4)).kind, Kind::kCreated);
    EXPECT_EQ(Balance(), 0);
    EXPECT_EQ(Scalar("SELECT reserved_credits FROM tasks WHERE id = '" + a.id + "'"), 8);
    // Not counted against the daily limit either: 3 creations.
    EXPECT_EQ(
        Scalar("SELECT sum(count) FROM daily_generations WHERE org_id = '" + ledger_org_ + "'"), 3);
    ExpectInStep();
}

// N creations racing on two nodes (each a pool with its own lanes, batching what arrives
// together) against a balance that covers only some of them.
TEST_F(CreditsTest, ConcurrentCreationsOnTwoNodesNeverOversell) {
    constexpr int kPerNode = 60;
    constexpr std::int64_t kBalance = 1000;
    credits_->GrantSync("ledger", kBalance, "test");
    // The io_contexts outlive the repositories: their lanes' sockets belong to them.
    asio::io_context io_b;
    store::Database other(db_->dsn(), 2);
    other.Start();
    store::TaskRepo node_b(other, 2);
    const auto run = [&](store::TaskRepo& repo, asio::io_context& io, int seed) {
        std::vector<std::future<store::CreateResult>> results;
        for (int i = 0; i < kPerNode; ++i) {
            // 7, 11, 13 credits: no multiple of them fills the balance exactly by chance.
            const double credits = (i + seed) % 3 == 0 ? 7 : ((i + seed) % 3 == 1 ? 11 : 13);
            results.push_back(asio::co_spawn(io, repo.Create(Task(credits)), asio::use_future));
        }
        io.run();
        std::vector<store::CreateResult> out;
        for (auto& f : results) out.push_back(f.get());
        return out;
    };
    auto a = std::async(std::launch::async, [&] { return run(*tasks_, io_, 0); });
    auto b = std::async(std::launch::async, [&] { return run(node_b, io_b, 1); });
    int created = 0;
    int refused = 0;
    for (auto* f : {&a, &b}) {
        for (const auto& r : f->get()) {
            if (r.kind == Kind::kCreated) ++created;
            if (r.kind == Kind::kInsufficientCredits) ++refused;
        }
    }
    EXPECT_EQ(created + refused, 2 * kPerNode);
    EXPECT_GT(created, 0);
    EXPECT_GT(refused, 0);
    const std::int64_t reserved =
        Scalar("SELECT sum(reserved_credits) FROM tasks WHERE org_id = '" + ledger_org_ + "'");
    EXPECT_LE(reserved, kBalance);
    EXPECT_EQ(Balance(), kBalance - reserved);
    EXPECT_GE(Balance(), 0);
    // Refusals only once the balance could not cover the cheapest task... or the task refused.
    EXPECT_LT(Balance(), 13);
    EXPECT_EQ(Scalar("SELECT count(*) FROM tasks WHERE org_id = '" + ledger_org_ + "'"), created);
    EXPECT_EQ(Scalar("SELECT count(*) FROM credit_entries WHERE kind = 'charge' AND org_id = '" +
                     ledger_org_ + "'"),
              created);
    ExpectInStep();
    other.Stop();
}

TEST_F(CreditsTest, EndingTasksSettleByTheRules) {
    credits_->GrantSync("ledger", 1000, "test");
    const auto ok = Task(50);
    const auto cheaper = Task(50);
    const auto moderated = Task(50);
    const auto failed = Task(50);
    const auto running = Task(50);
    const auto waiting = Task(50);
    for (const auto* t : {&ok, &cheaper, &moderated, &failed, &running, &waiting}) {
        ASSERT_EQ(Create(*t).kind, Kind::kCreated);
    }
    EXPECT_EQ(Balance(), 700);
    Run(ok.id, store::TaskStatus::kSucceeded);
    EXPECT_EQ(Cost(ok.id), 50);
    Run(cheaper.id, store::TaskStatus::kSucceeded, "", 20);  // duration auto: made shorter
    EXPECT_EQ(Cost(cheaper.id), 20);
    Run(moderated.id, store::TaskStatus::kFailed, "SAFETY.INPUT.TEXT");
    EXPECT_EQ(Cost(moderated.id), 50);  // moderated generations cost the same
    Run(failed.id, store::TaskStatus::kFailed, "INTERNAL");
    EXPECT_EQ(Cost(failed.id), 0);
    ASSERT_TRUE(tasks_->ClaimSync("node", 30));  // `running` is RUNNING now
    EXPECT_EQ(tasks_->CancelSync(ledger_org_, running.id, false).kind,
              store::CancelResult::Kind::kCancelled);
    EXPECT_EQ(Cost(running.id), 0);
    EXPECT_EQ(tasks_->CancelSync(ledger_org_, waiting.id, true).kind,
              store::CancelResult::Kind::kCancelled);
    EXPECT_EQ(Cost(waiting.id), 0);
    EXPECT_EQ(Balance(), 1000 - 50 - 20 - 50);
    EXPECT_EQ(Sum("refund"), 30 + 50 + 50 + 50);
    ExpectInStep();
    // Usage: net per model and day; refunds booked on a later day make that day negative.
    Sql("UPDATE credit_usage SET day = day - 1, refunded = 0 WHERE org_id = '" + ledger_org_ + "'");
    Sql("INSERT INTO credit_usage (org_id, day, model, refunded) VALUES ('" + ledger_org_ +
        "', genhost_utc_day(now()), 'gen4_image', 180)");
    const auto rows = Await(credits_->Usage(ledger_org_, "2000-01-01", "2100-01-01"));
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].amount, 300);
    EXPECT_EQ(rows[1].amount, -180);
    EXPECT_EQ(rows[1].model, "gen4_image");
}

TEST_F(CreditsTest, TheThirtyDaySpendCapRefuses) {
    credits_->GrantSync("ledger", 1000, "test");
    EXPECT_EQ(Create(Task(8, 20)).kind, Kind::kCreated);
    EXPECT_EQ(Create(Task(8, 20)).kind, Kind::kCreated);
    EXPECT_EQ(Create(Task(8, 20)).kind, Kind::kSpendLimited);
    // Spend older than 30 days no longer counts.
    Sql("UPDATE credit_usage SET day = day - 30 WHERE org_id = '" + ledger_org_ + "'");
    EXPECT_EQ(Create(Task(8, 20)).kind, Kind::kCreated);
    EXPECT_EQ(Balance(), 1000 - 24);
    ExpectInStep();
}

TEST_F(CreditsTest, RealtimeSessionsReserveTheirMaximumAndPayForTheTimeTheyRan) {
    credits_->GrantSync("ledger", 150, "test");
    store::RealtimeRepo sessions(*pool_);
    const auto session = [&](int seconds) {
        store::NewRealtimeSession s;
        s.id = NewUuid();
        s.org_id = ledger_org_;
        s.model = "gwm1_avatars";
        s.avatar_type = "service-preset";
        s.preset_id = "influencer";
        s.avatar_name = "Influencer";
        s.name = "Conversation";
        s.max_duration = seconds;
        s.reserve_credits = seconds / 3;  // 20 per minute
        s.credits_per_minute = 20;
        return s;
    };
    const auto ran = Await(sessions.Create(session(300)));
    ASSERT_TRUE(ran.session);
    const auto never = Await(sessions.Create(session(120)));
    ASSERT_TRUE(never.session);
    EXPECT_EQ(Balance(), 10);
    const auto refused = Await(sessions.Create(session(60)));
    EXPECT_FALSE(refused.session);
    EXPECT_EQ(refused.refused, "insufficient_credits");
    Sql("UPDATE realtime_sessions SET status = 'COMPLETED', started_at = now(), duration = 90"
        " WHERE id = '" +
        ran.session->id + "'");
    Sql("UPDATE realtime_sessions SET status = 'FAILED', failure = 'x', failure_code ="
        " 'SESSION.NOT_JOINED' WHERE id = '" +
        never.session->id + "'");
    EXPECT_EQ(
        Scalar("SELECT cost_credits FROM realtime_sessions WHERE id = '" + ran.session->id + "'"),
        30);
    EXPECT_EQ(
        Scalar("SELECT cost_credits FROM realtime_sessions WHERE id = '" + never.session->id + "'"),
        0);
    EXPECT_EQ(Balance(), 150 - 30);
    ExpectInStep();
}

TEST_F(CreditsTest, AnUnmeteredOrganizationBooksNothing) {
    Sql("UPDATE credit_accounts SET metered = false WHERE org_id = '" + ledger_org_ + "'");
    const auto t = Task(40);
    EXPECT_EQ(Create(t).kind, Kind::kCreated);
    Run(t.id, store::TaskStatus::kFailed, "INTERNAL");
    EXPECT_EQ(Balance(), 0);
    EXPECT_EQ(Scalar("SELECT count(*) FROM credit_entries WHERE org_id = '" + ledger_org_ +
                     "' AND kind <> 'grant'"),
              0);
}

}  // namespace
}  // namespace genhost::testing
