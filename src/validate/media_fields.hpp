// src/validate/media_fields.hpp (private to genhost_validate)
//
// Provides CollectMediaFields, the walk behind SchemaSet::MediaFields: it follows the compiled
// schema along a valid body (the branch a discriminator or plain union selects, object
// properties, array items up to maxItems) and lists every string whose schema has format media.
// Like the other walks it never goes deeper than the schema does.
#pragma once

#include "genhost/validate/schema_set.hpp"
#include "schema_node.hpp"

#include <string>
#include <vector>

namespace genhost::validate::detail {

// CollectMediaFields appends the media strings of `value` (at `path`) to `out`.
void CollectMediaFields(const Node& node, const Json& value, std::vector<std::string>& path,
                        std::vector<MediaField>& out);

}  // namespace genhost::validate::detail
