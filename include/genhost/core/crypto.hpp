// genhost/core/crypto.hpp
//
// Provides the small cryptographic helpers genhost needs, on OpenSSL 3: SHA-256, HMAC-SHA-256,
// secure random bytes, constant-time comparison, hex and base64 codecs. All are thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace genhost {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Sha256 returns the SHA-256 digest of `data`.
Sha256Digest Sha256(std::string_view data);

// HmacSha256 returns HMAC-SHA-256 of `data` under `key`.
Sha256Digest HmacSha256(std::string_view key, std::string_view data);

// RandomBytes returns `n` bytes from OpenSSL's CSPRNG.
std::string RandomBytes(std::size_t n);

// ConstantTimeEqual compares two byte strings without an early exit on the first difference.
bool ConstantTimeEqual(std::string_view a, std::string_view b);

// HexEncode returns lowercase hex of `data`.
std::string HexEncode(std::string_view data);
std::string HexEncode(const Sha256Digest& digest);

// HexDecode decodes hex (either case); nullopt on odd length or a non-hex character.
std::optional<std::string> HexDecode(std::string_view hex);

// Base64Encode returns standard base64 with padding; Base64UrlEncode the URL-safe alphabet
// without padding.
std::string Base64Encode(std::string_view data);
std::string Base64UrlEncode(std::string_view data);

// Base64Decode strictly decodes standard base64 (padding required, no whitespace); nullopt on
// malformed input.
std::optional<std::string> Base64Decode(std::string_view b64);

// Base64DecodedSize returns the number of bytes base64 `data` decodes to (padded or unpadded),
// or nullopt if its length cannot be base64. It reads only the length and the trailing '='s.
std::optional<std::size_t> Base64DecodedSize(std::string_view data);

// Base64DecodeInPieces decodes standard base64 as Base64Decode does, except that padding may be
// left out, handing the bytes to `sink` in pieces of at most `piece` bytes instead of building
// one string (a data URI of megabytes goes to a file without a decoded copy in memory). Returns
// false for invalid input (what `sink` got so far is then to be discarded) or when `sink`
// returns false.
bool Base64DecodeInPieces(std::string_view b64, std::size_t piece,
                          const std::function<bool(std::string_view)>& sink);

// Base64UrlDecode strictly decodes the URL-safe alphabet without padding (what Base64UrlEncode
// writes); nullopt on anything else.
std::optional<std::string> Base64UrlDecode(std::string_view b64url);

}  // namespace genhost
