#include "genhost/core/clock.hpp"

#include <cstdio>

namespace genhost {

SysTime SystemClock::Now() const {
    return std::chrono::time_point_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now());
}

const SystemClock& SystemClock::Instance() {
    static const SystemClock clock;
    return clock;
}

std::string FormatTimestamp(SysTime t) {
    using namespace std::chrono;
    const auto days = floor<std::chrono::days>(t);
    const year_month_day ymd{days};
    const hh_mm_ss hms{duration_cast<milliseconds>(t - days)};
    const int year = static_cast<int>(ymd.year());
    if (year >= 0 && year <= 9999) {
        // Written digit by digit: this runs for every task record and log line, and snprintf's
        // format parsing was a visible part of a poll's CPU time.
        std::string out(24, '0');
        const auto put = [&out](std::size_t at, int width, unsigned value) {
            for (int i = width - 1; i >= 0; --i, value /= 10) {
                out[at + static_cast<std::size_t>(i)] = static_cast<char>('0' + value % 10);
            }
        };
        put(0, 4, static_cast<unsigned>(year));
        out[4] = '-';
        put(5, 2, static_cast<unsigned>(ymd.month()));
        out[7] = '-';
        put(8, 2, static_cast<unsigned>(ymd.day()));
        out[10] = 'T';
        put(11, 2, static_cast<unsigned>(hms.hours().count()));
        out[13] = ':';
        put(14, 2, static_cast<unsigned>(hms.minutes().count()));
        out[16] = ':';
        put(17, 2, static_cast<unsigned>(hms.seconds().count()));
        out[19] = '.';
        put(20, 3, static_cast<unsigned>(hms.subseconds().count()));
        out[23] = 'Z';
        return out;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                  static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                  static_cast<unsigned>(ymd.day()), static_cast<int>(hms.hours().count()),
                  static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()),
                  static_cast<int>(hms.subseconds().count()));
    return buf;
}

std::optional<SysTime> ParseTimestamp(std::string_view s) {
    using namespace std::chrono;
    // YYYY-MM-DDTHH:MM:SS[.fraction]Z
    if (s.size() < 20 || s.back() != 'Z') return std::nullopt;
    auto digits = [&](std::size_t pos, std::size_t n, int& out) {
        out = 0;
        for (std::size_t i = pos; i < pos + n; ++i) {
            if (s[i] < '0' || s[i] > '9') return false;
            out = out * 10 + (s[i] - '0');
        }
        return true;
    };
    int y, mo, d, h, mi, se;
    if (!digits(0, 4, y) || s[4] != '-' || !digits(5, 2, mo) || s[7] != '-' || !digits(8, 2, d) ||
        (s[10] != 'T' && s[10] != 't') || !digits(11, 2, h) || s[13] != ':' || !digits(14, 2, mi) ||
        s[16] != ':' || !digits(17, 2, se)) {
        return std::nullopt;
    }
    std::int64_t micros = 0;
    std::size_t pos = 19;
    if (s[pos] == '.') {
        ++pos;
        int count = 0;
        while (pos < s.size() - 1) {
            if (s[pos] < '0' || s[pos] > '9') return std::nullopt;
            if (count < 6) micros = micros * 10 + (s[pos] - '0');
            ++count;
            ++pos;
        }
        if (count == 0) return std::nullopt;
        for (int i = count; i < 6; ++i) micros *= 10;
    }
    if (pos != s.size() - 1) return std::nullopt;
    const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)},
                             day{static_cast<unsigned>(d)}};
    if (!ymd.ok() || h > 23 || mi > 59 || se > 59) return std::nullopt;
    return SysTime{sys_days{ymd}.time_since_epoch() + hours{h} + minutes{mi} + seconds{se} +
                   microseconds{micros}};
}

std::optional<SysTime> ParseDateTime(std::string_view s) {
    // An offset "+HH:MM" or "-HH:MM" instead of the Z: read the rest as UTC, then shift.
    if (s.size() > 6 && (s[s.size() - 6] == '+' || s[s.size() - 6] == '-') &&
        s[s.size() - 3] == ':') {
        const std::string_view offset = s.substr(s.size() - 5);
        if (offset[0] < '0' || offset[0] > '9' || offset[1] < '0' || offset[1] > '9' ||
            offset[3] < '0' || offset[3] > '9' || offset[4] < '0' || offset[4] > '9') {
            return std::nullopt;
        }
        const int hh = (offset[0] - '0') * 10 + (offset[1] - '0');
        const int mm = (offset[3] - '0') * 10 + (offset[4] - '0');
        if (hh > 23 || mm > 59) return std::nullopt;
        std::string utc(s.substr(0, s.size() - 6));
        utc += 'Z';
        auto t = ParseTimestamp(utc);
        if (!t) return std::nullopt;
        const auto shift = std::chrono::hours{hh} + std::chrono::minutes{mm};
        return s[s.size() - 6] == '+' ? *t - shift : *t + shift;
    }
    return ParseTimestamp(s);
}

std::int64_t UnixSeconds(SysTime t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace genhost
