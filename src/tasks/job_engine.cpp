#include "genhost/tasks/job_engine.hpp"

#include "genhost/store/database.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

namespace genhost::tasks {

namespace {

std::string Key(const std::string& kind, const std::string& subject) {
    return kind + "/" + subject;
}

constexpr double kMaxRetryDelaySeconds = 300;

}  // namespace

JobEngine::JobEngine(JobEngineOptions options, store::JobRepo& repo,
                     std::map<std::string, JobKind> kinds)
    : options_(std::move(options)), repo_(repo), kinds_(std::move(kinds)) {
    for (const auto& [name, kind] : kinds_) kind_names_.push_back(name);
}

std::map<std::string, bool> JobEngine::HandledKinds() const {
    std::map<std::string, bool> out;
    for (const auto& [name, kind] : kinds_) out[name] = static_cast<bool>(kind.run);
    return out;
}

JobEngine::~JobEngine() { Stop(std::chrono::milliseconds(0)); }

void JobEngine::Start() {
    if (kinds_.empty() || !threads_.empty()) return;
    // One runner to begin with; each claim that leaves no runner free starts another, up to
    // options_.runners (Claimed), so an idle engine holds two threads, not runners + 1.
    std::lock_guard lock(mu_);
    // Without its own heartbeat (a Runtime drives Heartbeat), no thread is started for it.
    if (options_.own_heartbeat) threads_.emplace_back([this] { HeartbeatMain(); });
    threads_.emplace_back([this] { RunnerMain(); });
}

void JobEngine::StopClaiming() {
    {
        std::lock_guard lock(mu_);
        stop_claiming_ = true;
    }
    wake_.notify_all();
}

void JobEngine::Claimed() {
    std::lock_guard lock(mu_);
    ++busy_;
    // threads_: the runners and the heartbeat (when its own), once started (RunAvailable runs
    // without them).
    const int runners = static_cast<int>(threads_.size()) - (options_.own_heartbeat ? 1 : 0);
    if (threads_.empty() || stop_claiming_ || busy_ < runners ||
        runners >= std::max(options_.runners, 1)) {
        return;
    }
    threads_.emplace_back([this] { RunnerMain(); });
}

void JobEngine::Unclaimed() {
    std::lock_guard lock(mu_);
    --busy_;
}

void JobEngine::Kick() {
    {
        std::lock_guard lock(mu_);
        ++kicks_;
    }
    wake_.notify_all();
}

JobEngine::Counts JobEngine::counts() const {
    std::lock_guard lock(mu_);
    return counts_;
}

bool JobEngine::RunOne() {
    const auto claim = repo_.ClaimSync(options_.owner, kind_names_, options_.lease_seconds);
    if (!claim) return false;
    Claimed();
    struct Release {
        JobEngine* engine;
        ~Release() { engine->Unclaimed(); }
    } release{this};
    const auto it = kinds_.find(claim->kind);
    if (it == kinds_.end()) {  // cannot happen: only registered kinds are claimed
        repo_.RetrySync(*claim, options_.owner, 60,
                        "no handler for this kind on " + options_.owner);
        return true;
    }
    const JobKind& kind = it->second;
    const auto fail = [&](const std::string& reason) {
        if (repo_.FailSync(*claim, options_.owner, reason)) {
            spdlog::warn("job {}/{} revision {} failed: {}", claim->kind, claim->subject,
                         claim->revision, reason);
            if (kind.failed) kind.failed(*claim, reason);
            std::lock_guard lock(mu_);
            ++counts_.failed;
        }
    };
    if (claim->attempt > options_.max_attempts) {
        // Its runs kept dying (each claim after an expired lease counts one).
        fail("its runs stopped " + std::to_string(options_.max_attempts) +
             " times without an end (the process running it died)");
        return true;
    }
    const std::string key = Key(claim->kind, claim->subject);
    {
        std::lock_guard lock(mu_);
        claims_[key] = *claim;
    }
    const auto running = runs_.Begin(key);
    JobResult result;
    bool lost_database = false;
    try {
        result = kind.run(*claim, running->lost);
    } catch (const store::DatabaseUnavailable&) {
        lost_database = true;  // the lease runs out and the job is claimed again
    } catch (const std::exception& e) {
        spdlog::error("job {}/{} revision {}: {}", claim->kind, claim->subject, claim->revision,
                      e.what());
        result = JobResult::Retry(std::string("internal error: ") + e.what());
    }
    running->finishing = true;
    if (!lost_database) {
        try {
            if (running->lost) {
                std::lock_guard lock(mu_);
                ++counts_.lost;
            } else if (result.kind == JobResult::Kind::kDone) {
                if (repo_.CompleteSync(*claim, options_.owner)) {
                    std::lock_guard lock(mu_);
                    ++counts_.done;
                } else {
                    std::lock_guard lock(mu_);
                    ++counts_.lost;
                }
            } else if (result.kind == JobResult::Kind::kWait) {
                repo_.DeferSync(*claim, options_.owner, result.wait_seconds);
            } else if (result.kind == JobResult::Kind::kRetry &&
                       claim->attempt < options_.max_attempts) {
                const double delay =
                    std::min(kMaxRetryDelaySeconds,
                             std::chrono::duration<double>(options_.retry_base).count() *
                                 std::pow(2.0, claim->attempt - 1));
                if (repo_.RetrySync(*claim, options_.owner, delay, result.error)) {
                    spdlog::info("job {}/{} revision {} will run again in {} s: {}", claim->kind,
                                 claim->subject, claim->revision, delay, result.error);
                    std::lock_guard lock(mu_);
                    ++counts_.retried;
                }
            } else {
                fail(result.error);
            }
        } catch (const std::exception& e) {
            spdlog::warn("job {}/{}: its end was not recorded (the lease will expire): {}",
                         claim->kind, claim->subject, e.what());
        }
    }
    runs_.End(key, running);
    {
        std::lock_guard lock(mu_);
        if (const auto it = claims_.find(key); it != claims_.end() &&
                                               it->second.revision == claim->revision &&
                                               it->second.attempt == claim->attempt) {
            claims_.erase(it);
        }
    }
    return true;
}

int JobEngine::RunAvailable() {
    int ended = 0;
    while (RunOne()) ++ended;
    return ended;
}

void JobEngine::RunnerMain() {
    auto backoff = std::chrono::milliseconds(100);
    for (;;) {
        std::uint64_t seen = 0;
        {
            std::lock_guard lock(mu_);
            if (stop_claiming_) return;
            seen = kicks_;
        }
        bool ran = false;
        try {
            ran = RunOne();
            backoff = std::chrono::milliseconds(100);
        } catch (const store::DatabaseUnavailable&) {
            std::unique_lock lock(mu_);
            wake_.wait_for(lock, backoff, [this] { return stop_claiming_; });
            backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
            continue;
        } catch (const std::exception& e) {
            spdlog::error("claiming a job failed: {}", e.what());
        }
        if (ran) continue;
        std::unique_lock lock(mu_);
        wake_.wait_for(lock, options_.poll, [&] { return stop_claiming_ || kicks_ != seen; });
    }
}

void JobEngine::Heartbeat() {
    try {
        runs_.Heartbeat(
            [&](const std::vector<std::string>& keys) {
                std::vector<store::JobClaim> runs;
                {
                    std::lock_guard lock(mu_);
                    for (const auto& key : keys) {
                        if (const auto it = claims_.find(key); it != claims_.end()) {
                            runs.push_back(it->second);
                        }
                    }
                }
                std::vector<std::string> held;
                for (const auto& c :
                     repo_.HeartbeatSync(options_.owner, runs, options_.lease_seconds)) {
                    held.push_back(Key(c.kind, c.subject));
                }
                return held;
            },
            [](const std::string& key) {
                spdlog::info(
                    "job {}: no longer held here (changed, or taken over); stopping its "
                    "run",
                    key);
            });
    } catch (const std::exception& e) {
        spdlog::warn("job heartbeat failed: {}", e.what());
    }
}

void JobEngine::HeartbeatMain() {
    const auto interval =
        std::chrono::milliseconds(static_cast<long>(options_.lease_seconds * 1000 / 3));
    for (;;) {
        {
            std::unique_lock lock(mu_);
            if (wake_.wait_for(lock, interval, [this] { return stop_; })) return;
        }
        Heartbeat();
    }
}

void JobEngine::Stop(std::chrono::milliseconds grace) { Stop(core::Deadline(grace)); }

void JobEngine::Stop(const core::Deadline& deadline) {
    if (threads_.empty()) return;
    StopClaiming();
    while (runs_.Count() > 0 && !deadline.Passed()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // The runs stopped here: only these go back to the queue (a run that ends meanwhile records
    // its own end, and then the release, a compare-and-set on its revision, skips it).
    std::vector<store::JobClaim> stopped;
    {
        std::lock_guard lock(mu_);
        for (const auto& [key, claim] : claims_) stopped.push_back(claim);
    }
    runs_.LoseAll();
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    threads_.clear();
    try {
        const int released = repo_.ReleaseSync(options_.owner, stopped);
        if (released > 0) spdlog::info("released {} job(s) back to the queue", released);
    } catch (const std::exception& e) {
        spdlog::warn("could not release jobs (their leases expire by themselves): {}", e.what());
    }
}

}  // namespace genhost::tasks
