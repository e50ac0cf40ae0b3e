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

}  // namespace genhost
