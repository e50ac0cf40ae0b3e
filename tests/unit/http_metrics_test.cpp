// Tests for genhost/http/metrics.hpp: the Prometheus text rendering of request counters and
// latency histograms (cumulative buckets ending in +Inf equal to the count), label escaping,
// caller gauges grouped under one HELP/TYPE, and thread safety.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "genhost/http/metrics.hpp"

namespace genhost::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) out.push_back(line);
    return out;
}

int CountLines(const std::string& text, const std::string& prefix) {
    int n = 0;
    for (const auto& l : Lines(text)) n += l.starts_with(prefix) ? 1 : 0;
    return n;
}

// Value returns the value of the sample line starting with `series` (name and labels), or -1.
double Value(const std::string& text, const std::string& series) {
    for (const auto& l : Lines(text)) {
        if (l.starts_with(series + " ")) return std::stod(l.substr(series.size() + 1));
    }
    return -1;
}

TEST(Metrics, EmptyRenderHasBothFamiliesAndNoSamples) {
    const Metrics m;
    const std::string text = m.Render({});
    EXPECT_THAT(text, HasSubstr("# TYPE genhost_http_requests_total counter\n"));
    EXPECT_THAT(text, HasSubstr("# TYPE genhost_http_request_duration_seconds histogram\n"));
    for (const auto& l : Lines(text)) EXPECT_TRUE(l.starts_with("# ")) << l;
    EXPECT_TRUE(text.ends_with("\n"));
}

TEST(Metrics, CountsRequestsByRouteMethodAndStatus) {
    Metrics m;
    m.ObserveRequest("/v1/tasks/{id}", "GET", 200, 0.001);
    m.ObserveRequest("/v1/tasks/{id}", "GET", 200, 0.002);
    m.ObserveRequest("/v1/tasks/{id}", "GET", 404, 0.001);
    m.ObserveRequest("/v1/tasks/{id}", "DELETE", 204, 0.001);
    m.ObserveRequest("unmatched", "-", 400, 0);
    const std::string text = m.Render({});
    EXPECT_EQ(
        Value(text,
              R"(genhost_http_requests_total{route="/v1/tasks/{id}",method="GET",status="200"})"),
        2);
    EXPECT_EQ(
        Value(text,
              R"(genhost_http_requests_total{route="/v1/tasks/{id}",method="GET",status="404"})"),
        1);
    EXPECT_EQ(
        Value(
            text,
            R"(genhost_http_requests_total{route="/v1/tasks/{id}",method="DELETE",status="204"})"),
        1);
    EXPECT_EQ(
        Value(text, R"(genhost_http_requests_total{route="unmatched",method="-",status="400"})"),
        1);
    EXPECT_EQ(CountLines(text, "genhost_http_requests_total{"), 4);
    EXPECT_EQ(CountLines(text, "# HELP genhost_http_requests_total"), 1);
}

TEST(Metrics, HistogramBucketsAreCumulativeAndEndInInf) {
    Metrics m;
    m.ObserveRequest("/r", "GET", 200, 0.003);
    m.ObserveRequest("/r", "GET", 200, 0.003);
    m.ObserveRequest("/r", "GET", 200, 0.7);
    m.ObserveRequest("/r", "GET", 200, 60);  // beyond the last bucket
    const std::string text = m.Render({});
    const std::string labels = R"(route="/r",method="GET",status="200")";
    auto bucket = [&](const std::string& le) {
        return Value(
            text, "genhost_http_request_duration_seconds_bucket{" + labels + ",le=\"" + le + "\"}");
    };
    EXPECT_EQ(bucket("0.0005"), 0);
    EXPECT_EQ(bucket("0.001"), 0);
    EXPECT_EQ(bucket("0.0025"), 0);
    EXPECT_EQ(bucket("0.005"), 2);
    EXPECT_EQ(bucket("0.5"), 2);
    EXPECT_EQ(bucket("1"), 3);
    EXPECT_EQ(bucket("5"), 3);
    EXPECT_EQ(bucket("+Inf"), 4);
    EXPECT_EQ(Value(text, "genhost_http_request_duration_seconds_count{" + labels + "}"), 4);
    EXPECT_NEAR(Value(text, "genhost_http_request_duration_seconds_sum{" + labels + "}"), 60.706,
                1e-9);
}

TEST(Metrics, BucketBoundaryIsInclusive) {
    Metrics m;
    m.ObserveRequest("/r", "GET", 200, 0.005);
    const std::string text = m.Render({});
    const std::string prefix =
        R"(genhost_http_request_duration_seconds_bucket{route="/r",method="GET",status="200",le=)";
    EXPECT_EQ(Value(text, prefix + "\"0.0025\"}"), 0);
    EXPECT_EQ(Value(text, prefix + "\"0.005\"}"), 1);
}

TEST(Metrics, EveryHistogramHasAllBucketsInOrderThenSumAndCount) {
    Metrics m;
    m.ObserveRequest("/a", "GET", 200, 0.0001);
    m.ObserveRequest("/b", "POST", 201, 0.02);
    m.ObserveRequest("/b", "POST", 500, 3);
    const std::string text = m.Render({});
    // genhost_http_request_duration_seconds_bucket{LABELS,le="LE"} COUNT
    const std::string prefix = "genhost_http_request_duration_seconds_bucket{";
    std::map<std::string, std::vector<std::pair<std::string, std::uint64_t>>> by_series;
    for (const auto& l : Lines(text)) {
        if (!l.starts_with(prefix)) continue;
        const auto le = l.rfind(",le=\"");
        const auto close = l.rfind("\"} ");
        ASSERT_NE(le, std::string::npos) << l;
        ASSERT_NE(close, std::string::npos) << l;
        by_series[l.substr(prefix.size(), le - prefix.size())].emplace_back(
            l.substr(le + 5, close - le - 5), std::stoull(l.substr(close + 3)));
    }
    ASSERT_EQ(by_series.size(), 3u);
    for (const auto& [labels, buckets] : by_series) {
        ASSERT_EQ(buckets.size(), Metrics::kBuckets.size() + 1) << labels;
        double last_le = -1;
        std::uint64_t last_count = 0;
        for (std::size_t i = 0; i < buckets.size(); ++i) {
            const auto& [le, count] = buckets[i];
            if (i + 1 == buckets.size()) {
                EXPECT_EQ(le, "+Inf") << labels;
            } else {
                EXPECT_GT(std::stod(le), last_le) << labels;
                last_le = std::stod(le);
            }
            EXPECT_GE(count, last_count) << labels << " le=" << le;
            last_count = count;
        }
        EXPECT_EQ(Value(text, "genhost_http_request_duration_seconds_count{" + labels + "}"),
                  static_cast<double>(last_count));
        EXPECT_GE(Value(text, "genhost_http_request_duration_seconds_sum{" + labels + "}"), 0);
    }
}

// Issue 32: /metrics grew a new series for every request method anyone sent, without a key.
TEST(Metrics, UnknownMethodsCollapseToOneLabelValue) {
    Metrics m;
    std::mt19937 random(31);
    for (int i = 0; i < 1000; ++i) {
        std::string method;
        for (int k = 0; k < 6; ++k) method += static_cast<char>('A' + random() % 26);
        m.ObserveRequest("unmatched", method, 405, 0.001);
    }
    m.ObserveRequest("unmatched", "GET", 404, 0.001);
    const std::string text = m.Render({});
    EXPECT_EQ(CountLines(text, "genhost_http_requests_total{"), 2);
    EXPECT_EQ(
        Value(text,
              R"(genhost_http_requests_total{route="unmatched",method="other",status="405"})"),
        1000);
}

TEST(Metrics, EscapesLabelValues) {
    Metrics m;
    m.ObserveRequest("/a\"b\\c\nd", "GET", 200, 0.001);
    const std::string text = m.Render({});
    EXPECT_THAT(
        text,
        HasSubstr(
            R"(genhost_http_requests_total{route="/a\"b\\c\nd",method="GET",status="200"} 1)"));
    // No raw newline inside a sample line: every line is a comment or name{...} value.
    for (const auto& l : Lines(text)) {
        if (l.starts_with("#")) continue;
        EXPECT_THAT(l, ::testing::MatchesRegex("[a-z_]+(\\{.*\\})? [-+0-9.e]+")) << l;
    }
}

TEST(Metrics, GaugesAreGroupedUnderOneHelpAndType) {
    const Metrics m;
    const std::vector<Sample> gauges = {
        {"genhost_tasks", "Tasks by status.", {{"status", "PENDING"}}, 3},
        {"genhost_tasks", "Tasks by status.", {{"status", "RUNNING"}}, 1},
        {"genhost_tasks", "Tasks by status.", {{"status", "FAILED"}}, 0},
        {"genhost_queue_depth", "Tasks waiting.", {}, 3},
        {"genhost_db_pool_busy", "Busy connections.", {}, 0.5},
    };
    const std::string text = m.Render(gauges);
    EXPECT_EQ(CountLines(text, "# HELP genhost_tasks "), 1);
    EXPECT_EQ(CountLines(text, "# TYPE genhost_tasks gauge"), 1);
    EXPECT_THAT(text, HasSubstr("# HELP genhost_tasks Tasks by status.\n"));
    EXPECT_EQ(Value(text, R"(genhost_tasks{status="PENDING"})"), 3);
    EXPECT_EQ(Value(text, R"(genhost_tasks{status="RUNNING"})"), 1);
    EXPECT_EQ(Value(text, R"(genhost_tasks{status="FAILED"})"), 0);
    EXPECT_EQ(CountLines(text, "# TYPE genhost_queue_depth gauge"), 1);
    EXPECT_EQ(Value(text, "genhost_queue_depth"), 3);
    EXPECT_EQ(Value(text, "genhost_db_pool_busy"), 0.5);
    // HELP and TYPE come right before the family's first sample.
    const auto lines = Lines(text);
    const auto help =
        std::find(lines.begin(), lines.end(), "# HELP genhost_tasks Tasks by status.");
    ASSERT_NE(help, lines.end());
    ASSERT_LT(help + 2, lines.end());
    EXPECT_EQ(*(help + 1), "# TYPE genhost_tasks gauge");
    EXPECT_EQ(*(help + 2), R"(genhost_tasks{status="PENDING"} 3)");
}

TEST(Metrics, GaugeLabelsAreEscapedAndJoined) {
    const Metrics m;
    const std::string text =
        m.Render({{"genhost_g", "h", {{"a", "x\"y"}, {"b", "p\\q"}, {"c", "1\n2"}}, 7}});
    EXPECT_THAT(text, HasSubstr(R"(genhost_g{a="x\"y",b="p\\q",c="1\n2"} 7)"));
}

TEST(Metrics, RequestMetricsComeBeforeGauges) {
    Metrics m;
    m.ObserveRequest("/r", "GET", 200, 0.001);
    const std::string text = m.Render({{"genhost_up", "Up.", {}, 1}});
    EXPECT_LT(text.find("genhost_http_requests_total{"), text.find("genhost_up"));
    EXPECT_LT(text.find("genhost_http_request_duration_seconds_count"), text.find("genhost_up"));
}

TEST(Metrics, ConcurrentObservationsAreAllCounted) {
    Metrics m;
    constexpr int kThreads = 4;
    constexpr int kEach = 2000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&m, t] {
            for (int i = 0; i < kEach; ++i) {
                m.ObserveRequest("/r", "GET", 200 + (i % 2), 0.001);
                if (i % 500 == 0) (void)m.Render({});
            }
            (void)t;
        });
    }
    for (auto& th : threads) th.join();
    const std::string text = m.Render({});
    EXPECT_EQ(Value(text, R"(genhost_http_requests_total{route="/r",method="GET",status="200"})"),
              kThreads * kEach / 2);
    EXPECT_EQ(Value(text, R"(genhost_http_requests_total{route="/r",method="GET",status="201"})"),
              kThreads * kEach / 2);
}

}  // namespace
}  // namespace genhost::http
