// OrgDatabaseTest: a pg test fixture with a migrated throwaway database, a started pool and two
// organizations (`org_` "acme" and `other_org_` "globex"); Await runs a repository's awaitable to
// its end. A test's SetUp calls OrgDatabaseTest::SetUp() first and returns when it skipped (no
// PostgreSQL configured).
#pragma once

#include "support/await.hpp"
#include "support/pg.hpp"

#include "genhost/store/database.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/store/orgs.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include <memory>
#include <string>

namespace genhost::testing {

class OrgDatabaseTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (ClusterDsn().empty()) GTEST_SKIP() << "no PostgreSQL configured";
        db_ = std::make_unique<TestDatabase>();
        store::Migrate(db_->dsn());
        pool_ = std::make_unique<store::Database>(db_->dsn(), 2);
        pool_->Start();
        store::OrgRepo orgs(*pool_);
        org_ = orgs.EnsureOrganizationSync("acme", 1, false).id;
        other_org_ = orgs.EnsureOrganizationSync("globex", 1, false).id;
    }

    template <class T>
    T Await(boost::asio::awaitable<T> a) {
        return AwaitOn(io_, std::move(a));
    }

    boost::asio::io_context io_;
    std::unique_ptr<TestDatabase> db_;
    std::unique_ptr<store::Database> pool_;
    std::string org_;
    std::string other_org_;
};

}  // namespace genhost::testing
