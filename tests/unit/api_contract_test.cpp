// The request schemas and the model catalog compiled into the binary agree with each other.
#include "genhost/api/app.hpp"
#include "genhost/core/resources.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace genhost::api {
namespace {

TEST(Contract, EveryGenerationModelIsInTheCatalogForItsEndpoint) {
    const auto schemas = LoadEmbeddedSchemas();
    const auto catalog = catalog::Catalog::LoadEmbedded();
    const auto problems = CheckContract(*schemas, *catalog);
    for (const auto& p : problems) ADD_FAILURE() << p;
    EXPECT_FALSE(schemas->Endpoints().empty());
}

TEST(Contract, AModelMissingFromTheCatalogIsReported) {
    const auto schemas = LoadEmbeddedSchemas();
    auto models = nlohmann::json::parse(*FindResource("schemas/models.json"));
    auto& list = models["models"];
    list.erase(std::remove_if(list.begin(), list.end(),
                              [](const nlohmann::json& m) { return m["id"] == "gen4_image"; }),
               list.end());
    const auto reduced =
        catalog::Catalog::Load(models.dump(), std::string(*FindResource("schemas/tiers.json")));
    const auto problems = CheckContract(*schemas, *reduced);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0], "model gen4_image of endpoint text_to_image is not in the catalog");
}

TEST(Limits, UnknownTiersFallBackToTheNearestLowerOne) {
    const auto catalog = catalog::Catalog::LoadEmbedded();
    EXPECT_EQ(LimitsFor(*catalog, 1, "gen4_image").max_concurrent, 1);
    EXPECT_EQ(LimitsFor(*catalog, 5, "gen4_image").max_concurrent, 20);
    EXPECT_EQ(LimitsFor(*catalog, 9, "gen4_image").max_concurrent, 20);
    EXPECT_EQ(LimitsFor(*catalog, 0, "gen4_image").max_concurrent, 1);
    EXPECT_EQ(LimitsFor(*catalog, 5, "gen4_image").max_daily, 25000);
}

}  // namespace
}  // namespace genhost::api
