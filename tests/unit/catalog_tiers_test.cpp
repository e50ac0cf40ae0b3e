// The shipped tier table (schemas/tiers.json) and per-model overrides.
#include "genhost/catalog/catalog.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace genhost::catalog {
namespace {

std::string ReadSourceFile(const std::string& relative) {
    std::ifstream in(std::string(GENHOST_SOURCE_DIR) + "/" + relative, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + relative);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

struct Expected {
    int tier;
    int concurrent;
    int daily;
    std::int64_t spend;
};

TEST(CatalogTiersTest, EveryTierHasTheLowEndOfItsPublicLimits) {
    const auto catalog =
        Catalog::Load(ReadSourceFile("schemas/models.json"), ReadSourceFile("schemas/tiers.json"));
    const Expected expected[] = {
        {1, 1, 50, 100},      {2, 3, 500, 500},       {3, 5, 1000, 2000},
        {4, 10, 5000, 20000}, {5, 20, 25000, 100000},
    };
    ASSERT_EQ(catalog->Tiers().size(), std::size(expected));
    for (std::size_t i = 0; i < std::size(expected); ++i) {
        const Expected& e = expected[i];
        const Tier& t = catalog->Tiers()[i];  // sorted by number
        EXPECT_EQ(t.tier, e.tier);
        EXPECT_EQ(t.max_concurrent_generations, e.concurrent) << "tier " << e.tier;
        EXPECT_EQ(t.max_daily_generations, e.daily) << "tier " << e.tier;
        EXPECT_EQ(t.max_monthly_spend_usd, e.spend) << "tier " << e.tier;
        EXPECT_TRUE(t.model_overrides.empty());
        ASSERT_EQ(catalog->FindTier(e.tier), &t);
        const TierLimits limits = t.LimitsFor("veo3.1");
        EXPECT_EQ(limits.max_concurrent_generations, e.concurrent);
        EXPECT_EQ(limits.max_daily_generations, e.daily);
    }
    EXPECT_EQ(catalog->FindTier(0), nullptr);
    EXPECT_EQ(catalog->FindTier(6), nullptr);
}

constexpr std::string_view kModels = R"({
  "endpoints": ["text_to_image"],
  "models": [
    {"id": "a", "endpoints": ["text_to_image"], "typical_latency_seconds": 5, "quality": 50,
     "price_is_estimate": false, "price": {"components": [{"rate": 2}]},
     "capabilities": {"modality": "image"}},
    {"id": "b", "endpoints": ["text_to_image"], "typical_latency_seconds": 5, "quality": 50,
     "price_is_estimate": false, "price": {"components": [{"rate": 3}]},
     "capabilities": {"modality": "image"}}
  ]
})";

TEST(CatalogTiersTest, ModelOverridesReplaceOnlyTheLimitsTheyName) {
    const auto catalog = Catalog::Load(kModels, R"({
      "tiers": [
        {"tier": 2, "max_concurrent_generations": 3, "max_daily_generations": 500,
         "max_monthly_spend_usd": 500},
        {"tier": 1, "max_concurrent_generations": 1, "max_daily_generations": 50,
         "max_monthly_spend_usd": 100,
         "model_overrides": {"a": {"max_daily_generations": 10},
                             "b": {"max_concurrent_generations": 2, "max_daily_generations": 20}}}
      ]
    })");
    ASSERT_EQ(catalog->Tiers().size(), 2u);
    EXPECT_EQ(catalog->Tiers()[0].tier, 1);  // sorted although listed second
    const Tier* t1 = catalog->FindTier(1);
    ASSERT_NE(t1, nullptr);
    EXPECT_EQ(t1->LimitsFor("a").max_concurrent_generations, 1);
    EXPECT_EQ(t1->LimitsFor("a").max_daily_generations, 10);
    EXPECT_EQ(t1->LimitsFor("b").max_concurrent_generations, 2);
    EXPECT_EQ(t1->LimitsFor("b").max_daily_generations, 20);
    EXPECT_EQ(t1->LimitsFor("unknown").max_daily_generations, 50);
    EXPECT_EQ(catalog->FindTier(2)->LimitsFor("a").max_daily_generations, 500);
}

}  // namespace
}  // namespace genhost::catalog
