#include "genhost/http/metrics.hpp"

#include <fmt/format.h>

namespace genhost::http {

namespace {

using metrics::EscapeLabel;

// MethodLabel bounds the method label: the methods an HTTP API is called with keep their name,
// and so does "-" (a request whose method could not be read); anything else a client sends is
// "other" (a label value per method anyone invents would grow /metrics without end).
std::string_view MethodLabel(std::string_view method) {
    static constexpr std::string_view kKnown[] = {"GET",     "HEAD",  "POST",  "PUT",     "DELETE",
                                                  "OPTIONS", "PATCH", "TRACE", "CONNECT", "-"};
    for (const auto known : kKnown) {
        if (method == known) return known;
    }
    return "other";
}
}  // namespace

void Metrics::ObserveRequest(std::string_view route, std::string_view method, int status,
                             double seconds) {
    method = MethodLabel(method);
    std::lock_guard lock(mu_);
    auto it =
        series_.find(std::tuple<std::string_view, std::string_view, int>(route, method, status));
    if (it == series_.end()) {
        it = series_.emplace(std::tuple(std::string(route), std::string(method), status), Series{})
                 .first;
    }
    auto& s = it->second;
    ++s.count;
    s.sum += seconds;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
        if (seconds <= kBuckets[i]) ++s.buckets[i];
    }
}

std::string Metrics::Render(const std::vector<Sample>& samples) const {
    std::string out;
    out += "# HELP genhost_http_requests_total HTTP requests answered.\n";
    out += "# TYPE genhost_http_requests_total counter\n";
    std::map<std::tuple<std::string, std::string, int>, Series, std::less<>> copy;
    {
        std::lock_guard lock(mu_);
        copy = series_;
    }
    for (const auto& [key, s] : copy) {
        const auto& [route, method, status] = key;
        out += fmt::format(
            "genhost_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{}\"}} {}\n",
            EscapeLabel(route), EscapeLabel(method), status, s.count);
    }
    out += "# HELP genhost_http_request_duration_seconds Time to answer an HTTP request.\n";
    out += "# TYPE genhost_http_request_duration_seconds histogram\n";
    for (const auto& [key, s] : copy) {
        const auto& [route, method, status] = key;
        const std::string labels = fmt::format("route=\"{}\",method=\"{}\",status=\"{}\"",
                                               EscapeLabel(route), EscapeLabel(method), status);
        for (std::size_t i = 0; i < kBuckets.size(); ++i) {
            out += fmt::format("genhost_http_request_duration_seconds_bucket{{{},le=\"{}\"}} {}\n",
                               labels, kBuckets[i], s.buckets[i]);
        }
        out += fmt::format("genhost_http_request_duration_seconds_bucket{{{},le=\"+Inf\"}} {}\n",
                           labels, s.count);
        out += fmt::format("genhost_http_request_duration_seconds_sum{{{}}} {}\n", labels, s.sum);
        out +=
            fmt::format("genhost_http_request_duration_seconds_count{{{}}} {}\n", labels, s.count);
    }
    registry_.Render(out);
    std::string last_name;
    for (const auto& g : samples) {
        if (g.name != last_name) {
            out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", g.name, g.help, g.name,
                               g.counter ? "counter" : "gauge");
            last_name = g.name;
        }
        out += g.name;
        if (!g.labels.empty()) {
            out += '{';
            for (std::size_t i = 0; i < g.labels.size(); ++i) {
                if (i > 0) out += ',';
                out += fmt::format("{}=\"{}\"", g.labels[i].first, EscapeLabel(g.labels[i].second));
            }
            out += '}';
        }
        out += " " + metrics::FormatValue(g.value) + "\n";
    }
    return out;
}

}  // namespace genhost::http
