// Golden tests of schemas/sound_effect.json (seed_audio, voice_text_to_sound_v2) through
// SchemaSet: valid bodies, every bound at its limit and one past it, enums, types, defaults.
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

constexpr const char* kEndpoint = "sound_effect";

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

json Seed() { return json{{"model", "seed_audio"}, {"promptText", "rain on a tin roof"}}; }
json Sound() {
    return json{{"model", "voice_text_to_sound_v2"}, {"promptText", "a door creaks open"}};
}

const std::string kModels = "'seed_audio' | 'voice_text_to_sound_v2'";

TEST(SoundEffectTest, EndpointAndModels) {
    ExpectEndpoint("/v1/sound_effect", {"seed_audio", "voice_text_to_sound_v2"});
    ExpectModelErrors(Seed(), kModels);
    EXPECT_EQ(Check(With(Sound(), "/model", "eleven_text_to_sound_v2")),
              Issues{Discriminator({"model"}, kModels)});
}

TEST(SoundEffectTest, SeedAudioGolden) {
    json full = Seed();
    full["referenceAudios"] = {"https://example.com/a.mp3", "genhost://audio-token",
                               "data:audio/wav;base64,UklGRg=="};
    full["speechRate"] = 100;
    full["loudnessRate"] = -50;
    full["pitchRate"] = 12;
    full["sampleRate"] = 48000;
    full["outputFormat"] = "ogg_opus";
    const json audio = "https://example.com/a.mp3";
    std::vector<Golden> table = {
        {"minimal", Seed(), kValid},
        {"full", full, kValid},
        {"no promptText", Without(Seed(), "/promptText"), {Required({"promptText"})}},
        {"promptText 2048", With(Seed(), "/promptText", std::string(2048, 'a')), kValid},
        {"promptText 2049",
         With(Seed(), "/promptText", std::string(2049, 'a')),
         {StrMax({"promptText"}, 2048)}},
        {"promptText 1024 emoji", With(Seed(), "/promptText", Emoji(1024)), kValid},
        {"promptText 1024 emoji and a",
         With(Seed(), "/promptText", Emoji(1024) + "a"),
         {StrMax({"promptText"}, 2048)}},
        {"promptText empty", With(Seed(), "/promptText", ""), {StrMin({"promptText"}, 1)}},
        {"no referenceAudios", With(Seed(), "/referenceAudios", json::array()), kValid},
        {"4 referenceAudios",
         With(Seed(), "/referenceAudios", {audio, audio, audio, audio}),
         {ArrMax({"referenceAudios"}, 3)}},
        {"referenceAudios image",
         With(Seed(), "/referenceAudios", {"data:image/png;base64,AAAA"}),
         {BadString({"referenceAudios", "0"}, "Unsupported asset type")}},
        {"referenceAudios object",
         With(Seed(), "/referenceAudios", json::array({{{"uri", "https://example.com/a.mp3"}}})),
         {Type({"referenceAudios", "0"}, "string", "object")}},
        {"referenceAudios string",
         With(Seed(), "/referenceAudios", "https://example.com/a.mp3"),
         {Type({"referenceAudios"}, "array", "string")}},
        {"speechRate -50", With(Seed(), "/speechRate", -50), kValid},
        {"speechRate 100", With(Seed(), "/speechRate", 100), kValid},
        {"speechRate -51", With(Seed(), "/speechRate", -51), {NumMin({"speechRate"}, "-50")}},
        {"speechRate 101", With(Seed(), "/speechRate", 101), {NumMax({"speechRate"}, "100")}},
        {"speechRate 1.5", With(Seed(), "/speechRate", 1.5), {Integer({"speechRate"})}},
        {"loudnessRate -50", With(Seed(), "/loudnessRate", -50), kValid},
        {"loudnessRate 100", With(Seed(), "/loudnessRate", 100), kValid},
        {"loudnessRate -51", With(Seed(), "/loudnessRate", -51), {NumMin({"loudnessRate"}, "-50")}},
        {"loudnessRate 101", With(Seed(), "/loudnessRate", 101), {NumMax({"loudnessRate"}, "100")}},
        {"pitchRate -12", With(Seed(), "/pitchRate", -12), kValid},
        {"pitchRate 12", With(Seed(), "/pitchRate", 12), kValid},
        {"pitchRate -13", With(Seed(), "/pitchRate", -13), {NumMin({"pitchRate"}, "-12")}},
        {"pitchRate 13", With(Seed(), "/pitchRate", 13), {NumMax({"pitchRate"}, "12")}},
        {"pitchRate 0.5", With(Seed(), "/pitchRate", 0.5), {Integer({"pitchRate"})}},
        {"sampleRate 22050",
         With(Seed(), "/sampleRate", 22050),
         {Enum({"sampleRate"}, "8000 | 16000 | 24000 | 32000 | 44100 | 48000", "22050")}},
        {"sampleRate string",
         With(Seed(), "/sampleRate", "8000"),
         {Type({"sampleRate"}, "number", "string")}},
        {"outputFormat",
         With(Seed(), "/outputFormat", "flac"),
         {Enum({"outputFormat"}, "'wav' | 'mp3' | 'ogg_opus'", "flac")}},
        {"fields of the other model",
         With(With(Seed(), "/duration", 5), "/loop", true),
         {Unknown({}, "'duration', 'loop'")}},
        {"voice is a text_to_speech field",
         With(Seed(), "/voice", {{"type", "reference-audio"}, {"audioUri", audio}}),
         {Unknown({}, "'voice'")}},
    };
    for (int rate : {8000, 16000, 24000, 32000, 44100, 48000}) {
        table.push_back({"sampleRate", With(Seed(), "/sampleRate", rate), kValid});
    }
    for (const char* format : {"wav", "mp3", "ogg_opus"}) {
        table.push_back({format, With(Seed(), "/outputFormat", format), kValid});
    }
    ExpectGolden(table);
}

TEST(SoundEffectTest, VoiceTextToSoundGolden) {
    json full = Sound();
    full["duration"] = 12.5;
    full["loop"] = true;
    ExpectGolden({
        {"minimal", Sound(), kValid},
        {"full", full, kValid},
        {"no promptText", Without(Sound(), "/promptText"), {Required({"promptText"})}},
        {"promptText 3000", With(Sound(), "/promptText", std::string(3000, 'a')), kValid},
        {"promptText 3001",
         With(Sound(), "/promptText", std::string(3001, 'a')),
         {StrMax({"promptText"}, 3000)}},
        {"promptText 1500 emoji", With(Sound(), "/promptText", Emoji(1500)), kValid},
        {"promptText 1500 emoji and a",
         With(Sound(), "/promptText", Emoji(1500) + "a"),
         {StrMax({"promptText"}, 3000)}},
        {"promptText empty", With(Sound(), "/promptText", ""), {StrMin({"promptText"}, 1)}},
        {"duration 0.5", With(Sound(), "/duration", 0.5), kValid},
        {"duration 30", With(Sound(), "/duration", 30), kValid},
        {"duration 0.49", With(Sound(), "/duration", 0.49), {NumMin({"duration"}, "0.5")}},
        {"duration 0", With(Sound(), "/duration", 0), {NumMin({"duration"}, "0.5")}},
        {"duration 30.01", With(Sound(), "/duration", 30.01), {NumMax({"duration"}, "30")}},
        {"duration 31", With(Sound(), "/duration", 31), {NumMax({"duration"}, "30")}},
        {"duration string",
         With(Sound(), "/duration", "5"),
         {Type({"duration"}, "number", "string")}},
        {"loop", With(Sound(), "/loop", "true"), {Type({"loop"}, "boolean", "string")}},
        {"fields of the other model",
         With(Sound(), "/sampleRate", 8000),
         {Unknown({}, "'sampleRate'")}},
    });
}

TEST(SoundEffectTest, Defaults) {
    const auto set = RepoSchemas();
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, Sound()), With(Sound(), "/loop", false));
    json looped = With(Sound(), "/loop", true);
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, looped), looped);
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, Seed()), Seed());
}

}  // namespace
}  // namespace genhost::validate
