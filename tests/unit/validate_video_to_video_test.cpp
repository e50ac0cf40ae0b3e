// Golden tests of schemas/video_to_video.json (and the schemas/common.json pieces it uses)
// through SchemaSet: for every model a minimal and a full valid body, every bound at its limit
// and one past it, every enumeration, every cross-field rule both ways (aleph2's keyframes and
// ranges, seedance2_5's modes), defaults, and agreement with the model catalog.
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

constexpr const char* kEndpoint = "video_to_video";
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

const std::vector<std::string> kModels = {"aleph2",         "hailuo3",        "seedance2",
                                          "seedance2_fast", "seedance2_mini", "omni_flash",
                                          "seedance2_5",    "omni_flash_1.1"};

json Range(int start, int end) { return {{"start_seconds", start}, {"end_seconds", end}}; }
json AtSeconds(double seconds) { return {{"uri", kImage}, {"seconds", seconds}}; }
json AtFraction(double at) { return {{"uri", kImage}, {"at", at}}; }
json WithRange(json keyframe, int start, int end) {
    keyframe["range"] = Range(start, end);
    return keyframe;
}

// Minimal is the smallest valid body of each model.
json Minimal(const std::string& model) {
    if (model == "aleph2") return {{"model", model}, {"videoUri", kVideo}};
    if (model == "hailuo3") {
        return {{"model", model}, {"promptVideo", kVideo}, {"promptText", "make it snow"}};
    }
    if (model == "omni_flash" || model == "omni_flash_1.1") {
        return {{"model", model}, {"videoUri", kVideo}, {"promptText", "make it snow"}};
    }
    return {{"model", model}, {"promptVideo", kVideo}};  // the seedance family
}

// Full sets every field of each model to a valid value.
json Full(const std::string& model) {
    const std::string text = "make it snow";
    if (model == "aleph2") {
        return {{"model", model},
                {"videoUri", kVideo},
                {"promptText", text},
                {"keyframes",
                 json::array({WithRange(AtSeconds(1.5), 0, 3), WithRange(AtFraction(0.5), 8, 12)})},
                {"seed", 11},
                {"ratio", "ratio"},  // the official client's test literal: no enumeration
                {"targetAspectRatio", "21:9"},
                {"contentModeration", {{"publicFigureThreshold", "low"}}},
                {"outputFormat", "prores"},
                {"proresProfile", "4444 XQ"}};
    }
    if (model == "hailuo3") {
        return {{"model", model},
                {"promptVideo", kVideo},
                {"promptText", text},
                {"resolution", "2k"},
                {"duration", 15},
                {"ratio", "adaptive"},
                {"references", Repeat(RefImage(), 9)},
                {"referenceVideos", Repeat(VideoRef(), 2)},
                {"referenceAudio", Repeat(AudioRef(), 3)}};
    }
    if (model == "omni_flash") {
        return {{"model", model},
                {"videoUri", "genhost://upload-1234"},
                {"promptText", text},
                {"references", Repeat(RefImage(), 5)}};
    }
    if (model == "seedance2_5") {
        return {{"model", model},
                {"promptVideo", kVideo},
                {"promptText", text},
                {"audio", true},
                {"seed", 2},
                {"mode", "reference"},
                {"duration", 15},
                {"ratio", "480:854"},
                {"references", Repeat(RefImage(), 30)},
                {"referenceVideos", Repeat(VideoRef(), 9)},
                {"referenceAudio", Repeat(AudioRef(), 10)}};
    }
    if (model == "omni_flash_1.1") {
        return {{"model", model},
                {"videoUri", kVideo},
                {"promptText", text},
                {"mode", "extend"},
                {"ratio", "2160:3840"},
                {"duration", 10},
                {"references", Repeat(RefImage(), 5)}};
    }
    return {{"model", model},
            {"promptVideo", "data:video/mp4;base64,AAAAIGZ0eXBpc29t"},
            {"promptText", text},
            {"audio", false},
            {"seed", 4294967295u},
            {"duration", 4},
            {"ratio", "496:864"},
            {"references", Repeat(RefImage(), 9)},
            {"referenceVideos", Repeat(VideoRef(), 3)},
            {"referenceAudio", Repeat(AudioRef(), 3)}};  // the seedance family
}

class VideoToVideoTest : public ::testing::Test {
  protected:
    static Issue One(const json& body) {
        const Issues issues = Check(body);
        EXPECT_EQ(issues.size(), 1u) << body.dump().substr(0, 300);
        return issues.empty() ? Issue{} : issues.front();
    }
};

TEST_F(VideoToVideoTest, EndpointIsListed) {
    const EndpointInfo* info = RepoSchemas()->FindEndpoint(kEndpoint);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->method, "POST");
    EXPECT_EQ(info->path, "/v1/video_to_video");
    EXPECT_EQ(info->kind, "generation");
    EXPECT_FALSE(info->summary.empty());
}

TEST_F(VideoToVideoTest, ModelsAgreeWithTheCatalog) {
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
    const json& doc = *RepoSchemas()->Document("schemas/video_to_video.json");
    ASSERT_EQ(doc["oneOf"].size(), kModels.size());
    for (std::size_t i = 0; i < kModels.size(); ++i) {
        EXPECT_EQ(doc["oneOf"][i]["$ref"], "#/$defs/" + kModels[i]);
    }
}

TEST_F(VideoToVideoTest, MinimalAndFullBodiesPass) {
    for (const std::string& model : kModels) {
        EXPECT_THAT(Check(Minimal(model)), IsEmpty()) << model;
        EXPECT_THAT(Check(Full(model)), IsEmpty()) << model;
    }
}

TEST_F(VideoToVideoTest, RequiredFields) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> rows = {
        {"aleph2", {"videoUri"}},
        {"hailuo3", {"promptVideo", "promptText"}},
        {"seedance2", {"promptVideo"}},
        {"seedance2_fast", {"promptVideo"}},
        {"seedance2_mini", {"promptVideo"}},
        {"omni_flash", {"videoUri", "promptText"}},
        {"seedance2_5", {"promptVideo"}},
        {"omni_flash_1.1", {"videoUri", "promptText"}},
    };
    ASSERT_EQ(rows.size(), kModels.size());
    for (const auto& [model, fields] : rows) {
        Issues expected;
        for (const std::string& field : fields)
            expected.push_back({"invalid_type", {field}, "Required"});
        EXPECT_EQ(Check({{"model", model}}), expected) << model;
    }
}

TEST_F(VideoToVideoTest, MissingUnknownAndRetiredModels) {
    const std::string expected = "Invalid discriminator value. Expected " + Join(kModels);
    EXPECT_EQ(One(Without(Minimal("aleph2"), "model")),
              (Issue{"invalid_union_discriminator", {"model"}, expected}));
    EXPECT_EQ(One(With(Minimal("aleph2"), "model", "gen4.5")),
              (Issue{"invalid_union_discriminator", {"model"}, expected}));
    EXPECT_EQ(One(With(Minimal("aleph2"), "model", "gen4_aleph")),
              (Issue{"invalid_union_discriminator",
                     {"model"},
                     "Model 'gen4_aleph' has been retired (replaced by aleph2). Expected " +
                         Join(kModels)}));
    EXPECT_EQ(One(With(Minimal("aleph2"), "model", "gen3a_turbo")),
              (Issue{"invalid_union_discriminator",
                     {"model"},
                     "Model 'gen3a_turbo' has been retired (replaced by gen4.5 or gen4_turbo). "
                     "Expected " +
                         Join(kModels)}));
}

TEST_F(VideoToVideoTest, FieldsOfOtherModelsAreUnknown) {
    const std::vector<std::pair<std::string, std::string>> rows = {
        {"aleph2", "promptVideo"},    {"aleph2", "duration"},
        {"hailuo3", "videoUri"},      {"hailuo3", "seed"},
        {"seedance2", "mode"},        {"seedance2_fast", "videoUri"},
        {"omni_flash", "ratio"},      {"omni_flash", "duration"},
        {"seedance2_5", "keyframes"}, {"omni_flash_1.1", "referenceVideos"},
        {"omni_flash_1.1", "seed"},   {"seedance2_mini", "promptImage"},
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

TEST_F(VideoToVideoTest, IntegerBounds) {
    std::vector<IntegerBound> rows = {
        {"hailuo3", "duration", 5, 15},        {"seedance2", "duration", 4, 15},
        {"seedance2_fast", "duration", 4, 15}, {"seedance2_mini", "duration", 4, 15},
        {"seedance2_5", "duration", 4, 15},    {"omni_flash_1.1", "duration", 3, 10},
    };
    for (const char* model :
         {"aleph2", "seedance2", "seedance2_fast", "seedance2_mini", "seedance2_5"}) {
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
    for (const char* model :
         {"seedance2", "seedance2_fast", "seedance2_mini", "seedance2_5", "omni_flash_1.1"}) {
        EXPECT_THAT(Check(With(Minimal(model), "duration", "auto")), IsEmpty()) << model;
        EXPECT_EQ(One(With(Minimal(model), "duration", "auto ")),
                  (Issue{"invalid_enum_value",
                         {"duration"},
                         "Invalid enum value. Expected 'auto', received 'auto '"}));
    }
    EXPECT_EQ(One(With(Minimal("hailuo3"), "duration", "auto")),
              (Issue{"invalid_type", {"duration"}, "Expected number, received string"}));
}

struct StringBound {
    std::string model;
    std::string field;
    std::size_t max;
};

TEST_F(VideoToVideoTest, StringBounds) {
    const std::vector<StringBound> rows = {
        {"aleph2", "promptText", 1000},         {"aleph2", "ratio", 32},
        {"hailuo3", "promptText", 6000},        {"seedance2", "promptText", 3500},
        {"seedance2_fast", "promptText", 3500}, {"seedance2_mini", "promptText", 3500},
        {"omni_flash", "promptText", 4000},     {"seedance2_5", "promptText", 15000},
        {"omni_flash_1.1", "promptText", 4000},
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
        EXPECT_EQ(One(With(base, row.field, "")),
                  (Issue{"too_small", path, "String must contain at least 1 character(s)"}))
            << row.model;
        EXPECT_EQ(One(With(base, row.field, true)),
                  (Issue{"invalid_type", path, "Expected string, received boolean"}));
    }
}

// SPEC.md gives aleph2's ratio no enumeration: any string of 1-32 characters, as the official
// client's tests send ("ratio").
TEST_F(VideoToVideoTest, Aleph2RatioIsAFreeString) {
    for (const char* ratio : {"ratio", "16:9", "1280:720", "adaptive", "x"}) {
        EXPECT_THAT(Check(With(Minimal("aleph2"), "ratio", ratio)), IsEmpty()) << ratio;
    }
    std::string emoji;
    for (int i = 0; i < 16; ++i) emoji += "\xF0\x9F\x98\x80";
    EXPECT_THAT(Check(With(Minimal("aleph2"), "ratio", emoji)), IsEmpty());
    EXPECT_EQ(One(With(Minimal("aleph2"), "ratio", emoji + "a")),
              (Issue{"too_big", {"ratio"}, "String must contain at most 32 character(s)"}));
}

struct ArrayBound {
    std::string model;
    std::string field;
    json item;
    std::size_t max;
};

TEST_F(VideoToVideoTest, ArrayBounds) {
    const std::vector<ArrayBound> rows = {
        {"aleph2", "keyframes", AtSeconds(2), 5},
        {"hailuo3", "references", RefImage(), 9},
        {"hailuo3", "referenceVideos", VideoRef(), 2},
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
        {"omni_flash", "references", RefImage(), 5},
        {"seedance2_5", "references", RefImage(), 30},
        {"seedance2_5", "referenceVideos", VideoRef(), 9},
        {"seedance2_5", "referenceAudio", AudioRef(), 10},
        {"omni_flash_1.1", "references", RefImage(), 5},
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
        if (row.field == "keyframes") {
            EXPECT_EQ(One(With(base, row.field, json::array())),
                      (Issue{"too_small", path, "Array must contain at least 1 element(s)"}));
        } else {
            EXPECT_THAT(Check(With(base, row.field, json::array())), IsEmpty()) << row.model;
        }
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

TEST_F(VideoToVideoTest, Enumerations) {
    const json hailuo_refs = With(Minimal("hailuo3"), "references", json::array({RefImage()}));
    const std::vector<EnumField> rows = {
        {Minimal("aleph2"),
         "targetAspectRatio",
         {"16:9", "4:3", "3:2", "1:1", "2:3", "3:4", "9:16", "21:9"}},
        {Minimal("aleph2"), "outputFormat", {"mp4", "prores", "png_sequence", "sdr_rec709_10bit"}},
        {hailuo_refs, "ratio", {"adaptive", "21:9", "16:9", "4:3", "1:1", "3:4", "9:16"}},
        {Minimal("hailuo3"), "resolution", {"768p", "2k", "768P", "2K"}},
        {Minimal("seedance2"), "ratio", S24()},
        {Minimal("seedance2_fast"), "ratio", kS12},
        {Minimal("seedance2_mini"), "ratio", kS12},
        {Minimal("seedance2_5"), "ratio", kS25},
        {With(Minimal("seedance2_5"), "promptText", "x"), "mode", {"reference", "extend", "edit"}},
        {Minimal("omni_flash_1.1"),
         "ratio",
         {"640:360", "360:640", "1280:720", "720:1280", "1920:1080", "1080:1920", "3840:2160",
          "2160:3840"}},
        {Minimal("omni_flash_1.1"), "mode", {"reference", "extend", "edit"}},
    };
    for (const EnumField& row : rows) {
        const std::string model = row.base["model"];
        for (const std::string& value : row.values) {
            EXPECT_THAT(Check(With(row.base, row.field, value)), IsEmpty())
                << model << " " << row.field << " " << value;
        }
        EXPECT_EQ(
            One(With(row.base, row.field, "hdr10")),
            (Issue{"invalid_enum_value",
                   {row.field},
                   "Invalid enum value. Expected " + Join(row.values) + ", received 'hdr10'"}))
            << model << " " << row.field;
        EXPECT_EQ(
            One(With(row.base, row.field, 1.5)),
            (Issue{
                "invalid_type", {row.field}, "Expected " + Join(row.values) + ", received number"}))
            << model << " " << row.field;
    }
}

TEST_F(VideoToVideoTest, MediaKinds) {
    EXPECT_EQ(One(With(Minimal("aleph2"), "videoUri", "data:image/png;base64,AAAA")),
              (Issue{"invalid_string", {"videoUri"}, "Unsupported asset type"}));
    EXPECT_THAT(Check(With(Minimal("aleph2"), "videoUri", "data:video/webm;base64,AAAA")),
                IsEmpty());
    EXPECT_EQ(One(With(Minimal("seedance2"), "promptVideo", "http://example.com/a.mp4")),
              (Issue{"invalid_string", {"promptVideo"}, "Only HTTPS URLs are allowed"}));
    EXPECT_EQ(One(With(Minimal("omni_flash"), "videoUri", json::array({kVideo}))),
              (Issue{"invalid_type", {"videoUri"}, "Expected string, received array"}));
    // A video data URI may be up to 16 MiB decoded: 16 MiB passes, one byte more does not.
    const std::string header = "data:video/mp4;base64,";
    std::string data(22369620, 'A');  // 5592405 quads = 16777215 bytes
    data += "AA==";                   // one more byte: 16 MiB exactly
    EXPECT_THAT(Check(With(Minimal("hailuo3"), "promptVideo", header + data)), IsEmpty());
    data.replace(data.size() - 4, 4, "AAA=");  // two bytes: one over
    EXPECT_EQ(One(With(Minimal("hailuo3"), "promptVideo", header + data)),
              (Issue{"too_big", {"promptVideo"}, "Asset size exceeds the maximum for the type"}));
}

TEST_F(VideoToVideoTest, Aleph2KeyframeForms) {
    const json base = Minimal("aleph2");
    auto with = [&](json keyframes) {
        return Check(With(base, "keyframes", std::move(keyframes)));
    };
    EXPECT_THAT(with(json::array({AtSeconds(0), AtSeconds(30), AtSeconds(12.25)})), IsEmpty());
    EXPECT_THAT(with(json::array({AtFraction(0), AtFraction(1), AtFraction(0.33)})), IsEmpty());
    EXPECT_THAT(with(json::array({AtSeconds(3), AtFraction(0.9)})), IsEmpty());  // mixed forms
    const Path seconds = {"keyframes", "0", "seconds"};
    const Path at = {"keyframes", "0", "at"};
    EXPECT_EQ(with(json::array({AtSeconds(30.5)})),
              (Issues{{"too_big", seconds, "Number must be less than or equal to 30"}}));
    EXPECT_EQ(with(json::array({AtSeconds(-0.5)})),
              (Issues{{"too_small", seconds, "Number must be greater than or equal to 0"}}));
    EXPECT_EQ(with(json::array({AtFraction(1.01)})),
              (Issues{{"too_big", at, "Number must be less than or equal to 1"}}));
    EXPECT_EQ(with(json::array({AtFraction(-0.01)})),
              (Issues{{"too_small", at, "Number must be greater than or equal to 0"}}));
    // Neither time: the first form's issue is reported (zod's union on a tie).
    EXPECT_EQ(with(json::array({RefImage()})), (Issues{{"invalid_type", seconds, "Required"}}));
    json both = AtSeconds(2);
    both["at"] = 0.5;
    EXPECT_EQ(
        with(json::array({both})),
        (Issues{{"unrecognized_keys", {"keyframes", "0"}, "Unrecognized key(s) in object: 'at'"}}));
    EXPECT_EQ(with(json::array({{{"uri", kImage}, {"seconds", "2"}}})),
              (Issues{{"invalid_type", seconds, "Expected number, received string"}}));
    EXPECT_EQ(with(json::array({{{"uri", kVideo}, {"seconds", 2}}})).size(), 0u);  // a URL is a URL
    EXPECT_EQ(with(json::array({{{"uri", "data:video/mp4;base64,AAAA"}, {"seconds", 2}}})),
              (Issues{{"invalid_string", {"keyframes", "0", "uri"}, "Unsupported asset type"}}));
    EXPECT_EQ(with(json::array({"https://example.com/a.png"})),
              (Issues{{"invalid_type", {"keyframes", "0"}, "Expected object, received string"}}));
}

TEST_F(VideoToVideoTest, Aleph2Ranges) {
    const json base = Minimal("aleph2");
    auto with = [&](json keyframes) {
        return Check(With(base, "keyframes", std::move(keyframes)));
    };
    const Issue all_or_none =
        Custom({"keyframes"}, "Either every keyframe has a range or none does");
    const std::string outside =
        "The keyframe time must lie inside its range (start_seconds inclusive, end_seconds "
        "exclusive)";
    // All or none.
    EXPECT_THAT(
        with(json::array({WithRange(AtSeconds(1), 0, 2), WithRange(AtFraction(0.5), 2, 4)})),
        IsEmpty());
    EXPECT_EQ(with(json::array({WithRange(AtSeconds(1), 0, 2), AtSeconds(3)})),
              Issues{all_or_none});
    EXPECT_EQ(with(json::array({AtFraction(0.1), WithRange(AtFraction(0.5), 2, 4)})),
              Issues{all_or_none});
    // The time lies inside its range: start inclusive, end exclusive.
    EXPECT_THAT(with(json::array({WithRange(AtSeconds(2), 2, 5)})), IsEmpty());
    EXPECT_THAT(with(json::array({WithRange(AtSeconds(4.99), 2, 5)})), IsEmpty());
    EXPECT_EQ(with(json::array({WithRange(AtSeconds(5), 2, 5)})),
              Issues{Custom({"keyframes", "0", "seconds"}, outside)});
    EXPECT_EQ(with(json::array({WithRange(AtSeconds(1.99), 2, 5)})),
              Issues{Custom({"keyframes", "0", "seconds"}, outside)});
    // The client's test literal: end_seconds 1 is the smallest end.
    EXPECT_THAT(with(json::array({WithRange(AtSeconds(0), 0, 1)})), IsEmpty());
    // Range bounds.
    const Path range = {"keyframes", "0", "range"};
    EXPECT_EQ(with(json::array({WithRange(AtFraction(0.5), -1, 3)})),
              (Issues{{"too_small",
                       {"keyframes", "0", "range", "start_seconds"},
                       "Number must be greater than or equal to 0"}}));
    EXPECT_EQ(with(json::array({WithRange(AtFraction(0.5), 0, 0)})),
              (Issues{{"too_small",
                       {"keyframes", "0", "range", "end_seconds"},
                       "Number must be greater than 0"}}));
    EXPECT_EQ(with(json::array({WithRange(AtFraction(0.5), 4, 4)})),
              Issues{Custom({"keyframes", "0", "range", "end_seconds"},
                            "end_seconds must be greater than start_seconds")});
    // An empty range is one issue: the time-inside rule does not pile on.
    EXPECT_EQ(with(json::array({WithRange(AtSeconds(4), 5, 3)})),
              Issues{Custom({"keyframes", "0", "range", "end_seconds"},
                            "end_seconds must be greater than start_seconds")});
    json half = AtSeconds(1);
    half["range"] = {{"start_seconds", 0}};
    EXPECT_EQ(with(json::array({half})),
              (Issues{{"invalid_type", {"keyframes", "0", "range", "end_seconds"}, "Required"}}));
    half["range"] = {{"start_seconds", 0}, {"end_seconds", 2.5}};
    EXPECT_EQ(with(json::array({half})), (Issues{{"invalid_type",
                                                  {"keyframes", "0", "range", "end_seconds"},
                                                  "Expected integer, received float"}}));
    half["range"] = {{"start_seconds", 0}, {"end_seconds", 2}, {"fps", 24}};
    EXPECT_EQ(with(json::array({half})),
              (Issues{{"unrecognized_keys", range, "Unrecognized key(s) in object: 'fps'"}}));
    // A fraction cannot be checked against seconds until the input's length is known.
    EXPECT_THAT(with(json::array({WithRange(AtFraction(0.99), 0, 1)})), IsEmpty());
}

TEST_F(VideoToVideoTest, Aleph2ProresProfile) {
    const json base = Minimal("aleph2");
    const Issue only_prores =
        Custom({"proresProfile"}, "proresProfile is only valid with outputFormat prores");
    EXPECT_EQ(Check(With(base, "proresProfile", "4444")), Issues{only_prores});
    EXPECT_EQ(Check(With(With(base, "outputFormat", "png_sequence"), "proresProfile", "422")),
              Issues{only_prores});
    for (const char* profile : {"422", "4444", "422 Proxy", "422 LT", "422 HQ", "4444 XQ"}) {
        EXPECT_THAT(Check(With(With(base, "outputFormat", "prores"), "proresProfile", profile)),
                    IsEmpty());
    }
    EXPECT_EQ(One(With(With(base, "outputFormat", "prores"), "proresProfile", "4444 HQ")).code,
              "invalid_enum_value");
    EXPECT_EQ(One(With(base, "outputFormat", "hdr_prores")).code, "invalid_enum_value");
}

TEST_F(VideoToVideoTest, HailuoAdaptiveRatioNeedsReferences) {
    const Issue needs_refs = Custom({"ratio"}, "ratio adaptive requires image or video references");
    const json adaptive = With(Minimal("hailuo3"), "ratio", "adaptive");
    EXPECT_EQ(Check(adaptive), Issues{needs_refs});  // the input video is not a reference
    EXPECT_THAT(Check(With(adaptive, "references", json::array({RefImage()}))), IsEmpty());
    EXPECT_THAT(Check(With(adaptive, "referenceVideos", json::array({VideoRef()}))), IsEmpty());
    EXPECT_EQ(Check(With(adaptive, "referenceVideos", json::array())), Issues{needs_refs});
}

TEST_F(VideoToVideoTest, ReferenceAudioNeedsPromptText) {
    const Issue needs_text = Custom({"referenceAudio"}, "referenceAudio requires promptText");
    for (const char* model : {"seedance2", "seedance2_fast", "seedance2_mini", "seedance2_5"}) {
        const json full = Full(model);
        EXPECT_EQ(Check(Without(full, "promptText")), Issues{needs_text}) << model;
        EXPECT_THAT(Check(With(Without(full, "promptText"), "referenceAudio", json::array())),
                    IsEmpty());
    }
}

TEST_F(VideoToVideoTest, Seedance25Modes) {
    const json base = Minimal("seedance2_5");
    auto mode = [&](const char* m) { return With(base, "mode", m); };
    EXPECT_EQ(Check(mode("extend")),
              Issues{Custom({"promptText"}, "mode extend requires promptText")});
    EXPECT_THAT(Check(With(mode("extend"), "promptText", "keep walking")), IsEmpty());
    EXPECT_THAT(Check(mode("edit")), IsEmpty());
    EXPECT_THAT(Check(mode("reference")), IsEmpty());
    const Issue ratio_only_reference =
        Custom({"ratio"}, "ratio is only accepted with mode reference");
    const Issue no_duration_in_edit =
        Custom({"duration"},
               "duration is not accepted with mode edit: the output is as long as the input");
    EXPECT_EQ(Check(With(mode("edit"), "ratio", "1280:720")), Issues{ratio_only_reference});
    EXPECT_EQ(Check(With(With(mode("extend"), "promptText", "go"), "ratio", "1280:720")),
              Issues{ratio_only_reference});
    EXPECT_THAT(Check(With(mode("reference"), "ratio", "1280:720")), IsEmpty());
    EXPECT_THAT(Check(With(base, "ratio", "1280:720")), IsEmpty());  // reference by default
    EXPECT_EQ(Check(With(mode("edit"), "duration", 5)), Issues{no_duration_in_edit});
    EXPECT_EQ(Check(With(mode("edit"), "duration", "auto")), Issues{no_duration_in_edit});
    EXPECT_THAT(Check(With(With(mode("extend"), "promptText", "go"), "duration", 8)), IsEmpty());
    EXPECT_THAT(Check(With(mode("reference"), "duration", "auto")), IsEmpty());
    // Everything wrong at once, in rule order.
    json all = With(With(mode("extend"), "ratio", "1280:720"), "referenceAudio",
                    json::array({AudioRef()}));
    EXPECT_EQ(
        Check(all),
        (Issues{Custom({"promptText"}, "mode extend requires promptText"), ratio_only_reference,
                Custom({"referenceAudio"}, "referenceAudio requires promptText")}));
    // A bad mode: the mode rules are skipped.
    EXPECT_EQ(Check(With(With(base, "mode", "remix"), "ratio", "1280:720")),
              (Issues{{"invalid_enum_value",
                       {"mode"},
                       "Invalid enum value. Expected 'reference' | 'extend' | 'edit', received "
                       "'remix'"}}));
}

TEST_F(VideoToVideoTest, AllIssuesAtOnceInOrder) {
    const json body = {
        {"model", "aleph2"},
        {"promptText", ""},
        {"keyframes", json::array({WithRange(AtSeconds(9), 0, 5), AtFraction(2)})},
        {"targetAspectRatio", "5:4"},
        {"outputFormat", "mp4"},
        {"proresProfile", "422"},
        {"zz", 0},
    };
    EXPECT_EQ(Check(body),
              (Issues{
                  {"invalid_type", {"videoUri"}, "Required"},
                  {"too_small", {"promptText"}, "String must contain at least 1 character(s)"},
                  Custom({"keyframes", "0", "seconds"},
                         "The keyframe time must lie inside its range (start_seconds "
                         "inclusive, end_seconds exclusive)"),
                  {"too_big", {"keyframes", "1", "at"}, "Number must be less than or equal to 1"},
                  {"invalid_enum_value",
                   {"targetAspectRatio"},
                   "Invalid enum value. Expected '16:9' | '4:3' | '3:2' | '1:1' | '2:3' | '3:4' | "
                   "'9:16' | '21:9', received '5:4'"},
                  {"unrecognized_keys", {}, "Unrecognized key(s) in object: 'zz'"},
                  Custom({"keyframes"}, "Either every keyframe has a range or none does"),
                  Custom({"proresProfile"}, "proresProfile is only valid with outputFormat prores"),
              }));
}

TEST_F(VideoToVideoTest, Defaults) {
    const auto set = RepoSchemas();
    auto filled = [&](const json& body) { return set->ApplyDefaults(kEndpoint, body); };
    EXPECT_EQ(filled(Minimal("aleph2"))["outputFormat"], "mp4");
    EXPECT_FALSE(filled(Minimal("aleph2")).contains("proresProfile"));
    EXPECT_EQ(filled(With(Minimal("aleph2"), "outputFormat", "prores"))["proresProfile"], "4444");
    for (const char* model : {"seedance2", "seedance2_fast", "seedance2_mini", "seedance2_5"}) {
        EXPECT_EQ(filled(Minimal(model))["audio"], true) << model;
    }
    const json seedance = filled(Minimal("seedance2_5"));
    EXPECT_EQ(seedance["mode"], "reference");
    EXPECT_EQ(seedance["duration"], 5);
    const json extend =
        filled(With(With(Minimal("seedance2_5"), "mode", "extend"), "promptText", "go"));
    EXPECT_EQ(extend["duration"], 5);
    const json edit = filled(With(Minimal("seedance2_5"), "mode", "edit"));
    EXPECT_FALSE(edit.contains("duration"));
    EXPECT_THAT(Check(edit), IsEmpty());
    EXPECT_EQ(filled(Minimal("omni_flash_1.1"))["mode"], "reference");
    EXPECT_EQ(filled(Minimal("omni_flash")), Minimal("omni_flash"));
    for (const std::string& model : kModels) {
        EXPECT_THAT(Check(filled(Minimal(model))), IsEmpty()) << model;
        EXPECT_THAT(Check(filled(Full(model))), IsEmpty()) << model;
    }
}

}  // namespace
}  // namespace genhost::validate
