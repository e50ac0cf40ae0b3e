// src/media/prng.hpp (private to the media module)
//
// Provides the media module's deterministic randomness: Fnv1a64 (string hash), Mix64 (splitmix64
// finaliser), and Xoshiro256, a xoshiro256** generator seeded through splitmix64 with its own
// uniform helpers. Output depends only on the seed, never on the standard library (the
// std::*_distribution classes differ between implementations), so generated media is
// byte-identical across builds. Header-only; a generator belongs to one thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace genhost::media {

// Fnv1a64 is the 64-bit FNV-1a hash of `bytes`.
constexpr std::uint64_t Fnv1a64(std::string_view bytes) {
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (const char c : bytes) {
        hash ^= static_cast<std::uint8_t>(c);
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

// Mix64 is the splitmix64 finaliser: a bijective scramble of `x`.
constexpr std::uint64_t Mix64(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

// Xoshiro256 is xoshiro256** (Blackman and Vigna) with a state expanded from one 64-bit seed by
// splitmix64.
class Xoshiro256 {
  public:
    explicit constexpr Xoshiro256(std::uint64_t seed) {
        std::uint64_t sm = seed;
        for (std::uint64_t& word : state_) {
            sm += 0x9e3779b97f4a7c15ULL;
            word = Mix64(sm);
        }
    }

    // Next is the next 64 random bits.
    constexpr std::uint64_t Next() {
        const std::uint64_t result = Rotl(state_[1] * 5, 7) * 9;
        const std::uint64_t t = state_[1] << 17;
        state_[2] ^= state_[0];
        state_[3] ^= state_[1];
        state_[1] ^= state_[2];
        state_[0] ^= state_[3];
        state_[2] ^= t;
        state_[3] = Rotl(state_[3], 45);
        return result;
    }

    // Uniform is a double in [0, 1) with 53 random bits.
    constexpr double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

    // Uniform(lo, hi) is a double in [lo, hi).
    constexpr double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }

    // Below is an integer in [0, n) (n > 0) by multiply-shift; the bias is below 2^-32 * n.
    constexpr std::uint32_t Below(std::uint32_t n) {
        return static_cast<std::uint32_t>(((Next() >> 32) * n) >> 32);
    }

  private:
    static constexpr std::uint64_t Rotl(std::uint64_t x, int k) {
        return (x << k) | (x >> (64 - k));
    }

    std::uint64_t state_[4] = {};
};

}  // namespace genhost::media
