#include "genhost/tasks/retention_sweeper.hpp"

#include <spdlog/spdlog.h>

namespace genhost::tasks {

RetentionSweeper::RetentionSweeper(RetentionOptions options, store::TaskRepo& repo,
                                   outputs::OutputStore& outputs)
    : options_(options), repo_(repo), outputs_(outputs) {}

int RetentionSweeper::SweepOnce() {
    if (options_.retention.count() <= 0) return 0;
    const auto seconds = static_cast<double>(options_.retention.count());
    int deleted = 0;
    for (;;) {
        const auto ids = repo_.RetiredSync(seconds, options_.batch);
        std::vector<std::string> gone;
        for (const auto& id : ids) {
            try {
                outputs_.DeleteTask(id);
                gone.push_back(id);
            } catch (const std::exception& e) {
                // The row stays, so the next sweep tries this task's outputs again.
                spdlog::warn("deleting the outputs of task {} failed: {}", id, e.what());
            }
        }
        deleted += repo_.DeleteRetiredSync(gone, seconds);
        if (static_cast<int>(ids.size()) < options_.batch || gone.empty()) break;
    }
    if (deleted > 0) {
        spdlog::info("deleted {} task(s) past their retention, with their outputs", deleted);
    }
    return deleted;
}

}  // namespace genhost::tasks
