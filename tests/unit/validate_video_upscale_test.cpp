// Golden tests of schemas/video_upscale.json (upscale_video_upscaler_creative) through SchemaSet:
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

constexpr const char* kEndpoint = "video_upscale";

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
    return json{{"model", "upscale_video_upscaler_creative"},
                {"videoUri", "https://example.com/clip.mp4"}};
}

TEST(VideoUpscaleTest, EndpointAndModels) {
    ExpectEndpoint("/v1/video_upscale", {"upscale_video_upscaler_creative"});
    ExpectModelErrors(Upscale(), "'upscale_video_upscaler_creative'");
    EXPECT_EQ(Check(With(Upscale(), "/model", "magnific_video_upscaler_creative")),
              Issues{Discriminator({"model"}, "'upscale_video_upscaler_creative'")});
}

TEST(VideoUpscaleTest, Golden) {
    json full = Upscale();
    full["resolution"] = "4k";
    full["creativity"] = 100;
    full["sharpen"] = 0;
    full["smartGrain"] = 30;
    full["flavor"] = "natural";
    full["fpsBoost"] = true;
    const std::string resolutions = "'720p' | '1k' | '2k' | '4k'";
    std::vector<Golden> table = {
        {"minimal", Upscale(), kValid},
        {"full", full, kValid},
        {"video data uri", With(Upscale(), "/videoUri", "data:video/mp4;base64,AAAA"), kValid},
        {"no videoUri", Without(Upscale(), "/videoUri"), {Required({"videoUri"})}},
        {"image data uri",
         With(Upscale(), "/videoUri", "data:image/png;base64,AAAA"),
         {BadString({"videoUri"}, "Unsupported asset type")}},
        {"not a url",
         With(Upscale(), "/videoUri", "clip.mp4"),
         {BadString({"videoUri"}, "Invalid URL")}},
        {"resolution 8k",
         With(Upscale(), "/resolution", "8k"),
         {Enum({"resolution"}, resolutions, "8k")}},
        {"resolution upper case",
         With(Upscale(), "/resolution", "4K"),
         {Enum({"resolution"}, resolutions, "4K")}},
        {"resolution number",
         With(Upscale(), "/resolution", 4),
         {Type({"resolution"}, resolutions, "number")}},
        {"flavor",
         With(Upscale(), "/flavor", "sublime"),
         {Enum({"flavor"}, "'vivid' | 'natural'", "sublime")}},
        {"fpsBoost",
         With(Upscale(), "/fpsBoost", "yes"),
         {Type({"fpsBoost"}, "boolean", "string")}},
        {"unknown key", With(Upscale(), "/scaleFactor", 2), {Unknown({}, "'scaleFactor'")}},
    };
    for (const char* resolution : {"720p", "1k", "2k", "4k"}) {
        table.push_back({"resolution", With(Upscale(), "/resolution", resolution), kValid});
    }
    for (const char* flavor : {"vivid", "natural"}) {
        table.push_back({"flavor", With(Upscale(), "/flavor", flavor), kValid});
    }
    for (const char* field : {"creativity", "sharpen", "smartGrain"}) {
        const std::string at = std::string("/") + field;
        table.push_back({field, With(Upscale(), at, 0), kValid});
        table.push_back({field, With(Upscale(), at, 100), kValid});
        table.push_back({field, With(Upscale(), at, -1), {NumMin({field}, "0")}});
        table.push_back({field, With(Upscale(), at, 101), {NumMax({field}, "100")}});
        table.push_back({field, With(Upscale(), at, 0.5), {Integer({field})}});
    }
    ExpectGolden(table);
}

TEST(VideoUpscaleTest, Defaults) {
    const auto set = RepoSchemas();
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, Upscale()), With(Upscale(), "/resolution", "2k"));
    json explicit_720 = With(Upscale(), "/resolution", "720p");
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, explicit_720), explicit_720);
}

}  // namespace
}  // namespace genhost::validate
