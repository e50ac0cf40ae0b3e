// genhost/core/metrics.hpp
//
// Provides metrics::Registry: the process's counters and histograms, by family and label values,
// rendered in the Prometheus text exposition format. Families are declared once (name, help,
// label names; histograms with their buckets) by the component that owns them, which then counts
// into them from any thread.
//
// Label values are bounded: a family holds at most `kMaxSeries` series; a new label set past
// that is counted under every label "other", so a client that invents values (models, codes)
// never grows /metrics without end.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::metrics {

class Registry;

// Family is one metric family; keep the reference Registry hands out and count into it.
class Family {
  public:
    static constexpr std::size_t kMaxSeries = 500;

    // Inc adds `by` to the counter of `labels` (one value per label name, in order).
    void Inc(std::initializer_list<std::string_view> labels, double by = 1);
    // Observe records `value` in the histogram of `labels`.
    void Observe(std::initializer_list<std::string_view> labels, double value);

  private:
    friend class Registry;
    struct Series {
        double value = 0;                   // counter: total; histogram: sum
        std::uint64_t count = 0;            // histogram: observations
        std::vector<std::uint64_t> bucket;  // histogram: observations <= each bound
    };
    Series& Find(std::initializer_list<std::string_view> labels);
    void Render(std::string& out) const;

    std::string name_;
    std::string help_;
    bool histogram_ = false;
    std::vector<std::string> label_names_;
    std::vector<double> bounds_;
    mutable std::mutex mu_;
    std::map<std::vector<std::string>, Series, std::less<>> series_;
};

class Registry {
  public:
    // Counter declares (or returns, when declared before) a counter family. Its name ends in
    // _total.
    Family& Counter(std::string name, std::string help, std::vector<std::string> label_names);
    // Histogram declares (or returns) a histogram family with `bounds` (ascending).
    Family& Histogram(std::string name, std::string help, std::vector<std::string> label_names,
                      std::vector<double> bounds);

    // Render appends every family's exposition text to `out`, in the order declared.
    void Render(std::string& out) const;

  private:
    Family& Declare(std::string name, std::string help, std::vector<std::string> label_names,
                    bool histogram, std::vector<double> bounds);
    mutable std::mutex mu_;
    std::vector<std::unique_ptr<Family>> families_;
};

// Buckets for durations of work that takes seconds to minutes (tasks, provider calls).
inline const std::vector<double> kTaskSecondsBuckets = {0.05, 0.1, 0.25, 0.5, 1,   2.5, 5,
                                                        10,   30,  60,   120, 300, 600, 1800};
// Buckets for short operations (object store requests, database jobs).
inline const std::vector<double> kShortSecondsBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                         0.1,   0.25,   0.5,   1,    2.5,   10};

// EscapeLabel escapes a label value for the text format (\\, \" and \n).
std::string EscapeLabel(std::string_view value);

// FormatValue writes a sample value as Prometheus reads it ("+Inf", "NaN", integers without a
// fraction).
std::string FormatValue(double value);

}  // namespace genhost::metrics
