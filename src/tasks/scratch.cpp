#include "genhost/tasks/scratch.hpp"

#include "genhost/core/ids.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace genhost::tasks {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kLockSuffix = ".lock";
// A lock file being made (created, locked, not yet renamed) has this prefix; one left behind by
// a process that died in between is removed once it is older than a minute.
constexpr std::string_view kPendingPrefix = ".pending-";

std::string Clean(const std::string& token) {
    std::string out;
    for (const char c : token) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '_';
        out += keep ? c : '_';
    }
    return out.empty() ? std::string("node") : out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// RemoveAll removes `path` and what it holds; false (logged) when it could not.
bool RemoveAll(const fs::path& path) {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) {
        spdlog::warn("scratch sweep: cannot remove {}: {}", path.string(), ec.message());
        return false;
    }
    return true;
}

}  // namespace

ScratchSpace::ScratchSpace(fs::path root, const std::string& token) : root_(std::move(root)) {
    std::error_code ec;
    fs::create_directories(root_, ec);
    if (ec) throw std::runtime_error("cannot create " + root_.string() + ": " + ec.message());
    const std::string name = Clean(token) + "-" + NewUuid().substr(0, 8);
    path_ = root_ / name;
    lock_path_ = root_ / (name + std::string(kLockSuffix));
    const fs::path pending = root_ / (std::string(kPendingPrefix) + name);
    lock_fd_ = ::open(pending.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd_ < 0) {
        throw std::runtime_error("cannot create " + pending.string() + ": " + std::strerror(errno));
    }
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0 ||
        ::rename(pending.c_str(), lock_path_.c_str())) {
        const int err = errno;
        ::close(lock_fd_);
        ::unlink(pending.c_str());
        throw std::runtime_error("cannot lock " + lock_path_.string() + ": " + std::strerror(err));
    }
    fs::create_directories(path_, ec);
    if (ec) throw std::runtime_error("cannot create " + path_.string() + ": " + ec.message());
}

ScratchSpace::~ScratchSpace() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
    ::unlink(lock_path_.c_str());
    ::close(lock_fd_);
}

int ScratchSpace::Sweep() const {
    std::error_code ec;
    std::vector<fs::path> entries;
    for (auto it = fs::directory_iterator(root_, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
        entries.push_back(it->path());
    }
    if (ec) {
        spdlog::warn("scratch sweep: cannot list {}: {}", root_.string(), ec.message());
        return 0;
    }
    enum class Owner { kNone, kAlive, kGone };
    // Check looks at `owner`'s lock now (not as listed: it may have been made since); when its
    // process is gone it removes the folder and then, still holding the lock, the lock file.
    const auto check = [this](const std::string& owner) {
        const fs::path lock = root_ / (owner + std::string(kLockSuffix));
        const int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) return Owner::kNone;
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            ::close(fd);
            return Owner::kAlive;
        }
        if (RemoveAll(root_ / owner)) {
            ::unlink(lock.c_str());
            spdlog::info("scratch sweep: removed the scratch of a process that is gone ({})",
                         owner);
        }
        ::close(fd);
        return Owner::kGone;
    };
    int removed = 0;
    const auto now = fs::file_time_type::clock::now();
    for (const auto& entry : entries) {
        if (entry == path_ || entry == lock_path_) continue;
        const std::string name = entry.filename().string();
        if (EndsWith(name, kLockSuffix)) {
            removed += check(name.substr(0, name.size() - kLockSuffix.size())) == Owner::kGone;
            continue;
        }
        if (name.rfind(kPendingPrefix, 0) == 0) {
            // A lock file being made right now, or left by a process that died making it.
            const auto written = fs::last_write_time(entry, ec);
            if (ec || now - written < std::chrono::minutes(1)) continue;
            removed += RemoveAll(entry);
            continue;
        }
        // A process makes its lock before its folder, so a folder without a lock is nobody's.
        switch (check(name)) {
            case Owner::kAlive:
                break;
            case Owner::kGone:
                ++removed;
                break;
            case Owner::kNone: {
                std::error_code gone;
                if (fs::exists(entry, gone) && RemoveAll(entry)) {
                    ++removed;
                    spdlog::info("scratch sweep: removed {}, which no live process holds", name);
                }
                break;
            }
        }
    }
    return removed;
}

}  // namespace genhost::tasks
