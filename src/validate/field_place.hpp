// src/validate/field_place.hpp (private to genhost_validate)
//
// Provides FieldPlaceProblem, the walk behind SchemaSet::FieldPlace: whether a value may be put at
// a path of a body (a workflow edge's target field) without breaking the schema's shape or its
// bounds. It follows the compiled schema along the path (the branch the body's discriminator
// selects, else any branch that has room), reading the body only through const lookups, so it
// never creates an element; an array index must be below the array's maxItems (or, where the
// schema sets none, at most one past the items the body holds).
#pragma once

#include "schema_node.hpp"

#include <optional>
#include <string>
#include <vector>

namespace genhost::validate::detail {

// FieldPlaceProblem returns why `segments` (from index `at` on) names no place in `value` under
// `node`, or nullopt when a value may be put there. `value` may be null (nothing there yet).
std::optional<std::string> FieldPlaceProblem(const Node& node, const Json* value,
                                             const std::vector<std::string>& segments,
                                             std::size_t at = 0);

}  // namespace genhost::validate::detail
