// src/validate/rules.hpp (private to genhost_validate)
//
// Provides the x-rules condition language (docs/schemas.md, "Cross-field rules"): compiling a
// condition from its JSON form, evaluating it against an object, and listing the paths it reads
// (so a rule can be skipped when one of them already has a structural issue).
#pragma once

#include "schema_node.hpp"

#include <string>
#include <vector>

namespace genhost::validate::detail {

using OJson = nlohmann::ordered_json;

// SchemaError is a broken schema document; SchemaSet::Compile lets it escape as the
// std::runtime_error its contract promises.
class SchemaError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Fail throws SchemaError "<location>: <what>".
[[noreturn]] void Fail(const std::string& location, const std::string& what);

// ToJson converts a document fragment (parsed keeping key order) to the body's JSON type.
Json ToJson(const OJson& value);

// CompileCond compiles the condition `json` found at `location`; throws SchemaError.
Cond CompileCond(const OJson& json, const std::string& location);

// Evaluate returns whether `cond` holds for `context` (nullptr: the value is absent).
bool Evaluate(const Cond& cond, const Json* context);

// CollectReads appends every path `cond` reads, each prefixed with `prefix`.
void CollectReads(const Cond& cond, const RulePath& prefix, std::vector<RuleRead>& out);

// FirstSegments appends the first path segment of every path `cond` reads at its own level
// (not inside any/all/where), for checking them against the object's declared properties.
void FirstSegments(const Cond& cond, std::vector<std::string>& out);

}  // namespace genhost::validate::detail
