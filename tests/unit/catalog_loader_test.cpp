// Catalog::Load refuses broken data at start, naming the document, the model or tier and the
// field. Every case starts from a small valid document and breaks one thing.
#include "genhost/catalog/catalog.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <stdexcept>
#include <string>

namespace genhost::catalog {
namespace {

using nlohmann::json;

constexpr std::string_view kModels = R"({
  "endpoints": ["text_to_video", "video_to_video"],
  "models": [
    {
      "id": "m1",
      "endpoints": ["text_to_video", "video_to_video"],
      "typical_latency_seconds": 60,
      "quality": 50,
      "price_is_estimate": false,
      "price": {
        "components": [
          {"rate": {"by": {"kind": "field", "field": "ratio", "via": "ratio_resolutions",
                           "missing": "1280:720"},
                    "table": {"720p": 10, "1080p": 20}},
           "per": {"kind": "duration"}}
        ],
        "by_endpoint": {
          "video_to_video": {"components": [
            {"rate": 11, "per": {"kind": "media_seconds", "media": ["videoUri"]}}]}
        }
      },
      "capabilities": {
        "modality": "video",
        "ratios": ["1280:720", "1920:1080"],
        "ratio_resolutions": {"1280:720": "720p", "1920:1080": "1080p"},
        "durations": {"min": 2, "max": 10, "default": 5},
        "by_endpoint": {
          "video_to_video": {"durations": null,
                             "inputs": {"videoUri": {"kind": "video", "max_seconds": 10}}}
        }
      }
    }
  ]
})";

constexpr std::string_view kTiers = R"({
  "tiers": [
    {"tier": 1, "max_concurrent_generations": 1, "max_daily_generations": 50,
     "max_monthly_spend_usd": 100}
  ]
})";

json Models() { return json::parse(kModels); }
json Tiers() { return json::parse(kTiers); }
json& M1(json& doc) { return doc["models"][0]; }

// ExpectRefused loads the documents and expects a std::runtime_error whose message contains
// every one of `parts`.
void ExpectRefused(const std::string& models, const std::string& tiers,
                   std::initializer_list<std::string_view> parts) {
    try {
        Catalog::Load(models, tiers);
        ADD_FAILURE() << "loaded, but should have been refused";
    } catch (const std::runtime_error& e) {
        const std::string message = e.what();
        for (std::string_view part : parts) {
            EXPECT_NE(message.find(part), std::string::npos)
                << "message \"" << message << "\" lacks \"" << part << "\"";
        }
    }
}

void ExpectModelsRefused(const json& models, std::initializer_list<std::string_view> parts) {
    ExpectRefused(models.dump(), std::string(kTiers), parts);
}

TEST(CatalogLoaderTest, TheBaseDocumentsLoad) {
    const auto catalog = Catalog::Load(kModels, kTiers);
    ASSERT_EQ(catalog->Models().size(), 1u);
    EXPECT_EQ(catalog->Models()[0].concurrency_group, "m1");  // defaults to the id
    EXPECT_EQ(catalog->Models()[0].provider, "builtin");      // defaults to builtin
    EXPECT_EQ(catalog->EstimateCredits("text_to_video", {{"model", "m1"}}), 50);
    EXPECT_EQ(catalog->EstimateCredits("video_to_video", {{"model", "m1"}, {"videoUri", "u"}}),
              110);
}

TEST(CatalogLoaderTest, ADefaultConstructedCatalogKnowsNoModel) {
    const Catalog empty;
    EXPECT_TRUE(empty.Models().empty());
    EXPECT_EQ(empty.FindModel("m1"), nullptr);
    EXPECT_EQ(empty.FindTier(1), nullptr);
    EXPECT_THROW(empty.EstimateCredits("text_to_video", {{"model", "m1"}}), std::invalid_argument);
}

TEST(CatalogLoaderTest, RefusesInvalidJson) {
    ExpectRefused("{\"models\": [", std::string(kTiers), {"models.json", "invalid JSON"});
    ExpectRefused(std::string(kModels), "[1,", {"tiers.json", "invalid JSON"});
}

TEST(CatalogLoaderTest, RefusesDuplicateKeys) {
    std::string text(kModels);
    text.replace(text.find("\"quality\": 50"), 13, "\"quality\": 50, \"quality\": 60");
    ExpectRefused(text, std::string(kTiers), {"models.json", "duplicate key \"quality\""});
}

TEST(CatalogLoaderTest, RefusesAnUnknownKeyInARule) {
    json doc = Models();
    M1(doc)["price"]["components"][0]["rat"] = 1;
    ExpectModelsRefused(doc, {"model \"m1\"", "price.components[0]", "unknown key \"rat\""});

    doc = Models();
    M1(doc)["price"]["components"][0]["per"]["unti"] = 2;
    ExpectModelsRefused(doc, {"model \"m1\"", "price.components[0]", "per", "\"unti\""});

    doc = Models();
    M1(doc)["price"]["by_endpoint"]["video_to_video"]["components"][0]["per"]["medai"] = 1;
    ExpectModelsRefused(doc, {"model \"m1\"", "by_endpoint.video_to_video", "\"medai\""});

    doc = Models();
    M1(doc)["price"]["discount"] = 1;
    ExpectModelsRefused(doc, {"model \"m1\"", "price", "unknown key \"discount\""});
}

TEST(CatalogLoaderTest, RefusesAModelWithoutEndpoints) {
    json doc = Models();
    M1(doc).erase("endpoints");
    ExpectModelsRefused(doc, {"model \"m1\"", "endpoints"});
    M1(doc)["endpoints"] = json::array();
    ExpectModelsRefused(doc, {"model \"m1\"", "endpoints"});
}

TEST(CatalogLoaderTest, RefusesAnEndpointNotInTheDocumentsList) {
    json doc = Models();
    M1(doc)["endpoints"] = {"text_to_vidoe"};
    ExpectModelsRefused(doc, {"model \"m1\"", "\"text_to_vidoe\""});
    doc = Models();
    doc["endpoints"].push_back("text_to_image");
    ExpectModelsRefused(doc, {"models.json: endpoints", "no model serves \"text_to_image\""});
}

TEST(CatalogLoaderTest, RefusesDuplicateIds) {
    json doc = Models();
    doc["models"].push_back(M1(doc));
    ExpectModelsRefused(doc, {"model \"m1\"", "duplicate model id"});
}

TEST(CatalogLoaderTest, RefusesBadModelFields) {
    json doc = Models();
    M1(doc)["quality"] = 101;
    ExpectModelsRefused(doc, {"model \"m1\"", "quality"});
    doc = Models();
    M1(doc).erase("price_is_estimate");
    ExpectModelsRefused(doc, {"model \"m1\"", "price_is_estimate"});
    doc = Models();
    M1(doc)["typical_latency_seconds"] = "fast";
    ExpectModelsRefused(doc, {"model \"m1\"", "typical_latency_seconds", "number"});
    doc = Models();
    M1(doc)["id"] = "bad id";
    ExpectModelsRefused(doc, {"models[0].id", "not a model id"});
    doc = Models();
    M1(doc)["colour"] = "red";
    ExpectModelsRefused(doc, {"model \"m1\"", "unknown key \"colour\""});
}

TEST(CatalogLoaderTest, RefusesARuleThatReadsMissingCapabilities) {
    json doc = Models();  // the duration rule on an endpoint whose capabilities drop durations
    M1(doc)["price"]["by_endpoint"].erase("video_to_video");
    M1(doc)["price"]["by_endpoint"]["video_to_video"] = {{"minimum", 5}};
    ExpectModelsRefused(doc, {"model \"m1\"", "video_to_video", "no durations"});

    doc = Models();
    M1(doc)["capabilities"]["durations"].erase("default");
    ExpectModelsRefused(doc, {"model \"m1\"", "durations have no default"});

    doc = Models();
    M1(doc)
    ["price"]["by_endpoint"]["video_to_video"]["components"][0]["per"]["media"] = {"promptVideo"};
    ExpectModelsRefused(doc, {"model \"m1\"", "\"promptVideo\" is not in the capabilities"});

    doc = Models();
    M1(doc)
    ["capabilities"]["by_endpoint"]["video_to_video"]["inputs"]["videoUri"].erase("max_seconds");
    ExpectModelsRefused(doc, {"model \"m1\"", "no max_seconds"});

    doc = Models();
    M1(doc)["price"]["components"][0]["rate"]["by"]["via"] = "ratio_classes";
    ExpectModelsRefused(doc, {"model \"m1\"", "via", "\"ratio_classes\""});
}

TEST(CatalogLoaderTest, RefusesARateTableThatDoesNotMatchTheCapabilities) {
    json doc = Models();
    M1(doc)["price"]["components"][0]["rate"]["table"].erase("1080p");
    ExpectModelsRefused(doc, {"model \"m1\"", "table", "no rate for \"1080p\""});

    doc = Models();
    M1(doc)["price"]["components"][0]["rate"]["table"]["1080P"] = 20;
    ExpectModelsRefused(doc, {"model \"m1\"", "\"1080P\" can never be selected"});

    doc = Models();
    M1(doc)["price"]["components"][0]["rate"]["by"]["missing"] = "1280x720";
    ExpectModelsRefused(doc, {"model \"m1\"", "missing", "\"1280x720\""});

    doc = Models();  // an enumerated field: the table must cover exactly its values
    M1(doc)["capabilities"]["resolutions"] = {{"values", {"720p", "1080p"}}};
    M1(doc)["price"]["components"][0]["rate"]["by"] = {{"kind", "field"}, {"field", "resolution"}};
    M1(doc)["price"]["components"][0]["rate"]["table"] = {{"720p", 10}};
    ExpectModelsRefused(doc, {"model \"m1\"", "no rate for \"1080p\""});

    doc = Models();
    M1(doc)["price"]["components"][0]["rate"]["table"]["720p"] = -1;
    ExpectModelsRefused(doc, {"model \"m1\"", "table.720p", "negative"});
}

TEST(CatalogLoaderTest, RefusesMalformedValueExpressions) {
    json doc = Models();
    M1(doc)["price"]["components"][0]["per"] = {{"kind", "seconds"}};
    ExpectModelsRefused(doc, {"model \"m1\"", "unknown value kind \"seconds\""});

    doc = Models();
    M1(doc)["price"]["components"][0]["per"] = {{"kind", "field"}, {"field", "outputCount"}};
    ExpectModelsRefused(doc, {"model \"m1\"", "needs \"missing\""});

    doc = Models();
    M1(doc)["price"]["components"][0]["per"] = {{"kind", "duration"}, {"round", "down"}};
    ExpectModelsRefused(doc, {"model \"m1\"", "round", "up or none"});

    doc = Models();
    M1(doc)["price"]["components"][0]["per"] = {{"kind", "count"}, {"field", "refs[0]"}};
    ExpectModelsRefused(doc, {"model \"m1\"", "not a dotted field path"});

    doc = Models();
    M1(doc)["price"]["components"][0]["per"] = {{"kind", "media_long_side"}, {"media", "x"}};
    ExpectModelsRefused(doc, {"model \"m1\"", "media_long_side can only key rate steps"});

    doc = Models();
    M1(doc)["price"]["components"][0]["rate"]["by"] = {{"kind", "duration"}};
    ExpectModelsRefused(doc, {"model \"m1\"", "keyed by a field"});
}

TEST(CatalogLoaderTest, RefusesMalformedStepsAndConditions) {
    json doc = Models();
    M1(doc)
    ["price"]["components"][0]["rate"] = {
        {"by", {{"kind", "duration"}}},
        {"steps", {{{"up_to", 5}, {"rate", 1}}, {{"up_to", 10}, {"rate", 2}}}}};
    ExpectModelsRefused(doc, {"model \"m1\"", "steps[1]", "last step has no up_to"});

    doc = Models();
    M1(doc)
    ["price"]["components"][0]["rate"] = {
        {"by", {{"kind", "duration"}}},
        {"steps", {{{"up_to", 5}, {"rate", 1}}, {{"up_to", 5}, {"rate", 2}}, {{"rate", 3}}}}};
    ExpectModelsRefused(doc, {"model \"m1\"", "steps[1].up_to", "greater"});

    doc = Models();
    M1(doc)
    ["price"]["components"][0]["when"] = {{"field", "audio"}, {"equals", true}, {"in", {true}}};
    ExpectModelsRefused(doc, {"model \"m1\"", "when", "exactly one of equals and in"});

    doc = Models();
    M1(doc)
    ["price"]["components"][0]["multipliers"] = {
        {{"when", {{"field", "fpsBoost"}, {"equals", true}}}, {"factor", 0}}};
    ExpectModelsRefused(doc, {"model \"m1\"", "multipliers[0].factor"});
}

TEST(CatalogLoaderTest, RefusesBadPriceStructure) {
    json doc = Models();
    M1(doc)["price"]["components"] = json::array();
    ExpectModelsRefused(doc, {"model \"m1\"", "price.components", "non-empty"});

    doc = Models();
    M1(doc)["price"]["by_endpoint"]["text_to_image"] = {{"minimum", 1}};
    ExpectModelsRefused(doc, {"model \"m1\"", "\"text_to_image\" is not an endpoint"});

    doc = Models();  // base components that no endpoint uses are dead data
    M1(doc)["price"]["by_endpoint"]["text_to_video"] = {{"components", {{{"rate", 1}}}}};
    ExpectModelsRefused(doc, {"model \"m1\"", "apply to nothing"});

    doc = Models();
    M1(doc)["price"]["minimum"] = "56";
    ExpectModelsRefused(doc, {"model \"m1\"", "price.minimum", "number"});
}

TEST(CatalogLoaderTest, RefusesBadCapabilities) {
    json doc = Models();
    M1(doc)["capabilities"]["ratio"] = {"1:1"};
    ExpectModelsRefused(doc, {"model \"m1\"", "capabilities", "unknown key \"ratio\""});

    doc = Models();
    M1(doc)["capabilities"]["ratios"].push_back("1080:1920");
    ExpectModelsRefused(doc, {"model \"m1\"", "ratio_resolutions", "\"1080:1920\""});

    doc = Models();
    M1(doc)["capabilities"]["durations"]["default"] = 11;
    ExpectModelsRefused(doc, {"model \"m1\"", "durations.default", "outside"});

    doc = Models();
    M1(doc)["capabilities"].erase("modality");
    ExpectModelsRefused(doc, {"model \"m1\"", "modality"});

    doc = Models();
    M1(doc)["capabilities"]["by_endpoint"]["image_to_video"] = json::object();
    ExpectModelsRefused(doc, {"model \"m1\"", "\"image_to_video\" is not an endpoint"});

    doc = Models();
    M1(doc)["capabilities"]["by_endpoint"]["video_to_video"]["inputs"]["videoUri"]["kind"] = "film";
    ExpectModelsRefused(doc, {"model \"m1\"", "video_to_video", "unknown media kind \"film\""});

    doc = Models();
    M1(doc)["capabilities"]["audio"] = {{"output", false}, {"toggle", true}};
    ExpectModelsRefused(doc, {"model \"m1\"", "audio.toggle", "needs output true"});
}

TEST(CatalogLoaderTest, RefusesATierWithoutLimits) {
    json tiers = Tiers();
    tiers["tiers"][0].erase("max_daily_generations");
    ExpectRefused(std::string(kModels), tiers.dump(),
                  {"tiers.json", "tier 1", "max_daily_generations"});

    tiers = Tiers();
    tiers["tiers"][0].erase("max_concurrent_generations");
    ExpectRefused(std::string(kModels), tiers.dump(), {"tier 1", "max_concurrent_generations"});

    tiers = Tiers();
    tiers["tiers"][0].erase("max_monthly_spend_usd");
    ExpectRefused(std::string(kModels), tiers.dump(), {"tier 1", "max_monthly_spend_usd"});

    tiers = Tiers();
    tiers["tiers"][0]["max_concurrent_generations"] = 0;
    ExpectRefused(std::string(kModels), tiers.dump(), {"tier 1", "at least 1"});

    ExpectRefused(std::string(kModels), R"({"tiers": []})", {"tiers.json", "non-empty"});
}

TEST(CatalogLoaderTest, RefusesBadTierTables) {
    json tiers = Tiers();
    tiers["tiers"].push_back(tiers["tiers"][0]);
    ExpectRefused(std::string(kModels), tiers.dump(), {"tier 1", "duplicate tier"});

    tiers = Tiers();
    tiers["tiers"][0]["max_concurent_generations"] = 2;
    ExpectRefused(std::string(kModels), tiers.dump(),
                  {"tier 1", "unknown key \"max_concurent_generations\""});

    tiers = Tiers();
    tiers["tiers"][0]["model_overrides"] = {{"m2", {{"max_daily_generations", 5}}}};
    ExpectRefused(std::string(kModels), tiers.dump(), {"tier 1", "\"m2\" is not a model"});

    tiers = Tiers();
    tiers["tiers"][0]["model_overrides"] = {{"m1", json::object()}};
    ExpectRefused(std::string(kModels), tiers.dump(), {"tier 1", "m1", "overrides no limit"});
}

}  // namespace
}  // namespace genhost::catalog
