// src/validate/walker.hpp (private to genhost_validate)
//
// Provides the two walks over a compiled schema: CollectIssues (validation, zod-style issues in
// a stable order) and FillDefaults (ApplyDefaults). Both recurse along the schema, never deeper
// than the schema goes, so the nesting of hostile input cannot drive the recursion; arrays are
// walked no further than their maxItems and the walk stops once the issue cap is reached.
#pragma once

#include "genhost/core/error.hpp"
#include "schema_node.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace genhost::validate::detail {

// CollectIssues validates `value` against `node`; the issues' paths start with `base_path`.
// At most `cap` issues are returned.
std::vector<Issue> CollectIssues(const Node& node, const Json& value, std::size_t cap,
                                 const std::vector<std::string>& base_path = {});

// FillDefaults fills, in place, the schema defaults of every property `value` omits, following
// the branch a union selects; then the object's x-defaults.
void FillDefaults(const Node& node, Json& value);

}  // namespace genhost::validate::detail
