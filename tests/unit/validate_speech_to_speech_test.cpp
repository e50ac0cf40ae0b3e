// Golden tests of schemas/speech_to_speech.json (voice_multilingual_sts_v2) through SchemaSet:
// the media union (audio or video), the preset voice (SPEC.md's service-preset literal and the 49
// ids), types, unknown keys.
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

constexpr const char* kEndpoint = "speech_to_speech";

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

json Sts() {
    return json{{"model", "voice_multilingual_sts_v2"},
                {"media", {{"type", "audio"}, {"uri", "https://example.com/speech.mp3"}}},
                {"voice", {{"type", "service-preset"}, {"presetId", "Maya"}}}};
}

const std::vector<std::string> kVoices = {
    "Maya",   "Arjun",    "Serene",  "Bernard", "Billy",   "Mark",    "Clint",    "Mabel", "Chad",
    "Leslie", "Eleanor",  "Elias",   "Elliot",  "Grungle", "Brodie",  "Sandra",   "Kirk",  "Kylie",
    "Lara",   "Lisa",     "Malachi", "Marlene", "Martin",  "Miriam",  "Monster",  "Paula", "Pip",
    "Rusty",  "Ragnar",   "Xylar",   "Maggie",  "Jack",    "Katie",   "Noah",     "James", "Rina",
    "Ella",   "Mariah",   "Frank",   "Claudia", "Niki",    "Vincent", "Kendrick", "Myrna", "Tom",
    "Wanda",  "Benjamin", "Kiana",   "Rachel"};

std::string VoiceList() {
    std::string out;
    for (const std::string& v : kVoices) out += (out.empty() ? "'" : " | '") + v + "'";
    return out;
}

TEST(SpeechToSpeechTest, EndpointAndModels) {
    ExpectEndpoint("/v1/speech_to_speech", {"voice_multilingual_sts_v2"});
    ExpectModelErrors(Sts(), "'voice_multilingual_sts_v2'");
    EXPECT_EQ(Check(With(Sts(), "/model", "eleven_multilingual_sts_v2")),
              Issues{Discriminator({"model"}, "'voice_multilingual_sts_v2'")});
}

TEST(SpeechToSpeechTest, Golden) {
    json full = Sts();
    full["media"] = {{"type", "video"}, {"uri", "https://example.com/talk.mp4"}};
    full["voice"]["presetId"] = "Rachel";
    full["removeBackgroundNoise"] = true;
    std::vector<Golden> table = {
        {"minimal", Sts(), kValid},
        {"full", full, kValid},
        {"missing media and voice",
         Without(Without(Sts(), "/media"), "/voice"),
         {Required({"media"}), Required({"voice"})}},
        {"media as a string",
         With(Sts(), "/media", "https://example.com/speech.mp3"),
         {Type({"media"}, "object", "string")}},
        {"media image",
         With(Sts(), "/media/type", "image"),
         {Discriminator({"media", "type"}, "'audio' | 'video'")}},
        {"media without uri", Without(Sts(), "/media/uri"), {Required({"media", "uri"})}},
        {"audio media with video data",
         With(Sts(), "/media/uri", "data:video/mp4;base64,AAAA"),
         {BadString({"media", "uri"}, "Unsupported asset type")}},
        {"video media with audio data",
         With(With(Sts(), "/media/type", "video"), "/media/uri", "data:audio/mp3;base64,AAAA"),
         {BadString({"media", "uri"}, "Unsupported asset type")}},
        {"media extra key", With(Sts(), "/media/duration", 3), {Unknown({"media"}, "'duration'")}},
        {"client literal",
         With(Sts(), "/voice/type", "runway-preset"),
         {Literal({"voice", "type"}, "service-preset")}},
        {"live preset literal",
         With(Sts(), "/voice/type", "service-live-preset"),
         {Literal({"voice", "type"}, "service-preset")}},
        {"voice without type", Without(Sts(), "/voice/type"), {Required({"voice", "type"})}},
        {"voice without presetId",
         Without(Sts(), "/voice/presetId"),
         {Required({"voice", "presetId"})}},
        {"unknown voice",
         With(Sts(), "/voice/presetId", "Bob"),
         {Enum({"voice", "presetId"}, VoiceList(), "Bob")}},
        {"voice ids are case sensitive",
         With(Sts(), "/voice/presetId", "maya"),
         {Enum({"voice", "presetId"}, VoiceList(), "maya")}},
        {"avatar voice is not a speech voice",
         With(Sts(), "/voice/presetId", "victoria"),
         {Enum({"voice", "presetId"}, VoiceList(), "victoria")}},
        {"voice extra key", With(Sts(), "/voice/name", "Maya"), {Unknown({"voice"}, "'name'")}},
        {"removeBackgroundNoise",
         With(Sts(), "/removeBackgroundNoise", "no"),
         {Type({"removeBackgroundNoise"}, "boolean", "string")}},
        {"unknown key", With(Sts(), "/promptText", "hi"), {Unknown({}, "'promptText'")}},
    };
    for (const std::string& voice : kVoices) {
        table.push_back({voice, With(Sts(), "/voice/presetId", voice), kValid});
    }
    ExpectGolden(table);
    EXPECT_EQ(kVoices.size(), 49u);
}

}  // namespace
}  // namespace genhost::validate
