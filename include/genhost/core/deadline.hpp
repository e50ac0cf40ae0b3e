// genhost/core/deadline.hpp
//
// Provides Deadline: a point in time, shared by every step of a node's drain (the listener, the
// task workers, the job engines), that another thread may bring forward to now with Cut (a second
// SIGTERM ends the drain at once). Each step polls Passed while it waits for its work to finish.
#pragma once

#include <atomic>
#include <chrono>

namespace genhost::core {

class Deadline {
  public:
    using Clock = std::chrono::steady_clock;

    explicit Deadline(Clock::duration from_now)
        : at_((Clock::now() + from_now).time_since_epoch().count()) {}

    // Passed: now is at or after the deadline.
    bool Passed() const { return Clock::now().time_since_epoch().count() >= at_.load(); }
    // Remaining: the time left, zero once passed.
    Clock::duration Remaining() const {
        const auto left = Clock::duration(at_.load()) - Clock::now().time_since_epoch();
        return left > Clock::duration::zero() ? left : Clock::duration::zero();
    }
    // Cut brings the deadline forward to now; every waiter sees it at its next poll.
    void Cut() {
        const auto now = Clock::now().time_since_epoch().count();
        auto at = at_.load();
        while (at > now && !at_.compare_exchange_weak(at, now)) {
        }
    }

  private:
    std::atomic<Clock::rep> at_;
};

}  // namespace genhost::core
