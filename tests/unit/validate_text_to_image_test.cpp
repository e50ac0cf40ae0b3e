// Tests of schemas/text_to_image.json (and the schemas/common.json pieces it uses) through
// SchemaSet: valid bodies, every bound at its limit and one past it, discriminator errors,
// unknown keys, wrong types, media strings, issue order and hostile input.
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

const std::string kRatios =
    "'1024:1024' | '1080:1080' | '1168:880' | '1360:768' | '1440:1080' | '1080:1440' | "
    "'1808:768' | '1920:1080' | '1080:1920' | '2112:912' | '1280:720' | '720:1280' | '720:720' | "
    "'960:720' | '720:960' | '1680:720'";
const std::string kTagMessage =
    "Tag must start with a letter and contain only letters, digits and underscores";
const std::string kModels =
    "'gen4_image_turbo' | 'gen4_image' | 'image_gen_2' | 'image_pro_3' | 'image_flash_3_1' | "
    "'image_flash_2_5' | 'seedream5_pro' | 'seedream5_lite'";

json Turbo() {
    return json{{"model", "gen4_image_turbo"},
                {"promptText", "a cat on a skateboard"},
                {"ratio", "1024:1024"},
                {"referenceImages", json::array({{{"uri", "https://example.com/cat.png"}}})}};
}

json Gen4Image() {
    return json{{"model", "gen4_image"}, {"promptText", "a cat"}, {"ratio", "1920:1080"}};
}

class TextToImageTest : public ::testing::Test {
  protected:
    std::vector<Issue> Check(const json& body) const {
        return RepoSchemas()->Validate("text_to_image", body);
    }
    // One returns the only issue of `body`, failing the test if there is not exactly one.
    Issue One(const json& body) const {
        const std::vector<Issue> issues = Check(body);
        EXPECT_EQ(issues.size(), 1u) << body.dump().substr(0, 300);
        return issues.empty() ? Issue{} : issues.front();
    }
    std::vector<Issue> WithUri(const std::string& uri) const {
        json body = Turbo();
        body["referenceImages"][0]["uri"] = uri;
        return Check(body);
    }
    static Path UriPath() { return {"referenceImages", "0", "uri"}; }
};

TEST_F(TextToImageTest, EndpointIsListed) {
    const auto set = RepoSchemas();
    const EndpointInfo* info = set->FindEndpoint("text_to_image");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->method, "POST");
    EXPECT_EQ(info->path, "/v1/text_to_image");
    EXPECT_EQ(info->kind, "generation");
    EXPECT_FALSE(info->summary.empty());
    EXPECT_EQ(set->FindEndpoint("nope"), nullptr);
    EXPECT_NE(set->Document("schemas/text_to_image.json"), nullptr);
    EXPECT_NE(set->Document("schemas/common.json"), nullptr);
    EXPECT_EQ(set->Document("schemas/none.json"), nullptr);
}

TEST_F(TextToImageTest, CommonDefinitionsHoldTheSpecLists) {
    const json& defs = (*RepoSchemas()->Document("schemas/common.json"))["$defs"];
    EXPECT_EQ(defs["speechVoiceId"]["enum"].size(), 49u);
    EXPECT_EQ(defs["speechVoiceId"]["enum"][40], "Niki");
    EXPECT_EQ(defs["avatarVoiceId"]["enum"].size(), 30u);
    EXPECT_EQ(defs["presetAvatarId"]["enum"].size(), 9u);
    EXPECT_EQ(defs["ratioS12"]["enum"].size(), 12u);
    EXPECT_EQ(defs["ratioS24"]["enum"].size(), 24u);
    EXPECT_EQ(defs["ratioS25"]["enum"].size(), 18u);
    EXPECT_EQ(defs["outputFormat"]["enum"].size(), 12u);
    EXPECT_EQ(defs["proresProfile"]["enum"].size(), 6u);
}

TEST_F(TextToImageTest, ValidBodiesPass) {
    EXPECT_THAT(Check(Turbo()), ::testing::IsEmpty());
    json full = Turbo();
    full["referenceImages"] = json::array({{{"uri", "https://example.com/a.png"}, {"tag", "hero"}},
                                           {{"uri", "genhost://upload-token_1"}, {"tag", "Cat_2"}},
                                           {{"uri", "data:image/png;base64,iVBORw0KGgo="}}});
    full["seed"] = 42;
    full["contentModeration"] = {{"publicFigureThreshold", "low"}};
    EXPECT_THAT(Check(full), ::testing::IsEmpty());
    EXPECT_THAT(Check(Gen4Image()), ::testing::IsEmpty());
    json empty_refs = Gen4Image();
    empty_refs["referenceImages"] = json::array();
    EXPECT_THAT(Check(empty_refs), ::testing::IsEmpty());
    json empty_moderation = Gen4Image();
    empty_moderation["contentModeration"] = json::object();
    EXPECT_THAT(Check(empty_moderation), ::testing::IsEmpty());
}

TEST_F(TextToImageTest, EveryRatioPasses) {
    for (const char* ratio :
         {"1024:1024", "1080:1080", "1168:880", "1360:768", "1440:1080", "1080:1440", "1808:768",
          "1920:1080", "1080:1920", "2112:912", "1280:720", "720:1280", "720:720", "960:720",
          "720:960", "1680:720"}) {
        json body = Turbo();
        body["ratio"] = ratio;
        EXPECT_THAT(Check(body), ::testing::IsEmpty()) << ratio;
    }
}

TEST_F(TextToImageTest, PromptTextBoundsCountUtf16Units) {
    json body = Turbo();
    body["promptText"] = std::string(1000, 'a');
    EXPECT_THAT(Check(body), ::testing::IsEmpty());
    body["promptText"] = std::string(1001, 'a');
    EXPECT_EQ(One(body),
              (Issue{"too_big", {"promptText"}, "String must contain at most 1000 character(s)"}));

    std::string emoji;
    for (int i = 0; i < 500; ++i) emoji += "\xF0\x9F\x98\x80";  // U+1F600: two UTF-16 units
    body["promptText"] = emoji;
    EXPECT_THAT(Check(body), ::testing::IsEmpty());
    body["promptText"] = emoji + "a";
    EXPECT_EQ(One(body).code, "too_big");
    body["promptText"] = std::string(999, 'a') + "\xF0\x9F\x98\x80";
    EXPECT_EQ(One(body).code, "too_big");
    // Three-byte characters are one unit each: 1000 of them fit.
    std::string euros;
    for (int i = 0; i < 1000; ++i) euros += "\xE2\x82\xAC";
    body["promptText"] = euros;
    EXPECT_THAT(Check(body), ::testing::IsEmpty());

    body["promptText"] = "";
    EXPECT_EQ(One(body),
              (Issue{"too_small", {"promptText"}, "String must contain at least 1 character(s)"}));
}

TEST_F(TextToImageTest, MissingOrUnknownModel) {
    const Issue expected{"invalid_union_discriminator",
                         {"model"},
                         "Invalid discriminator value. Expected " + kModels};
    json body = Turbo();
    body.erase("model");
    EXPECT_EQ(One(body), expected);
    body["model"] = "gen5_image";
    EXPECT_EQ(One(body), expected);
    body["model"] = 5;
    EXPECT_EQ(One(body), expected);
    body["model"] = nullptr;
    EXPECT_EQ(One(body), expected);
    body["model"] = "GEN4_IMAGE";
    EXPECT_EQ(One(body), expected);
}

TEST_F(TextToImageTest, RetiredModelsAreNamed) {
    json body = Turbo();
    body["model"] = "gen3a_turbo";
    EXPECT_EQ(One(body), (Issue{"invalid_union_discriminator",
                                {"model"},
                                "Model 'gen3a_turbo' has been retired (replaced by gen4.5 or "
                                "gen4_turbo). Expected " +
                                    kModels}));
    body["model"] = "gen4_aleph";
    EXPECT_EQ(One(body), (Issue{"invalid_union_discriminator",
                                {"model"},
                                "Model 'gen4_aleph' has been retired (replaced by aleph2). "
                                "Expected " +
                                    kModels}));
}

TEST_F(TextToImageTest, NonObjectBodies) {
    EXPECT_EQ(One(json::array()), (Issue{"invalid_type", {}, "Expected object, received array"}));
    EXPECT_EQ(One(json(nullptr)), (Issue{"invalid_type", {}, "Expected object, received null"}));
    EXPECT_EQ(One(json("x")), (Issue{"invalid_type", {}, "Expected object, received string"}));
    EXPECT_EQ(One(json(1.5)), (Issue{"invalid_type", {}, "Expected object, received number"}));
}

TEST_F(TextToImageTest, MissingRequiredFields) {
    json body = {{"model", "gen4_image_turbo"}};
    EXPECT_EQ(Check(body), (std::vector<Issue>{
                               {"invalid_type", {"promptText"}, "Required"},
                               {"invalid_type", {"ratio"}, "Required"},
                               {"invalid_type", {"referenceImages"}, "Required"},
                           }));
    body["model"] = "gen4_image";
    EXPECT_EQ(Check(body), (std::vector<Issue>{
                               {"invalid_type", {"promptText"}, "Required"},
                               {"invalid_type", {"ratio"}, "Required"},
                           }));
    json image = Turbo();
    image["referenceImages"][0].erase("uri");
    EXPECT_EQ(One(image), (Issue{"invalid_type", UriPath(), "Required"}));
}

TEST_F(TextToImageTest, UnknownKeys) {
    json body = Turbo();
    body["foo"] = 1;
    EXPECT_EQ(One(body), (Issue{"unrecognized_keys", {}, "Unrecognized key(s) in object: 'foo'"}));
    // A field of the other model is unknown too: only the chosen model's fields are valid.
    body = Turbo();
    body["bar"] = true;
    body["duration"] = 5;
    EXPECT_EQ(One(body),
              (Issue{"unrecognized_keys", {}, "Unrecognized key(s) in object: 'bar', 'duration'"}));
    body = Turbo();
    body["referenceImages"][0]["weight"] = 1;
    EXPECT_EQ(One(body), (Issue{"unrecognized_keys",
                                {"referenceImages", "0"},
                                "Unrecognized key(s) in object: 'weight'"}));
    body = Turbo();
    body["contentModeration"] = {{"publicFigureThreshold", "auto"}, {"strict", true}};
    EXPECT_EQ(One(body), (Issue{"unrecognized_keys",
                                {"contentModeration"},
                                "Unrecognized key(s) in object: 'strict'"}));
}

TEST_F(TextToImageTest, WrongTypes) {
    json body = Turbo();
    body["promptText"] = 5;
    EXPECT_EQ(One(body),
              (Issue{"invalid_type", {"promptText"}, "Expected string, received number"}));
    body = Turbo();
    body["promptText"] = nullptr;
    EXPECT_EQ(One(body), (Issue{"invalid_type", {"promptText"}, "Expected string, received null"}));
    body = Turbo();
    body["ratio"] = 1024;
    EXPECT_EQ(One(body),
              (Issue{"invalid_type", {"ratio"}, "Expected " + kRatios + ", received number"}));
    body = Turbo();
    body["ratio"] = "1:1";
    EXPECT_EQ(One(body), (Issue{"invalid_enum_value",
                                {"ratio"},
                                "Invalid enum value. Expected " + kRatios + ", received '1:1'"}));
    body = Turbo();
    body["referenceImages"] = "https://example.com/cat.png";
    EXPECT_EQ(One(body),
              (Issue{"invalid_type", {"referenceImages"}, "Expected array, received string"}));
    body = Turbo();
    body["referenceImages"][0] = "https://example.com/cat.png";
    EXPECT_EQ(
        One(body),
        (Issue{"invalid_type", {"referenceImages", "0"}, "Expected object, received string"}));
    body = Turbo();
    body["seed"] = "1";
    EXPECT_EQ(One(body), (Issue{"invalid_type", {"seed"}, "Expected number, received string"}));
    body = Turbo();
    body["seed"] = true;
    EXPECT_EQ(One(body), (Issue{"invalid_type", {"seed"}, "Expected number, received boolean"}));
    body = Turbo();
    body["contentModeration"] = json::array();
    EXPECT_EQ(One(body),
              (Issue{"invalid_type", {"contentModeration"}, "Expected object, received array"}));
    body = Turbo();
    body["contentModeration"] = {{"publicFigureThreshold", "high"}};
    EXPECT_EQ(One(body), (Issue{"invalid_enum_value",
                                {"contentModeration", "publicFigureThreshold"},
                                "Invalid enum value. Expected 'auto' | 'low', received 'high'"}));
    body = Turbo();
    body["referenceImages"][0]["tag"] = 7;
    EXPECT_EQ(One(body), (Issue{"invalid_type",
                                {"referenceImages", "0", "tag"},
                                "Expected string, received number"}));
}

TEST_F(TextToImageTest, IntegerVersusFloat) {
    json body = Turbo();
    body["seed"] = 5.0;  // an integer, as in JavaScript
    EXPECT_THAT(Check(body), ::testing::IsEmpty());
    body["seed"] = 5.5;
    EXPECT_EQ(One(body), (Issue{"invalid_type", {"seed"}, "Expected integer, received float"}));
    body["seed"] = -0.5;
    EXPECT_EQ(Check(body), (std::vector<Issue>{
                               {"invalid_type", {"seed"}, "Expected integer, received float"},
                               {"too_small", {"seed"}, "Number must be greater than or equal to 0"},
                           }));
    body["seed"] = 1e300;
    EXPECT_EQ(One(body),
              (Issue{"too_big", {"seed"}, "Number must be less than or equal to 4294967295"}));
}

TEST_F(TextToImageTest, SeedBounds) {
    json body = Turbo();
    body["seed"] = 0;
    EXPECT_THAT(Check(body), ::testing::IsEmpty());
    body["seed"] = 4294967295u;
    EXPECT_THAT(Check(body), ::testing::IsEmpty());
    body["seed"] = -1;
    EXPECT_EQ(One(body),
              (Issue{"too_small", {"seed"}, "Number must be greater than or equal to 0"}));
    body["seed"] = 4294967296u;
    EXPECT_EQ(One(body),
              (Issue{"too_big", {"seed"}, "Number must be less than or equal to 4294967295"}));
    body["seed"] = json::parse("18446744073709551615");
    EXPECT_EQ(One(body).code, "too_big");
}

TEST_F(TextToImageTest, TagPattern) {
    const Path tag_path = {"referenceImages", "0", "tag"};
    auto with_tag = [&](const std::string& tag) {
        json body = Turbo();
        body["referenceImages"][0]["tag"] = tag;
        return Check(body);
    };
    for (const char* ok : {"abc", "a_1", "Cat_2", "x123456789012345"}) {
        EXPECT_THAT(with_tag(ok), ::testing::IsEmpty()) << ok;
    }
    EXPECT_EQ(with_tag("ab"),
              (std::vector<Issue>{
                  {"too_small", tag_path, "String must contain at least 3 character(s)"}}));
    EXPECT_EQ(
        with_tag("x1234567890123456"),
        (std::vector<Issue>{{"too_big", tag_path, "String must contain at most 16 character(s)"}}));
    EXPECT_EQ(with_tag("1abc"), (std::vector<Issue>{{"invalid_string", tag_path, kTagMessage}}));
    EXPECT_EQ(with_tag("ab-c"), (std::vector<Issue>{{"invalid_string", tag_path, kTagMessage}}));
    EXPECT_EQ(with_tag("_abc"), (std::vector<Issue>{{"invalid_string", tag_path, kTagMessage}}));
    EXPECT_EQ(with_tag("caf\xC3\xA9"),
              (std::vector<Issue>{{"invalid_string", tag_path, kTagMessage}}));
    EXPECT_EQ(with_tag("a-"),
              (std::vector<Issue>{
                  {"too_small", tag_path, "String must contain at least 3 character(s)"},
                  {"invalid_string", tag_path, kTagMessage},
              }));
}

TEST_F(TextToImageTest, ReferenceImageCounts) {
    const json image = {{"uri", "https://example.com/cat.png"}};
    json body = Turbo();
    body["referenceImages"] = json::array();
    EXPECT_EQ(
        One(body),
        (Issue{"too_small", {"referenceImages"}, "Array must contain at least 1 element(s)"}));
    body["referenceImages"] = json::array({image, image, image});
    EXPECT_THAT(Check(body), ::testing::IsEmpty());
    body["referenceImages"].push_back(image);
    EXPECT_EQ(One(body),
              (Issue{"too_big", {"referenceImages"}, "Array must contain at most 3 element(s)"}));
    json gen4 = Gen4Image();
    gen4["referenceImages"] = json::array({image, image, image, image});
    EXPECT_EQ(One(gen4),
              (Issue{"too_big", {"referenceImages"}, "Array must contain at most 3 element(s)"}));
}

TEST_F(TextToImageTest, MediaHttpsUrls) {
    EXPECT_THAT(WithUri("https://example.com/cat.png?size=large#top"), ::testing::IsEmpty());
    EXPECT_THAT(WithUri("https://a.example"), ::testing::IsEmpty());  // 17 characters
    EXPECT_THAT(WithUri("https://user@cdn.example.com:8443/a.png"), ::testing::IsEmpty());
    EXPECT_EQ(WithUri("http://example.com/cat.png"),
              (std::vector<Issue>{{"invalid_string", UriPath(), "Only HTTPS URLs are allowed"}}));
    EXPECT_EQ(WithUri("ftp://example.com/cat.png"),
              (std::vector<Issue>{{"invalid_string", UriPath(), "Only HTTPS URLs are allowed"}}));
    EXPECT_EQ(WithUri("example.com/cat.png"),
              (std::vector<Issue>{{"invalid_string", UriPath(), "Invalid URL"}}));
    EXPECT_EQ(WithUri(""), (std::vector<Issue>{{"invalid_string", UriPath(), "Invalid URL"}}));
    EXPECT_EQ(WithUri("https:///cat.png.jpg"),
              (std::vector<Issue>{{"invalid_string", UriPath(), "Invalid URL"}}));
    EXPECT_EQ(WithUri("https://exa mple.com/cat.png"),
              (std::vector<Issue>{{"invalid_string", UriPath(), "Invalid URL"}}));
    EXPECT_EQ(WithUri("https://example.com:99999/a"),
              (std::vector<Issue>{{"invalid_string", UriPath(), "Invalid URL"}}));
    EXPECT_EQ(WithUri("https://a.co"),  // 12 characters
              (std::vector<Issue>{
                  {"too_small", UriPath(), "String must contain at least 13 character(s)"}}));
    const std::string prefix = "https://example.com/";
    EXPECT_THAT(WithUri(prefix + std::string(2048 - prefix.size(), 'a')), ::testing::IsEmpty());
    EXPECT_EQ(WithUri(prefix + std::string(2049 - prefix.size(), 'a')),
              (std::vector<Issue>{
                  {"too_big", UriPath(), "String must contain at most 2048 character(s)"}}));
}

TEST_F(TextToImageTest, MediaUploadUris) {
    EXPECT_THAT(WithUri("genhost://abc"), ::testing::IsEmpty());  // 13 characters
    EXPECT_THAT(WithUri("genhost://A.b_c~d-e"), ::testing::IsEmpty());
    EXPECT_EQ(WithUri("genhost://ab"),
              (std::vector<Issue>{
                  {"too_small", UriPath(), "String must contain at least 13 character(s)"}}));
    EXPECT_EQ(WithUri("genhost://abc/def"),
              (std::vector<Issue>{{"invalid_string", UriPath(), "Invalid URL"}}));
    EXPECT_THAT(WithUri("genhost://" + std::string(4990, 'a')), ::testing::IsEmpty());
    EXPECT_EQ(WithUri("genhost://" + std::string(4991, 'a')),
              (std::vector<Issue>{
                  {"too_big", UriPath(), "String must contain at most 5000 character(s)"}}));
    // Another service's scheme is not an upload URI of ours.
    EXPECT_EQ(WithUri("runway://abcdef"),
              (std::vector<Issue>{{"invalid_string", UriPath(), "Only HTTPS URLs are allowed"}}));
}

TEST_F(TextToImageTest, MediaDataUris) {
    EXPECT_THAT(WithUri("data:image/png;base64,iVBORw0KGgo="), ::testing::IsEmpty());
    EXPECT_THAT(WithUri("data:image/jpeg;base64,/9j/4AAQ"), ::testing::IsEmpty());
    EXPECT_THAT(WithUri("data:IMAGE/webp;name=a.webp;base64,UklGRg"), ::testing::IsEmpty());
    const std::vector<Issue> unsupported = {
        {"invalid_string", UriPath(), "Unsupported asset type"}};
    EXPECT_EQ(WithUri("data:video/mp4;base64,AAAA"), unsupported);
    EXPECT_EQ(WithUri("data:application/octet-stream;base64,AAAA"), unsupported);
    EXPECT_EQ(WithUri("data:;base64,AAAA"), unsupported);
    const std::vector<Issue> invalid = {{"invalid_string", UriPath(), "Invalid data URI"}};
    EXPECT_EQ(WithUri("data:image/png,rawbytes"), invalid);             // not base64
    EXPECT_EQ(WithUri("data:image/png;base64"), invalid);               // no comma
    EXPECT_EQ(WithUri("data:image/png;base64,"), invalid);              // no data
    EXPECT_EQ(WithUri("data:image/png;base64,@@@@"), invalid);          // not the alphabet
    EXPECT_EQ(WithUri("data:image/png;base64,AAAAA"), invalid);         // impossible length
    EXPECT_EQ(WithUri("data:image/png;base64,AA=A"), invalid);          // padding inside
    EXPECT_EQ(WithUri("data:image;base64,AAAA"), invalid);              // no subtype
    EXPECT_EQ(WithUri("data:image/png;charset;base64,AAAA"), invalid);  // bad parameter
}

TEST_F(TextToImageTest, DataUriSizeComesFromTheBase64Length) {
    const std::string header = "data:image/png;base64,";
    // 5 MiB exactly: 1747626 full quads and a final "AAA=" worth two bytes.
    std::string data(6990507, 'A');
    data += '=';
    EXPECT_THAT(WithUri(header + data), ::testing::IsEmpty());
    // One byte more. The data is not even valid base64 at its end, and the size is still the
    // issue reported: nothing was decoded or scanned.
    std::string big(6990508, 'A');
    big.back() = '@';
    EXPECT_EQ(WithUri(header + big),
              (std::vector<Issue>{
                  {"too_big", UriPath(), "Asset size exceeds the maximum for the type"}}));
}

TEST_F(TextToImageTest, AllIssuesAtOnceInAStableOrder) {
    const json body = {
        {"model", "gen4_image_turbo"},
        {"zzz", 1},
        {"ratio", "16:9"},
        {"aaa", 2},
        {"referenceImages",
         json::array({{{"uri", "http://example.com/a.png"}, {"tag", "1x"}, {"extra", 1}},
                      {{"tag", "good_tag"}},
                      {{"uri", "data:audio/mp3;base64,AAAA"}}})},
        {"seed", 1.5},
        {"contentModeration", {{"publicFigureThreshold", "none"}}},
    };
    const std::vector<Issue> expected = {
        {"invalid_type", {"promptText"}, "Required"},
        {"invalid_enum_value",
         {"ratio"},
         "Invalid enum value. Expected " + kRatios + ", received '16:9'"},
        {"invalid_string", {"referenceImages", "0", "uri"}, "Only HTTPS URLs are allowed"},
        {"too_small",
         {"referenceImages", "0", "tag"},
         "String must contain at least 3 character(s)"},
        {"invalid_string", {"referenceImages", "0", "tag"}, kTagMessage},
        {"unrecognized_keys", {"referenceImages", "0"}, "Unrecognized key(s) in object: 'extra'"},
        {"invalid_type", {"referenceImages", "1", "uri"}, "Required"},
        {"invalid_string", {"referenceImages", "2", "uri"}, "Unsupported asset type"},
        {"invalid_type", {"seed"}, "Expected integer, received float"},
        {"invalid_enum_value",
         {"contentModeration", "publicFigureThreshold"},
         "Invalid enum value. Expected 'auto' | 'low', received 'none'"},
        {"unrecognized_keys", {}, "Unrecognized key(s) in object: 'aaa', 'zzz'"},
    };
    EXPECT_EQ(Check(body), expected);
    EXPECT_EQ(Check(body), expected);  // and again: nothing depends on state
}

TEST_F(TextToImageTest, StringsHoldingNulAreRefusedWhereverTheyAre) {
    // U+0000 is valid JSON but cannot be stored in PostgreSQL's jsonb: every such string is an
    // issue at its own path, after the schema's issues, once per path.
    using namespace std::string_literals;
    json body = Turbo();
    body["promptText"] = "a cat\0 on a skateboard"s;
    body["referenceImages"][0]["tag"] = "t\0g"s;
    body["n\0l"s] = "x";
    const std::vector<Issue> expected = {
        {"invalid_string", {"referenceImages", "0", "tag"}, kTagMessage},
        {"unrecognized_keys", {}, "Unrecognized key(s) in object: 'n\0l'"s},
        {"invalid_string", {"n\0l"s}, "Property name must not contain U+0000"},
        {"invalid_string", {"promptText"}, "String must not contain U+0000"},
    };
    EXPECT_EQ(Check(body), expected);
    body = Gen4Image();
    body["promptText"] = "\0"s;
    EXPECT_EQ(One(body),
              (Issue{"invalid_string", {"promptText"}, "String must not contain U+0000"}));
}

TEST_F(TextToImageTest, HugeArrayIsNotWalked) {
    // A million bad items: one too_big issue, and only the first maxItems (3) items are looked
    // at, so the walk is as cheap as for a three-item array.
    json body = Turbo();
    body["referenceImages"] = json::array();
    for (int i = 0; i < 1000000; ++i) body["referenceImages"].push_back(i);
    EXPECT_EQ(Check(body),
              (std::vector<Issue>{
                  {"too_big", {"referenceImages"}, "Array must contain at most 3 element(s)"},
                  {"invalid_type", {"referenceImages", "0"}, "Expected object, received number"},
                  {"invalid_type", {"referenceImages", "1"}, "Expected object, received number"},
                  {"invalid_type", {"referenceImages", "2"}, "Expected object, received number"},
              }));
}

TEST_F(TextToImageTest, HugeStringsGiveBoundedMessages) {
    const std::string huge(10 * 1024 * 1024, 'x');
    json body = Turbo();
    body["promptText"] = huge;
    EXPECT_EQ(One(body),
              (Issue{"too_big", {"promptText"}, "String must contain at most 1000 character(s)"}));

    body = Turbo();
    body["ratio"] = huge;
    const Issue ratio = One(body);
    EXPECT_EQ(ratio.code, "invalid_enum_value");
    EXPECT_LT(ratio.message.size(), 1000u);
    EXPECT_THAT(ratio.message, ::testing::EndsWith("received '" + std::string(100, 'x') + "…'"));

    body = Turbo();
    body["referenceImages"][0]["uri"] = huge;
    EXPECT_EQ(One(body), (Issue{"invalid_string", UriPath(), "Invalid URL"}));
    body["referenceImages"][0]["uri"] = "https://" + huge;
    EXPECT_EQ(One(body),
              (Issue{"too_big", UriPath(), "String must contain at most 2048 character(s)"}));
    body["referenceImages"][0]["uri"] = "data:image/png;base64," + huge;  // 7.5 MiB decoded
    EXPECT_EQ(One(body),
              (Issue{"too_big", UriPath(), "Asset size exceeds the maximum for the type"}));
    body["referenceImages"][0]["uri"] = "genhost://" + huge;
    EXPECT_EQ(One(body).code, "too_big");
    body = Turbo();
    body["referenceImages"][0]["tag"] = huge;  // the pattern is not run on it
    EXPECT_EQ(One(body).code, "too_big");

    body = Turbo();
    body[huge] = 1;
    const Issue key = One(body);
    EXPECT_EQ(key.code, "unrecognized_keys");
    EXPECT_LT(key.message.size(), 1000u);
}

TEST_F(TextToImageTest, ApplyDefaults) {
    const auto set = RepoSchemas();
    json body = Turbo();
    EXPECT_EQ(set->ApplyDefaults("text_to_image", body), body);  // nothing to fill
    body["contentModeration"] = json::object();
    json filled = set->ApplyDefaults("text_to_image", body);
    EXPECT_EQ(filled["contentModeration"], (json{{"publicFigureThreshold", "auto"}}));
    json gen4 = Gen4Image();
    gen4["contentModeration"] = json::object();
    EXPECT_EQ(
        set->ApplyDefaults("text_to_image", gen4)["contentModeration"]["publicFigureThreshold"],
        "auto");
    body["contentModeration"]["publicFigureThreshold"] = "low";
    EXPECT_EQ(set->ApplyDefaults("text_to_image", body), body);
    EXPECT_THAT(set->Validate("text_to_image", filled), ::testing::IsEmpty());
}

}  // namespace
}  // namespace genhost::validate
