// src/validate/messages.hpp (private to genhost_validate)
//
// Provides the wording of validation issues, copied from zod v3 so clients that match on
// messages see what they would see from the hosted service: type names, value lists, numbers
// printed as JavaScript prints them, and bounded echoes of client input.
#pragma once

#include "schema_node.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace genhost::validate::detail {

// Issue codes used by the validator (a subset of zod's, see docs/schemas.md).
inline constexpr const char* kInvalidType = "invalid_type";
inline constexpr const char* kInvalidEnumValue = "invalid_enum_value";
inline constexpr const char* kInvalidUnionDiscriminator = "invalid_union_discriminator";
inline constexpr const char* kUnrecognizedKeys = "unrecognized_keys";
inline constexpr const char* kInvalidString = "invalid_string";
inline constexpr const char* kTooSmall = "too_small";
inline constexpr const char* kTooBig = "too_big";
inline constexpr const char* kCustom = "custom";

// kMaxEchoCodePoints bounds how much of a client's value is repeated in a message; longer
// values are cut at a code point boundary and end with "…".
inline constexpr std::size_t kMaxEchoCodePoints = 100;

// kMaxListedKeys bounds the keys named by one unrecognized_keys message.
inline constexpr std::size_t kMaxListedKeys = 20;

// Echo returns `s` cut to kMaxEchoCodePoints code points.
std::string Echo(std::string_view s);

// FormatNumber prints `v` as JavaScript's String(v) does for the values schemas use
// (integers without ".0", shortest round-trip form otherwise).
std::string FormatNumber(double v);

// ReceivedTypeName is zod's parsed-type name of `v`: string, number, boolean, object, array,
// null (integral and fractional numbers are both "number").
const char* ReceivedTypeName(const Json& v);

// ExpectedTypeNames is the "Expected ..." text of a type mask: zod names joined by " | ",
// integer written "number", and null left out when another type is present (zod's nullable).
std::string ExpectedTypeNames(TypeMask mask);

// JoinValues is zod's util.joinValues: strings in single quotes, other values as JavaScript
// prints them, joined by " | ".
std::string JoinValues(const std::vector<Json>& values);
std::string JoinStrings(const std::vector<std::string>& values);

// ValueText prints a JSON value the way JavaScript's template literal would (`${value}`).
std::string ValueText(const Json& v);

}  // namespace genhost::validate::detail
