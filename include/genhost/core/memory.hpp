// genhost/core/memory.hpp
//
// ReleaseFreeMemory hands memory the allocator holds free back to the system. glibc keeps what
// a thread frees in that thread's arena; after a pipeline has decoded a large video (or a request
// has carried a 20 MB data URI), hundreds of megabytes stay resident although nothing uses
// them. The workers call it after each task; the HTTP server asks a MemoryTrimmer for it after a
// request with a large body.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace genhost {

// ReleaseFreeMemory trims every allocator arena (malloc_trim under glibc; nothing elsewhere) and
// returns how long that took.
std::chrono::microseconds ReleaseFreeMemory();

// MemoryTrimmer runs ReleaseFreeMemory on a thread of its own when asked, so the thread that
// freed a large block (an I/O thread, say) does not pay for the trim; requests that come while
// one is pending or running are served by one more trim, at most one every `spacing`.
class MemoryTrimmer {
  public:
    explicit MemoryTrimmer(std::chrono::milliseconds spacing = std::chrono::milliseconds(200));
    ~MemoryTrimmer();  // stops and joins the thread
    MemoryTrimmer(const MemoryTrimmer&) = delete;
    MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

    // Request asks for a trim soon; cheap, never blocks on a trim.
    void Request();

    // Trims counts the trims done so far.
    std::uint64_t Trims() const;

  private:
    void Main();

    std::chrono::milliseconds spacing_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool requested_ = false;
    bool stop_ = false;
    std::uint64_t trims_ = 0;
    std::thread thread_;
};

}  // namespace genhost
