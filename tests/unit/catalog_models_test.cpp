// The shipped catalog (schemas/models.json): which models serve which endpoint, the neutral ids,
// the estimate flags and the per-endpoint capabilities.
#include "genhost/catalog/catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

namespace genhost::catalog {
namespace {

using nlohmann::json;

std::string ReadSourceFile(const std::string& relative) {
    std::ifstream in(std::string(GENHOST_SOURCE_DIR) + "/" + relative, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + relative);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::shared_ptr<const Catalog> LoadShipped() {
    return Catalog::Load(ReadSourceFile("schemas/models.json"),
                         ReadSourceFile("schemas/tiers.json"));
}

std::set<std::string> ModelsServing(const Catalog& catalog, std::string_view endpoint) {
    std::set<std::string> out;
    for (const auto& m : catalog.Models()) {
        if (m.ServesEndpoint(endpoint)) out.insert(m.id);
    }
    return out;
}

TEST(CatalogModelsTest, EveryEndpointHasTheModelsOfSpec) {
    const auto catalog = LoadShipped();
    const std::map<std::string, std::set<std::string>> expected = {
        {"image_to_video",
         {"gen4.5", "gen4_turbo", "veo3.1", "veo3.1_fast", "hailuo3", "happyhorse_1_0", "seedance2",
          "seedance2_fast", "seedance2_mini", "omni_flash", "seedance2_5", "imagine_1_5", "wan3",
          "wan3_prime", "omni_flash_1.1", "h3_max"}},
        {"text_to_video",
         {"gen4.5", "veo3.1", "veo3.1_fast", "hailuo3", "happyhorse_1_0", "seedance2",
          "seedance2_fast", "seedance2_mini", "omni_flash", "seedance2_5", "imagine_1_5", "wan3",
          "wan3_prime", "omni_flash_1.1", "h3_max"}},
        {"video_to_video",
         {"aleph2", "hailuo3", "seedance2", "seedance2_fast", "seedance2_mini", "omni_flash",
          "seedance2_5", "omni_flash_1.1"}},
        {"text_to_image",
         {"gen4_image_turbo", "gen4_image", "image_gen_2", "image_pro_3", "image_flash_3_1",
          "image_flash_2_5", "seedream5_pro", "seedream5_lite"}},
        {"image_upscale", {"upscale_precision_upscaler_v2"}},
        {"video_upscale", {"upscale_video_upscaler_creative"}},
        {"video_to_hdr", {"ruby"}},
        {"character_performance", {"act_two"}},
        {"sound_effect", {"seed_audio", "voice_text_to_sound_v2"}},
        {"speech_to_speech", {"voice_multilingual_sts_v2"}},
        {"text_to_speech", {"seed_audio", "voice_multilingual_v2", "voice_v3"}},
        {"voice_dubbing", {"voice_dubbing"}},
        {"voice_isolation", {"voice_isolation"}},
        {"avatar_videos", {"gwm1_avatars"}},
        {"realtime_sessions", {"gwm1_avatars"}},
        // The recipes (docs/recipes.md): one model each, named after it.
        {"recipe_ad_localization", {"ad_localization"}},
        {"recipe_marketing_stock_image", {"marketing_stock_image"}},
        {"recipe_multi_shot_video", {"multi_shot_video"}},
        {"recipe_product_ad", {"product_ad"}},
        {"recipe_product_campaign_image", {"product_campaign_image"}},
        {"recipe_product_swap", {"product_swap"}},
        {"recipe_product_ugc", {"product_ugc"}},
    };
    std::set<std::string> all;
    for (const auto& [endpoint, models] : expected) {
        EXPECT_EQ(ModelsServing(*catalog, endpoint), models) << endpoint;
        all.insert(models.begin(), models.end());
    }
    EXPECT_EQ(catalog->Models().size(), all.size());
    EXPECT_EQ(expected.at("image_to_video").size(), 16u);  // SPEC.md: "16 shapes exist"
}

TEST(CatalogModelsTest, ModelsAreSortedAndFindable) {
    const auto catalog = LoadShipped();
    const auto& models = catalog->Models();
    EXPECT_TRUE(std::is_sorted(models.begin(), models.end(),
                               [](const auto& a, const auto& b) { return a.id < b.id; }));
    for (const auto& m : models) {
        ASSERT_NE(catalog->FindModel(m.id), nullptr) << m.id;
        EXPECT_EQ(catalog->FindModel(m.id)->id, m.id);
    }
    EXPECT_EQ(catalog->FindModel("gen3a_turbo"), nullptr);  // retired
    EXPECT_EQ(catalog->FindModel("gen4_aleph"), nullptr);   // retired
    EXPECT_EQ(catalog->FindModel(""), nullptr);
}

TEST(CatalogModelsTest, IdsAreNeutral) {
    const auto catalog = LoadShipped();
    for (const char* id :
         {"image_pro_3", "image_flash_3_1", "image_flash_2_5", "seedream5_pro", "seedream5_lite",
          "image_gen_2", "omni_flash", "upscale_precision_upscaler_v2", "voice_multilingual_v2"}) {
        EXPECT_NE(catalog->FindModel(id), nullptr) << id;
    }
    for (const auto& m : catalog->Models()) {
        for (const char* company : {"gemini", "eleven", "magnific", "gpt", "runway", "kling"}) {
            EXPECT_EQ(m.id.find(company), std::string::npos) << m.id;
        }
    }
}

TEST(CatalogModelsTest, EstimatesAreExactlyTheModelsWithoutAPublicPrice) {
    const auto catalog = LoadShipped();
    const std::set<std::string> estimates = {
        "seed_audio", "ruby", "happyhorse_1_0", "seedance2_fast", "seedance2_mini", "imagine_1_5",
        "omni_flash_1.1", "h3_max", "wan3_prime", "image_gen_2", "image_pro_3", "image_flash_3_1",
        "image_flash_2_5", "seedream5_pro", "seedream5_lite",
        // The recipes (LIMITS_AND_PRICES.md: no public price).
        "ad_localization", "marketing_stock_image", "multi_shot_video", "product_ad",
        "product_campaign_image", "product_swap", "product_ugc"};
    for (const auto& m : catalog->Models()) {
        EXPECT_EQ(m.price_is_estimate, estimates.contains(m.id)) << m.id;
    }
    const ModelInfo* avatars = catalog->FindModel("gwm1_avatars");
    ASSERT_NE(avatars, nullptr);
    EXPECT_FALSE(avatars->PriceIsEstimateFor("avatar_videos"));
    EXPECT_TRUE(avatars->PriceIsEstimateFor("realtime_sessions"));  // "no official figure"
}

TEST(CatalogModelsTest, DefaultsOfEveryEntry) {
    const auto catalog = LoadShipped();
    for (const auto& m : catalog->Models()) {
        EXPECT_EQ(m.concurrency_group, m.id);
        EXPECT_EQ(m.provider, "builtin");
        EXPECT_GT(m.typical_latency_seconds, 0) << m.id;
        EXPECT_GE(m.quality, 0);
        EXPECT_LE(m.quality, 100);
        EXPECT_FALSE(m.endpoints.empty());
        EXPECT_TRUE(m.price.contains("components")) << m.id;
        for (const auto& e : m.endpoints) {
            EXPECT_TRUE(m.CapabilitiesFor(e).contains("modality")) << m.id << " " << e;
        }
    }
}

TEST(CatalogModelsTest, CapabilitiesApplyPerEndpoint) {
    const auto catalog = LoadShipped();
    const ModelInfo* gen45 = catalog->FindModel("gen4.5");
    ASSERT_NE(gen45, nullptr);
    EXPECT_EQ(gen45->CapabilitiesFor("image_to_video")["ratios"].size(), 6u);
    EXPECT_EQ(gen45->CapabilitiesFor("text_to_video")["ratios"],
              json::array({"1280:720", "720:1280"}));
    EXPECT_FALSE(gen45->CapabilitiesFor("text_to_video").contains("inputs"));
    EXPECT_FALSE(gen45->CapabilitiesFor("text_to_video").contains("by_endpoint"));
    EXPECT_EQ(gen45->CapabilitiesFor("text_to_image"), json::object());

    const ModelInfo* omni = catalog->FindModel("omni_flash");
    ASSERT_NE(omni, nullptr);
    const json v2v = omni->CapabilitiesFor("video_to_video");
    EXPECT_FALSE(v2v.contains("ratios"));
    EXPECT_FALSE(v2v.contains("durations"));
    EXPECT_EQ(v2v["inputs"]["videoUri"]["max_seconds"], 10);

    const ModelInfo* veo = catalog->FindModel("veo3.1");
    ASSERT_NE(veo, nullptr);
    const json caps = veo->CapabilitiesFor("image_to_video");
    EXPECT_EQ(caps["durations"]["values"], json::array({4, 6, 8}));
    EXPECT_EQ(caps["audio"]["default"], true);

    const ModelInfo* seedance = catalog->FindModel("seedance2");
    ASSERT_NE(seedance, nullptr);
    const json s = seedance->CapabilitiesFor("text_to_video");
    EXPECT_EQ(s["ratios"].size(), 24u);
    EXPECT_EQ(s["ratio_resolutions"]["1920:1080"], "1080p");
    EXPECT_EQ(s["ratio_resolutions"]["2160:3840"], "4k");
    EXPECT_EQ(s["ratio_resolutions"]["1280:720"], "720p");
    EXPECT_EQ(s["durations"]["auto"], true);
}

TEST(CatalogModelsTest, TextToImageRatioCountsMatchTheClients) {
    const auto catalog = LoadShipped();
    const std::map<std::string, std::size_t> counts = {
        {"gen4_image", 16},    {"gen4_image_turbo", 16}, {"image_gen_2", 31},
        {"image_pro_3", 30},   {"image_flash_3_1", 56},  {"image_flash_2_5", 10},
        {"seedream5_pro", 16}, {"seedream5_lite", 16}};
    for (const auto& [id, n] : counts) {
        const ModelInfo* m = catalog->FindModel(id);
        ASSERT_NE(m, nullptr) << id;
        EXPECT_EQ(m->CapabilitiesFor("text_to_image")["ratios"].size(), n) << id;
    }
}

TEST(CatalogModelsTest, EmbeddedCopyMatchesTheSourceTree) {
    const auto embedded = Catalog::LoadEmbedded();
    const auto shipped = LoadShipped();
    ASSERT_EQ(embedded->Models().size(), shipped->Models().size());
    for (std::size_t i = 0; i < shipped->Models().size(); ++i) {
        EXPECT_EQ(embedded->Models()[i].id, shipped->Models()[i].id);
        EXPECT_EQ(embedded->Models()[i].price, shipped->Models()[i].price);
    }
    EXPECT_EQ(embedded->Tiers().size(), shipped->Tiers().size());
}

}  // namespace
}  // namespace genhost::catalog
