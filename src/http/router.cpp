#include "genhost/http/router.hpp"

#include <algorithm>
#include <stdexcept>

namespace genhost::http {

namespace {
// Split cuts an absolute path into its segments, written to `out`; it returns how many there
// are, 0 for a path that is not absolute and kMaxSegments + 1 for one with more than
// kMaxSegments (no route has that many).
std::size_t Split(std::string_view path, std::span<std::string_view> out) {
    if (path.empty() || path.front() != '/') return 0;
    path.remove_prefix(1);
    std::size_t n = 0;
    while (true) {
        if (n == out.size()) return out.size() + 1;
        const auto slash = path.find('/');
        out[n++] = path.substr(0, slash);
        if (slash == std::string_view::npos) return n;
        path.remove_prefix(slash + 1);
    }
}
}  // namespace

void Router::Add(std::string method, std::string pattern, Handler handler) {
    Route r;
    r.method = std::move(method);
    r.pattern = std::move(pattern);
    std::array<std::string_view, kMaxSegments> segments;
    const std::size_t n = Split(r.pattern, segments);
    if (n == 0 || n > kMaxSegments) throw std::invalid_argument("bad route pattern: " + r.pattern);
    for (std::size_t i = 0; i < n; ++i) r.segments.emplace_back(segments[i]);
    r.handler = std::move(handler);
    routes_.push_back(std::move(r));
}

void Router::Add(std::string method, std::string pattern, GatedHandler route) {
    Add(std::move(method), std::move(pattern), std::move(route.handler));
    routes_.back().gate = std::move(route.gate);
}

void Router::AddStreaming(std::string method, std::string pattern, std::size_t max_body_bytes,
                          StreamingHandler handler) {
    Add(std::move(method), std::move(pattern), nullptr);
    routes_.back().streaming = std::move(handler);
    routes_.back().body_limit = max_body_bytes;
}

void Router::AddUpgrade(std::string pattern, UpgradeRoute route) {
    Add("GET", std::move(pattern), nullptr);
    routes_.back().upgrade = std::move(route);
}

bool Router::MatchSegments(const Route& route, std::span<const std::string_view> segments,
                           std::map<std::string, std::string>* params) {
    if (route.segments.size() != segments.size()) return false;
    for (std::size_t i = 0; i < segments.size(); ++i) {
        const std::string& want = route.segments[i];
        if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
            if (segments[i].empty()) return false;
            if (params) params->emplace(want.substr(1, want.size() - 2), segments[i]);
        } else if (want != segments[i]) {
            return false;
        }
    }
    return true;
}

Router::Match Router::Find(std::string_view method, std::string_view path) const {
    Match m;
    std::array<std::string_view, kMaxSegments> storage;
    const std::size_t n = Split(path, storage);
    if (n == 0 || n > kMaxSegments) return m;
    const std::span<const std::string_view> segments(storage.data(), n);
    const std::string_view effective = method == "HEAD" ? std::string_view("GET") : method;
    // The first route with this path and method answers; the allow list (for a 405) is only
    // gathered when there is none.
    const Route* known = nullptr;
    for (const auto& route : routes_) {
        if (!MatchSegments(route, segments, nullptr)) continue;
        if (known == nullptr) known = &route;
        if (route.method != effective) continue;
        // A WebSocket route answers GET, not HEAD.
        if (route.upgrade && method != route.method) continue;
        m.kind = Match::Kind::kFound;
        if (route.upgrade) {
            m.kind = Match::Kind::kUpgrade;
            m.upgrade = &*route.upgrade;
        } else if (route.streaming) {
            m.streaming = &route.streaming;
            m.body_limit = route.body_limit;
        } else {
            m.handler = &route.handler;
        }
        if (route.gate) m.gate = &route.gate;
        m.pattern = route.pattern;
        MatchSegments(route, segments, &m.params);
        return m;
    }
    if (known == nullptr) return m;
    m.kind = Match::Kind::kMethodNotAllowed;
    m.pattern = known->pattern;
    for (const auto& route : routes_) {
        if (!MatchSegments(route, segments, nullptr)) continue;
        if (std::find(m.allow.begin(), m.allow.end(), route.method) == m.allow.end()) {
            m.allow.push_back(route.method);
            if (route.method == "GET" && !route.upgrade &&
                std::find(m.allow.begin(), m.allow.end(), "HEAD") == m.allow.end()) {
                m.allow.emplace_back("HEAD");
            }
        }
    }
    return m;
}

}  // namespace genhost::http
