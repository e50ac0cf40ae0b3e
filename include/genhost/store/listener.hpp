// genhost/store/listener.hpp
//
// Provides Listener: one thread with its own connection that LISTENs on genhost's channels and
// calls back on notifications, and the channels themselves, declared once here (the SQL that
// sends them is in migrations/):
// - `genhost_tasks`: work was queued;
// - `genhost_cancel` (payload: a task id): a task was cancelled;
// - `genhost_keys`: keys or organizations changed;
// - `genhost_jobs` (payload: its kind): a background job was queued or woken;
// - `genhost_routers`: a router changed or was deleted;
// - `genhost_sessions` (payload: a session id): a realtime session was cancelled.
// It reconnects by itself after losing the database; after a reconnect it calls every callback
// once with an empty payload, since notifications sent meanwhile were lost. Callbacks run on the
// listener thread and must be quick.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace genhost::store {

class Listener {
  public:
    // A subscription: a channel (one of kChannels) and what its notifications call.
    struct Subscription {
        std::string channel;
        std::function<void(const std::string& payload)> notified;
    };
    static constexpr const char* kChannels[] = {"genhost_tasks",   "genhost_cancel",
                                                "genhost_keys",    "genhost_jobs",
                                                "genhost_routers", "genhost_sessions"};

    // Throws std::invalid_argument for a channel that is not in kChannels, and for a channel of
    // kChannels that no subscription takes (a notification nobody would act on).
    Listener(std::string dsn, std::vector<Subscription> subscriptions);
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
    std::vector<Subscription> subscriptions_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> connected_{false};
    std::thread thread_;
};

}  // namespace genhost::store
