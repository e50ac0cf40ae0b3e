// Helpers shared by the HTTP test suites, which drive a real `genhost serve` over sockets.
#pragma once

#include "genhost/core/crypto.hpp"
#include "support/http_client.hpp"
#include "support/pg.hpp"
#include "support/server_process.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace genhost::testing {

// ServerSuite is a test suite whose tests share one database and one `genhost serve`: the
// suite's SetUpTestSuite calls StartServer, and they are stopped, server first, after the suite
// (a suite with more to clean up calls ServerSuite::TearDownTestSuite from its own). Suite is the
// deriving class, so each suite has its own pair.
template <class Suite, class Base = ::testing::Test>
class ServerSuite : public Base {
  protected:
    static void StartServer(std::map<std::string, std::string> env = {}) {
        db_ = std::make_unique<TestDatabase>();
        server_ = std::make_unique<ServerProcess>(db_->dsn(), std::move(env));
        server_->Start();
    }
    static void TearDownTestSuite() {
        server_.reset();
        db_.reset();
    }
    static HttpClient Client() { return HttpClient("127.0.0.1", server_->port()); }

    static inline std::unique_ptr<TestDatabase> db_;
    static inline std::unique_ptr<ServerProcess> server_;
};

// SharedFolder is a temporary data folder that several nodes use as their GENHOST_DATA_DIR (a
// shared volume, as docs/outputs.md asks of a multi-node deployment with the local store);
// removed with everything in it when it goes.
class SharedFolder {
  public:
    SharedFolder() {
        char tmpl[] = "/tmp/genhost-shared.XXXXXX";
        if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~SharedFolder() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    SharedFolder(const SharedFolder&) = delete;
    SharedFolder& operator=(const SharedFolder&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

// RunCapture runs the shell command `cmd` and returns what it printed (stdout and, if the command
// redirects it, stderr).
inline std::string RunCapture(const std::string& cmd) {
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error("popen failed");
    std::string out;
    char buf[4096];
    while (const std::size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    pclose(pipe);
    return out;
}

// LastJsonLine parses the last line of `out` that starts with '{' (a Node script's result);
// null when it is not JSON.
inline nlohmann::json LastJsonLine(const std::string& out) {
    const auto start = out.rfind("\n{", out.size() > 1 ? out.size() - 2 : 0);
    const std::string line = out.substr(start == std::string::npos ? 0 : start + 1);
    return nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
}

inline Headers AuthHeaders(const std::string& key = kTestKey) {
    return {{"Authorization", "Bearer " + key},
            {"X-Service-Version", "2024-11-06"},
            {"Content-Type", "application/json"}};
}

inline nlohmann::json ImageRequest(const std::string& model = "gen4_image",
                                   const std::string& ratio = "1280:720", std::uint64_t seed = 42) {
    return {
        {"model", model}, {"promptText", "a lighthouse at dusk"}, {"ratio", ratio}, {"seed", seed}};
}

// TypicalLatency reads a model's typical latency from the catalog in the source tree, so a test
// can ask for tasks of a given length through GENHOST_LATENCY_SCALE.
inline double TypicalLatency(const std::string& model) {
    std::ifstream in(std::string(GENHOST_SOURCE_DIR) + "/schemas/models.json");
    const auto catalog = nlohmann::json::parse(in);
    for (const auto& m : catalog["models"]) {
        if (m["id"] == model) return m["typical_latency_seconds"].get<double>();
    }
    throw std::runtime_error("model not in catalog: " + model);
}

// LatencyScaleFor returns the GENHOST_LATENCY_SCALE that makes gen4_image take `seconds`.
inline std::string LatencyScaleFor(double seconds) {
    return std::to_string(seconds / TypicalLatency("gen4_image"));
}

// WaitForStatus polls the task until its status is in `want` (returns the record) or the
// timeout passes (returns the last record).
inline nlohmann::json WaitForStatus(HttpClient& client, const std::string& id,
                                    const std::set<std::string>& want,
                                    std::chrono::seconds timeout = std::chrono::seconds(60),
                                    const std::string& key = kTestKey) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    nlohmann::json last;
    while (std::chrono::steady_clock::now() < deadline) {
        const auto r = client.Send("GET", "/v1/tasks/" + id, AuthHeaders(key));
        if (r.status != 200) return {{"httpStatus", r.status}};
        last = r.Json();
        if (want.count(last["status"].get<std::string>())) return last;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return last;
}

// PngSize reads width and height from a PNG's IHDR chunk; {0,0} if not a PNG.
inline std::pair<int, int> PngSize(const std::string& png) {
    if (png.size() < 24 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return {0, 0};
    auto be32 = [&](std::size_t at) {
        return (static_cast<unsigned char>(png[at]) << 24) |
               (static_cast<unsigned char>(png[at + 1]) << 16) |
               (static_cast<unsigned char>(png[at + 2]) << 8) |
               static_cast<unsigned char>(png[at + 3]);
    };
    return {static_cast<int>(be32(16)), static_cast<int>(be32(20))};
}

inline void ParseRatioForTest(const std::string& ratio, int& w, int& h) {
    const auto colon = ratio.find(':');
    w = std::stoi(ratio.substr(0, colon));
    h = std::stoi(ratio.substr(colon + 1));
}

// PathOf returns the path and query of an absolute http://host:port/... URL.
inline std::string PathOf(const std::string& url) {
    const auto scheme = url.find("://");
    const auto slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    return slash == std::string::npos ? "/" : url.substr(slash);
}

// CreateKey runs `genhost keys create` and returns the printed key.
inline std::string CreateKey(const ServerProcess& server, const std::string& org, int tier = 5) {
    std::string out;
    const int rc =
        server.RunCommand("keys create --org " + org + " --tier " + std::to_string(tier), &out);
    if (rc != 0) throw std::runtime_error("keys create failed: " + out);
    const auto pos = out.find("api_key: ");
    if (pos == std::string::npos) throw std::runtime_error("no key printed: " + out);
    return out.substr(pos + 9, 4 + 128);
}

// HealthWatch polls GET /healthz on its own connection every 10 ms while it lives, and keeps
// the slowest answer: tests of hostile input check that the server stayed responsive meanwhile
// (its I/O threads never blocked). Timing bounds in tests are loose (sanitizers, a shared
// machine); the release build's figures are measured by bench/hardening.
class HealthWatch {
  public:
    explicit HealthWatch(unsigned short port)
        : thread_([this, port] {
              HttpClient client("127.0.0.1", port);
              while (!stop_) {
                  const auto begun = std::chrono::steady_clock::now();
                  const int status = client.Send("GET", "/healthz").status;
                  const auto took = std::chrono::steady_clock::now() - begun;
                  {
                      std::lock_guard lock(mu_);
                      slowest_ = std::max(slowest_, took);
                      ++polls_;
                      if (status != 200) ++failures_;
                  }
                  std::this_thread::sleep_for(std::chrono::milliseconds(10));
              }
          }) {}
    ~HealthWatch() { Stop(); }
    HealthWatch(const HealthWatch&) = delete;
    HealthWatch& operator=(const HealthWatch&) = delete;

    // Stop ends the polling; the figures below are final afterwards.
    void Stop() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
    }
    double SlowestMs() {
        std::lock_guard lock(mu_);
        return std::chrono::duration<double, std::milli>(slowest_).count();
    }
    int Polls() {
        std::lock_guard lock(mu_);
        return polls_;
    }
    int Failures() {
        std::lock_guard lock(mu_);
        return failures_;
    }

  private:
    std::atomic<bool> stop_{false};
    std::mutex mu_;
    std::chrono::steady_clock::duration slowest_{};
    int polls_ = 0;
    int failures_ = 0;
    std::thread thread_;
};

// kResponsiveMs is how slow /healthz may be while a test's hostile input runs (the defects of
// issue 31 blocked an I/O thread for seconds).
inline constexpr double kResponsiveMs = 500;

// MetricValue returns the value of the first /metrics line starting with `prefix`, or -1.
// DataUri is `bytes` as a base64 data URI of media type `type`.
inline std::string DataUri(const std::string& type, const std::string& bytes) {
    return "data:" + type + ";base64," + Base64Encode(bytes);
}

inline double MetricValue(HttpClient& client, const std::string& prefix) {
    const auto body = client.Send("GET", "/metrics").body;
    std::istringstream in(body);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(prefix + " ", 0) == 0) return std::stod(line.substr(prefix.size() + 1));
    }
    return -1;
}

}  // namespace genhost::testing
