// bench/validate_bench.cpp: what validating one request body costs (issue 3's goal: under 20 µs
// for a typical body, under 2 ms for a body carrying a 5 MB data URI).
//
//   cmake --preset release && cmake --build build/release --target validate_bench -j2
//   build/release/bench/validate_bench
//
// Bodies:
//   typical  a gen4_image text_to_image request: prompt, ratio, seed, one tagged reference image
//            by HTTPS URL (~200 bytes).
//   datauri  the same request with the reference image as a data URI of exactly 5 MiB decoded,
//            the largest image SchemaSet accepts (~7 MB of base64).
// Steps:
//   Validate       SchemaSet::Validate on the parsed body.
//   ParseValidate  validate::ParseRequestJson (depth scan + parse) then Validate.
//   RequestPath    ParseValidate, then ApplyDefaults, then the dump stored as the task input:
//                  everything src/api/generation.cpp does with the body before the database.
#include "genhost/core/resources.hpp"
#include "genhost/validate/json_body.hpp"
#include "genhost/validate/schema_set.hpp"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

using genhost::validate::SchemaSet;

constexpr std::size_t kMaxDepth = 64;  // App::max_json_depth
constexpr std::size_t kFiveMiB = 5 * 1024 * 1024;

const SchemaSet& Schemas() {
    static const std::shared_ptr<const SchemaSet> schemas = [] {
        std::vector<genhost::validate::SchemaDocument> documents;
        for (const genhost::EmbeddedResource& r : genhost::EmbeddedResources()) {
            if (r.path.starts_with("schemas/")) {
                documents.push_back({std::string(r.path), std::string(r.content)});
            }
        }
        return SchemaSet::Compile(documents);
    }();
    return *schemas;
}

std::string Body(const std::string& image_uri) {
    const nlohmann::json body = {
        {"model", "gen4_image"},
        {"promptText", "A lighthouse on a cliff at dusk, @boat in the bay, cinematic lighting"},
        {"ratio", "1920:1080"},
        {"seed", 1234567},
        {"referenceImages", {{{"uri", image_uri}, {"tag", "boat"}}}},
    };
    return body.dump();
}

// A data URI of exactly `bytes` decoded bytes (base64 of a repeating pattern, no padding needed
// when bytes % 3 == 0; padded otherwise).
std::string DataUri(std::size_t bytes) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string uri = "data:image/png;base64,";
    const std::size_t full = bytes / 3;
    const std::size_t rest = bytes % 3;
    uri.reserve(uri.size() + (full + 1) * 4);
    for (std::size_t i = 0; i < full * 4; ++i) uri += kAlphabet[(i * 7) % 64];
    if (rest == 1) uri += "QQ==";
    if (rest == 2) uri += "QUE=";
    return uri;
}

const std::string& TypicalBody() {
    static const std::string body = Body("https://example.com/assets/boat.jpg");
    return body;
}

const std::string& DataUriBody() {
    static const std::string body = Body(DataUri(kFiveMiB));
    return body;
}

// Check fails the benchmark run if the body is not the valid request it is meant to be.
void Check(benchmark::State& state, const std::vector<genhost::Issue>& issues) {
    if (!issues.empty()) {
        state.SkipWithError(("body is not valid: " + issues.front().message).c_str());
    }
}

nlohmann::json Parse(const std::string& text) {
    auto parsed = genhost::validate::ParseRequestJson(text, kMaxDepth);
    if (!parsed) {
        std::cerr << "validate_bench: " << parsed.error().issues.front().message << "\n";
        std::abort();
    }
    return *std::move(parsed);
}

void Validate(benchmark::State& state, const std::string& text) {
    const SchemaSet& schemas = Schemas();
    const nlohmann::json body = Parse(text);
    Check(state, schemas.Validate("text_to_image", body));
    for (auto _ : state) {
        auto issues = schemas.Validate("text_to_image", body);
        benchmark::DoNotOptimize(issues);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void ParseValidate(benchmark::State& state, const std::string& text) {
    const SchemaSet& schemas = Schemas();
    Check(state, schemas.Validate("text_to_image", Parse(text)));
    for (auto _ : state) {
        auto body = genhost::validate::ParseRequestJson(text, kMaxDepth);
        auto issues = schemas.Validate("text_to_image", *body);
        benchmark::DoNotOptimize(issues);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void RequestPath(benchmark::State& state, const std::string& text) {
    const SchemaSet& schemas = Schemas();
    Check(state, schemas.Validate("text_to_image", Parse(text)));
    for (auto _ : state) {
        auto body = genhost::validate::ParseRequestJson(text, kMaxDepth);
        auto issues = schemas.Validate("text_to_image", *body);
        nlohmann::json input = schemas.ApplyDefaults("text_to_image", *body);
        std::string stored = input.dump();
        benchmark::DoNotOptimize(issues);
        benchmark::DoNotOptimize(stored);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void BM_Validate_Typical(benchmark::State& state) { Validate(state, TypicalBody()); }
void BM_Validate_DataUri5MB(benchmark::State& state) { Validate(state, DataUriBody()); }
void BM_ParseValidate_Typical(benchmark::State& state) { ParseValidate(state, TypicalBody()); }
void BM_ParseValidate_DataUri5MB(benchmark::State& state) { ParseValidate(state, DataUriBody()); }
void BM_RequestPath_Typical(benchmark::State& state) { RequestPath(state, TypicalBody()); }
void BM_RequestPath_DataUri5MB(benchmark::State& state) { RequestPath(state, DataUriBody()); }

BENCHMARK(BM_Validate_Typical)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Validate_DataUri5MB)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ParseValidate_Typical)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ParseValidate_DataUri5MB)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RequestPath_Typical)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RequestPath_DataUri5MB)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
