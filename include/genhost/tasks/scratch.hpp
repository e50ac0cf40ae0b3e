// genhost/tasks/scratch.hpp
//
// Provides ScratchSpace: this process's private scratch folder under the node's scratch root, and
// the sweep that removes the scratch of processes that are gone.
//
// A process that runs work (task pipelines, avatar processing) owns `<root>/<token>/`, and holds
// an exclusive flock(2) on `<root>/<token>.lock` for as long as it lives: the kernel drops that
// lock when the process ends, however it ends (SIGKILL, a crash, the machine's power), so the lock
// is the folder's lease. Runs make their folders inside the process's folder and remove them when
// they end. Sweep removes everything in the root that no live process's lock covers: the folder
// of a process that died in the middle of a video with its intermediate files, folders of older
// layouts, and stray files. Every node sweeps at start and then every few minutes; processes that
// share a scratch root (several on one host) never remove each other's live folders.
//
// The lock file is created under a temporary name, locked, and only then renamed into place, so a
// sweep never sees a `.lock` that is not yet locked.
#pragma once

#include <filesystem>
#include <string>

namespace genhost::tasks {

class ScratchSpace {
  public:
    // Claims a new folder for this process under `root` (created if needed); `token` names it
    // (only letters, digits, '-' and '_' are kept). Throws std::runtime_error when the root cannot
    // be written or locked.
    ScratchSpace(std::filesystem::path root, const std::string& token);
    // Removes this process's folder and lock.
    ~ScratchSpace();
    ScratchSpace(const ScratchSpace&) = delete;
    ScratchSpace& operator=(const ScratchSpace&) = delete;

    // Path is this process's folder: runs make their own folders inside it.
    const std::filesystem::path& Path() const { return path_; }

    // Sweep removes every entry of the root that no live process holds and returns how many it
    // removed. Never throws (failures are logged).
    int Sweep() const;

  private:
    std::filesystem::path root_;
    std::filesystem::path path_;
    std::filesystem::path lock_path_;
    int lock_fd_ = -1;
};

}  // namespace genhost::tasks
