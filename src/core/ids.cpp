#include "genhost/core/ids.hpp"

#include "genhost/core/crypto.hpp"

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstring>

namespace genhost {

namespace {
// FormatUuidV4 writes 16 random bytes as a version 4 UUID in lower case, setting its version
// and variant bits.
std::string FormatUuidV4(const unsigned char* random) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out(36, '-');
    std::size_t o = 0;
    for (int i = 0; i < 16; ++i) {
        unsigned char b = random[i];
        if (i == 6) b = static_cast<unsigned char>((b & 0x0F) | 0x40);
        if (i == 8) b = static_cast<unsigned char>((b & 0x3F) | 0x80);
        if (i == 4 || i == 6 || i == 8 || i == 10) ++o;  // the dashes at 8, 13, 18 and 23
        out[o++] = kDigits[b >> 4];
        out[o++] = kDigits[b & 0x0F];
    }
    return out;
}

// PooledRandom16 fills `out` with 16 bytes of OpenSSL's CSPRNG. RandomBytes costs about 2 us a
// call under load (OpenSSL 3's DRBG; 5 % of a task creation's CPU, docs/performance.md): each
// thread draws 4 kB at a time and takes 16 bytes of it per call, wiping what it has taken. The
// bytes are the same DRBG's output either way.
void PooledRandom16(unsigned char* out) {
    struct Pool {
        std::string bytes;
        std::size_t used = 0;
    };
    thread_local Pool pool;
    if (pool.used + 16 > pool.bytes.size()) {
        pool.bytes = RandomBytes(4096);
        pool.used = 0;
    }
    auto* raw = reinterpret_cast<unsigned char*>(pool.bytes.data() + pool.used);
    std::memcpy(out, raw, 16);
    std::memset(raw, 0, 16);
    pool.used += 16;
}
}  // namespace

std::string NewUuid() {
    unsigned char bytes[16];
    PooledRandom16(bytes);
    return FormatUuidV4(bytes);
}

std::string NewOrderedUuid() {
    // The first 48 bits are the milliseconds since 1970 (big-endian, as in UUID version 7); the
    // version nibble still says 4 and the variant is RFC 4122's, as SPEC.md's uuid pattern asks,
    // and the other 74 bits are random. Ids made later sort later, so a primary-key index takes
    // them at its right edge instead of at random pages (docs/decisions.md, "Task ids").
    unsigned char bytes[16];
    PooledRandom16(bytes);
    const auto ms =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    for (int i = 0; i < 6; ++i) bytes[i] = static_cast<unsigned char>(ms >> (40 - 8 * i));
    return FormatUuidV4(bytes);
}

std::string NewRequestId() {
    // splitmix64 over a 64-bit counter from a random start, with a random per-thread key:
    // distinct values for 2^64 calls per thread, and threads' sequences apart by their keys.
    struct State {
        std::uint64_t key = 0;
        std::uint64_t counter = 0;
        State() {
            const std::string seed = RandomBytes(16);
            std::memcpy(&key, seed.data(), 8);
            std::memcpy(&counter, seed.data() + 8, 8);
        }
    };
    thread_local State state;
    const auto mix = [](std::uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    };
    const std::uint64_t n = ++state.counter;
    const std::uint64_t words[2] = {mix(n + state.key), mix(n ^ ~state.key) ^ state.key};
    unsigned char bytes[sizeof words];
    std::memcpy(bytes, words, sizeof words);
    return FormatUuidV4(bytes);
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

std::string LowerUuid(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool IsUuidV4(std::string_view s) {
    if (!IsUuid(s) || s[14] != '4') return false;
    const char v = static_cast<char>(std::tolower(static_cast<unsigned char>(s[19])));
    return v == '8' || v == '9' || v == 'a' || v == 'b';
}

}  // namespace genhost
