// The store module against a real PostgreSQL: migrations under concurrency, the task queue's
// state machine (claim, lease, finish, cancel, throttling, re-queue), the daily limit, and the
// workers' lease heartbeat under thousands of short tasks.
#include "support/pg.hpp"

#include "genhost/auth/auth.hpp"
#include "genhost/catalog/catalog.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/providers/provider.hpp"
#include "genhost/store/async_pg.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/store/tasks_repo.hpp"
#include "genhost/tasks/retention_sweeper.hpp"
#include "genhost/tasks/worker_pool.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace genhost::testing {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// InstantProvider finishes every task at once with a one-byte output.
class InstantProvider final : public providers::Provider {
  public:
    std::vector<providers::Output> Run(providers::TaskContext&) override {
        ++runs;
        return {providers::Output{"out.txt", "x", ""}};
    }
    std::atomic<int> runs{0};
};

class Queue : public ::testing::Test {
  protected:
    void SetUp() override {
        if (ClusterDsn().empty()) GTEST_SKIP() << "no PostgreSQL configured";
        db_ = std::make_unique<TestDatabase>();
        store::Migrate(db_->dsn());
        pool_ = std::make_unique<store::Database>(db_->dsn(), 2);
        store::OrgRepo::Prepare(*pool_);
        store::TaskRepo::Prepare(*pool_);
        pool_->Start();
        orgs_ = std::make_unique<store::OrgRepo>(*pool_);
        tasks_ = std::make_unique<store::TaskRepo>(*pool_);
        org_ = orgs_->EnsureOrganizationSync("acme", 1, false).id;
    }

    template <class T>
    T Await(asio::awaitable<T> a) {
        return asio::co_spawn(io_, std::move(a), asio::use_future).get();
    }

    store::CreateResult Create(const std::string& id, int max_concurrent = 1, int max_daily = 100,
                               const std::string& model = "gen4_image") {
        store::NewTask t{id,    org_,           "text_to_image",
                         model, model,          R"({"model":"gen4_image"})",
                         5,     max_concurrent, max_daily};
        auto f = asio::co_spawn(io_, tasks_->Create(t), asio::use_future);
        io_.restart();
        io_.run();
        return f.get();
    }

    std::string Status(const std::string& id) {
        auto f = asio::co_spawn(io_, tasks_->Get(org_, id), asio::use_future);
        io_.restart();
        io_.run();
        const auto t = f.get();
        return t ? std::string(store::TaskStatusName(t->status)) : "missing";
    }

    // CreatePending stores `n` PENDING tasks at once (no concurrency limit to speak of).
    void CreatePending(int n) {
        std::vector<std::future<store::CreateResult>> created;
        for (int i = 0; i < n; ++i) {
            store::NewTask t{NewOrderedUuid(),
                             org_,
                             "text_to_image",
                             "gen4_image",
                             "gen4_image",
                             R"({"model":"gen4_image"})",
                             5,
                             1000000,
                             1000000};
            created.push_back(asio::co_spawn(io_, tasks_->Create(t), asio::use_future));
        }
        io_.restart();
        io_.run();
        for (auto& f : created) ASSERT_EQ(f.get().kind, store::CreateResult::Kind::kCreated);
    }

    long Count(const std::string& where) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        return n.exec1("SELECT count(*) FROM tasks WHERE " + where)[0].as<long>();
    }

    asio::io_context io_;
    std::unique_ptr<TestDatabase> db_;
    std::unique_ptr<store::Database> pool_;
    std::unique_ptr<store::OrgRepo> orgs_;
    std::unique_ptr<store::TaskRepo> tasks_;
    std::string org_;
};

TEST(Migrations, ConcurrentStartsApplyEachMigrationOnce) {
    if (ClusterDsn().empty()) GTEST_SKIP();
    TestDatabase db;
    std::vector<std::future<int>> runs;
    for (int i = 0; i < 4; ++i) {
        runs.push_back(std::async(std::launch::async, [&] { return store::Migrate(db.dsn()); }));
    }
    int total = 0;
    for (auto& r : runs) total += r.get();
    pqxx::connection c(db.dsn());
    pqxx::nontransaction n(c);
    const int files = n.exec("SELECT count(*) FROM schema_migrations")[0][0].as<int>();
    EXPECT_GE(files, 1);
    EXPECT_EQ(total, files);
    EXPECT_EQ(store::Migrate(db.dsn()), 0);
}

TEST_F(Queue, CreateClaimFinish) {
    const std::string id = NewUuid();
    const auto created = Create(id);
    EXPECT_EQ(created.kind, store::CreateResult::Kind::kCreated);
    EXPECT_EQ(created.status, store::TaskStatus::kPending);
    EXPECT_EQ(Status(id), "PENDING");

    const auto claimed = tasks_->ClaimSync("node-a", 30);
    ASSERT_TRUE(claimed);
    EXPECT_EQ(claimed->id, id);
    EXPECT_EQ(claimed->attempts, 1);
    EXPECT_FALSE(tasks_->ClaimSync("node-b", 30));  // nothing else to claim
    EXPECT_EQ(Status(id), "RUNNING");
    EXPECT_TRUE(tasks_->SetProgressSync(id, "node-a", 0.5));
    EXPECT_FALSE(tasks_->SetProgressSync(id, "node-b", 0.5));  // not its lease

    EXPECT_FALSE(
        tasks_->FinishSync(id, "node-b", store::TaskStatus::kSucceeded, {"x.png"}, "", ""));
    EXPECT_TRUE(tasks_->FinishSync(id, "node-a", store::TaskStatus::kSucceeded, {"x.png"}, "", ""));
    EXPECT_EQ(Status(id), "SUCCEEDED");
    EXPECT_FALSE(
        tasks_->FinishSync(id, "node-a", store::TaskStatus::kFailed, {}, "again", "INTERNAL"));
}

TEST_F(Queue, ThrottledTasksArePromotedOldestFirstWhenASlotFrees) {
    const std::string a = NewUuid(), b = NewUuid(), c = NewUuid();
    EXPECT_EQ(Create(a).status, store::TaskStatus::kPending);
    EXPECT_EQ(Create(b).status, store::TaskStatus::kThrottled);
    EXPECT_EQ(Create(c).status, store::TaskStatus::kThrottled);
    const auto claimed = tasks_->ClaimSync("node", 30);
    ASSERT_TRUE(claimed);
    EXPECT_EQ(claimed->id, a);
    EXPECT_FALSE(tasks_->ClaimSync("node", 30));
    ASSERT_TRUE(tasks_->FinishSync(a, "node", store::TaskStatus::kSucceeded, {}, "", ""));
    EXPECT_EQ(Status(b), "PENDING");
    EXPECT_EQ(Status(c), "THROTTLED");
    // A new task queues behind the throttled one even though... no slot is free anyway.
    const std::string d = NewUuid();
    EXPECT_EQ(Create(d).status, store::TaskStatus::kThrottled);
}

TEST_F(Queue, CancellingReleasesTheSlotAndDeletingFinishedTasksReturnsOutputs) {
    const std::string a = NewUuid(), b = NewUuid();
    Create(a);
    Create(b);
    auto f = asio::co_spawn(io_, tasks_->Cancel(org_, a, true), asio::use_future);
    io_.restart();
    io_.run();
    EXPECT_EQ(f.get().kind, store::CancelResult::Kind::kCancelled);
    EXPECT_EQ(Status(a), "missing");  // deleted from the API's point of view
    EXPECT_EQ(Status(b), "PENDING");  // took the freed slot

    const auto claimed = tasks_->ClaimSync("node", 30);
    ASSERT_TRUE(claimed);
    ASSERT_TRUE(
        tasks_->FinishSync(b, "node", store::TaskStatus::kSucceeded, {"o1.png", "o2.png"}, "", ""));
    auto g = asio::co_spawn(io_, tasks_->Cancel(org_, b, true), asio::use_future);
    io_.restart();
    io_.run();
    const auto deleted = g.get();
    EXPECT_EQ(deleted.kind, store::CancelResult::Kind::kDeleted);
    EXPECT_EQ(deleted.outputs, (std::vector<std::string>{"o1.png", "o2.png"}));
    EXPECT_EQ(tasks_->CancelSync(org_, b, true).kind, store::CancelResult::Kind::kNotFound);
}

TEST_F(Queue, OperatorCancelOfARunningTaskLosesTheWorkersLease) {
    const std::string a = NewUuid();
    Create(a);
    ASSERT_TRUE(tasks_->ClaimSync("node", 30));
    EXPECT_EQ(tasks_->CancelSync("", a, false).kind, store::CancelResult::Kind::kCancelled);
    EXPECT_EQ(Status(a), "CANCELLED");
    EXPECT_TRUE(tasks_->HeartbeatSync("node", 30).empty());
    EXPECT_FALSE(tasks_->FinishSync(a, "node", store::TaskStatus::kSucceeded, {}, "", ""));
    EXPECT_EQ(tasks_->CancelSync("", a, false).kind, store::CancelResult::Kind::kAlreadyFinished);
}

TEST_F(Queue, ExpiredLeasesAreRequeuedThenFailedAfterMaxAttempts) {
    const std::string a = NewUuid();
    Create(a);
    ASSERT_TRUE(tasks_->ClaimSync("dead-node", 0.2));
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    EXPECT_EQ(tasks_->RequeueExpiredSync(2), 1);
    EXPECT_EQ(Status(a), "PENDING");
    const auto again = tasks_->ClaimSync("other", 0.2);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->attempts, 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    EXPECT_EQ(tasks_->RequeueExpiredSync(2), 0);
    EXPECT_EQ(Status(a), "FAILED");
}

TEST_F(Queue, ReleasingLeasesOnShutdownRequeuesWithoutCostingAnAttempt) {
    const std::string a = NewUuid();
    Create(a);
    ASSERT_TRUE(tasks_->ClaimSync("node", 30));
    EXPECT_EQ(tasks_->ReleaseOwnedSync("node"), 1);
    EXPECT_EQ(Status(a), "PENDING");
    const auto again = tasks_->ClaimSync("node2", 30);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->attempts, 1);
}

TEST_F(Queue, PromoteRepairsSlotCountsAndRespectsTheLimit) {
    const std::string a = NewUuid(), b = NewUuid(), c = NewUuid();
    Create(a);
    Create(b);
    Create(c);
    // Simulate the race the sweeper repairs: a slot counted as used by nobody.
    {
        pqxx::connection conn(db_->dsn());
        pqxx::nontransaction n(conn);
        n.exec("UPDATE tasks SET status = 'SUCCEEDED' WHERE id = '" + a + "'");
    }
    EXPECT_EQ(tasks_->PromoteSync(org_, "gen4_image", 1), 1);
    EXPECT_EQ(Status(b), "PENDING");
    EXPECT_EQ(Status(c), "THROTTLED");
    EXPECT_EQ(tasks_->PromoteSync(org_, "gen4_image", 1), 0);
    EXPECT_EQ(tasks_->PromoteSync(org_, "gen4_image", 3), 1);
    EXPECT_EQ(Status(c), "PENDING");
    const auto groups = tasks_->ThrottledGroupsSync();
    EXPECT_TRUE(groups.empty());
}

TEST_F(Queue, TheDailyLimitCountsPerModelAndRefusesWithoutStoring) {
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(Create(NewUuid(), 10, 3).kind, store::CreateResult::Kind::kCreated);
    }
    const std::string refused = NewUuid();
    const auto r = Create(refused, 10, 3);
    EXPECT_EQ(r.kind, store::CreateResult::Kind::kRateLimited);
    EXPECT_GT(r.retry_after_seconds, 24 * 3600 - 60);
    EXPECT_EQ(Status(refused), "missing");
    EXPECT_EQ(Create(NewUuid(), 10, 3, "gen4_image_turbo").kind,
              store::CreateResult::Kind::kCreated);
}

TEST_F(Queue, ConcurrentCreationsShareTransactionsAndKeepTheLimitsExact) {
    // 300 creations at once, 250 allowed a day, 5 at a time: they are stored in batches (far
    // fewer pool jobs than calls), and both limits hold exactly.
    const auto jobs_before = pool_->Stats().jobs;
    std::vector<std::string> ids;
    std::vector<std::future<store::CreateResult>> results;
    for (int i = 0; i < 300; ++i) {
        ids.push_back(NewUuid());
        store::NewTask t{ids.back(),
                         org_,
                         "text_to_image",
                         "gen4_image",
                         "gen4_image",
                         R"({"model":"gen4_image"})",
                         5,
                         5,
                         250};
        results.push_back(asio::co_spawn(io_, tasks_->Create(t), asio::use_future));
    }
    io_.restart();
    io_.run();
    int created = 0, limited = 0, pending = 0;
    for (auto& f : results) {
        const auto r = f.get();
        if (r.kind == store::CreateResult::Kind::kRateLimited) {
            ++limited;
            EXPECT_GT(r.retry_after_seconds, 24 * 3600 - 60);
        } else {
            ++created;
            if (r.status == store::TaskStatus::kPending) ++pending;
        }
    }
    EXPECT_EQ(created, 250);
    EXPECT_EQ(limited, 50);
    EXPECT_EQ(pending, 5);
    EXPECT_LT(pool_->Stats().jobs - jobs_before, 150u);
    pqxx::connection conn(db_->dsn());
    pqxx::nontransaction n(conn);
    EXPECT_EQ(n.exec("SELECT count(*) FROM tasks")[0][0].as<int>(), 250);
    EXPECT_EQ(n.exec("SELECT sum(count) FROM daily_generations")[0][0].as<int>(), 250);
    EXPECT_EQ(n.exec("SELECT active FROM concurrency_slots")[0][0].as<int>(), 5);
    // The first five stored are the PENDING ones: creation order is kept within a batch.
    const auto first = n.exec(
        "SELECT count(*) FROM (SELECT status FROM tasks ORDER BY created_at, id LIMIT 5) f"
        " WHERE status = 'PENDING'");
    EXPECT_EQ(first[0][0].as<int>(), 5);
}

// Migration 0006's fast path (a batch of one group whose tasks wait, far from the daily limit)
// and the loop it falls back to, called directly so that the batches are exactly these.
TEST_F(Queue, BatchesOfOneWaitingGroupAreStoredThrottledInOrderAndOthersGoThroughTheLoop) {
    ASSERT_EQ(Create(NewUuid(), 1, 1000000).status, store::TaskStatus::kPending);
    ASSERT_EQ(Create(NewUuid(), 1, 1000000).status, store::TaskStatus::kThrottled);
    pqxx::connection conn(db_->dsn());
    pqxx::nontransaction n(conn);
    const auto task = [&](const std::string& id, const std::string& model, int max_daily) {
        return nlohmann::json{
            {"id", id},       {"org_id", org_},      {"endpoint", "text_to_image"},
            {"model", model}, {"limit_key", model},  {"input", {{"model", model}}},
            {"credits", 5},   {"max_concurrent", 1}, {"max_daily", max_daily}};
    };
    const auto call = [&](const nlohmann::json& batch) {
        return n.exec_params(
            "SELECT result, retry_after, created_at IS NOT NULL,"
            " lag(created_at) OVER () <= created_at"
            " FROM genhost_create_tasks($1::jsonb)",
            batch.dump());
    };
    const auto daily = [&](const std::string& model) {
        return n
            .exec_params(
                "SELECT coalesce(sum(count), 0) FROM daily_generations"
                " WHERE model = $1",
                model)[0][0]
            .as<int>();
    };

    // Three new gen4_image tasks with this daily limit; their ids in `ids`.
    std::vector<std::string> ids;
    const auto three = [&](int max_daily) {
        nlohmann::json batch = nlohmann::json::array();
        ids.clear();
        for (int i = 0; i < 3; ++i) {
            ids.push_back(NewUuid());
            batch.push_back(task(ids.back(), "gen4_image", max_daily));
        }
        return batch;
    };

    // Fast path: every task THROTTLED, in the batch's order, counted once each.
    auto rows = call(three(1000000));
    ASSERT_EQ(rows.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(rows[i][0].as<std::string>(), "THROTTLED");
        EXPECT_EQ(rows[i][1].as<int>(), 0);
        EXPECT_TRUE(rows[i][2].as<bool>());
        if (i > 0) {
            EXPECT_TRUE(rows[i][3].as<bool>()) << "row " << i << " is not newer";
        }
        EXPECT_EQ(Status(ids[i]), "THROTTLED");
    }
    EXPECT_EQ(daily("gen4_image"), 5);

    // Near the daily limit the loop decides: one more fits (6), the other two are refused and
    // not stored.
    rows = call(three(6));
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0][0].as<std::string>(), "THROTTLED");
    EXPECT_EQ(rows[1][0].as<std::string>(), "rate_limited");
    EXPECT_EQ(rows[2][0].as<std::string>(), "rate_limited");
    EXPECT_GT(rows[1][1].as<int>(), 24 * 3600 - 60);
    EXPECT_EQ(Status(ids[0]), "THROTTLED");
    EXPECT_EQ(Status(ids[1]), "missing");
    EXPECT_EQ(daily("gen4_image"), 6);

    // Two groups in one batch: the loop; the other model's group has a free slot.
    const std::string other = NewUuid(), same = NewUuid();
    rows = call(nlohmann::json::array(
        {task(same, "gen4_image", 1000000), task(other, "gen4_image_turbo", 1000000)}));
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0][0].as<std::string>(), "THROTTLED");
    EXPECT_EQ(rows[1][0].as<std::string>(), "PENDING");
    EXPECT_EQ(Status(other), "PENDING");

    // One group with nobody waiting: the loop takes the free slot for the first task only.
    const std::string first = NewUuid(), second = NewUuid();
    rows = call(nlohmann::json::array(
        {task(first, "gen3a_turbo", 1000000), task(second, "gen3a_turbo", 1000000)}));
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0][0].as<std::string>(), "PENDING");
    EXPECT_EQ(rows[1][0].as<std::string>(), "THROTTLED");
}

TEST_F(Queue, ConcurrentPollsSeeOnlyTheirOwnOrganizationsTasks) {
    const std::string other = orgs_->EnsureOrganizationSync("globex", 1, false).id;
    const std::string mine = NewUuid();
    ASSERT_EQ(Create(mine, 10, 100).kind, store::CreateResult::Kind::kCreated);
    std::vector<std::future<std::optional<store::TaskRecord>>> own, foreign, missing;
    for (int i = 0; i < 50; ++i) {
        own.push_back(asio::co_spawn(io_, tasks_->Get(org_, mine), asio::use_future));
        foreign.push_back(asio::co_spawn(io_, tasks_->Get(other, mine), asio::use_future));
        missing.push_back(asio::co_spawn(io_, tasks_->Get(org_, NewUuid()), asio::use_future));
    }
    // Upper-case ids are the same task.
    std::string upper = mine;
    for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    auto upper_get = asio::co_spawn(io_, tasks_->Get(org_, upper), asio::use_future);
    io_.restart();
    io_.run();
    for (auto& f : own) {
        const auto t = f.get();
        ASSERT_TRUE(t);
        EXPECT_EQ(t->id, mine);
        EXPECT_EQ(t->status, store::TaskStatus::kPending);
    }
    for (auto& f : foreign) EXPECT_FALSE(f.get());
    for (auto& f : missing) EXPECT_FALSE(f.get());
    EXPECT_TRUE(upper_get.get());
}

TEST_F(Queue, BatchesWaitForTheBusyLaneUntilEnoughCallsWaitForASecond) {
    // Two lanes, a second lane only once 3 calls wait. The seven calls are all submitted before
    // any execution can finish: the first goes out alone, the next three wait and then take the
    // idle lane together, the last three wait for a lane to finish.
    std::mutex mu;
    std::vector<std::size_t> sizes;
    store::AsyncBatcher<int, int> batcher(
        *pool_, "spill_test",
        "SELECT x FROM unnest($1::int[]) WITH ORDINALITY AS t(x, i) ORDER BY i",
        /*idempotent=*/true, /*max_batch=*/64, /*lanes=*/2, /*spill=*/3,
        [&](const std::vector<int>& in) {
            std::lock_guard lock(mu);
            sizes.push_back(in.size());
            std::string array = "{";
            for (const int v : in) array += (array.size() > 1 ? "," : "") + std::to_string(v);
            return std::vector<std::string>{array + "}"};
        },
        [](const store::PgResult& r, const std::vector<int>&) {
            std::vector<int> out;
            for (int row = 0; row < r.rows(); ++row)
                out.push_back(static_cast<int>(r.Int64(row, 0)) * 10);
            return out;
        });
    std::vector<std::future<int>> results;
    for (int i = 1; i <= 7; ++i) {
        results.push_back(asio::co_spawn(io_, batcher.Submit(i), asio::use_future));
    }
    io_.restart();
    io_.run();
    for (int i = 1; i <= 7; ++i) EXPECT_EQ(results[i - 1].get(), i * 10);
    EXPECT_EQ(sizes, (std::vector<std::size_t>{1, 3, 3}));

    // An idle batcher sends a call at once, alone.
    auto one = asio::co_spawn(io_, batcher.Submit(8), asio::use_future);
    io_.restart();
    io_.run();
    EXPECT_EQ(one.get(), 80);
    EXPECT_EQ(sizes.back(), 1u);
}

TEST_F(Queue, PerContextLanesBatchOnlyTheirOwnThreadsCalls) {
    // Each call answers with the backend that ran it. Three calls made on each of two event
    // loops: with kPerContext every loop gets a connection of its own and its calls are batched
    // only with each other (all three in one statement: the lane sends once the loop's queued
    // handlers have run); with kShared both loops' calls go through the one lane.
    // Per context also with two lanes that start once two calls wait: the second lane is taken
    // too, finds its calls gone to the first, and sends nothing.
    struct Case {
        store::LaneSharing sharing;
        int lanes;
        std::size_t spill;
    };
    for (const auto [sharing, lanes, spill] :
         {Case{store::LaneSharing::kPerContext, 1, 64}, Case{store::LaneSharing::kPerContext, 2, 2},
          Case{store::LaneSharing::kShared, 1, 64}}) {
        asio::io_context loops[2];  // outlive the batcher, whose connections wait on them
        std::mutex mu;
        std::vector<std::vector<int>> batches;
        store::AsyncBatcher<int, std::pair<int, int>> batcher(
            *pool_, "per_context_test",
            "SELECT x, pg_backend_pid() FROM unnest($1::int[]) WITH ORDINALITY AS t(x, i) ORDER BY "
            "i",
            /*idempotent=*/true, /*max_batch=*/64, lanes, spill,
            [&](const std::vector<int>& in) {
                std::lock_guard lock(mu);
                batches.push_back(in);
                std::string array = "{";
                for (const int v : in) array += (array.size() > 1 ? "," : "") + std::to_string(v);
                return std::vector<std::string>{array + "}"};
            },
            [](const store::PgResult& r, const std::vector<int>&) {
                std::vector<std::pair<int, int>> out;
                for (int row = 0; row < r.rows(); ++row)
                    out.emplace_back(static_cast<int>(r.Int64(row, 0)),
                                     static_cast<int>(r.Int64(row, 1)));
                return out;
            },
            sharing);
        // Each loop gets its three calls before it starts, so its batches are the same on every
        // run; it then keeps running (a shared lane's connection waits on the loop that used it
        // first) until both loops' calls are answered.
        std::vector<int> pids;
        std::vector<std::thread> threads;
        std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
        for (int loop = 0; loop < 2; ++loop) {
            asio::io_context& io = loops[loop];
            std::vector<std::future<std::pair<int, int>>> results;
            for (int i = 1; i <= 3; ++i)
                results.push_back(
                    asio::co_spawn(io, batcher.Submit(loop * 10 + i), asio::use_future));
            guards.push_back(asio::make_work_guard(io));
            threads.emplace_back([&io] { io.run(); });
            for (int i = 1; i <= 3; ++i) {
                const auto [x, pid] = results[i - 1].get();
                EXPECT_EQ(x, loop * 10 + i);
                pids.push_back(pid);
            }
        }
        for (auto& g : guards) g.reset();
        for (auto& t : threads) t.join();
        // One backend per loop's calls; the two loops share it only under kShared.
        EXPECT_EQ(pids[0], pids[1]);
        EXPECT_EQ(pids[0], pids[2]);
        EXPECT_EQ(pids[3], pids[4]);
        EXPECT_EQ(pids[3], pids[5]);
        if (sharing == store::LaneSharing::kPerContext) {
            EXPECT_NE(pids[0], pids[3]);
            EXPECT_EQ(batches, (std::vector<std::vector<int>>{{1, 2, 3}, {11, 12, 13}}));
        } else {
            EXPECT_EQ(pids[0], pids[3]);
        }
    }
}

TEST_F(Queue, ABatchFailsAsAWholeWithTheDatabaseError) {
    // An organization that does not exist breaks the foreign key: the batch's transaction is
    // rolled back and its callers get the error; nothing of it is stored. (Free, so that the
    // credit ledger, which would refuse an organization without an account, lets it through.)
    store::NewTask bad{NewUuid(),
                       NewUuid(),
                       "text_to_image",
                       "gen4_image",
                       "gen4_image",
                       R"({"model":"gen4_image"})",
                       0,
                       5,
                       100};
    auto f = asio::co_spawn(io_, tasks_->Create(bad), asio::use_future);
    io_.restart();
    io_.run();
    EXPECT_THROW(f.get(), std::exception);
    EXPECT_EQ(Create(NewUuid(), 5, 100).kind, store::CreateResult::Kind::kCreated);
    pqxx::connection conn(db_->dsn());
    pqxx::nontransaction n(conn);
    EXPECT_EQ(n.exec("SELECT count(*) FROM tasks")[0][0].as<int>(), 1);
}

TEST_F(Queue, TasksPastTheirRetentionAreDeletedWithTheirOutputs) {
    char tmpl[] = "/tmp/genhost-retention-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::filesystem::path dir = tmpl;
    outputs::LocalOutputStore store(dir);
    const std::string done = NewUuid(), cancelled = NewUuid(), recent = NewUuid(),
                      waiting = NewUuid();
    for (const auto& id : {done, recent, cancelled, waiting}) {
        ASSERT_EQ(Create(id, 10, 100).kind, store::CreateResult::Kind::kCreated);
    }
    for (const auto& id : {done, recent}) {
        const auto claimed = tasks_->ClaimSync("node", 30);
        ASSERT_TRUE(claimed);
        ASSERT_EQ(claimed->id, id);
        store.Put(id, "x.png", "png bytes");
        ASSERT_TRUE(
            tasks_->FinishSync(id, "node", store::TaskStatus::kSucceeded, {"x.png"}, "", ""));
    }
    EXPECT_EQ(tasks_->CancelSync(org_, cancelled, false).kind,
              store::CancelResult::Kind::kCancelled);
    {
        pqxx::connection conn(db_->dsn());
        pqxx::nontransaction n(conn);
        n.exec("UPDATE tasks SET finished_at = now() - interval '31 days' WHERE id IN ('" + done +
               "', '" + cancelled + "')");
    }

    tasks::RetentionOptions keep;
    keep.retention = std::chrono::seconds(0);
    EXPECT_EQ(tasks::RetentionSweeper(keep, *tasks_, store).SweepOnce(), 0);

    tasks::RetentionOptions opts;  // 30 days
    opts.batch = 1;                // several rounds
    tasks::RetentionSweeper sweeper(opts, *tasks_, store);
    EXPECT_EQ(sweeper.SweepOnce(), 2);
    EXPECT_EQ(Status(done), "missing");
    EXPECT_EQ(Status(cancelled), "missing");
    EXPECT_FALSE(store.Stat(done, "x.png"));
    EXPECT_EQ(Status(recent), "SUCCEEDED");
    EXPECT_TRUE(store.Stat(recent, "x.png"));
    EXPECT_EQ(Status(waiting), "PENDING");
    EXPECT_EQ(sweeper.SweepOnce(), 0);
    std::filesystem::remove_all(dir);
}

TEST_F(Queue, KeysResolveByHashAndDisabledKeysSaySo) {
    const std::string key = auth::GenerateKey();
    const std::string id = orgs_->AddKeySync(org_, auth::HashKey(key), false);
    auto f = asio::co_spawn(io_, orgs_->FindKey(auth::HashKey(key)), asio::use_future);
    io_.restart();
    io_.run();
    auto found = f.get();
    ASSERT_TRUE(found);
    EXPECT_EQ(found->org.id, org_);
    EXPECT_FALSE(found->key_disabled);
    EXPECT_TRUE(orgs_->DisableKeySync(id));
    auto g = asio::co_spawn(io_, orgs_->FindKey(auth::HashKey(key)), asio::use_future);
    io_.restart();
    io_.run();
    EXPECT_TRUE(g.get()->key_disabled);
    EXPECT_FALSE(orgs_->DisableKeySync("not-a-uuid"));
    // The plaintext key is nowhere in the database.
    pqxx::connection conn(db_->dsn());
    pqxx::nontransaction n(conn);
    EXPECT_EQ(n.exec("SELECT count(*) FROM api_keys WHERE encode(key_hash, 'escape') LIKE '%" +
                     key.substr(4, 20) + "%'")[0][0]
                  .as<int>(),
              0);
}

TEST_F(Queue, ConnectionsClosedWhileIdleAreReopenedBeforeUseAndWritesCutShortAreNotResent) {
    const std::string id = NewUuid();
    ASSERT_EQ(Create(id, 5, 100).kind, store::CreateResult::Kind::kCreated);
    ASSERT_EQ(Status(id), "PENDING");  // both request-path connections are open now
    pqxx::connection admin(db_->dsn());
    pqxx::nontransaction n(admin);
    const auto kill = [&](const std::string& statement) {
        return n
            .exec(
                "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                " AND query LIKE '%" +
                statement + "%'")[0][0]
            .as<int>();
    };
    // Connections the server closed while they sat idle: a creation's is seen to be closed
    // before anything is sent on it, a poll is sent once more on a new connection; both go
    // through.
    ASSERT_EQ(kill("tasks WHERE id = ANY"), 1);
    EXPECT_EQ(Status(id), "PENDING");
    ASSERT_EQ(kill("genhost_create_tasks"), 1);
    EXPECT_EQ(Create(NewUuid(), 5, 100).kind, store::CreateResult::Kind::kCreated);

    // A creation whose connection breaks while it runs is not sent again (it may have been
    // applied): it fails as unavailable. A lock on the tasks table holds it in the server.
    pqxx::connection locker(db_->dsn());
    pqxx::work lock(locker);
    lock.exec("LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE");
    auto pending = std::async(std::launch::async, [&] { return Create(NewUuid(), 5, 100); });
    int waiting = 0;
    for (int i = 0; i < 500 && waiting == 0; ++i) {
        waiting = n.exec(
                       "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                       " AND query LIKE '%genhost_create_tasks%' AND pid <> pg_backend_pid()")[0][0]
                      .as<int>();
        if (waiting == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(waiting, 1);
    ASSERT_EQ(kill("genhost_create_tasks"), 1);
    lock.abort();
    EXPECT_THROW(pending.get(), store::DatabaseUnavailable);
    EXPECT_EQ(Create(NewUuid(), 5, 100).kind, store::CreateResult::Kind::kCreated);
    EXPECT_EQ(n.exec("SELECT count(*) FROM tasks")[0][0].as<int>(), 3);
}

TEST_F(Queue, APoolConnectionClosedWhileIdleIsReopenedBeforeTheNextJob) {
    store::Database pool(db_->dsn(), 1);
    pool.Start();
    const auto backend = [&] {
        int pid = 0;
        pool.RunSync([&](pqxx::connection_base& c) {
            pid = pqxx::nontransaction(c).exec("SELECT pg_backend_pid()")[0][0].as<int>();
        });
        return pid;
    };
    const int first = backend();
    pqxx::connection admin(db_->dsn());
    pqxx::nontransaction n(admin);
    ASSERT_TRUE(n.exec("SELECT pg_terminate_backend(" + std::to_string(first) + ", 5000)")[0][0]
                    .as<bool>());
    // The next job runs on a new connection instead of failing on the closed one.
    int second = 0;
    EXPECT_NO_THROW(second = backend());
    EXPECT_NE(second, 0);
    EXPECT_NE(second, first);
    pool.Stop();
}

TEST_F(Queue, AConnectionWaitingOutABackoffTriesAtOnceWhenAnotherHasConnected) {
    // A role that cannot log in yet makes every connect fail while the server itself is up.
    const std::string role = "genhost_late_" + NewUuid().substr(0, 8);
    pqxx::connection admin(db_->dsn());
    pqxx::nontransaction n(admin);
    n.exec("CREATE ROLE " + role + " NOLOGIN");
    n.exec("GRANT ALL ON ALL TABLES IN SCHEMA public TO " + role);
    store::Database pool(db_->dsn() + " user=" + role, 1);
    store::TaskRepo::Prepare(pool);
    pool.Start();
    {
        store::TaskRepo tasks(pool);
        const auto poll = [&] {
            auto f = asio::co_spawn(io_, tasks.Get(org_, NewUuid()), asio::use_future);
            io_.restart();
            io_.run();
            return f.get();
        };
        // Four failed connects, each after the last one's backoff, leave a backoff of 1.6 s.
        for (const int wait_ms : {0, 150, 250, 450, 850}) {
            std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
            EXPECT_THROW(poll(), store::DatabaseUnavailable);
        }
        const auto failed = std::chrono::steady_clock::now();
        n.exec("ALTER ROLE " + role + " LOGIN");
        pool.RunSync([](pqxx::connection_base& c) { pqxx::nontransaction(c).exec("SELECT 1"); });
        // The pool's connect shows the server is back: the request path tries at once instead of
        // answering 503 until its own backoff ends.
        EXPECT_NO_THROW(poll());
        EXPECT_LT(std::chrono::steady_clock::now() - failed, std::chrono::milliseconds(1600))
            << "the machine was too slow for this test to tell";
    }
    pool.Stop();
    n.exec("DROP OWNED BY " + role);
    n.exec("DROP ROLE " + role);
}

TEST_F(Queue, StatementsRegisteredAfterStartArePreparedBeforeTheNextJob) {
    // The pool is running and its connections are open: a repository made now registers its
    // statements, and they are prepared on each connection before its next job.
    pool_->RunSync([](pqxx::connection_base& c) { pqxx::nontransaction(c).exec("SELECT 1"); });
    pool_->Prepare("late_statement", "SELECT 41 + $1::int");
    pool_->Prepare("late_statement", "SELECT 41 + $1::int");  // again, the same: nothing
    EXPECT_THROW(pool_->Prepare("late_statement", "SELECT 0"), std::logic_error);
    for (int i = 0; i < 4; ++i) {  // more jobs than connections: every connection has it
        int got = 0;
        pool_->RunSync([&](pqxx::connection_base& c) {
            got = pqxx::nontransaction(c).exec_prepared1("late_statement", 1)[0].as<int>();
        });
        EXPECT_EQ(got, 42);
    }
}

TEST_F(Queue, TheDatabaseBeingAwayIsReportedAsUnavailable) {
    store::Database broken("host=/nonexistent dbname=x user=x connect_timeout=1", 1);
    broken.Start();
    EXPECT_THROW(broken.RunSync([](pqxx::connection_base&) {}), store::DatabaseUnavailable);
}

// Thousands of short tasks under short leases, so the lease heartbeat runs many times while
// workers claim: a heartbeat must never take a claim that commits while its statement runs for a
// lost lease. Every task runs exactly once (one attempt, no run abandoned).
TEST_F(Queue, ShortTasksUnderShortLeasesAreNeverAbandoned) {
    constexpr int kTasks = 6000;
    CreatePending(kTasks);
    ASSERT_EQ(Count("status = 'PENDING'"), kTasks);

    const auto dir = std::filesystem::temp_directory_path() / ("genhost-stress-" + NewUuid());
    InstantProvider provider;
    outputs::LocalOutputStore store(dir / "outputs");
    const auto catalog = catalog::Catalog::LoadEmbedded();
    tasks::WorkerOptions options;
    options.owner = "stress-node";
    options.workers = 8;
    // A heartbeat every half second, while the eight workers claim about a task a millisecond.
    options.lease_seconds = 1.5;
    options.scratch_root = (dir / "scratch").string();
    tasks::WorkerPool workers(options, *tasks_, *catalog, {{"builtin", &provider}}, store,
                              [](int, const std::string&) { return 1000000; });
    workers.Start();
    const auto deadline = std::chrono::steady_clock::now() + 240s;
    long done = 0;
    while ((done = Count("status = 'SUCCEEDED'")) < kTasks &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(200ms);
    }
    workers.Stop(2000ms);
    EXPECT_EQ(done, kTasks);
    EXPECT_EQ(workers.Abandoned(), 0u);
    EXPECT_EQ(Count("attempts <> 1"), 0);
    EXPECT_EQ(provider.runs.load(), kTasks);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace genhost::testing
