#include "genhost/tasks/worker_pool.hpp"

#include "genhost/core/clock.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/core/logging.hpp"
#include "genhost/core/memory.hpp"
#include "genhost/store/database.hpp"

#include <spdlog/spdlog.h>

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace genhost::tasks {

WorkerPool::WorkerPool(WorkerOptions options, store::TaskRepo& repo,
                       const catalog::Catalog& catalog,
                       std::map<std::string, providers::Provider*> providers,
                       outputs::OutputStore& store, ConcurrencyLimitFn limit)
    : options_(std::move(options)),
      repo_(repo),
      catalog_(catalog),
      providers_(std::move(providers)),
      store_(store),
      limit_(std::move(limit)) {
    if (options_.metrics != nullptr) {
        finished_ = &options_.metrics->Counter(
            "genhost_tasks_finished_total",
            "Task runs of this process by model and outcome (SUCCEEDED, FAILED, CANCELLED, "
            "REQUEUED by a shutdown, ABANDONED when the lease was lost).",
            {"model", "status"});
        durations_ = &options_.metrics->Histogram(
            "genhost_task_duration_seconds",
            "Time from a run's claim to its end, by model (successful runs).", {"model"},
            metrics::kTaskSecondsBuckets);
        failures_ = &options_.metrics->Counter("genhost_task_failures_total",
                                               "Failed task runs by model and failureCode.",
                                               {"model", "code"});
        provider_runs_ = &options_.metrics->Counter(
            "genhost_provider_runs_total",
            "Runs handed to a provider (builtin, or a GENHOST_PROVIDERS_FILE name) by outcome: "
            "succeeded, failed (a failureCode), cancelled, or error (an unexpected exception).",
            {"provider", "outcome"});
        provider_durations_ = &options_.metrics->Histogram(
            "genhost_provider_run_duration_seconds",
            "Time a provider took to make a task's outputs, by provider (every outcome).",
            {"provider"}, metrics::kTaskSecondsBuckets);
    }
}

std::vector<providers::Output> WorkerPool::RunProvider(const std::string& name,
                                                       providers::Provider& provider,
                                                       providers::TaskContext& ctx) {
    const auto started = std::chrono::steady_clock::now();
    const auto count = [&](std::string_view outcome) {
        if (provider_runs_ == nullptr) return;
        provider_runs_->Inc({name, outcome});
        provider_durations_->Observe(
            {name},
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    };
    try {
        auto outputs = provider.Run(ctx);
        count("succeeded");
        return outputs;
    } catch (const providers::Cancelled&) {
        count("cancelled");
        throw;
    } catch (const providers::TaskFailure&) {
        count("failed");
        throw;
    } catch (...) {
        count("error");
        throw;
    }
}

void WorkerPool::Ended(const store::ClaimedTask& task, std::string_view outcome,
                       std::string_view failure_code, double seconds) {
    if (finished_ != nullptr) {
        finished_->Inc({task.model, outcome});
        if (outcome == "SUCCEEDED") durations_->Observe({task.model}, seconds);
        if (outcome == "FAILED") failures_->Inc({task.model, failure_code});
    }
    if (const auto events = EventLogger(); events->should_log(spdlog::level::info)) {
        events->info(
            R"({{"ts":"{}","level":"info","logger":"task","event":"end","task":"{}","model":"{}","attempt":{},"outcome":"{}","failure_code":"{}","duration_ms":{:.1f}}})",
            FormatTimestamp(SystemClock::Instance().Now()), task.id, JsonEscape(task.model),
            task.attempts, outcome, JsonEscape(failure_code), seconds * 1000);
    }
}

WorkerPool::~WorkerPool() { Stop(std::chrono::milliseconds(0)); }

void WorkerPool::Start() {
    for (int i = 0; i < options_.workers; ++i) threads_.emplace_back([this] { WorkerMain(); });
    if (options_.workers > 0) threads_.emplace_back([this] { HeartbeatMain(); });
    threads_.emplace_back([this] { SweepMain(); });
}

void WorkerPool::Wake() {
    {
        std::lock_guard lock(mu_);
        ++wake_count_;
    }
    wake_cv_.notify_one();
}

void WorkerPool::CancelLocal(const std::string& task_id) {
    if (task_id.empty()) {
        Heartbeat();
        return;
    }
    runs_.Lose(task_id);
}

int WorkerPool::Running() const { return static_cast<int>(runs_.Count()); }

void WorkerPool::Sleep(std::chrono::milliseconds d) {
    std::unique_lock lock(mu_);
    sleep_cv_.wait_for(lock, d, [this] { return stop_.load(); });
}

namespace {

// FinalCost is what a SUCCEEDED task is charged when that is less than its reservation: a
// `duration: "auto"` request is reserved at the model's longest duration (LIMITS_AND_PRICES.md)
// and the builtin pipelines make the catalog's default duration, so it is priced again at that
// length. nullopt: the reservation stands (the ledger settles, migration 0014).
std::optional<std::int64_t> FinalCost(const catalog::Catalog& catalog,
                                      const store::ClaimedTask& task,
                                      const nlohmann::json& request) {
    const auto duration = request.find("duration");
    if (duration == request.end() || !duration->is_string() || *duration != "auto") {
        return std::nullopt;
    }
    try {
        nlohmann::json input = request;
        const auto* model = catalog.FindModel(task.model);
        if (model == nullptr) return std::nullopt;
        const auto durations =
            model->CapabilitiesFor(task.endpoint).value("durations", nlohmann::json::object());
        const auto made = durations.find("default");
        if (made == durations.end() || !made->is_number()) return std::nullopt;
        input["duration"] = *made;
        return store::ReservedCredits(catalog.EstimateCredits(task.endpoint, input));
    } catch (const std::exception& e) {
        spdlog::warn("task {}: final cost not computed: {}", task.id, e.what());
        return std::nullopt;
    }
}

// LowerThreadPriority gives the calling thread (Linux: nice and policy are per thread) and every
// thread it starts later the nice value `nice` under SCHED_BATCH, which also stops it from
// preempting the I/O threads on wake-up. Lowering needs no privilege; failures are logged.
void LowerThreadPriority(int nice) {
    if (nice <= 0) return;
    const auto tid = static_cast<id_t>(syscall(SYS_gettid));
    sched_param param{};
    if (sched_setscheduler(0, SCHED_BATCH, &param) != 0) {
        spdlog::debug("worker thread: SCHED_BATCH refused (errno {})", errno);
    }
    if (setpriority(PRIO_PROCESS, tid, nice) != 0) {
        spdlog::warn("worker thread: cannot set nice {} (errno {})", nice, errno);
    }
}

}  // namespace

void WorkerPool::WorkerMain() {
    LowerThreadPriority(options_.nice);
    auto backoff = std::chrono::milliseconds(100);
    while (!stop_claiming_) {
        std::optional<store::ClaimedTask> task;
        std::uint64_t seen = 0;
        {
            std::lock_guard lock(mu_);
            seen = wake_count_;
        }
        try {
            task = repo_.ClaimSync(options_.owner, options_.lease_seconds);
            backoff = std::chrono::milliseconds(100);
        } catch (const store::DatabaseUnavailable&) {
            Sleep(backoff);
            backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
            continue;
        } catch (const std::exception& e) {
            spdlog::error("claiming a task failed: {}", e.what());
            Sleep(std::chrono::milliseconds(1000));
            continue;
        }
        if (!task) {
            std::unique_lock lock(mu_);
            wake_cv_.wait_for(lock, options_.poll_interval,
                              [&] { return stop_claiming_.load() || wake_count_ != seen; });
            continue;
        }
        RunTask(*task);
        // What the pipeline freed stays resident in this thread's arena otherwise (a 9 s 720p
        // video_to_video left the process at about 390 MB instead of 160 MB; docs/performance.md).
        const auto trimmed_in = ReleaseFreeMemory();
        spdlog::debug("task {}: free memory released in {} us", task->id, trimmed_in.count());
        // Another task may be waiting: let the next idle worker look too.
        wake_cv_.notify_one();
    }
}

void WorkerPool::RunTask(const store::ClaimedTask& task) {
    const auto job = runs_.Begin(task.id);
    const auto started = std::chrono::steady_clock::now();
    if (const auto events = EventLogger(); events->should_log(spdlog::level::info)) {
        events->info(
            R"({{"ts":"{}","level":"info","logger":"task","event":"start","task":"{}","model":"{}","endpoint":"{}","attempt":{}}})",
            FormatTimestamp(SystemClock::Instance().Now()), task.id, JsonEscape(task.model),
            JsonEscape(task.endpoint), task.attempts);
    }

    // The end to record: SUCCEEDED or FAILED, nothing when cancelled.
    std::optional<store::TaskStatus> status = store::TaskStatus::kSucceeded;
    std::string failure;
    std::string failure_code;
    std::vector<std::string> names;
    // Output names carry a random part so a late, losing attempt never touches the objects of
    // the attempt that won.
    const std::string prefix = HexEncode(RandomBytes(4)) + "_";
    // A private scratch folder for this run: inputs and large outputs live there until the
    // outputs are stored; it is removed whatever happens.
    const std::string scratch = options_.scratch_root.empty()
                                    ? std::string()
                                    : options_.scratch_root + "/" + task.id + "_" + prefix;
    struct ScratchGuard {
        std::string path;
        ~ScratchGuard() {
            if (path.empty()) return;
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    } scratch_guard{scratch};
    if (!scratch.empty()) std::filesystem::create_directories(scratch);

    auto last_progress = std::chrono::steady_clock::time_point{};
    auto progress = [&](double fraction) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_progress < std::chrono::milliseconds(500) && fraction < 1.0) return;
        last_progress = now;
        try {
            if (!repo_.SetProgressSync(task.id, options_.owner, std::clamp(fraction, 0.0, 1.0))) {
                job->lost = true;
            }
        } catch (const std::exception& e) {
            spdlog::warn("task {}: progress not recorded: {}", task.id, e.what());
        }
    };

    std::optional<std::int64_t> cost;
    try {
        // Parsed once: moderation, the provider and the final price all read it.
        nlohmann::json input = nlohmann::json::parse(task.input_json);
        if (options_.moderation != nullptr) {
            if (auto hit = options_.moderation->Check(input)) {
                spdlog::info("task {} refused by moderation: {} in {}", task.id, hit->category,
                             hit->field);
                throw providers::TaskFailure(hit->code, hit->message);
            }
        }
        const auto* model = catalog_.FindModel(task.model);
        const std::string provider_name = model ? model->provider : "builtin";
        const auto it = providers_.find(provider_name);
        if (it == providers_.end()) {
            throw providers::TaskFailure("INTERNAL",
                                         "No provider named " + provider_name + " is configured");
        }
        providers::TaskContext ctx(task.id, task.endpoint, task.model, std::move(input), job->lost,
                                   progress, scratch, options_.inputs);
        auto outputs = RunProvider(provider_name, *it->second, ctx);
        ctx.CheckCancelled();
        cost = FinalCost(catalog_, task, ctx.input());
        for (const auto& out : outputs) {
            const std::string name = "output_" + prefix + out.suffix;
            if (out.file.empty()) {
                store_.Put(task.id, name, out.data);
            } else {
                store_.PutFile(task.id, name, out.file);
            }
            names.push_back(name);
            ctx.CheckCancelled();
        }
    } catch (const providers::Cancelled&) {
        status.reset();
    } catch (const providers::TaskFailure& e) {
        status = store::TaskStatus::kFailed;
        failure = e.what();
        failure_code = e.code();
    } catch (const std::exception& e) {
        spdlog::error("task {} failed inside its pipeline: {}", task.id, e.what());
        status = store::TaskStatus::kFailed;
        failure = "An internal error occurred while generating.";
        failure_code = "INTERNAL";
    }

    bool recorded = false;
    job->finishing = true;
    if (status != store::TaskStatus::kSucceeded) cost.reset();
    if (status) {
        if (*status != store::TaskStatus::kSucceeded) names.clear();
        // The database may be briefly away: keep trying while the lease can still be ours.
        const auto give_up = std::chrono::steady_clock::now() +
                             std::chrono::duration<double>(options_.lease_seconds);
        for (;;) {
            try {
                recorded = repo_.FinishSync(task.id, options_.owner, *status, names, failure,
                                            failure_code, cost);
                break;
            } catch (const std::exception& e) {
                if (std::chrono::steady_clock::now() > give_up || stop_) break;
                spdlog::warn("task {}: finishing failed, retrying: {}", task.id, e.what());
                Sleep(std::chrono::milliseconds(500));
            }
        }
    }
    if (!recorded) {
        for (const auto& name : names) store_.DeleteObject(task.id, name);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (recorded) {
        Ended(task, store::TaskStatusName(*status), failure_code, seconds);
    } else if (!status) {
        Ended(task, "CANCELLED", "", seconds);
    } else if (stop_) {
        Ended(task, "REQUEUED", "", seconds);
        spdlog::info("task {} attempt {} stopped by the shutdown; it goes back to the queue",
                     task.id, task.attempts);
    } else {
        // The lease was lost (cancelled, or another node took the task over): nothing of this run
        // is kept. ++abandoned_ makes it countable (Abandoned, /metrics).
        ++abandoned_;
        Ended(task, "ABANDONED", "", seconds);
        spdlog::info("task {} attempt {} abandoned: its lease was lost", task.id, task.attempts);
    }
    runs_.End(task.id, job);
}

void WorkerPool::Heartbeat() {
    try {
        runs_.Heartbeat(
            [&](const std::vector<std::string>&) {
                return repo_.HeartbeatSync(options_.owner, options_.lease_seconds);
            },
            [](const std::string& id) {
                // Cancelled through the API, or re-queued after this node stalled.
                spdlog::info("task {}: its lease is no longer held here; stopping its run", id);
            });
    } catch (const std::exception& e) {
        spdlog::warn("lease heartbeat failed: {}", e.what());
    }
}

void WorkerPool::HeartbeatMain() {
    const auto interval =
        std::chrono::milliseconds(static_cast<long>(options_.lease_seconds * 1000 / 3));
    while (!stop_) {
        Sleep(interval);
        if (stop_) break;
        Heartbeat();
    }
}

void WorkerPool::SweepMain() {
    while (!stop_) {
        try {
            repo_.RequeueExpiredSync(options_.max_attempts);
            for (const auto& group : repo_.ThrottledGroupsSync()) {
                repo_.PromoteSync(group.org_id, group.limit_key, limit_(group.tier, group.model));
            }
        } catch (const store::DatabaseUnavailable&) {
            // The database is away; the next sweep tries again.
        } catch (const std::exception& e) {
            spdlog::warn("queue sweep failed: {}", e.what());
        }
        Sleep(options_.sweep_interval);
    }
}

void WorkerPool::Stop(std::chrono::milliseconds grace) { Stop(core::Deadline(grace)); }

void WorkerPool::Stop(const core::Deadline& deadline) {
    if (threads_.empty()) return;
    stop_claiming_ = true;
    wake_cv_.notify_all();
    while (Running() > 0 && !deadline.Passed()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    runs_.LoseAll();
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    sleep_cv_.notify_all();
    wake_cv_.notify_all();
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    threads_.clear();
    try {
        const int released = repo_.ReleaseOwnedSync(options_.owner);
        if (released > 0) spdlog::info("released {} task lease(s) back to the queue", released);
    } catch (const std::exception& e) {
        spdlog::warn("could not release leases (they expire by themselves): {}", e.what());
    }
}

}  // namespace genhost::tasks
