#include "genhost/core/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace genhost {

namespace {
// The SHA-256 implementation, fetched once: EVP_sha256() makes OpenSSL 3 look it up again on
// every call (a lock and a search of the provider's algorithms, per request for the key hash).
const EVP_MD* Sha256Md() {
    static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (md == nullptr) throw std::runtime_error("SHA256 is not available");
    return md;
}
}  // namespace

Sha256Digest Sha256(std::string_view data) {
    // One digest context per thread, set up again for each digest: EVP_Digest makes and frees a
    // context on every call (two allocations), and this runs for every authenticated request.
    struct Context {
        EVP_MD_CTX* ctx = EVP_MD_CTX_new();
        ~Context() { EVP_MD_CTX_free(ctx); }
    };
    thread_local Context context;
    Sha256Digest out{};
    unsigned int len = 0;
    if (context.ctx == nullptr || EVP_DigestInit_ex2(context.ctx, Sha256Md(), nullptr) != 1 ||
        EVP_DigestUpdate(context.ctx, data.data(), data.size()) != 1 ||
        EVP_DigestFinal_ex(context.ctx, out.data(), &len) != 1) {
        throw std::runtime_error("SHA-256 digest failed");
    }
    return out;
}

Sha256Digest HmacSha256(std::string_view key, std::string_view data) {
    Sha256Digest out{};
    unsigned int len = 0;
    if (HMAC(Sha256Md(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
             &len) == nullptr) {
        throw std::runtime_error("HMAC failed");
    }
    return out;
}

std::string RandomBytes(std::size_t n) {
    std::string out(n, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
        throw std::runtime_error("RAND_bytes failed");
    }
    return out;
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string HexEncode(std::string_view data) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.resize(data.size() * 2);
    for (std::size_t i = 0; i < data.size(); ++i) {
        const auto b = static_cast<unsigned char>(data[i]);
        out[2 * i] = kDigits[b >> 4];
        out[2 * i + 1] = kDigits[b & 0xF];
    }
    return out;
}

std::string HexEncode(const Sha256Digest& digest) {
    return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

namespace {
int HexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

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

std::optional<std::string> HexDecode(std::string_view hex) {
    if (hex.size() % 2 != 0) return std::nullopt;
    std::string out(hex.size() / 2, '\0');
    for (std::size_t i = 0; i < out.size(); ++i) {
        const int hi = HexValue(hex[2 * i]);
        const int lo = HexValue(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out[i] = static_cast<char>((hi << 4) | lo);
    }
    return out;
}

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

std::optional<std::string> Base64Decode(std::string_view in) {
    const auto& table = Base64Table();
    if (in.size() % 4 != 0) return std::nullopt;
    std::size_t padding = 0;
    if (!in.empty() && in.back() == '=') ++padding;
    if (in.size() >= 2 && in[in.size() - 2] == '=') ++padding;
    std::string out;
    out.reserve(in.size() / 4 * 3);
    for (std::size_t i = 0; i < in.size(); i += 4) {
        const bool last = i + 4 == in.size();
        int v[4];
        for (int k = 0; k < 4; ++k) {
            const char c = in[i + k];
            if (c == '=' && last && k >= 4 - static_cast<int>(padding)) {
                v[k] = 0;
                continue;
            }
            v[k] = table[static_cast<unsigned char>(c)];
            if (v[k] < 0) return std::nullopt;
        }
        const unsigned n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
        out += static_cast<char>((n >> 16) & 0xFF);
        if (!(last && padding >= 2)) out += static_cast<char>((n >> 8) & 0xFF);
        if (!(last && padding >= 1)) out += static_cast<char>(n & 0xFF);
    }
    return out;
}

bool Base64DecodeInPieces(std::string_view in, std::size_t piece,
                          const std::function<bool(std::string_view)>& sink) {
    const auto& table = Base64Table();
    std::size_t padding = 0;
    while (padding < in.size() && padding < 2 && in[in.size() - 1 - padding] == '=') ++padding;
    const std::string_view data = in.substr(0, in.size() - padding);
    // Padded input is whole quads; unpadded input may end in 2 or 3 characters, never 1.
    if (padding > 0 && in.size() % 4 != 0) return false;
    if (data.size() % 4 == 1) return false;
    piece = std::max<std::size_t>(piece / 3 * 3, 3);
    std::string out;
    out.reserve(piece);
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
