// RouterLog and RoutingSnapshotRepo against a real PostgreSQL: decisions are listed per router
// and organization, newest first, through every keyset page; the writer sends them by itself
// (on its tick, or at once when a batch is full) and Stop sends what is left; a decision the
// database refuses is dropped alone. Tasks that succeed feed model_latency (an EWMA) through the
// real finish path, read through a cache; the slots snapshot shows a group's active slots and
// its THROTTLED waiters.
#include "support/org_database.hpp"
#include "support/wait_for.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/store/router_log.hpp"
#include "genhost/store/routers_repo.hpp"
#include "genhost/store/routing_snapshot.hpp"
#include "genhost/store/tasks_repo.hpp"

#include <gtest/gtest.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <thread>

namespace genhost::testing {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

class RouterLog : public OrgDatabaseTest {
  protected:
    void SetUp() override {
        OrgDatabaseTest::SetUp();
        if (IsSkipped()) return;
        routers_ = std::make_unique<store::RouterRepo>(*pool_);
        log_ = std::make_unique<store::RouterLog>(*pool_);
        router_a_ = MakeRouter(org_, "alpha");
        router_b_ = MakeRouter(org_, "beta");
    }

    void TearDown() override {
        if (thread_.joinable()) {
            log_->Stop();
            work_.reset();
            thread_.join();
        }
        log_.reset();
        // The database threads destroy a finished job's completion handler after running it;
        // they must be done before writer_io_ (whose executor the handlers hold) goes.
        if (pool_) pool_->Stop();
    }

    std::string MakeRouter(const std::string& org, const std::string& slug) {
        store::NewRouter r;
        r.id = NewOrderedUuid();
        r.org_id = org;
        r.slug = slug;
        r.name = slug;
        r.settings_json = R"({"models":["gen4_image"]})";
        const auto made = Await(routers_->Create(r));
        EXPECT_TRUE(made.has_value());
        return made ? made->id : "";
    }

    store::RouterDecision Decision(const std::string& router, SysTime at) {
        store::RouterDecision d;
        d.id = NewOrderedUuid();
        d.org_id = org_;
        d.router_id = router;
        d.router_version = 1;
        d.request_id = "req-" + d.id.substr(0, 8);
        d.status = "routed";
        d.model = "gen4_image";
        d.provider = "builtin";
        d.estimated_credits = 5;
        d.reason_code = "lowest_cost";
        d.reason = "cheapest of 2";
        d.emptied_by_json = R"(["capability"])";
        d.pipeline_json = R"([{"stage":"capability","remaining":2}])";
        d.created_at = at;
        return d;
    }

    long Count(const std::string& where = "true") {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        return n.exec1("SELECT count(*) FROM router_requests WHERE " + where)[0].as<long>();
    }

    // RunWriter starts the log's writer on an io_context of its own thread (as an I/O thread).
    void RunWriter(std::chrono::milliseconds interval) {
        log_->Start(writer_io_.get_executor(), interval);
        thread_ = std::thread([this] { writer_io_.run(); });
    }

    std::vector<store::RouterDecision> ListAll(const std::string& org, const std::string& router,
                                               int limit, int* pages) {
        std::vector<store::RouterDecision> all;
        std::optional<store::Keyset> after;
        *pages = 0;
        for (;;) {
            const auto page = Await(log_->List(org, router, limit, after));
            ++*pages;
            all.insert(all.end(), page.decisions.begin(), page.decisions.end());
            if (!page.more) break;
            EXPECT_EQ(page.decisions.size(), static_cast<std::size_t>(limit));
            after = store::Keyset{page.decisions.back().created_at, page.decisions.back().id};
            if (*pages > 100) break;
        }
        return all;
    }

    std::unique_ptr<store::RouterRepo> routers_;
    std::unique_ptr<store::RouterLog> log_;
    std::string router_a_;
    std::string router_b_;
    asio::io_context writer_io_;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
        writer_io_.get_executor()};
    std::thread thread_;
};

TEST_F(RouterLog, ListsEveryPageNewestFirstPerRouterAndOrganization) {
    // Three decisions share each time, so the id breaks ties; appended out of order.
    const auto base = std::chrono::time_point_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now() - 1h);
    std::map<std::string, std::set<std::string>> appended;
    for (int i = 599; i >= 0; --i) {
        const auto& router = i % 2 == 0 ? router_a_ : router_b_;
        auto d = Decision(router, base + std::chrono::milliseconds(i / 6));
        if (i == 7) {  // every optional empty
            d.model.reset();
            d.provider.reset();
            d.estimated_credits.reset();
            d.reason_code.reset();
            d.reason.reset();
            d.status = "no_eligible_model";
            d.dry_run = true;
        }
        appended[router].insert(d.id);
        log_->Append(d);
    }
    EXPECT_EQ(log_->queued(), 600u);
    Await(log_->Flush());
    EXPECT_EQ(log_->queued(), 0u);
    EXPECT_EQ(Count(), 600);

    for (const auto& router : {router_a_, router_b_}) {
        int pages = 0;
        const auto all = ListAll(org_, router, 100, &pages);
        EXPECT_EQ(pages, 3);
        ASSERT_EQ(all.size(), 300u);
        std::set<std::string> seen;
        for (std::size_t i = 0; i < all.size(); ++i) {
            EXPECT_EQ(all[i].router_id, router);
            EXPECT_EQ(all[i].org_id, org_);
            EXPECT_TRUE(seen.insert(all[i].id).second) << "twice: " << all[i].id;
            if (i > 0) {
                const bool before =
                    all[i].created_at < all[i - 1].created_at ||
                    (all[i].created_at == all[i - 1].created_at && all[i].id < all[i - 1].id);
                EXPECT_TRUE(before) << "not strictly newest first at " << i;
            }
        }
        EXPECT_EQ(seen, appended[router]);
    }

    // A page of one: its fields as appended.
    const auto first = Await(log_->List(org_, router_b_, 1, std::nullopt));
    ASSERT_EQ(first.decisions.size(), 1u);
    EXPECT_TRUE(first.more);
    const auto& d = first.decisions[0];
    EXPECT_EQ(d.created_at, base + std::chrono::milliseconds(99));
    EXPECT_EQ(d.status, "routed");
    EXPECT_EQ(d.model, "gen4_image");
    EXPECT_EQ(d.provider, "builtin");
    EXPECT_EQ(d.estimated_credits, 5.0);
    EXPECT_EQ(d.reason_code, "lowest_cost");
    EXPECT_EQ(d.reason, "cheapest of 2");
    EXPECT_EQ(nlohmann::json::parse(d.emptied_by_json), nlohmann::json::parse(R"(["capability"])"));
    EXPECT_EQ(nlohmann::json::parse(d.pipeline_json)[0]["remaining"], 2);
    EXPECT_FALSE(d.task_id.has_value());
    EXPECT_FALSE(d.dry_run);
    int pages = 0;
    const auto empty = ListAll(org_, router_b_, 1000, &pages);
    const auto it = std::find_if(empty.begin(), empty.end(),
                                 [](const auto& x) { return x.status == "no_eligible_model"; });
    ASSERT_NE(it, empty.end());
    EXPECT_TRUE(it->dry_run);
    EXPECT_FALSE(it->model.has_value());
    EXPECT_FALSE(it->estimated_credits.has_value());
    EXPECT_FALSE(it->reason_code.has_value());

    // Another organization sees nothing of these routers; ids that are not UUIDs find nothing.
    EXPECT_TRUE(Await(log_->List(other_org_, router_a_, 100, std::nullopt)).decisions.empty());
    EXPECT_TRUE(Await(log_->List(org_, "nope", 100, std::nullopt)).decisions.empty());
    EXPECT_EQ(log_->dropped(), 0u);
}

TEST_F(RouterLog, ListReadsItsOwnAppends) {
    const auto now =
        std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
    log_->Append(Decision(router_a_, now));
    const auto page = Await(log_->List(org_, router_a_, 10, std::nullopt));
    EXPECT_EQ(page.decisions.size(), 1u);
    EXPECT_FALSE(page.more);
}

TEST_F(RouterLog, TheWriterSendsOnItsTick) {
    RunWriter(20ms);
    const auto now =
        std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
    log_->Append(Decision(router_a_, now));
    EXPECT_TRUE(test::WaitFor([&] { return Count() == 1; }, 5s, 10ms));
    log_->Stop();
}

TEST_F(RouterLog, TheWriterSendsAFullBatchAtOnce) {
    RunWriter(1h);
    const auto now =
        std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
    for (std::size_t i = 0; i < store::RouterLog::kBatch; ++i) {
        log_->Append(Decision(router_a_, now + std::chrono::microseconds(i)));
    }
    EXPECT_TRUE(test::WaitFor([&] { return Count() == 256; }, 5s, 10ms));
    log_->Stop();
}

TEST_F(RouterLog, StopSendsWhatIsQueued) {
    RunWriter(1h);
    const auto now =
        std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
    for (int i = 0; i < 10; ++i) log_->Append(Decision(router_b_, now));
    EXPECT_EQ(Count(), 0);
    log_->Stop();
    EXPECT_EQ(Count(), 10);
    EXPECT_EQ(log_->queued(), 0u);
    // The writer has ended: its thread's io_context runs out of work.
    work_.reset();
    thread_.join();
}

TEST_F(RouterLog, ARefusedDecisionIsDroppedAlone) {
    const auto now =
        std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
    auto bad = Decision(router_a_, now);
    bad.reason_code = "cheapest";  // the CHECK refuses it
    auto gone = Decision(router_a_, now);
    gone.router_id = NewUuid();  // no such router
    auto malformed = Decision(router_a_, now);
    malformed.pipeline_json = "[not json";
    log_->Append(Decision(router_a_, now));
    log_->Append(bad);
    log_->Append(gone);
    log_->Append(malformed);
    log_->Append(Decision(router_a_, now));
    Await(log_->Flush());
    EXPECT_EQ(Count(), 3);
    EXPECT_EQ(log_->dropped(), 2u);
    EXPECT_EQ(Count("id = '" + malformed.id + "' AND pipeline = '[]'"), 1);
}

TEST_F(RouterLog, DecisionsWaitWhileTheDatabaseIsUnreachable) {
    // A pool whose server does not exist: Flush fails, and nothing is lost.
    store::Database down("host=/nonexistent dbname=x connect_timeout=1", 1);
    down.Start();
    store::RouterLog log(down);
    const auto now =
        std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
    log.Append(Decision(router_a_, now));
    EXPECT_THROW(Await(log.Flush()), store::DatabaseUnavailable);
    EXPECT_EQ(log.queued(), 1u);
    EXPECT_EQ(log.dropped(), 0u);
    log.Stop();  // cannot write it: counted as lost
    EXPECT_EQ(log.dropped(), 1u);
    down.Stop();
}

class RouterLogSnapshot : public OrgDatabaseTest {
  protected:
    void SetUp() override {
        OrgDatabaseTest::SetUp();
        if (IsSkipped()) return;
        tasks_ = std::make_unique<store::TaskRepo>(*pool_);
        snapshot_ = std::make_unique<store::RoutingSnapshotRepo>(*pool_);
        routers_ = std::make_unique<store::RouterRepo>(*pool_);
    }

    // Slots reads an organization's concurrency slots as a generate request does (with the
    // router it names, here none).
    store::GenerateContext Slots(const std::string& org) {
        return Await(routers_->ForGenerate(org, "no-router"));
    }

    store::CreateResult Create(const std::string& limit_key, const std::string& model,
                               int max_concurrent) {
        store::NewTask t{NewOrderedUuid(),
                         org_,
                         "text_to_image",
                         model,
                         limit_key,
                         R"({"model":"gen4_image"})",
                         5,
                         max_concurrent,
                         1000};
        return Await(tasks_->Create(t));
    }

    // RunOne claims the oldest PENDING task, holds it `hold`, finishes it SUCCEEDED and returns
    // its started_at..finished_at in seconds as stored.
    double RunOne(std::chrono::milliseconds hold) {
        const auto claimed = tasks_->ClaimSync("test-owner", 30);
        EXPECT_TRUE(claimed.has_value());
        if (!claimed) return 0;
        std::this_thread::sleep_for(hold);
        EXPECT_TRUE(tasks_->FinishSync(claimed->id, "test-owner", store::TaskStatus::kSucceeded,
                                       {"out.png"}, "", ""));
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        return n
            .exec1(
                "SELECT extract(epoch FROM finished_at - started_at)::double precision"
                " FROM tasks WHERE id = '" +
                claimed->id + "'")[0]
            .as<double>();
    }

    std::pair<double, long long> Stored(const std::string& model) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        const auto r =
            n.exec("SELECT ewma_seconds, samples FROM model_latency WHERE model = '" + model + "'");
        if (r.empty()) return {0, 0};
        return {r[0][0].as<double>(), r[0][1].as<long long>()};
    }

    void Sql(const std::string& sql) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        n.exec(sql);
    }

    std::unique_ptr<store::TaskRepo> tasks_;
    std::unique_ptr<store::RoutingSnapshotRepo> snapshot_;
    std::unique_ptr<store::RouterRepo> routers_;
};

TEST_F(RouterLogSnapshot, SucceededTasksFeedTheModelsLatency) {
    ASSERT_EQ(Create("gen4_image", "gen4_image", 10).status, store::TaskStatus::kPending);
    const double first = RunOne(60ms);
    EXPECT_GE(first, 0.05);
    auto [ewma, samples] = Stored("gen4_image");
    EXPECT_EQ(samples, 1);
    EXPECT_NEAR(ewma, first, 1e-6);

    ASSERT_EQ(Create("gen4_image", "gen4_image", 10).status, store::TaskStatus::kPending);
    const double second = RunOne(150ms);
    std::tie(ewma, samples) = Stored("gen4_image");
    EXPECT_EQ(samples, 2);
    EXPECT_NEAR(ewma, 0.8 * first + 0.2 * second, 1e-6);

    // A failed task is no sample.
    ASSERT_EQ(Create("gen4_image", "gen4_image", 10).status, store::TaskStatus::kPending);
    const auto claimed = tasks_->ClaimSync("test-owner", 30);
    ASSERT_TRUE(claimed.has_value());
    EXPECT_TRUE(tasks_->FinishSync(claimed->id, "test-owner", store::TaskStatus::kFailed, {},
                                   "boom", "INTERNAL"));
    EXPECT_EQ(Stored("gen4_image").second, 2);

    const auto read = Await(snapshot_->Latencies());
    ASSERT_EQ(read.count("gen4_image"), 1u);
    EXPECT_NEAR(read.at("gen4_image").ewma_seconds, ewma, 1e-9);
    EXPECT_EQ(read.at("gen4_image").samples, 2);

    // Within max_age the copy answers; max_age 0 reads again.
    Sql("UPDATE model_latency SET ewma_seconds = 99 WHERE model = 'gen4_image'");
    const auto cached = Await(snapshot_->Latencies(std::chrono::seconds(60)));
    EXPECT_NEAR(cached.at("gen4_image").ewma_seconds, ewma, 1e-9);
    const auto fresh = Await(snapshot_->Latencies(std::chrono::milliseconds(0)));
    EXPECT_EQ(fresh.at("gen4_image").ewma_seconds, 99);
}

TEST_F(RouterLogSnapshot, ActiveSlotsAndWaitingGroups) {
    EXPECT_TRUE(Slots(org_).active.empty());
    ASSERT_EQ(Create("k1", "gen4_image", 1).status, store::TaskStatus::kPending);
    ASSERT_EQ(Create("k2", "gen4_image", 2).status, store::TaskStatus::kPending);
    auto slots = Slots(org_);
    EXPECT_EQ(slots.active["k1"], 1);
    EXPECT_EQ(slots.active["k2"], 1);
    EXPECT_TRUE(slots.waiting.empty());

    ASSERT_EQ(Create("k1", "gen4_image", 1).status, store::TaskStatus::kThrottled);
    ASSERT_EQ(Create("k1", "gen4_image", 1).status, store::TaskStatus::kThrottled);
    slots = Slots(org_);
    EXPECT_EQ(slots.active["k1"], 1);
    EXPECT_EQ(slots.waiting, (std::set<std::string, std::less<>>{"k1"}));

    const auto other = Slots(other_org_);
    EXPECT_TRUE(other.active.empty());
    EXPECT_TRUE(other.waiting.empty());
    EXPECT_TRUE(Slots("not-a-uuid").active.empty());
}

}  // namespace
}  // namespace genhost::testing
