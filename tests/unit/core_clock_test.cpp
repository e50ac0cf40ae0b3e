// Tests for genhost/core/clock.hpp: the ISO 8601 format SPEC.md uses (UTC, milliseconds, Z),
// ParseTimestamp's accepted and refused inputs, UnixSeconds, and the clocks.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "genhost/core/clock.hpp"

namespace genhost {
namespace {

using namespace std::chrono;
using std::chrono_literals::operator""ms;
using std::chrono_literals::operator""s;

SysTime At(int y, unsigned m, unsigned d, int hh = 0, int mm = 0, int ss = 0,
           std::int64_t micros = 0) {
    return SysTime{sys_days{year{y} / month{m} / day{d}}.time_since_epoch() + hours{hh} +
                   minutes{mm} + seconds{ss} + microseconds{micros}};
}

// --- FormatTimestamp -----------------------------------------------------------------------

TEST(FormatTimestamp, Epoch) { EXPECT_EQ(FormatTimestamp(SysTime{}), "1970-01-01T00:00:00.000Z"); }

TEST(FormatTimestamp, HasMillisecondsAndZ) {
    const std::string s = FormatTimestamp(At(2024, 11, 6, 9, 5, 3, 7000));
    EXPECT_EQ(s, "2024-11-06T09:05:03.007Z");
    EXPECT_THAT(s, ::testing::MatchesRegex(
                       "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z"));
}

TEST(FormatTimestamp, TruncatesMicroseconds) {
    EXPECT_EQ(FormatTimestamp(At(2024, 2, 29, 23, 59, 59, 999999)), "2024-02-29T23:59:59.999Z");
    EXPECT_EQ(FormatTimestamp(At(2000, 1, 1, 0, 0, 0, 1)), "2000-01-01T00:00:00.000Z");
}

TEST(FormatTimestamp, ShapeOfTheSystemClock) {
    EXPECT_THAT(FormatTimestamp(SystemClock::Instance().Now()),
                ::testing::MatchesRegex(
                    "20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z"));
}

TEST(FormatTimestamp, BeforeTheEpoch) {
    EXPECT_EQ(FormatTimestamp(At(1969, 12, 31, 23, 59, 59, 500000)), "1969-12-31T23:59:59.500Z");
}

TEST(FormatTimestamp, TheEdgesOfFourDigitYearsAndBeyond) {
    EXPECT_EQ(FormatTimestamp(At(0, 1, 1)), "0000-01-01T00:00:00.000Z");
    EXPECT_EQ(FormatTimestamp(At(9999, 12, 31, 23, 59, 59, 999000)), "9999-12-31T23:59:59.999Z");
    EXPECT_EQ(FormatTimestamp(At(10000, 1, 1)), "10000-01-01T00:00:00.000Z");
    EXPECT_EQ(FormatTimestamp(At(-1, 6, 1, 12)), "-001-06-01T12:00:00.000Z");
}

TEST(FormatTimestamp, ReadsBackAsItselfAcrossCenturies) {
    // A walk in uneven steps from 1899 to 2101 (every field's digits change along the way).
    for (SysTime t = At(1899, 12, 31, 23, 59, 58, 1000); t < At(2101, 1, 1);
         t += hours{8761} + minutes{7} + seconds{13} + microseconds{123457}) {
        const std::string s = FormatTimestamp(t);
        ASSERT_EQ(ParseTimestamp(s), floor<milliseconds>(t)) << s;
    }
}

// --- ParseTimestamp ------------------------------------------------------------------------

TEST(ParseTimestamp, ReadsWholeSeconds) {
    EXPECT_EQ(ParseTimestamp("2024-11-06T12:34:56Z"), At(2024, 11, 6, 12, 34, 56));
    EXPECT_EQ(ParseTimestamp("1970-01-01T00:00:00Z"), SysTime{});
}

TEST(ParseTimestamp, ReadsFractionalSeconds) {
    EXPECT_EQ(ParseTimestamp("2024-11-06T12:34:56.1Z"), At(2024, 11, 6, 12, 34, 56, 100000));
    EXPECT_EQ(ParseTimestamp("2024-11-06T12:34:56.123Z"), At(2024, 11, 6, 12, 34, 56, 123000));
    EXPECT_EQ(ParseTimestamp("2024-11-06T12:34:56.123456Z"), At(2024, 11, 6, 12, 34, 56, 123456));
    // Beyond microseconds the digits are accepted and dropped.
    EXPECT_EQ(ParseTimestamp("2024-11-06T12:34:56.123456789Z"),
              At(2024, 11, 6, 12, 34, 56, 123456));
}

TEST(ParseTimestamp, AcceptsLowercaseT) {
    EXPECT_EQ(ParseTimestamp("2024-11-06t12:34:56Z"), At(2024, 11, 6, 12, 34, 56));
}

TEST(ParseTimestamp, RoundTripsFormatTimestamp) {
    for (const SysTime t :
         {SysTime{}, At(2024, 11, 6, 12, 34, 56, 789000), At(1999, 12, 31, 23, 59, 59, 999000),
          At(2038, 1, 19, 3, 14, 8), At(2024, 2, 29, 0, 0, 0, 1000)}) {
        const std::string text = FormatTimestamp(t);
        const auto back = ParseTimestamp(text);
        ASSERT_TRUE(back.has_value()) << text;
        EXPECT_EQ(*back, t) << text;
        EXPECT_EQ(FormatTimestamp(*back), text);
    }
}

TEST(ParseTimestamp, RoundTripsTheCurrentTimeToTheMillisecond) {
    const SysTime now = SystemClock::Instance().Now();
    const auto back = ParseTimestamp(FormatTimestamp(now));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, time_point_cast<milliseconds>(now));
}

TEST(ParseTimestamp, AcceptsLeapDayOnlyInLeapYears) {
    EXPECT_TRUE(ParseTimestamp("2024-02-29T00:00:00Z").has_value());
    EXPECT_TRUE(ParseTimestamp("2000-02-29T00:00:00Z").has_value());
    EXPECT_FALSE(ParseTimestamp("2023-02-29T00:00:00Z").has_value());
    EXPECT_FALSE(ParseTimestamp("1900-02-29T00:00:00Z").has_value());
}

TEST(ParseTimestamp, RejectsImpossibleDates) {
    for (const char* s : {"2024-02-30T00:00:00Z", "2024-04-31T00:00:00Z", "2024-13-01T00:00:00Z",
                          "2024-00-10T00:00:00Z", "2024-01-00T00:00:00Z", "2024-01-32T00:00:00Z"}) {
        EXPECT_EQ(ParseTimestamp(s), std::nullopt) << s;
    }
}

TEST(ParseTimestamp, RejectsOutOfRangeTimes) {
    for (const char* s : {"2024-11-06T24:00:00Z", "2024-11-06T23:60:00Z", "2024-11-06T23:59:60Z",
                          "2024-11-06T99:00:00Z"}) {
        EXPECT_EQ(ParseTimestamp(s), std::nullopt) << s;
    }
    EXPECT_TRUE(ParseTimestamp("2024-11-06T23:59:59Z").has_value());
}

TEST(ParseTimestamp, RequiresZ) {
    for (const char* s : {"2024-11-06T12:34:56", "2024-11-06T12:34:56.123", "2024-11-06T12:34:56z",
                          "2024-11-06T12:34:56+00:00", "2024-11-06T12:34:56.000+01:00",
                          "2024-11-06T12:34:56Z ", "2024-11-06T12:34:56ZZ"}) {
        EXPECT_EQ(ParseTimestamp(s), std::nullopt) << s;
    }
}

TEST(ParseTimestamp, RejectsMalformed) {
    for (const char* s : {"",
                          "Z",
                          "2024-11-06Z",
                          "2024-11-06",
                          "2024-11-06 12:34:56Z",
                          "2024/11/06T12:34:56Z",
                          "2024-11-06T12-34-56Z",
                          "24-11-06T12:34:56Z",
                          "2024-1-06T12:34:56Z",
                          "2024-11-6T12:34:56Z",
                          "2024-11-06T1:34:56Z",
                          "2024-11-06T12:34:5Z",
                          "2024-11-06T12:34:56.Z",
                          "2024-11-06T12:34:56.1aZ",
                          "2024-11-06T12:34:56,5Z",
                          "2024-11-06T12:34:56x5Z",
                          "+024-11-06T12:34:56Z",
                          "2024-11-06T12:34:-5Z",
                          " 2024-11-06T12:34:56Z",
                          "abcd-ef-ghTij:kl:mnZ"}) {
        EXPECT_EQ(ParseTimestamp(s), std::nullopt) << "'" << s << "'";
    }
}

// --- UnixSeconds ---------------------------------------------------------------------------

TEST(UnixSeconds, CountsWholeSecondsSinceTheEpoch) {
    EXPECT_EQ(UnixSeconds(SysTime{}), 0);
    EXPECT_EQ(UnixSeconds(At(2024, 11, 6)), 1730851200);
    EXPECT_EQ(UnixSeconds(At(2024, 11, 6, 0, 0, 0, 999999)), 1730851200);
    EXPECT_EQ(UnixSeconds(At(2038, 1, 19, 3, 14, 8)), 2147483648LL);
}

// --- Clocks --------------------------------------------------------------------------------

TEST(ManualClock, MovesOnlyWhenTold) {
    ManualClock clock(At(2024, 1, 1));
    const Clock& as_clock = clock;
    EXPECT_EQ(as_clock.Now(), At(2024, 1, 1));
    EXPECT_EQ(as_clock.Now(), At(2024, 1, 1));
    clock.Advance(1500ms);
    EXPECT_EQ(as_clock.Now(), At(2024, 1, 1, 0, 0, 1, 500000));
    clock.Set(At(2030, 6, 1));
    EXPECT_EQ(as_clock.Now(), At(2030, 6, 1));
    clock.Advance(-1s);
    EXPECT_EQ(as_clock.Now(), At(2030, 5, 31, 23, 59, 59));
}

TEST(SystemClock, IsCloseToTheRealTimeAndSingleton) {
    const auto before = time_point_cast<microseconds>(system_clock::now());
    const SysTime now = SystemClock::Instance().Now();
    const auto after = time_point_cast<microseconds>(system_clock::now());
    EXPECT_LE(before, now);
    EXPECT_LE(now, after);
    EXPECT_EQ(&SystemClock::Instance(), &SystemClock::Instance());
}

}  // namespace
}  // namespace genhost
