#include "genhost/store/listener.hpp"

#include <spdlog/spdlog.h>
#include <pqxx/pqxx>

#include <chrono>

namespace genhost::store {

namespace {

class Receiver final : public pqxx::notification_receiver {
  public:
    Receiver(pqxx::connection_base& c, const std::string& channel,
             std::function<void(const std::string&)> fn)
        : pqxx::notification_receiver(c, channel), fn_(std::move(fn)) {}
    void operator()(const std::string& payload, int) override { fn_(payload); }

  private:
    std::function<void(const std::string&)> fn_;
};

}  // namespace

Listener::Listener(std::string dsn, Callbacks callbacks)
    : dsn_(std::move(dsn)), callbacks_(std::move(callbacks)) {}

Listener::~Listener() { Stop(); }

void Listener::Start() {
    thread_ = std::thread([this] { Run(); });
}

void Listener::Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

void Listener::Run() {
    auto backoff = std::chrono::milliseconds(100);
    bool first = true;
    while (!stop_) {
        try {
            pqxx::connection conn(dsn_);
            Receiver tasks(conn, "genhost_tasks", [this](const std::string&) {
                if (callbacks_.on_tasks) callbacks_.on_tasks();
            });
            Receiver cancel(conn, "genhost_cancel", [this](const std::string& id) {
                if (callbacks_.on_cancel) callbacks_.on_cancel(id);
            });
            Receiver keys(conn, "genhost_keys", [this](const std::string&) {
                if (callbacks_.on_keys) callbacks_.on_keys();
            });
            Receiver jobs(conn, "genhost_jobs", [this](const std::string&) {
                if (callbacks_.on_jobs) callbacks_.on_jobs();
            });
            Receiver routers(conn, "genhost_routers", [this](const std::string&) {
                if (callbacks_.on_routers) callbacks_.on_routers();
            });
            connected_ = true;
            backoff = std::chrono::milliseconds(100);
            if (!first) {
                spdlog::info("notification listener reconnected");
                if (callbacks_.on_tasks) callbacks_.on_tasks();
                if (callbacks_.on_cancel) callbacks_.on_cancel("");
                if (callbacks_.on_keys) callbacks_.on_keys();
                if (callbacks_.on_jobs) callbacks_.on_jobs();
                if (callbacks_.on_routers) callbacks_.on_routers();
            }
            first = false;
            while (!stop_) {
                conn.await_notification(0, 200000);
                if (!conn.is_open()) throw pqxx::broken_connection("listener connection closed");
            }
        } catch (const std::exception& e) {
            connected_ = false;
            if (stop_) break;
            spdlog::warn("notification listener: {}", e.what());
            first = false;
            const auto until = std::chrono::steady_clock::now() + backoff;
            while (!stop_ && std::chrono::steady_clock::now() < until) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
        }
    }
    connected_ = false;
}

}  // namespace genhost::store
