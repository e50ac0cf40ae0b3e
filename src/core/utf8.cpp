#include "genhost/core/utf8.hpp"

namespace genhost {

std::size_t Utf8SequenceLength(std::string_view s) {
    if (s.empty()) return 0;
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const auto in = [](unsigned char c, unsigned char lo, unsigned char hi) {
        return c >= lo && c <= hi;
    };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    if (in(c, 0xc2, 0xdf)) return s.size() >= 2 && in(b(1), 0x80, 0xbf) ? 2 : 0;
    if (in(c, 0xe0, 0xef)) {
        if (s.size() < 3) return 0;
        const unsigned char lo = c == 0xe0 ? 0xa0 : 0x80;
        const unsigned char hi = c == 0xed ? 0x9f : 0xbf;
        return in(b(1), lo, hi) && in(b(2), 0x80, 0xbf) ? 3 : 0;
    }
    if (in(c, 0xf0, 0xf4)) {
        if (s.size() < 4) return 0;
        const unsigned char lo = c == 0xf0 ? 0x90 : 0x80;
        const unsigned char hi = c == 0xf4 ? 0x8f : 0xbf;
        return in(b(1), lo, hi) && in(b(2), 0x80, 0xbf) && in(b(3), 0x80, 0xbf) ? 4 : 0;
    }
    return 0;
}

bool IsValidUtf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const std::size_t n = Utf8SequenceLength(s.substr(i));
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string_view Utf8Prefix(std::string_view s, std::size_t max_bytes) {
    if (s.size() <= max_bytes) return s;
    std::size_t end = max_bytes;
    // Back off the continuation bytes of the character the cut falls in, then its lead byte.
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
    return s.substr(0, end);
}

std::size_t JsonNestingDepth(std::string_view text) {
    std::size_t depth = 0;
    std::size_t deepest = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;  // the escaped character, whatever it is
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        switch (c) {
            case '"':
                in_string = true;
                break;
            case '[':
            case '{':
                if (++depth > deepest) deepest = depth;
                break;
            case ']':
            case '}':
                if (depth > 0) --depth;
                break;
            default:
                break;
        }
    }
    return deepest;
}

}  // namespace genhost
