// Tests of the x-rules condition language and x-defaults with small inline schema documents
// (plus the real schemas/common.json for its shared rules): each SPEC.md cross-field rule the
// dialect must express, rule order, skipping rules whose paths have structural issues, and the
// compile errors of malformed rules.
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
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string CommonJson() {
    const std::filesystem::path path =
        std::filesystem::path(GENHOST_SOURCE_DIR) / "schemas" / "common.json";
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// EndpointDoc wraps an object schema `root` (its "properties", "x-rules", ...) into an endpoint
// document called "t".
std::string EndpointDoc(json root) {
    json doc = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                {"x-endpoint",
                 {{"name", "t"},
                  {"method", "POST"},
                  {"path", "/v1/t"},
                  {"kind", "generation"},
                  {"summary", "test"}}},
                {"type", "object"},
                {"additionalProperties", false}};
    doc.update(root);
    return doc.dump();
}

std::shared_ptr<const SchemaSet> CompileWithCommon(const std::string& doc) {
    return SchemaSet::Compile({{"schemas/common.json", CommonJson()}, {"schemas/t.json", doc}});
}

// The video-like schema used by most tests: every SPEC.md cross-field rule the brief lists,
// written as data. Property order matters for issue order, so it is written as ordered JSON
// text rather than built with nlohmann::json (which sorts keys).
const char* const kVideoSchema = R"json({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "x-endpoint": {"name": "t", "method": "POST", "path": "/v1/t", "kind": "generation",
                 "summary": "rules test"},
  "type": "object",
  "properties": {
    "promptText": {"type": "string", "maxLength": 100},
    "promptImage": {
      "oneOf": [
        {"$ref": "common.json#/$defs/imageMedia"},
        {"type": "array", "minItems": 1, "maxItems": 5,
         "items": {"type": "object",
                   "properties": {"uri": {"$ref": "common.json#/$defs/imageMedia"},
                                  "position": {"type": "string", "enum": ["first", "last"]}},
                   "required": ["uri"], "additionalProperties": false}}
      ]
    },
    "outputFormat": {"$ref": "common.json#/$defs/outputFormat"},
    "proresProfile": {"$ref": "common.json#/$defs/proresProfile"},
    "ratio": {"type": "string", "enum": ["adaptive", "16:9"]},
    "references": {"type": "array", "maxItems": 9,
                   "items": {"type": "object",
                             "properties": {"uri": {"$ref": "common.json#/$defs/imageMedia"}},
                             "required": ["uri"], "additionalProperties": false}},
    "referenceAudio": {"type": "array", "maxItems": 3,
                       "items": {"$ref": "common.json#/$defs/audioMedia"}},
    "keyframes": {
      "type": "array", "maxItems": 5,
      "items": {
        "type": "object",
        "properties": {
          "uri": {"$ref": "common.json#/$defs/imageMedia"},
          "seconds": {"type": "number", "minimum": 0, "maximum": 30},
          "range": {"type": "object",
                    "properties": {"start_seconds": {"type": "integer", "minimum": 0},
                                   "end_seconds": {"type": "integer", "exclusiveMinimum": 0}},
                    "required": ["start_seconds", "end_seconds"], "additionalProperties": false,
                    "x-rules": [
                      {"require": {"path": ["end_seconds"], "gt": {"path": ["start_seconds"]}},
                       "path": ["end_seconds"],
                       "message": "end_seconds must be after start_seconds"}
                    ]}
        },
        "required": ["uri", "seconds"],
        "additionalProperties": false,
        "x-rules": [
          {"when": {"path": ["range"], "present": true},
           "require": {"allOf": [{"path": ["seconds"], "gte": {"path": ["range", "start_seconds"]}},
                                 {"path": ["seconds"], "lt": {"path": ["range", "end_seconds"]}}]},
           "path": ["seconds"], "message": "The keyframe time must fall inside its range"}
        ]
      }
    },
    "mode": {"type": "string", "enum": ["reference", "extend", "edit"], "default": "reference"},
    "resolution": {"type": "string", "enum": ["480p", "720p", "1080p"]}
  },
  "additionalProperties": false,
  "x-rules": [
    {"$ref": "common.json#/x-shared/rules/gen45ProresProfile"},
    {"when": {"path": ["promptImage", "*", "position"], "any": {"equals": "last"}},
     "require": {"path": ["promptImage", "*", "position"], "any": {"equals": "first"}},
     "path": ["promptImage"], "message": "A last frame needs a first frame"},
    {"require": {"not": {"allOf": [
        {"path": ["promptImage", "*", "position"], "any": {"present": true}},
        {"path": ["promptImage", "*", "position"], "any": {"present": false}}]}},
     "path": ["promptImage"], "message": "Keyframe and reference images cannot be mixed"},
    {"when": {"path": ["ratio"], "equals": "adaptive"},
     "require": {"anyOf": [{"path": ["references", "*"], "count": {"min": 1}},
                           {"path": ["promptImage", "*"], "count": {"min": 1},
                            "where": {"path": ["position"], "present": false}}]},
     "path": ["ratio"], "message": "ratio adaptive needs references"},
    {"when": {"path": ["referenceAudio", "*"], "count": {"min": 1}},
     "require": {"path": ["promptText"], "present": true},
     "path": ["referenceAudio"], "message": "referenceAudio needs promptText"},
    {"require": {"anyOf": [{"path": ["keyframes", "*", "range"], "all": {"present": true}},
                           {"path": ["keyframes", "*", "range"], "all": {"present": false}}]},
     "path": ["keyframes"], "message": "Either every keyframe has a range or none does"},
    {"when": {"path": ["mode"], "equals": "extend"},
     "require": {"path": ["promptText"], "present": true},
     "path": ["promptText"], "message": "mode extend requires promptText"},
    {"when": {"path": ["references", "*"], "count": {"min": 1}},
     "require": {"anyOf": [{"path": ["resolution"], "present": false},
                           {"path": ["resolution"], "in": ["480p", "720p"]}]},
     "path": ["resolution"], "message": "With references the resolution is at most 720p"}
  ],
  "x-defaults": [{"$ref": "common.json#/x-shared/defaults/gen45ProresProfile"}]
})json";

class RulesTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { set_ = CompileWithCommon(kVideoSchema); }
    static void TearDownTestSuite() { set_.reset(); }

    static std::vector<Issue> Check(const json& body) { return set_->Validate("t", body); }
    static std::vector<Issue> Custom(std::vector<std::string> path, std::string message) {
        return {Issue{"custom", std::move(path), std::move(message)}};
    }
    static json Image(const char* position = nullptr) {
        json image = {{"uri", "https://example.com/a.png"}};
        if (position != nullptr) image["position"] = position;
        return image;
    }

    static inline std::shared_ptr<const SchemaSet> set_;
};

const char* const kProresOnly =
    "proresProfile is only valid with outputFormat prores or hdr_prores";
const char* const kHdrProres =
    "With outputFormat hdr_prores, proresProfile must be one of 422, 422 HQ, 4444";

TEST_F(RulesTest, EmptyBodyPasses) { EXPECT_THAT(Check(json::object()), IsEmpty()); }

TEST_F(RulesTest, ProresProfileOnlyWithProres) {
    EXPECT_EQ(Check({{"proresProfile", "4444"}}), Custom({"proresProfile"}, kProresOnly));
    EXPECT_EQ(Check({{"outputFormat", "mp4"}, {"proresProfile", "4444"}}),
              Custom({"proresProfile"}, kProresOnly));
    EXPECT_THAT(Check({{"outputFormat", "prores"}, {"proresProfile", "422 LT"}}), IsEmpty());
    EXPECT_THAT(Check({{"outputFormat", "prores"}}), IsEmpty());
    EXPECT_THAT(Check({{"outputFormat", "mp4"}}), IsEmpty());
}

TEST_F(RulesTest, HdrProresProfiles) {
    for (const char* ok : {"422", "422 HQ", "4444"}) {
        EXPECT_THAT(Check({{"outputFormat", "hdr_prores"}, {"proresProfile", ok}}), IsEmpty())
            << ok;
    }
    for (const char* bad : {"422 LT", "422 Proxy", "4444 XQ"}) {
        EXPECT_EQ(Check({{"outputFormat", "hdr_prores"}, {"proresProfile", bad}}),
                  Custom({"proresProfile"}, kHdrProres))
            << bad;
    }
}

TEST_F(RulesTest, StructuralIssueOnAReadPathSkipsTheRule) {
    // proresProfile is not in its enum: the enum issue alone, the prores rules do not run.
    EXPECT_EQ(Check({{"outputFormat", "mp4"}, {"proresProfile", "8888"}}),
              (std::vector<Issue>{{"invalid_enum_value",
                                   {"proresProfile"},
                                   "Invalid enum value. Expected '422' | '4444' | '422 Proxy' | "
                                   "'422 LT' | '422 HQ' | '4444 XQ', received '8888'"}}));
    // outputFormat is broken: same.
    EXPECT_EQ(Check({{"outputFormat", 5}, {"proresProfile", "4444"}}).size(), 1u);
    // A broken field the rule does not read does not stop it.
    EXPECT_EQ(
        Check({{"ratio", "1:1"}, {"proresProfile", "4444"}}),
        (std::vector<Issue>{{"invalid_enum_value",
                             {"ratio"},
                             "Invalid enum value. Expected 'adaptive' | '16:9', received '1:1'"},
                            {"custom", {"proresProfile"}, kProresOnly}}));
}

TEST_F(RulesTest, LastFrameNeedsFirstFrame) {
    EXPECT_EQ(Check({{"promptImage", json::array({Image("last")})}}),
              Custom({"promptImage"}, "A last frame needs a first frame"));
    EXPECT_THAT(Check({{"promptImage", json::array({Image("first")})}}), IsEmpty());
    EXPECT_THAT(Check({{"promptImage", json::array({Image("last"), Image("first")})}}), IsEmpty());
    EXPECT_THAT(Check({{"promptImage", "https://example.com/a.png"}}), IsEmpty());
}

TEST_F(RulesTest, KeyframeAndReferenceModesCannotBeMixed) {
    EXPECT_EQ(Check({{"promptImage", json::array({Image("first"), Image()})}}),
              Custom({"promptImage"}, "Keyframe and reference images cannot be mixed"));
    EXPECT_THAT(Check({{"promptImage", json::array({Image(), Image()})}}), IsEmpty());
    EXPECT_THAT(Check({{"promptImage", json::array({Image("first"), Image("last")})}}), IsEmpty());
    // Both rules fire, in declaration order.
    EXPECT_EQ(Check({{"promptImage", json::array({Image(), Image("last")})}}),
              (std::vector<Issue>{
                  {"custom", {"promptImage"}, "A last frame needs a first frame"},
                  {"custom", {"promptImage"}, "Keyframe and reference images cannot be mixed"}}));
}

TEST_F(RulesTest, WildcardRulesSkipWhenAnItemIsBroken) {
    // The bad position is reported once; rules reading positions are skipped.
    EXPECT_EQ(
        Check({{"promptImage", json::array({Image("middle"), Image()})}}),
        (std::vector<Issue>{{"invalid_enum_value",
                             {"promptImage", "0", "position"},
                             "Invalid enum value. Expected 'first' | 'last', received 'middle'"}}));
    // A bad uri is not a position: the mixing rule still runs.
    json images = json::array({Image("first"), Image()});
    images[1]["uri"] = "http://example.com/a.png";
    EXPECT_EQ(Check({{"promptImage", images}}),
              (std::vector<Issue>{
                  {"invalid_string", {"promptImage", "1", "uri"}, "Only HTTPS URLs are allowed"},
                  {"custom", {"promptImage"}, "Keyframe and reference images cannot be mixed"}}));
}

TEST_F(RulesTest, AdaptiveRatioNeedsReferences) {
    EXPECT_EQ(Check({{"ratio", "adaptive"}}), Custom({"ratio"}, "ratio adaptive needs references"));
    EXPECT_EQ(Check({{"ratio", "adaptive"}, {"references", json::array()}}),
              Custom({"ratio"}, "ratio adaptive needs references"));
    EXPECT_THAT(Check({{"ratio", "adaptive"}, {"references", json::array({Image()})}}), IsEmpty());
    EXPECT_THAT(Check({{"ratio", "adaptive"}, {"promptImage", json::array({Image()})}}), IsEmpty());
    // A keyframe image is not a reference.
    EXPECT_EQ(Check({{"ratio", "adaptive"}, {"promptImage", json::array({Image("first")})}}),
              Custom({"ratio"}, "ratio adaptive needs references"));
    EXPECT_THAT(Check({{"ratio", "16:9"}}), IsEmpty());
}

TEST_F(RulesTest, ReferenceAudioNeedsPromptText) {
    const json audio = json::array({"https://example.com/a.mp3"});
    EXPECT_EQ(Check({{"referenceAudio", audio}}),
              Custom({"referenceAudio"}, "referenceAudio needs promptText"));
    EXPECT_THAT(Check({{"referenceAudio", audio}, {"promptText", "sing"}}), IsEmpty());
    EXPECT_THAT(Check({{"referenceAudio", json::array()}}), IsEmpty());
    // A null promptText is a structural issue of the path the rule reads: the rule is skipped.
    EXPECT_EQ(
        Check({{"referenceAudio", audio}, {"promptText", nullptr}}),
        (std::vector<Issue>{{"invalid_type", {"promptText"}, "Expected string, received null"}}));
}

TEST_F(RulesTest, EveryKeyframeHasARangeOrNone) {
    const json ranged = {{"uri", "https://example.com/k.png"},
                         {"seconds", 2},
                         {"range", {{"start_seconds", 1}, {"end_seconds", 4}}}};
    const json plain = {{"uri", "https://example.com/k.png"}, {"seconds", 2}};
    EXPECT_THAT(Check({{"keyframes", json::array({ranged, ranged})}}), IsEmpty());
    EXPECT_THAT(Check({{"keyframes", json::array({plain, plain})}}), IsEmpty());
    EXPECT_THAT(Check({{"keyframes", json::array()}}), IsEmpty());
    EXPECT_EQ(Check({{"keyframes", json::array({ranged, plain})}}),
              Custom({"keyframes"}, "Either every keyframe has a range or none does"));
}

TEST_F(RulesTest, RulesOnArrayItemsAndNestedObjects) {
    json keyframe = {{"uri", "https://example.com/k.png"},
                     {"seconds", 5},
                     {"range", {{"start_seconds", 1}, {"end_seconds", 4}}}};
    EXPECT_EQ(
        Check({{"keyframes", json::array({keyframe})}}),
        Custom({"keyframes", "0", "seconds"}, "The keyframe time must fall inside its range"));
    keyframe["seconds"] = 4;  // end is exclusive
    EXPECT_EQ(
        Check({{"keyframes", json::array({keyframe})}}),
        Custom({"keyframes", "0", "seconds"}, "The keyframe time must fall inside its range"));
    keyframe["seconds"] = 1;
    EXPECT_THAT(Check({{"keyframes", json::array({keyframe})}}), IsEmpty());
    // Nested object rule first (it belongs to range, walked before the item's own rules).
    keyframe["range"] = {{"start_seconds", 3}, {"end_seconds", 2}};
    keyframe["seconds"] = 2.5;
    EXPECT_EQ(Check({{"keyframes", json::array({keyframe})}}),
              (std::vector<Issue>{{"custom",
                                   {"keyframes", "0", "range", "end_seconds"},
                                   "end_seconds must be after start_seconds"},
                                  {"custom",
                                   {"keyframes", "0", "seconds"},
                                   "The keyframe time must fall inside its range"}}));
    // A structural issue inside range (a float) skips the item rule that reads it.
    keyframe["range"] = {{"start_seconds", 0.5}, {"end_seconds", 2}};
    keyframe["seconds"] = 1;
    EXPECT_EQ(Check({{"keyframes", json::array({keyframe})}}),
              (std::vector<Issue>{{"invalid_type",
                                   {"keyframes", "0", "range", "start_seconds"},
                                   "Expected integer, received float"}}));
}

TEST_F(RulesTest, ModeExtendRequiresPromptText) {
    EXPECT_EQ(Check({{"mode", "extend"}}),
              Custom({"promptText"}, "mode extend requires promptText"));
    EXPECT_THAT(Check({{"mode", "extend"}, {"promptText", "continue"}}), IsEmpty());
    EXPECT_THAT(Check({{"mode", "edit"}}), IsEmpty());
}

TEST_F(RulesTest, ResolutionCappedWithReferences) {
    const json refs = json::array({Image()});
    EXPECT_EQ(Check({{"references", refs}, {"resolution", "1080p"}}),
              Custom({"resolution"}, "With references the resolution is at most 720p"));
    EXPECT_THAT(Check({{"references", refs}, {"resolution", "720p"}}), IsEmpty());
    EXPECT_THAT(Check({{"references", refs}}), IsEmpty());
    EXPECT_THAT(Check({{"resolution", "1080p"}}), IsEmpty());
}

TEST_F(RulesTest, RulesComeAfterPropertiesAndUnknownKeys) {
    const json body = {{"zz", 1},
                       {"promptText", std::string(101, 'a')},
                       {"mode", "extend"},
                       {"ratio", "adaptive"},
                       {"proresProfile", "4444"}};
    EXPECT_EQ(Check(body),
              (std::vector<Issue>{
                  {"too_big", {"promptText"}, "String must contain at most 100 character(s)"},
                  {"unrecognized_keys", {}, "Unrecognized key(s) in object: 'zz'"},
                  {"custom", {"proresProfile"}, kProresOnly},
                  {"custom", {"ratio"}, "ratio adaptive needs references"},
              }));
    // (mode extend's rule read promptText, which has a structural issue: skipped.)
}

TEST_F(RulesTest, ConditionalAndPlainDefaults) {
    EXPECT_EQ(set_->ApplyDefaults("t", {{"outputFormat", "prores"}}),
              (json{{"outputFormat", "prores"}, {"proresProfile", "4444"}, {"mode", "reference"}}));
    EXPECT_EQ(set_->ApplyDefaults("t", {{"outputFormat", "prores"}, {"proresProfile", "422"}}),
              (json{{"outputFormat", "prores"}, {"proresProfile", "422"}, {"mode", "reference"}}));
    EXPECT_EQ(set_->ApplyDefaults("t", {{"outputFormat", "hdr_prores"}}),
              (json{{"outputFormat", "hdr_prores"}, {"mode", "reference"}}));
    EXPECT_EQ(set_->ApplyDefaults("t", json::object()), (json{{"mode", "reference"}}));
    EXPECT_EQ(set_->ApplyDefaults("t", {{"mode", "edit"}}), (json{{"mode", "edit"}}));
}

// Operators not exercised above, on a tiny schema.
TEST(RulesOperators, CountWhereCompareIndexAndNot) {
    const auto set = CompileWithCommon(R"json({
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "x-endpoint": {"name": "t", "method": "POST", "path": "/v1/t", "kind": "generation",
                     "summary": "s"},
      "type": "object",
      "properties": {
        "images": {"type": "array", "maxItems": 9,
                   "items": {"type": "object",
                             "properties": {"role": {"type": "string",
                                                     "enum": ["first", "last", "reference"]}},
                             "additionalProperties": false}},
        "duration": {"type": "number"},
        "audio": {"type": "boolean"}
      },
      "additionalProperties": false,
      "x-rules": [
        {"require": {"path": ["images", "*"], "count": {"max": 1},
                     "where": {"path": ["role"], "equals": "first"}},
         "path": ["images"], "message": "at most one first"},
        {"when": {"path": ["audio"], "equals": true}, "require": {"path": ["duration"], "lte": 10},
         "path": ["duration"], "message": "audio up to 10 s"},
        {"require": {"not": {"path": ["images", "0", "role"], "equals": "last"}},
         "path": ["images", "0"], "message": "the first image cannot be last"}
      ]
    })json");
    auto check = [&set](const json& body) { return set->Validate("t", body); };
    const json first = {{"role", "first"}};
    EXPECT_THAT(check({{"images", json::array({first, {{"role", "last"}}})}}), IsEmpty());
    EXPECT_EQ(check({{"images", json::array({first, first})}}),
              (std::vector<Issue>{{"custom", {"images"}, "at most one first"}}));
    EXPECT_THAT(check({{"audio", true}, {"duration", 10}}), IsEmpty());
    EXPECT_EQ(check({{"audio", true}, {"duration", 10.5}}),
              (std::vector<Issue>{{"custom", {"duration"}, "audio up to 10 s"}}));
    // Comparing an absent value is false: the rule fails when audio is on and duration missing.
    EXPECT_EQ(check({{"audio", true}}),
              (std::vector<Issue>{{"custom", {"duration"}, "audio up to 10 s"}}));
    EXPECT_THAT(check({{"audio", false}, {"duration", 99}}), IsEmpty());
    EXPECT_EQ(check({{"images", json::array({{{"role", "last"}}})}}),
              (std::vector<Issue>{{"custom", {"images", "0"}, "the first image cannot be last"}}));
}

std::string CompileError(const json& root) {
    try {
        CompileWithCommon(EndpointDoc(root));
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

TEST(RulesCompile, MalformedRulesAreRejectedWithTheirLocation) {
    const json props = {
        {"a", {{"type", "string"}, {"maxLength", 5}}},
        {"list", {{"type", "array"}, {"items", {{"type", "string"}, {"maxLength", 5}}}}}};
    auto with_rule = [&props](const json& rule) {
        return CompileError({{"properties", props}, {"x-rules", json::array({rule})}});
    };
    EXPECT_EQ(with_rule({{"require", {{"path", {"a"}}, {"present", true}}}, {"message", "m"}}), "");
    EXPECT_THAT(with_rule({{"require", {{"path", {"a"}}, {"exists", true}}}, {"message", "m"}}),
                HasSubstr("schemas/t.json#/x-rules/0/require: unknown condition key \"exists\""));
    EXPECT_THAT(with_rule({{"require", {{"path", {"a"}}, {"present", true}}}}),
                HasSubstr("needs a non-empty string \"message\""));
    EXPECT_THAT(with_rule({{"message", "m"}}), HasSubstr("a rule needs \"require\""));
    EXPECT_THAT(with_rule({{"require", {{"path", {"b"}}, {"present", true}}}, {"message", "m"}}),
                HasSubstr("path starts with \"b\", which is not a property"));
    EXPECT_THAT(
        with_rule({{"require", {{"path", {"list", "*"}}, {"equals", "x"}}}, {"message", "m"}}),
        HasSubstr("a path with \"*\" needs count, any or all"));
    EXPECT_THAT(with_rule({{"require", {{"path", {"a"}}, {"present", true}, {"equals", 1}}},
                           {"message", "m"}}),
                HasSubstr("exactly one operator"));
    EXPECT_THAT(with_rule({{"require", {{"allOf", json::array()}}}, {"message", "m"}}),
                HasSubstr("must be a non-empty array of conditions"));
    EXPECT_THAT(with_rule({{"require", {{"path", {"a"}}, {"gt", "x"}}}, {"message", "m"}}),
                HasSubstr("must be a number or {\"path\": [...]}"));
    EXPECT_THAT(with_rule({{"require", {{"path", {"list", "*"}}, {"count", {{"least", 1}}}}},
                           {"message", "m"}}),
                HasSubstr("unknown count bound \"least\""));
    EXPECT_THAT(with_rule({{"require", {{"path", {"a"}}, {"present", true}}},
                           {"message", "m"},
                           {"severity", "high"}}),
                HasSubstr("unknown rule key \"severity\""));
    EXPECT_THAT(with_rule({{"$ref", "common.json#/x-shared/rules/nothing"}}),
                HasSubstr("nothing at schemas/common.json#/x-shared/rules/nothing"));
    // The shared prores rules read properties this object does not have.
    EXPECT_THAT(with_rule({{"$ref", "common.json#/x-shared/rules/gen45ProresProfile"}}),
                HasSubstr("path starts with \"proresProfile\""));
}

TEST(RulesCompile, ConditionalDefaultsAreChecked) {
    const json props = {{"format", {{"type", "string"}, {"enum", {"a", "b"}}}},
                        {"level", {{"type", "integer"}, {"maximum", 3}}}};
    auto with_default = [&props](const json& entry) {
        return CompileError({{"properties", props}, {"x-defaults", json::array({entry})}});
    };
    EXPECT_EQ(with_default({{"when", {{"path", {"format"}}, {"equals", "a"}}},
                            {"property", "level"},
                            {"value", 2}}),
              "");
    EXPECT_THAT(
        with_default({{"property", "level"}, {"value", 9}}),
        HasSubstr(
            "/x-defaults/0/value: does not validate: Number must be less than or equal to 3"));
    EXPECT_THAT(with_default({{"property", "nope"}, {"value", 1}}),
                HasSubstr("property \"nope\" is not declared"));
    EXPECT_THAT(with_default({{"property", "level"}}), HasSubstr("needs \"value\""));
}

}  // namespace
}  // namespace genhost::validate
