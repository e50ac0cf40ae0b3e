// fuzz/validate_fuzz.cpp: libFuzzer target over the request validator.
//
// Every input is treated as the body of a POST to every endpoint of schemas/, and goes through
// the path a request takes in src/api/generation.cpp:
//
//   validate::ParseRequestJson (depth pre-check + nlohmann parse)
//   -> SchemaSet::Validate for each endpoint
//   -> SchemaSet::ApplyDefaults when valid
//   -> the 400 or 200 body rendered as http::Response::Error / Json render it.
//
// A crash, a sanitizer report, a leak, an uncaught exception (which the server would turn into
// a 500) or a broken invariant below (abort) is a finding. The schemas are the documents
// compiled into the fuzz binary from schemas/*.json at build time, exactly as the server embeds
// them; every document is handed to SchemaSet::Compile, which skips the non-schema ones.
//
// Build and run: docs/fuzzing.md.
#include "genhost/core/resources.hpp"
#include "genhost/validate/json_body.hpp"
#include "genhost/validate/schema_set.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using genhost::Issue;
using genhost::validate::SchemaSet;

// The server's default (App::max_json_depth).
constexpr std::size_t kMaxJsonDepth = 64;

// A message is built from schema text and bounded echoes of the input (docs/schemas.md), so
// no input may make one large. The bound is generous; it catches unbounded echoes.
constexpr std::size_t kMaxMessageBytes = 16 * 1024;

constexpr std::array<std::string_view, 8> kCodes = {"invalid_type",
                                                    "invalid_enum_value",
                                                    "invalid_union_discriminator",
                                                    "unrecognized_keys",
                                                    "too_small",
                                                    "too_big",
                                                    "invalid_string",
                                                    "custom"};

std::shared_ptr<const SchemaSet>& Schemas() {
    static std::shared_ptr<const SchemaSet> schemas;
    return schemas;
}

[[noreturn]] void Fail(std::string_view endpoint, std::string_view what) {
    std::fprintf(stderr, "validate_fuzz: invariant broken for endpoint %.*s: %.*s\n",
                 static_cast<int>(endpoint.size()), endpoint.data(), static_cast<int>(what.size()),
                 what.data());
    std::abort();
}

// Render builds the 400 body as http::Response::Error does and serialises it. The server
// serialises with error_handler_t::replace; here it is serialised strictly, so a message that is
// not valid UTF-8 throws (an uncaught exception: reported as a crash) instead of being patched.
void Render(const genhost::ApiError& error) {
    nlohmann::json body;
    body["error"] = error.message;
    body["docUrl"] = "https://docs.example.com";
    auto& issues = body["issues"] = nlohmann::json::array();
    for (const Issue& issue : error.issues) {
        issues.push_back({{"code", issue.code}, {"path", issue.path}, {"message", issue.message}});
    }
    if (body.dump().empty()) std::abort();
}

void CheckIssues(std::string_view endpoint, const std::vector<Issue>& issues) {
    if (issues.size() > SchemaSet::kMaxIssues) Fail(endpoint, "more than kMaxIssues issues");
    for (const Issue& issue : issues) {
        bool known = false;
        for (std::string_view code : kCodes) known = known || issue.code == code;
        if (!known) Fail(endpoint, "issue code outside the published list: " + issue.code);
        if (issue.message.empty()) Fail(endpoint, "empty issue message");
        if (issue.message.size() > kMaxMessageBytes) Fail(endpoint, "oversized issue message");
    }
}

void RunEndpoint(const SchemaSet& schemas, const genhost::validate::EndpointInfo& endpoint,
                 const nlohmann::json& body) {
    const std::string_view name = endpoint.name;
    const std::vector<Issue> issues = schemas.Validate(name, body);
    CheckIssues(name, issues);
    if (!issues.empty()) {
        // The validator only echoes input that nlohmann accepted (valid UTF-8) and cuts echoes
        // at code point boundaries.
        Render(genhost::ApiError::InvalidRequest("Invalid request body", issues));
        return;
    }
    const nlohmann::json input = schemas.ApplyDefaults(name, body);
    // Defaults are validated against their schemas at compile time; filling them in must keep
    // a valid body valid, and filling them in again must change nothing.
    if (!schemas.Validate(name, input).empty())
        Fail(name, "ApplyDefaults made a valid body invalid");
    if (schemas.ApplyDefaults(name, input) != input) Fail(name, "ApplyDefaults is not idempotent");
    if (endpoint.kind == "generation") {
        // src/api/generation.cpp reads the model of every valid body with at(); a throw there
        // would be a 500.
        const auto it = input.find("model");
        if (it == input.end() || !it->is_string()) Fail(name, "valid body without a string model");
    }
    // What the task row stores.
    (void)input.dump();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
    std::vector<genhost::validate::SchemaDocument> documents;
    for (const genhost::EmbeddedResource& r : genhost::EmbeddedResources()) {
        if (r.path.starts_with("schemas/")) {
            documents.push_back({std::string(r.path), std::string(r.content)});
        }
    }
    Schemas() = SchemaSet::Compile(documents);
    if (Schemas()->Endpoints().empty()) {
        std::fprintf(stderr, "validate_fuzz: no endpoint schema among %zu documents\n",
                     documents.size());
        std::abort();
    }
    std::fprintf(stderr, "validate_fuzz: %zu documents, %zu endpoints\n", documents.size(),
                 Schemas()->Endpoints().size());
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const SchemaSet& schemas = *Schemas();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto body = genhost::validate::ParseRequestJson(text, kMaxJsonDepth);
    if (!body) {
        if (body.error().code != genhost::ErrorCode::kInvalidRequest) {
            Fail("(parse)", "a parse failure that is not a 400");
        }
        CheckIssues("(parse)", body.error().issues);
        // ParseRequestJson bounds its echo of the body and writes it as valid UTF-8.
        Render(body.error());
        return 0;
    }
    for (const auto& endpoint : schemas.Endpoints()) RunEndpoint(schemas, endpoint, *body);
    return 0;
}
