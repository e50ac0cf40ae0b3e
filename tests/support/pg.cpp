#include "support/pg.hpp"

#include "genhost/core/ids.hpp"

#include <pqxx/pqxx>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace genhost::testing {

std::string ClusterDsn() {
    const char* v = std::getenv("GENHOST_TEST_DATABASE_URL");
    return v == nullptr ? std::string() : std::string(v);
}

TestDatabase::TestDatabase() : admin_dsn_(ClusterDsn()) {
    if (admin_dsn_.empty()) throw std::runtime_error("GENHOST_TEST_DATABASE_URL is not set");
    name_ = "genhost_test_" + NewUuid().substr(0, 8);
    pqxx::connection c(admin_dsn_);
    pqxx::nontransaction n(c);
    n.exec("CREATE DATABASE " + name_);
    // Same server, other database: replace (or add) dbname in the keyword DSN.
    std::string dsn = admin_dsn_;
    const auto pos = dsn.find("dbname=");
    if (pos == std::string::npos) {
        dsn += " dbname=" + name_;
    } else {
        const auto end = dsn.find(' ', pos);
        dsn.replace(pos, end == std::string::npos ? std::string::npos : end - pos,
                    "dbname=" + name_);
    }
    dsn_ = dsn;
}

TestDatabase::~TestDatabase() {
    try {
        pqxx::connection c(admin_dsn_);
        pqxx::nontransaction n(c);
        n.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (const std::exception&) {
    }
}

namespace {
std::string PgBin() {
    const char* v = std::getenv("GENHOST_PG_BIN");
    return v == nullptr ? std::string("/usr/lib/postgresql/15/bin") : std::string(v);
}
std::string AsPgUser() { return geteuid() == 0 ? "runuser -u postgres -- " : ""; }
}  // namespace

void PgCluster::Run(const std::string& command) {
    if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

PgCluster::PgCluster() {
    char tmpl[] = "/tmp/genhost-cluster.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    std::filesystem::permissions(dir_, std::filesystem::perms::all);
    Run(AsPgUser() + PgBin() + "/initdb -D " + dir_ + "/data -U postgres -A trust --no-sync >" +
        dir_ + "/../" + std::filesystem::path(dir_).filename().string() + ".initdb.log 2>&1");
    Run(AsPgUser() + "mkdir -p " + dir_ + "/run");
    dsn_ = "host=" + dir_ + "/run dbname=postgres user=postgres connect_timeout=2";
}

void PgCluster::Start() {
    Run(AsPgUser() + PgBin() + "/pg_ctl -D " + dir_ + "/data -l " + dir_ +
        "/postgres.log -w -t 60 -o \"-c listen_addresses='' -k " + dir_ +
        "/run -c fsync=off\" start >/dev/null");
}

void PgCluster::Stop() {
    Run(AsPgUser() + PgBin() + "/pg_ctl -D " + dir_ + "/data -m immediate -w stop >/dev/null");
}

PgCluster::~PgCluster() {
    std::system(
        (AsPgUser() + PgBin() + "/pg_ctl -D " + dir_ + "/data -m immediate -w stop >/dev/null 2>&1")
            .c_str());
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    std::filesystem::remove(dir_ + ".initdb.log", ec);
}

}  // namespace genhost::testing
