#include "genhost/http/message.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace genhost::http {

namespace {
// ASCII case folding (HTTP field names are ASCII; no locale lookup per character).
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
}  // namespace

bool IEquals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                              [](char x, char y) { return Lower(x) == Lower(y); });
}

namespace {
int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
}  // namespace

std::optional<std::string_view> Request::Header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
        if (IEquals(k, name)) return std::string_view(v);
    }
    return std::nullopt;
}

std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%') {
            if (i + 2 >= s.size()) return std::nullopt;
            const int hi = Hex(s[i + 1]);
            const int lo = Hex(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>((hi << 4) | lo);
            i += 2;
        } else if (s[i] == '+' && plus_is_space) {
            out += ' ';
        } else {
            out += s[i];
        }
    }
    return out;
}

std::vector<std::string> Request::QueryParams(std::string_view name) const {
    std::vector<std::string> out;
    std::string_view rest = query;
    while (!rest.empty()) {
        const auto amp = rest.find('&');
        const std::string_view pair = rest.substr(0, amp);
        rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
        const auto eq = pair.find('=');
        const auto key = PercentDecode(pair.substr(0, eq), true);
        if (!key || *key != name) continue;
        if (eq == std::string_view::npos) {
            out.emplace_back();
        } else {
            // A value that does not decode (a stray '%') is kept as sent, for its check to refuse.
            const std::string_view raw = pair.substr(eq + 1);
            out.push_back(PercentDecode(raw, true).value_or(std::string(raw)));
        }
    }
    return out;
}

std::optional<std::string> Request::QueryParam(std::string_view name) const {
    auto values = QueryParams(name);
    if (values.empty()) return std::nullopt;
    return std::move(values.front());
}

void Response::SetHeader(std::string name, std::string value) {
    for (auto& [k, v] : headers) {
        if (IEquals(k, name)) {
            v = std::move(value);
            return;
        }
    }
    headers.emplace_back(std::move(name), std::move(value));
}

Response Response::Json(int status, const nlohmann::json& value) {
    Response r;
    r.status = status;
    r.body = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    r.headers.emplace_back("Content-Type", "application/json");
    return r;
}

Response Response::JsonText(int status, std::string body) {
    Response r;
    r.status = status;
    r.body = std::move(body);
    r.headers.emplace_back("Content-Type", "application/json");
    return r;
}

Response Response::NoContent() {
    Response r;
    r.status = 204;
    return r;
}

Response Response::Error(const ApiError& error, std::string_view doc_url) {
    nlohmann::json body;
    const int status = HttpStatus(error.code);
    body["error"] = status == 500 ? std::string("Internal server error") : error.message;
    if (error.code == ErrorCode::kInvalidRequest) {
        body["docUrl"] = doc_url;
        auto& issues = body["issues"] = nlohmann::json::array();
        for (const auto& issue : error.issues) {
            issues.push_back(
                {{"code", issue.code}, {"path", issue.path}, {"message", issue.message}});
        }
    }
    Response r = Json(status, body);
    if (error.retry_after_seconds) {
        r.headers.emplace_back("Retry-After", std::to_string(*error.retry_after_seconds));
    }
    if (error.code == ErrorCode::kRateLimited) {
        r.headers.emplace_back("x-should-retry", "true");
    }
    if (error.code == ErrorCode::kMethodNotAllowed) {
        std::string allow;
        for (const auto& m : error.allow) {
            if (!allow.empty()) allow += ", ";
            allow += m;
        }
        r.headers.emplace_back("Allow", allow);
    }
    return r;
}

}  // namespace genhost::http
