// Semantics of the price-rule language (docs/catalog.md), each construct on a small inline
// catalog: minimums, conditions, multipliers, steps, counts, modifiers, per-endpoint overrides,
// probed facts and the fall-backs to the most a task may cost.
#include "genhost/catalog/catalog.hpp"

#include <gtest/gtest.h>

#include <string>

namespace genhost::catalog {
namespace {

using nlohmann::json;

constexpr std::string_view kTiers = R"({"tiers": [{"tier": 1, "max_concurrent_generations": 1,
  "max_daily_generations": 50, "max_monthly_spend_usd": 100}]})";

// OneModel loads a catalog holding model "m" with `price` and `capabilities` on `endpoints`.
std::shared_ptr<const Catalog> OneModel(const json& price, const json& capabilities,
                                        const json& endpoints = {"text_to_video"}) {
    const json doc = {{"endpoints", endpoints},
                      {"models",
                       {{{"id", "m"},
                         {"endpoints", endpoints},
                         {"typical_latency_seconds", 1},
                         {"quality", 1},
                         {"price_is_estimate", false},
                         {"price", price},
                         {"capabilities", capabilities}}}}};
    return Catalog::Load(doc.dump(), kTiers);
}

json Input(json fields = json::object()) {
    fields["model"] = "m";
    return fields;
}

const json kVideo = {{"modality", "video"}};

TEST(CatalogRulesTest, AFixedRateWithoutPerIsChargedOnce) {
    const auto c = OneModel({{"components", {{{"rate", 7}}, {{"rate", 0.5}}}}}, kVideo);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input()), 7.5);
}

TEST(CatalogRulesTest, TheMinimumAppliesToTheSum) {
    const auto c = OneModel(
        R"({"components": [{"rate": 20, "per": {"kind": "duration"}}], "minimum": 80})"_json,
        R"({"modality": "video", "durations": {"min": 1, "max": 10, "default": 2}})"_json);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"duration", 3}})), 80);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"duration", 5}})), 100);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input()), 80);  // default 2 s → 40 → 80
}

TEST(CatalogRulesTest, DurationAutoBillsTheMaximumAndValuesListsWork) {
    const auto c = OneModel(
        R"({"components": [{"rate": 1, "per": {"kind": "duration"}}]})"_json,
        R"({"modality": "video", "durations": {"values": [4, 6, 8], "default": 6, "auto": true}})"_json);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"duration", "auto"}})), 8);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"duration", 4}})), 4);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input()), 6);
}

TEST(CatalogRulesTest, ATableKeyThatCannotBeReadBillsTheHighestRate) {
    const auto c = OneModel(
        R"({"components": [{"rate": {"by": {"kind": "field", "field": "tier"},
                                      "table": {"a": 1, "b": 3, "c": 2}}}]})"_json,
        kVideo);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"tier", "a"}})), 1);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input()), 3);                 // absent
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"tier", "z"}})), 3);  // unknown
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"tier", nullptr}})), 3);
}

TEST(CatalogRulesTest, TableKeysAreBooleansAndNumbersWrittenAsText) {
    const auto c = OneModel(
        R"({"components": [
              {"rate": {"by": {"kind": "field", "field": "audio", "missing": true},
                        "table": {"true": 4, "false": 2}}},
              {"rate": {"by": {"kind": "field", "field": "scale", "missing": 2},
                        "table": {"2": 10, "4": 40}}}]})"_json,
        R"({"modality": "video", "audio": {"output": true, "toggle": true, "default": true}})"_json);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input()), 14);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"audio", false}, {"scale", 4}})), 42);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"scale", 4.0}})), 44);
}

TEST(CatalogRulesTest, ConditionsAndMultipliers) {
    const auto c = OneModel(
        R"({"components": [
              {"rate": 10, "when": {"field": "mode", "in": ["a", "b"], "missing": "a"}},
              {"rate": 1, "when": {"field": "speech.type", "equals": "text"}},
              {"rate": 5, "multipliers": [
                  {"when": {"field": "boost", "equals": true}, "factor": 2},
                  {"when": {"field": "mode", "equals": "b"}, "factor": 3}]}]})"_json,
        kVideo);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input()), 15);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"mode", "c"}})), 5);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"mode", "b"}, {"boost", true}})),
              10 + 30);
    EXPECT_EQ(
        c->EstimateCredits("text_to_video", Input({{"speech", {{"type", "text"}}}, {"mode", "c"}})),
        6);
}

TEST(CatalogRulesTest, StepsPickTheFirstBoundThatHolds) {
    const auto c = OneModel(
        R"({"components": [{"rate": {"by": {"kind": "field", "field": "duration"},
                                      "steps": [{"up_to": 10, "rate": 1},
                                                {"up_to": 20, "rate": 5},
                                                {"rate": 2}]}}]})"_json,
        kVideo);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"duration", 10}})), 1);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"duration", 10.01}})), 5);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"duration", 25}})), 2);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input()), 5);  // unknown: the highest rate
}

TEST(CatalogRulesTest, CountsItemsOptionallyOnlyThoseWithoutAKey) {
    const auto c = OneModel(
        R"({"components": [
              {"rate": 1, "per": {"kind": "count", "field": "references"}},
              {"rate": 100, "per": {"kind": "count", "field": "promptImage",
                                    "without_key": "position"}}]})"_json,
        kVideo);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input()), 0);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"references", {1, 2, 3}}})), 3);
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"references", "one"}})), 1);
    // A bare media string is a first frame, not a reference.
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"promptImage", "https://e/1.png"}})), 0);
    EXPECT_EQ(
        c->EstimateCredits(
            "text_to_video",
            Input({{"promptImage",
                    {{{"uri", "u"}, {"position", "last"}}, {{"uri", "u"}}, {{"uri", "u"}}}}})),
        200);
}

TEST(CatalogRulesTest, CapUnitAndRoundUpApplyInThatOrder) {
    const auto c = OneModel(
        R"({"components": [
              {"rate": 1, "per": {"kind": "characters", "field": "text", "cap": 120,
                                  "unit": 50, "round": "up"}},
              {"rate": 2, "per": {"kind": "text_seconds", "field": "text",
                                  "characters_per_second": 15, "unit": 6}}]})"_json,
        kVideo);
    // 90 characters: ⌈90 / 50⌉ = 2, plus 2 × 90 / 15 / 6 = 2.
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input({{"text", std::string(90, 'a')}})), 4);
    // 150 characters: capped at 120 → ⌈2.4⌉ = 3, plus 2 × 150 / 90 = 3.333333 (to 1e-6).
    EXPECT_DOUBLE_EQ(c->EstimateCredits("text_to_video", Input({{"text", std::string(150, 'a')}})),
                     6.333333);
    // 100 characters: exactly 2 units, not rounded up to 3, plus 2 × 100 / 90 = 2.222222.
    EXPECT_DOUBLE_EQ(c->EstimateCredits("text_to_video", Input({{"text", std::string(100, 'a')}})),
                     4.222222);
}

TEST(CatalogRulesTest, MediaSecondsSumProbedFactsAndFallBackToTheMaximum) {
    const auto c = OneModel(
        R"({"components": [{"rate": 1, "per": {"kind": "media_seconds",
                                               "media": ["promptVideo", "referenceVideos"],
                                               "cap": 30}}]})"_json,
        R"({"modality": "video", "inputs": {
              "promptVideo": {"kind": "video", "max_seconds": 20},
              "referenceVideos": {"kind": "video", "max_items": 3, "max_seconds": 15}}})"_json);
    const json both = Input({{"promptVideo", "p"}, {"referenceVideos", {{{"uri", "r"}}}}});
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input()), 0);
    EXPECT_EQ(c->EstimateCredits("text_to_video", both), 30);  // 20 + 15, capped
    InputFacts facts;
    facts.media["/promptVideo"].duration_seconds = 4;
    facts.media["/referenceVideos/0/uri"].duration_seconds = 3;
    facts.media["/referenceVideos/1/uri"].duration_seconds = 2;
    facts.media["/referenceVideosExtra"].duration_seconds = 100;  // another field: ignored
    EXPECT_EQ(c->EstimateCredits("text_to_video", both, facts), 9);
    InputFacts partial;  // probed prompt video, unprobed references → their maximum
    partial.media["/promptVideo"].duration_seconds = 4;
    EXPECT_EQ(c->EstimateCredits("text_to_video", both, partial), 19);
}

TEST(CatalogRulesTest, PerEndpointOverridesReplaceComponentsAndMinimum) {
    const auto c = OneModel(
        R"({"components": [{"rate": 3}], "minimum": 10,
            "by_endpoint": {
              "video_to_video": {"components": [{"rate": 4}], "minimum": null},
              "image_to_video": {"minimum": 1, "price_is_estimate": true}}})"_json,
        kVideo, {"text_to_video", "video_to_video", "image_to_video"});
    EXPECT_EQ(c->EstimateCredits("text_to_video", Input()), 10);
    EXPECT_EQ(c->EstimateCredits("video_to_video", Input()), 4);
    EXPECT_EQ(c->EstimateCredits("image_to_video", Input()), 3);
    const ModelInfo* m = c->FindModel("m");
    ASSERT_NE(m, nullptr);
    EXPECT_FALSE(m->PriceIsEstimateFor("text_to_video"));
    EXPECT_TRUE(m->PriceIsEstimateFor("image_to_video"));
}

TEST(CatalogRulesTest, CapabilitiesForLaysTheEndpointOverrideOverTheBase) {
    const auto c = OneModel(R"({"components": [{"rate": 1}]})"_json,
                            R"({"modality": "video", "ratios": ["1:1"], "seed": true,
            "by_endpoint": {"video_to_video": {"ratios": null, "seed": false}}})"_json,
                            {"text_to_video", "video_to_video"});
    const ModelInfo* m = c->FindModel("m");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->CapabilitiesFor("text_to_video"),
              R"({"modality": "video", "ratios": ["1:1"], "seed": true})"_json);
    EXPECT_EQ(m->CapabilitiesFor("video_to_video"), R"({"modality": "video", "seed": false})"_json);
    EXPECT_TRUE(m->ServesEndpoint("video_to_video"));
    EXPECT_FALSE(m->ServesEndpoint("text_to_image"));
}

TEST(CatalogRulesTest, FramesUseTheProbedFrameRate) {
    const auto c = OneModel(
        R"({"components": [{"rate": 0.7, "per": {"kind": "frames", "media": "videoUri",
                                                 "default_fps": 24}}]})"_json,
        R"({"modality": "video", "inputs": {"videoUri": {"kind": "video", "max_seconds": 30}}})"_json);
    const json input = Input({{"videoUri", "v"}});
    EXPECT_EQ(c->EstimateCredits("text_to_video", input), 504);  // 720 frames, no float noise
    InputFacts facts;
    facts.media["/videoUri"].duration_seconds = 2;
    facts.media["/videoUri"].frames_per_second = 60;
    EXPECT_EQ(c->EstimateCredits("text_to_video", input, facts), 84);
}

}  // namespace
}  // namespace genhost::catalog
