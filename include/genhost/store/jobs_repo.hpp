// genhost/store/jobs_repo.hpp
//
// Provides JobRepo: the rows of the leased-job engine (migrations/0007_jobs.sql,
// docs/architecture.md "Background jobs"). One row per (kind, subject): the work to do on one
// thing (an avatar to process, ...) at one revision of it. Claims use `FOR UPDATE SKIP LOCKED`
// and take a lease (owner, expiry) that the runner renews by heartbeat; a RUNNING row whose lease
// expired is claimed again. Every end of a run (done, retry later, failed for good) is a
// compare-and-set on (revision, owner, RUNNING): a subject changed meanwhile was re-queued at its
// new revision, and the run of the old one changes nothing.
//
// Every method blocks (worker threads and tests). Errors: DatabaseUnavailable when the database
// is unreachable; std::runtime_error for unexpected SQL failures.
#pragma once

#include "genhost/store/database.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

// JobClaim is a job a runner holds: which subject, at which revision, and the how-manieth run of
// that revision this is (1 for the first).
struct JobClaim {
    std::string kind;
    std::string subject;
    std::int64_t revision = 0;
    int attempt = 0;
};

// JobRow is a job as it stands, for operators and tests.
struct JobRow {
    std::string kind;
    std::string subject;
    std::int64_t revision = 0;
    std::string status;  // PENDING, RUNNING or FAILED (a finished job's row is gone)
    int attempts = 0;
    std::string lease_owner;
    std::string last_error;
};

class JobRepo {
  public:
    // Prepare registers the repository's statements; call before Database::Start.
    static void Prepare(Database& db);

    // Registers the repository's statements with `db` (Prepare), at any time.
    explicit JobRepo(Database& db) : db_(db) { Prepare(db); }

    // EnqueueSync queues revision `revision` of (kind, subject): a new job, or the existing one
    // reset to PENDING at that revision. Wakes the nodes (NOTIFY genhost_jobs).
    void EnqueueSync(const std::string& kind, const std::string& subject, std::int64_t revision);

    // ClaimSync takes, for `owner`, the job of one of `kinds` that has waited longest: a due
    // PENDING job, or a RUNNING one whose lease expired (its runner died). nullopt when none.
    std::optional<JobClaim> ClaimSync(const std::string& owner,
                                      const std::vector<std::string>& kinds, double lease_seconds);

    // HeartbeatSync renews the leases of `runs` (by kind, subject and revision) that `owner`
    // still holds and returns those runs. Only the caller's own runs: the lanes of one node share
    // the owner's name, each with its own lease (a realtime session's 15 s must not become an
    // avatar job's 120 s), and a lane renews nothing it does not run.
    std::vector<JobClaim> HeartbeatSync(const std::string& owner, const std::vector<JobClaim>& runs,
                                        double lease_seconds);

    // CompleteSync ends the run: the job is done, its row goes. RetrySync puts it back, due in
    // `delay_seconds`, with `error` noted. FailSync keeps it FAILED with `error`. Each returns
    // false, changing nothing, when the run no longer holds the job (re-queued at a newer
    // revision, or taken over after its lease expired).
    bool CompleteSync(const JobClaim& claim, const std::string& owner);
    bool RetrySync(const JobClaim& claim, const std::string& owner, double delay_seconds,
                   const std::string& error);
    bool FailSync(const JobClaim& claim, const std::string& owner, const std::string& error);
    // DeferSync puts it back, due in `delay_seconds`, without counting the run.
    bool DeferSync(const JobClaim& claim, const std::string& owner, double delay_seconds);

    // ReleaseSync puts `runs` that `owner` still holds (same kind, subject and revision) back to
    // PENDING, due now, without counting the run: a lane stopping releases only the runs it
    // stopped, never another lane's, which still run. Returns how many.
    int ReleaseSync(const std::string& owner, const std::vector<JobClaim>& runs);

    // CountByKindSync returns how many jobs of each kind the table holds, whatever their status
    // (the table holds only work not yet done, so it stays small).
    std::map<std::string, long> CountByKindSync();

    // GetSync returns the job of (kind, subject), if any.
    std::optional<JobRow> GetSync(const std::string& kind, const std::string& subject);

  private:
    Database& db_;
};

}  // namespace genhost::store
