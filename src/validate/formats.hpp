// src/validate/formats.hpp (private to genhost_validate)
//
// Provides the string formats of the schema dialect: uuid (version 4), date-time (ISO 8601 in
// UTC with a trailing Z), date (YYYY-MM-DD), uri, https-url and media (an HTTPS URL, an upload
// URI or a base64 data URI of the right media kind). Every check is a single linear pass with no
// regular expression, so it is safe on inputs of any length; a data URI is sized from its base64
// length, never decoded. Whether a URL's host is an IP literal or private, and whether the asset
// can be fetched, is the asset fetcher's job, not this one.
#pragma once

#include "schema_node.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace genhost::validate::detail {

inline constexpr std::string_view kUploadScheme = "genhost://";
inline constexpr std::size_t kHttpsUrlMinLength = 13;
inline constexpr std::size_t kHttpsUrlMaxLength = 2048;
inline constexpr std::size_t kUploadUriMinLength = 13;
inline constexpr std::size_t kUploadUriMaxLength = 5000;
inline constexpr std::size_t kMaxDataUriImageBytes = 5 * 1024 * 1024;
inline constexpr std::size_t kMaxDataUriVideoBytes = 16 * 1024 * 1024;
inline constexpr std::size_t kMaxDataUriAudioBytes = 16 * 1024 * 1024;

// FormatFailure is one issue a format check found: its zod code and message.
struct FormatFailure {
    const char* code;
    std::string message;
};

// CheckFormat returns the failure of `s` against `format` (with `kind` for media), or nullopt
// when `s` satisfies it.
std::optional<FormatFailure> CheckFormat(Format format, MediaKind kind, std::string_view s);

// FormatByName maps a "format" keyword value to a Format, or nullopt for an unknown one.
std::optional<Format> FormatByName(std::string_view name);

bool IsUuidV4(std::string_view s);
bool IsDateTime(std::string_view s);
bool IsDate(std::string_view s);

}  // namespace genhost::validate::detail
