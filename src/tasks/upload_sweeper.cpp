#include "genhost/tasks/upload_sweeper.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace genhost::tasks {

UploadSweeper::UploadSweeper(UploadSweeperOptions options, store::UploadRepo& repo,
                             const outputs::UploadFolder& folder)
    : options_(options), repo_(repo), folder_(folder) {}

int UploadSweeper::SweepOnce() {
    int deleted = 0;
    for (;;) {
        const auto ids = repo_.DeleteExpiredSync(options_.batch);
        for (const auto& id : ids) folder_.Remove(id);
        deleted += static_cast<int>(ids.size());
        if (static_cast<int>(ids.size()) < options_.batch) break;
    }
    return deleted;
}

int UploadSweeper::RemoveOrphansOnce() {
    const auto cutoff = std::filesystem::file_time_type::clock::now() - options_.orphan_min_age;
    std::vector<std::string> candidates;
    for (const auto& file : folder_.List()) {
        if (file.modified < cutoff) candidates.push_back(file.upload_id);
    }
    int removed = 0;
    constexpr std::size_t kChunk = 500;
    for (std::size_t first = 0; first < candidates.size(); first += kChunk) {
        const std::vector<std::string> chunk(
            candidates.begin() + static_cast<std::ptrdiff_t>(first),
            candidates.begin() +
                static_cast<std::ptrdiff_t>(std::min(first + kChunk, candidates.size())));
        const auto existing = repo_.ExistingSync(chunk);
        for (const auto& id : chunk) {
            if (std::find(existing.begin(), existing.end(), id) != existing.end()) continue;
            folder_.Remove(id);
            ++removed;
        }
    }
    return removed;
}

void UploadSweeper::Run() {
    if (const int n = SweepOnce(); n > 0) spdlog::info("deleted {} expired upload(s)", n);
    if (std::chrono::steady_clock::now() >= next_orphan_scan_) {
        next_orphan_scan_ = std::chrono::steady_clock::now() + options_.orphan_scan_interval;
        if (const int n = RemoveOrphansOnce(); n > 0) {
            spdlog::info("removed {} orphaned upload file(s)", n);
        }
    }
}

}  // namespace genhost::tasks
