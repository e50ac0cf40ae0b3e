#include "genhost/store/listener.hpp"

#include <spdlog/spdlog.h>
#include <pqxx/pqxx>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <memory>
#include <stdexcept>

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

Listener::Listener(std::string dsn, std::vector<Subscription> subscriptions)
    : dsn_(std::move(dsn)), subscriptions_(std::move(subscriptions)) {
    for (const auto& sub : subscriptions_) {
        if (std::find(std::begin(kChannels), std::end(kChannels), sub.channel) ==
            std::end(kChannels)) {
            throw std::invalid_argument("no notification channel " + sub.channel);
        }
    }
    for (const char* channel : kChannels) {
        if (std::none_of(subscriptions_.begin(), subscriptions_.end(),
                         [&](const Subscription& sub) { return sub.channel == channel; })) {
            throw std::invalid_argument(std::string("nothing listens to ") + channel);
        }
    }
}

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
            std::vector<std::unique_ptr<Receiver>> receivers;
            for (const auto& sub : subscriptions_) {
                receivers.push_back(std::make_unique<Receiver>(conn, sub.channel, sub.notified));
            }
            connected_ = true;
            backoff = std::chrono::milliseconds(100);
            if (!first) {
                spdlog::info("notification listener reconnected");
                for (const auto& sub : subscriptions_) sub.notified("");
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
