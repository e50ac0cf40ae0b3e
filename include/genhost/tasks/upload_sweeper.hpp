// genhost/tasks/upload_sweeper.hpp
//
// Provides UploadSweeper, the background job that deletes expired ephemeral uploads: every
// `interval` it deletes expired upload rows in batches (UploadRepo::DeleteExpiredSync, so several
// nodes sweeping at once each take different rows) and then their files. Every
// `orphan_scan_interval` it also removes files of the upload folder that are older than
// `orphan_min_age` and have no row any more (left behind when a process died between deleting a
// row and its file). Every node runs it on its runtime's schedule (tasks/runtime.hpp).
#pragma once

#include "genhost/outputs/upload_folder.hpp"
#include "genhost/store/uploads_repo.hpp"

#include <chrono>

namespace genhost::tasks {

struct UploadSweeperOptions {
    std::chrono::milliseconds interval{60000};
    std::chrono::milliseconds orphan_scan_interval{600000};
    std::chrono::seconds orphan_min_age{3600};
    int batch = 500;
};

class UploadSweeper {
  public:
    UploadSweeper(UploadSweeperOptions options, store::UploadRepo& repo,
                  const outputs::UploadFolder& folder);
    UploadSweeper(const UploadSweeper&) = delete;
    UploadSweeper& operator=(const UploadSweeper&) = delete;

    // Run is one scheduled run: SweepOnce, and RemoveOrphansOnce when its interval has passed
    // (at the first run, then every orphan_scan_interval). Throws what the repository throws.
    void Run();

    // SweepOnce deletes every expired upload and its files now; returns how many it deleted.
    // Throws what the repository throws.
    int SweepOnce();

    // RemoveOrphansOnce removes the orphaned files described above; returns how many.
    int RemoveOrphansOnce();

  private:
    UploadSweeperOptions options_;
    store::UploadRepo& repo_;
    const outputs::UploadFolder& folder_;
    std::chrono::steady_clock::time_point next_orphan_scan_{};
};

}  // namespace genhost::tasks
