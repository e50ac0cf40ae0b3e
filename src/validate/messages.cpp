#include "messages.hpp"

#include "genhost/validate/schema_set.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace genhost::validate {

std::size_t Utf16Length(std::string_view s) {
    // Every byte that is not a continuation byte starts a code point (one unit); a four-byte
    // lead byte starts a code point above U+FFFF, which UTF-16 writes as a surrogate pair.
    std::size_t units = 0;
    for (unsigned char c : s) {
        if ((c & 0xC0) != 0x80) ++units;
        if (c >= 0xF0) ++units;
    }
    return units;
}

}  // namespace genhost::validate

namespace genhost::validate::detail {

std::string Echo(std::string_view s) {
    std::size_t code_points = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
        if (code_points == kMaxEchoCodePoints) return std::string(s.substr(0, i)) + "…";
        ++code_points;
    }
    return std::string(s);
}

std::string FormatNumber(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    if (v == std::floor(v) && std::fabs(v) < 1e21) {
        std::array<char, 32> buf{};
        std::snprintf(buf.data(), buf.size(), "%.0f", v);
        return buf.data();
    }
    std::array<char, 64> buf{};
    auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    return {buf.data(), end};
}

const char* ReceivedTypeName(const Json& v) {
    switch (v.type()) {
        case Json::value_t::string:
            return "string";
        case Json::value_t::boolean:
            return "boolean";
        case Json::value_t::object:
            return "object";
        case Json::value_t::array:
            return "array";
        case Json::value_t::null:
            return "null";
        case Json::value_t::number_float:
            return std::isnan(v.get<double>()) ? "nan" : "number";
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned:
            return "number";
        default:
            return "unknown";
    }
}

std::string ExpectedTypeNames(TypeMask mask) {
    if ((mask & ~kTypeNull) != 0) mask &= static_cast<TypeMask>(~kTypeNull);
    std::string out;
    auto add = [&out](const char* name) {
        if (!out.empty()) out += " | ";
        out += name;
    };
    if (mask & kTypeString) add("string");
    if (mask & (kTypeInteger | kTypeNumber)) add("number");
    if (mask & kTypeBoolean) add("boolean");
    if (mask & kTypeObject) add("object");
    if (mask & kTypeArray) add("array");
    if (mask & kTypeNull) add("null");
    return out;
}

std::string ValueText(const Json& v) {
    switch (v.type()) {
        case Json::value_t::string:
            return Echo(v.get_ref<const std::string&>());
        case Json::value_t::number_float:
            return FormatNumber(v.get<double>());
        case Json::value_t::number_integer:
            return std::to_string(v.get<std::int64_t>());
        case Json::value_t::number_unsigned:
            return std::to_string(v.get<std::uint64_t>());
        case Json::value_t::boolean:
            return v.get<bool>() ? "true" : "false";
        case Json::value_t::null:
            return "null";
        case Json::value_t::object:
            return "[object Object]";
        default:
            return Echo(v.dump());
    }
}

std::string JoinValues(const std::vector<Json>& values) {
    std::string out;
    for (const Json& v : values) {
        if (!out.empty()) out += " | ";
        if (v.is_string()) {
            out += '\'';
            out += v.get_ref<const std::string&>();
            out += '\'';
        } else {
            out += ValueText(v);
        }
    }
    return out;
}

std::string JoinStrings(const std::vector<std::string>& values) {
    std::string out;
    for (const std::string& v : values) {
        if (!out.empty()) out += " | ";
        out += '\'';
        out += v;
        out += '\'';
    }
    return out;
}

}  // namespace genhost::validate::detail
