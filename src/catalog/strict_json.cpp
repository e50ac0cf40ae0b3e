#include "strict_json.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>

namespace genhost::catalog::detail {

using nlohmann::json;

void Fail(const std::string& where, const std::string& what) {
    throw std::runtime_error(where + ": " + what);
}

json ParseStrict(std::string_view text, const std::string& where) {
    // One key set per open object; arrays push nothing, so the innermost object is on top.
    std::vector<std::set<std::string>> open_objects;
    const json::parser_callback_t check_keys = [&](int /*depth*/, json::parse_event_t event,
                                                   json& parsed) {
        switch (event) {
            case json::parse_event_t::object_start:
                open_objects.emplace_back();
                break;
            case json::parse_event_t::object_end:
                open_objects.pop_back();
                break;
            case json::parse_event_t::key:
                if (!open_objects.back().insert(parsed.get<std::string>()).second) {
                    Fail(where, "duplicate key \"" + parsed.get<std::string>() + "\"");
                }
                break;
            default:
                break;
        }
        return true;
    };
    try {
        return json::parse(text.begin(), text.end(), check_keys);
    } catch (const json::parse_error& e) {
        Fail(where, std::string("invalid JSON: ") + e.what());
    }
}

std::string Child(const std::string& where, std::string_view key) {
    return where + "." + std::string(key);
}

std::string Child(const std::string& where, std::size_t index) {
    return where + "[" + std::to_string(index) + "]";
}

void CheckObject(const json& v, std::initializer_list<std::string_view> allowed,
                 const std::string& where) {
    if (!v.is_object()) Fail(where, "must be an object");
    for (const auto& item : v.items()) {
        bool known = false;
        for (std::string_view a : allowed) known = known || a == item.key();
        if (!known) Fail(where, "unknown key \"" + item.key() + "\"");
    }
}

const json* Find(const json& obj, std::string_view key) {
    if (!obj.is_object()) return nullptr;
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

const json& Require(const json& obj, std::string_view key, const std::string& where) {
    const json* v = Find(obj, key);
    if (v == nullptr) Fail(where, "missing required key \"" + std::string(key) + "\"");
    return *v;
}

double GetNumber(const json& v, const std::string& where) {
    if (!v.is_number()) Fail(where, "must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) Fail(where, "must be finite");
    return d;
}

double GetNonNegative(const json& v, const std::string& where) {
    const double d = GetNumber(v, where);
    if (d < 0) Fail(where, "must not be negative");
    return d;
}

double GetPositive(const json& v, const std::string& where) {
    const double d = GetNumber(v, where);
    if (d <= 0) Fail(where, "must be greater than 0");
    return d;
}

int GetInt(const json& v, const std::string& where) {
    if (!v.is_number_integer()) Fail(where, "must be an integer");
    const auto i = v.get<std::int64_t>();
    if (i < -2147483647 || i > 2147483647) Fail(where, "is out of range");
    return static_cast<int>(i);
}

bool GetBool(const json& v, const std::string& where) {
    if (!v.is_boolean()) Fail(where, "must be true or false");
    return v.get<bool>();
}

std::string GetString(const json& v, const std::string& where) {
    if (!v.is_string()) Fail(where, "must be a string");
    auto s = v.get<std::string>();
    if (s.empty()) Fail(where, "must not be empty");
    return s;
}

std::vector<std::string> GetStringList(const json& v, const std::string& where) {
    if (!v.is_array() || v.empty()) Fail(where, "must be a non-empty array of strings");
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < v.size(); ++i) {
        auto s = GetString(v[i], Child(where, i));
        if (!seen.insert(s).second) Fail(Child(where, i), "duplicate value \"" + s + "\"");
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<std::string> SplitPath(const json& v, const std::string& where) {
    const std::string path = GetString(v, where);
    std::vector<std::string> keys;
    std::string current;
    for (char c : path + ".") {
        if (c == '.') {
            if (current.empty()) Fail(where, "\"" + path + "\" is not a dotted field path");
            keys.push_back(std::move(current));
            current.clear();
        } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
            current.push_back(c);
        } else {
            Fail(where, "\"" + path + "\" is not a dotted field path");
        }
    }
    return keys;
}

}  // namespace genhost::catalog::detail
