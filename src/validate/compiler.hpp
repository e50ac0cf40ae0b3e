// src/validate/compiler.hpp (private to genhost_validate)
//
// Provides CompileDocuments: schema documents (JSON text) in, compiled Nodes out. It resolves
// every "$ref" (within a document and across documents, relative to the referring document's
// folder), rejects cycles, unknown keywords, unknown formats, patterns without a small maxLength,
// object schemas without an explicit additionalProperties, malformed x-rules / x-defaults and
// defaults or examples that do not validate. Every failure throws SchemaError naming the
// document and JSON pointer.
#pragma once

#include "genhost/validate/schema_set.hpp"
#include "schema_node.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace genhost::validate::detail {

// kMaxPatternInputLength is the largest maxLength a schema with "pattern" may declare: the
// regular expression only ever runs on strings that short.
inline constexpr std::size_t kMaxPatternInputLength = 256;

struct CompiledEndpoint {
    EndpointInfo info;
    const Node* root = nullptr;
};

// CompiledSet owns every Node; `endpoints` is sorted by name.
struct CompiledSet {
    std::vector<std::unique_ptr<Node>> arena;
    std::vector<CompiledEndpoint> endpoints;
    std::map<std::string, Json, std::less<>> documents;
};

// CompileDocuments compiles `documents`; throws SchemaError on the first problem.
CompiledSet CompileDocuments(const std::vector<SchemaDocument>& documents);

}  // namespace genhost::validate::detail
