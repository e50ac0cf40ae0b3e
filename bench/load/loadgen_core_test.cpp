// Unit tests of genhost_loadgen's socket-free parts: response framing, the open-loop schedule,
// percentiles.
#include "loadgen_core.hpp"

#include <gtest/gtest.h>

#include <string>

using genhost::loadgen::due_time;
using genhost::loadgen::percentile;
using genhost::loadgen::ResponseFramer;
using genhost::loadgen::send_time;

TEST(LoadgenFramer, WaitsForHeadersAndBody) {
    const std::string full =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}";
    for (std::size_t n = 0; n < full.size(); ++n) {
        EXPECT_FALSE(ResponseFramer::feed(std::string_view(full).substr(0, n))) << n;
    }
    const auto r = ResponseFramer::feed(full);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->length, full.size());
    EXPECT_EQ(r->status, 200);
}

TEST(LoadgenFramer, LengthIgnoresBytesOfTheNextResponse) {
    const std::string two =
        "HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\n";
    const auto r = ResponseFramer::feed(two);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
    EXPECT_EQ(r->length, two.find("{}") + 2);
}

TEST(LoadgenFramer, EmptyBody) {
    const auto r = ResponseFramer::feed("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 204);
}

TEST(LoadgenFramer, UnframeableResponsesAreErrors) {
    for (const char* bad : {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                            "SSH-2.0 hello\r\n\r\n", "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",
                            "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n"}) {
        const auto r = ResponseFramer::feed(bad);
        ASSERT_TRUE(r) << bad;
        EXPECT_EQ(r->length, 0u) << bad;
    }
    EXPECT_EQ(ResponseFramer::feed(std::string(70000, 'x'))->length, 0u);
}

TEST(LoadgenSchedule, StaggersConnectionsOverOneInterval) {
    // 1,000 requests/s per connection: every 1 ms; connection 1 of 4 starts 0.25 ms in.
    EXPECT_EQ(due_time(0, 1000, 0, 4).count(), 0);
    EXPECT_EQ(due_time(0, 1000, 1, 4).count(), 250000);
    EXPECT_EQ(due_time(3, 1000, 1, 4).count(), 3250000);
    // Sub-millisecond intervals stay exact: 4,000/s is every 250 us.
    EXPECT_EQ(due_time(10, 4000, 0, 1).count(), 2500000);
}

TEST(LoadgenSchedule, SendsOnTheFirstTickAtOrAfterTheDueTime) {
    using std::chrono::microseconds;
    using std::chrono::nanoseconds;
    EXPECT_EQ(send_time(microseconds(400), microseconds(200)), microseconds(400));
    EXPECT_EQ(send_time(microseconds(401), microseconds(200)), microseconds(600));
    EXPECT_EQ(send_time(nanoseconds(1), microseconds(200)), microseconds(200));
    EXPECT_EQ(send_time(nanoseconds(0), microseconds(200)), nanoseconds(0));
    EXPECT_EQ(send_time(nanoseconds(12345), nanoseconds(0)), nanoseconds(12345));
}

TEST(LoadgenPercentile, NearestRank) {
    std::vector<int> v;
    for (int i = 1; i <= 1000; ++i) v.push_back(i);
    EXPECT_EQ(percentile(v, 50), 500);
    EXPECT_EQ(percentile(v, 99), 990);
    EXPECT_EQ(percentile(v, 99.9), 999);
    EXPECT_EQ(percentile(v, 100), 1000);
    EXPECT_EQ(percentile(std::vector<int>{7}, 99.9), 7);
    EXPECT_EQ(percentile(std::vector<int>{}, 50), 0);
}
