// Golden tests of schemas/text_to_speech.json (seed_audio, voice_multilingual_v2, voice_v3)
// through SchemaSet: valid bodies, every bound at its limit and one past it, the voice shapes.
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

constexpr const char* kEndpoint = "text_to_speech";

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

json Seed() { return json{{"model", "seed_audio"}, {"promptText", "Hello there."}}; }
json Multilingual() {
    return json{{"model", "voice_multilingual_v2"},
                {"promptText", "Hello there."},
                {"voice", {{"type", "service-preset"}, {"presetId", "Maya"}}}};
}
json V3() {
    return json{{"model", "voice_v3"},
                {"promptText", "[whispers] Hello there."},
                {"voice", {{"type", "service-preset"}, {"presetId", "Rachel"}}}};
}

const std::string kModels = "'seed_audio' | 'voice_multilingual_v2' | 'voice_v3'";

TEST(TextToSpeechTest, EndpointAndModels) {
    ExpectEndpoint("/v1/text_to_speech", {"seed_audio", "voice_multilingual_v2", "voice_v3"});
    ExpectModelErrors(Multilingual(), kModels);
    EXPECT_EQ(Check(With(Multilingual(), "/model", "eleven_multilingual_v2")),
              Issues{Discriminator({"model"}, kModels)});
    EXPECT_EQ(Check(With(V3(), "/model", "eleven_v3")), Issues{Discriminator({"model"}, kModels)});
}

TEST(TextToSpeechTest, SeedAudioGolden) {
    json full = Seed();
    full["voice"] = {{"type", "reference-audio"}, {"audioUri", "https://example.com/me.wav"}};
    full["speechRate"] = -50;
    full["loudnessRate"] = 100;
    full["pitchRate"] = -12;
    full["sampleRate"] = 8000;
    full["outputFormat"] = "mp3";
    std::vector<Golden> table = {
        {"minimal", Seed(), kValid},
        {"full", full, kValid},
        {"promptText 2048", With(Seed(), "/promptText", std::string(2048, 'a')), kValid},
        {"promptText 2049",
         With(Seed(), "/promptText", std::string(2049, 'a')),
         {StrMax({"promptText"}, 2048)}},
        {"promptText empty", With(Seed(), "/promptText", ""), {StrMin({"promptText"}, 1)}},
        {"no promptText", Without(Seed(), "/promptText"), {Required({"promptText"})}},
        {"preset voice",
         With(Seed(), "/voice", {{"type", "service-preset"}, {"presetId", "Maya"}}),
         {Literal({"voice", "type"}, "reference-audio"), Required({"voice", "audioUri"}),
          Unknown({"voice"}, "'presetId'")}},
        {"voice without audioUri",
         With(Seed(), "/voice", {{"type", "reference-audio"}}),
         {Required({"voice", "audioUri"})}},
        {"voice with an image",
         With(full, "/voice/audioUri", "data:image/png;base64,AAAA"),
         {BadString({"voice", "audioUri"}, "Unsupported asset type")}},
        {"voice as a string",
         With(Seed(), "/voice", "https://example.com/me.wav"),
         {Type({"voice"}, "object", "string")}},
        {"speechRate -51", With(Seed(), "/speechRate", -51), {NumMin({"speechRate"}, "-50")}},
        {"speechRate 101", With(Seed(), "/speechRate", 101), {NumMax({"speechRate"}, "100")}},
        {"loudnessRate -51", With(Seed(), "/loudnessRate", -51), {NumMin({"loudnessRate"}, "-50")}},
        {"loudnessRate 101", With(Seed(), "/loudnessRate", 101), {NumMax({"loudnessRate"}, "100")}},
        {"loudnessRate 0.5", With(Seed(), "/loudnessRate", 0.5), {Integer({"loudnessRate"})}},
        {"pitchRate -13", With(Seed(), "/pitchRate", -13), {NumMin({"pitchRate"}, "-12")}},
        {"pitchRate 13", With(Seed(), "/pitchRate", 13), {NumMax({"pitchRate"}, "12")}},
        {"sampleRate 96000",
         With(Seed(), "/sampleRate", 96000),
         {Enum({"sampleRate"}, "8000 | 16000 | 24000 | 32000 | 44100 | 48000", "96000")}},
        {"outputFormat",
         With(Seed(), "/outputFormat", "aac"),
         {Enum({"outputFormat"}, "'wav' | 'mp3' | 'ogg_opus'", "aac")}},
        {"referenceAudios is a sound_effect field",
         With(Seed(), "/referenceAudios", json::array()),
         {Unknown({}, "'referenceAudios'")}},
    };
    for (int rate : {8000, 16000, 24000, 32000, 44100, 48000}) {
        table.push_back({"sampleRate", With(Seed(), "/sampleRate", rate), kValid});
    }
    ExpectGolden(table);
}

TEST(TextToSpeechTest, VoiceMultilingualGolden) {
    ExpectGolden({
        {"minimal", Multilingual(), kValid},
        {"promptText 1000", With(Multilingual(), "/promptText", std::string(1000, 'a')), kValid},
        {"promptText 1001",
         With(Multilingual(), "/promptText", std::string(1001, 'a')),
         {StrMax({"promptText"}, 1000)}},
        {"promptText 500 emoji", With(Multilingual(), "/promptText", Emoji(500)), kValid},
        {"promptText 500 emoji and a",
         With(Multilingual(), "/promptText", Emoji(500) + "a"),
         {StrMax({"promptText"}, 1000)}},
        {"promptText empty", With(Multilingual(), "/promptText", ""), {StrMin({"promptText"}, 1)}},
        {"no voice", Without(Multilingual(), "/voice"), {Required({"voice"})}},
        {"client literal",
         With(Multilingual(), "/voice/type", "runway-preset"),
         {Literal({"voice", "type"}, "service-preset")}},
        {"reference voice",
         With(Multilingual(), "/voice",
              {{"type", "reference-audio"}, {"audioUri", "https://example.com/me.wav"}}),
         {Literal({"voice", "type"}, "service-preset"), Required({"voice", "presetId"}),
          Unknown({"voice"}, "'audioUri'")}},
        {"last voice", With(Multilingual(), "/voice/presetId", "Rachel"), kValid},
        {"no seed", With(Multilingual(), "/seed", 1), {Unknown({}, "'seed'")}},
    });
}

TEST(TextToSpeechTest, PresetVoiceIds) {
    for (const json& body : {Multilingual(), V3()}) {
        EXPECT_THAT(Check(With(body, "/voice/presetId", "Claudia")), ::testing::IsEmpty());
        EXPECT_THAT(Check(With(body, "/voice/presetId", "Niki")), ::testing::IsEmpty());
        for (const char* wrong : {"Robot", "maya", "victoria"}) {
            const Issues issues = Check(With(body, "/voice/presetId", wrong));
            ASSERT_EQ(issues.size(), 1u) << wrong;
            EXPECT_EQ(issues[0].code, "invalid_enum_value");
            EXPECT_EQ(issues[0].path, (Path{"voice", "presetId"}));
            EXPECT_THAT(issues[0].message,
                        ::testing::StartsWith("Invalid enum value. Expected 'Maya' | 'Arjun' | "));
            EXPECT_THAT(issues[0].message,
                        ::testing::EndsWith("'Rachel', received '" + std::string(wrong) + "'"));
        }
    }
}

TEST(TextToSpeechTest, VoiceV3Golden) {
    json full = V3();
    full["stability"] = 0;
    full["similarityBoost"] = 1;
    full["style"] = 0.35;
    full["speed"] = 1.2;
    full["useSpeakerBoost"] = true;
    full["languageCode"] = "pt-BR";
    full["applyTextNormalization"] = "off";
    full["seed"] = 4294967295u;
    std::vector<Golden> table = {
        {"minimal", V3(), kValid},
        {"full", full, kValid},
        {"promptText 5000", With(V3(), "/promptText", std::string(5000, 'a')), kValid},
        {"promptText 5001",
         With(V3(), "/promptText", std::string(5001, 'a')),
         {StrMax({"promptText"}, 5000)}},
        {"promptText 2500 emoji and a",
         With(V3(), "/promptText", Emoji(2500) + "a"),
         {StrMax({"promptText"}, 5000)}},
        {"promptText empty", With(V3(), "/promptText", ""), {StrMin({"promptText"}, 1)}},
        {"no voice", Without(V3(), "/voice"), {Required({"voice"})}},
        {"client literal",
         With(V3(), "/voice/type", "runway-preset"),
         {Literal({"voice", "type"}, "service-preset")}},
        {"speed 0.7", With(V3(), "/speed", 0.7), kValid},
        {"speed 0.69", With(V3(), "/speed", 0.69), {NumMin({"speed"}, "0.7")}},
        {"speed 1.21", With(V3(), "/speed", 1.21), {NumMax({"speed"}, "1.2")}},
        {"speed 2", With(V3(), "/speed", 2), {NumMax({"speed"}, "1.2")}},
        {"useSpeakerBoost",
         With(V3(), "/useSpeakerBoost", 1),
         {Type({"useSpeakerBoost"}, "boolean", "number")}},
        {"languageCode en", With(V3(), "/languageCode", "en"), kValid},
        {"languageCode 6", With(V3(), "/languageCode", "en-USA"), {StrMax({"languageCode"}, 5)}},
        {"languageCode number",
         With(V3(), "/languageCode", 1),
         {Type({"languageCode"}, "string", "number")}},
        {"applyTextNormalization",
         With(V3(), "/applyTextNormalization", "yes"),
         {Enum({"applyTextNormalization"}, "'auto' | 'on' | 'off'", "yes")}},
        {"seed 0", With(V3(), "/seed", 0), kValid},
        {"seed -1", With(V3(), "/seed", -1), {NumMin({"seed"}, "0")}},
        {"seed 2^32", With(V3(), "/seed", 4294967296u), {NumMax({"seed"}, "4294967295")}},
        {"seed 1.5", With(V3(), "/seed", 1.5), {Integer({"seed"})}},
        {"seed_audio field", With(V3(), "/sampleRate", 8000), {Unknown({}, "'sampleRate'")}},
    };
    for (const char* field : {"stability", "similarityBoost", "style"}) {
        const std::string at = std::string("/") + field;
        table.push_back({field, With(V3(), at, 0), kValid});
        table.push_back({field, With(V3(), at, 1), kValid});
        table.push_back({field, With(V3(), at, 0.5), kValid});
        table.push_back({field, With(V3(), at, -0.01), {NumMin({field}, "0")}});
        table.push_back({field, With(V3(), at, 1.01), {NumMax({field}, "1")}});
        table.push_back({field, With(V3(), at, "1"), {Type({field}, "number", "string")}});
    }
    for (const char* mode : {"auto", "on", "off"}) {
        table.push_back({mode, With(V3(), "/applyTextNormalization", mode), kValid});
    }
    ExpectGolden(table);
}

TEST(TextToSpeechTest, NoDefaultsToFill) {
    const auto set = RepoSchemas();
    for (const json& body : {Seed(), Multilingual(), V3()}) {
        EXPECT_EQ(set->ApplyDefaults(kEndpoint, body), body);
    }
}

}  // namespace
}  // namespace genhost::validate
