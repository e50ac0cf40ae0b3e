// genhost/api/openapi.hpp
//
// Provides the published contract: the OpenAPI 3.1 document served at GET /v1/openapi.json,
// assembled from the request schemas (schemas/*.json) and the model catalog, and the pieces the
// docs/models.md generator shares with it (each model's request shape and price summary).
// docs/openapi.md describes what the document contains.
//
// The schema documents and the operation table (operations.hpp) are the single source of truth:
// every operation's path, method, parameters and answers come from its declaration; every
// generation endpoint's request
// body is its schema document's root union (oneOf + discriminator on `model`, with an explicit
// mapping), every `$defs` entry reachable from a request becomes a component
// (`common.json#/$defs/seed` → `#/components/schemas/common.seed`), and genhost's `x-`
// keywords become `x-genhost-` extensions.
//
// Thread-safety: the functions are pure apart from OpenApiText's cache, which is guarded.
#pragma once

#include "genhost/api/app.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::api {

// EmbeddedSchemaDocuments returns the schema files compiled into the binary (schemas/*.json),
// with their text, in path order.
std::vector<validate::SchemaDocument> EmbeddedSchemaDocuments();

// BuildOpenApi assembles the OpenAPI 3.1 document. `documents` are the texts `schemas` was
// compiled from (their member order is kept, so properties appear in schema order); only the
// documents `schemas` knows (SchemaSet::Document) are used. Throws std::runtime_error if a
// generation endpoint has no document or a `$ref` cannot be resolved.
nlohmann::ordered_json BuildOpenApi(const validate::SchemaSet& schemas,
                                    const catalog::Catalog& catalog,
                                    const std::vector<validate::SchemaDocument>& documents);

// BuildOpenApi with the operation table's declarations (schemas/operations.json's text) given
// instead of the embedded ones.
nlohmann::ordered_json BuildOpenApi(const validate::SchemaSet& schemas,
                                    const catalog::Catalog& catalog,
                                    const std::vector<validate::SchemaDocument>& documents,
                                    std::string_view operations_json);

// BuildOpenApi over the embedded schema documents (what the server compiles at start).
nlohmann::ordered_json BuildOpenApi(const validate::SchemaSet& schemas,
                                    const catalog::Catalog& catalog);

// OpenApiText returns `app`'s document serialized (compact), built on first use and cached for
// as long as app.schemas and app.catalog stay the same objects. Thread-safe.
std::shared_ptr<const std::string> OpenApiText(const App& app);

// PriceSummary describes `model`'s price rule on `endpoint` in words, e.g. "12 credits per
// output second" or "28 credits per second of input `videoUri`, minimum 56 credits". The
// estimate marker is not included (see ModelInfo::PriceIsEstimateFor).
std::string PriceSummary(const catalog::ModelInfo& model, std::string_view endpoint);

// RequestShape is one model's branch of an endpoint's request union.
struct RequestShape {
    std::string endpoint;             // e.g. "text_to_image"
    std::string model;                // the discriminator value, e.g. "gen4_image"
    std::vector<std::string> fields;  // top-level properties, in schema order
    std::vector<std::string> required;
};

// RequestShapes lists every model branch of every endpoint document of `schemas` (any kind),
// endpoints by name, models in union order.
std::vector<RequestShape> RequestShapes(const validate::SchemaSet& schemas,
                                        const std::vector<validate::SchemaDocument>& documents);

}  // namespace genhost::api
