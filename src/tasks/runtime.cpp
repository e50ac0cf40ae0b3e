#include "genhost/tasks/runtime.hpp"

#include "genhost/store/database.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

namespace genhost::tasks {

namespace {

std::chrono::steady_clock::duration Third(double lease_seconds) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(lease_seconds / 3));
}

}  // namespace

Runtime::Runtime(store::JobRepo& repo, std::string owner) : repo_(repo), owner_(std::move(owner)) {}

Runtime::~Runtime() { Stop(core::Deadline(std::chrono::milliseconds(0))); }

void Runtime::AddLane(LaneOptions options) {
    if (started_) throw std::logic_error("lane " + options.name + " declared after Start");
    const std::string name = options.name;
    if (!lanes_.emplace(name, Lane{std::move(options), {}, nullptr}).second) {
        throw std::logic_error("lane " + name + " declared twice");
    }
}

void Runtime::AddKind(const std::string& lane, const std::string& kind, JobKind handler) {
    if (started_) throw std::logic_error("job kind " + kind + " added after Start");
    const auto it = lanes_.find(lane);
    if (it == lanes_.end()) throw std::logic_error("job kind " + kind + ": no lane " + lane);
    for (const auto& [name, other] : lanes_) {
        if (other.kinds.count(kind) != 0) {
            throw std::logic_error("job kind " + kind + " is served by lanes " + name + " and " +
                                   lane);
        }
    }
    it->second.kinds.emplace(kind, std::move(handler));
}

std::function<void()> Runtime::Kicker(const std::string& lane) {
    const auto it = lanes_.find(lane);
    if (it == lanes_.end()) throw std::logic_error("no lane " + lane + " to kick");
    Lane* l = &it->second;
    return [l] {
        if (l->engine) l->engine->Kick();
    };
}

void Runtime::KickAll() {
    for (auto& [name, lane] : lanes_) {
        if (lane.engine) lane.engine->Kick();
    }
}

void Runtime::Every(std::string name, std::chrono::milliseconds interval,
                    std::function<void()> run) {
    if (started_) throw std::logic_error("schedule " + name + " added after Start");
    schedules_.push_back({std::move(name), interval, std::move(run), {}});
}

void Runtime::AddUnit(Unit unit) {
    if (started_) throw std::logic_error("unit " + unit.name + " added after Start");
    units_.push_back(std::move(unit));
}

std::vector<EngineKinds> Runtime::Lanes() const {
    std::vector<EngineKinds> out;
    for (const auto& [name, lane] : lanes_) {
        EngineKinds kinds{name, {}};
        for (const auto& [kind, handler] : lane.kinds) {
            kinds.kinds[kind] = static_cast<bool>(handler.run);
        }
        out.push_back(std::move(kinds));
    }
    return out;
}

JobEngine::Counts Runtime::LaneCounts(const std::string& lane) const {
    const auto it = lanes_.find(lane);
    if (it == lanes_.end() || !it->second.engine) return {};
    return it->second.engine->counts();
}

void Runtime::Start() {
    if (started_) return;
    started_ = true;
    for (auto& [name, lane] : lanes_) {
        if (lane.kinds.empty()) continue;
        JobEngineOptions o;
        o.owner = owner_;
        o.runners = lane.options.runners;
        o.lease_seconds = lane.options.lease_seconds;
        o.max_attempts = lane.options.max_attempts;
        o.poll = lane.options.poll;
        o.retry_base = lane.options.retry_base;
        o.own_heartbeat = false;
        lane.engine = std::make_unique<JobEngine>(o, repo_, lane.kinds);
        lane.engine->Start();
    }
    for (auto& unit : units_) {
        if (unit.start) unit.start();
    }
    if (std::any_of(lanes_.begin(), lanes_.end(),
                    [](const auto& l) { return !!l.second.engine; })) {
        heartbeat_ = std::thread([this] { HeartbeatMain(); });
    }
    if (!schedules_.empty()) scheduler_ = std::thread([this] { ScheduleMain(); });
}

void Runtime::HeartbeatMain() {
    std::map<std::string, std::chrono::steady_clock::time_point> due;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& [name, lane] : lanes_) {
        if (lane.engine) due[name] = now + Third(lane.options.lease_seconds);
    }
    for (;;) {
        auto next = std::chrono::steady_clock::time_point::max();
        for (const auto& [name, at] : due) next = std::min(next, at);
        {
            std::unique_lock lock(mu_);
            if (wake_.wait_until(lock, next, [this] { return stop_heartbeat_; })) return;
        }
        for (auto& [name, at] : due) {
            if (std::chrono::steady_clock::now() < at) continue;
            Lane& lane = lanes_.at(name);
            lane.engine->Heartbeat();  // logs its own failures
            at = std::chrono::steady_clock::now() + Third(lane.options.lease_seconds);
        }
    }
}

void Runtime::ScheduleMain() {
    for (auto& s : schedules_) s.due = std::chrono::steady_clock::now();
    for (;;) {
        for (auto& s : schedules_) {
            if (std::chrono::steady_clock::now() < s.due) continue;
            {
                std::lock_guard lock(mu_);
                if (stop_) return;
            }
            try {
                s.run();
            } catch (const store::DatabaseUnavailable&) {
                // The database is away; the next run tries again.
            } catch (const std::exception& e) {
                spdlog::warn("{} failed: {}", s.name, e.what());
            }
            s.due = std::chrono::steady_clock::now() + s.interval;
        }
        auto next = std::chrono::steady_clock::time_point::max();
        for (const auto& s : schedules_) next = std::min(next, s.due);
        std::unique_lock lock(mu_);
        if (wake_.wait_until(lock, next, [this] { return stop_; })) return;
    }
}

void Runtime::Stop(const core::Deadline& deadline) {
    {
        std::lock_guard lock(mu_);
        if (stop_ || !started_) {
            stop_ = true;
            return;
        }
        stop_ = true;
    }
    wake_.notify_all();
    if (scheduler_.joinable()) scheduler_.join();
    // No lane takes new work while the units drain; the heartbeat goes on until the lanes stop.
    for (auto& [name, lane] : lanes_) {
        if (lane.engine) lane.engine->StopClaiming();
    }
    for (auto& unit : units_) {
        if (unit.stop) unit.stop(deadline);
    }
    const core::Deadline now(std::chrono::milliseconds(0));
    for (auto& [name, lane] : lanes_) {
        if (lane.engine && !lane.options.stop_at_once) lane.engine->Stop(deadline);
    }
    for (auto& [name, lane] : lanes_) {
        if (lane.engine && lane.options.stop_at_once) lane.engine->Stop(now);
    }
    {
        std::lock_guard lock(mu_);
        stop_heartbeat_ = true;
    }
    wake_.notify_all();
    if (heartbeat_.joinable()) heartbeat_.join();
}

}  // namespace genhost::tasks
