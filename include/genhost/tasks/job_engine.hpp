// genhost/tasks/job_engine.hpp
//
// Provides JobEngine: the one engine that runs background jobs of every kind on every node
// (store::JobRepo, migrations/0007_jobs.sql; docs/architecture.md "Background jobs"). Avatars are
// processed on it; voices, document indexing and realtime sessions (their own engine) register
// their kinds the same way.
//
// - Runner threads claim due jobs of the registered kinds (FOR UPDATE SKIP LOCKED, under a lease)
//   and run each kind's handler. They sleep until Kick (a local write, or a `genhost_jobs`
//   notification from any node) or the poll interval. One runner starts with the engine; a claim
//   that leaves none free starts another, up to `runners` (the threads stay until Stop).
// - A heartbeat renews the leases of this engine's runs (each by kind, subject and revision: never
//   another engine's, though they share the owner's name) every lease/3, on a thread of its own
//   or driven by the Runtime's one heartbeat thread (`own_heartbeat`), and tells a run whose job
//   was taken from it
//   (re-queued at a newer revision, or taken over after this node stalled) through `lease_lost`,
//   by the same rule as for tasks (leased_runs.hpp).
// - A handler's answer ends the run: done (the row goes), retry (due again after a backoff that
//   doubles from `retry_base` up to 5 minutes), or failed. After `max_attempts` runs, or when
//   runs keep dying (the lease expired `max_attempts` times), the job fails for good and the
//   kind's `failed` callback marks its subject failed. Every end is a compare-and-set: a run
//   that lost its job changes nothing.
// - An exception from a handler counts as a retry with its message; a lost database leaves the
//   job to its lease.
// - Stop stops claiming, lets running jobs finish for `grace`, tells the rest `lease_lost`, and
//   puts those runs (only the ones it stopped) back in the queue without counting the run.
#pragma once

#include "genhost/core/deadline.hpp"
#include "genhost/store/jobs_repo.hpp"
#include "genhost/tasks/leased_runs.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace genhost::tasks {

// JobResult is a handler's answer.
struct JobResult {
    enum class Kind { kDone, kRetry, kFailed, kWait } kind = Kind::kDone;
    std::string error;        // kRetry and kFailed: what went wrong, for the row and the subject
    double wait_seconds = 0;  // kWait

    static JobResult Done() { return {}; }
    static JobResult Retry(std::string error) { return {Kind::kRetry, std::move(error)}; }
    static JobResult Failed(std::string error) { return {Kind::kFailed, std::move(error)}; }
    // Wait puts the job back, due in `seconds`, without counting the run: the subject waits
    // for something (a realtime session for a place), it did not fail.
    static JobResult Wait(double seconds) { return {Kind::kWait, {}, seconds}; }
};

// JobKind is what a kind of job registers: how to run one, and how to mark its subject failed.
struct JobKind {
    // Run does the work of `job` on a runner thread; `lease_lost` turns true when the job was
    // taken from this run (its result is then ignored): long work should check it and stop.
    std::function<JobResult(const store::JobClaim& job, const std::atomic<bool>& lease_lost)> run;
    // Failed is called once the job failed for good (its handler said so, retries ran out, or
    // its runs kept dying), with the reason; it marks the subject so. May be empty.
    std::function<void(const store::JobClaim& job, const std::string& reason)> failed;
};

struct JobEngineOptions {
    std::string owner;                           // this node's lease owner name
    int runners = 1;                             // jobs run at once by this process
    double lease_seconds = 60;                   // renewed every third of it
    int max_attempts = 5;                        // runs of one revision before it fails for good
    std::chrono::milliseconds poll{2000};        // how often due jobs are looked for unkicked
    std::chrono::milliseconds retry_base{1000};  // the first retry's delay, doubled each time
    bool own_heartbeat = true;  // false: the caller calls Heartbeat every lease/3 (Runtime)
};

class JobEngine {
  public:
    JobEngine(JobEngineOptions options, store::JobRepo& repo, std::map<std::string, JobKind> kinds);
    ~JobEngine();
    JobEngine(const JobEngine&) = delete;
    JobEngine& operator=(const JobEngine&) = delete;

    void Start();
    // Kick makes the idle runners look for due jobs now.
    void Kick();
    void Stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
    // The same, letting running jobs finish until `deadline` (which another thread may cut).
    void Stop(const core::Deadline& deadline);

    // StopClaiming makes the runners take no new job (the first step of Stop, for a runtime
    // that stops several engines against one deadline).
    void StopClaiming();

    // Heartbeat renews the leases of the runs in flight now (see above); with own_heartbeat
    // the engine's thread calls it.
    void Heartbeat();

    // RunAvailable claims and runs due jobs on the calling thread until none is left; returns
    // how many runs it ended (tests and commands; Start need not be called).
    int RunAvailable();

    // HandledKinds: the kinds this engine serves, each with whether it has a handler
    // (CheckJobKinds, job_kinds.hpp).
    std::map<std::string, bool> HandledKinds() const;

    // Counters since construction: runs done, retried, failed for good, and runs that lost their
    // job.
    struct Counts {
        std::uint64_t done = 0, retried = 0, failed = 0, lost = 0;
    };
    Counts counts() const;

  private:
    // RunOne claims one due job and runs it; false when there was none.
    bool RunOne();
    // Claimed counts a run begun, and starts another runner when none is left free (up to
    // options_.runners, once started); Unclaimed counts it ended.
    void Claimed();
    void Unclaimed();
    void RunnerMain();
    void HeartbeatMain();

    JobEngineOptions options_;
    store::JobRepo& repo_;
    std::map<std::string, JobKind> kinds_;

    mutable std::mutex mu_;
    std::condition_variable wake_;
    std::uint64_t kicks_ = 0;
    bool stop_claiming_ = false;
    bool stop_ = false;
    int busy_ = 0;                                   // runs between claim and end
    std::vector<std::string> kind_names_;            // the keys of kinds_, which the runners claim
    LeasedRuns runs_;                                // the jobs running here, by "kind/subject"
    std::map<std::string, store::JobClaim> claims_;  // the same runs' claims, by the same key
    Counts counts_;
    std::vector<std::thread> threads_;
};

}  // namespace genhost::tasks
