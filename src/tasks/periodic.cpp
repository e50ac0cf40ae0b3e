#include "genhost/tasks/periodic.hpp"

#include "genhost/store/database.hpp"

#include <spdlog/spdlog.h>

namespace genhost::tasks {

Periodic::Periodic(std::string name, std::chrono::milliseconds interval, std::function<void()> run)
    : name_(std::move(name)), interval_(interval), run_(std::move(run)) {}

Periodic::~Periodic() { Stop(); }

void Periodic::Start() {
    thread_ = std::thread([this] { Main(); });
}

void Periodic::Stop() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Periodic::Kick() {
    {
        std::lock_guard lock(mu_);
        kicked_ = true;
    }
    cv_.notify_all();
}

void Periodic::Main() {
    for (;;) {
        try {
            run_();
        } catch (const store::DatabaseUnavailable&) {
            // The database is away; the next run tries again.
        } catch (const std::exception& e) {
            spdlog::warn("{} failed: {}", name_, e.what());
        }
        std::unique_lock lock(mu_);
        if (cv_.wait_for(lock, interval_, [this] { return stop_ || kicked_; }) && stop_) return;
        kicked_ = false;
    }
}

}  // namespace genhost::tasks
