// Golden tests of schemas/video_to_hdr.json (ruby) through SchemaSet: a valid body, the output
// formats, the proresProfile rule (only with hdr_prores) and the conditional 422 HQ default.
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

constexpr const char* kEndpoint = "video_to_hdr";

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

json Ruby() { return json{{"model", "ruby"}, {"videoUri", "https://example.com/sdr.mp4"}}; }

const std::string kFormats =
    "'hdr10' | 'hlg' | 'hdr_prores' | 'hdr_exr_sequence' | 'hdr_exr_acescg_sequence_1_3' | "
    "'hdr_exr_acescg_sequence_2_0'";
const std::string kProfiles = "'422' | '4444' | '422 HQ'";
const std::string kOnlyHdrProres = "proresProfile is only valid with outputFormat hdr_prores";

TEST(VideoToHdrTest, EndpointAndModels) {
    ExpectEndpoint("/v1/video_to_hdr", {"ruby"});
    ExpectModelErrors(Ruby(), "'ruby'");
}

TEST(VideoToHdrTest, Golden) {
    json prores = With(Ruby(), "/outputFormat", "hdr_prores");
    std::vector<Golden> table = {
        {"minimal", Ruby(), kValid},
        {"full", With(prores, "/proresProfile", "4444"), kValid},
        {"no videoUri", Without(Ruby(), "/videoUri"), {Required({"videoUri"})}},
        {"audio data uri",
         With(Ruby(), "/videoUri", "data:audio/mp3;base64,AAAA"),
         {BadString({"videoUri"}, "Unsupported asset type")}},
        {"sdr format",
         With(Ruby(), "/outputFormat", "mp4"),
         {Enum({"outputFormat"}, kFormats, "mp4")}},
        {"prores is not an hdr format",
         With(Ruby(), "/outputFormat", "prores"),
         {Enum({"outputFormat"}, kFormats, "prores")}},
        {"profile without format",
         With(Ruby(), "/proresProfile", "422"),
         {Custom({"proresProfile"}, kOnlyHdrProres)}},
        {"profile with hdr10",
         With(With(Ruby(), "/outputFormat", "hdr10"), "/proresProfile", "422 HQ"),
         {Custom({"proresProfile"}, kOnlyHdrProres)}},
        {"profile with exr",
         With(With(Ruby(), "/outputFormat", "hdr_exr_sequence"), "/proresProfile", "4444"),
         {Custom({"proresProfile"}, kOnlyHdrProres)}},
        // A profile hdr_prores does not offer is an enum issue; the rule is not also reported.
        {"422 LT",
         With(prores, "/proresProfile", "422 LT"),
         {Enum({"proresProfile"}, kProfiles, "422 LT")}},
        {"4444 XQ",
         With(prores, "/proresProfile", "4444 XQ"),
         {Enum({"proresProfile"}, kProfiles, "4444 XQ")}},
        {"bad format and profile",
         With(With(Ruby(), "/outputFormat", "prores"), "/proresProfile", "422"),
         {Enum({"outputFormat"}, kFormats, "prores")}},
        {"unknown key", With(Ruby(), "/seed", 1), {Unknown({}, "'seed'")}},
    };
    for (const char* format : {"hdr10", "hlg", "hdr_prores", "hdr_exr_sequence",
                               "hdr_exr_acescg_sequence_1_3", "hdr_exr_acescg_sequence_2_0"}) {
        table.push_back({format, With(Ruby(), "/outputFormat", format), kValid});
    }
    for (const char* profile : {"422", "4444", "422 HQ"}) {
        table.push_back({profile, With(prores, "/proresProfile", profile), kValid});
    }
    ExpectGolden(table);
}

TEST(VideoToHdrTest, Defaults) {
    const auto set = RepoSchemas();
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, Ruby()), With(Ruby(), "/outputFormat", "hdr10"));
    json prores = With(Ruby(), "/outputFormat", "hdr_prores");
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, prores), With(prores, "/proresProfile", "422 HQ"));
    json chosen = With(prores, "/proresProfile", "422");
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, chosen), chosen);
    json hlg = With(Ruby(), "/outputFormat", "hlg");
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, hlg), hlg);
    EXPECT_THAT(Check(set->ApplyDefaults(kEndpoint, prores)), ::testing::IsEmpty());
}

}  // namespace
}  // namespace genhost::validate
