// Golden tests of the text_to_image models beside gen4 (schemas/text_to_image.json): image_gen_2,
// image_pro_3, image_flash_3_1, image_flash_2_5, seedream5_pro and seedream5_lite. Valid bodies,
// every ratio, every bound at its limit and one past it, the subject counts, defaults. The gen4
// models and the shared media rules are covered by validate_text_to_image_test.cpp.
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

constexpr const char* kEndpoint = "text_to_image";

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

using Values = std::vector<std::string>;

std::string List(const Values& values) {
    std::string out;
    for (const std::string& v : values) out += (out.empty() ? "'" : " | '") + v + "'";
    return out;
}

const Values kModels = {"gen4_image_turbo", "gen4_image",      "image_gen_2",   "image_pro_3",
                        "image_flash_3_1",  "image_flash_2_5", "seedream5_pro", "seedream5_lite"};

const Values kGen2Ratios = {
    "2048:880",  "1920:1088", "1920:1280", "1920:1440", "1920:1536", "1920:1920", "1536:1920",
    "1440:1920", "1280:1920", "1088:1920", "2912:1248", "2560:1440", "2560:1712", "2560:1920",
    "2560:2048", "2560:2560", "2048:2560", "1920:2560", "1712:2560", "1440:2560", "3840:1648",
    "3840:2160", "3504:2336", "3264:2448", "3200:2560", "2880:2880", "2560:3200", "2448:3264",
    "2336:3504", "2160:3840", "auto"};
const Values kPro3Ratios = {"1344:768",  "768:1344",  "1024:1024", "1184:864",  "864:1184",
                            "1536:672",  "832:1248",  "1248:832",  "896:1152",  "1152:896",
                            "2048:2048", "1696:2528", "2528:1696", "1792:2400", "2400:1792",
                            "1856:2304", "2304:1856", "1536:2752", "2752:1536", "3168:1344",
                            "4096:4096", "3392:5056", "5056:3392", "3584:4800", "4800:3584",
                            "3712:4608", "4608:3712", "3072:5504", "5504:3072", "6336:2688"};
const Values kFlash31Ratios = {
    "512:512",   "416:624",   "624:416",   "432:592",   "592:432",   "448:576",    "576:448",
    "384:672",   "672:384",   "768:336",   "256:1024",  "1024:256",  "176:1408",   "1408:176",
    "1024:1024", "832:1248",  "1248:832",  "864:1184",  "1184:864",  "896:1152",   "1152:896",
    "768:1344",  "1344:768",  "1536:672",  "512:2048",  "2048:512",  "352:2816",   "2816:352",
    "2048:2048", "1696:2528", "2528:1696", "1792:2400", "2400:1792", "1856:2304",  "2304:1856",
    "1536:2752", "2752:1536", "3168:1344", "1024:4096", "4096:1024", "704:5632",   "5632:704",
    "4096:4096", "3392:5056", "5056:3392", "3584:4800", "4800:3584", "3712:4608",  "4608:3712",
    "3072:5504", "5504:3072", "6336:2688", "2048:8192", "8192:2048", "1408:11264", "11264:1408"};
const Values kFlash25Ratios = {"1344:768", "768:1344", "1024:1024", "1184:864", "864:1184",
                               "1536:672", "832:1248", "1248:832",  "896:1152", "1152:896"};
const Values kSeedreamProRatios = {"1024:1024", "1184:896",  "896:1184",  "1376:768",
                                   "768:1376",  "1296:864",  "864:1296",  "2048:2048",
                                   "2304:1728", "1728:2304", "2720:1530", "1530:2720",
                                   "2496:1664", "1664:2496", "auto_1k",   "auto_2k"};
const Values kSeedreamLiteRatios = {"2048:2048", "2304:1728", "1728:2304", "2848:1600",
                                    "1600:2848", "2496:1664", "1664:2496", "3136:1344",
                                    "3072:3072", "3456:2592", "2592:3456", "4096:2304",
                                    "2304:4096", "3744:2496", "2496:3744", "4704:2016"};

json Body(const std::string& model, const std::string& ratio) {
    return json{{"model", model}, {"promptText", "a lighthouse at dusk"}, {"ratio", ratio}};
}

json Images(std::size_t n, const json& item) { return json(std::vector<json>(n, item)); }

const json kImage = {{"uri", "https://example.com/ref.png"}};

// ExpectRatios checks that every ratio of `ratios` passes and that `foreign` (a ratio of another
// model) is refused with the full list.
void ExpectRatios(const std::string& model, const Values& ratios, const std::string& foreign) {
    for (const std::string& ratio : ratios) {
        EXPECT_THAT(Check(Body(model, ratio)), ::testing::IsEmpty()) << model << " " << ratio;
    }
    EXPECT_EQ(Check(Body(model, foreign)), (Issues{Enum({"ratio"}, List(ratios), foreign)}))
        << model;
    EXPECT_EQ(Check(Without(Body(model, ratios.front()), "/ratio")), (Issues{Required({"ratio"})}))
        << model;
}

// ExpectPromptBounds checks promptText from 1 to `max` UTF-16 units.
void ExpectPromptBounds(const json& body, int max) {
    ExpectGolden({
        {"promptText max", With(body, "/promptText", std::string(max, 'a')), kValid},
        {"promptText max+1",
         With(body, "/promptText", std::string(max + 1, 'a')),
         {StrMax({"promptText"}, max)}},
        {"promptText emoji max", With(body, "/promptText", Emoji(max / 2)), kValid},
        {"promptText emoji max+1",
         With(body, "/promptText", Emoji(max / 2) + "a"),
         {StrMax({"promptText"}, max)}},
        {"promptText empty", With(body, "/promptText", ""), {StrMin({"promptText"}, 1)}},
        {"no promptText", Without(body, "/promptText"), {Required({"promptText"})}},
    });
}

TEST(TextToImageModelsTest, EndpointAndModels) {
    ExpectEndpoint("/v1/text_to_image", kModels);
    ExpectModelErrors(Body("image_gen_2", "auto"), List(kModels));
    // Client literals of the same models are not ids of this server.
    for (const char* literal :
         {"gpt_image_2", "gemini_image3_pro", "gemini_image3.1_flash", "gemini_2.5_flash"}) {
        EXPECT_EQ(Check(With(Body("image_gen_2", "auto"), "/model", literal)),
                  (Issues{Discriminator({"model"}, List(kModels))}))
            << literal;
    }
    EXPECT_EQ(kGen2Ratios.size(), 31u);
    EXPECT_EQ(kPro3Ratios.size(), 30u);
    EXPECT_EQ(kFlash31Ratios.size(), 56u);
    EXPECT_EQ(kFlash25Ratios.size(), 10u);
    EXPECT_EQ(kSeedreamProRatios.size(), 16u);
    EXPECT_EQ(kSeedreamLiteRatios.size(), 16u);
}

TEST(TextToImageModelsTest, EveryRatioOfEveryModel) {
    ExpectRatios("image_gen_2", kGen2Ratios, "1024:1024");
    ExpectRatios("image_pro_3", kPro3Ratios, "512:512");
    ExpectRatios("image_flash_3_1", kFlash31Ratios, "auto");
    ExpectRatios("image_flash_2_5", kFlash25Ratios, "2048:2048");
    ExpectRatios("seedream5_pro", kSeedreamProRatios, "auto");
    ExpectRatios("seedream5_lite", kSeedreamLiteRatios, "auto_2k");
}

TEST(TextToImageModelsTest, PromptBounds) {
    ExpectPromptBounds(Body("image_gen_2", "auto"), 32000);
    ExpectPromptBounds(Body("image_pro_3", "1024:1024"), 32000);
    ExpectPromptBounds(Body("image_flash_3_1", "512:512"), 32000);
    ExpectPromptBounds(Body("image_flash_2_5", "1024:1024"), 32000);
    ExpectPromptBounds(Body("seedream5_pro", "auto_1k"), 4000);
    ExpectPromptBounds(Body("seedream5_lite", "2048:2048"), 4000);
}

TEST(TextToImageModelsTest, ImageGen2Golden) {
    const json base = Body("image_gen_2", "auto");
    json full = Body("image_gen_2", "3840:2160");
    full["background"] = "opaque";
    full["outputCount"] = 10;
    full["quality"] = "low";
    full["referenceImages"] = Images(16, {{"uri", "https://example.com/ref.png"}, {"tag", "hero"}});
    std::vector<Golden> table = {
        {"minimal", base, kValid},
        {"full", full, kValid},
        {"background transparent",
         With(base, "/background", "transparent"),
         {Enum({"background"}, "'opaque' | 'auto'", "transparent")}},
        {"outputCount 1", With(base, "/outputCount", 1), kValid},
        {"outputCount 0", With(base, "/outputCount", 0), {NumMin({"outputCount"}, "1")}},
        {"outputCount 11", With(base, "/outputCount", 11), {NumMax({"outputCount"}, "10")}},
        {"outputCount 2.5", With(base, "/outputCount", 2.5), {Integer({"outputCount"})}},
        {"quality",
         With(base, "/quality", "ultra"),
         {Enum({"quality"}, "'low' | 'medium' | 'high' | 'auto'", "ultra")}},
        {"no references", With(base, "/referenceImages", json::array()), kValid},
        {"17 references",
         With(base, "/referenceImages", Images(17, kImage)),
         {ArrMax({"referenceImages"}, 16)}},
        {"short tag",
         With(base, "/referenceImages", Images(1, {{"uri", kImage["uri"]}, {"tag", "ab"}})),
         {StrMin({"referenceImages", "0", "tag"}, 3)}},
        {"subject is not an image_gen_2 field",
         With(base, "/referenceImages", Images(1, {{"uri", kImage["uri"]}, {"subject", "human"}})),
         {Unknown({"referenceImages", "0"}, "'subject'")}},
        {"no seed or moderation",
         With(With(base, "/seed", 1), "/contentModeration", json::object()),
         {Unknown({}, "'contentModeration', 'seed'")}},
    };
    for (const char* value : {"opaque", "auto"}) {
        table.push_back({value, With(base, "/background", value), kValid});
    }
    for (const char* value : {"low", "medium", "high", "auto"}) {
        table.push_back({value, With(base, "/quality", value), kValid});
    }
    ExpectGolden(table);
}

TEST(TextToImageModelsTest, GeminiProAndFlashGolden) {
    const json human = {{"uri", "https://example.com/face.png"}, {"subject", "human"}};
    const json object = {{"uri", "https://example.com/cup.png"}, {"subject", "object"}};
    const std::string too_many_humans = "At most 5 reference images may have subject human";
    const std::string too_many_objects = "At most 9 reference images may have subject object";
    for (const json& base :
         {Body("image_pro_3", "4096:4096"), Body("image_flash_3_1", "512:512")}) {
        json mixed = Images(5, human);
        for (int i = 0; i < 9; ++i) mixed.push_back(object);
        json tagged = Images(
            1, {{"uri", "https://example.com/a.png"}, {"subject", "object"}, {"tag", "mug_1"}});
        json six_humans = Images(6, human);
        json ten_objects = Images(10, object);
        json bad_subject = Images(6, human);
        bad_subject[0]["subject"] = "animal";  // an enum issue: the count rule is not also run
        json bad_uri = Images(6, human);
        bad_uri[0]["uri"] = "http://example.com/face.png";  // does not hide the count rule
        ExpectGolden({
            {"minimal", base, kValid},
            {"outputCount 1", With(base, "/outputCount", 1), kValid},
            {"outputCount 4", With(base, "/outputCount", 4), kValid},
            {"outputCount 2", With(base, "/outputCount", 2), {Enum({"outputCount"}, "1 | 4", "2")}},
            {"outputCount 0", With(base, "/outputCount", 0), {Enum({"outputCount"}, "1 | 4", "0")}},
            {"5 humans and 9 objects", With(base, "/referenceImages", mixed), kValid},
            {"14 without subject", With(base, "/referenceImages", Images(14, kImage)), kValid},
            {"tagged", With(base, "/referenceImages", tagged), kValid},
            {"15 references",
             With(base, "/referenceImages", Images(15, kImage)),
             {ArrMax({"referenceImages"}, 14)}},
            {"6 humans",
             With(base, "/referenceImages", six_humans),
             {Custom({"referenceImages"}, too_many_humans)}},
            {"10 objects",
             With(base, "/referenceImages", ten_objects),
             {Custom({"referenceImages"}, too_many_objects)}},
            {"bad subject",
             With(base, "/referenceImages", bad_subject),
             {Enum({"referenceImages", "0", "subject"}, "'human' | 'object'", "animal")}},
            {"bad uri",
             With(base, "/referenceImages", bad_uri),
             {BadString({"referenceImages", "0", "uri"}, "Only HTTPS URLs are allowed"),
              Custom({"referenceImages"}, too_many_humans)}},
            {"no seed", With(base, "/seed", 1), {Unknown({}, "'seed'")}},
            {"no quality", With(base, "/quality", "high"), {Unknown({}, "'quality'")}},
        });
    }
}

TEST(TextToImageModelsTest, ImageFlash25Golden) {
    const json base = Body("image_flash_2_5", "1344:768");
    ExpectGolden({
        {"minimal", base, kValid},
        {"3 tagged references",
         With(base, "/referenceImages", Images(3, {{"uri", kImage["uri"]}, {"tag", "style"}})),
         kValid},
        {"4 references",
         With(base, "/referenceImages", Images(4, kImage)),
         {ArrMax({"referenceImages"}, 3)}},
        {"no subject",
         With(base, "/referenceImages", Images(1, {{"uri", kImage["uri"]}, {"subject", "human"}})),
         {Unknown({"referenceImages", "0"}, "'subject'")}},
        {"no outputCount", With(base, "/outputCount", 1), {Unknown({}, "'outputCount'")}},
    });
}

TEST(TextToImageModelsTest, SeedreamGolden) {
    for (const json& base :
         {Body("seedream5_pro", "auto_2k"), Body("seedream5_lite", "4704:2016")}) {
        json full = base;
        full["grounding"] = true;
        full["outputCount"] = 10;
        full["outputFormat"] = "jpeg";
        full["referenceImages"] = Images(14, kImage);
        ExpectGolden({
            {"minimal", base, kValid},
            {"full", full, kValid},
            {"grounding",
             With(base, "/grounding", "on"),
             {Type({"grounding"}, "boolean", "string")}},
            {"outputCount 1", With(base, "/outputCount", 1), kValid},
            {"outputCount 0", With(base, "/outputCount", 0), {NumMin({"outputCount"}, "1")}},
            {"outputCount 11", With(base, "/outputCount", 11), {NumMax({"outputCount"}, "10")}},
            {"outputFormat png", With(base, "/outputFormat", "png"), kValid},
            {"outputFormat webp",
             With(base, "/outputFormat", "webp"),
             {Enum({"outputFormat"}, "'png' | 'jpeg'", "webp")}},
            {"15 references",
             With(base, "/referenceImages", Images(15, kImage)),
             {ArrMax({"referenceImages"}, 14)}},
            {"tags are not accepted",
             With(base, "/referenceImages", Images(1, {{"uri", kImage["uri"]}, {"tag", "hero"}})),
             {Unknown({"referenceImages", "0"}, "'tag'")}},
            {"reference as a string",
             With(base, "/referenceImages", {"https://example.com/a.png"}),
             {Type({"referenceImages", "0"}, "object", "string")}},
            {"no seed", With(base, "/seed", 1), {Unknown({}, "'seed'")}},
        });
    }
}

TEST(TextToImageModelsTest, Defaults) {
    const auto set = RepoSchemas();
    json gen2 = Body("image_gen_2", "auto");
    json filled = gen2;
    filled["background"] = "auto";
    filled["quality"] = "high";
    EXPECT_EQ(set->ApplyDefaults(kEndpoint, gen2), filled);
    for (const char* model : {"seedream5_pro", "seedream5_lite"}) {
        json body = Body(model, model == std::string("seedream5_pro") ? "auto_1k" : "2048:2048");
        json expected = body;
        expected["grounding"] = false;
        expected["outputFormat"] = "png";
        EXPECT_EQ(set->ApplyDefaults(kEndpoint, body), expected) << model;
    }
    for (const json& body : {Body("image_pro_3", "1024:1024"), Body("image_flash_3_1", "512:512"),
                             Body("image_flash_2_5", "1024:1024")}) {
        EXPECT_EQ(set->ApplyDefaults(kEndpoint, body), body);
    }
}

}  // namespace
}  // namespace genhost::validate
