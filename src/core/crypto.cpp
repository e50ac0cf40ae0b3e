#include "genhost/core/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

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

}  // namespace genhost
