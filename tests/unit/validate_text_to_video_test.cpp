// Golden tests of schemas/text_to_video.json (and the schemas/common.json pieces it uses)
// through SchemaSet: for every model a minimal and a full valid body, every bound at its limit
// and one past it, every enumeration, every cross-field rule both ways, defaults, and agreement
// with the model catalog. Most checks are tables: one row per model and field.
#include "genhost/validate/schema_set.hpp"
#include "unit/issue_print.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace genhost::validate {
namespace {

using nlohmann::json;
using ::testing::IsEmpty;
using Issues = std::vector<Issue>;
using Path = std::vector<std::string>;

constexpr const char* kEndpoint = "text_to_video";
const char* const kImage = "https://example.com/cat.png";
const char* const kVideo = "https://example.com/clip.mp4";
const char* const kAudio = "https://example.com/voice.mp3";

std::string ReadFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::filesystem::path SchemaDir() { return std::filesystem::path(GENHOST_SOURCE_DIR) / "schemas"; }

std::shared_ptr<const SchemaSet> RepoSchemas() {
    static const std::shared_ptr<const SchemaSet> set = [] {
        std::vector<SchemaDocument> documents;
        for (const auto& entry : std::filesystem::directory_iterator(SchemaDir())) {
            if (entry.path().extension() != ".json") continue;
            documents.push_back(
                {"schemas/" + entry.path().filename().string(), ReadFile(entry.path())});
        }
        return SchemaSet::Compile(documents);
    }();
    return set;
}

Issues Check(const json& body) { return RepoSchemas()->Validate(kEndpoint, body); }

json With(json body, const std::string& key, json value) {
    body[key] = std::move(value);
    return body;
}

json Without(json body, const std::string& key) {
    body.erase(key);
    return body;
}

json Repeat(const json& item, std::size_t n) {
    json out = json::array();
    for (std::size_t i = 0; i < n; ++i) out.push_back(item);
    return out;
}

json RefImage() { return {{"uri", kImage}}; }
json AudioRef() { return {{"type", "audio"}, {"uri", kAudio}}; }
json VideoRef() { return {{"type", "video"}, {"uri", kVideo}}; }

std::string Join(const std::vector<std::string>& values) {
    std::string out;
    for (const std::string& v : values) out += (out.empty() ? "'" : " | '") + v + "'";
    return out;
}

Issue Custom(Path path, std::string message) {
    return {"custom", std::move(path), std::move(message)};
}

const std::vector<std::string> kModels = {
    "gen4.5",      "veo3.1",         "veo3.1_fast",    "hailuo3",        "happyhorse_1_0",
    "seedance2",   "seedance2_fast", "seedance2_mini", "omni_flash",     "seedance2_5",
    "imagine_1_5", "wan3",           "wan3_prime",     "omni_flash_1.1", "h3_max"};

// Minimal is the smallest valid body of each model.
json Minimal(const std::string& model) {
    json body = {{"model", model}, {"promptText", "a cat on a skateboard"}};
    if (model == "gen4.5") {
        body["ratio"] = "1280:720";
        body["duration"] = 5;
    } else if (model.starts_with("veo3.1")) {
        body["ratio"] = "1280:720";
    } else if (model == "seedance2_5") {
        body.erase("promptText");  // optional for seedance2_5
    }
    return body;
}

// Full sets every field of each model to a valid value.
json Full(const std::string& model) {
    const std::string text = "a cat on a skateboard";
    if (model == "gen4.5") {
        return {{"model", model},
                {"promptText", text},
                {"ratio", "720:1280"},
                {"duration", 10},
                {"seed", 7},
                {"contentModeration", {{"publicFigureThreshold", "auto"}}},
                {"outputFormat", "hdr_prores"},
                {"proresProfile", "422 HQ"}};
    }
    if (model.starts_with("veo3.1")) {
        return {{"model", model}, {"promptText", text},       {"ratio", "1920:1080"},
                {"audio", true},  {"negativePrompt", "dogs"}, {"seed", 4294967295u},
                {"duration", 4}};
    }
    if (model == "hailuo3") {
        return {{"model", model},
                {"promptText", text},
                {"resolution", "768p"},
                {"duration", 5},
                {"ratio", "adaptive"},
                {"references", Repeat(RefImage(), 9)},
                {"referenceVideos", Repeat(VideoRef(), 3)},
                {"referenceAudio", Repeat(AudioRef(), 3)}};
    }
    if (model == "happyhorse_1_0") {
        return {{"model", model}, {"promptText", text}, {"duration", 3}, {"ratio", "1662:1248"}};
    }
    if (model.starts_with("seedance2") && model != "seedance2_5") {
        return {{"model", model},
                {"promptText", text},
                {"audio", false},
                {"seed", 0},
                {"duration", "auto"},
                {"ratio", "1470:630"},
                {"references", Repeat(RefImage(), 9)},
                {"referenceVideos", Repeat(VideoRef(), 3)},
                {"referenceAudio", Repeat(AudioRef(), 3)}};
    }
    if (model == "omni_flash") {
        return {{"model", model}, {"promptText", text}, {"ratio", "720:1280"}, {"duration", 3}};
    }
    if (model == "seedance2_5") {
        return {{"model", model},
                {"promptText", text},
                {"audio", false},
                {"seed", 9},
                {"duration", "auto"},
                {"ratio", "1080:1920"},
                {"references", Repeat(RefImage(), 30)},
                {"referenceVideos", Repeat(VideoRef(), 10)},
                {"referenceAudio", Repeat(AudioRef(), 10)}};
    }
    if (model == "imagine_1_5") {
        return {{"model", model},
                {"promptText", "[Image 1] rides a skateboard"},
                {"resolution", "480p"},
                {"duration", 1},
                {"ratio", "16:9"},
                {"references", Repeat(RefImage(), 7)},
                {"referenceAudio", Repeat(AudioRef(), 3)}};
    }
    if (model.starts_with("wan3")) {
        return {{"model", model},
                {"promptText", text},
                {"audio", false},
                {"duration", 2},
                {"ratio", "1648:1248"},
                {"references", Repeat(RefImage(), 10)},
                {"referenceVideos", Repeat(VideoRef(), 5)},
                {"referenceAudio", Repeat(AudioRef(), 5)}};
    }
    if (model == "omni_flash_1.1") {
        return {{"model", model},
                {"promptText", text},
                {"ratio", "360:640"},
                {"duration", 10},
                {"references", Repeat(RefImage(), 5)},
                {"referenceVideos", Repeat(json{{"uri", kVideo}}, 3)}};
    }
    return {{"model", model},
            {"promptText", text},
            {"resolution", "768p"},
            {"promptExpansionMode", "quality"},
            {"seed", 3},
            {"duration", 15}};  // h3_max
}

class TextToVideoTest : public ::testing::Test {
  protected:
    static Issue One(const json& body) {
        const Issues issues = Check(body);
        EXPECT_EQ(issues.size(), 1u) << body.dump().substr(0, 300);
        return issues.empty() ? Issue{} : issues.front();
    }
};

TEST_F(TextToVideoTest, EndpointIsListed) {
    const EndpointInfo* info = RepoSchemas()->FindEndpoint(kEndpoint);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->method, "POST");
    EXPECT_EQ(info->path, "/v1/text_to_video");
    EXPECT_EQ(info->kind, "generation");
    EXPECT_FALSE(info->summary.empty());
}

TEST_F(TextToVideoTest, ModelsAgreeWithTheCatalog) {
    const json catalog = json::parse(ReadFile(SchemaDir() / "models.json"));
    std::vector<std::string> serving;
    for (const json& m : catalog["models"]) {
        for (const json& e : m["endpoints"]) {
            if (e == kEndpoint) serving.push_back(m["id"]);
        }
    }
    std::vector<std::string> ours = kModels;
    std::sort(ours.begin(), ours.end());
    std::sort(serving.begin(), serving.end());
    EXPECT_EQ(ours, serving);
    const json& doc = *RepoSchemas()->Document("schemas/text_to_video.json");
    ASSERT_EQ(doc["oneOf"].size(), kModels.size());
    for (std::size_t i = 0; i < kModels.size(); ++i) {
        EXPECT_EQ(doc["oneOf"][i]["$ref"], "#/$defs/" + kModels[i]);
    }
}

TEST_F(TextToVideoTest, MinimalAndFullBodiesPass) {
    for (const std::string& model : kModels) {
        EXPECT_THAT(Check(Minimal(model)), IsEmpty()) << model;
        EXPECT_THAT(Check(Full(model)), IsEmpty()) << model;
    }
}

TEST_F(TextToVideoTest, RequiredFields) {
    for (const std::string& model : kModels) {
        std::vector<std::string> fields = {"promptText"};
        if (model == "gen4.5") fields = {"promptText", "ratio", "duration"};
        if (model.starts_with("veo3.1")) fields = {"promptText", "ratio"};
        if (model == "seedance2_5") fields = {};
        Issues expected;
        for (const std::string& field : fields)
            expected.push_back({"invalid_type", {field}, "Required"});
        EXPECT_EQ(Check({{"model", model}}), expected) << model;
    }
}

TEST_F(TextToVideoTest, MissingUnknownAndRetiredModels) {
    const std::string expected = "Invalid discriminator value. Expected " + Join(kModels);
    EXPECT_EQ(One(Without(Minimal("gen4.5"), "model")),
              (Issue{"invalid_union_discriminator", {"model"}, expected}));
    EXPECT_EQ(One(With(Minimal("gen4.5"), "model", "gen4_turbo")),  // image_to_video only
              (Issue{"invalid_union_discriminator", {"model"}, expected}));
    EXPECT_EQ(One(With(Minimal("gen4.5"), "model", 45)),
              (Issue{"invalid_union_discriminator", {"model"}, expected}));
    EXPECT_EQ(One(With(Minimal("gen4.5"), "model", "gen3a_turbo")),
              (Issue{"invalid_union_discriminator",
                     {"model"},
                     "Model 'gen3a_turbo' has been retired (replaced by gen4.5 or gen4_turbo). "
                     "Expected " +
                         Join(kModels)}));
    EXPECT_EQ(One(With(Minimal("gen4.5"), "model", "gen4_aleph")),
              (Issue{"invalid_union_discriminator",
                     {"model"},
                     "Model 'gen4_aleph' has been retired (replaced by aleph2). Expected " +
                         Join(kModels)}));
}

TEST_F(TextToVideoTest, FieldsOfOtherModelsAreUnknown) {
    const std::vector<std::pair<std::string, std::string>> rows = {
        {"gen4.5", "promptImage"},
        {"veo3.1", "promptImage"},
        {"veo3.1_fast", "references"},
        {"hailuo3", "audio"},
        {"hailuo3", "seed"},
        {"happyhorse_1_0", "resolution"},
        {"seedance2", "mode"},
        {"seedance2_mini", "negativePrompt"},
        {"omni_flash", "references"},
        {"seedance2_5", "promptImage"},
        {"imagine_1_5", "referenceVideos"},
        {"wan3", "seed"},
        {"wan3_prime", "resolution"},
        {"omni_flash_1.1", "referenceAudio"},
        {"h3_max", "ratio"},
        {"gen4.5", "videoUri"},
    };
    for (const auto& [model, field] : rows) {
        EXPECT_EQ(
            One(With(Minimal(model), field, 1)),
            (Issue{"unrecognized_keys", {}, "Unrecognized key(s) in object: '" + field + "'"}))
            << model;
    }
}

struct IntegerBound {
    std::string model;
    std::string field;
    long long lo;
    long long hi;
};

TEST_F(TextToVideoTest, IntegerBounds) {
    std::vector<IntegerBound> rows = {
        {"gen4.5", "duration", 2, 10},         {"hailuo3", "duration", 5, 15},
        {"happyhorse_1_0", "duration", 3, 15}, {"seedance2", "duration", 4, 15},
        {"seedance2_fast", "duration", 4, 15}, {"seedance2_mini", "duration", 4, 15},
        {"omni_flash", "duration", 3, 10},     {"seedance2_5", "duration", 4, 15},
        {"imagine_1_5", "duration", 1, 15},    {"wan3", "duration", 2, 30},
        {"wan3_prime", "duration", 2, 30},     {"omni_flash_1.1", "duration", 3, 10},
        {"h3_max", "duration", 5, 15},
    };
    for (const char* model : {"gen4.5", "veo3.1", "veo3.1_fast", "seedance2", "seedance2_fast",
                              "seedance2_mini", "seedance2_5", "h3_max"}) {
        rows.push_back({model, "seed", 0, 4294967295LL});
    }
    for (const IntegerBound& row : rows) {
        const json base = Minimal(row.model);
        const Path path = {row.field};
        EXPECT_THAT(Check(With(base, row.field, row.lo)), IsEmpty()) << row.model << row.field;
        EXPECT_THAT(Check(With(base, row.field, row.hi)), IsEmpty()) << row.model << row.field;
        EXPECT_EQ(One(With(base, row.field, row.lo - 1)),
                  (Issue{"too_small", path,
                         "Number must be greater than or equal to " + std::to_string(row.lo)}))
            << row.model;
        EXPECT_EQ(One(With(base, row.field, row.hi + 1)),
                  (Issue{"too_big", path,
                         "Number must be less than or equal to " + std::to_string(row.hi)}))
            << row.model;
        EXPECT_EQ(One(With(base, row.field, static_cast<double>(row.lo) + 0.5)),
                  (Issue{"invalid_type", path, "Expected integer, received float"}))
            << row.model;
    }
}

TEST_F(TextToVideoTest, VeoDurationIsFourSixOrEight) {
    for (const char* model : {"veo3.1", "veo3.1_fast"}) {
        for (int ok : {4, 6, 8})
            EXPECT_THAT(Check(With(Minimal(model), "duration", ok)), IsEmpty());
        EXPECT_THAT(Check(With(Minimal(model), "duration", 6.0)), IsEmpty());
        for (int bad : {3, 5, 9}) {
            EXPECT_EQ(One(With(Minimal(model), "duration", bad)),
                      (Issue{"invalid_enum_value",
                             {"duration"},
                             "Invalid enum value. Expected 4 | 6 | 8, received '" +
                                 std::to_string(bad) + "'"}));
        }
    }
}

TEST_F(TextToVideoTest, AutoDurations) {
    for (const char* model :
         {"seedance2", "seedance2_fast", "seedance2_mini", "seedance2_5", "omni_flash_1.1"}) {
        EXPECT_THAT(Check(With(Minimal(model), "duration", "auto")), IsEmpty()) << model;
        EXPECT_EQ(One(With(Minimal(model), "duration", "")),
                  (Issue{"invalid_enum_value",
                         {"duration"},
                         "Invalid enum value. Expected 'auto', received ''"}));
        EXPECT_EQ(One(With(Minimal(model), "duration", nullptr)),
                  (Issue{"invalid_type", {"duration"}, "Expected string | number, received null"}));
    }
    for (const char* model : {"gen4.5", "happyhorse_1_0", "imagine_1_5", "wan3", "h3_max"}) {
        EXPECT_EQ(One(With(Minimal(model), "duration", "auto")),
                  (Issue{"invalid_type", {"duration"}, "Expected number, received string"}))
            << model;
    }
}

struct StringBound {
    std::string model;
    std::string field;
    std::size_t max;
    std::size_t min;
};

TEST_F(TextToVideoTest, StringBounds) {
    const std::vector<StringBound> rows = {
        {"gen4.5", "promptText", 1000, 1},          {"veo3.1", "promptText", 1000, 1},
        {"veo3.1_fast", "promptText", 1000, 1},     {"veo3.1", "negativePrompt", 1000, 0},
        {"veo3.1_fast", "negativePrompt", 1000, 0}, {"hailuo3", "promptText", 6000, 1},
        {"happyhorse_1_0", "promptText", 2500, 1},  {"seedance2", "promptText", 3500, 1},
        {"seedance2_fast", "promptText", 3500, 1},  {"seedance2_mini", "promptText", 3500, 1},
        {"omni_flash", "promptText", 4000, 1},      {"seedance2_5", "promptText", 15000, 1},
        {"imagine_1_5", "promptText", 2500, 1},     {"wan3", "promptText", 20000, 1},
        {"wan3_prime", "promptText", 20000, 1},     {"omni_flash_1.1", "promptText", 4000, 1},
        {"h3_max", "promptText", 6000, 1},
    };
    for (const StringBound& row : rows) {
        const json base = Minimal(row.model);
        const Path path = {row.field};
        EXPECT_THAT(Check(With(base, row.field, std::string(row.max, 'a'))), IsEmpty())
            << row.model;
        EXPECT_EQ(
            One(With(base, row.field, std::string(row.max + 1, 'a'))),
            (Issue{"too_big", path,
                   "String must contain at most " + std::to_string(row.max) + " character(s)"}))
            << row.model;
        if (row.min == 0) {
            EXPECT_THAT(Check(With(base, row.field, "")), IsEmpty()) << row.model;
        } else {
            EXPECT_EQ(One(With(base, row.field, "")),
                      (Issue{"too_small", path, "String must contain at least 1 character(s)"}))
                << row.model;
        }
        EXPECT_EQ(One(With(base, row.field, json::array())),
                  (Issue{"invalid_type", path, "Expected string, received array"}));
    }
}

TEST_F(TextToVideoTest, PromptTextCountsUtf16Units) {
    std::string emoji;
    for (int i = 0; i < 500; ++i) emoji += "\xF0\x9F\x98\x80";  // two UTF-16 units each
    EXPECT_THAT(Check(With(Minimal("gen4.5"), "promptText", emoji)), IsEmpty());
    EXPECT_EQ(One(With(Minimal("gen4.5"), "promptText", emoji + "a")),
              (Issue{"too_big", {"promptText"}, "String must contain at most 1000 character(s)"}));
    std::string euros;  // three UTF-8 bytes, one UTF-16 unit each
    for (int i = 0; i < 20000; ++i) euros += "\xE2\x82\xAC";
    EXPECT_THAT(Check(With(Minimal("wan3"), "promptText", euros)), IsEmpty());
}

struct ArrayBound {
    std::string model;
    std::string field;
    json item;
    std::size_t max;
};

TEST_F(TextToVideoTest, ArrayBounds) {
    const json uri_video = {{"uri", kVideo}};
    const std::vector<ArrayBound> rows = {
        {"hailuo3", "references", RefImage(), 9},
        {"hailuo3", "referenceVideos", VideoRef(), 3},
        {"hailuo3", "referenceAudio", AudioRef(), 3},
        {"seedance2", "references", RefImage(), 9},
        {"seedance2", "referenceVideos", VideoRef(), 3},
        {"seedance2", "referenceAudio", AudioRef(), 3},
        {"seedance2_fast", "references", RefImage(), 9},
        {"seedance2_fast", "referenceVideos", VideoRef(), 3},
        {"seedance2_fast", "referenceAudio", AudioRef(), 3},
        {"seedance2_mini", "references", RefImage(), 9},
        {"seedance2_mini", "referenceVideos", VideoRef(), 3},
        {"seedance2_mini", "referenceAudio", AudioRef(), 3},
        {"seedance2_5", "references", RefImage(), 30},
        {"seedance2_5", "referenceVideos", VideoRef(), 10},
        {"seedance2_5", "referenceAudio", AudioRef(), 10},
        {"imagine_1_5", "references", RefImage(), 7},
        {"imagine_1_5", "referenceAudio", AudioRef(), 3},
        {"wan3", "references", RefImage(), 10},
        {"wan3", "referenceVideos", VideoRef(), 5},
        {"wan3", "referenceAudio", AudioRef(), 5},
        {"wan3_prime", "references", RefImage(), 10},
        {"wan3_prime", "referenceVideos", VideoRef(), 5},
        {"wan3_prime", "referenceAudio", AudioRef(), 5},
        {"omni_flash_1.1", "references", RefImage(), 5},
        {"omni_flash_1.1", "referenceVideos", uri_video, 3},
    };
    for (const ArrayBound& row : rows) {
        const json base = Full(row.model);
        const Path path = {row.field};
        EXPECT_THAT(Check(With(base, row.field, Repeat(row.item, row.max))), IsEmpty())
            << row.model << " " << row.field;
        EXPECT_EQ(One(With(base, row.field, Repeat(row.item, row.max + 1))),
                  (Issue{"too_big", path,
                         "Array must contain at most " + std::to_string(row.max) + " element(s)"}))
            << row.model << " " << row.field;
        EXPECT_EQ(One(With(base, row.field, row.item)),
                  (Issue{"invalid_type", path, "Expected array, received object"}));
    }
    // Empty arrays are fine (where no rule needs an item).
    for (const char* model : {"seedance2", "wan3", "omni_flash_1.1", "seedance2_5"}) {
        json body = Minimal(model);
        body["promptText"] = "x";
        for (const char* field : {"references", "referenceVideos"}) body[field] = json::array();
        EXPECT_THAT(Check(body), IsEmpty()) << model;
    }
}

struct EnumField {
    json base;
    std::string field;
    std::vector<std::string> values;
};

const std::vector<std::string> kS12 = {"992:432",  "864:496", "752:560",  "640:640",
                                       "560:752",  "496:864", "1470:630", "1280:720",
                                       "1112:834", "960:960", "834:1112", "720:1280"};

std::vector<std::string> S24() {
    std::vector<std::string> out = kS12;
    for (const char* r :
         {"2206:946", "1920:1080", "1664:1248", "1440:1440", "1248:1664", "1080:1920", "3840:1646",
          "3840:2160", "3840:2880", "3840:3840", "2880:3840", "2160:3840"}) {
        out.push_back(r);
    }
    return out;
}

const std::vector<std::string> kS25 = {
    "992:432",  "854:480",   "752:560",   "640:640",   "560:752",   "480:854",
    "1470:630", "1280:720",  "1112:834",  "960:960",   "834:1112",  "720:1280",
    "2206:946", "1920:1080", "1664:1248", "1440:1440", "1248:1664", "1080:1920"};

TEST_F(TextToVideoTest, Enumerations) {
    const json hailuo_refs = With(Minimal("hailuo3"), "references", json::array({RefImage()}));
    const std::vector<std::string> wan_ratios = {
        "832:480",   "720:544",   "624:624",   "544:720",   "480:832",   "1280:720",
        "1104:832",  "960:960",   "832:1104",  "720:1280",  "1920:1080", "1648:1248",
        "1440:1440", "1248:1648", "1080:1920", "auto_480p", "auto_720p", "auto_1080p"};
    const std::vector<EnumField> rows = {
        {Minimal("gen4.5"), "ratio", {"1280:720", "720:1280"}},
        {Minimal("veo3.1"), "ratio", {"1280:720", "720:1280", "1080:1920", "1920:1080"}},
        {Minimal("veo3.1_fast"), "ratio", {"1280:720", "720:1280", "1080:1920", "1920:1080"}},
        {hailuo_refs, "ratio", {"adaptive", "21:9", "16:9", "4:3", "1:1", "3:4", "9:16"}},
        {Minimal("hailuo3"), "resolution", {"768p", "2k", "768P", "2K"}},
        {Minimal("happyhorse_1_0"),
         "ratio",
         {"1280:720", "720:1280", "960:960", "1108:832", "832:1108", "1920:1080", "1080:1920",
          "1440:1440", "1662:1248", "1248:1662"}},
        {Minimal("seedance2"), "ratio", S24()},
        {Minimal("seedance2_fast"), "ratio", kS12},
        {Minimal("seedance2_mini"), "ratio", kS12},
        {Minimal("omni_flash"), "ratio", {"1280:720", "720:1280"}},
        {Minimal("seedance2_5"), "ratio", kS25},
        {Minimal("imagine_1_5"), "resolution", {"480p", "720p", "1080p"}},
        {Minimal("imagine_1_5"), "ratio", {"1:1", "16:9", "9:16", "4:3", "3:4", "3:2", "2:3"}},
        {Minimal("wan3"), "ratio", wan_ratios},
        {Minimal("wan3_prime"), "ratio", wan_ratios},
        {Minimal("omni_flash_1.1"),
         "ratio",
         {"640:360", "360:640", "1280:720", "720:1280", "1920:1080", "1080:1920", "3840:2160",
          "2160:3840"}},
        {Minimal("h3_max"), "resolution", {"480p", "768p"}},
        {Minimal("h3_max"), "promptExpansionMode", {"disabled", "balanced", "quality"}},
        {Minimal("gen4.5"),
         "outputFormat",
         {"mp4", "prores", "png_sequence", "hdr10", "hlg", "sdr_rec709_10bit",
          "hdr_pq_12bit_master", "hdr_prores", "hdr_png_sequence", "hdr_exr_sequence",
          "hdr_exr_acescg_sequence_1_3", "hdr_exr_acescg_sequence_2_0"}},
    };
    for (const EnumField& row : rows) {
        const std::string model = row.base["model"];
        for (const std::string& value : row.values) {
            EXPECT_THAT(Check(With(row.base, row.field, value)), IsEmpty())
                << model << " " << row.field << " " << value;
        }
        EXPECT_EQ(
            One(With(row.base, row.field, "1024:1024")),
            (Issue{"invalid_enum_value",
                   {row.field},
                   "Invalid enum value. Expected " + Join(row.values) + ", received '1024:1024'"}))
            << model << " " << row.field;
        EXPECT_EQ(One(With(row.base, row.field, false)),
                  (Issue{"invalid_type",
                         {row.field},
                         "Expected " + Join(row.values) + ", received boolean"}))
            << model << " " << row.field;
    }
}

TEST_F(TextToVideoTest, HailuoAdaptiveRatioNeedsReferences) {
    const Issue needs_refs = Custom({"ratio"}, "ratio adaptive requires image or video references");
    const json adaptive = With(Minimal("hailuo3"), "ratio", "adaptive");
    EXPECT_EQ(Check(adaptive), Issues{needs_refs});
    EXPECT_EQ(Check(With(adaptive, "references", json::array())), Issues{needs_refs});
    EXPECT_EQ(Check(With(adaptive, "referenceAudio", json::array({AudioRef()}))),
              Issues{needs_refs});  // audio is not an image or video reference
    EXPECT_THAT(Check(With(adaptive, "references", json::array({RefImage()}))), IsEmpty());
    EXPECT_THAT(Check(With(adaptive, "referenceVideos", json::array({VideoRef()}))), IsEmpty());
    EXPECT_THAT(Check(With(Minimal("hailuo3"), "ratio", "21:9")), IsEmpty());
    // A broken reference list is reported once; the rule reading it is skipped.
    EXPECT_EQ(Check(With(adaptive, "references", "x")),
              (Issues{{"invalid_type", {"references"}, "Expected array, received string"}}));
}

TEST_F(TextToVideoTest, Seedance25ReferenceAudioNeedsPromptText) {
    const Issue needs_text = Custom({"referenceAudio"}, "referenceAudio requires promptText");
    const json full = Full("seedance2_5");
    EXPECT_EQ(Check(Without(full, "promptText")), Issues{needs_text});
    EXPECT_THAT(Check(With(Without(full, "promptText"), "referenceAudio", json::array())),
                IsEmpty());
    EXPECT_THAT(Check(Without(Without(full, "promptText"), "referenceAudio")), IsEmpty());
}

TEST_F(TextToVideoTest, ImagineImageReferences) {
    const json full = Full("imagine_1_5");
    const Issue cap =
        Custom({"resolution"}, "With image references the resolution is at most 720p");
    const Issue needs_image =
        Custom({"referenceAudio"}, "referenceAudio requires at least one image in references");
    EXPECT_EQ(Check(With(full, "resolution", "1080p")), Issues{cap});
    EXPECT_THAT(Check(With(full, "resolution", "720p")), IsEmpty());
    EXPECT_THAT(Check(Without(full, "resolution")), IsEmpty());
    EXPECT_THAT(
        Check(With(Without(Without(full, "references"), "referenceAudio"), "resolution", "1080p")),
        IsEmpty());
    EXPECT_EQ(Check(Without(full, "references")), Issues{needs_image});
    EXPECT_EQ(Check(With(With(full, "references", json::array()), "resolution", "1080p")),
              Issues{needs_image});
    EXPECT_EQ(Check(With(full, "references", json::array({RefImage()}))), Issues{});
}

TEST_F(TextToVideoTest, Gen45ProresProfile) {
    const json base = Minimal("gen4.5");
    const Issue only_prores = Custom(
        {"proresProfile"}, "proresProfile is only valid with outputFormat prores or hdr_prores");
    const Issue hdr = Custom({"proresProfile"},
                             "With outputFormat hdr_prores, proresProfile must be one of 422, "
                             "422 HQ, 4444");
    EXPECT_EQ(Check(With(base, "proresProfile", "422")), Issues{only_prores});
    EXPECT_EQ(Check(With(With(base, "outputFormat", "hdr10"), "proresProfile", "422")),
              Issues{only_prores});
    EXPECT_THAT(Check(With(With(base, "outputFormat", "prores"), "proresProfile", "4444 XQ")),
                IsEmpty());
    EXPECT_EQ(Check(With(With(base, "outputFormat", "hdr_prores"), "proresProfile", "422 LT")),
              Issues{hdr});
    EXPECT_THAT(Check(With(With(base, "outputFormat", "hdr_prores"), "proresProfile", "4444")),
                IsEmpty());
    EXPECT_THAT(Check(With(base, "outputFormat", "hdr_prores")), IsEmpty());
}

TEST_F(TextToVideoTest, ReferenceItems) {
    const json full = Full("seedance2");
    EXPECT_EQ(One(With(full, "referenceVideos", json::array({{{"uri", kVideo}}}))),
              (Issue{"invalid_type", {"referenceVideos", "0", "type"}, "Required"}));
    EXPECT_EQ(
        One(With(full, "referenceVideos",
                 json::array({VideoRef(), {{"type", "video"}, {"uri", "ftp://x.example/a"}}}))),
        (Issue{"invalid_string", {"referenceVideos", "1", "uri"}, "Only HTTPS URLs are allowed"}));
    EXPECT_EQ(One(With(full, "referenceAudio", json::array({{{"type", "audio"}}}))),
              (Issue{"invalid_type", {"referenceAudio", "0", "uri"}, "Required"}));
    EXPECT_EQ(One(With(full, "references", json::array({{{"uri", "data:audio/mp3;base64,AAAA"}}}))),
              (Issue{"invalid_string", {"references", "0", "uri"}, "Unsupported asset type"}));
    // omni_flash_1.1's reference videos are plain {uri}.
    EXPECT_EQ(One(With(Full("omni_flash_1.1"), "referenceVideos", json::array({VideoRef()}))),
              (Issue{"unrecognized_keys",
                     {"referenceVideos", "0"},
                     "Unrecognized key(s) in object: 'type'"}));
}

TEST_F(TextToVideoTest, AllIssuesAtOnceInOrder) {
    const json body = {{"model", "imagine_1_5"},
                       {"resolution", "1080p"},
                       {"duration", 16},
                       {"ratio", "21:9"},
                       {"references", json::array({RefImage(), {{"uri", 1}}})},
                       {"referenceAudio", json::array({AudioRef()})},
                       {"extra", true}};
    EXPECT_EQ(Check(body),
              (Issues{
                  {"invalid_type", {"promptText"}, "Required"},
                  {"too_big", {"duration"}, "Number must be less than or equal to 15"},
                  {"invalid_enum_value",
                   {"ratio"},
                   "Invalid enum value. Expected '1:1' | '16:9' | '9:16' | '4:3' | '3:4' | "
                   "'3:2' | '2:3', received '21:9'"},
                  {"invalid_type", {"references", "1", "uri"}, "Expected string, received number"},
                  {"unrecognized_keys", {}, "Unrecognized key(s) in object: 'extra'"},
                  // The rules only count references, so a bad uri inside one does not stop
                  // them: two image references cap the resolution at 720p.
                  Custom({"resolution"}, "With image references the resolution is at most 720p"),
              }));
}

TEST_F(TextToVideoTest, Defaults) {
    const auto set = RepoSchemas();
    auto filled = [&](const json& body) { return set->ApplyDefaults(kEndpoint, body); };
    EXPECT_EQ(filled(Minimal("gen4.5"))["outputFormat"], "mp4");
    EXPECT_EQ(filled(With(Minimal("gen4.5"), "outputFormat", "prores"))["proresProfile"], "4444");
    EXPECT_EQ(filled(With(With(Minimal("gen4.5"), "outputFormat", "prores"), "proresProfile",
                          "422"))["proresProfile"],
              "422");
    for (const char* model : {"veo3.1", "veo3.1_fast", "seedance2", "seedance2_fast",
                              "seedance2_mini", "seedance2_5"}) {
        EXPECT_EQ(filled(Minimal(model))["audio"], true) << model;
    }
    EXPECT_EQ(filled(Minimal("seedance2_5"))["duration"], 5);
    EXPECT_EQ(filled(Minimal("h3_max"))["promptExpansionMode"], "balanced");
    EXPECT_FALSE(filled(Minimal("wan3")).contains("audio"));
    EXPECT_FALSE(filled(Minimal("imagine_1_5")).contains("resolution"));
    for (const std::string& model : kModels) {
        EXPECT_THAT(Check(filled(Minimal(model))), IsEmpty()) << model;
        EXPECT_THAT(Check(filled(Full(model))), IsEmpty()) << model;
    }
}

TEST_F(TextToVideoTest, H3MaxSeedNote) {
    const json& doc = *RepoSchemas()->Document("schemas/text_to_video.json");
    const std::string note = doc["$defs"]["h3_max"]["properties"]["seed"]["description"];
    EXPECT_THAT(note, ::testing::HasSubstr("promptExpansionMode disabled"));
}

}  // namespace
}  // namespace genhost::validate
