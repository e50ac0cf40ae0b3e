// The parts of genhost_loadgen that hold no sockets: the HTTP/1.1 response framer, the open-loop
// schedule, and percentiles. Kept apart so tests/unit can check them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace genhost::loadgen {

// Whether `a` equals `lower` (lower-case ASCII) ignoring the case of `a`: header names.
inline bool iequals(std::string_view a, std::string_view lower) {
    if (a.size() != lower.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != lower[i]) return false;
    }
    return true;
}

// Frames one HTTP/1.1 response with a Content-Length body (what genhost sends) out of bytes as
// they arrive. feed() returns the response's total length once it is complete, std::nullopt
// while more bytes are needed; status() is then valid. A response without Content-Length, or a
// malformed one, is reported as an error (length 0 and status 0) so the caller reconnects.
class ResponseFramer {
  public:
    struct Result {
        std::size_t length = 0;  // bytes of the whole response; 0 on a framing error
        int status = 0;
    };

    // `data` holds every byte received since the response began.
    static std::optional<Result> feed(std::string_view data) {
        const auto end = data.find("\r\n\r\n");
        if (end == std::string_view::npos) {
            if (data.size() > 64 * 1024) return Result{};
            return std::nullopt;
        }
        const std::string_view head = data.substr(0, end + 2);
        // "HTTP/1.1 200 OK"
        if (head.size() < 12 || head.substr(0, 5) != "HTTP/") return Result{};
        const auto sp = head.find(' ');
        if (sp == std::string_view::npos || sp + 4 > head.size()) return Result{};
        int status = 0;
        for (std::size_t i = sp + 1; i < sp + 4; ++i) {
            if (head[i] < '0' || head[i] > '9') return Result{};
            status = status * 10 + (head[i] - '0');
        }
        std::optional<std::size_t> content_length;
        std::size_t pos = head.find("\r\n");
        while (pos != std::string_view::npos && pos + 2 < head.size()) {
            const std::size_t line_start = pos + 2;
            const std::size_t line_end = head.find("\r\n", line_start);
            if (line_end == std::string_view::npos) break;
            const std::string_view line = head.substr(line_start, line_end - line_start);
            constexpr std::string_view kName = "content-length:";
            if (line.size() > kName.size() && iequals(line.substr(0, kName.size()), kName)) {
                std::size_t value = 0;
                bool digits = false;
                for (char c : line.substr(kName.size())) {
                    if (c == ' ' || c == '\t') continue;
                    if (c < '0' || c > '9') return Result{};
                    value = value * 10 + static_cast<std::size_t>(c - '0');
                    digits = true;
                }
                if (!digits) return Result{};
                content_length = value;
            }
            pos = line_end;
        }
        if (!content_length) return Result{};
        const std::size_t total = end + 4 + *content_length;
        if (data.size() < total) return std::nullopt;
        return Result{total, status};
    }
};

// When the k-th request of a connection is due in an open-loop run: connection `index` of
// `count` sends at `per_connection` requests per second, the connections staggered evenly over
// one interval so the total load is smooth. Latency is measured from this time, not from the
// send, so a server that falls behind is charged for the wait (no coordinated omission).
inline std::chrono::nanoseconds due_time(std::uint64_t k, double per_connection, std::size_t index,
                                         std::size_t count) {
    const double interval_ns = 1e9 / per_connection;
    const double offset = interval_ns * static_cast<double>(index) / static_cast<double>(count);
    return std::chrono::nanoseconds(
        static_cast<std::int64_t>(offset + interval_ns * static_cast<double>(k)));
}

// When a request due at `due` (from the run's start) is sent in an open-loop run: at the next
// multiple of `tick`, so each thread wakes at most once a tick however many connections it
// drives (a wake-up per request cost the load generator two to three times the CPU of a closed
// loop). Its latency still counts from `due`, so the server is charged for up to one tick more
// than it took, never less. A zero tick sends at `due`.
inline std::chrono::nanoseconds send_time(std::chrono::nanoseconds due,
                                          std::chrono::nanoseconds tick) {
    if (tick.count() <= 0) return due;
    const auto ticks = (due.count() + tick.count() - 1) / tick.count();
    return std::chrono::nanoseconds(ticks * tick.count());
}

// The p-th percentile (0 < p <= 100) of `sorted` by the nearest-rank method.
template <typename T>
T percentile(const std::vector<T>& sorted, double p) {
    if (sorted.empty()) return T{};
    // Less a hair, so that 99.9 % of 1,000 is rank 999 despite rounding in p / 100.
    const double rank = p / 100.0 * static_cast<double>(sorted.size()) - 1e-9;
    std::size_t index = static_cast<std::size_t>(rank);
    if (static_cast<double>(index) < rank) ++index;  // ceil
    index = std::clamp<std::size_t>(index, 1, sorted.size());
    return sorted[index - 1];
}

}  // namespace genhost::loadgen
