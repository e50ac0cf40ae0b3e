// genhost/api/operations.hpp
//
// Provides the operation table: every operation genhost serves, declared once as data. The
// generation endpoints are declared by their schema documents' `x-endpoint` (schemas/<name>.json);
// every other operation by schemas/operations.json (its `$comment` says what a declaration
// holds). GET /v1/openapi.json is assembled from the table (openapi.hpp), and RegisterRoutes
// (app.hpp) binds each operationId to its handler, refusing to start when an operation has no
// handler or a handler no operation.
#pragma once

#include "genhost/core/error.hpp"
#include "genhost/http/message.hpp"
#include "genhost/validate/schema_set.hpp"

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::api {

struct Operation {
    std::string operation_id;
    std::string method;  // upper case
    std::string path;
    // apiKey (the key and X-Service-Version), apiKeyUnversioned (the key; X-Service-Version
    // checked only when sent: for clients that cannot send it), sessionKey (a realtime session's
    // key as the bearer, checked by the handler), public or signedUrl.
    std::string auth;
    std::string tag;
    std::string summary;
    std::string description;
    std::string request;          // x-endpoint name of the JSON body's schema document; "" none
    std::string request_content;  // a body of another media type (multipart/form-data); "" none
    bool page = false;            // takes `limit` and `cursor` (genhost/api/page.hpp)
    int page_default = 50;        // a page's `limit` when absent (declared `pageDefault`)
    // The other query parameters: OpenAPI parameter objects without `in` ({name, required?,
    // description?, schema, style?, explode?}); the route checks them (CheckQuery) before its
    // handler runs.
    nlohmann::ordered_json query_parameters = nlohmann::ordered_json::array();
    nlohmann::ordered_json responses = nlohmann::ordered_json::object();  // as declared
    std::string endpoint;  // generation operations: the endpoint name; "" for the others
};

struct OperationTable {
    std::vector<Operation> operations;  // generation endpoints first (by name), then the file's
    nlohmann::ordered_json path_parameters = nlohmann::ordered_json::object();  // by path
    nlohmann::ordered_json tags = nlohmann::ordered_json::object();  // name -> description
};

// LoadOperations reads `operations_json` (schemas/operations.json's text) and adds the generation
// endpoints of `schemas`. Throws std::runtime_error for a malformed declaration: a missing field,
// an unknown auth, a request that names no non-generation schema document, a duplicate
// operationId or method and path, a `{param}` of a path without its pathParameters entry.
OperationTable LoadOperations(const validate::SchemaSet& schemas, std::string_view operations_json);

// EmbeddedOperations is LoadOperations over the schemas/operations.json compiled into the binary.
OperationTable EmbeddedOperations(const validate::SchemaSet& schemas);

// CheckHandlers throws std::runtime_error naming the first operation of `table` (other than the
// generation endpoints, which share one handler) that has no handler in `handlers`, or the first
// handler that has no operation.
void CheckHandlers(const OperationTable& table, const std::set<std::string>& handlers);

// CheckQuery returns the 400 issues of `req`'s query against `op.query_parameters`: a missing
// required parameter, a value that is not of its schema's type (string, integer, or an array of
// a repeated parameter), outside its enum, minLength/maxLength, minimum/maximum or maxItems, or
// not a uuid (format uuid). The path of an issue is the parameter's name (and the index of a
// repeated one). Parameters the operation does not declare are ignored.
std::vector<Issue> CheckQuery(const Operation& op, const http::Request& req);

// Camel turns a name into an identifier part: "text_to_image" gives "TextToImage" ('_', '-', '.'
// and '/' separate words).
std::string Camel(std::string_view name);

// OperationIdOf is the operationId of generation endpoint `name`: "text_to_image" gives
// "textToImage".
std::string OperationIdOf(std::string_view endpoint_name);

}  // namespace genhost::api
