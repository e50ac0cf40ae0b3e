// genhost/core/memory.hpp
//
// ReleaseFreeMemory hands memory the allocator holds free back to the system. glibc keeps what
// a thread frees in that thread's arena; after a pipeline has decoded a large video (or a request
// has carried a 20 MB data URI), hundreds of megabytes stay resident although nothing uses
// them. The workers call it after each task.
#pragma once

#include <chrono>

namespace genhost {

// ReleaseFreeMemory trims every allocator arena (malloc_trim under glibc; nothing elsewhere) and
// returns how long that took.
std::chrono::microseconds ReleaseFreeMemory();

}  // namespace genhost
