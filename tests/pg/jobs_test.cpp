// The leased-job engine against a real PostgreSQL (store::JobRepo, tasks::JobEngine,
// migrations/0007_jobs.sql): one job per subject, claimed by one runner at a time under a lease
// that another takes over once it expires; every end a compare-and-set on revision and owner; a
// subject queued again while it runs makes the running revision's end change nothing; retries
// back off, runs that keep failing or dying fail for good and mark their subject; the heartbeat
// tells a run that lost its job.
#include "support/pg.hpp"
#include "support/wait_for.hpp"

#include "genhost/store/database.hpp"
#include "genhost/store/jobs_repo.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/tasks/job_engine.hpp"
#include "genhost/tasks/runtime.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace genhost::testing {
namespace {

using namespace std::chrono_literals;
using genhost::test::WaitFor;

class Jobs : public ::testing::Test {
  protected:
    void SetUp() override {
        if (ClusterDsn().empty()) GTEST_SKIP() << "no PostgreSQL configured";
        db_ = std::make_unique<TestDatabase>();
        store::Migrate(db_->dsn());
        pool_ = std::make_unique<store::Database>(db_->dsn(), 3);
        store::JobRepo::Prepare(*pool_);
        pool_->Start();
        jobs_ = std::make_unique<store::JobRepo>(*pool_);
    }

    // LeaseLeft answers the seconds left of the lease on the job (kind, subject).
    double LeaseLeft(const std::string& kind, const std::string& subject) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        return n
            .exec1(
                "SELECT extract(epoch FROM lease_expires_at - clock_timestamp()) FROM jobs"
                " WHERE kind = " +
                n.quote(kind) + " AND subject = " + n.quote(subject))[0]
            .as<double>();
    }

    std::unique_ptr<TestDatabase> db_;
    std::unique_ptr<store::Database> pool_;
    std::unique_ptr<store::JobRepo> jobs_;
};

TEST_F(Jobs, OneRunnerAtATimeUntilItsLeaseExpires) {
    jobs_->EnqueueSync("voice", "v1", 1);
    jobs_->EnqueueSync("avatar", "a1", 1);
    // Only the kinds asked for are claimed.
    const auto first = jobs_->ClaimSync("node-a", {"avatar"}, 1);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->subject, "a1");
    EXPECT_EQ(first->attempt, 1);
    EXPECT_FALSE(jobs_->ClaimSync("node-b", {"avatar"}, 60).has_value());
    // node-a stops renewing; once its lease runs out node-b takes the job (a second run), and
    // node-a's late end is refused.
    std::this_thread::sleep_for(1200ms);
    const auto second = jobs_->ClaimSync("node-b", {"avatar"}, 60);
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->attempt, 2);
    EXPECT_FALSE(jobs_->CompleteSync(*first, "node-a"));
    EXPECT_TRUE(jobs_->HeartbeatSync("node-a", {*first}, 60).empty());
    EXPECT_EQ(jobs_->HeartbeatSync("node-b", {*second}, 60).size(), 1u);
    EXPECT_TRUE(jobs_->CompleteSync(*second, "node-b"));
    EXPECT_FALSE(jobs_->GetSync("avatar", "a1").has_value());  // done: the row is gone
    EXPECT_TRUE(jobs_->GetSync("voice", "v1").has_value());
}

TEST_F(Jobs, ASubjectQueuedAgainWhileItRunsIsRunAgainAtItsNewRevision) {
    jobs_->EnqueueSync("avatar", "a1", 1);
    const auto old = jobs_->ClaimSync("node-a", {"avatar"}, 60);
    ASSERT_TRUE(old.has_value());
    jobs_->EnqueueSync("avatar", "a1", 2);
    EXPECT_FALSE(jobs_->CompleteSync(*old, "node-a"));
    EXPECT_FALSE(jobs_->RetrySync(*old, "node-a", 0, "x"));
    EXPECT_FALSE(jobs_->FailSync(*old, "node-a", "x"));
    const auto next = jobs_->ClaimSync("node-a", {"avatar"}, 60);
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->revision, 2);
    EXPECT_EQ(next->attempt, 1);
}

TEST_F(Jobs, RetriesWaitTheirDelayAndFailuresStay) {
    jobs_->EnqueueSync("avatar", "a1", 1);
    auto claim = jobs_->ClaimSync("node-a", {"avatar"}, 60);
    ASSERT_TRUE(jobs_->RetrySync(*claim, "node-a", 1, "busy"));
    EXPECT_EQ(jobs_->GetSync("avatar", "a1")->last_error, "busy");
    EXPECT_FALSE(jobs_->ClaimSync("node-a", {"avatar"}, 60).has_value());  // not due yet
    std::this_thread::sleep_for(1100ms);
    claim = jobs_->ClaimSync("node-a", {"avatar"}, 60);
    ASSERT_TRUE(claim.has_value());
    EXPECT_EQ(claim->attempt, 2);
    ASSERT_TRUE(jobs_->FailSync(*claim, "node-a", "broken"));
    const auto row = jobs_->GetSync("avatar", "a1");
    EXPECT_EQ(row->status, "FAILED");
    EXPECT_EQ(row->last_error, "broken");
    EXPECT_FALSE(jobs_->ClaimSync("node-a", {"avatar"}, 60).has_value());
    // Released on shutdown: back in the queue, the run not counted.
    jobs_->EnqueueSync("avatar", "a2", 1);
    const auto a2 = jobs_->ClaimSync("node-a", {"avatar"}, 60);
    ASSERT_TRUE(a2.has_value());
    EXPECT_EQ(jobs_->ReleaseSync("node-b", {*a2}), 0);  // not node-b's
    EXPECT_EQ(jobs_->ReleaseSync("node-a", {*a2}), 1);
    const auto again = jobs_->ClaimSync("node-b", {"avatar"}, 60);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->attempt, 1);
}

TEST_F(Jobs, TheEngineRetriesBacksOffAndFailsForGoodMarkingTheSubject) {
    std::atomic<int> runs_flaky{0};
    std::mutex mu;
    std::set<std::string> failed;
    tasks::JobKind kind;
    kind.run = [&](const store::JobClaim& job, const std::atomic<bool>&) {
        if (job.subject == "flaky") {
            // Fails twice (once by exception), then succeeds.
            const int n = ++runs_flaky;
            if (n == 1) return tasks::JobResult::Retry("not yet");
            if (n == 2) throw std::runtime_error("boom");
            return tasks::JobResult::Done();
        }
        if (job.subject == "hopeless") return tasks::JobResult::Retry("never");
        return tasks::JobResult::Failed("bad input");
    };
    kind.failed = [&](const store::JobClaim& job, const std::string& reason) {
        std::lock_guard lock(mu);
        failed.insert(job.subject + ": " + reason);
    };
    tasks::JobEngineOptions options;
    options.owner = "node-a";
    options.max_attempts = 3;
    options.retry_base = 100ms;
    options.poll = 50ms;
    tasks::JobEngine engine(options, *jobs_, {{"avatar", kind}});
    for (const char* s : {"flaky", "hopeless", "bad"}) jobs_->EnqueueSync("avatar", s, 1);
    engine.Start();
    ASSERT_TRUE(WaitFor(
        [&] {
            const auto c = engine.counts();
            return c.done == 1 && c.failed == 2;
        },
        10s, 10ms))
        << engine.counts().done << " " << engine.counts().failed;
    engine.Stop();
    EXPECT_EQ(runs_flaky.load(), 3);
    EXPECT_EQ(engine.counts().retried, 4u);  // flaky twice, hopeless twice
    EXPECT_EQ(failed, (std::set<std::string>{"bad: bad input", "hopeless: never"}));
    EXPECT_FALSE(jobs_->GetSync("avatar", "flaky").has_value());
    EXPECT_EQ(jobs_->GetSync("avatar", "hopeless")->attempts, 3);
}

TEST_F(Jobs, RunsThatKeepDyingFailForGood) {
    jobs_->EnqueueSync("avatar", "crashy", 1);
    // Three runs whose node died (claimed, never ended, lease expired).
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(jobs_->ClaimSync("dead-node", {"avatar"}, 0.2).has_value()) << i;
        std::this_thread::sleep_for(300ms);
    }
    std::string reason;
    tasks::JobKind kind;
    kind.run = [](const store::JobClaim&, const std::atomic<bool>&) {
        ADD_FAILURE() << "a job past its attempts must not run";
        return tasks::JobResult::Done();
    };
    kind.failed = [&](const store::JobClaim&, const std::string& why) { reason = why; };
    tasks::JobEngineOptions options;
    options.owner = "node-a";
    options.max_attempts = 3;
    tasks::JobEngine engine(options, *jobs_, {{"avatar", kind}});
    EXPECT_EQ(engine.RunAvailable(), 1);
    EXPECT_EQ(jobs_->GetSync("avatar", "crashy")->status, "FAILED");
    EXPECT_NE(reason.find("died"), std::string::npos) << reason;
}

TEST_F(Jobs, TheHeartbeatTellsARunThatLostItsJob) {
    std::atomic<bool> started{false};
    std::atomic<bool> saw_loss{false};
    tasks::JobKind kind;
    kind.run = [&](const store::JobClaim& job, const std::atomic<bool>& lease_lost) {
        if (job.revision == 1) {
            started = true;
            const auto until = std::chrono::steady_clock::now() + 10s;
            while (!lease_lost && std::chrono::steady_clock::now() < until) {
                std::this_thread::sleep_for(10ms);
            }
            saw_loss = lease_lost.load();
        }
        return tasks::JobResult::Done();
    };
    tasks::JobEngineOptions options;
    options.owner = "node-a";
    options.lease_seconds = 0.6;  // a heartbeat every 200 ms
    options.poll = 50ms;
    tasks::JobEngine engine(options, *jobs_, {{"avatar", kind}});
    jobs_->EnqueueSync("avatar", "a1", 1);
    engine.Start();
    ASSERT_TRUE(WaitFor([&] { return started.load(); }, 10s, 10ms));
    // The subject changes while revision 1 runs: the run hears of it, revision 2 runs next.
    jobs_->EnqueueSync("avatar", "a1", 2);
    engine.Kick();
    ASSERT_TRUE(WaitFor([&] { return !jobs_->GetSync("avatar", "a1").has_value(); }, 10s, 10ms));
    engine.Stop();
    EXPECT_TRUE(saw_loss.load());
    EXPECT_GE(engine.counts().lost, 1u);
    EXPECT_EQ(engine.counts().done, 1u);
}

// Issue 32: the engines of one node share its owner name, each with its own lease. One engine's
// heartbeat renewed every RUNNING job of the owner to its own lease (an avatar job in flight
// set a realtime session's 15 s lease to 120 s), and the first engine to stop put the others'
// running jobs back in the queue, for another node to claim while they still ran here.
TEST_F(Jobs, EnginesSharingAnOwnerRenewAndReleaseOnlyTheirOwnKinds) {
    // A realtime session's job, held by this node under a short lease (0.6 s here, 15 s in
    // production). Its own engine is not running in this test, so its lease must stay what it
    // was given.
    jobs_->EnqueueSync("realtime_session", "s1", 1);
    ASSERT_TRUE(jobs_->ClaimSync("node-a", {"realtime_session"}, 0.6).has_value());
    // The avatar engine of the same node, with a longer lease (3 s here, 120 s in production)
    // and a run in flight while it heartbeats (every second).
    std::atomic<bool> started{false};
    std::atomic<bool> finish{false};
    tasks::JobKind kind;
    kind.run = [&](const store::JobClaim&, const std::atomic<bool>&) {
        started = true;
        while (!finish) std::this_thread::sleep_for(10ms);
        return tasks::JobResult::Done();
    };
    tasks::JobEngineOptions options;
    options.owner = "node-a";
    options.lease_seconds = 3;
    options.poll = 50ms;
    tasks::JobEngine avatars(options, *jobs_, {{"avatar", kind}});
    jobs_->EnqueueSync("avatar", "a1", 1);
    avatars.Start();
    ASSERT_TRUE(WaitFor([&] { return started.load(); }, 10s, 10ms));
    std::this_thread::sleep_for(1400ms);  // past the avatar engine's first heartbeat
    // The session's lease was not stretched to the avatar engine's 3 s: it has run out.
    EXPECT_LT(LeaseLeft("realtime_session", "s1"), 0.0);
    EXPECT_EQ(avatars.counts().lost, 0u);

    // The avatar engine stops: only its own jobs are released, the session's stays held.
    finish = true;
    avatars.Stop();
    const auto session = jobs_->GetSync("realtime_session", "s1");
    ASSERT_TRUE(session.has_value());
    EXPECT_EQ(session->status, "RUNNING");
    EXPECT_EQ(session->lease_owner, "node-a");
    // Its lease has expired: it is another node's to claim (the node died, say), as a second run.
    const auto taken = jobs_->ClaimSync("node-b", {"realtime_session"}, 15);
    ASSERT_TRUE(taken.has_value());
    EXPECT_EQ(taken->attempt, 2);
}

// Issue 32: a lane renews and releases its runs by kind, subject and revision, never by owner
// and kind: a job of the lane's own kind that the same owner holds but the lane does not run
// (here claimed by hand) is neither renewed nor released by it.
TEST_F(Jobs, ALaneRenewsAndReleasesOnlyTheRunsItHas) {
    jobs_->EnqueueSync("avatar", "other", 1);
    const auto other = jobs_->ClaimSync("node-a", {"avatar"}, 0.6);
    ASSERT_TRUE(other.has_value());
    std::atomic<bool> started{false};
    tasks::JobKind kind;
    kind.run = [&](const store::JobClaim& job, const std::atomic<bool>& lost) {
        started = true;
        while (!lost) std::this_thread::sleep_for(10ms);  // until Stop tells it
        return tasks::JobResult::Done();
    };
    tasks::JobEngineOptions options;
    options.owner = "node-a";
    options.lease_seconds = 0.9;  // heartbeats every 0.3 s
    options.poll = 50ms;
    tasks::JobEngine engine(options, *jobs_, {{"avatar", kind}});
    jobs_->EnqueueSync("avatar", "mine", 1);
    engine.Start();
    ASSERT_TRUE(WaitFor([&] { return started.load(); }, 10s, 10ms));
    std::this_thread::sleep_for(1000ms);           // three heartbeats, past the other job's lease
    EXPECT_LT(LeaseLeft("avatar", "other"), 0.0);  // not renewed: not this lane's run
    EXPECT_GT(LeaseLeft("avatar", "mine"), 0.0);   // renewed
    engine.Stop(0ms);
    const auto mine = jobs_->GetSync("avatar", "mine");
    ASSERT_TRUE(mine.has_value());
    EXPECT_EQ(mine->status, "PENDING");  // released, the run not counted
    EXPECT_EQ(mine->attempts, 0);
    const auto still = jobs_->GetSync("avatar", "other");
    ASSERT_TRUE(still.has_value());
    EXPECT_EQ(still->status, "RUNNING");  // not released: the lane did not run it
    EXPECT_EQ(still->lease_owner, "node-a");
}

// Issue 32: one runtime, one heartbeat thread, each lane renewed at a third of its own lease.
// A realtime-like lane (lease 0.6 s) and an avatar-like lane (lease 3 s) of one owner, each with
// a run in flight: the short lease stays short and alive, the long one long. On Stop the
// draining lane's run finishes within the deadline and the stop-at-once lane's run is released.
TEST_F(Jobs, TheRuntimeRenewsEachLaneAtItsOwnLeaseAndStopsThemAsOne) {
    std::atomic<int> started{0};
    std::atomic<bool> finish{false};
    tasks::JobKind session;
    session.run = [&](const store::JobClaim&, const std::atomic<bool>& lost) {
        ++started;
        while (!lost) std::this_thread::sleep_for(10ms);  // a session lives until its node stops
        return tasks::JobResult::Done();
    };
    tasks::JobKind avatar;
    avatar.run = [&](const store::JobClaim&, const std::atomic<bool>&) {
        ++started;
        while (!finish) std::this_thread::sleep_for(10ms);
        return tasks::JobResult::Done();
    };
    tasks::Runtime runtime(*jobs_, "node-a");
    tasks::LaneOptions sessions;
    sessions.name = "realtime";
    sessions.lease_seconds = 0.6;
    sessions.poll = 50ms;
    sessions.stop_at_once = true;
    runtime.AddLane(sessions);
    tasks::LaneOptions media;
    media.name = "jobs";
    media.lease_seconds = 3;
    media.poll = 50ms;
    runtime.AddLane(media);
    runtime.AddKind("realtime", "realtime_session", session);
    runtime.AddKind("jobs", "avatar", avatar);
    EXPECT_THROW(runtime.AddKind("jobs", "realtime_session", avatar), std::logic_error);
    EXPECT_THROW(runtime.AddLane(media), std::logic_error);
    ASSERT_EQ(runtime.Lanes().size(), 2u);
    jobs_->EnqueueSync("realtime_session", "s1", 1);
    jobs_->EnqueueSync("avatar", "a1", 1);
    runtime.Start();
    ASSERT_TRUE(WaitFor([&] { return started.load() == 2; }, 10s, 10ms));
    // Past several of the session lane's heartbeats (every 0.2 s) and one of the media lane's
    // (every 1 s): each lease is renewed to its own length.
    for (int i = 0; i < 6; ++i) {
        std::this_thread::sleep_for(250ms);
        const double s = LeaseLeft("realtime_session", "s1");
        EXPECT_GT(s, 0.0);
        EXPECT_LE(s, 0.6);
    }
    EXPECT_GT(LeaseLeft("avatar", "a1"), 0.6);
    EXPECT_EQ(runtime.LaneCounts("realtime").lost, 0u);
    std::thread finisher([&] {
        std::this_thread::sleep_for(300ms);
        finish = true;
    });
    runtime.Stop(core::Deadline(10s));
    finisher.join();
    EXPECT_FALSE(jobs_->GetSync("avatar", "a1").has_value());  // finished within the drain
    const auto s1 = jobs_->GetSync("realtime_session", "s1");
    ASSERT_TRUE(s1.has_value());
    EXPECT_EQ(s1->status, "PENDING");  // stopped at once and released, the run not counted
    EXPECT_EQ(s1->attempts, 0);
}

// Issue 32: steps are woken by NOTIFY, not polls. genhost_wake_job (migration 0016) makes a
// waiting job due at once, and a wake that lands while the job runs turns that run's Wait into
// "due now", so it is never lost.
TEST_F(Jobs, AWakeMakesAWaitingJobDueAndIsKeptWhenItLandsMidRun) {
    const auto due_in = [&](const std::string& subject) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        return n
            .exec_params1(
                "SELECT extract(epoch FROM run_after - clock_timestamp())"
                " FROM jobs WHERE kind = 'workflow_invocation' AND subject = $1",
                subject)[0]
            .as<double>();
    };
    const auto wake = [&](const std::string& subject) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        n.exec_params("SELECT genhost_wake_job('workflow_invocation', $1)", subject);
    };
    const std::vector<std::string> kinds = {"workflow_invocation"};
    jobs_->EnqueueSync("workflow_invocation", "w1", 1);
    auto claim = jobs_->ClaimSync("node-a", kinds, 60);
    ASSERT_TRUE(claim.has_value());
    // No wake: the run's Wait holds.
    ASSERT_TRUE(jobs_->DeferSync(*claim, "node-a", 60));
    EXPECT_GT(due_in("w1"), 50);
    EXPECT_FALSE(jobs_->ClaimSync("node-a", kinds, 60).has_value());
    // A wake while it waits: due at once.
    wake("w1");
    EXPECT_LE(due_in("w1"), 0);
    claim = jobs_->ClaimSync("node-a", kinds, 60);
    ASSERT_TRUE(claim.has_value());
    // A wake while it runs: the run's Wait becomes due now.
    wake("w1");
    ASSERT_TRUE(jobs_->DeferSync(*claim, "node-a", 60));
    EXPECT_LE(due_in("w1"), 0);
    claim = jobs_->ClaimSync("node-a", kinds, 60);
    ASSERT_TRUE(claim.has_value());
    // That wake is spent: the next run's Wait holds again.
    ASSERT_TRUE(jobs_->DeferSync(*claim, "node-a", 60));
    EXPECT_GT(due_in("w1"), 50);
}

}  // namespace
}  // namespace genhost::testing
