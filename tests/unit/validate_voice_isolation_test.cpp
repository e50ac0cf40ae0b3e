// Golden tests of schemas/voice_isolation.json (voice_isolation) through SchemaSet: the request
// is structural (an audio media string); the 4.6 s < duration < 3600 s limit needs the probed
// audio and is not the validator's.
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

constexpr const char* kEndpoint = "voice_isolation";

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

json Isolate() {
    return json{{"model", "voice_isolation"}, {"audioUri", "https://example.com/noisy.wav"}};
}

TEST(VoiceIsolationTest, EndpointAndModels) {
    ExpectEndpoint("/v1/voice_isolation", {"voice_isolation"});
    ExpectModelErrors(Isolate(), "'voice_isolation'");
    EXPECT_EQ(Check(With(Isolate(), "/model", "eleven_voice_isolation")),
              Issues{Discriminator({"model"}, "'voice_isolation'")});
}

TEST(VoiceIsolationTest, Golden) {
    const std::string prefix = "https://example.com/";
    ExpectGolden({
        {"minimal", Isolate(), kValid},
        {"upload uri", With(Isolate(), "/audioUri", "genhost://noisy-audio"), kValid},
        {"data uri", With(Isolate(), "/audioUri", "data:audio/wav;base64,UklGRg=="), kValid},
        {"longest url",
         With(Isolate(), "/audioUri", prefix + std::string(2048 - prefix.size(), 'a')), kValid},
        {"url too long",
         With(Isolate(), "/audioUri", prefix + std::string(2049 - prefix.size(), 'a')),
         {StrMax({"audioUri"}, 2048)}},
        {"url too short", With(Isolate(), "/audioUri", "https://a.co"), {StrMin({"audioUri"}, 13)}},
        {"no audioUri", Without(Isolate(), "/audioUri"), {Required({"audioUri"})}},
        {"image data",
         With(Isolate(), "/audioUri", "data:image/png;base64,AAAA"),
         {BadString({"audioUri"}, "Unsupported asset type")}},
        {"malformed data",
         With(Isolate(), "/audioUri", "data:audio/wav;base64,@@@@"),
         {BadString({"audioUri"}, "Invalid data URI")}},
        {"http",
         With(Isolate(), "/audioUri", "http://example.com/noisy.wav"),
         {BadString({"audioUri"}, "Only HTTPS URLs are allowed")}},
        {"object",
         With(Isolate(), "/audioUri", {{"uri", "https://example.com/noisy.wav"}}),
         {Type({"audioUri"}, "string", "object")}},
        {"unknown keys",
         With(With(Isolate(), "/duration", 10), "/videoUri", "x"),
         {Unknown({}, "'duration', 'videoUri'")}},
    });
}

TEST(VoiceIsolationTest, AudioDataUriCapIs16MiB) {
    const std::string header = "data:audio/wav;base64,";
    // 16 MiB exactly is 5592405 full quads and a final quad worth one byte ("AA==").
    std::string data(5592405 * 4, 'A');
    data += "AA==";
    EXPECT_THAT(Check(With(Isolate(), "/audioUri", header + data)), ::testing::IsEmpty());
    data = std::string(5592406 * 4, 'A');  // 16 MiB + 2 bytes
    EXPECT_EQ(Check(With(Isolate(), "/audioUri", header + data)),
              (Issues{{"too_big", {"audioUri"}, "Asset size exceeds the maximum for the type"}}));
}

}  // namespace
}  // namespace genhost::validate
