#include "genhost/store/jobs_repo.hpp"

#include <pqxx/pqxx>

#include <stdexcept>

namespace genhost::store {

namespace {

constexpr const char* kEnqueue = "jobs_enqueue";
constexpr const char* kEnqueueSql = "SELECT genhost_enqueue_job($1, $2, $3)";

// The oldest due job of the kinds ($2, a text[] literal), or a RUNNING one whose lease expired.
constexpr const char* kClaim = "jobs_claim";
constexpr const char* kClaimSql =
    "UPDATE jobs j SET status = 'RUNNING', lease_owner = $1,"
    " lease_expires_at = clock_timestamp() + make_interval(secs => $3),"
    " attempts = j.attempts + 1, updated_at = clock_timestamp()"
    " WHERE (j.kind, j.subject) = (SELECT kind, subject FROM jobs"
    "   WHERE kind = ANY($2::text[]) AND ((status = 'PENDING' AND run_after <= clock_timestamp())"
    "     OR (status = 'RUNNING' AND lease_expires_at < clock_timestamp()))"
    "   ORDER BY run_after LIMIT 1 FOR UPDATE SKIP LOCKED)"
    " RETURNING j.kind, j.subject, j.revision, j.attempts";

constexpr const char* kHeartbeat = "jobs_heartbeat";
constexpr const char* kHeartbeatSql =
    "UPDATE jobs SET lease_expires_at = clock_timestamp() + make_interval(secs => $2)"
    " WHERE lease_owner = $1 AND status = 'RUNNING' AND kind = ANY($3::text[])"
    " RETURNING kind, subject, revision, attempts";

// Each end of a run holds only while the run still holds the job: $1-$4 are kind, subject,
// revision and owner.
constexpr const char* kHeld =
    " WHERE kind = $1 AND subject = $2 AND revision = $3 AND lease_owner = $4"
    " AND status = 'RUNNING'";
constexpr const char* kComplete = "jobs_complete";
const std::string kCompleteSql = std::string("DELETE FROM jobs") + kHeld + " RETURNING 1";
constexpr const char* kRetry = "jobs_retry";
const std::string kRetrySql =
    std::string(
        "UPDATE jobs SET status = 'PENDING', lease_owner = NULL, lease_expires_at = NULL,"
        " run_after = clock_timestamp() + make_interval(secs => $5), last_error = $6,"
        " updated_at = clock_timestamp()") +
    kHeld + " RETURNING 1";
constexpr const char* kDefer = "jobs_defer";
const std::string kDeferSql =
    std::string(
        "UPDATE jobs SET status = 'PENDING', lease_owner = NULL, lease_expires_at = NULL,"
        " attempts = greatest(attempts - 1, 0),"
        // A wake during the run (genhost_wake_job, migration 0016) makes it due at once.
        " run_after = CASE WHEN woken_at >= updated_at THEN clock_timestamp()"
        "   ELSE clock_timestamp() + make_interval(secs => $5) END,"
        " updated_at = clock_timestamp()") +
    kHeld + " RETURNING 1";
constexpr const char* kFail = "jobs_fail";
const std::string kFailSql =
    std::string(
        "UPDATE jobs SET status = 'FAILED', lease_owner = NULL, lease_expires_at = NULL,"
        " last_error = $5, updated_at = clock_timestamp()") +
    kHeld + " RETURNING 1";

constexpr const char* kRelease = "jobs_release_owned";
constexpr const char* kReleaseSql =
    "UPDATE jobs SET status = 'PENDING', lease_owner = NULL, lease_expires_at = NULL,"
    " attempts = greatest(attempts - 1, 0), run_after = clock_timestamp(),"
    " updated_at = clock_timestamp() WHERE lease_owner = $1 AND status = 'RUNNING'"
    " AND kind = ANY($2::text[])";

constexpr const char* kGet = "jobs_get";
constexpr const char* kGetSql =
    "SELECT kind, subject, revision, status, attempts, coalesce(lease_owner, ''),"
    " coalesce(last_error, '') FROM jobs WHERE kind = $1 AND subject = $2";

// ArrayLiteral writes `kinds` as a PostgreSQL text[] literal; kinds are plain identifiers.
std::string ArrayLiteral(const std::vector<std::string>& kinds) {
    std::string out = "{";
    for (const auto& k : kinds) {
        for (const char c : k) {
            if (!((c >= 'a' && c <= 'z') || c == '_')) {
                throw std::invalid_argument("job kind must be lower-case letters and _: " + k);
            }
        }
        if (out.size() > 1) out += ',';
        out += k;
    }
    return out + "}";
}

JobClaim ReadClaim(const pqxx::row& row) {
    return JobClaim{row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::int64_t>(),
                    row[3].as<int>()};
}

}  // namespace

void JobRepo::Prepare(Database& db) {
    db.Prepare(kEnqueue, kEnqueueSql);
    db.Prepare(kClaim, kClaimSql);
    db.Prepare(kHeartbeat, kHeartbeatSql);
    db.Prepare(kComplete, kCompleteSql);
    db.Prepare(kRetry, kRetrySql);
    db.Prepare(kFail, kFailSql);
    db.Prepare(kDefer, kDeferSql);
    db.Prepare(kRelease, kReleaseSql);
    db.Prepare(kGet, kGetSql);
}

void JobRepo::EnqueueSync(const std::string& kind, const std::string& subject,
                          std::int64_t revision) {
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        n.exec_prepared(kEnqueue, kind, subject, revision);
    });
}

std::optional<JobClaim> JobRepo::ClaimSync(const std::string& owner,
                                           const std::vector<std::string>& kinds,
                                           double lease_seconds) {
    if (kinds.empty()) return std::nullopt;
    const std::string literal = ArrayLiteral(kinds);
    std::optional<JobClaim> out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kClaim, owner, literal, lease_seconds);
        if (!r.empty()) out = ReadClaim(r[0]);
    });
    return out;
}

std::vector<JobClaim> JobRepo::HeartbeatSync(const std::string& owner,
                                             const std::vector<std::string>& kinds,
                                             double lease_seconds) {
    std::vector<JobClaim> held;
    if (kinds.empty()) return held;
    const std::string literal = ArrayLiteral(kinds);
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec_prepared(kHeartbeat, owner, lease_seconds, literal)) {
            held.push_back(ReadClaim(row));
        }
    });
    return held;
}

bool JobRepo::CompleteSync(const JobClaim& claim, const std::string& owner) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done =
            !n.exec_prepared(kComplete, claim.kind, claim.subject, claim.revision, owner).empty();
    });
    return done;
}

bool JobRepo::RetrySync(const JobClaim& claim, const std::string& owner, double delay_seconds,
                        const std::string& error) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kRetry, claim.kind, claim.subject, claim.revision, owner,
                                delay_seconds, error)
                    .empty();
    });
    return done;
}

bool JobRepo::DeferSync(const JobClaim& claim, const std::string& owner, double delay_seconds) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kDefer, claim.kind, claim.subject, claim.revision, owner,
                                delay_seconds)
                    .empty();
    });
    return done;
}

bool JobRepo::FailSync(const JobClaim& claim, const std::string& owner, const std::string& error) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kFail, claim.kind, claim.subject, claim.revision, owner, error)
                    .empty();
    });
    return done;
}

int JobRepo::ReleaseOwnedSync(const std::string& owner, const std::vector<std::string>& kinds) {
    int released = 0;
    if (kinds.empty()) return released;
    const std::string literal = ArrayLiteral(kinds);
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        released = static_cast<int>(n.exec_prepared(kRelease, owner, literal).affected_rows());
    });
    return released;
}

std::map<std::string, long> JobRepo::CountByKindSync() {
    std::map<std::string, long> out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec("SELECT kind, count(*) FROM jobs GROUP BY kind")) {
            out[row[0].as<std::string>()] = row[1].as<long>();
        }
    });
    return out;
}

std::optional<JobRow> JobRepo::GetSync(const std::string& kind, const std::string& subject) {
    std::optional<JobRow> out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kGet, kind, subject);
        if (r.empty()) return;
        out =
            JobRow{r[0][0].as<std::string>(), r[0][1].as<std::string>(), r[0][2].as<std::int64_t>(),
                   r[0][3].as<std::string>(), r[0][4].as<int>(),         r[0][5].as<std::string>(),
                   r[0][6].as<std::string>()};
    });
    return out;
}

}  // namespace genhost::store
