#include "genhost/core/ids.hpp"

#include "genhost/core/crypto.hpp"

#include <cctype>

namespace genhost {

std::string NewUuid() {
    std::string b = RandomBytes(16);
    b[6] = static_cast<char>((b[6] & 0x0F) | 0x40);
    b[8] = static_cast<char>((b[8] & 0x3F) | 0x80);
    const std::string hex = HexEncode(b);
    std::string out;
    out.reserve(36);
    out.append(hex, 0, 8).append("-").append(hex, 8, 4).append("-").append(hex, 12, 4);
    out.append("-").append(hex, 16, 4).append("-").append(hex, 20, 12);
    return out;
}

bool IsUuid(std::string_view s) {
    if (s.size() != 36) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') return false;
        } else if (!std::isxdigit(static_cast<unsigned char>(s[i]))) {
            return false;
        }
    }
    return true;
}

bool IsUuidV4(std::string_view s) {
    if (!IsUuid(s) || s[14] != '4') return false;
    const char v = static_cast<char>(std::tolower(static_cast<unsigned char>(s[19])));
    return v == '8' || v == '9' || v == 'a' || v == 'b';
}

}  // namespace genhost
