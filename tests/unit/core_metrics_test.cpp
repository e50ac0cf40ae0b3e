// Tests for genhost/core/metrics.hpp: counters and histograms rendered in the Prometheus text
// format, label values bounded per family, and declarations checked.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>

#include "genhost/core/metrics.hpp"

namespace genhost::metrics {
namespace {

using ::testing::HasSubstr;

int Lines(const std::string& text, const std::string& prefix) {
    std::istringstream in(text);
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
}

TEST(Registry, RendersCountersWithTheirLabels) {
    Registry r;
    auto& c = r.Counter("genhost_x_total", "Things.", {"model", "status"});
    c.Inc({"gen4_image", "SUCCEEDED"});
    c.Inc({"gen4_image", "SUCCEEDED"}, 2);
    c.Inc({"a\"b\\c\nd", "FAILED"});
    std::string out;
    r.Render(out);
    EXPECT_THAT(out, HasSubstr("# HELP genhost_x_total Things.\n# TYPE genhost_x_total counter\n"));
    EXPECT_THAT(out, HasSubstr("genhost_x_total{model=\"gen4_image\",status=\"SUCCEEDED\"} 3\n"));
    EXPECT_THAT(out, HasSubstr("genhost_x_total{model=\"a\\\"b\\\\c\\nd\",status=\"FAILED\"} 1\n"));
}

TEST(Registry, RendersHistogramsCumulatively) {
    Registry r;
    auto& h = r.Histogram("genhost_y_seconds", "Time.", {"model"}, {0.1, 1, 10});
    h.Observe({"m"}, 0.05);
    h.Observe({"m"}, 0.5);
    h.Observe({"m"}, 50);
    std::string out;
    r.Render(out);
    EXPECT_THAT(out, HasSubstr("# TYPE genhost_y_seconds histogram\n"));
    EXPECT_THAT(out, HasSubstr("genhost_y_seconds_bucket{model=\"m\",le=\"0.1\"} 1\n"));
    EXPECT_THAT(out, HasSubstr("genhost_y_seconds_bucket{model=\"m\",le=\"1\"} 2\n"));
    EXPECT_THAT(out, HasSubstr("genhost_y_seconds_bucket{model=\"m\",le=\"10\"} 2\n"));
    EXPECT_THAT(out, HasSubstr("genhost_y_seconds_bucket{model=\"m\",le=\"+Inf\"} 3\n"));
    EXPECT_THAT(out, HasSubstr("genhost_y_seconds_sum{model=\"m\"} 50.55\n"));
    EXPECT_THAT(out, HasSubstr("genhost_y_seconds_count{model=\"m\"} 3\n"));
}

TEST(Registry, LabelValuesAreBoundedPerFamily) {
    Registry r;
    auto& c = r.Counter("genhost_z_total", "Invented labels.", {"model"});
    std::mt19937 rng(7);
    for (int i = 0; i < 5000; ++i) c.Inc({"model-" + std::to_string(rng())});
    std::string out;
    r.Render(out);
    // At most kMaxSeries series, plus the one that gathers the rest; nothing is lost.
    EXPECT_LE(Lines(out, "genhost_z_total{"), static_cast<int>(Family::kMaxSeries) + 1);
    EXPECT_THAT(out, HasSubstr("genhost_z_total{model=\"other\"} 4500\n"));
}

TEST(Registry, DeclarationsAreCheckedAndShared) {
    Registry r;
    auto& a = r.Counter("genhost_a_total", "A.", {"x"});
    EXPECT_EQ(&a, &r.Counter("genhost_a_total", "A.", {"x"}));  // the same family again
    EXPECT_THROW(r.Counter("genhost_a_total", "A.", {"y"}), std::logic_error);
    EXPECT_THROW(r.Histogram("genhost_a_total", "A.", {"x"}, {1}), std::logic_error);
    EXPECT_THROW(r.Counter("genhost_requests", "No _total.", {}), std::logic_error);
}

TEST(FormatValue, WritesWhatPrometheusReads) {
    EXPECT_EQ(FormatValue(3), "3");
    EXPECT_EQ(FormatValue(0.25), "0.25");
    EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
    EXPECT_EQ(FormatValue(0.0 / 0.0), "NaN");
}

}  // namespace
}  // namespace genhost::metrics
