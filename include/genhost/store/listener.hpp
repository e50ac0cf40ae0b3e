// genhost/store/listener.hpp
//
// Provides Listener: one thread with its own connection that LISTENs on genhost's channels and
// calls back on notifications: `genhost_tasks` (work was queued), `genhost_cancel` (payload: a
// task id that was cancelled), `genhost_keys` (keys or organizations changed), `genhost_jobs`
// (a background job was queued; payload: its kind) and `genhost_routers` (a router changed or
// was deleted). It reconnects
// by itself after losing the database; after a reconnect it calls every callback once (with an
// empty payload), since notifications sent meanwhile were lost. Callbacks run on the listener
// thread and must be quick.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace genhost::store {

class Listener {
  public:
    struct Callbacks {
        std::function<void()> on_tasks;
        std::function<void(const std::string& task_id)> on_cancel;
        std::function<void()> on_keys;
        std::function<void()> on_jobs;
        std::function<void()> on_routers;
    };

    Listener(std::string dsn, Callbacks callbacks);
    ~Listener();
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;

    void Start();
    void Stop();

    // Connected reports whether the listener currently holds a live connection.
    bool Connected() const { return connected_.load(); }

  private:
    void Run();

    std::string dsn_;
    Callbacks callbacks_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> connected_{false};
    std::thread thread_;
};

}  // namespace genhost::store
