// DocumentRepo and DocumentIndexer against a real PostgreSQL: documents are scoped to their
// organization and listed in the four orders by keyset pages; a new content is a new revision
// with an indexing job queued in the same transaction; the indexer stores the chunks of that
// revision only; search finds every word, then any word, then words like misspelt ones, within
// the documents asked for; deleting a document takes it off the avatars, and an avatar cannot be
// stored with a document that is gone.
#include "support/org_database.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/store/avatars_repo.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/documents_repo.hpp"
#include "genhost/store/jobs_repo.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/tasks/document_indexer.hpp"
#include "genhost/tasks/job_engine.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <pqxx/pqxx>

#include <thread>

namespace genhost::testing {
namespace {

namespace asio = boost::asio;
using ::testing::ElementsAre;

class Documents : public OrgDatabaseTest {
  protected:
    void SetUp() override {
        OrgDatabaseTest::SetUp();
        if (IsSkipped()) return;
        repo_ = std::make_unique<store::DocumentRepo>(*pool_);
        avatars_ = std::make_unique<store::AvatarRepo>(*pool_);
        jobs_ = std::make_unique<store::JobRepo>(*pool_);
        indexer_ = std::make_unique<tasks::DocumentIndexer>(*repo_);
    }

    store::DocumentRecord Create(const std::string& name, const std::string& content,
                                 const std::string& org = "") {
        return Await(repo_->Create(NewUuid(), org.empty() ? org_ : org, name, content));
    }

    // IndexAll runs the queued indexing jobs, as the job engine of any node would.
    int IndexAll() {
        tasks::JobEngineOptions o;
        o.owner = "test";
        tasks::JobEngine engine(o, *jobs_, {{tasks::kDocumentJobKind, indexer_->Kind()}});
        return engine.RunAvailable();
    }

    store::SearchResult Search(const std::string& q,
                               std::optional<std::vector<std::string>> ids = std::nullopt,
                               int limit = 5) {
        return Await(repo_->Search(org_, std::move(ids), q, limit));
    }

    std::string AvatarWith(std::vector<std::string> docs) {
        store::NewAvatar a;
        a.id = NewUuid();
        a.org_id = org_;
        a.name = "Ada";
        a.personality = "helpful";
        a.voice_json = R"({"type":"service-live-preset","presetId":"clara"})";
        a.source_name = "source-1";
        a.document_ids = std::move(docs);
        const auto made = Await(avatars_->Create(a));
        return made ? made->id : std::string();
    }

    std::unique_ptr<store::DocumentRepo> repo_;
    std::unique_ptr<store::AvatarRepo> avatars_;
    std::unique_ptr<store::JobRepo> jobs_;
    std::unique_ptr<tasks::DocumentIndexer> indexer_;
};

const char* kHandbook =
    "# Returns\n"
    "You can return any item within 30 days of purchase for a full refund.\n\n"
    "# Shipping\n"
    "## Domestic\n"
    "Standard shipping takes 3-5 business days.\n"
    "## International\n"
    "We ship to 40 countries; customs fees are paid by the customer.\n";

TEST_F(Documents, CreateGetAndOrganizationScope) {
    const auto d = Create("Handbook", kHandbook);
    EXPECT_EQ(d.type, "text");
    EXPECT_EQ(d.content, kHandbook);
    EXPECT_TRUE(d.used_by.empty());
    EXPECT_EQ(d.revision, 1);
    const auto got = Await(repo_->Get(org_, d.id));
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->name, "Handbook");
    EXPECT_FALSE(Await(repo_->Get(other_org_, d.id)).has_value());
    EXPECT_FALSE(Await(repo_->Get(org_, "not-a-uuid")).has_value());
    EXPECT_FALSE(Await(repo_->Update(other_org_, d.id, "x", std::nullopt)));
    EXPECT_FALSE(Await(repo_->Delete(other_org_, d.id)));
    // A job was queued with the document, at its revision.
    const auto job = jobs_->GetSync(tasks::kDocumentJobKind, d.id);
    ASSERT_TRUE(job.has_value());
    EXPECT_EQ(job->revision, 1);
}

TEST_F(Documents, ListsInEveryOrderByKeysetPages) {
    std::vector<std::string> made;
    for (int i = 0; i < 5; ++i) made.push_back(Create("D" + std::to_string(i), "text").id);
    Create("foreign", "text", other_org_);
    // Touch the oldest: it is the most recently updated.
    ASSERT_TRUE(Await(repo_->Update(org_, made[0], "D0 renamed", std::nullopt)));

    const auto walk = [&](store::DocumentOrder order) {
        std::vector<std::string> ids;
        std::optional<store::Keyset> after;
        for (int pages = 0; pages < 10; ++pages) {
            const auto page = Await(repo_->List(org_, order, 2, after));
            for (const auto& d : page.documents) {
                EXPECT_FALSE(d.content.has_value());
                ids.push_back(d.id);
            }
            if (!page.more) break;
            const auto& last = page.documents.back();
            after =
                store::Keyset{order.by == store::DocumentOrder::By::kCreatedAt ? last.created_at
                                                                               : last.updated_at,
                              last.id};
        }
        return ids;
    };
    using By = store::DocumentOrder::By;
    EXPECT_THAT(walk({By::kCreatedAt, false}),
                ElementsAre(made[4], made[3], made[2], made[1], made[0]));
    EXPECT_THAT(walk({By::kCreatedAt, true}),
                ElementsAre(made[0], made[1], made[2], made[3], made[4]));
    EXPECT_THAT(walk({By::kUpdatedAt, false}),
                ElementsAre(made[0], made[4], made[3], made[2], made[1]));
    EXPECT_THAT(walk({By::kUpdatedAt, true}),
                ElementsAre(made[1], made[2], made[3], made[4], made[0]));
}

TEST_F(Documents, OnlyANewContentIsANewRevisionAndTheIndexerStoresTheCurrentOne) {
    const auto d = Create("Handbook", kHandbook);
    ASSERT_TRUE(Await(repo_->Update(org_, d.id, "Renamed", std::nullopt)));
    EXPECT_EQ(Await(repo_->Get(org_, d.id))->revision, 1);
    ASSERT_TRUE(Await(repo_->Update(org_, d.id, std::nullopt, std::string(kHandbook))));
    EXPECT_EQ(Await(repo_->Get(org_, d.id))->revision, 1);  // the same text

    // Revision 1 indexed, then the content changes: indexing revision 1 again stores nothing.
    EXPECT_EQ(IndexAll(), 1);
    EXPECT_EQ(Await(repo_->Get(org_, d.id))->indexed_revision, 1);
    EXPECT_EQ(Search("refund").hits.size(), 1u);
    ASSERT_TRUE(Await(repo_->Update(org_, d.id, std::nullopt, std::string("Only bicycles."))));
    EXPECT_EQ(Await(repo_->Get(org_, d.id))->revision, 2);
    EXPECT_FALSE(indexer_->IndexSync(d.id, 1));
    EXPECT_TRUE(Search("bicycles").indexing);
    EXPECT_EQ(IndexAll(), 1);
    EXPECT_FALSE(Search("bicycles").indexing);
    EXPECT_EQ(Search("refund").strategy, "none");
    EXPECT_EQ(Search("bicycles").hits.size(), 1u);
    EXPECT_FALSE(jobs_->GetSync(tasks::kDocumentJobKind, d.id).has_value());  // done
}

TEST_F(Documents, SearchFindsAllWordsThenAnyWordThenSimilarWords) {
    const auto d = Create("Handbook", kHandbook);
    const auto other = Create("Menu", "# Drinks\nCoffee, tea and fresh orange juice.\n");
    IndexAll();

    auto r = Search("refund within days");
    EXPECT_EQ(r.strategy, "websearch");
    ASSERT_EQ(r.hits.size(), 1u);
    EXPECT_EQ(r.hits[0].document_id, d.id);
    EXPECT_EQ(r.hits[0].document_name, "Handbook");
    EXPECT_EQ(r.hits[0].heading, "Returns");
    EXPECT_EQ(std::string(kHandbook).substr(r.hits[0].start, r.hits[0].text.size()),
              r.hits[0].text);
    EXPECT_GT(r.hits[0].score, 0);

    // A phrase in quotes, and a word left out.
    EXPECT_EQ(Search("\"customs fees\"").hits.at(0).heading, "Shipping > International");
    EXPECT_EQ(Search("shipping -customs").hits.at(0).heading, "Shipping > Domestic");

    // Not every word is there: any word, the best-matching chunks first.
    r = Search("customs coffee submarine");
    EXPECT_EQ(r.strategy, "any_word");
    ASSERT_EQ(r.hits.size(), 2u);

    // Misspelt: the organization's words that look like it, two letters swapped included.
    r = Search("custmos");
    EXPECT_EQ(r.strategy, "similar_words");
    ASSERT_FALSE(r.hits.empty());
    EXPECT_EQ(r.hits[0].heading, "Shipping > International");
    r = Search("refnud");
    EXPECT_EQ(r.strategy, "similar_words");
    ASSERT_FALSE(r.hits.empty());
    EXPECT_EQ(r.hits[0].heading, "Returns");

    // Nothing near, only stop words, or punctuation.
    EXPECT_EQ(Search("zzzzqqq").strategy, "none");
    EXPECT_TRUE(Search("the and of").hits.empty());
    EXPECT_TRUE(Search("!!! ''' \\\\ &|:*").hits.empty());

    // Limited to some documents, and to at most `limit` hits; another organization sees none.
    EXPECT_TRUE(Search("coffee", std::vector<std::string>{d.id}).hits.empty());
    EXPECT_EQ(Search("coffee", std::vector<std::string>{other.id}).hits.size(), 1u);
    EXPECT_EQ(Search("shipping customs refund coffee", std::nullopt, 2).hits.size(), 2u);
    EXPECT_TRUE(Await(repo_->Search(other_org_, std::nullopt, "coffee", 5)).hits.empty());
}

TEST_F(Documents, DeletingADocumentTakesItOffItsAvatars) {
    const auto a = Create("A", "alpha");
    const auto b = Create("B", "beta");
    const std::string avatar = AvatarWith({a.id, b.id});
    ASSERT_FALSE(avatar.empty());
    const auto used = Await(repo_->Get(org_, a.id))->used_by;
    ASSERT_EQ(used.size(), 1u);
    EXPECT_EQ(used[0].id, avatar);
    EXPECT_EQ(used[0].name, "Ada");
    EXPECT_FALSE(used[0].has_previews);

    ASSERT_TRUE(Await(repo_->Delete(org_, a.id)));
    EXPECT_THAT(Await(avatars_->Get(org_, avatar))->document_ids, ElementsAre(b.id));
    EXPECT_FALSE(Await(repo_->Delete(org_, a.id)));
    // A document that is gone, or another organization's, cannot be attached.
    EXPECT_TRUE(AvatarWith({a.id}).empty());
    const auto foreign = Create("F", "foreign", other_org_);
    EXPECT_TRUE(AvatarWith({foreign.id}).empty());
    EXPECT_THAT(Await(repo_->Missing(org_, {b.id, a.id, "nope", foreign.id})),
                ElementsAre(1u, 2u, 3u));
}

// An avatar stored while its document is being deleted: the two never both succeed in a way
// that leaves the avatar holding a document that is gone.
TEST_F(Documents, AnAvatarAndTheDeleteOfItsDocumentNeverBothLeaveADanglingId) {
    for (int round = 0; round < 20; ++round) {
        const auto d = Create("D", "text");
        std::string avatar;
        std::thread deleter([&] {
            asio::io_context io;
            auto f = asio::co_spawn(io, repo_->Delete(org_, d.id), asio::use_future);
            io.run();
            f.get();
        });
        avatar = AvatarWith({d.id});
        deleter.join();
        if (!avatar.empty()) {
            EXPECT_TRUE(Await(avatars_->Get(org_, avatar))->document_ids.empty())
                << "round " << round << ": the avatar kept a deleted document";
        }
    }
}

}  // namespace
}  // namespace genhost::testing
