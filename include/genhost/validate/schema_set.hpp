// genhost/validate/schema_set.hpp
//
// Provides SchemaSet: every request schema of schemas/*.json compiled into validators. The schema
// documents are the single source of truth for request bodies; the same documents are assembled
// into the published OpenAPI document. The dialect is described in docs/schemas.md.
//
// Validation never throws on bad input: it returns every issue at once, each {code, path, message}
// with zod-style codes, in a stable order. Compile() throws std::runtime_error for a broken schema
// document (a startup failure, never a request failure).
//
// Thread-safety: a compiled SchemaSet is immutable and may be shared by all threads.
#pragma once

#include "genhost/core/error.hpp"

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::validate {

// EndpointInfo is what a schema document says about the endpoint it describes (its
// "x-endpoint" object).
struct EndpointInfo {
    std::string name;    // e.g. "text_to_image"
    std::string method;  // e.g. "POST"
    std::string path;    // e.g. "/v1/text_to_image"
    std::string kind;    // "generation" for task-creating endpoints
    std::string summary;
    std::vector<std::string> models;  // discriminator values (`model`), in schema order
};

// SchemaDocument is one file of schemas/: its path (e.g. "schemas/text_to_image.json") and text.
struct SchemaDocument {
    std::string path;
    std::string text;
};

// MediaField is one media string of a request body: a string whose schema has format `media`.
struct MediaField {
    std::vector<std::string> path;  // issue path, e.g. {"promptImage", "0", "uri"}
    std::string pointer;            // JSON pointer of the same string, e.g. "/promptImage/0/uri"
    std::string kind;               // its x-media-kind: "image", "video" or "audio"
};

class SchemaSet {
  public:
    // Compile parses and compiles `documents`; throws std::runtime_error naming the document and
    // the JSON pointer of the first problem found.
    static std::shared_ptr<const SchemaSet> Compile(const std::vector<SchemaDocument>& documents);

    // Endpoints lists the documents that describe an endpoint (have "x-endpoint"), sorted by name.
    const std::vector<EndpointInfo>& Endpoints() const;

    // FindEndpoint returns the endpoint called `name`, or nullptr.
    const EndpointInfo* FindEndpoint(std::string_view name) const;

    // Validate checks `body` against the request schema of endpoint `name`; an empty vector means
    // valid. Issues come in a stable order: schema property order, then unrecognized keys, then
    // cross-field rules in declaration order, then strings holding U+0000 (valid JSON, but
    // PostgreSQL's jsonb cannot store it; docs/decisions.md) at paths not reported already. The
    // number of issues is capped (kMaxIssues).
    std::vector<Issue> Validate(std::string_view name, const nlohmann::json& body) const;

    // ApplyDefaults returns a copy of a *valid* `body` with every schema `default` filled in for
    // the fields the caller omitted (recursively, following the selected union branch).
    nlohmann::json ApplyDefaults(std::string_view name, const nlohmann::json& body) const;
    // FillDefaults is ApplyDefaults in place (no copy of the body: a data URI can be megabytes).
    void FillDefaults(std::string_view name, nlohmann::json& body) const;

    // MediaFields lists the media strings of a *valid* `body` of endpoint `name`, in schema
    // order (properties in declaration order, array items in order), following the union
    // branches the body selects, as ApplyDefaults does.
    std::vector<MediaField> MediaFields(std::string_view name, const nlohmann::json& body) const;

    // FieldPlace says why a value may not be put at `path` (segments of a JSON pointer) of
    // `body`, a request of endpoint `name`, or nullopt when it may: the path must follow the
    // schema (the branch the body's discriminator selects), and an array index must be below the
    // array's maxItems. It only reads `body`, so a hostile index costs nothing (a workflow edge's
    // target field is checked with it before anything is written there).
    std::optional<std::string> FieldPlace(std::string_view name, const nlohmann::json& body,
                                          const std::vector<std::string>& path) const;

    // Document returns the parsed schema document at `path` (for OpenAPI assembly), or nullptr.
    const nlohmann::json* Document(std::string_view path) const;

    static constexpr std::size_t kMaxIssues = 100;

    ~SchemaSet();
    SchemaSet(const SchemaSet&) = delete;
    SchemaSet& operator=(const SchemaSet&) = delete;

  private:
    SchemaSet();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Utf16Length returns the length of UTF-8 `s` in UTF-16 code units (a code point above U+FFFF
// counts 2), the unit SPEC.md's string bounds are written in.
std::size_t Utf16Length(std::string_view s);

}  // namespace genhost::validate
