// genhost/http/metrics.hpp
//
// Provides Metrics: request counters and latency histograms by route, method and status, kept
// in process and rendered in the Prometheus text exposition format together with gauges the
// caller samples at scrape time (task counts, queue depth, database pool use) and the families
// of its metrics::Registry, which the components count into (tasks, providers, S3, realtime).
// Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "genhost/core/metrics.hpp"

namespace genhost::http {

// Sample is one value sampled at scrape time: name, labels ({key, value} pairs) and value; a
// gauge unless `counter` (a total kept elsewhere, whose name ends in _total).
struct Sample {
    std::string name;
    std::string help;
    std::vector<std::pair<std::string, std::string>> labels;
    double value = 0;
    bool counter = false;
};

class Metrics {
  public:
    static constexpr std::array<double, 13> kBuckets = {
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};

    // ObserveRequest counts one finished request.
    void ObserveRequest(std::string_view route, std::string_view method, int status,
                        double seconds);

    // Render returns the exposition text: the request metrics, the registry's families, then
    // `samples`.
    std::string Render(const std::vector<Sample>& samples) const;

    // Registry is where the components declare their own families.
    metrics::Registry& Registry() { return registry_; }

  private:
    struct Series {
        std::uint64_t count = 0;
        double sum = 0;
        std::array<std::uint64_t, kBuckets.size()> buckets{};
    };
    metrics::Registry registry_;
    mutable std::mutex mu_;
    // Transparent: a request's series is found without building its key's strings.
    std::map<std::tuple<std::string, std::string, int>, Series, std::less<>> series_;
};

}  // namespace genhost::http
