#include "genhost/core/memory.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace genhost {

std::chrono::microseconds ReleaseFreeMemory() {
    const auto started = std::chrono::steady_clock::now();
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                 started);
}

MemoryTrimmer::MemoryTrimmer(std::chrono::milliseconds spacing)
    : spacing_(spacing), thread_([this] { Main(); }) {}

MemoryTrimmer::~MemoryTrimmer() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void MemoryTrimmer::Request() {
    {
        std::lock_guard lock(mu_);
        if (requested_) return;
        requested_ = true;
    }
    cv_.notify_one();
}

std::uint64_t MemoryTrimmer::Trims() const {
    std::lock_guard lock(mu_);
    return trims_;
}

void MemoryTrimmer::Main() {
    std::unique_lock lock(mu_);
    for (;;) {
        cv_.wait(lock, [this] { return requested_ || stop_; });
        if (stop_) return;
        requested_ = false;
        lock.unlock();
        ReleaseFreeMemory();
        lock.lock();
        ++trims_;
        // Spacing: what is asked meanwhile waits for the next trim.
        cv_.wait_for(lock, spacing_, [this] { return stop_; });
    }
}

}  // namespace genhost
