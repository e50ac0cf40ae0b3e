// genhost/tasks/worker_pool.hpp
//
// Provides WorkerPool: the in-process workers that run queued tasks, and the background jobs
// that keep the queue healthy on every node.
//
// - Workers (N threads) claim the oldest PENDING task under a lease, run its provider, store its
//   outputs and end it with a compare-and-set on the lease. They sleep until a `genhost_tasks`
//   notification (Wake) or a one-second poll.
// - The heartbeat renews this node's leases every lease/3 and cancels local work whose lease was
//   lost (cancelled through the API, or re-queued after this node stalled), by LeasedRuns's rule
//   (leased_runs.hpp): a claim committing while it runs is never taken for a lost lease.
// - The sweeper re-queues tasks whose lease expired (their process died) and promotes THROTTLED
//   tasks when slots are free, oldest first.
//
// Cancellation reaches running work within ~100 ms of the `genhost_cancel` notification, and by
// the next heartbeat at worst; cancelled work leaves no output behind.
#pragma once

#include "genhost/catalog/catalog.hpp"
#include "genhost/core/deadline.hpp"
#include "genhost/core/metrics.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/providers/provider.hpp"
#include "genhost/store/tasks_repo.hpp"
#include "genhost/tasks/leased_runs.hpp"
#include "genhost/tasks/moderation.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace genhost::tasks {

struct WorkerOptions {
    std::string owner;  // unique per process, e.g. host:pid:uuid
    int workers = 2;    // 0: run no workers (API-only node), still sweep
    double lease_seconds = 30;
    int max_attempts = 3;
    std::chrono::milliseconds poll_interval{1000};
    std::chrono::milliseconds sweep_interval{1000};
    std::string scratch_root;  // each task run gets a private folder here, removed afterwards
    const providers::InputResolver* inputs = nullptr;  // how pipelines read media inputs
    const Moderator* moderation = nullptr;  // checked before any provider runs; null: none
    // Worker threads (and the threads their pipelines start) run at this nice value (0..19)
    // under SCHED_BATCH, so the HTTP front end wins the CPU under a full media queue.
    int nice = 0;
    // Where the per-model counts and durations of the runs go (genhost_tasks_finished_total,
    // genhost_task_duration_seconds, genhost_task_failures_total) and the providers' runs
    // (genhost_provider_runs_total, genhost_provider_run_duration_seconds); null: nowhere.
    metrics::Registry* metrics = nullptr;
};

// LimitsFn returns the concurrency limit of `model` for an organization of `tier`.
using ConcurrencyLimitFn = std::function<int(int tier, const std::string& model)>;

class WorkerPool {
  public:
    WorkerPool(WorkerOptions options, store::TaskRepo& repo, const catalog::Catalog& catalog,
               std::map<std::string, providers::Provider*> providers, outputs::OutputStore& store,
               ConcurrencyLimitFn limit);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    void Start();

    // Wake makes an idle worker look for work now.
    void Wake();

    // CancelLocal cancels task `task_id` if it runs here; an empty id re-checks every lease.
    void CancelLocal(const std::string& task_id);

    // Stop stops claiming, waits up to `grace` for running tasks, cancels the rest, puts their
    // tasks back in the queue and joins every thread.
    void Stop(std::chrono::milliseconds grace);
    // The same, letting running tasks finish until `deadline` (which another thread may cut).
    void Stop(const core::Deadline& deadline);

    // Running returns the number of tasks running here now.
    int Running() const;

    // Abandoned counts the runs that ended without recording their task because its lease was
    // lost (cancelled through the API, or taken over after this node stalled) since Start.
    std::uint64_t Abandoned() const { return abandoned_.load(); }

  private:
    void WorkerMain();
    void RunTask(const store::ClaimedTask& task);
    void HeartbeatMain();
    void SweepMain();
    void Heartbeat();
    void Sleep(std::chrono::milliseconds d);
    // RunProvider runs `provider` on `ctx`, counting the run by provider and outcome
    // (genhost_provider_runs_total, genhost_provider_run_duration_seconds).
    std::vector<providers::Output> RunProvider(const std::string& name,
                                               providers::Provider& provider,
                                               providers::TaskContext& ctx);
    // Ended logs a run's end (an info event line) and counts it by model.
    void Ended(const store::ClaimedTask& task, std::string_view outcome,
               std::string_view failure_code, double seconds);

    WorkerOptions options_;
    store::TaskRepo& repo_;
    const catalog::Catalog& catalog_;
    std::map<std::string, providers::Provider*> providers_;
    outputs::OutputStore& store_;
    ConcurrencyLimitFn limit_;
    metrics::Family* finished_ = nullptr;
    metrics::Family* durations_ = nullptr;
    metrics::Family* failures_ = nullptr;
    metrics::Family* provider_runs_ = nullptr;
    metrics::Family* provider_durations_ = nullptr;

    std::atomic<bool> stop_claiming_{false};
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> abandoned_{0};
    mutable std::mutex mu_;
    std::condition_variable wake_cv_;
    std::condition_variable sleep_cv_;
    std::uint64_t wake_count_ = 0;
    LeasedRuns runs_;  // the tasks running here, by id
    std::vector<std::thread> threads_;
};

}  // namespace genhost::tasks
