#include "genhost/validate/json_body.hpp"

#include <string>

namespace genhost::validate {
namespace {

// AppendUtf8 appends at most `max_code_points` code points of `s` to `out`, each byte that does
// not start a well-formed UTF-8 sequence written as U+FFFD, and "…" if `s` was cut.
void AppendUtf8(std::string& out, std::string_view s, std::size_t max_code_points) {
    std::size_t code_points = 0;
    for (std::size_t i = 0; i < s.size(); ++code_points) {
        if (code_points == max_code_points) {
            out += "\xE2\x80\xA6";  // …
            return;
        }
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;
        unsigned char lo = 0x80;
        unsigned char hi = 0xBF;
        if (c < 0x80) {
            n = 1;
        } else if (c >= 0xC2 && c <= 0xDF) {
            n = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 3;
            if (c == 0xE0) lo = 0xA0;  // no overlong forms
            if (c == 0xED) hi = 0x9F;  // no surrogates
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4;
            if (c == 0xF0) lo = 0x90;  // no overlong forms
            if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
        }
        bool ok = n > 0 && i + n <= s.size();
        for (std::size_t k = 1; ok && k < n; ++k) {
            const auto t = static_cast<unsigned char>(s[i + k]);
            ok = k == 1 ? (t >= lo && t <= hi) : (t >= 0x80 && t <= 0xBF);
        }
        if (ok) {
            out.append(s.substr(i, n));
            i += n;
        } else {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++i;
        }
    }
}

// ParseErrorText is nlohmann's parse error message without its "[json.exception...] " tag.
// The message quotes the token being read ("; last read: '...'"), which for a long string is
// most of the body, byte for byte: the quote is cut to 100 code points and the whole message
// made valid UTF-8, so a 400 never echoes megabytes or malformed text.
std::string ParseErrorText(std::string_view what) {
    if (const auto close = what.find("] "); close != std::string_view::npos) {
        what.remove_prefix(close + 2);
    }
    constexpr std::size_t kMaxEcho = 100;
    constexpr std::string_view kLastRead = "; last read: '";
    std::string out;
    const std::size_t at = what.find(kLastRead);
    if (at == std::string_view::npos) {
        AppendUtf8(out, what, 4 * kMaxEcho);
        return out;
    }
    const std::string_view head = what.substr(0, at + kLastRead.size());
    const std::string_view rest = what.substr(head.size());
    // The quote ends with "'", or "'; expected <token kind>".
    std::size_t end = rest.rfind("'; expected ");
    if (end == std::string_view::npos) end = rest.ends_with('\'') ? rest.size() - 1 : rest.size();
    AppendUtf8(out, head, 4 * kMaxEcho);
    AppendUtf8(out, rest.substr(0, end), kMaxEcho);
    AppendUtf8(out, rest.substr(end), kMaxEcho);
    return out;
}

}  // namespace

Result<nlohmann::json> ParseRequestJson(std::string_view body, std::size_t max_depth) {
    // Depth is checked before parsing so no parser or destructor ever recurses deeply. Brackets
    // inside strings do not count; an unbalanced closing bracket is left to the parser.
    std::size_t depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (const char c : body) {
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > max_depth) {
                return ApiError::InvalidRequest("Invalid JSON body",
                                                {Issue{"custom",
                                                       {},
                                                       "JSON nesting is deeper than " +
                                                           std::to_string(max_depth) + " levels"}});
            }
        } else if (c == '}' || c == ']') {
            if (depth > 0) --depth;
        }
    }
    try {
        return Result<nlohmann::json>(boost::system::in_place_value, nlohmann::json::parse(body));
    } catch (const nlohmann::json::exception& e) {
        return ApiError::InvalidRequest(
            "Invalid JSON body",
            {Issue{
                "custom", {}, "The request body is not valid JSON: " + ParseErrorText(e.what())}});
    }
}

}  // namespace genhost::validate
