// genhost/validate/json_body.hpp
//
// Provides ParseRequestJson: how a request body becomes the nlohmann::json value SchemaSet
// validates. It is the first step of every request with a JSON body and of the validator's
// fuzz target (fuzz/), so both exercise exactly the same code.
//
// Thread-safety: a pure function.
#pragma once

#include "genhost/core/error.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string_view>

namespace genhost::validate {

// ParseRequestJson parses `body` as one JSON value. It refuses, with an ApiError of kind
// kInvalidRequest (a 400) carrying one `custom` issue at the empty path: nesting deeper than
// `max_depth` (bounded by the parser itself, which does not recurse, so neither it, nor the
// conversion, nor the destructor of the result ever recurses deeply), invalid JSON, invalid UTF-8
// and trailing garbage. The message quotes at most 100 code points of the body and is valid
// UTF-8 whatever the body holds. It never throws on bad input.
Result<nlohmann::json> ParseRequestJson(std::string_view body, std::size_t max_depth);

}  // namespace genhost::validate
