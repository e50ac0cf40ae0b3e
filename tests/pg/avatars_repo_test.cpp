// AvatarRepo and AvatarProcessor against a real PostgreSQL: avatars are scoped to their
// organization, listed newest first by keyset pages, updated only when not PROCESSING (each
// update a new revision, PROCESSING again, with a job queued for it in the same transaction),
// completed or failed only at their revision; the processor, run by the job engine, makes a
// READY avatar (portrait and previews in the output store) from a stored picture and a FAILED one
// from bytes that are not a picture.
#include "support/org_database.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/media/image.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/providers/inputs.hpp"
#include "genhost/store/avatars_repo.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/jobs_repo.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/tasks/avatar_processor.hpp"
#include "genhost/tasks/job_engine.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <pqxx/pqxx>

#include <algorithm>
#include <filesystem>
#include <thread>

#include <stdlib.h>

namespace genhost::testing {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using UpdateKind = store::AvatarUpdate::Kind;

class Avatars : public OrgDatabaseTest {
  protected:
    void SetUp() override {
        OrgDatabaseTest::SetUp();
        if (IsSkipped()) return;
        repo_ = std::make_unique<store::AvatarRepo>(*pool_);
        jobs_ = std::make_unique<store::JobRepo>(*pool_);
        char tmpl[] = "/tmp/genhost-avatars-pg.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        outputs_ = std::make_unique<outputs::LocalOutputStore>(fs::path(dir_) / "outputs");
    }

    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    // Create stores a PROCESSING avatar of `org` whose source is the stored object `source`.
    store::AvatarRecord Create(const std::string& name, const std::string& org = "",
                               const std::string& source = "source-1") {
        store::NewAvatar a;
        a.id = NewUuid();
        a.org_id = org.empty() ? org_ : org;
        a.name = name;
        a.personality = "helpful";
        a.voice_json = R"({"type":"service-live-preset","presetId":"clara"})";
        a.source_name = source;
        return Await(repo_->Create(a)).value();
    }

    void Sql(const std::string& sql) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        n.exec(sql);
    }

    // Engine is node-a's job engine running the avatar processor over this fixture's repository
    // and output store; URLs left for later may only be data URIs here.
    std::unique_ptr<tasks::JobEngine> Engine() {
        tasks::AvatarProcessorOptions options;
        options.scratch_root = dir_ + "/scratch";
        processor_ = std::make_unique<tasks::AvatarProcessor>(options, *repo_, *outputs_, fetch_);
        tasks::JobEngineOptions engine;
        engine.owner = "node-a";
        return std::make_unique<tasks::JobEngine>(
            engine, *jobs_, std::map<std::string, tasks::JobKind>{{"avatar", processor_->Kind()}});
    }

    // Claim takes, as `owner`, the avatar job that waited longest and returns what processing
    // its revision needs.
    std::optional<store::AvatarClaim> Claim(const std::string& owner) {
        const auto job = jobs_->ClaimSync(owner, {"avatar"}, 60);
        if (!job) return std::nullopt;
        return repo_->LoadClaimSync(job->subject, job->revision);
    }

    std::string Picture(int w, int h) {
        media::ImageSpec spec;
        spec.width = w;
        spec.height = h;
        spec.seed = 3;
        spec.prompt = "a face";
        return media::RenderImage(spec);
    }

    std::unique_ptr<store::JobRepo> jobs_;
    std::unique_ptr<tasks::AvatarProcessor> processor_;
    std::unique_ptr<store::AvatarRepo> repo_;
    std::unique_ptr<outputs::LocalOutputStore> outputs_;
    providers::DataUriResolver fetch_;
    std::string dir_;
};

TEST_F(Avatars, AreCreatedProcessingAndScopedToTheirOrganization) {
    const auto a = Create("Ada");
    EXPECT_EQ(a.status, store::ProcessingStatus::kProcessing);
    EXPECT_EQ(a.revision, 1);
    EXPECT_FALSE(a.start_script.has_value());
    EXPECT_TRUE(a.document_ids.empty());
    EXPECT_EQ(a.image_processing, "optimize");
    const auto got = Await(repo_->Get(org_, a.id));
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->name, "Ada");
    EXPECT_EQ(got->voice_json, a.voice_json);
    EXPECT_FALSE(Await(repo_->Get(other_org_, a.id)).has_value());
    EXPECT_FALSE(Await(repo_->Get(org_, "not-a-uuid")).has_value());
    EXPECT_FALSE(Await(repo_->Delete(other_org_, a.id)));
    EXPECT_EQ(Await(repo_->Update(other_org_, a.id, {})).kind, UpdateKind::kNotFound);
    EXPECT_FALSE(Await(repo_->Portrait(other_org_, a.id)).found);
    EXPECT_TRUE(Await(repo_->Delete(org_, a.id)));
    EXPECT_FALSE(Await(repo_->Get(org_, a.id)).has_value());
}

TEST_F(Avatars, ListPagesNewestFirstWithoutGapsOrRepeats) {
    std::vector<std::string> made;
    for (int i = 0; i < 7; ++i) made.push_back(Create("A" + std::to_string(i)).id);
    Create("foreign", other_org_);
    std::vector<std::string> seen;
    std::optional<store::Keyset> after;
    int pages = 0;
    for (;;) {
        const auto page = Await(repo_->List(org_, 3, after));
        ++pages;
        for (const auto& a : page.avatars) seen.push_back(a.id);
        if (!page.more) break;
        after = store::Keyset{page.avatars.back().created_at, page.avatars.back().id};
    }
    EXPECT_EQ(pages, 3);
    std::reverse(made.begin(), made.end());
    EXPECT_EQ(seen, made);
}

TEST_F(Avatars, UpdatesOnlyWhenNotProcessingEachARevision) {
    const auto a = Create("Ada");
    store::AvatarChange rename;
    rename.name = "Ada L.";
    const auto refused = Await(repo_->Update(org_, a.id, rename));
    EXPECT_EQ(refused.kind, UpdateKind::kConflict);
    EXPECT_EQ(refused.status, store::ProcessingStatus::kProcessing);

    const auto claim = Claim("node-a");
    ASSERT_TRUE(claim.has_value());
    EXPECT_EQ(claim->id, a.id);
    ASSERT_TRUE(repo_->CompleteSync(*claim, "JPEGBYTES"));
    const auto portrait = Await(repo_->Portrait(org_, a.id));
    EXPECT_EQ(portrait.status, store::ProcessingStatus::kReady);
    EXPECT_EQ(portrait.portrait, "JPEGBYTES");

    store::AvatarChange change;
    change.name = "Ada L.";
    change.set_start_script = true;
    change.start_script = "Hello!";
    // Attached documents must be the organization's: an unknown one refuses the change.
    change.document_ids = std::vector<std::string>{NewUuid()};
    change.new_source = true;
    change.source_name = "source-2";
    EXPECT_EQ(Await(repo_->Update(org_, a.id, change)).kind, UpdateKind::kMissingDocuments);
    const std::string doc = NewUuid();
    Sql("INSERT INTO documents (id, org_id, name, content) VALUES ('" + doc + "', '" + org_ +
        "', 'Handbook', 'text')");
    change.document_ids = std::vector<std::string>{doc};
    const auto updated = Await(repo_->Update(org_, a.id, change));
    ASSERT_EQ(updated.kind, UpdateKind::kUpdated);
    EXPECT_EQ(updated.avatar.status, store::ProcessingStatus::kProcessing);
    EXPECT_EQ(updated.avatar.revision, 2);
    EXPECT_EQ(updated.avatar.name, "Ada L.");
    EXPECT_EQ(updated.avatar.personality, "helpful");  // unchanged
    EXPECT_EQ(updated.avatar.start_script, std::optional<std::string>("Hello!"));
    EXPECT_EQ(updated.avatar.document_ids, *change.document_ids);
    EXPECT_FALSE(updated.avatar.has_previews);  // a new picture: the old previews are gone
    EXPECT_EQ(updated.previous_source, "source-1");

    // The old claim (revision 1) can no longer end the avatar; the update queued the new
    // revision's job, whose claim can, and then a start script can be cleared.
    EXPECT_FALSE(repo_->CompleteSync(*claim, "OLD"));
    const auto second = Claim("node-a");
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->revision, 2);
    EXPECT_EQ(second->source_name, "source-2");
    ASSERT_TRUE(repo_->FailSync(*second, "not a face"));
    const auto failed = Await(repo_->Get(org_, a.id));
    EXPECT_EQ(failed->status, store::ProcessingStatus::kFailed);
    EXPECT_EQ(failed->failure_reason, "not a face");
    store::AvatarChange clear;
    clear.set_start_script = true;
    const auto cleared = Await(repo_->Update(org_, a.id, clear));
    ASSERT_EQ(cleared.kind, UpdateKind::kUpdated);
    EXPECT_FALSE(cleared.avatar.start_script.has_value());
    EXPECT_TRUE(cleared.avatar.failure_reason.empty());
}

TEST_F(Avatars, CreatesUpdatesAndDeletesQueueAndDropTheirJobs) {
    const auto a = Create("Ada");
    auto job = jobs_->GetSync("avatar", a.id);
    ASSERT_TRUE(job.has_value());
    EXPECT_EQ(job->status, "PENDING");
    EXPECT_EQ(job->revision, 1);
    // A claimed revision whose avatar is updated is queued again at the new revision: the
    // claim's end changes nothing.
    const auto claim = jobs_->ClaimSync("node-a", {"avatar"}, 60);
    ASSERT_TRUE(claim.has_value());
    ASSERT_TRUE(repo_->FailSync(*repo_->LoadClaimSync(a.id, 1), "not a face"));
    store::AvatarChange rename;
    rename.name = "Ada L.";
    ASSERT_EQ(Await(repo_->Update(org_, a.id, rename)).kind, UpdateKind::kUpdated);
    job = jobs_->GetSync("avatar", a.id);
    EXPECT_EQ(job->status, "PENDING");
    EXPECT_EQ(job->revision, 2);
    EXPECT_FALSE(jobs_->CompleteSync(*claim, "node-a"));
    EXPECT_FALSE(repo_->LoadClaimSync(a.id, 1).has_value());  // not the current revision
    EXPECT_TRUE(repo_->LoadClaimSync(a.id, 2).has_value());
    // A deleted avatar takes its job with it.
    ASSERT_TRUE(Await(repo_->Delete(org_, a.id)));
    EXPECT_FALSE(jobs_->GetSync("avatar", a.id).has_value());
}

TEST_F(Avatars, TheProcessorMakesPortraitsAndFailsWhatIsNotAPicture) {
    const auto good = Create("Good", "", "source-good");
    outputs_->Put(tasks::AvatarFolder(good.id), "source-good", Picture(640, 960));
    const auto bad = Create("Bad", "", "source-bad");
    outputs_->Put(tasks::AvatarFolder(bad.id), "source-bad", "this is not a picture");
    const auto gone = Create("Gone", "", "source-missing");

    auto engine = Engine();
    EXPECT_EQ(engine->RunAvailable(), 3);

    const auto ready = Await(repo_->Portrait(org_, good.id));
    EXPECT_EQ(ready.status, store::ProcessingStatus::kReady);
    const auto info = media::ProbeMedia(ready.portrait);
    EXPECT_EQ(info.video_codec, "mjpeg");
    EXPECT_EQ(info.width, 640);  // a square crop of the 640x960 picture
    EXPECT_EQ(info.height, 640);
    const auto processed = outputs_->Stat(tasks::AvatarFolder(good.id), "processed.jpg");
    ASSERT_TRUE(processed.has_value());
    const auto preview = media::ProbeMedia(
        outputs_->Read(tasks::AvatarFolder(good.id), "reference.jpg", 0, 1 << 20));
    EXPECT_EQ(preview.height, tasks::kAvatarPreviewSide);
    EXPECT_TRUE(Await(repo_->Get(org_, good.id))->has_previews);

    const auto failed = Await(repo_->Get(org_, bad.id));
    EXPECT_EQ(failed->status, store::ProcessingStatus::kFailed);
    EXPECT_NE(failed->failure_reason.find("could not be decoded"), std::string::npos)
        << failed->failure_reason;
    const auto missing = Await(repo_->Get(org_, gone.id));
    EXPECT_EQ(missing->status, store::ProcessingStatus::kFailed);
    EXPECT_EQ(missing->failure_reason, "The reference image is no longer stored");
    EXPECT_EQ(engine->RunAvailable(), 0);
}

TEST_F(Avatars, ProcessingFetchesAUrlLeftForLaterAndKeepsItAsTheSource) {
    store::NewAvatar a;
    a.id = NewUuid();
    a.org_id = org_;
    a.name = "Later";
    a.personality = "p";
    a.voice_json = R"({"type":"service-live-preset","presetId":"max"})";
    a.image_processing = "none";
    const std::string png = Picture(300, 200);
    a.source_uri = "data:image/png;base64," + Base64Encode(png);
    Await(repo_->Create(a));

    auto engine = Engine();
    EXPECT_EQ(engine->RunAvailable(), 1);
    const auto ready = Await(repo_->Portrait(org_, a.id));
    ASSERT_EQ(ready.status, store::ProcessingStatus::kReady);
    const auto info = media::ProbeMedia(ready.portrait);
    EXPECT_EQ(info.width, 300);  // `none`: as it is (not enlarged, not cropped)
    EXPECT_EQ(info.height, 200);
    // The fetched bytes are now the avatar's stored source, so an update can process it again.
    pqxx::connection c(db_->dsn());
    pqxx::nontransaction n(c);
    const auto row =
        n.exec("SELECT source_name, source_uri IS NULL FROM avatars WHERE id = '" + a.id + "'");
    const std::string name = row[0][0].as<std::string>();
    EXPECT_TRUE(row[0][1].as<bool>());
    EXPECT_EQ(outputs_->Read(tasks::AvatarFolder(a.id), name, 0, 1 << 20), png);
}

}  // namespace
}  // namespace genhost::testing
