// Golden tests of schemas/character_performance.json (act_two) through SchemaSet: the character
// union (image or video), the reference video, every bound at its limit and one past it, defaults.
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

constexpr const char* kEndpoint = "character_performance";

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

json ActTwo() {
    return json{{"model", "act_two"},
                {"character", {{"type", "image"}, {"uri", "https://example.com/face.png"}}},
                {"reference", {{"type", "video"}, {"uri", "https://example.com/acting.mp4"}}}};
}

const std::string kRatios =
    "'1280:720' | '720:1280' | '960:960' | '1104:832' | '832:1104' | '1584:672'";

TEST(CharacterPerformanceTest, EndpointAndModels) {
    ExpectEndpoint("/v1/character_performance", {"act_two"});
    ExpectModelErrors(ActTwo(), "'act_two'");
}

TEST(CharacterPerformanceTest, Golden) {
    json full = ActTwo();
    full["character"] = {{"type", "video"}, {"uri", "genhost://character-video"}};
    full["bodyControl"] = true;
    full["expressionIntensity"] = 5;
    full["ratio"] = "1584:672";
    full["seed"] = 4294967295u;
    full["contentModeration"] = {{"publicFigureThreshold", "low"}};
    const std::string types = "'image' | 'video'";
    std::vector<Golden> table = {
        {"minimal", ActTwo(), kValid},
        {"full", full, kValid},
        {"character video", With(ActTwo(), "/character/type", "video"), kValid},
        {"no character", Without(ActTwo(), "/character"), {Required({"character"})}},
        {"no reference", Without(ActTwo(), "/reference"), {Required({"reference"})}},
        {"character as a string",
         With(ActTwo(), "/character", "https://example.com/face.png"),
         {Type({"character"}, "object", "string")}},
        {"character audio",
         With(ActTwo(), "/character/type", "audio"),
         {Discriminator({"character", "type"}, types)}},
        {"character without type",
         Without(ActTwo(), "/character/type"),
         {Discriminator({"character", "type"}, types)}},
        {"character without uri",
         Without(ActTwo(), "/character/uri"),
         {Required({"character", "uri"})}},
        {"image character with video data",
         With(ActTwo(), "/character/uri", "data:video/mp4;base64,AAAA"),
         {BadString({"character", "uri"}, "Unsupported asset type")}},
        {"video character with image data",
         With(With(ActTwo(), "/character/type", "video"), "/character/uri",
              "data:image/png;base64,AAAA"),
         {BadString({"character", "uri"}, "Unsupported asset type")}},
        {"character extra key",
         With(ActTwo(), "/character/position", "first"),
         {Unknown({"character"}, "'position'")}},
        {"reference image",
         With(ActTwo(), "/reference/type", "image"),
         {Literal({"reference", "type"}, "video")}},
        {"reference without uri",
         Without(ActTwo(), "/reference/uri"),
         {Required({"reference", "uri"})}},
        {"reference as a string",
         With(ActTwo(), "/reference", "https://example.com/a.mp4"),
         {Type({"reference"}, "object", "string")}},
        {"bodyControl",
         With(ActTwo(), "/bodyControl", 1),
         {Type({"bodyControl"}, "boolean", "number")}},
        {"expressionIntensity 1", With(ActTwo(), "/expressionIntensity", 1), kValid},
        {"expressionIntensity 5", With(ActTwo(), "/expressionIntensity", 5), kValid},
        {"expressionIntensity 0",
         With(ActTwo(), "/expressionIntensity", 0),
         {NumMin({"expressionIntensity"}, "1")}},
        {"expressionIntensity 6",
         With(ActTwo(), "/expressionIntensity", 6),
         {NumMax({"expressionIntensity"}, "5")}},
        {"expressionIntensity 2.5",
         With(ActTwo(), "/expressionIntensity", 2.5),
         {Integer({"expressionIntensity"})}},
        {"ratio", With(ActTwo(), "/ratio", "1920:1080"), {Enum({"ratio"}, kRatios, "1920:1080")}},
        {"seed 0", With(ActTwo(), "/seed", 0), kValid},
        {"seed -1", With(ActTwo(), "/seed", -1), {NumMin({"seed"}, "0")}},
        {"seed 2^32", With(ActTwo(), "/seed", 4294967296u), {NumMax({"seed"}, "4294967295")}},
        {"contentModeration",
         With(ActTwo(), "/contentModeration/publicFigureThreshold", "off"),
         {Enum({"contentModeration", "publicFigureThreshold"}, "'auto' | 'low'", "off")}},
        {"unknown keys",
         With(With(ActTwo(), "/duration", 5), "/promptText", "x"),
         {Unknown({}, "'duration', 'promptText'")}},
    };
    for (const char* ratio :
         {"1280:720", "720:1280", "960:960", "1104:832", "832:1104", "1584:672"}) {
        table.push_back({ratio, With(ActTwo(), "/ratio", ratio), kValid});
    }
    ExpectGolden(table);
}

TEST(CharacterPerformanceTest, Defaults) {
    const auto set = RepoSchemas();
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, ActTwo()), With(ActTwo(), "/expressionIntensity", 3));
    json chosen = With(ActTwo(), "/expressionIntensity", 1);
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, chosen), chosen);
}

}  // namespace
}  // namespace genhost::validate
