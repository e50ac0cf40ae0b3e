// catalog/strict_json.hpp (private to the catalog module)
//
// Provides the strict readers Catalog::Load uses on its JSON documents: parsing that refuses
// duplicate object keys, key whitelists, and typed getters. Every failure throws
// std::runtime_error whose message starts with `where`, a human path such as
// `models.json: model "veo3.1": price.components[0].rate`.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::catalog::detail {

// Fail throws std::runtime_error("<where>: <what>").
[[noreturn]] void Fail(const std::string& where, const std::string& what);

// ParseStrict parses `text`, refusing duplicate keys in any object (the standard parser keeps
// the last silently, which would hide a typo such as two "price" entries).
nlohmann::json ParseStrict(std::string_view text, const std::string& where);

// Child returns the location of `key` below `where` ("a.b", or "a[3]" for an index).
std::string Child(const std::string& where, std::string_view key);
std::string Child(const std::string& where, std::size_t index);

// CheckObject throws unless `v` is an object whose keys all appear in `allowed`.
void CheckObject(const nlohmann::json& v, std::initializer_list<std::string_view> allowed,
                 const std::string& where);

// Find returns obj[key] or nullptr when absent.
const nlohmann::json* Find(const nlohmann::json& obj, std::string_view key);

// Require returns obj[key]; throws if it is absent.
const nlohmann::json& Require(const nlohmann::json& obj, std::string_view key,
                              const std::string& where);

// The getters throw unless `v` has the named type; `where` names `v`.
double GetNumber(const nlohmann::json& v, const std::string& where);  // finite
double GetNonNegative(const nlohmann::json& v, const std::string& where);
double GetPositive(const nlohmann::json& v, const std::string& where);
int GetInt(const nlohmann::json& v, const std::string& where);
bool GetBool(const nlohmann::json& v, const std::string& where);
std::string GetString(const nlohmann::json& v, const std::string& where);  // non-empty

// GetStringList returns a non-empty array of distinct non-empty strings.
std::vector<std::string> GetStringList(const nlohmann::json& v, const std::string& where);

// SplitPath splits a dotted field path ("speech.audio") into its keys; throws unless every key
// is a non-empty run of letters, digits and underscores.
std::vector<std::string> SplitPath(const nlohmann::json& v, const std::string& where);

}  // namespace genhost::catalog::detail
