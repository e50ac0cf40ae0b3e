// Test helpers for PostgreSQL: TestDatabase (a fresh database in the cluster scripts/test started,
// dropped afterwards) and PgCluster (a private throwaway cluster a test can stop and start, for
// outage tests). Both skip the test (GTEST_SKIP by the caller) when no cluster is configured.
#pragma once

#include <string>

namespace genhost::testing {

// ClusterDsn returns GENHOST_TEST_DATABASE_URL, or "" when unset.
std::string ClusterDsn();

class TestDatabase {
  public:
    // Creates a database named genhost_test_<random> in the shared cluster.
    TestDatabase();
    ~TestDatabase();
    TestDatabase(const TestDatabase&) = delete;
    TestDatabase& operator=(const TestDatabase&) = delete;

    const std::string& dsn() const { return dsn_; }
    const std::string& name() const { return name_; }

  private:
    std::string admin_dsn_;
    std::string name_;
    std::string dsn_;
};

class PgCluster {
  public:
    // Initialises a cluster in a new temporary folder (not started).
    PgCluster();
    ~PgCluster();  // stops it and removes the folder
    PgCluster(const PgCluster&) = delete;
    PgCluster& operator=(const PgCluster&) = delete;

    void Start();
    void Stop();  // immediate shutdown
    const std::string& dsn() const { return dsn_; }

  private:
    void Run(const std::string& command);
    std::string dir_;
    std::string dsn_;
};

}  // namespace genhost::testing
