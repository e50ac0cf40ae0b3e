// genhost/tasks/leased_runs.hpp
//
// Provides LeasedRuns: the runs of this process that hold a lease in the database (a task's, a
// background job's), by what they work on, and the one rule for judging them by a heartbeat. The
// worker pool and the job engine share it.
//
// A heartbeat renews this process's leases in one statement whose answer lists what it still
// holds. A run missing from that answer lost its lease (cancelled, changed, or taken over after
// this node stalled) and must stop, except:
// - a run that was not running yet when the statement was sent: its claim may have committed
//   while the statement ran, so the answer need not list it, yet its lease is held;
// - a run that is recording its end: its compare-and-set decides, and a finished subject is
//   missing from the answer because it is finished.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace genhost::tasks {

class LeasedRuns {
  public:
    struct Run {
        std::atomic<bool> lost{false};       // the lease is not this run's any more: stop
        std::atomic<bool> finishing{false};  // recording its end
    };

    // Begin adds a run on `key` (after its claim committed) and returns it.
    std::shared_ptr<Run> Begin(const std::string& key);
    // End removes `run` (if `key` is still it).
    void End(const std::string& key, const std::shared_ptr<Run>& run);

    std::size_t Count() const;
    // Lose marks the run on `key`, if any, lost; LoseAll every run.
    void Lose(const std::string& key);
    void LoseAll();

    // Heartbeat takes the runs running now; when there are any, it calls `renew` with their keys
    // (the statement, renewing those runs and answering the keys still held) and marks lost those
    // of them that are missing from its answer and not finishing, calling `on_lost` for each.
    // Throws what `renew` throws.
    void Heartbeat(
        const std::function<std::vector<std::string>(const std::vector<std::string>& keys)>& renew,
        const std::function<void(const std::string& key)>& on_lost);

  private:
    mutable std::mutex mu_;
    std::map<std::string, std::shared_ptr<Run>> runs_;
};

}  // namespace genhost::tasks
