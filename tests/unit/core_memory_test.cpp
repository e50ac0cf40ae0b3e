// Tests for genhost/core/memory.hpp: ReleaseFreeMemory hands freed memory back, and
// MemoryTrimmer trims on its own thread when asked, coalescing requests that come together.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "genhost/core/memory.hpp"
#include "support/wait_for.hpp"

namespace genhost {
namespace {

using namespace std::chrono_literals;

using test::WaitFor;

TEST(ReleaseFreeMemory, ReturnsHowLongItTook) {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < 64; ++i) blocks.emplace_back(new char[64 * 1024]);
    blocks.clear();
    EXPECT_GE(ReleaseFreeMemory().count(), 0);
}

TEST(MemoryTrimmer, TrimsWhenAskedAndCoalescesRequests) {
    MemoryTrimmer trimmer(300ms);
    EXPECT_EQ(trimmer.Trims(), 0u);
    trimmer.Request();
    ASSERT_TRUE(WaitFor([&] { return trimmer.Trims() == 1; }));
    // Asked many times within the spacing: one more trim serves them all.
    for (int i = 0; i < 100; ++i) trimmer.Request();
    ASSERT_TRUE(WaitFor([&] { return trimmer.Trims() == 2; }));
    std::this_thread::sleep_for(400ms);
    EXPECT_EQ(trimmer.Trims(), 2u);
}

TEST(MemoryTrimmer, StopsAtOnceEvenWhileSpacing) {
    const auto started = std::chrono::steady_clock::now();
    {
        MemoryTrimmer trimmer(10s);
        trimmer.Request();
        ASSERT_TRUE(WaitFor([&] { return trimmer.Trims() == 1; }));
    }
    EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
}

}  // namespace
}  // namespace genhost
