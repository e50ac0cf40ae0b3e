#include "genhost/api/page.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"

#include <charconv>

namespace genhost::api {

namespace {

constexpr std::size_t kMaxCursorLength = 1000;  // SPEC.md

std::optional<store::Keyset> DecodeCursor(std::string_view text) {
    const auto raw = Base64UrlDecode(text);
    if (!raw) return std::nullopt;
    const auto dot = raw->find('.');
    if (dot == std::string::npos) return std::nullopt;
    long long micros = 0;
    const auto [end, ec] = std::from_chars(raw->data(), raw->data() + dot, micros);
    if (ec != std::errc() || end != raw->data() + dot) return std::nullopt;
    std::string id = raw->substr(dot + 1);
    if (!IsUuid(id)) return std::nullopt;
    return store::Keyset{SysTime{std::chrono::microseconds{micros}}, std::move(id)};
}

}  // namespace

Result<PageQuery> ParsePageQuery(const http::Request& req, int default_limit) {
    PageQuery out;
    out.limit = default_limit;
    std::vector<Issue> issues;
    if (const auto text = req.QueryParam("limit")) {
        long long value = 0;
        const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
        if (text->empty() || ec == std::errc::invalid_argument ||
            end != text->data() + text->size()) {
            issues.push_back({"invalid_type", {"limit"}, "Expected integer, received string"});
        } else if (ec == std::errc::result_out_of_range || value > kMaxPageSize) {
            issues.push_back({"too_big", {"limit"}, "Number must be less than or equal to 100"});
        } else if (value < 1) {
            issues.push_back({"too_small", {"limit"}, "Number must be greater than or equal to 1"});
        } else {
            out.limit = static_cast<int>(value);
        }
    }
    if (const auto text = req.QueryParam("cursor")) {
        if (text->empty()) {
            issues.push_back(
                {"too_small", {"cursor"}, "String must contain at least 1 character(s)"});
        } else if (text->size() > kMaxCursorLength) {
            issues.push_back(
                {"too_big", {"cursor"}, "String must contain at most 1000 character(s)"});
        } else if (!(out.after = DecodeCursor(*text))) {
            issues.push_back({"invalid_string", {"cursor"}, "Invalid cursor"});
        }
    }
    if (!issues.empty()) {
        return Result<PageQuery>(boost::system::in_place_error,
                                 ApiError::InvalidRequest("Invalid request", std::move(issues)));
    }
    return out;
}

std::string EncodeCursor(const store::Keyset& keyset) {
    return Base64UrlEncode(std::to_string(keyset.at.time_since_epoch().count()) + "." + keyset.id);
}

nlohmann::json PageJson(nlohmann::json data, const std::optional<store::Keyset>& next) {
    return {{"data", std::move(data)},
            {"hasMore", next.has_value()},
            {"nextCursor", next ? nlohmann::json(EncodeCursor(*next)) : nlohmann::json(nullptr)}};
}

}  // namespace genhost::api
