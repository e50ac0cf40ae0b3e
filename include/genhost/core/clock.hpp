// genhost/core/clock.hpp
//
// Provides Clock, the seam through which code that depends on the time reads it, so tests can
// inject a fixed or stepped clock, and the ISO 8601 formatting SPEC.md uses for timestamps.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace genhost {

using SysTime = std::chrono::time_point<std::chrono::system_clock, std::chrono::microseconds>;

// Clock reads the current UTC time.
class Clock {
  public:
    virtual ~Clock() = default;
    virtual SysTime Now() const = 0;
};

// SystemClock is the real clock.
class SystemClock final : public Clock {
  public:
    SysTime Now() const override;
    static const SystemClock& Instance();
};

// ManualClock is a clock a test moves by hand.
class ManualClock final : public Clock {
  public:
    explicit ManualClock(SysTime start) : now_(start) {}
    SysTime Now() const override { return now_; }
    void Advance(std::chrono::microseconds d) { now_ += d; }
    void Set(SysTime t) { now_ = t; }

  private:
    SysTime now_;
};

// FormatTimestamp renders `t` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, milliseconds).
std::string FormatTimestamp(SysTime t);

// ParseTimestamp reads an ISO 8601 date-time with a trailing `Z` (fractional seconds optional);
// nullopt if malformed.
std::optional<SysTime> ParseTimestamp(std::string_view s);

// ParseDateTime is ParseTimestamp that also takes an offset instead of the `Z` ("+02:00",
// "-05:30"): RFC 3339 date-times as query parameters carry them.
std::optional<SysTime> ParseDateTime(std::string_view s);

// UnixSeconds returns seconds since the epoch.
std::int64_t UnixSeconds(SysTime t);

// EpochMicros returns microseconds since the epoch (how the repositories read and write
// timestamps: `extract(epoch FROM t) * 1000000`); FromEpochMicros is its inverse.
inline std::int64_t EpochMicros(SysTime t) { return t.time_since_epoch().count(); }
inline SysTime FromEpochMicros(std::int64_t us) { return SysTime{std::chrono::microseconds{us}}; }

}  // namespace genhost
