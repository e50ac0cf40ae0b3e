// genhost/tasks/periodic.hpp
//
// Provides Periodic: a background job on its own thread that runs once at Start and then every
// `interval` (or at once after Kick) until Stop. A database outage is expected and skipped quietly
// (the next run tries again); any other exception is logged with the job's name. The sweepers are
// built on it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace genhost::tasks {

class Periodic {
  public:
    Periodic(std::string name, std::chrono::milliseconds interval, std::function<void()> run);
    ~Periodic();
    Periodic(const Periodic&) = delete;
    Periodic& operator=(const Periodic&) = delete;

    // Start launches the thread; it runs the job at once.
    void Start();

    // Stop ends the thread after the run in progress; safe to call twice.
    void Stop();

    // Kick makes the next run start now (or right after the one in progress) instead of at the
    // end of the interval.
    void Kick();

  private:
    void Main();

    std::string name_;
    std::chrono::milliseconds interval_;
    std::function<void()> run_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    bool kicked_ = false;
    std::thread thread_;
};

}  // namespace genhost::tasks
