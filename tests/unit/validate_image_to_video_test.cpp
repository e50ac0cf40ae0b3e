// Golden tests of schemas/image_to_video.json (and the schemas/common.json pieces it uses)
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

constexpr const char* kEndpoint = "image_to_video";
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

json Keyframe(const char* position) { return {{"uri", kImage}, {"position", position}}; }
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
    "gen4.5",    "gen4_turbo",     "veo3.1",         "veo3.1_fast", "hailuo3",     "happyhorse_1_0",
    "seedance2", "seedance2_fast", "seedance2_mini", "omni_flash",  "seedance2_5", "imagine_1_5",
    "wan3",      "wan3_prime",     "omni_flash_1.1", "h3_max"};

// Minimal is the smallest valid body of each model.
json Minimal(const std::string& model) {
    json body = {{"model", model}, {"promptImage", kImage}};
    if (model == "gen4.5") {
        body["promptText"] = "a cat walks";
        body["ratio"] = "1280:720";
        body["duration"] = 5;
    } else if (model == "gen4_turbo" || model.starts_with("veo3.1")) {
        body["ratio"] = "1280:720";
    } else if (model == "hailuo3") {
        body["promptText"] = "a cat walks";
    }
    return body;
}

// Full sets every field of each model to a valid value.
json Full(const std::string& model) {
    const json moderation = {{"publicFigureThreshold", "low"}};
    if (model == "gen4.5") {
        return {{"model", model},
                {"promptText", "a cat walks"},
                {"promptImage", json::array({Keyframe("first")})},
                {"seed", 7},
                {"ratio", "1584:672"},
                {"duration", 10},
                {"contentModeration", moderation},
                {"outputFormat", "prores"},
                {"proresProfile", "422 LT"}};
    }
    if (model == "gen4_turbo") {
        return {{"model", model},
                {"promptText", "a cat walks"},
                {"promptImage", kImage},
                {"seed", 7},
                {"ratio", "832:1104"},
                {"duration", 2},
                {"contentModeration", moderation}};
    }
    if (model.starts_with("veo3.1")) {
        return {{"model", model},
                {"promptText", "a cat walks"},
                {"promptImage", json::array({Keyframe("first"), Keyframe("last")})},
                {"ratio", "1080:1920"},
                {"audio", false},
                {"negativePrompt", "dogs"},
                {"seed", 7},
                {"duration", 6}};
    }
    if (model == "hailuo3") {
        return {{"model", model},
                {"promptImage", Repeat(RefImage(), 9)},
                {"promptText", "a cat walks"},
                {"resolution", "2K"},
                {"duration", 15},
                {"ratio", "adaptive"},
                {"referenceAudio", Repeat(AudioRef(), 3)}};
    }
    if (model == "happyhorse_1_0") {
        return {{"model", model},
                {"promptText", "a cat walks"},
                {"promptImage", json::array({Keyframe("first")})},
                {"resolution", "1080P"},
                {"duration", 15}};
    }
    if (model.starts_with("seedance2") && model != "seedance2_5") {
        return {{"model", model},
                {"promptImage", json::array({Keyframe("first"), Keyframe("last")})},
                {"promptText", "a cat walks"},
                {"audio", false},
                {"seed", 4294967295u},
                {"duration", "auto"},
                {"ratio", "720:1280"},
                {"referenceAudio", Repeat(AudioRef(), 3)}};
    }
    if (model == "omni_flash") {
        return {{"model", model},
                {"promptImage", json::array({Keyframe("first")})},
                {"promptText", "the cat starts to run"},
                {"duration", 10},
                {"ratio", "720:1280"}};
    }
    if (model == "seedance2_5") {
        return {{"model", model},
                {"promptImage", Repeat(RefImage(), 30)},
                {"promptText", "a cat walks"},
                {"audio", true},
                {"seed", 0},
                {"duration", 15},
                {"ratio", "854:480"},
                {"referenceAudio", Repeat(AudioRef(), 10)}};
    }
    if (model == "imagine_1_5") {
        return {{"model", model},
                {"promptText", "[Image 1] walks"},
                {"promptImage", kImage},
                {"resolution", "720p"},
                {"duration", 15},
                {"ratio", "2:3"},
                {"references", Repeat(RefImage(), 7)},
                {"referenceAudio", Repeat(AudioRef(), 3)}};
    }
    if (model.starts_with("wan3")) {
        return {{"model", model},
                {"promptText", "a cat walks"},
                {"promptImage", json::array({Keyframe("first"), Keyframe("last")})},
                {"audio", true},
                {"duration", 30},
                {"ratio", "auto_1080p"},
                {"references", Repeat(RefImage(), 10)},
                {"referenceVideos", Repeat(VideoRef(), 5)},
                {"referenceAudio", Repeat(AudioRef(), 5)}};
    }
    if (model == "omni_flash_1.1") {
        return {{"model", model},
                {"promptText", "a cat walks"},
                {"promptImage", json::array({Keyframe("first")})},
                {"ratio", "3840:2160"},
                {"duration", "auto"},
                {"references", Repeat(RefImage(), 5)}};
    }
    return {{"model", model},       {"promptText", "a cat walks"},       {"promptImage", kImage},
            {"resolution", "480p"}, {"promptExpansionMode", "disabled"}, {"seed", 1},
            {"duration", 5}};  // h3_max
}

class ImageToVideoTest : public ::testing::Test {
  protected:
    static Issue One(const json& body) {
        const Issues issues = Check(body);
        EXPECT_EQ(issues.size(), 1u) << body.dump().substr(0, 300);
        return issues.empty() ? Issue{} : issues.front();
    }
};

TEST_F(ImageToVideoTest, EndpointIsListed) {
    const EndpointInfo* info = RepoSchemas()->FindEndpoint(kEndpoint);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->method, "POST");
    EXPECT_EQ(info->path, "/v1/image_to_video");
    EXPECT_EQ(info->kind, "generation");
    EXPECT_FALSE(info->summary.empty());
}

// Every model of the union is in the catalog and serves this endpoint, and every catalog
// model serving it has a shape here.
TEST_F(ImageToVideoTest, ModelsAgreeWithTheCatalog) {
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
    const json& doc = *RepoSchemas()->Document("schemas/image_to_video.json");
    ASSERT_EQ(doc["oneOf"].size(), kModels.size());
    for (std::size_t i = 0; i < kModels.size(); ++i) {
        EXPECT_EQ(doc["oneOf"][i]["$ref"], "#/$defs/" + kModels[i]);
    }
}

TEST_F(ImageToVideoTest, MinimalAndFullBodiesPass) {
    for (const std::string& model : kModels) {
        EXPECT_THAT(Check(Minimal(model)), IsEmpty()) << model;
        EXPECT_THAT(Check(Full(model)), IsEmpty()) << model;
    }
}

TEST_F(ImageToVideoTest, RequiredFields) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> rows = {
        {"gen4.5", {"promptText", "promptImage", "ratio", "duration"}},
        {"gen4_turbo", {"promptImage", "ratio"}},
        {"veo3.1", {"promptImage", "ratio"}},
        {"veo3.1_fast", {"promptImage", "ratio"}},
        {"hailuo3", {"promptImage", "promptText"}},
        {"happyhorse_1_0", {"promptImage"}},
        {"seedance2", {"promptImage"}},
        {"seedance2_fast", {"promptImage"}},
        {"seedance2_mini", {"promptImage"}},
        {"omni_flash", {"promptImage"}},
        {"seedance2_5", {"promptImage"}},
        {"imagine_1_5", {"promptImage"}},
        {"wan3", {"promptImage"}},
        {"wan3_prime", {"promptImage"}},
        {"omni_flash_1.1", {"promptImage"}},
        {"h3_max", {"promptImage"}},
    };
    ASSERT_EQ(rows.size(), kModels.size());
    for (const auto& [model, fields] : rows) {
        Issues expected;
        for (const std::string& field : fields)
            expected.push_back({"invalid_type", {field}, "Required"});
        EXPECT_EQ(Check({{"model", model}}), expected) << model;
    }
}

TEST_F(ImageToVideoTest, MissingUnknownAndRetiredModels) {
    const std::string expected = "Invalid discriminator value. Expected " + Join(kModels);
    EXPECT_EQ(One(Without(Minimal("gen4.5"), "model")),
              (Issue{"invalid_union_discriminator", {"model"}, expected}));
    EXPECT_EQ(One(With(Minimal("gen4.5"), "model", "veo3")),
              (Issue{"invalid_union_discriminator", {"model"}, expected}));
    EXPECT_EQ(One(With(Minimal("gen4.5"), "model", "aleph2")),  // a video_to_video model
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

// Only the chosen model's fields are valid: a field another model has is an unknown key.
TEST_F(ImageToVideoTest, FieldsOfOtherModelsAreUnknown) {
    const std::vector<std::pair<std::string, std::string>> rows = {
        {"gen4_turbo", "outputFormat"},
        {"gen4_turbo", "proresProfile"},
        {"gen4.5", "audio"},
        {"veo3.1", "contentModeration"},
        {"hailuo3", "seed"},
        {"hailuo3", "references"},
        {"happyhorse_1_0", "ratio"},
        {"happyhorse_1_0", "seed"},
        {"seedance2", "references"},
        {"seedance2_fast", "referenceVideos"},
        {"seedance2_mini", "resolution"},
        {"omni_flash", "seed"},
        {"seedance2_5", "mode"},
        {"imagine_1_5", "referenceVideos"},
        {"wan3", "seed"},
        {"omni_flash_1.1", "referenceVideos"},
        {"h3_max", "ratio"},
        {"veo3.1_fast", "promptVideo"},
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

TEST_F(ImageToVideoTest, IntegerBounds) {
    std::vector<IntegerBound> rows = {
        {"gen4.5", "duration", 2, 10},         {"gen4_turbo", "duration", 2, 10},
        {"hailuo3", "duration", 5, 15},        {"happyhorse_1_0", "duration", 3, 15},
        {"seedance2", "duration", 4, 15},      {"seedance2_fast", "duration", 4, 15},
        {"seedance2_mini", "duration", 4, 15}, {"omni_flash", "duration", 3, 10},
        {"seedance2_5", "duration", 4, 15},    {"imagine_1_5", "duration", 1, 15},
        {"wan3", "duration", 2, 30},           {"wan3_prime", "duration", 2, 30},
        {"omni_flash_1.1", "duration", 3, 10}, {"h3_max", "duration", 5, 15},
    };
    for (const char* model : {"gen4.5", "gen4_turbo", "veo3.1", "veo3.1_fast", "seedance2",
                              "seedance2_fast", "seedance2_mini", "seedance2_5", "h3_max"}) {
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

TEST_F(ImageToVideoTest, VeoDurationIsFourSixOrEight) {
    for (const char* model : {"veo3.1", "veo3.1_fast"}) {
        for (int ok : {4, 6, 8})
            EXPECT_THAT(Check(With(Minimal(model), "duration", ok)), IsEmpty());
        for (int bad : {2, 5, 7, 10}) {
            EXPECT_EQ(One(With(Minimal(model), "duration", bad)),
                      (Issue{"invalid_enum_value",
                             {"duration"},
                             "Invalid enum value. Expected 4 | 6 | 8, received '" +
                                 std::to_string(bad) + "'"}));
        }
        EXPECT_EQ(One(With(Minimal(model), "duration", "8")),
                  (Issue{"invalid_type", {"duration"}, "Expected number, received string"}));
    }
}

TEST_F(ImageToVideoTest, AutoDurations) {
    for (const char* model :
         {"seedance2", "seedance2_fast", "seedance2_mini", "seedance2_5", "omni_flash_1.1"}) {
        EXPECT_THAT(Check(With(Minimal(model), "duration", "auto")), IsEmpty()) << model;
        EXPECT_EQ(One(With(Minimal(model), "duration", "AUTO")),
                  (Issue{"invalid_enum_value",
                         {"duration"},
                         "Invalid enum value. Expected 'auto', received 'AUTO'"}));
        EXPECT_EQ(
            One(With(Minimal(model), "duration", true)),
            (Issue{"invalid_type", {"duration"}, "Expected string | number, received boolean"}));
    }
    // Models without auto.
    for (const char* model : {"gen4.5", "hailuo3", "wan3", "h3_max", "omni_flash"}) {
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

TEST_F(ImageToVideoTest, StringBounds) {
    const std::vector<StringBound> rows = {
        {"gen4.5", "promptText", 1000, 1},         {"gen4_turbo", "promptText", 1000, 1},
        {"veo3.1", "promptText", 1000, 1},         {"veo3.1_fast", "promptText", 1000, 1},
        {"veo3.1", "negativePrompt", 1000, 0},     {"veo3.1_fast", "negativePrompt", 1000, 0},
        {"hailuo3", "promptText", 6000, 1},        {"happyhorse_1_0", "promptText", 2500, 1},
        {"seedance2", "promptText", 3500, 1},      {"seedance2_fast", "promptText", 3500, 1},
        {"seedance2_mini", "promptText", 3500, 1}, {"omni_flash", "promptText", 4000, 1},
        {"seedance2_5", "promptText", 15000, 1},   {"imagine_1_5", "promptText", 2500, 1},
        {"wan3", "promptText", 20000, 1},          {"wan3_prime", "promptText", 20000, 1},
        {"omni_flash_1.1", "promptText", 4000, 1}, {"h3_max", "promptText", 6000, 1},
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
        EXPECT_EQ(One(With(base, row.field, 5)),
                  (Issue{"invalid_type", path, "Expected string, received number"}));
    }
}

TEST_F(ImageToVideoTest, PromptTextCountsUtf16Units) {
    std::string emoji;
    for (int i = 0; i < 7500; ++i) emoji += "\xF0\x9F\x98\x80";  // two UTF-16 units each
    const json base = Minimal("seedance2_5");
    EXPECT_THAT(Check(With(base, "promptText", emoji)), IsEmpty());
    EXPECT_EQ(One(With(base, "promptText", emoji + "a")),
              (Issue{"too_big", {"promptText"}, "String must contain at most 15000 character(s)"}));
}

struct ArrayBound {
    json base;
    std::string field;
    json item;
    std::size_t max;
};

TEST_F(ImageToVideoTest, ArrayBounds) {
    const std::vector<ArrayBound> rows = {
        {Full("hailuo3"), "referenceAudio", AudioRef(), 3},
        {Full("seedance2"), "referenceAudio", AudioRef(), 3},
        {Full("seedance2_fast"), "referenceAudio", AudioRef(), 3},
        {Full("seedance2_mini"), "referenceAudio", AudioRef(), 3},
        {Full("seedance2_5"), "referenceAudio", AudioRef(), 10},
        {Full("imagine_1_5"), "referenceAudio", AudioRef(), 3},
        {Full("imagine_1_5"), "references", RefImage(), 7},
        {Full("wan3"), "references", RefImage(), 10},
        {Full("wan3"), "referenceVideos", VideoRef(), 5},
        {Full("wan3"), "referenceAudio", AudioRef(), 5},
        {Full("wan3_prime"), "references", RefImage(), 10},
        {Full("wan3_prime"), "referenceVideos", VideoRef(), 5},
        {Full("wan3_prime"), "referenceAudio", AudioRef(), 5},
        {Full("omni_flash_1.1"), "references", RefImage(), 5},
        // promptImage arrays: first-frame models take one item, veo and wan3 two keyframes,
        // hailuo3 and seedance up to 9 reference images, seedance2_5 up to 30.
        {Minimal("gen4.5"), "promptImage", Keyframe("first"), 1},
        {Minimal("gen4_turbo"), "promptImage", Keyframe("first"), 1},
        {Minimal("happyhorse_1_0"), "promptImage", Keyframe("first"), 1},
        {Minimal("omni_flash"), "promptImage", Keyframe("first"), 1},
        {Minimal("imagine_1_5"), "promptImage", Keyframe("first"), 1},
        {Minimal("omni_flash_1.1"), "promptImage", Keyframe("first"), 1},
        {Minimal("h3_max"), "promptImage", Keyframe("first"), 1},
        {Minimal("hailuo3"), "promptImage", RefImage(), 9},
        {Minimal("seedance2"), "promptImage", RefImage(), 9},
        {Minimal("seedance2_fast"), "promptImage", RefImage(), 9},
        {Minimal("seedance2_mini"), "promptImage", RefImage(), 9},
        {Minimal("seedance2_5"), "promptImage", RefImage(), 30},
    };
    for (const ArrayBound& row : rows) {
        const std::string model = row.base["model"];
        const Path path = {row.field};
        EXPECT_THAT(Check(With(row.base, row.field, Repeat(row.item, row.max))), IsEmpty())
            << model << " " << row.field;
        EXPECT_EQ(One(With(row.base, row.field, Repeat(row.item, row.max + 1))),
                  (Issue{"too_big", path,
                         "Array must contain at most " + std::to_string(row.max) + " element(s)"}))
            << model << " " << row.field;
        if (row.field == "promptImage") {
            EXPECT_EQ(One(With(row.base, row.field, json::array())),
                      (Issue{"too_small", path, "Array must contain at least 1 element(s)"}))
                << model;
        } else if (!(model == "imagine_1_5" && row.field == "references")) {
            // (imagine_1_5's referenceAudio needs a reference image: ImagineImageReferences)
            EXPECT_THAT(Check(With(row.base, row.field, json::array())), IsEmpty()) << model;
        }
    }
    // Two keyframes for veo and wan3, a third is too many.
    for (const char* model : {"veo3.1", "veo3.1_fast", "wan3", "wan3_prime"}) {
        const json two = json::array({Keyframe("first"), Keyframe("last")});
        EXPECT_THAT(Check(With(Minimal(model), "promptImage", two)), IsEmpty()) << model;
        json three = two;
        three.push_back(Keyframe("first"));
        EXPECT_EQ(One(With(Minimal(model), "promptImage", three)),
                  (Issue{"too_big", {"promptImage"}, "Array must contain at most 2 element(s)"}));
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
const std::vector<std::string> kGen4Ratios = {"1280:720", "720:1280", "1104:832",
                                              "960:960",  "832:1104", "1584:672"};
const std::vector<std::string> kVeoRatios = {"1280:720", "720:1280", "1080:1920", "1920:1080"};
const std::vector<std::string> kHailuoRatios = {"adaptive", "21:9", "16:9", "4:3",
                                                "1:1",      "3:4",  "9:16"};
const std::vector<std::string> kOmni11Ratios = {"640:360",   "360:640",   "1280:720",  "720:1280",
                                                "1920:1080", "1080:1920", "3840:2160", "2160:3840"};

TEST_F(ImageToVideoTest, Enumerations) {
    const json hailuo_refs = With(Minimal("hailuo3"), "promptImage", json::array({RefImage()}));
    const std::vector<EnumField> rows = {
        {Minimal("gen4.5"), "ratio", kGen4Ratios},
        {Minimal("gen4_turbo"), "ratio", kGen4Ratios},
        {Minimal("veo3.1"), "ratio", kVeoRatios},
        {Minimal("veo3.1_fast"), "ratio", kVeoRatios},
        {hailuo_refs, "ratio", kHailuoRatios},
        {Minimal("hailuo3"), "resolution", {"768p", "2k", "768P", "2K"}},
        {Minimal("happyhorse_1_0"), "resolution", {"720p", "1080p", "720P", "1080P"}},
        {Minimal("seedance2"), "ratio", S24()},
        {Minimal("seedance2_fast"), "ratio", kS12},
        {Minimal("seedance2_mini"), "ratio", kS12},
        {Minimal("omni_flash"), "ratio", {"1280:720", "720:1280"}},
        {Minimal("seedance2_5"), "ratio", kS25},
        {Minimal("imagine_1_5"), "resolution", {"480p", "720p", "1080p"}},
        {Minimal("imagine_1_5"), "ratio", {"1:1", "16:9", "9:16", "4:3", "3:4", "3:2", "2:3"}},
        {Minimal("omni_flash_1.1"), "ratio", kOmni11Ratios},
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
        EXPECT_EQ(One(With(row.base, row.field, "nope")),
                  (Issue{"invalid_enum_value",
                         {row.field},
                         "Invalid enum value. Expected " + Join(row.values) + ", received 'nope'"}))
            << model << " " << row.field;
        EXPECT_EQ(
            One(With(row.base, row.field, 16)),
            (Issue{
                "invalid_type", {row.field}, "Expected " + Join(row.values) + ", received number"}))
            << model << " " << row.field;
    }
}

TEST_F(ImageToVideoTest, Wan3RatiosAreKnownButKeyframeVideoNeedsAuto) {
    const std::vector<std::string> ratios = {
        "832:480",   "720:544",   "624:624",   "544:720",   "480:832",   "1280:720",
        "1104:832",  "960:960",   "832:1104",  "720:1280",  "1920:1080", "1648:1248",
        "1440:1440", "1248:1648", "1080:1920", "auto_480p", "auto_720p", "auto_1080p"};
    const Issue needs_auto =
        Custom({"ratio"},
               "Keyframe image-to-video needs an auto ratio: auto_480p, auto_720p or auto_1080p");
    for (const char* model : {"wan3", "wan3_prime"}) {
        for (const std::string& ratio : ratios) {
            const Issues issues = Check(With(Minimal(model), "ratio", ratio));
            if (ratio.starts_with("auto_")) {
                EXPECT_THAT(issues, IsEmpty()) << ratio;
            } else {
                EXPECT_EQ(issues, Issues{needs_auto}) << ratio;
            }
        }
        EXPECT_EQ(One(With(Minimal(model), "ratio", "auto")),
                  (Issue{"invalid_enum_value",
                         {"ratio"},
                         "Invalid enum value. Expected " + Join(ratios) + ", received 'auto'"}));
        EXPECT_THAT(Check(Without(Minimal(model), "ratio")), IsEmpty());
    }
}

TEST_F(ImageToVideoTest, PromptImageForms) {
    for (const std::string& model : kModels) {
        const json base = Minimal(model);
        EXPECT_THAT(Check(With(base, "promptImage", "genhost://upload-token")), IsEmpty());
        EXPECT_THAT(Check(With(base, "promptImage", "data:image/png;base64,iVBORw0KGgo=")),
                    IsEmpty());
        EXPECT_THAT(Check(With(base, "promptImage", json::array({Keyframe("first")}))), IsEmpty())
            << model;
        EXPECT_EQ(
            One(With(base, "promptImage", 5)),
            (Issue{"invalid_type", {"promptImage"}, "Expected string | array, received number"}));
        EXPECT_EQ(One(With(base, "promptImage", "http://example.com/cat.png")),
                  (Issue{"invalid_string", {"promptImage"}, "Only HTTPS URLs are allowed"}));
        EXPECT_EQ(One(With(base, "promptImage", "data:video/mp4;base64,AAAA")),
                  (Issue{"invalid_string", {"promptImage"}, "Unsupported asset type"}));
        EXPECT_EQ(
            One(With(base, "promptImage", json::array({"https://example.com/cat.png"}))),
            (Issue{"invalid_type", {"promptImage", "0"}, "Expected object, received string"}));
        EXPECT_EQ(
            One(With(base, "promptImage",
                     json::array({{{"uri", kImage}, {"position", "first"}, {"w", 1}}}))),
            (Issue{
                "unrecognized_keys", {"promptImage", "0"}, "Unrecognized key(s) in object: 'w'"}));
        EXPECT_EQ(One(With(base, "promptImage", json::array({{{"position", "first"}}}))),
                  (Issue{"invalid_type", {"promptImage", "0", "uri"}, "Required"}));
    }
}

TEST_F(ImageToVideoTest, FirstFrameModelsTakeOnlyAFirstPosition) {
    for (const char* model : {"gen4.5", "gen4_turbo", "happyhorse_1_0", "omni_flash", "imagine_1_5",
                              "omni_flash_1.1", "h3_max"}) {
        const json base = Minimal(model);
        EXPECT_EQ(One(With(base, "promptImage", json::array({Keyframe("last")}))),
                  (Issue{"invalid_enum_value",
                         {"promptImage", "0", "position"},
                         "Invalid enum value. Expected 'first', received 'last'"}))
            << model;
        // In these shapes an array item is a first frame and must say so.
        EXPECT_EQ(One(With(base, "promptImage", json::array({RefImage()}))),
                  (Issue{"invalid_type", {"promptImage", "0", "position"}, "Required"}))
            << model;
    }
}

// veo3.1 and wan3: keyframes only (every item has a position), at most one per position,
// and a last frame needs a first frame.
TEST_F(ImageToVideoTest, KeyframeModels) {
    const std::string last_alone =
        "A last frame alone is not supported: add an image with position first";
    for (const char* model : {"veo3.1", "veo3.1_fast", "wan3", "wan3_prime"}) {
        const json base = Minimal(model);
        auto with = [&](json images) {
            return Check(With(base, "promptImage", std::move(images)));
        };
        EXPECT_THAT(with(json::array({Keyframe("first")})), IsEmpty()) << model;
        EXPECT_THAT(with(json::array({Keyframe("last"), Keyframe("first")})), IsEmpty());
        EXPECT_EQ(with(json::array({Keyframe("last")})),
                  Issues{Custom({"promptImage"}, last_alone)})
            << model;
        EXPECT_EQ(with(json::array({Keyframe("first"), Keyframe("first")})),
                  Issues{Custom({"promptImage"},
                                "promptImage may hold only one image with position first")});
        EXPECT_EQ(with(json::array({Keyframe("last"), Keyframe("last")})),
                  (Issues{Custom({"promptImage"},
                                 "promptImage may hold only one image with position last"),
                          Custom({"promptImage"}, last_alone)}));
        EXPECT_EQ(with(json::array({RefImage()})),
                  (Issues{{"invalid_type", {"promptImage", "0", "position"}, "Required"}}));
        // A bad position is one issue: the rules reading positions are skipped.
        EXPECT_EQ(with(json::array({Keyframe("middle")})),
                  (Issues{{"invalid_enum_value",
                           {"promptImage", "0", "position"},
                           "Invalid enum value. Expected 'first' | 'last', received 'middle'"}}));
    }
}

// hailuo3 and the seedance family: keyframes (with a position) or reference images (without),
// not mixed; at most one image per position.
TEST_F(ImageToVideoTest, KeyframeOrReferenceModels) {
    const Issue mixed =
        Custom({"promptImage"},
               "Keyframe images (with a position) and reference images (without) cannot be mixed");
    for (const char* model :
         {"hailuo3", "seedance2", "seedance2_fast", "seedance2_mini", "seedance2_5"}) {
        const json base = Minimal(model);
        auto with = [&](json images) {
            return Check(With(base, "promptImage", std::move(images)));
        };
        EXPECT_THAT(with(json::array({Keyframe("first"), Keyframe("last")})), IsEmpty()) << model;
        EXPECT_THAT(with(json::array({Keyframe("first")})), IsEmpty());
        EXPECT_THAT(with(json::array({Keyframe("last")})), IsEmpty());  // SPEC.md: no rule here
        EXPECT_THAT(with(json::array({RefImage(), RefImage()})), IsEmpty());
        EXPECT_EQ(with(json::array({Keyframe("first"), RefImage()})), Issues{mixed}) << model;
        EXPECT_EQ(with(json::array({RefImage(), Keyframe("last")})), Issues{mixed});
        EXPECT_EQ(with(json::array({Keyframe("first"), Keyframe("first")})),
                  Issues{Custom({"promptImage"},
                                "promptImage may hold only one image with position first")});
        EXPECT_EQ(with(json::array({Keyframe("last"), Keyframe("last")})),
                  Issues{Custom({"promptImage"},
                                "promptImage may hold only one image with position last")});
        EXPECT_EQ(with(json::array({Keyframe("first"), RefImage(), Keyframe("first")})),
                  (Issues{mixed, Custom({"promptImage"},
                                        "promptImage may hold only one image with position "
                                        "first")}));
    }
}

TEST_F(ImageToVideoTest, HailuoAdaptiveRatioNeedsReferenceImages) {
    const Issue needs_refs =
        Custom({"ratio"},
               "ratio adaptive requires reference images (promptImage items without a position)");
    json body = With(Minimal("hailuo3"), "ratio", "adaptive");
    EXPECT_EQ(Check(body), Issues{needs_refs});  // a plain image is a first frame
    EXPECT_EQ(Check(With(body, "promptImage", json::array({Keyframe("first")}))),
              Issues{needs_refs});
    EXPECT_THAT(Check(With(body, "promptImage", json::array({RefImage()}))), IsEmpty());
    EXPECT_THAT(Check(With(Minimal("hailuo3"), "ratio", "16:9")), IsEmpty());
}

TEST_F(ImageToVideoTest, ReferenceAudioNeedsPromptText) {
    const Issue needs_text = Custom({"referenceAudio"}, "referenceAudio requires promptText");
    for (const char* model : {"seedance2", "seedance2_fast", "seedance2_mini", "seedance2_5",
                              "imagine_1_5", "wan3", "wan3_prime"}) {
        const json full = Full(model);
        EXPECT_THAT(Check(full), IsEmpty());
        EXPECT_EQ(Check(Without(full, "promptText")), Issues{needs_text}) << model;
        EXPECT_THAT(Check(With(Without(full, "promptText"), "referenceAudio", json::array())),
                    IsEmpty())
            << model;
    }
    // hailuo3 requires promptText anyway: one issue, not two.
    EXPECT_EQ(Check(Without(Full("hailuo3"), "promptText")),
              (Issues{{"invalid_type", {"promptText"}, "Required"}}));
}

TEST_F(ImageToVideoTest, ImagineImageReferences) {
    const json full = Full("imagine_1_5");
    const Issue cap =
        Custom({"resolution"}, "With image references the resolution is at most 720p");
    EXPECT_EQ(Check(With(full, "resolution", "1080p")), Issues{cap});
    EXPECT_THAT(Check(With(full, "resolution", "480p")), IsEmpty());
    EXPECT_THAT(Check(Without(full, "resolution")), IsEmpty());
    // The first frame is not an image reference.
    EXPECT_THAT(Check(With(Minimal("imagine_1_5"), "resolution", "1080p")), IsEmpty());
    EXPECT_THAT(Check(With(With(Minimal("imagine_1_5"), "resolution", "1080p"), "references",
                           json::array())),
                IsEmpty());
    const Issue needs_image =
        Custom({"referenceAudio"}, "referenceAudio requires at least one image in references");
    EXPECT_EQ(Check(Without(full, "references")), Issues{needs_image});
    EXPECT_EQ(Check(With(full, "references", json::array())), Issues{needs_image});
    EXPECT_EQ(Check(With(Without(full, "references"), "resolution", "1080p")), Issues{needs_image});
    // Both rules at once, in declaration order, plus the promptText one.
    json both = With(Without(full, "promptText"), "resolution", "1080p");
    EXPECT_EQ(Check(both),
              (Issues{cap, Custom({"referenceAudio"}, "referenceAudio requires promptText")}));
}

TEST_F(ImageToVideoTest, Gen45ProresProfile) {
    const json base = Minimal("gen4.5");
    const Issue only_prores = Custom(
        {"proresProfile"}, "proresProfile is only valid with outputFormat prores or hdr_prores");
    const Issue hdr = Custom({"proresProfile"},
                             "With outputFormat hdr_prores, proresProfile must be one of 422, "
                             "422 HQ, 4444");
    EXPECT_EQ(Check(With(base, "proresProfile", "4444")), Issues{only_prores});
    EXPECT_EQ(Check(With(With(base, "outputFormat", "mp4"), "proresProfile", "422")),
              Issues{only_prores});
    for (const char* profile : {"422", "4444", "422 Proxy", "422 LT", "422 HQ", "4444 XQ"}) {
        EXPECT_THAT(Check(With(With(base, "outputFormat", "prores"), "proresProfile", profile)),
                    IsEmpty());
        const bool hdr_ok = std::string(profile) == "422" || std::string(profile) == "422 HQ" ||
                            std::string(profile) == "4444";
        const Issues issues =
            Check(With(With(base, "outputFormat", "hdr_prores"), "proresProfile", profile));
        EXPECT_EQ(issues, hdr_ok ? Issues{} : Issues{hdr}) << profile;
    }
    EXPECT_EQ(One(With(With(base, "outputFormat", "prores"), "proresProfile", "4444HQ")).code,
              "invalid_enum_value");
    // gen4_turbo has neither field.
    EXPECT_EQ(One(With(Minimal("gen4_turbo"), "outputFormat", "mp4")).code, "unrecognized_keys");
}

TEST_F(ImageToVideoTest, ReferenceItems) {
    const json full = Full("wan3");
    EXPECT_EQ(One(With(full, "referenceAudio", json::array({{{"uri", kAudio}}}))),
              (Issue{"invalid_type", {"referenceAudio", "0", "type"}, "Required"}));
    EXPECT_EQ(
        One(With(full, "referenceAudio", json::array({{{"type", "video"}, {"uri", kAudio}}}))),
        (Issue{"invalid_enum_value",
               {"referenceAudio", "0", "type"},
               "Invalid literal value, expected \"audio\""}));
    EXPECT_EQ(One(With(full, "referenceAudio",
                       json::array({{{"type", "audio"}, {"uri", "data:video/mp4;base64,AAAA"}}}))),
              (Issue{"invalid_string", {"referenceAudio", "0", "uri"}, "Unsupported asset type"}));
    EXPECT_THAT(
        Check(With(full, "referenceAudio",
                   json::array({{{"type", "audio"}, {"uri", "data:audio/mpeg;base64,AAAA"}}}))),
        IsEmpty());
    EXPECT_EQ(
        One(With(full, "referenceVideos", json::array({{{"type", "audio"}, {"uri", kVideo}}}))),
        (Issue{"invalid_enum_value",
               {"referenceVideos", "0", "type"},
               "Invalid literal value, expected \"video\""}));
    EXPECT_EQ(One(With(full, "referenceVideos",
                       json::array({{{"type", "video"}, {"uri", "data:image/png;base64,AAAA"}}}))),
              (Issue{"invalid_string", {"referenceVideos", "0", "uri"}, "Unsupported asset type"}));
    EXPECT_EQ(
        One(With(full, "references", json::array({{{"uri", kImage}, {"tag", "hero"}}}))),
        (Issue{"unrecognized_keys", {"references", "0"}, "Unrecognized key(s) in object: 'tag'"}));
    EXPECT_EQ(One(With(full, "references", json::array({kImage}))),
              (Issue{"invalid_type", {"references", "0"}, "Expected object, received string"}));
}

TEST_F(ImageToVideoTest, AudioFlags) {
    for (const char* model : {"veo3.1", "veo3.1_fast", "seedance2", "seedance2_5", "wan3"}) {
        EXPECT_THAT(Check(With(Minimal(model), "audio", false)), IsEmpty());
        EXPECT_EQ(One(With(Minimal(model), "audio", "true")),
                  (Issue{"invalid_type", {"audio"}, "Expected boolean, received string"}));
    }
}

TEST_F(ImageToVideoTest, ContentModeration) {
    for (const char* model : {"gen4.5", "gen4_turbo"}) {
        EXPECT_EQ(
            One(With(Minimal(model), "contentModeration", {{"publicFigureThreshold", "high"}})),
            (Issue{"invalid_enum_value",
                   {"contentModeration", "publicFigureThreshold"},
                   "Invalid enum value. Expected 'auto' | 'low', received 'high'"}));
    }
}

TEST_F(ImageToVideoTest, AllIssuesAtOnceInOrder) {
    const json body = {{"model", "seedance2_fast"},
                       {"zz", 1},
                       {"promptImage", json::array({Keyframe("first"), RefImage()})},
                       {"audio", 1},
                       {"duration", 3},
                       {"ratio", "3840:2160"},
                       {"referenceAudio", json::array({AudioRef()})}};
    EXPECT_EQ(Check(body),
              (Issues{
                  {"invalid_type", {"audio"}, "Expected boolean, received number"},
                  {"too_small", {"duration"}, "Number must be greater than or equal to 4"},
                  {"invalid_enum_value",
                   {"ratio"},
                   "Invalid enum value. Expected " + Join(kS12) + ", received '3840:2160'"},
                  {"unrecognized_keys", {}, "Unrecognized key(s) in object: 'zz'"},
                  Custom({"promptImage"},
                         "Keyframe images (with a position) and reference images (without) "
                         "cannot be mixed"),
                  Custom({"referenceAudio"}, "referenceAudio requires promptText"),
              }));
}

TEST_F(ImageToVideoTest, Defaults) {
    const auto set = RepoSchemas();
    auto filled = [&](const json& body) { return set->ApplyDefaults(kEndpoint, body); };
    EXPECT_EQ(filled(Minimal("gen4.5"))["outputFormat"], "mp4");
    EXPECT_FALSE(filled(Minimal("gen4.5")).contains("proresProfile"));
    EXPECT_EQ(filled(With(Minimal("gen4.5"), "outputFormat", "prores"))["proresProfile"], "4444");
    EXPECT_FALSE(
        filled(With(Minimal("gen4.5"), "outputFormat", "hdr_prores")).contains("proresProfile"));
    for (const char* model : {"veo3.1", "veo3.1_fast", "seedance2", "seedance2_fast",
                              "seedance2_mini", "seedance2_5"}) {
        EXPECT_EQ(filled(Minimal(model))["audio"], true) << model;
        EXPECT_EQ(filled(With(Minimal(model), "audio", false))["audio"], false);
    }
    EXPECT_EQ(filled(Minimal("seedance2_5"))["duration"], 5);
    EXPECT_EQ(filled(With(Minimal("seedance2_5"), "duration", "auto"))["duration"], "auto");
    EXPECT_FALSE(filled(Minimal("seedance2")).contains("duration"));
    EXPECT_EQ(filled(Minimal("h3_max"))["promptExpansionMode"], "balanced");
    EXPECT_FALSE(filled(Minimal("wan3")).contains("audio"));
    EXPECT_EQ(filled(Minimal("happyhorse_1_0")), Minimal("happyhorse_1_0"));
    for (const std::string& model : kModels) {
        EXPECT_THAT(Check(filled(Minimal(model))), IsEmpty()) << model;
        EXPECT_THAT(Check(filled(Full(model))), IsEmpty()) << model;
    }
}

TEST_F(ImageToVideoTest, H3MaxSeedNote) {
    const json& doc = *RepoSchemas()->Document("schemas/image_to_video.json");
    const std::string note = doc["$defs"]["h3_max"]["properties"]["seed"]["description"];
    EXPECT_THAT(note, ::testing::HasSubstr("promptExpansionMode disabled"));
}

}  // namespace
}  // namespace genhost::validate
