// UploadRepo and UploadSweeper against a real PostgreSQL: create, claim (one winner among
// concurrent claims), release, complete, lookups scoped to the organization and to unexpired,
// complete uploads, and the sweeper deleting expired uploads with their files (leaving uploads
// still being received alone for an hour) and orphaned files.
#include "support/await.hpp"
#include "support/pg.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/outputs/upload_folder.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/store/uploads_repo.hpp"
#include "genhost/tasks/runtime.hpp"
#include "genhost/tasks/upload_sweeper.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <pqxx/pqxx>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>

#include <stdlib.h>

namespace genhost::testing {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Kind = store::ClaimResult::Kind;

class Uploads : public ::testing::Test {
  protected:
    void SetUp() override {
        if (ClusterDsn().empty()) GTEST_SKIP() << "no PostgreSQL configured";
        db_ = std::make_unique<TestDatabase>();
        store::Migrate(db_->dsn());
        pool_ = std::make_unique<store::Database>(db_->dsn(), 2);
        store::OrgRepo::Prepare(*pool_);
        store::UploadRepo::Prepare(*pool_);
        pool_->Start();
        store::OrgRepo orgs(*pool_);
        org_ = orgs.EnsureOrganizationSync("acme", 1, false).id;
        other_org_ = orgs.EnsureOrganizationSync("globex", 1, false).id;
        repo_ = std::make_unique<store::UploadRepo>(*pool_);
        char tmpl[] = "/tmp/genhost-uploads-pg.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }

    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    template <class T>
    T Await(asio::awaitable<T> a) {
        return AwaitOn(io_, std::move(a));
    }

    void AwaitVoid(asio::awaitable<void> a) {
        auto f = asio::co_spawn(io_, std::move(a), asio::use_future);
        io_.restart();
        io_.run();
        f.get();
    }

    // Create stores an upload of `org` expiring `ttl` from now (negative: already expired).
    std::string Create(std::chrono::seconds ttl = std::chrono::seconds(3600),
                       const std::string& org = "") {
        store::NewUpload u;
        u.id = NewUuid();
        u.org_id = org.empty() ? org_ : org;
        u.filename = "photo.png";
        u.max_bytes = 1000;
        u.expires_at = std::chrono::time_point_cast<std::chrono::microseconds>(
                           std::chrono::system_clock::now()) +
                       ttl;
        AwaitVoid(repo_->Create(u));
        return u.id;
    }

    void Sql(const std::string& sql) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        n.exec(sql);
    }

    asio::io_context io_;
    std::unique_ptr<TestDatabase> db_;
    std::unique_ptr<store::Database> pool_;
    std::unique_ptr<store::UploadRepo> repo_;
    std::string org_;
    std::string other_org_;
    fs::path dir_;
};

TEST_F(Uploads, CreateStoresTheUpload) {
    const auto id = Create();
    const auto u = repo_->GetSync(id);
    ASSERT_TRUE(u);
    EXPECT_EQ(u->id, id);
    EXPECT_EQ(u->org_id, org_);
    EXPECT_EQ(u->filename, "photo.png");
    EXPECT_EQ(u->max_bytes, 1000u);
    EXPECT_FALSE(u->receiving);
    EXPECT_FALSE(u->completed_at);
    EXPECT_GT(u->expires_at, u->created_at);
    EXPECT_FALSE(repo_->GetSync(NewUuid()));
    EXPECT_FALSE(repo_->GetSync("not-a-uuid"));
}

TEST_F(Uploads, ClaimReleaseComplete) {
    const auto id = Create();
    const auto claim = Await(repo_->Claim(id));
    EXPECT_EQ(claim.kind, Kind::kClaimed);
    EXPECT_EQ(claim.org_id, org_);
    EXPECT_EQ(claim.max_bytes, 1000u);
    EXPECT_TRUE(repo_->GetSync(id)->receiving);
    EXPECT_EQ(Await(repo_->Claim(id)).kind, Kind::kAlreadyReceived);

    AwaitVoid(repo_->Release(id));
    EXPECT_FALSE(repo_->GetSync(id)->receiving);
    EXPECT_FALSE(Await(repo_->Complete(id, 10, "image/png", "a.png")));  // not claimed
    EXPECT_EQ(Await(repo_->Claim(id)).kind, Kind::kClaimed);

    EXPECT_TRUE(Await(repo_->Complete(id, 321, "image/png", "a.png")));
    const auto u = repo_->GetSync(id);
    ASSERT_TRUE(u->completed_at);
    EXPECT_EQ(u->size, 321u);
    EXPECT_EQ(u->content_type, "image/png");
    EXPECT_EQ(u->file_name, "a.png");
    EXPECT_FALSE(u->receiving);

    EXPECT_EQ(Await(repo_->Claim(id)).kind, Kind::kAlreadyReceived);
    EXPECT_FALSE(Await(repo_->Complete(id, 1, "x/y", "b")));
    AwaitVoid(repo_->Release(id));  // no effect on a complete upload
    EXPECT_TRUE(repo_->GetSync(id)->completed_at);
}

TEST_F(Uploads, ClaimOfUnknownOrExpiredUploads) {
    EXPECT_EQ(Await(repo_->Claim(NewUuid())).kind, Kind::kNotFound);
    EXPECT_EQ(Await(repo_->Claim("../../etc")).kind, Kind::kNotFound);
    const auto expired = Create(std::chrono::seconds(-5));
    EXPECT_EQ(Await(repo_->Claim(expired)).kind, Kind::kExpired);
}

TEST_F(Uploads, ConcurrentClaimsHaveOneWinner) {
    const auto id = Create();
    std::vector<std::future<store::ClaimResult>> claims;
    for (int i = 0; i < 8; ++i) {
        claims.push_back(asio::co_spawn(io_, repo_->Claim(id), asio::use_future));
    }
    io_.restart();
    std::thread runner([this] { io_.run(); });
    int won = 0;
    for (auto& c : claims) {
        const auto r = c.get();
        if (r.kind == Kind::kClaimed)
            ++won;
        else
            EXPECT_EQ(r.kind, Kind::kAlreadyReceived);
    }
    runner.join();
    EXPECT_EQ(won, 1);
}

TEST_F(Uploads, FindCompleteIsScopedToTheOrganizationAndToLiveCompleteUploads) {
    const auto id = Create();
    EXPECT_FALSE(repo_->FindCompleteSync(org_, id));  // not complete yet
    ASSERT_EQ(Await(repo_->Claim(id)).kind, Kind::kClaimed);
    EXPECT_FALSE(repo_->FindCompleteSync(org_, id));  // being received
    ASSERT_TRUE(Await(repo_->Complete(id, 5, "image/png", "a.png")));

    const auto found = repo_->FindCompleteSync(org_, id);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->size, 5u);
    EXPECT_TRUE(Await(repo_->FindComplete(org_, id)));
    EXPECT_FALSE(repo_->FindCompleteSync(other_org_, id));  // foreign
    EXPECT_FALSE(Await(repo_->FindComplete(other_org_, id)));
    EXPECT_FALSE(repo_->FindCompleteSync(org_, NewUuid()));  // unknown
    EXPECT_FALSE(repo_->FindCompleteSync("acme", id));       // not an id at all

    Sql("UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = '" + id + "'");
    EXPECT_FALSE(repo_->FindCompleteSync(org_, id));  // expired
}

TEST_F(Uploads, DeleteExpiredTakesExpiredUploadsOnly) {
    const auto live = Create();
    const auto expired_a = Create(std::chrono::seconds(-10));
    const auto expired_b = Create(std::chrono::seconds(-20));
    auto deleted = repo_->DeleteExpiredSync(1);
    ASSERT_EQ(deleted.size(), 1u);
    EXPECT_EQ(deleted[0], expired_b);  // oldest expiry first
    deleted = repo_->DeleteExpiredSync(100);
    ASSERT_EQ(deleted.size(), 1u);
    EXPECT_EQ(deleted[0], expired_a);
    EXPECT_TRUE(repo_->DeleteExpiredSync(100).empty());
    EXPECT_TRUE(repo_->GetSync(live));
}

TEST_F(Uploads, DeleteExpiredLeavesAFreshReceiveAloneForAnHour) {
    const auto id = Create();
    ASSERT_EQ(Await(repo_->Claim(id)).kind, Kind::kClaimed);
    Sql("UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = '" + id + "'");
    EXPECT_TRUE(repo_->DeleteExpiredSync(100).empty());
    Sql("UPDATE uploads SET receiving_since = now() - interval '61 minutes' WHERE id = '" + id +
        "'");
    EXPECT_EQ(repo_->DeleteExpiredSync(100), std::vector<std::string>{id});
}

TEST_F(Uploads, ExistingListsTheIdsThatHaveARow) {
    const auto a = Create();
    const auto b = Create();
    auto existing = repo_->ExistingSync({a, NewUuid(), b, "junk"});
    std::sort(existing.begin(), existing.end());
    std::vector<std::string> want{a, b};
    std::sort(want.begin(), want.end());
    EXPECT_EQ(existing, want);
    EXPECT_TRUE(repo_->ExistingSync({}).empty());
}

TEST_F(Uploads, SweeperDeletesExpiredUploadsWithTheirFilesAndOrphans) {
    outputs::UploadFolder folder(dir_ / "uploads");
    const auto live = Create();
    const auto expired = Create(std::chrono::seconds(-1));
    const auto orphan = NewUuid();
    const auto fresh_orphan = NewUuid();
    for (const auto& id : {live, expired, orphan, fresh_orphan}) {
        std::ofstream(folder.PathOf(id)) << "bytes";
    }
    std::ofstream(folder.root() / (expired + ".part")) << "partial";
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
    fs::last_write_time(folder.PathOf(orphan), old);
    fs::last_write_time(folder.PathOf(live), old);

    tasks::UploadSweeperOptions options;
    options.batch = 1;  // several rounds
    tasks::UploadSweeper sweeper(options, *repo_, folder);
    EXPECT_EQ(sweeper.SweepOnce(), 1);
    EXPECT_FALSE(fs::exists(folder.PathOf(expired)));
    EXPECT_FALSE(fs::exists(folder.root() / (expired + ".part")));
    EXPECT_FALSE(repo_->GetSync(expired));
    EXPECT_TRUE(fs::exists(folder.PathOf(live)));

    EXPECT_EQ(sweeper.RemoveOrphansOnce(), 1);
    EXPECT_FALSE(fs::exists(folder.PathOf(orphan)));
    EXPECT_TRUE(fs::exists(folder.PathOf(fresh_orphan)));  // younger than an hour: may be live
    EXPECT_TRUE(fs::exists(folder.PathOf(live)));          // old, but its row exists
}

// The sweep runs on the runtime's schedule thread: at Start, then every interval.
TEST_F(Uploads, TheRuntimeRunsTheSweepAtStartAndThenEveryInterval) {
    outputs::UploadFolder folder(dir_ / "uploads");
    const auto expired = Create(std::chrono::seconds(-1));
    std::ofstream(folder.PathOf(expired)) << "bytes";
    tasks::UploadSweeperOptions options;
    options.interval = std::chrono::milliseconds(50);
    tasks::UploadSweeper sweeper(options, *repo_, folder);
    store::JobRepo jobs(*pool_);
    tasks::Runtime runtime(jobs, "node-a");
    std::atomic<int> runs{0};
    runtime.Every("upload sweep", options.interval, [&] {
        sweeper.Run();
        ++runs;
    });
    runtime.Start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while ((fs::exists(folder.PathOf(expired)) || runs < 3) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    runtime.Stop(core::Deadline(std::chrono::seconds(1)));
    EXPECT_GE(runs.load(), 3);
    EXPECT_FALSE(fs::exists(folder.PathOf(expired)));
    EXPECT_FALSE(repo_->GetSync(expired));
}

}  // namespace
}  // namespace genhost::testing
