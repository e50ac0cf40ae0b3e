#include "formats.hpp"

#include "genhost/core/crypto.hpp"

#include "genhost/validate/schema_set.hpp"
#include "messages.hpp"

#include <string>

namespace genhost::validate::detail {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Digits parses s[pos, pos+n) as a decimal number, or -1 if any character is not a digit.
int Digits(std::string_view s, std::size_t pos, std::size_t n) {
    if (pos + n > s.size()) return -1;
    int value = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (!IsDigit(s[i])) return -1;
        value = value * 10 + (s[i] - '0');
    }
    return value;
}

bool IsLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

// DateAt checks "YYYY-MM-DD" at the start of s.
bool DateAt(std::string_view s) {
    const int y = Digits(s, 0, 4);
    const int m = Digits(s, 5, 2);
    const int d = Digits(s, 8, 2);
    if (s.size() < 10 || y < 0 || m < 1 || m > 12 || d < 1 || s[4] != '-' || s[7] != '-') {
        return false;
    }
    return d <= DaysInMonth(y, m);
}

// UrlParts is what ParseUrl found: the scheme and, for URLs with an authority ("//"), the host.
struct UrlParts {
    std::string_view scheme;
    std::string_view host;
    bool has_authority = false;
};

bool IsForbiddenHostChar(char c) {
    switch (c) {
        case '#':
        case '/':
        case ':':
        case '<':
        case '>':
        case '?':
        case '@':
        case '[':
        case '\\':
        case ']':
        case '^':
        case '|':
        case '%':
        case '"':
        case '`':
        case '{':
        case '}':
            return true;
        default:
            return false;
    }
}

// ParseUrl is a strict subset of the WHATWG URL parser: no whitespace or control characters,
// no backslashes, a scheme, and for "//" URLs a non-empty host and an optional numeric port.
std::optional<UrlParts> ParseUrl(std::string_view s) {
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7F || c == '\\') return std::nullopt;
    }
    const std::size_t colon = s.find(':');
    if (colon == std::string_view::npos || colon == 0 || !IsAlpha(s[0])) return std::nullopt;
    for (std::size_t i = 1; i < colon; ++i) {
        const char c = s[i];
        if (!IsAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.') return std::nullopt;
    }
    UrlParts parts;
    parts.scheme = s.substr(0, colon);
    std::string_view rest = s.substr(colon + 1);
    if (rest.substr(0, 2) != "//") {
        if (rest.empty()) return std::nullopt;
        return parts;
    }
    parts.has_authority = true;
    rest.remove_prefix(2);
    std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
    if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
        authority.remove_prefix(at + 1);
    }
    std::string_view port;
    if (!authority.empty() && authority.front() == '[') {
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos || close == 1) return std::nullopt;
        for (char c : authority.substr(1, close - 1)) {
            if (!IsHex(c) && c != ':' && c != '.') return std::nullopt;
        }
        parts.host = authority.substr(0, close + 1);
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return std::nullopt;
            port = after.substr(1);
        }
    } else {
        const std::size_t port_colon = authority.find(':');
        parts.host = authority.substr(0, port_colon);
        if (port_colon != std::string_view::npos) port = authority.substr(port_colon + 1);
        if (parts.host.empty()) return std::nullopt;
        for (char c : parts.host) {
            if (IsForbiddenHostChar(c)) return std::nullopt;
        }
    }
    if (port.size() > 5) return std::nullopt;
    for (char c : port) {
        if (!IsDigit(c)) return std::nullopt;
    }
    if (!port.empty() && std::stoul(std::string(port)) > 65535) return std::nullopt;
    return parts;
}

bool IsMediaTypeToken(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s) {
        if (!IsAlpha(c) && !IsDigit(c) &&
            std::string_view("!#$&^_.+-").find(c) == std::string_view::npos) {
            return false;
        }
    }
    return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i];
        char y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

std::size_t MaxDataUriBytes(MediaKind kind) {
    switch (kind) {
        case MediaKind::kImage:
            return kMaxDataUriImageBytes;
        case MediaKind::kVideo:
            return kMaxDataUriVideoBytes;
        case MediaKind::kAudio:
            return kMaxDataUriAudioBytes;
    }
    return 0;
}

FormatFailure InvalidString(std::string message) { return {kInvalidString, std::move(message)}; }

std::optional<FormatFailure> LengthFailure(std::string_view s, std::size_t min, std::size_t max) {
    const std::size_t length = Utf16Length(s);
    if (length < min) {
        return FormatFailure{
            kTooSmall, "String must contain at least " + std::to_string(min) + " character(s)"};
    }
    if (length > max) {
        return FormatFailure{
            kTooBig, "String must contain at most " + std::to_string(max) + " character(s)"};
    }
    return std::nullopt;
}

// IsBase64Alphabet says whether every character of `s` is one of A-Z a-z 0-9 + /. A 5 MB image
// is 7 MB of base64, so the test is written without a branch per character: blocks of 64 are
// checked with plain arithmetic the compiler vectorises (~0.1 ns a byte instead of ~1), and the
// answer is looked at once per block.
bool IsBase64Alphabet(std::string_view s) {
    auto bad = [](unsigned char c) -> unsigned {
        const auto letter = static_cast<unsigned char>((c | 0x20) - 'a');  // A-Z, a-z -> 0..25
        const auto digit = static_cast<unsigned char>(c - '0');
        return !((letter < 26) | (digit < 10) | (c == '+') | (c == '/'));
    };
    constexpr std::size_t kBlock = 64;
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    std::size_t i = 0;
    for (; i + kBlock <= s.size(); i += kBlock) {
        unsigned any = 0;
        for (std::size_t k = 0; k < kBlock; ++k) any |= bad(p[i + k]);
        if (any != 0) return false;
    }
    for (; i < s.size(); ++i) {
        if (bad(p[i]) != 0) return false;
    }
    return true;
}

// CheckDataUri: data:<type>/<subtype>[;param=value]*;base64,<data>.
std::optional<FormatFailure> CheckDataUri(MediaKind kind, std::string_view s) {
    const std::size_t comma = s.find(',');
    if (comma == std::string_view::npos) return InvalidString("Invalid data URI");
    std::string_view header = s.substr(5, comma - 5);
    const std::string_view data = s.substr(comma + 1);
    constexpr std::string_view kBase64 = ";base64";
    if (header.size() < kBase64.size() ||
        !EqualsIgnoreCase(header.substr(header.size() - kBase64.size()), kBase64)) {
        return InvalidString("Invalid data URI");
    }
    header.remove_suffix(kBase64.size());
    const std::string_view media_type = header.substr(0, header.find(';'));
    for (std::string_view params = header.substr(media_type.size()); !params.empty();) {
        params.remove_prefix(1);  // the ';'
        const std::string_view param = params.substr(0, params.find(';'));
        const std::size_t eq = param.find('=');
        if (eq == std::string_view::npos || !IsMediaTypeToken(param.substr(0, eq)) ||
            !IsMediaTypeToken(param.substr(eq + 1))) {
            return InvalidString("Invalid data URI");
        }
        params.remove_prefix(param.size());
    }
    if (media_type.empty()) return InvalidString("Unsupported asset type");
    const std::size_t slash = media_type.find('/');
    if (slash == std::string_view::npos || !IsMediaTypeToken(media_type.substr(0, slash)) ||
        !IsMediaTypeToken(media_type.substr(slash + 1))) {
        return InvalidString("Invalid data URI");
    }
    if (!EqualsIgnoreCase(media_type.substr(0, slash), MediaKindName(kind))) {
        return InvalidString("Unsupported asset type");
    }
    const std::optional<std::size_t> size = Base64DecodedSize(data);
    if (!size || *size == 0) return InvalidString("Invalid data URI");
    if (*size > MaxDataUriBytes(kind)) {
        return FormatFailure{kTooBig, "Asset size exceeds the maximum for the type"};
    }
    // Only now, with the length known to be bounded, look at every character.
    std::size_t padding_from = data.size();
    while (padding_from > 0 && data[padding_from - 1] == '=') --padding_from;
    if (!IsBase64Alphabet(data.substr(0, padding_from))) return InvalidString("Invalid data URI");
    return std::nullopt;
}

std::optional<FormatFailure> CheckUploadUri(std::string_view s) {
    if (auto failure = LengthFailure(s, kUploadUriMinLength, kUploadUriMaxLength)) return failure;
    const std::string_view token = s.substr(kUploadScheme.size());
    if (token.empty()) return InvalidString("Invalid URL");
    for (char c : token) {
        if (!IsAlpha(c) && !IsDigit(c) && c != '.' && c != '_' && c != '~' && c != '-') {
            return InvalidString("Invalid URL");
        }
    }
    return std::nullopt;
}

std::optional<FormatFailure> CheckHttpsUrl(std::string_view s) {
    const std::optional<UrlParts> url = ParseUrl(s);
    if (!url || !url->has_authority) return InvalidString("Invalid URL");
    if (url->scheme != "https") return InvalidString("Only HTTPS URLs are allowed");
    return std::nullopt;
}

std::optional<FormatFailure> CheckMedia(MediaKind kind, std::string_view s) {
    if (s.starts_with("data:")) return CheckDataUri(kind, s);
    if (s.starts_with(kUploadScheme)) return CheckUploadUri(s);
    if (s.starts_with("https://")) {
        if (auto failure = LengthFailure(s, kHttpsUrlMinLength, kHttpsUrlMaxLength)) {
            return failure;
        }
    }
    return CheckHttpsUrl(s);
}

}  // namespace

bool IsUuidV4(std::string_view s) {
    if (s.size() != 36) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') return false;
        } else if (!IsHex(s[i])) {
            return false;
        }
    }
    return s[14] == '4' && std::string_view("89abAB").find(s[19]) != std::string_view::npos;
}

bool IsDate(std::string_view s) { return s.size() == 10 && DateAt(s); }

bool IsDateTime(std::string_view s) {
    // YYYY-MM-DDTHH:MM:SS[.fraction]Z, as zod's datetime() without offsets.
    if (s.size() < 20 || !DateAt(s) || s[10] != 'T' || s[13] != ':' || s[16] != ':') return false;
    const int hh = Digits(s, 11, 2);
    const int mm = Digits(s, 14, 2);
    const int ss = Digits(s, 17, 2);
    if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 59) return false;
    std::size_t i = 19;
    if (s[i] == '.') {
        ++i;
        const std::size_t digits_from = i;
        while (i < s.size() && IsDigit(s[i])) ++i;
        if (i == digits_from) return false;
    }
    return i + 1 == s.size() && s[i] == 'Z';
}

std::optional<FormatFailure> CheckFormat(Format format, MediaKind kind, std::string_view s) {
    switch (format) {
        case Format::kNone:
            return std::nullopt;
        case Format::kUuid:
            if (IsUuidV4(s)) return std::nullopt;
            return InvalidString("Invalid uuid");
        case Format::kDateTime:
            if (IsDateTime(s)) return std::nullopt;
            return InvalidString("Invalid datetime");
        case Format::kDate:
            if (IsDate(s)) return std::nullopt;
            return InvalidString("Invalid date");
        case Format::kUri:
            if (ParseUrl(s)) return std::nullopt;
            return InvalidString("Invalid url");
        case Format::kHttpsUrl:
            return CheckHttpsUrl(s);
        case Format::kMedia:
            return CheckMedia(kind, s);
    }
    return std::nullopt;
}

std::optional<Format> FormatByName(std::string_view name) {
    if (name == "uuid") return Format::kUuid;
    if (name == "date-time") return Format::kDateTime;
    if (name == "date") return Format::kDate;
    if (name == "uri") return Format::kUri;
    if (name == "https-url") return Format::kHttpsUrl;
    if (name == "media") return Format::kMedia;
    return std::nullopt;
}

}  // namespace genhost::validate::detail
