#include "genhost/core/crypto.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>

// The base64 codecs of crypto.hpp. They need no OpenSSL, so this file stands alone (the
// validator's fuzz target links it without the rest of core).
namespace genhost {

namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kB64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Encode64(std::string_view data, const char* alphabet, bool pad) {
    std::string out;
    out.reserve((data.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < data.size(); i += 3) {
        const auto n = (static_cast<unsigned char>(data[i]) << 16) |
                       (static_cast<unsigned char>(data[i + 1]) << 8) |
                       static_cast<unsigned char>(data[i + 2]);
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        out += alphabet[(n >> 6) & 63];
        out += alphabet[n & 63];
    }
    const std::size_t rest = data.size() - i;
    if (rest > 0) {
        unsigned n = static_cast<unsigned char>(data[i]) << 16;
        if (rest == 2) n |= static_cast<unsigned char>(data[i + 1]) << 8;
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        if (rest == 2) {
            out += alphabet[(n >> 6) & 63];
        } else if (pad) {
            out += '=';
        }
        if (pad) out += '=';
    }
    return out;
}
}  // namespace

std::string Base64Encode(std::string_view data) { return Encode64(data, kB64, true); }

std::string Base64UrlEncode(std::string_view data) { return Encode64(data, kB64Url, false); }

namespace {
// Base64Table maps each byte to its value in the standard alphabet, -1 outside it.
const std::array<std::int8_t, 256>& Base64Table() {
    static const auto table = [] {
        std::array<std::int8_t, 256> t{};
        t.fill(-1);
        for (int i = 0; i < 64; ++i)
            t[static_cast<unsigned char>(kB64[i])] = static_cast<std::int8_t>(i);
        return t;
    }();
    return table;
}
}  // namespace

std::optional<std::size_t> Base64DecodedSize(std::string_view data) {
    std::size_t padding = 0;
    while (padding < data.size() && padding < 3 && data[data.size() - 1 - padding] == '=') {
        ++padding;
    }
    if (padding > 2) return std::nullopt;
    if (padding > 0 && data.size() % 4 != 0) return std::nullopt;
    const std::size_t n = data.size() - padding;
    const std::size_t tail = n % 4;
    if (tail == 1) return std::nullopt;
    return n / 4 * 3 + (tail == 0 ? 0 : tail - 1);
}

std::optional<std::string> Base64Decode(std::string_view in) {
    if (in.size() % 4 != 0) return std::nullopt;  // padding required
    std::string out;
    out.reserve(in.size() / 4 * 3);
    const bool ok = Base64DecodeInPieces(in, in.size() + 3, [&](std::string_view piece) {
        out.append(piece);
        return true;
    });
    if (!ok) return std::nullopt;
    return out;
}

bool Base64DecodeInPieces(std::string_view in, std::size_t piece,
                          const std::function<bool(std::string_view)>& sink) {
    if (!Base64DecodedSize(in)) return false;  // a length base64 cannot have
    const auto& table = Base64Table();
    std::size_t padding = 0;
    while (padding < in.size() && in[in.size() - 1 - padding] == '=') ++padding;
    const std::string_view data = in.substr(0, in.size() - padding);
    piece = std::max<std::size_t>(piece / 3 * 3, 3);
    std::string out;
    out.reserve(std::min(piece, data.size()));
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    std::size_t i = 0;
    for (; i + 4 <= data.size(); i += 4) {
        const int a = table[p[i]], b = table[p[i + 1]], c = table[p[i + 2]], d = table[p[i + 3]];
        if ((a | b | c | d) < 0) return false;
        const unsigned n = (unsigned(a) << 18) | (unsigned(b) << 12) | (unsigned(c) << 6) | d;
        out += static_cast<char>((n >> 16) & 0xFF);
        out += static_cast<char>((n >> 8) & 0xFF);
        out += static_cast<char>(n & 0xFF);
        if (out.size() >= piece) {
            if (!sink(out)) return false;
            out.clear();
        }
    }
    if (const std::size_t rest = data.size() - i; rest > 0) {
        int v[3] = {0, 0, 0};
        for (std::size_t k = 0; k < rest; ++k) {
            v[k] = table[p[i + k]];
            if (v[k] < 0) return false;
        }
        const unsigned n = (unsigned(v[0]) << 18) | (unsigned(v[1]) << 12) | (unsigned(v[2]) << 6);
        out += static_cast<char>((n >> 16) & 0xFF);
        if (rest == 3) out += static_cast<char>((n >> 8) & 0xFF);
    }
    return out.empty() || sink(out);
}

std::optional<std::string> Base64UrlDecode(std::string_view in) {
    std::string standard;
    standard.reserve(in.size() + 3);
    for (const char c : in) {
        if (c == '+' || c == '/' || c == '=') return std::nullopt;
        standard += c == '-' ? '+' : c == '_' ? '/' : c;
    }
    while (standard.size() % 4 != 0) standard += '=';
    return Base64Decode(standard);
}

}  // namespace genhost
