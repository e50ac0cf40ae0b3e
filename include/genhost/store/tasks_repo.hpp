// genhost/store/tasks_repo.hpp
//
// Provides TaskRepo: the task records and the queue in PostgreSQL. Claims use
// `FOR UPDATE SKIP LOCKED`; a claimed task carries a lease (owner + expiry) that its worker renews
// by heartbeat; every transition out of RUNNING is a compare-and-set on the lease. The state
// machine itself lives in SQL functions (migrations/0001_init.sql) so every node applies it
// atomically.
//
// Awaitable methods are for I/O-thread coroutines; *Sync methods block and are for worker
// threads and the command line. Errors: DatabaseUnavailable when the database is unreachable;
// std::runtime_error for unexpected SQL failures. Ids that are not UUIDs are reported as
// not found, never sent to SQL.
#pragma once

#include "genhost/core/clock.hpp"
#include "genhost/store/async_pg.hpp"
#include "genhost/store/database.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

// TaskStatus is where a task is in its life (docs/architecture.md, "The task queue"); stored and
// answered as the words of TaskStatusName, compared as the enum everywhere else.
enum class TaskStatus { kPending, kThrottled, kRunning, kSucceeded, kFailed, kCancelled };

// TaskStatusName is PENDING, THROTTLED, RUNNING, SUCCEEDED, FAILED or CANCELLED.
std::string_view TaskStatusName(TaskStatus status);

// ParseTaskStatus reads a stored word; throws std::runtime_error for any other.
TaskStatus ParseTaskStatus(std::string_view text);

// TaskRecord is a task as GET /v1/tasks/{id} shows it.
struct TaskRecord {
    std::string id;
    std::string endpoint;
    std::string model;
    TaskStatus status = TaskStatus::kPending;
    SysTime created_at;
    double estimated_credits = 0;
    std::optional<double> progress;
    std::vector<std::string> outputs;  // output object names, SUCCEEDED only
    std::optional<std::string> failure;
    std::optional<std::string> failure_code;
    std::optional<std::int64_t> cost_credits;  // finished: what the ledger charged
};

// ReservedCredits is what the ledger reserves for a task estimated at `estimated_credits`: the
// estimate rounded up to whole credits (balances and charges are integers; docs/credits.md).
std::int64_t ReservedCredits(double estimated_credits);

// NewTask is what POST stores.
struct NewTask {
    std::string id;
    std::string org_id;
    std::string endpoint;
    std::string model;
    std::string limit_key;   // the model's concurrency group
    std::string input_json;  // validated request, defaults applied
    double estimated_credits = 0;
    int max_concurrent = 0;
    int max_daily = 0;
    // The credit ledger (migration 0014, docs/credits.md): the usage model the charge is booked
    // under (empty: `model`; avatar videos and recipes name their own), and the organization's
    // spend cap in credits over the last 30 days (negative: none).
    std::string billing_model;
    std::int64_t max_spend_credits = -1;
};

struct CreateResult {
    // kInsufficientCredits: the balance cannot cover the task's reservation; kSpendLimited: the
    // reservation would take the organization past its 30-day spend cap. Neither is stored.
    enum class Kind {
        kCreated,
        kRateLimited,
        kInsufficientCredits,
        kSpendLimited
    } kind = Kind::kCreated;
    TaskStatus status = TaskStatus::kPending;  // PENDING or THROTTLED when created
    SysTime created_at;
    int retry_after_seconds = 0;        // when rate limited
    std::int64_t reserved_credits = 0;  // kCreated: credits the ledger reserved
};

struct CancelResult {
    enum class Kind { kNotFound, kCancelled, kDeleted, kAlreadyFinished } kind = Kind::kNotFound;
    std::vector<std::string> outputs;  // kDeleted: output names to remove from the store
};

// ClaimedTask is a task a worker now runs.
struct ClaimedTask {
    std::string id;
    std::string org_id;
    std::string endpoint;
    std::string model;
    std::string input_json;
    int attempts = 0;
};

// ThrottledGroup is an (organization, limit key) with THROTTLED tasks waiting.
struct ThrottledGroup {
    std::string org_id;
    std::string limit_key;
    std::string model;  // model of the oldest waiting task (for tier overrides)
    int tier = 1;
};

class TaskRepo {
  public:
    // Polls run on a non-blocking connection of their own for each I/O thread that polls,
    // creations on `lanes` non-blocking connections shared by all threads (see AsyncBatcher);
    // everything else on `db`'s pool.
    // Registers the repository's statements with `db` (Prepare), at any time.
    explicit TaskRepo(Database& db, int lanes = 1);
    ~TaskRepo();

    // Prepare registers this repository's statements with `db` (before db.Start()).
    static void Prepare(Database& db);

    // Create stores `task` (committed before it returns) and notifies idle workers. Concurrent
    // calls are stored together, in one transaction (see AsyncBatcher and migration 0004).
    boost::asio::awaitable<CreateResult> Create(NewTask task);

    // CreateSync is Create for threads that may block (job handlers, the command line): the same
    // function and rules, one task per transaction, on the database pool.
    CreateResult CreateSync(const NewTask& task);

    // Get returns the task `id` of organization `org_id`, unless deleted. Concurrent calls share
    // one query (see AsyncBatcher).
    boost::asio::awaitable<std::optional<TaskRecord>> Get(std::string org_id, std::string id);

    // Cancel stops an unfinished task or, with `remove`, deletes a finished one (DELETE
    // /v1/tasks/{id}). An empty `org_id` means any organization (operator command).
    boost::asio::awaitable<CancelResult> Cancel(std::string org_id, std::string id, bool remove);
    CancelResult CancelSync(const std::string& org_id, const std::string& id, bool remove);

    // ClaimSync takes the oldest PENDING task for `owner` with a lease of `lease_seconds`.
    std::optional<ClaimedTask> ClaimSync(const std::string& owner, double lease_seconds);

    // HeartbeatSync renews every lease `owner` holds and returns the ids still held.
    std::vector<std::string> HeartbeatSync(const std::string& owner, double lease_seconds);

    // SetProgressSync records `progress` (0..1); false if `owner` no longer holds the task.
    bool SetProgressSync(const std::string& id, const std::string& owner, double progress);

    // FinishSync ends a RUNNING task held by `owner` as SUCCEEDED (with `outputs`) or FAILED
    // (with `failure` and `failure_code`); false if the lease was lost (cancelled or re-queued).
    // `cost` is the final charge of a SUCCEEDED task when it is below the reservation (a
    // `duration: auto` video); without it the reservation is charged (migration 0014 settles).
    bool FinishSync(const std::string& id, const std::string& owner, TaskStatus status,
                    const std::vector<std::string>& outputs, const std::string& failure,
                    const std::string& failure_code,
                    std::optional<std::int64_t> cost = std::nullopt);

    // ReleaseOwnedSync puts every task `owner` holds back in the queue (graceful shutdown).
    int ReleaseOwnedSync(const std::string& owner);

    // RequeueExpiredSync re-queues RUNNING tasks whose lease expired (or fails those that used
    // `max_attempts`); returns how many were re-queued.
    int RequeueExpiredSync(int max_attempts);

    // ThrottledGroupsSync lists the groups with THROTTLED tasks.
    std::vector<ThrottledGroup> ThrottledGroupsSync();

    // PromoteSync recounts a group's slots and promotes waiting tasks under `limit`.
    int PromoteSync(const std::string& org_id, const std::string& limit_key, int limit);

    // RetiredSync lists up to `limit` finished tasks (SUCCEEDED, FAILED or CANCELLED) that
    // finished more than `retention_seconds` ago, oldest first.
    std::vector<std::string> RetiredSync(double retention_seconds, int limit);

    // DeleteRetiredSync deletes those of `ids` that are still retired; returns how many.
    int DeleteRetiredSync(const std::vector<std::string>& ids, double retention_seconds);

    // ActiveCounts counts the unfinished tasks (PENDING, THROTTLED, RUNNING) cluster-wide, for
    // /metrics, from the statuses' partial indexes: never a count of the whole table.
    boost::asio::awaitable<std::map<std::string, long long>> ActiveCounts();

  private:
    struct GetKey {
        std::string org_id;
        std::string id;
    };
    Database& db_;
    AsyncBatcher<GetKey, std::optional<TaskRecord>> get_batch_;
    AsyncBatcher<NewTask, CreateResult> create_batch_;
};

}  // namespace genhost::store
