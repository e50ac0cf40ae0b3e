#include "genhost/tasks/leased_runs.hpp"

#include <algorithm>

namespace genhost::tasks {

std::shared_ptr<LeasedRuns::Run> LeasedRuns::Begin(const std::string& key) {
    auto run = std::make_shared<Run>();
    std::lock_guard lock(mu_);
    runs_[key] = run;
    return run;
}

void LeasedRuns::End(const std::string& key, const std::shared_ptr<Run>& run) {
    std::lock_guard lock(mu_);
    const auto it = runs_.find(key);
    if (it != runs_.end() && it->second == run) runs_.erase(it);
}

std::size_t LeasedRuns::Count() const {
    std::lock_guard lock(mu_);
    return runs_.size();
}

void LeasedRuns::Lose(const std::string& key) {
    std::lock_guard lock(mu_);
    const auto it = runs_.find(key);
    if (it != runs_.end()) it->second->lost = true;
}

void LeasedRuns::LoseAll() {
    std::lock_guard lock(mu_);
    for (auto& [key, run] : runs_) run->lost = true;
}

void LeasedRuns::Heartbeat(
    const std::function<std::vector<std::string>(const std::vector<std::string>& keys)>& renew,
    const std::function<void(const std::string& key)>& on_lost) {
    // Taken before the statement is sent: only these runs are judged by its answer.
    std::vector<std::pair<std::string, std::shared_ptr<Run>>> judged;
    {
        std::lock_guard lock(mu_);
        judged.assign(runs_.begin(), runs_.end());
    }
    if (judged.empty()) return;
    std::vector<std::string> keys;
    for (const auto& [key, run] : judged) keys.push_back(key);
    std::vector<std::string> held = renew(keys);
    std::sort(held.begin(), held.end());
    for (const auto& [key, run] : judged) {
        if (run->finishing || std::binary_search(held.begin(), held.end(), key)) continue;
        if (!run->lost.exchange(true)) on_lost(key);
    }
}

}  // namespace genhost::tasks
