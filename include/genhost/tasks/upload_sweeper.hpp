// genhost/tasks/upload_sweeper.hpp
//
// Provides UploadSweeper, the background job that deletes expired ephemeral uploads: every
// `interval` it deletes expired upload rows in batches (UploadRepo::DeleteExpiredSync, so several
// nodes sweeping at once each take different rows) and then their files. Every
// `orphan_scan_interval` it also removes files of the upload folder that are older than
// `orphan_min_age` and have no row any more (left behind when a process died between deleting a
// row and its file). Every node runs one; it has its own thread.
#pragma once

#include "genhost/outputs/upload_folder.hpp"
#include "genhost/store/uploads_repo.hpp"
#include "genhost/tasks/periodic.hpp"

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
    ~UploadSweeper();
    UploadSweeper(const UploadSweeper&) = delete;
    UploadSweeper& operator=(const UploadSweeper&) = delete;

    // Start launches the thread (it sweeps at once, then every interval).
    void Start();

    // Stop ends the thread; safe to call twice.
    void Stop();

    // SweepOnce deletes every expired upload and its files now; returns how many it deleted.
    // Throws what the repository throws.
    int SweepOnce();

    // RemoveOrphansOnce removes the orphaned files described above; returns how many.
    int RemoveOrphansOnce();

  private:
    void Run();

    UploadSweeperOptions options_;
    store::UploadRepo& repo_;
    const outputs::UploadFolder& folder_;
    std::chrono::steady_clock::time_point next_orphan_scan_{};
    Periodic periodic_;
};

}  // namespace genhost::tasks
