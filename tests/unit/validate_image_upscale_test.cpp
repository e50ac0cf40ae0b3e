// Golden tests of schemas/image_upscale.json (upscale_precision_upscaler_v2) through SchemaSet:
// a valid body, every bound at its limit and one past it, enums, types, unknown keys, defaults.
#include "genhost/validate/schema_set.hpp"
#include "unit/issue_print.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace genhost::validate {
namespace {

using nlohmann::json;
using Path = std::vector<std::string>;
using Issues = std::vector<Issue>;

std::string ReadFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::shared_ptr<const SchemaSet> RepoSchemas() {
    static const std::shared_ptr<const SchemaSet> set = [] {
        std::vector<SchemaDocument> documents;
        const std::filesystem::path dir = std::filesystem::path(GENHOST_SOURCE_DIR) / "schemas";
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
            if (entry.path().extension() != ".json") continue;
            documents.push_back(
                {"schemas/" + entry.path().filename().string(), ReadFile(entry.path())});
        }
        return SchemaSet::Compile(documents);
    }();
    return set;
}

constexpr const char* kEndpoint = "image_upscale";

[[maybe_unused]] Issues Check(const json& body) { return RepoSchemas()->Validate(kEndpoint, body); }

// With returns `body` with the value at JSON pointer `at` set to `value`.
[[maybe_unused]] json With(json body, const std::string& at, json value) {
    body[json::json_pointer(at)] = std::move(value);
    return body;
}

// Without returns `body` without the member at JSON pointer `at`.
[[maybe_unused]] json Without(json body, const std::string& at) {
    const json::json_pointer pointer(at);
    body[pointer.parent_pointer()].erase(pointer.back());
    return body;
}

// Emoji returns n copies of U+1F600, 2n UTF-16 code units.
[[maybe_unused]] std::string Emoji(std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += "\xF0\x9F\x98\x80";
    return out;
}

// Golden is one row of a table: a request body and every issue it must give (none: valid).
struct Golden {
    std::string label;
    json body;
    Issues issues;
};

void ExpectGolden(const std::vector<Golden>& table) {
    for (const Golden& row : table) {
        EXPECT_EQ(Check(row.body), row.issues)
            << row.label << ": " << row.body.dump().substr(0, 300);
    }
}

[[maybe_unused]] const Issues kValid = {};

[[maybe_unused]] Issue Required(Path p) { return {"invalid_type", std::move(p), "Required"}; }
[[maybe_unused]] Issue Type(Path p, const std::string& expected, const std::string& received) {
    return {"invalid_type", std::move(p), "Expected " + expected + ", received " + received};
}
[[maybe_unused]] Issue Enum(Path p, const std::string& expected, const std::string& received) {
    return {"invalid_enum_value", std::move(p),
            "Invalid enum value. Expected " + expected + ", received '" + received + "'"};
}
[[maybe_unused]] Issue Literal(Path p, const std::string& expected) {
    return {"invalid_enum_value", std::move(p),
            "Invalid literal value, expected \"" + expected + "\""};
}
[[maybe_unused]] Issue Discriminator(Path p, const std::string& expected) {
    return {"invalid_union_discriminator", std::move(p),
            "Invalid discriminator value. Expected " + expected};
}
[[maybe_unused]] Issue Unknown(Path p, const std::string& keys) {
    return {"unrecognized_keys", std::move(p), "Unrecognized key(s) in object: " + keys};
}
[[maybe_unused]] Issue StrMin(Path p, int n) {
    return {"too_small", std::move(p),
            "String must contain at least " + std::to_string(n) + " character(s)"};
}
[[maybe_unused]] Issue StrMax(Path p, int n) {
    return {"too_big", std::move(p),
            "String must contain at most " + std::to_string(n) + " character(s)"};
}
[[maybe_unused]] Issue ArrMax(Path p, int n) {
    return {"too_big", std::move(p),
            "Array must contain at most " + std::to_string(n) + " element(s)"};
}
[[maybe_unused]] Issue NumMin(Path p, const std::string& n) {
    return {"too_small", std::move(p), "Number must be greater than or equal to " + n};
}
[[maybe_unused]] Issue NumMax(Path p, const std::string& n) {
    return {"too_big", std::move(p), "Number must be less than or equal to " + n};
}
[[maybe_unused]] Issue Integer(Path p) {
    return {"invalid_type", std::move(p), "Expected integer, received float"};
}
[[maybe_unused]] Issue Custom(Path p, const std::string& message) {
    return {"custom", std::move(p), message};
}
[[maybe_unused]] Issue BadString(Path p, const std::string& message) {
    return {"invalid_string", std::move(p), message};
}

// ExpectModels checks the endpoint's registration: a generation route serving exactly `models`.
void ExpectEndpoint(const std::string& path, const std::vector<std::string>& models) {
    const EndpointInfo* info = RepoSchemas()->FindEndpoint(kEndpoint);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->method, "POST");
    EXPECT_EQ(info->path, path);
    EXPECT_EQ(info->kind, "generation");
    EXPECT_FALSE(info->summary.empty());
    EXPECT_EQ(info->models, models);
}

// ExpectModelErrors checks missing, unknown, client-literal and retired model ids.
void ExpectModelErrors(const json& valid, const std::string& expected) {
    const Issue unknown = Discriminator({"model"}, expected);
    EXPECT_EQ(Check(Without(valid, "/model")), Issues{unknown});
    EXPECT_EQ(Check(With(valid, "/model", "no_such_model")), Issues{unknown});
    EXPECT_EQ(Check(With(valid, "/model", 7)), Issues{unknown});
    EXPECT_EQ(Check(With(valid, "/model", nullptr)), Issues{unknown});
    EXPECT_EQ(Check(With(valid, "/model", "gen3a_turbo")),
              (Issues{{"invalid_union_discriminator",
                       {"model"},
                       "Model 'gen3a_turbo' has been retired (replaced by gen4.5 or gen4_turbo). "
                       "Expected " +
                           expected}}));
    EXPECT_EQ(Check(With(valid, "/model", "gen4_aleph")),
              (Issues{{"invalid_union_discriminator",
                       {"model"},
                       "Model 'gen4_aleph' has been retired (replaced by aleph2). Expected " +
                           expected}}));
    EXPECT_EQ(Check(json::array()), (Issues{Type({}, "object", "array")}));
}

json Upscale() {
    return json{{"model", "upscale_precision_upscaler_v2"},
                {"imageUri", "https://example.com/photo.jpg"}};
}

TEST(ImageUpscaleTest, EndpointAndModels) {
    ExpectEndpoint("/v1/image_upscale", {"upscale_precision_upscaler_v2"});
    ExpectModelErrors(Upscale(), "'upscale_precision_upscaler_v2'");
    // The client's literal for the model is not a model of this server.
    EXPECT_EQ(Check(With(Upscale(), "/model", "magnific_precision_upscaler_v2")),
              Issues{Discriminator({"model"}, "'upscale_precision_upscaler_v2'")});
}

TEST(ImageUpscaleTest, Golden) {
    json full = Upscale();
    full["scaleFactor"] = 16;
    full["sharpen"] = 0;
    full["smartGrain"] = 100;
    full["ultraDetail"] = 50;
    full["flavor"] = "photo_denoiser";
    const std::string factors = "2 | 4 | 8 | 16";
    const std::string flavors = "'sublime' | 'photo' | 'photo_denoiser'";
    std::vector<Golden> table = {
        {"minimal", Upscale(), kValid},
        {"full", full, kValid},
        {"upload uri", With(Upscale(), "/imageUri", "genhost://abcdef"), kValid},
        {"data uri", With(Upscale(), "/imageUri", "data:image/png;base64,iVBORw0KGgo="), kValid},
        {"no imageUri", Without(Upscale(), "/imageUri"), {Required({"imageUri"})}},
        {"imageUri not a string",
         With(Upscale(), "/imageUri", 1),
         {Type({"imageUri"}, "string", "number")}},
        {"imageUri http",
         With(Upscale(), "/imageUri", "http://example.com/a.jpg"),
         {BadString({"imageUri"}, "Only HTTPS URLs are allowed")}},
        {"imageUri video data",
         With(Upscale(), "/imageUri", "data:video/mp4;base64,AAAA"),
         {BadString({"imageUri"}, "Unsupported asset type")}},
        {"scaleFactor 3",
         With(Upscale(), "/scaleFactor", 3),
         {Enum({"scaleFactor"}, factors, "3")}},
        {"scaleFactor 32",
         With(Upscale(), "/scaleFactor", 32),
         {Enum({"scaleFactor"}, factors, "32")}},
        {"scaleFactor string",
         With(Upscale(), "/scaleFactor", "2"),
         {Type({"scaleFactor"}, "number", "string")}},
        {"flavor", With(Upscale(), "/flavor", "anime"), {Enum({"flavor"}, flavors, "anime")}},
        {"unknown key", With(Upscale(), "/creativity", 5), {Unknown({}, "'creativity'")}},
    };
    for (int factor : {2, 4, 8, 16}) {
        table.push_back({"scaleFactor", With(Upscale(), "/scaleFactor", factor), kValid});
    }
    for (const char* flavor : {"sublime", "photo", "photo_denoiser"}) {
        table.push_back({"flavor", With(Upscale(), "/flavor", flavor), kValid});
    }
    for (const char* field : {"sharpen", "smartGrain", "ultraDetail"}) {
        const std::string at = std::string("/") + field;
        table.push_back({field, With(Upscale(), at, 0), kValid});
        table.push_back({field, With(Upscale(), at, 100), kValid});
        table.push_back({field, With(Upscale(), at, -1), {NumMin({field}, "0")}});
        table.push_back({field, With(Upscale(), at, 101), {NumMax({field}, "100")}});
        table.push_back({field, With(Upscale(), at, 50.5), {Integer({field})}});
        table.push_back({field, With(Upscale(), at, true), {Type({field}, "number", "boolean")}});
    }
    ExpectGolden(table);
}

TEST(ImageUpscaleTest, Defaults) {
    const auto set = RepoSchemas();
    json filled = set->ApplyDefaults(kEndpoint, Upscale());
    EXPECT_EQ(filled, With(Upscale(), "/scaleFactor", 2));
    json four = With(Upscale(), "/scaleFactor", 4);
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, four), four);
}

}  // namespace
}  // namespace genhost::validate
