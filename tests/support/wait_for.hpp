// WaitFor, shared by tests that wait for another thread: polls a predicate (every millisecond
// unless told otherwise) until it holds or the time is up.
#pragma once

#include <chrono>
#include <thread>

namespace genhost::test {

// WaitFor polls `pred` every `poll` for up to `timeout`; returns whether it came true.
template <class Pred>
bool WaitFor(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(2),
             std::chrono::milliseconds poll = std::chrono::milliseconds(1)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(poll);
    }
    return true;
}

}  // namespace genhost::test
