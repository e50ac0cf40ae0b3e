// Golden tests of schemas/avatar_videos.json (gwm1_avatars) through SchemaSet: preset and custom
// avatars, audio and text speech, the optional voice of a text script (preset or custom), the
// neutral type literals, uuids and string bounds.
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

constexpr const char* kEndpoint = "avatar_videos";

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

const std::string kUuid = "182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e";

json AudioSpeech() {
    return json{{"model", "gwm1_avatars"},
                {"avatar", {{"type", "service-preset"}, {"presetId", "game-character"}}},
                {"speech", {{"type", "audio"}, {"audio", "https://example.com/line.mp3"}}}};
}

json TextSpeech() {
    return json{{"model", "gwm1_avatars"},
                {"avatar", {{"type", "custom"}, {"avatarId", kUuid}}},
                {"speech", {{"type", "text"}, {"text", "Welcome to the show!"}}}};
}

const std::vector<std::string> kAvatars = {
    "game-character", "music-superstar", "game-character-man", "cat-character",  "influencer",
    "tennis-coach",   "human-resource",  "fashion-designer",   "cooking-teacher"};
const std::vector<std::string> kVoices = {
    "victoria", "vincent", "clara",  "drew",   "skye",   "max",    "morgan", "felix",
    "mia",      "marcus",  "summer", "ruby",   "aurora", "jasper", "leo",    "adrian",
    "nina",     "emma",    "blake",  "david",  "maya",   "nathan", "sam",    "georgia",
    "petra",    "adam",    "zach",   "violet", "roman",  "luna"};

std::string List(const std::vector<std::string>& values) {
    std::string out;
    for (const std::string& v : values) out += (out.empty() ? "'" : " | '") + v + "'";
    return out;
}

TEST(AvatarVideosTest, EndpointAndModels) {
    ExpectEndpoint("/v1/avatar_videos", {"gwm1_avatars"});
    ExpectModelErrors(AudioSpeech(), "'gwm1_avatars'");
}

TEST(AvatarVideosTest, AvatarGolden) {
    const std::string types = "'service-preset' | 'custom'";
    std::vector<Golden> table = {
        {"preset avatar", AudioSpeech(), kValid},
        {"custom avatar", TextSpeech(), kValid},
        {"upper-case uuid",
         With(TextSpeech(), "/avatar/avatarId", "182BD5E5-6E1A-4FE4-A799-AA6D9A6AB26E"), kValid},
        {"missing avatar and speech",
         Without(Without(AudioSpeech(), "/avatar"), "/speech"),
         {Required({"avatar"}), Required({"speech"})}},
        {"avatar as a string",
         With(AudioSpeech(), "/avatar", "game-character"),
         {Type({"avatar"}, "object", "string")}},
        {"client literal",
         With(AudioSpeech(), "/avatar/type", "runway-preset"),
         {Discriminator({"avatar", "type"}, types)}},
        {"live preset literal",
         With(AudioSpeech(), "/avatar/type", "service-live-preset"),
         {Discriminator({"avatar", "type"}, types)}},
        {"avatar without type",
         Without(AudioSpeech(), "/avatar/type"),
         {Discriminator({"avatar", "type"}, types)}},
        {"unknown preset",
         With(AudioSpeech(), "/avatar/presetId", "wizard"),
         {Enum({"avatar", "presetId"}, List(kAvatars), "wizard")}},
        {"preset without presetId",
         Without(AudioSpeech(), "/avatar/presetId"),
         {Required({"avatar", "presetId"})}},
        {"custom with a presetId",
         With(AudioSpeech(), "/avatar", {{"type", "custom"}, {"presetId", "influencer"}}),
         {Required({"avatar", "avatarId"}), Unknown({"avatar"}, "'presetId'")}},
        {"custom id is avatarId",
         With(TextSpeech(), "/avatar", {{"type", "custom"}, {"id", kUuid}}),
         {Required({"avatar", "avatarId"}), Unknown({"avatar"}, "'id'")}},
        {"avatarId not a uuid",
         With(TextSpeech(), "/avatar/avatarId", "my-avatar"),
         {BadString({"avatar", "avatarId"}, "Invalid uuid")}},
        {"avatarId version 1",
         With(TextSpeech(), "/avatar/avatarId", "182bd5e5-6e1a-1fe4-a799-aa6d9a6ab26e"),
         {BadString({"avatar", "avatarId"}, "Invalid uuid")}},
        {"avatarId number",
         With(TextSpeech(), "/avatar/avatarId", 5),
         {Type({"avatar", "avatarId"}, "string", "number")}},
    };
    for (const std::string& avatar : kAvatars) {
        table.push_back({avatar, With(AudioSpeech(), "/avatar/presetId", avatar), kValid});
    }
    ExpectGolden(table);
    EXPECT_EQ(kAvatars.size(), 9u);
}

TEST(AvatarVideosTest, SpeechGolden) {
    const json preset_voice = {{"type", "preset"}, {"presetId", "luna"}};
    const json custom_voice = {{"type", "custom"}, {"id", kUuid}};
    const std::string voice_types = "'preset' | 'custom'";
    std::vector<Golden> table = {
        {"audio speech", AudioSpeech(), kValid},
        {"audio data uri", With(AudioSpeech(), "/speech/audio", "data:audio/mp3;base64,AAAA"),
         kValid},
        {"text speech", TextSpeech(), kValid},
        {"text with preset voice", With(TextSpeech(), "/speech/voice", preset_voice), kValid},
        {"text with custom voice", With(TextSpeech(), "/speech/voice", custom_voice), kValid},
        {"speech as a string",
         With(AudioSpeech(), "/speech", "hello"),
         {Type({"speech"}, "object", "string")}},
        {"speech type",
         With(AudioSpeech(), "/speech/type", "ssml"),
         {Discriminator({"speech", "type"}, "'audio' | 'text'")}},
        {"audio missing", Without(AudioSpeech(), "/speech/audio"), {Required({"speech", "audio"})}},
        {"audio under uri",
         With(Without(AudioSpeech(), "/speech/audio"), "/speech/uri",
              "https://example.com/line.mp3"),
         {Required({"speech", "audio"}), Unknown({"speech"}, "'uri'")}},
        {"audio is video",
         With(AudioSpeech(), "/speech/audio", "data:video/mp4;base64,AAAA"),
         {BadString({"speech", "audio"}, "Unsupported asset type")}},
        {"voice on audio speech",
         With(AudioSpeech(), "/speech/voice", preset_voice),
         {Unknown({"speech"}, "'voice'")}},
        {"text missing", Without(TextSpeech(), "/speech/text"), {Required({"speech", "text"})}},
        {"text empty", With(TextSpeech(), "/speech/text", ""), {StrMin({"speech", "text"}, 1)}},
        {"text 5000", With(TextSpeech(), "/speech/text", std::string(5000, 'a')), kValid},
        {"text 5001",
         With(TextSpeech(), "/speech/text", std::string(5001, 'a')),
         {StrMax({"speech", "text"}, 5000)}},
        {"text 2500 emoji", With(TextSpeech(), "/speech/text", Emoji(2500)), kValid},
        {"text 2500 emoji and a",
         With(TextSpeech(), "/speech/text", Emoji(2500) + "a"),
         {StrMax({"speech", "text"}, 5000)}},
        {"text number",
         With(TextSpeech(), "/speech/text", 1),
         {Type({"speech", "text"}, "string", "number")}},
        {"live preset voice",
         With(TextSpeech(), "/speech/voice",
              {{"type", "service-live-preset"}, {"presetId", "luna"}}),
         {Discriminator({"speech", "voice", "type"}, voice_types)}},
        {"client live preset voice",
         With(TextSpeech(), "/speech/voice",
              {{"type", "runway-live-preset"}, {"presetId", "luna"}}),
         {Discriminator({"speech", "voice", "type"}, voice_types)}},
        {"speech voice is not an avatar voice",
         With(TextSpeech(), "/speech/voice", {{"type", "preset"}, {"presetId", "Maya"}}),
         {Enum({"speech", "voice", "presetId"}, List(kVoices), "Maya")}},
        {"preset voice without presetId",
         With(TextSpeech(), "/speech/voice", {{"type", "preset"}}),
         {Required({"speech", "voice", "presetId"})}},
        {"custom voice id",
         With(TextSpeech(), "/speech/voice", {{"type", "custom"}, {"id", "v1"}}),
         {BadString({"speech", "voice", "id"}, "Invalid uuid")}},
        {"custom voice without id",
         With(TextSpeech(), "/speech/voice", {{"type", "custom"}}),
         {Required({"speech", "voice", "id"})}},
        {"voice extra key",
         With(TextSpeech(), "/speech/voice", {{"type", "custom"}, {"id", kUuid}, {"name", "x"}}),
         {Unknown({"speech", "voice"}, "'name'")}},
        {"unknown keys",
         With(With(AudioSpeech(), "/ratio", "1280:720"), "/duration", 5),
         {Unknown({}, "'duration', 'ratio'")}},
    };
    for (const std::string& voice : kVoices) {
        table.push_back(
            {voice, With(TextSpeech(), "/speech/voice", {{"type", "preset"}, {"presetId", voice}}),
             kValid});
    }
    ExpectGolden(table);
    EXPECT_EQ(kVoices.size(), 30u);
}

TEST(AvatarVideosTest, IssuesOfBothUnionsAtOnce) {
    json body = TextSpeech();
    body["avatar"] = {{"type", "custom"}, {"avatarId", "nope"}};
    body["speech"] = {{"type", "text"}, {"text", ""}, {"voice", {{"type", "preset"}}}};
    body["extra"] = true;
    EXPECT_EQ(Check(body), (Issues{
                               BadString({"avatar", "avatarId"}, "Invalid uuid"),
                               StrMin({"speech", "text"}, 1),
                               Required({"speech", "voice", "presetId"}),
                               Unknown({}, "'extra'"),
                           }));
}

TEST(AvatarVideosTest, NoDefaultsToFill) {
    const auto set = RepoSchemas();
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, AudioSpeech()), AudioSpeech());
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, TextSpeech()), TextSpeech());
}

}  // namespace
}  // namespace genhost::validate
