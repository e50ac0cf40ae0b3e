// Golden tests of schemas/voice_dubbing.json (voice_dubbing) through SchemaSet: a valid body, the
// 29 target languages, numSpeakers > 0, types and unknown keys.
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

constexpr const char* kEndpoint = "voice_dubbing";

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

json Dub() {
    return json{{"model", "voice_dubbing"},
                {"audioUri", "https://example.com/interview.mp3"},
                {"targetLang", "es"}};
}

const std::vector<std::string> kLanguages = {
    "en", "hi", "pt",  "zh", "es", "fr", "de", "ja", "ar", "ru", "ko", "id", "it", "nl", "tr",
    "pl", "sv", "fil", "ms", "ro", "uk", "el", "cs", "da", "fi", "bg", "hr", "sk", "ta"};

std::string LanguageList() {
    std::string out;
    for (const std::string& l : kLanguages) out += (out.empty() ? "'" : " | '") + l + "'";
    return out;
}

TEST(VoiceDubbingTest, EndpointAndModels) {
    ExpectEndpoint("/v1/voice_dubbing", {"voice_dubbing"});
    ExpectModelErrors(Dub(), "'voice_dubbing'");
    EXPECT_EQ(Check(With(Dub(), "/model", "eleven_voice_dubbing")),
              Issues{Discriminator({"model"}, "'voice_dubbing'")});
}

TEST(VoiceDubbingTest, Golden) {
    json full = Dub();
    full["disableVoiceCloning"] = true;
    full["dropBackgroundAudio"] = false;
    full["numSpeakers"] = 2;
    std::vector<Golden> table = {
        {"minimal", Dub(), kValid},
        {"full", full, kValid},
        {"missing audioUri and targetLang",
         Without(Without(Dub(), "/audioUri"), "/targetLang"),
         {Required({"audioUri"}), Required({"targetLang"})}},
        {"audioUri video",
         With(Dub(), "/audioUri", "data:video/mp4;base64,AAAA"),
         {BadString({"audioUri"}, "Unsupported asset type")}},
        {"audioUri data", With(Dub(), "/audioUri", "data:audio/mpeg;base64,AAAA"), kValid},
        {"targetLang xx",
         With(Dub(), "/targetLang", "xx"),
         {Enum({"targetLang"}, LanguageList(), "xx")}},
        {"targetLang upper case",
         With(Dub(), "/targetLang", "EN"),
         {Enum({"targetLang"}, LanguageList(), "EN")}},
        {"targetLang region",
         With(Dub(), "/targetLang", "pt-BR"),
         {Enum({"targetLang"}, LanguageList(), "pt-BR")}},
        {"targetLang array",
         With(Dub(), "/targetLang", {"es"}),
         {Type({"targetLang"}, LanguageList(), "array")}},
        {"numSpeakers 1", With(Dub(), "/numSpeakers", 1), kValid},
        {"numSpeakers 100", With(Dub(), "/numSpeakers", 100), kValid},
        {"numSpeakers 0",
         With(Dub(), "/numSpeakers", 0),
         {{"too_small", {"numSpeakers"}, "Number must be greater than 0"}}},
        {"numSpeakers -1",
         With(Dub(), "/numSpeakers", -1),
         {{"too_small", {"numSpeakers"}, "Number must be greater than 0"}}},
        {"numSpeakers 1.5", With(Dub(), "/numSpeakers", 1.5), {Integer({"numSpeakers"})}},
        {"numSpeakers 0.5", With(Dub(), "/numSpeakers", 0.5), {Integer({"numSpeakers"})}},
        {"disableVoiceCloning",
         With(Dub(), "/disableVoiceCloning", "true"),
         {Type({"disableVoiceCloning"}, "boolean", "string")}},
        {"dropBackgroundAudio",
         With(Dub(), "/dropBackgroundAudio", nullptr),
         {Type({"dropBackgroundAudio"}, "boolean", "null")}},
        {"unknown key", With(Dub(), "/sourceLang", "en"), {Unknown({}, "'sourceLang'")}},
    };
    for (const std::string& language : kLanguages) {
        table.push_back({language, With(Dub(), "/targetLang", language), kValid});
    }
    ExpectGolden(table);
    EXPECT_EQ(kLanguages.size(), 29u);
}

}  // namespace
}  // namespace genhost::validate
