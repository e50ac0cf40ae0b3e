// The request schemas and the model catalog compiled into the binary agree with each other.
#include "genhost/api/app.hpp"

#include <gtest/gtest.h>

namespace genhost::api {
namespace {

TEST(Contract, EveryGenerationModelIsInTheCatalogForItsEndpoint) {
    const auto schemas = LoadEmbeddedSchemas();
    const auto catalog = catalog::Catalog::LoadEmbedded();
    const auto problems = CheckContract(*schemas, *catalog);
    for (const auto& p : problems) ADD_FAILURE() << p;
    EXPECT_FALSE(schemas->Endpoints().empty());
}

TEST(Contract, ProblemsAreReported) {
    const auto schemas = LoadEmbeddedSchemas();
    const auto empty =
        catalog::Catalog::Load(R"({"endpoints": [], "models": []})",
                               R"({"tiers": [{"tier": 1, "max_concurrent_generations": 1,
                                                  "max_daily_generations": 1, "max_monthly_spend_usd": 1}]})");
    EXPECT_FALSE(CheckContract(*schemas, *empty).empty());
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
