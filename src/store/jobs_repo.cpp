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
// Runs selects the rows of runs that $1 (the owner) still holds; the runs are three arrays, one
// element per run, at parameters $first (kinds), $first+1 (subjects) and $first+2 (revisions).
std::string Runs(int first) {
    const auto p = [&](int i) { return "$" + std::to_string(first + i); };
    return " FROM unnest(" + p(0) + "::text[], " + p(1) + "::text[], " + p(2) +
           "::bigint[]) AS r(kind, subject, revision)"
           " WHERE j.kind = r.kind AND j.subject = r.subject AND j.revision = r.revision"
           " AND j.lease_owner = $1 AND j.status = 'RUNNING'";
}
const std::string kHeartbeatSql =
    "UPDATE jobs j SET lease_expires_at = clock_timestamp() + make_interval(secs => $2)" + Runs(3) +
    " RETURNING j.kind, j.subject, j.revision, j.attempts";

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

constexpr const char* kRelease = "jobs_release";
const std::string kReleaseSql =
    "UPDATE jobs j SET status = 'PENDING', lease_owner = NULL, lease_expires_at = NULL,"
    " attempts = greatest(j.attempts - 1, 0), run_after = clock_timestamp(),"
    " updated_at = clock_timestamp()" +
    Runs(2);

constexpr const char* kGet = "jobs_get";
constexpr const char* kGetSql =
    "SELECT kind, subject, revision, status, attempts, coalesce(lease_owner, ''),"
    " coalesce(last_error, '') FROM jobs WHERE kind = $1 AND subject = $2";

// ArrayLiteral writes `kinds` as a PostgreSQL text[] literal; kinds are plain identifiers.
std::string Join(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
    return out;
}

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

// QuotedArray writes `values` as a PostgreSQL array literal, each element double-quoted.
std::string QuotedArray(const std::vector<std::string>& values) {
    std::string out = "{";
    for (const auto& v : values) {
        if (out.size() > 1) out += ',';
        out += '"';
        for (const char c : v) {
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
        out += '"';
    }
    return out + "}";
}

// RunArrays writes `runs` as the three array literals of kRuns.
struct RunArrays {
    std::string kinds, subjects, revisions;
};
RunArrays ToArrays(const std::vector<JobClaim>& runs) {
    std::vector<std::string> kinds, subjects, revisions;
    for (const auto& r : runs) {
        kinds.push_back(r.kind);
        subjects.push_back(r.subject);
        revisions.push_back(std::to_string(r.revision));
    }
    return {ArrayLiteral(kinds), QuotedArray(subjects), "{" + Join(revisions) + "}"};
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
                                             const std::vector<JobClaim>& runs,
                                             double lease_seconds) {
    std::vector<JobClaim> held;
    if (runs.empty()) return held;
    const RunArrays a = ToArrays(runs);
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row :
             n.exec_prepared(kHeartbeat, owner, lease_seconds, a.kinds, a.subjects, a.revisions)) {
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

int JobRepo::ReleaseSync(const std::string& owner, const std::vector<JobClaim>& runs) {
    int released = 0;
    if (runs.empty()) return released;
    const RunArrays a = ToArrays(runs);
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        released = static_cast<int>(
            n.exec_prepared(kRelease, owner, a.kinds, a.subjects, a.revisions).affected_rows());
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
