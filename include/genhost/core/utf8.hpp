// genhost/core/utf8.hpp
//
// Provides the UTF-8 and JSON-text checks that code reading what clients send shares:
//
// - Utf8SequenceLength: the length of the well-formed UTF-8 sequence at the start of a string
//   (Unicode's table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF), 0 for none.
// - IsValidUtf8: a whole string is well-formed UTF-8.
// - Utf8Prefix: the longest prefix of at most N bytes that ends between two characters, so a
//   text cut to a byte budget stays valid UTF-8 (a JSON serialiser refuses a cut character).
// - JsonNestingDepth: how deeply the arrays and objects of a JSON text nest, read without
//   parsing (brackets inside strings do not count), so a caller can refuse a hostile nesting
//   before nlohmann's recursive dump or comparison ever sees it.
//
// Pure functions; no allocation.
#pragma once

#include <cstddef>
#include <string_view>

namespace genhost {

std::size_t Utf8SequenceLength(std::string_view s);

bool IsValidUtf8(std::string_view s);

// Utf8Prefix returns `s` cut to at most `max_bytes` bytes, never inside a character (when `s` is
// valid UTF-8; otherwise it never cuts inside what looks like one).
std::string_view Utf8Prefix(std::string_view s, std::size_t max_bytes);

// JsonNestingDepth returns the deepest nesting of `[` and `{` in the JSON text `text` (0 for a
// scalar), counting no bracket inside a string. It does not check that `text` is JSON.
std::size_t JsonNestingDepth(std::string_view text);

}  // namespace genhost
