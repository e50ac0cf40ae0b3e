#include "genhost/http/router.hpp"

#include <algorithm>

namespace genhost::http {

namespace {
std::vector<std::string_view> Split(std::string_view path) {
    std::vector<std::string_view> out;
    if (path.empty() || path.front() != '/') return out;
    path.remove_prefix(1);
    while (true) {
        const auto slash = path.find('/');
        out.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos) break;
        path.remove_prefix(slash + 1);
    }
    return out;
}
}  // namespace

void Router::Add(std::string method, std::string pattern, Handler handler) {
    Route r;
    r.method = std::move(method);
    r.pattern = std::move(pattern);
    for (const auto s : Split(r.pattern)) r.segments.emplace_back(s);
    r.handler = std::move(handler);
    routes_.push_back(std::move(r));
}

void Router::AddStreaming(std::string method, std::string pattern, std::size_t max_body_bytes,
                          StreamingHandler handler) {
    Add(std::move(method), std::move(pattern), nullptr);
    routes_.back().streaming = std::move(handler);
    routes_.back().body_limit = max_body_bytes;
}

bool Router::MatchSegments(const Route& route, const std::vector<std::string_view>& segments,
                           std::map<std::string, std::string>* params) {
    if (route.segments.size() != segments.size()) return false;
    for (std::size_t i = 0; i < segments.size(); ++i) {
        const std::string& want = route.segments[i];
        if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
            if (segments[i].empty()) return false;
            if (params) (*params)[want.substr(1, want.size() - 2)] = std::string(segments[i]);
        } else if (want != segments[i]) {
            return false;
        }
    }
    return true;
}

Router::Match Router::Find(std::string_view method, std::string_view path) const {
    Match m;
    const auto segments = Split(path);
    if (segments.empty()) return m;
    const std::string_view effective = method == "HEAD" ? std::string_view("GET") : method;
    for (const auto& route : routes_) {
        if (!MatchSegments(route, segments, nullptr)) continue;
        if (route.method == effective && m.kind != Match::Kind::kFound) {
            m.kind = Match::Kind::kFound;
            if (route.streaming) {
                m.streaming = &route.streaming;
                m.body_limit = route.body_limit;
            } else {
                m.handler = &route.handler;
            }
            m.pattern = route.pattern;
            MatchSegments(route, segments, &m.params);
        }
        if (std::find(m.allow.begin(), m.allow.end(), route.method) == m.allow.end()) {
            m.allow.push_back(route.method);
            if (route.method == "GET" &&
                std::find(m.allow.begin(), m.allow.end(), "HEAD") == m.allow.end()) {
                m.allow.emplace_back("HEAD");
            }
        }
        if (m.pattern.empty()) m.pattern = route.pattern;
    }
    if (m.kind != Match::Kind::kFound && !m.allow.empty()) {
        m.kind = Match::Kind::kMethodNotAllowed;
    }
    return m;
}

}  // namespace genhost::http
