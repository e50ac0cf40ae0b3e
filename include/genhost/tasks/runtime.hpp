// genhost/tasks/runtime.hpp
//
// Provides Runtime: the one background runtime of a genhost process (docs/architecture.md
// "Background runtime"). The features declare their background work to it before Start, and it
// starts, runs and stops all of it:
// - Lanes of background jobs, `{name, runners, lease, poll}` plus the kinds each serves: a
//   JobEngine per lane over the one claim, heartbeat and release of store::JobRepo. The runtime's
//   one heartbeat thread renews each lane's runs every third of that lane's lease, by kind,
//   subject and revision: never another lane's runs, though every lane of a node has the same
//   owner name. A kind is served by one lane only (CheckKinds).
// - Schedules: sweeps run every `interval` on the runtime's one schedule thread (a database
//   outage is skipped quietly until the next run; any other error is logged with the name).
// - Units: background work with a queue of its own (the task queue's WorkerPool, over the
//   `tasks` table with its tiers and concurrency slots), started and drained with the rest.
//
// Stop drains everything against one deadline: the schedules stop, every lane and unit stops
// taking work, the units and then the lanes wait for their runs until the deadline, and each
// lane puts back in the queue the runs it stopped. Lanes declared `stop_at_once` (realtime
// sessions, which end when their node stops) do not wait.
#pragma once

#include "genhost/core/deadline.hpp"
#include "genhost/store/jobs_repo.hpp"
#include "genhost/tasks/job_engine.hpp"
#include "genhost/tasks/job_kinds.hpp"

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

struct LaneOptions {
    std::string name;
    int runners = 1;                             // jobs of this lane run at once here
    double lease_seconds = 60;                   // renewed every third of it
    int max_attempts = 5;                        // runs of one revision before it fails
    std::chrono::milliseconds poll{2000};        // how often due jobs are looked for unkicked
    std::chrono::milliseconds retry_base{1000};  // the first retry's delay
    bool stop_at_once = false;                   // Stop does not wait for its runs
};

class Runtime {
  public:
    // `owner` is this process's lease owner name, shared by all its lanes.
    Runtime(store::JobRepo& repo, std::string owner);
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    const std::string& owner() const { return owner_; }

    // AddLane declares a lane; AddKind gives it a kind to serve. Both throw std::logic_error for
    // a lane declared twice, an unknown lane, a kind served twice, or after Start.
    void AddLane(LaneOptions options);
    void AddKind(const std::string& lane, const std::string& kind, JobKind handler);
    // Kicker returns a function that wakes the lane's idle runners (after a local write); it
    // does nothing before Start. KickAll wakes every lane (a `genhost_jobs` notification).
    std::function<void()> Kicker(const std::string& lane);
    void KickAll();

    // Every runs `run` at Start and then every `interval` on the schedule thread.
    void Every(std::string name, std::chrono::milliseconds interval, std::function<void()> run);

    struct Unit {
        std::string name;
        std::function<void()> start;
        std::function<void(const core::Deadline&)> stop;
    };
    void AddUnit(Unit unit);

    // Lanes answers each lane's kinds, each with whether it has a handler (CheckJobKinds,
    // job_kinds.hpp).
    std::vector<EngineKinds> Lanes() const;

    void Start();
    void Stop(const core::Deadline& deadline);

    // LaneCounts answers a lane's run counts (JobEngine::Counts); zero before Start.
    JobEngine::Counts LaneCounts(const std::string& lane) const;

  private:
    struct Lane {
        LaneOptions options;
        std::map<std::string, JobKind> kinds;
        std::unique_ptr<JobEngine> engine;
    };
    struct Schedule {
        std::string name;
        std::chrono::milliseconds interval;
        std::function<void()> run;
        std::chrono::steady_clock::time_point due;
    };
    void HeartbeatMain();
    void ScheduleMain();

    store::JobRepo& repo_;
    std::string owner_;
    std::map<std::string, Lane> lanes_;
    std::vector<Schedule> schedules_;
    std::vector<Unit> units_;
    bool started_ = false;

    std::mutex mu_;
    std::condition_variable wake_;
    bool stop_ = false;            // the schedules stop (the first step of Stop)
    bool stop_heartbeat_ = false;  // the heartbeat stops (the last: the lanes have stopped)
    std::thread heartbeat_;
    std::thread scheduler_;
};

}  // namespace genhost::tasks
