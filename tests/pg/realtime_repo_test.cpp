// RealtimeRepo against a real PostgreSQL (migrations/0013_realtime.sql): creating a session queues
// its job; admission under concurrency never gives an organization more places than its limit,
// older waiting sessions go first, and an ending session wakes the waiting ones; every state
// change is a compare-and-set on the owner; a session admitted by a dead node is failed by
// another; consume is single use; the transcript stops at 1000 entries; conversations list by
// avatar and dates; a finished conversation is deleted with its transcript, an active one is not;
// usage sums by UTC day.
#include "support/org_database.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/store/jobs_repo.hpp"
#include "genhost/store/realtime_repo.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <atomic>
#include <thread>

namespace genhost::testing {
namespace {

using store::SessionStatus;

class RealtimeRepoTest : public OrgDatabaseTest {
  protected:
    void SetUp() override {
        OrgDatabaseTest::SetUp();
        if (IsSkipped()) return;
        repo_ = std::make_unique<store::RealtimeRepo>(*pool_);
        jobs_ = std::make_unique<store::JobRepo>(*pool_);
    }

    std::string Create(const std::string& org, const std::string& avatar_id = "") {
        store::NewRealtimeSession s;
        s.id = NewUuid();
        s.org_id = org;
        s.model = "gwm1_avatars";
        s.avatar_type = avatar_id.empty() ? "service-preset" : "custom";
        s.preset_id = avatar_id.empty() ? "influencer" : "";
        s.avatar_id = avatar_id;
        s.avatar_name = "Influencer";
        s.name = "Conversation with Influencer";
        return Await(repo_->Create(s)).session->id;
    }

    void Sql(const std::string& sql) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        n.exec(sql);
    }

    std::unique_ptr<store::RealtimeRepo> repo_;
    std::unique_ptr<store::JobRepo> jobs_;
};

TEST_F(RealtimeRepoTest, ACreatedSessionIsNotReadyWithItsJobQueued) {
    const std::string id = Create(org_);
    const auto s = Await(repo_->Get(org_, id));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->status, SessionStatus::kNotReady);
    EXPECT_FALSE(s->queued);
    EXPECT_EQ(s->org_tier, 1);
    const auto job = jobs_->GetSync("realtime_session", id);
    ASSERT_TRUE(job);
    EXPECT_EQ(job->status, "PENDING");
    EXPECT_FALSE(Await(repo_->Get(other_org_, id)));
}

TEST_F(RealtimeRepoTest, AdmissionNeverPassesTheLimitUnderConcurrency) {
    constexpr int kSessions = 24;
    constexpr int kLimit = 5;
    std::vector<std::string> ids;
    for (int i = 0; i < kSessions; ++i) ids.push_back(Create(org_));
    std::atomic<int> admitted{0};
    std::atomic<int> queued{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            store::Database db(db_->dsn(), 1);
            db.Start();
            store::RealtimeRepo repo(db);
            for (int i = t; i < kSessions; i += 4) {
                const std::string verdict =
                    repo.AdmitSync(ids[i], "node-" + std::to_string(t), kLimit);
                if (verdict == "admitted") ++admitted;
                if (verdict == "queued") ++queued;
            }
            db.Stop();
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(admitted.load(), kLimit);
    EXPECT_EQ(queued.load(), kSessions - kLimit);
    pqxx::connection c(db_->dsn());
    pqxx::nontransaction n(c);
    EXPECT_EQ(
        n.exec1("SELECT count(*) FROM realtime_sessions WHERE owner IS NOT NULL")[0].as<int>(),
        kLimit);
    // Another organization is not held back by this one.
    EXPECT_EQ(repo_->AdmitSync(Create(other_org_), "node-0", 1), "admitted");
}

TEST_F(RealtimeRepoTest, OlderWaitingSessionsGoFirstAndAnEndWakesThem) {
    const std::string first = Create(org_);
    const std::string second = Create(org_);
    const std::string third = Create(org_);
    EXPECT_EQ(repo_->AdmitSync(first, "a", 1), "admitted");
    EXPECT_EQ(repo_->AdmitSync(second, "a", 1), "queued");
    // A place frees (the limit rises): the younger one still waits behind the older.
    EXPECT_EQ(repo_->AdmitSync(third, "a", 2), "queued");
    EXPECT_EQ(repo_->AdmitSync(second, "a", 2), "admitted");
    EXPECT_EQ(repo_->AdmitSync(third, "a", 2), "queued");
    // The waiting job is due far away; the first session's end makes it due now.
    Sql("UPDATE jobs SET run_after = clock_timestamp() + interval '1 hour' WHERE subject = '" +
        third + "'");
    EXPECT_TRUE(repo_->MarkReadySync(first, "a", "key", 60, "ws://x"));
    EXPECT_TRUE(repo_->EndSync(first, "a", SessionStatus::kCompleted, "", ""));
    pqxx::connection c(db_->dsn());
    pqxx::nontransaction n(c);
    EXPECT_TRUE(n.exec1("SELECT run_after <= clock_timestamp() FROM jobs WHERE subject = '" +
                        third + "'")[0]
                    .as<bool>());
    EXPECT_EQ(repo_->AdmitSync(third, "a", 2), "admitted");
}

TEST_F(RealtimeRepoTest, StateChangesHoldOnlyForTheOwner) {
    const std::string id = Create(org_);
    EXPECT_EQ(repo_->AdmitSync(id, "node-a", 5), "admitted");
    EXPECT_FALSE(repo_->MarkReadySync(id, "node-b", "k", 60, "ws://b"));
    EXPECT_TRUE(repo_->MarkReadySync(id, "node-a", "k", 60, "ws://a"));
    EXPECT_FALSE(repo_->MarkRunningSync(id, "node-b"));
    EXPECT_TRUE(repo_->MarkRunningSync(id, "node-a"));
    EXPECT_FALSE(repo_->MarkRunningSync(id, "node-a"));  // already RUNNING
    // Another node claiming the job finds it taken; it fails it as lost.
    EXPECT_EQ(repo_->AdmitSync(id, "node-b", 5), "taken");
    EXPECT_FALSE(repo_->FailLostSync(id, "node-a", "x", "y"));  // its own owner cannot
    EXPECT_TRUE(repo_->FailLostSync(id, "node-b", "The node stopped", "INTERNAL.NODE_LOST"));
    const auto s = Await(repo_->Get(org_, id));
    EXPECT_EQ(s->status, SessionStatus::kFailed);
    EXPECT_EQ(s->failure_code, "INTERNAL.NODE_LOST");
    EXPECT_TRUE(s->duration.has_value());
    EXPECT_FALSE(repo_->EndSync(id, "node-a", SessionStatus::kCompleted, "", ""));
    EXPECT_EQ(repo_->AdmitSync(id, "node-b", 5), "ended");
}

TEST_F(RealtimeRepoTest, ConsumeIsSingleUseAndNeedsTheKey) {
    const std::string id = Create(org_);
    EXPECT_EQ(Await(repo_->Consume(id, "k")).outcome, store::ConsumeOutcome::kUnknown);
    repo_->AdmitSync(id, "a", 5);
    repo_->MarkReadySync(id, "a", "the-key", 60, "ws://a");
    EXPECT_EQ(Await(repo_->Consume(id, "wrong")).outcome, store::ConsumeOutcome::kUnknown);
    EXPECT_EQ(Await(repo_->Consume(NewUuid(), "the-key")).outcome, store::ConsumeOutcome::kUnknown);
    const auto first = Await(repo_->Consume(id, "the-key"));
    EXPECT_EQ(first.outcome, store::ConsumeOutcome::kConsumed);
    EXPECT_EQ(first.session->media_url, "ws://a");
    EXPECT_EQ(Await(repo_->Consume(id, "the-key")).outcome,
              store::ConsumeOutcome::kAlreadyConsumed);
    // An expired key.
    const std::string late = Create(org_);
    repo_->AdmitSync(late, "a", 5);
    repo_->MarkReadySync(late, "a", "late-key", 0, "ws://a");
    EXPECT_EQ(Await(repo_->Consume(late, "late-key")).outcome, store::ConsumeOutcome::kEnded);
}

TEST_F(RealtimeRepoTest, TheTranscriptStopsAtAThousandEntries) {
    const std::string id = Create(org_);
    store::TranscriptEntry e;
    e.role = "user";
    e.content = "hello";
    e.at = SystemClock::Instance().Now();
    Sql("INSERT INTO conversation_entries (session_id, seq, role, content)"
        " SELECT '" +
        id + "', g, 'user', 'x' FROM generate_series(0, 997) g");
    EXPECT_TRUE(repo_->AppendEntrySync(id, e));
    store::TranscriptEntry a;
    a.role = "assistant";
    a.tool_calls_json = R"([{"id": "c1", "name": "t", "arguments": {}}])";
    a.tool_results_json = R"([{"id": "c1", "name": "t", "result": null, "error": "x"}])";
    EXPECT_TRUE(repo_->AppendEntrySync(id, a));
    EXPECT_FALSE(repo_->AppendEntrySync(id, e));
    const auto all = Await(repo_->Transcript(id));
    ASSERT_EQ(all.size(), 1000u);
    EXPECT_EQ(all[998].content, "hello");
    EXPECT_TRUE(all[998].at.has_value());
    EXPECT_FALSE(all[999].content.has_value());
    EXPECT_NE(all[999].tool_calls_json.find("c1"), std::string::npos);
}

TEST_F(RealtimeRepoTest, ConversationsFilterPageDeleteAndSumUsage) {
    const std::string avatar = NewUuid();
    std::vector<std::string> ids;
    for (int i = 0; i < 5; ++i) ids.push_back(Create(org_, i % 2 == 0 ? avatar : ""));
    // Spread over three UTC days, with durations.
    Sql("UPDATE realtime_sessions SET created_at = timestamptz '2026-03-10 23:00:00+00'"
        " + (s.n || ' hours')::interval, duration = s.n * 10, status = 'COMPLETED'"
        " FROM (SELECT id, row_number() OVER (ORDER BY created_at) - 1 AS n FROM realtime_sessions)"
        " s WHERE realtime_sessions.id = s.id");
    store::ConversationFilter by_avatar;
    by_avatar.avatar_id = avatar;
    const auto mine = Await(repo_->ListConversations(org_, by_avatar, 10, std::nullopt));
    EXPECT_EQ(mine.sessions.size(), 3u);
    const auto page = Await(repo_->ListConversations(org_, {}, 2, std::nullopt));
    ASSERT_EQ(page.sessions.size(), 2u);
    EXPECT_TRUE(page.more);
    EXPECT_EQ(page.sessions[0].id, ids[4]);  // newest first
    const auto rest = Await(repo_->ListConversations(
        org_, {}, 10, store::Keyset{page.sessions[1].created_at, page.sessions[1].id}));
    EXPECT_EQ(rest.sessions.size(), 3u);
    store::ConversationFilter day;
    day.start = *ParseTimestamp("2026-03-11T00:00:00Z");
    day.end = *ParseTimestamp("2026-03-11T02:00:00Z");
    EXPECT_EQ(Await(repo_->ListConversations(org_, day, 10, std::nullopt)).sessions.size(), 2u);

    const auto usage = Await(repo_->Usage(org_, *ParseTimestamp("2026-03-10T00:00:00Z"),
                                          *ParseTimestamp("2026-03-13T00:00:00Z")));
    ASSERT_EQ(usage.days.size(), 2u);
    EXPECT_EQ(usage.days[0].date, "2026-03-10");
    EXPECT_EQ(usage.days[0].sessions, 1);
    EXPECT_EQ(usage.days[1].date, "2026-03-11");
    EXPECT_EQ(usage.days[1].sessions, 4);
    EXPECT_EQ(usage.total_seconds, 0 + 10 + 20 + 30 + 40);
    EXPECT_EQ(usage.total_sessions, 5);
    EXPECT_EQ(usage.measured, 5);

    // Delete: an active one refused, a finished one gone with its transcript.
    const std::string active = Create(org_);
    std::string recording;
    EXPECT_EQ(Await(repo_->DeleteConversation(org_, active, recording)),
              store::DeleteOutcome::kActive);
    Sql("UPDATE realtime_sessions SET recording_name = 'recording.mp4' WHERE id = '" + ids[0] +
        "'");
    store::TranscriptEntry e;
    e.role = "user";
    e.content = "hi";
    repo_->AppendEntrySync(ids[0], e);
    EXPECT_EQ(Await(repo_->DeleteConversation(other_org_, ids[0], recording)),
              store::DeleteOutcome::kNotFound);
    EXPECT_EQ(Await(repo_->DeleteConversation(org_, ids[0], recording)),
              store::DeleteOutcome::kDeleted);
    EXPECT_EQ(recording, "recording.mp4");
    EXPECT_TRUE(Await(repo_->Transcript(ids[0])).empty());
    EXPECT_FALSE(jobs_->GetSync("realtime_session", ids[0]));
}

}  // namespace
}  // namespace genhost::testing
