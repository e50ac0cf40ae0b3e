// genhost/api/workflows.hpp
//
// Provides what publishing a workflow means (docs/workflows.md), in one place for both ways
// operators publish: `genhost workflows publish FILE.json --org NAME` (src/main.cpp) and
// POST /_genhost/workflows (src/api/workflows.cpp).
//
// A publication is `{name, description?, graph}` (schemas/workflows_publish.json). The schema
// checks its shape (node kinds, ids, primitive values, media strings, edges); CheckWorkflowGraph
// then checks what a schema cannot, reporting every problem at its path under ["graph", ...]:
// unique node ids, at least one generation node, generation endpoints, edges between existing
// nodes (from an output the source has, into a generation node's field, one edge per field),
// no cycles, compatible types (text into a string field, a number into a number, a boolean into a
// boolean, image/video/audio media only into a media field of that kind, judged by the request
// schema's media fields), and every generation node's input valid for its endpoint once the
// edge-fed fields hold their source's value (a primitive's default, or a media placeholder of a
// generation node's output kind, from the catalog's modality).
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include "genhost/catalog/catalog.hpp"
#include "genhost/core/error.hpp"
#include "genhost/store/workflows_repo.hpp"
#include "genhost/validate/schema_set.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace genhost::api {

// CheckWorkflowGraph returns the issues of `graph`, a graph that passed the publication schema;
// empty when it may be published. Paths start with "graph".
std::vector<Issue> CheckWorkflowGraph(const validate::SchemaSet& schemas,
                                      const catalog::Catalog& catalog, const nlohmann::json& graph);

// WorkflowPublication validates `body` (the publication schema, then CheckWorkflowGraph) and
// returns the version to store for organization `org_id`, or the 400 with every issue.
Result<store::NewWorkflowVersion> WorkflowPublication(const validate::SchemaSet& schemas,
                                                      const catalog::Catalog& catalog,
                                                      const std::string& org_id,
                                                      const nlohmann::json& body);

// FieldPointer turns an edge's target field, a JSON pointer ("/promptImage/0/uri") or a dotted
// path ("promptImage.0.uri"), into a JSON pointer; nullopt when it is neither.
std::optional<std::string> FieldPointer(const std::string& field);

// OutputKind is what a generation node of `endpoint` with `model` outputs: "image", "video" or
// "audio" (the catalog's modality), or empty when the catalog does not say.
std::string OutputKind(const catalog::Catalog& catalog, const std::string& endpoint,
                       const std::string& model);

}  // namespace genhost::api
