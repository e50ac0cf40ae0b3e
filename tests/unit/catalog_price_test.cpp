// Prices of every model in schemas/models.json, each computed by hand from LIMITS_AND_PRICES.md
// (or, for estimates, from the numbers docs/catalog.md gives) and compared with EstimateCredits.
#include "genhost/catalog/catalog.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
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

class CatalogPriceTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        keep_ = Catalog::Load(ReadSourceFile("schemas/models.json"),
                              ReadSourceFile("schemas/tiers.json"));
        catalog_ = keep_.get();
    }
    static void TearDownTestSuite() { keep_.reset(); }

    static double Price(std::string_view endpoint, const json& input) {
        return catalog_->EstimateCredits(endpoint, input);
    }
    static double Price(std::string_view endpoint, const json& input, const InputFacts& facts) {
        return catalog_->EstimateCredits(endpoint, input, facts);
    }
    static InputFacts Seconds(const std::string& pointer, double seconds) {
        InputFacts facts;
        facts.media[pointer].duration_seconds = seconds;
        return facts;
    }

    static inline std::shared_ptr<const Catalog> keep_;
    static inline const Catalog* catalog_ = nullptr;
};

// ---- video
// ---------------------------------------------------------------------------------------

TEST_F(CatalogPriceTest, Gen45Is12PerSecond) {
    EXPECT_EQ(Price("image_to_video", {{"model", "gen4.5"}, {"duration", 5}}), 60);
    EXPECT_EQ(Price("text_to_video", {{"model", "gen4.5"}, {"duration", 10}}), 120);
    EXPECT_EQ(Price("text_to_video", {{"model", "gen4.5"}}), 60);  // default duration 5
}

TEST_F(CatalogPriceTest, Gen4TurboIs5PerSecond) {
    EXPECT_EQ(Price("image_to_video", {{"model", "gen4_turbo"}, {"duration", 2}}), 10);
    EXPECT_EQ(Price("image_to_video", {{"model", "gen4_turbo"}}), 50);  // default duration 10
}

TEST_F(CatalogPriceTest, Veo31RateFollowsAudioWhichDefaultsToTrue) {
    EXPECT_EQ(Price("image_to_video", {{"model", "veo3.1"}, {"duration", 8}}), 320);
    EXPECT_EQ(Price("image_to_video", {{"model", "veo3.1"}, {"duration", 8}, {"audio", false}}),
              160);
    EXPECT_EQ(Price("text_to_video", {{"model", "veo3.1"}, {"duration", 4}, {"audio", true}}), 160);
    EXPECT_EQ(Price("text_to_video", {{"model", "veo3.1"}}), 320);  // default duration 8
}

TEST_F(CatalogPriceTest, Veo31FastIs15Or10PerSecond) {
    EXPECT_EQ(Price("text_to_video", {{"model", "veo3.1_fast"}, {"duration", 8}}), 120);
    EXPECT_EQ(
        Price("image_to_video", {{"model", "veo3.1_fast"}, {"duration", 6}, {"audio", false}}), 60);
}

TEST_F(CatalogPriceTest, Aleph2Is28PerSecondOfTheInputWithMinimum56) {
    const json input = {{"model", "aleph2"}, {"videoUri", "https://example.com/in.mp4"}};
    EXPECT_EQ(Price("video_to_video", input, Seconds("/videoUri", 1)), 56);
    EXPECT_EQ(Price("video_to_video", input, Seconds("/videoUri", 10)), 280);
    EXPECT_EQ(Price("video_to_video", input), 840);  // not probed: 30 s maximum
}

TEST_F(CatalogPriceTest, ActTwoIs5PerSecondOfTheReference) {
    const json input = {{"model", "act_two"},
                        {"character", {{"type", "image"}, {"uri", "https://example.com/c.png"}}},
                        {"reference", {{"type", "video"}, {"uri", "https://example.com/r.mp4"}}}};
    EXPECT_EQ(Price("character_performance", input), 150);  // 30 s maximum
    EXPECT_EQ(Price("character_performance", input, Seconds("/reference/uri", 4)), 20);
}

TEST_F(CatalogPriceTest, Seedance2RateFollowsTheRatiosResolution) {
    // auto is billed at the maximum duration (15 s) up front.
    EXPECT_EQ(Price("text_to_video",
                    {{"model", "seedance2"}, {"ratio", "1920:1080"}, {"duration", "auto"}}),
              40 * 15);
    EXPECT_EQ(
        Price("image_to_video", {{"model", "seedance2"}, {"ratio", "3840:2160"}, {"duration", 5}}),
        750);
    EXPECT_EQ(
        Price("video_to_video", {{"model", "seedance2"}, {"ratio", "1280:720"}, {"duration", 10}}),
        360);
    EXPECT_EQ(
        Price("text_to_video", {{"model", "seedance2"}, {"ratio", "864:496"}, {"duration", 4}}),
        144);
    EXPECT_EQ(Price("text_to_video", {{"model", "seedance2"}}), 36 * 5);  // 720p, 5 s defaults
}

TEST_F(CatalogPriceTest, Seedance2FastEstimate) {
    EXPECT_EQ(Price("text_to_video",
                    {{"model", "seedance2_fast"}, {"ratio", "1280:720"}, {"duration", 5}}),
              120);
    EXPECT_EQ(Price("image_to_video", {{"model", "seedance2_fast"}, {"duration", "auto"}}), 360);
}

TEST_F(CatalogPriceTest, Seedance2MiniEstimateRespectsItsMinimum) {
    EXPECT_EQ(Price("text_to_video", {{"model", "seedance2_mini"}, {"duration", 4}}), 64);
    EXPECT_EQ(Price("text_to_video", {{"model", "seedance2_mini"}, {"duration", 10}}), 160);
    EXPECT_EQ(Price("video_to_video", {{"model", "seedance2_mini"}, {"duration", "auto"}}), 240);
}

TEST_F(CatalogPriceTest, Seedance25RatesInputVideoAtHalfRateUpTo30Seconds) {
    EXPECT_EQ(
        Price("text_to_video", {{"model", "seedance2_5"}, {"ratio", "1920:1080"}, {"duration", 5}}),
        340);
    EXPECT_EQ(
        Price("text_to_video", {{"model", "seedance2_5"}, {"ratio", "854:480"}, {"duration", 4}}),
        80);
    EXPECT_EQ(
        Price("image_to_video", {{"model", "seedance2_5"}, {"ratio", "992:432"}, {"duration", 5}}),
        100);
    const json t2v = {{"model", "seedance2_5"},
                      {"ratio", "1280:720"},
                      {"duration", 5},
                      {"referenceVideos", {{{"type", "video"}, {"uri", "https://e.com/a.mp4"}}}}};
    EXPECT_EQ(Price("text_to_video", t2v), 150 + 15 * 30);  // not probed: 30 s
    EXPECT_EQ(Price("text_to_video", t2v, Seconds("/referenceVideos/0/uri", 8)), 150 + 15 * 8);
    const json v2v = {{"model", "seedance2_5"},
                      {"promptVideo", "https://e.com/v.mp4"},
                      {"ratio", "1920:1080"},
                      {"duration", 5}};
    EXPECT_EQ(Price("video_to_video", v2v, Seconds("/promptVideo", 40)), 340 + 34 * 30);
    EXPECT_EQ(Price("video_to_video", v2v, Seconds("/promptVideo", 6)), 340 + 34 * 6);
    EXPECT_EQ(Price("video_to_video", v2v), 340 + 34 * 30);
}

TEST_F(CatalogPriceTest, Hailuo3AddsTwoPerReferenceImage) {
    const json refs = json::array({{{"uri", "https://e.com/1.png"}},
                                   {{"uri", "https://e.com/2.png"}},
                                   {{"uri", "https://e.com/3.png"}}});
    EXPECT_EQ(
        Price("text_to_video",
              {{"model", "hailuo3"}, {"resolution", "2k"}, {"duration", 10}, {"references", refs}}),
        150 + 6);
    EXPECT_EQ(Price("text_to_video", {{"model", "hailuo3"}, {"duration", 6}}), 60);  // 768p
    // promptImage items without a position are reference images; keyframes are not.
    const json prompt_image = json::array({{{"uri", "https://e.com/f.png"}, {"position", "first"}},
                                           {{"uri", "https://e.com/r1.png"}},
                                           {{"uri", "https://e.com/r2.png"}}});
    EXPECT_EQ(Price("image_to_video", {{"model", "hailuo3"},
                                       {"resolution", "768P"},
                                       {"duration", 5},
                                       {"promptImage", prompt_image}}),
              50 + 4);
    EXPECT_EQ(Price("image_to_video", {{"model", "hailuo3"},
                                       {"resolution", "2K"},
                                       {"duration", 5},
                                       {"promptImage", "https://e.com/f.png"}}),
              75);
    EXPECT_EQ(Price("video_to_video", {{"model", "hailuo3"}, {"duration", 15}}), 150);
}

TEST_F(CatalogPriceTest, HappyHorseEstimate) {
    EXPECT_EQ(Price("image_to_video",
                    {{"model", "happyhorse_1_0"}, {"resolution", "1080P"}, {"duration", 10}}),
              200);
    EXPECT_EQ(Price("text_to_video",
                    {{"model", "happyhorse_1_0"}, {"ratio", "1920:1080"}, {"duration", 5}}),
              100);
    EXPECT_EQ(Price("text_to_video",
                    {{"model", "happyhorse_1_0"}, {"ratio", "832:1108"}, {"duration", 5}}),
              50);
}

TEST_F(CatalogPriceTest, OmniFlashIs10PerSecondAnd11ForVideoToVideo) {
    EXPECT_EQ(Price("text_to_video", {{"model", "omni_flash"}, {"duration", 8}}), 80);
    EXPECT_EQ(Price("image_to_video", {{"model", "omni_flash"}, {"duration", 3}}), 30);
    const json v2v = {
        {"model", "omni_flash"},
        {"videoUri", "https://e.com/v.mp4"},
        {"references", {{{"uri", "https://e.com/1.png"}}, {{"uri", "https://e.com/2.png"}}}}};
    EXPECT_EQ(Price("video_to_video", v2v), 110 + 2);  // not probed: 10 s
    EXPECT_EQ(Price("video_to_video", v2v, Seconds("/videoUri", 6)), 66 + 2);
}

TEST_F(CatalogPriceTest, Imagine15Estimate) {
    EXPECT_EQ(Price("text_to_video",
                    {{"model", "imagine_1_5"}, {"resolution", "480p"}, {"duration", 10}}),
              50);
    EXPECT_EQ(Price("image_to_video", {{"model", "imagine_1_5"}}), 60);  // 720p, 6 s
}

TEST_F(CatalogPriceTest, Wan3RateFollowsTheRatiosSizeClassIncludingAuto) {
    EXPECT_EQ(
        Price("text_to_video", {{"model", "wan3"}, {"ratio", "auto_1080p"}, {"duration", 10}}),
        200);
    EXPECT_EQ(Price("text_to_video", {{"model", "wan3"}, {"ratio", "832:480"}, {"duration", 2}}),
              10);
    EXPECT_EQ(Price("image_to_video", {{"model", "wan3"}, {"ratio", "1280:720"}, {"duration", 30}}),
              300);
    EXPECT_EQ(Price("image_to_video", {{"model", "wan3"}, {"ratio", "auto_480p"}, {"duration", 5}}),
              25);
}

TEST_F(CatalogPriceTest, Wan3PrimeEstimateIsTwiceWan3) {
    EXPECT_EQ(
        Price("text_to_video", {{"model", "wan3_prime"}, {"ratio", "auto_480p"}, {"duration", 5}}),
        50);
    EXPECT_EQ(
        Price("text_to_video", {{"model", "wan3_prime"}, {"ratio", "1648:1248"}, {"duration", 10}}),
        400);
}

TEST_F(CatalogPriceTest, OmniFlash11Estimate) {
    EXPECT_EQ(Price("text_to_video",
                    {{"model", "omni_flash_1.1"}, {"ratio", "3840:2160"}, {"duration", "auto"}}),
              300);
    EXPECT_EQ(Price("image_to_video",
                    {{"model", "omni_flash_1.1"}, {"ratio", "640:360"}, {"duration", 10}}),
              80);
    EXPECT_EQ(Price("video_to_video", {{"model", "omni_flash_1.1"},
                                       {"videoUri", "https://e.com/v.mp4"},
                                       {"ratio", "1280:720"},
                                       {"duration", 5},
                                       {"references", {{{"uri", "https://e.com/1.png"}}}}}),
              55 + 1);
}

TEST_F(CatalogPriceTest, H3MaxEstimate) {
    EXPECT_EQ(
        Price("text_to_video", {{"model", "h3_max"}, {"resolution", "480p"}, {"duration", 5}}), 50);
    EXPECT_EQ(Price("image_to_video", {{"model", "h3_max"}}), 90);  // 768p, 6 s
}

// ---- images
// --------------------------------------------------------------------------------------

TEST_F(CatalogPriceTest, Gen4ImageIs5At720pRatiosAnd8Otherwise) {
    EXPECT_EQ(Price("text_to_image", {{"model", "gen4_image"}, {"ratio", "1920:1080"}}), 8);
    EXPECT_EQ(Price("text_to_image", {{"model", "gen4_image"}, {"ratio", "1280:720"}}), 5);
    EXPECT_EQ(Price("text_to_image", {{"model", "gen4_image"}, {"ratio", "1680:720"}}), 5);
    EXPECT_EQ(Price("text_to_image", {{"model", "gen4_image"}, {"ratio", "1024:1024"}}), 8);
}

TEST_F(CatalogPriceTest, Gen4ImageTurboIs2) {
    EXPECT_EQ(Price("text_to_image", {{"model", "gen4_image_turbo"}, {"ratio", "1920:1080"}}), 2);
}

TEST_F(CatalogPriceTest, ImageGen2EstimateFollowsQualityTimesOutputCount) {
    EXPECT_EQ(
        Price("text_to_image", {{"model", "image_gen_2"}, {"quality", "low"}, {"outputCount", 3}}),
        9);
    EXPECT_EQ(Price("text_to_image", {{"model", "image_gen_2"}, {"ratio", "auto"}}), 10);
}

TEST_F(CatalogPriceTest, ImagePro3EstimateFollowsSize) {
    EXPECT_EQ(Price("text_to_image",
                    {{"model", "image_pro_3"}, {"ratio", "4096:4096"}, {"outputCount", 4}}),
              96);
    EXPECT_EQ(Price("text_to_image", {{"model", "image_pro_3"}, {"ratio", "1024:1024"}}), 14);
    EXPECT_EQ(Price("text_to_image", {{"model", "image_pro_3"}, {"ratio", "3168:1344"}}), 14);
}

TEST_F(CatalogPriceTest, ImageFlash31EstimateFollowsSize) {
    EXPECT_EQ(Price("text_to_image", {{"model", "image_flash_3_1"}, {"ratio", "512:512"}}), 4);
    EXPECT_EQ(Price("text_to_image", {{"model", "image_flash_3_1"}, {"ratio", "1344:768"}}), 7);
    EXPECT_EQ(Price("text_to_image", {{"model", "image_flash_3_1"}, {"ratio", "2048:2048"}}), 10);
    EXPECT_EQ(Price("text_to_image", {{"model", "image_flash_3_1"}, {"ratio", "2048:8192"}}), 15);
}

TEST_F(CatalogPriceTest, ImageFlash25Estimate) {
    EXPECT_EQ(Price("text_to_image", {{"model", "image_flash_2_5"}, {"ratio", "1024:1024"}}), 4);
}

TEST_F(CatalogPriceTest, SeedreamEstimates) {
    EXPECT_EQ(Price("text_to_image", {{"model", "seedream5_pro"}, {"outputCount", 2}}), 12);
    EXPECT_EQ(Price("text_to_image", {{"model", "seedream5_lite"}, {"ratio", "4096:2304"}}), 4);
}

// ---- upscaling, HDR
// ------------------------------------------------------------------------------

TEST_F(CatalogPriceTest, ImageUpscaleIs25Or150AboveA4096LongSide) {
    const json input = {{"model", "upscale_precision_upscaler_v2"},
                        {"imageUri", "https://e.com/i.png"}};
    EXPECT_EQ(Price("image_upscale", input), 150);  // not probed: assume the maximum
    InputFacts facts;
    facts.media["/imageUri"].width = 1024;
    facts.media["/imageUri"].height = 768;
    EXPECT_EQ(Price("image_upscale", input, facts), 25);  // default scaleFactor 2 → 2048
    json x4 = input;
    x4["scaleFactor"] = 4;
    EXPECT_EQ(Price("image_upscale", x4, facts), 25);  // exactly 4096 does not exceed it
    json x8 = input;
    x8["scaleFactor"] = 8;
    EXPECT_EQ(Price("image_upscale", x8, facts), 150);
}

TEST_F(CatalogPriceTest, VideoUpscaleIsPerOutputFrame) {
    const json input = {{"model", "upscale_video_upscaler_creative"},
                        {"videoUri", "https://e.com/v.mp4"}};
    EXPECT_EQ(Price("video_upscale", input), 648);  // 2k default, 30 s × 24 fps × 0.9
    json boost = input;
    boost["fpsBoost"] = true;
    EXPECT_EQ(Price("video_upscale", boost), 1296);
    json p720 = input;
    p720["resolution"] = "720p";
    InputFacts facts = Seconds("/videoUri", 10);
    facts.media["/videoUri"].frames_per_second = 30;
    EXPECT_EQ(Price("video_upscale", p720, facts), 210);  // 300 frames × 0.7
    json k4 = input;
    k4["resolution"] = "4k";
    EXPECT_EQ(Price("video_upscale", k4, Seconds("/videoUri", 5)), 144);  // 120 frames × 1.2
}

TEST_F(CatalogPriceTest, RubyEstimateIs5PerSecond) {
    const json input = {{"model", "ruby"}, {"videoUri", "https://e.com/v.mp4"}};
    EXPECT_EQ(Price("video_to_hdr", input), 150);
    EXPECT_EQ(Price("video_to_hdr", input, Seconds("/videoUri", 12)), 60);
}

// ---- audio
// ---------------------------------------------------------------------------------------

TEST_F(CatalogPriceTest, SeedAudioEstimateOnBothEndpoints) {
    EXPECT_EQ(Price("sound_effect", {{"model", "seed_audio"}, {"promptText", "rain"}}), 2);
    EXPECT_EQ(
        Price("text_to_speech", {{"model", "seed_audio"}, {"promptText", std::string(101, 'a')}}),
        3);
}

TEST_F(CatalogPriceTest, TextToSound2Is1UpTo10SecondsAnd2Above) {
    EXPECT_EQ(Price("sound_effect", {{"model", "voice_text_to_sound_v2"}, {"duration", 10}}), 1);
    EXPECT_EQ(Price("sound_effect", {{"model", "voice_text_to_sound_v2"}, {"duration", 0.5}}), 1);
    EXPECT_EQ(Price("sound_effect", {{"model", "voice_text_to_sound_v2"}, {"duration", 10.5}}), 2);
    EXPECT_EQ(Price("sound_effect", {{"model", "voice_text_to_sound_v2"}}), 2);
}

TEST_F(CatalogPriceTest, SpeechToSpeechIs1Per3SecondsOfInput) {
    const json input = {{"model", "voice_multilingual_sts_v2"},
                        {"media", {{"type", "audio"}, {"uri", "https://e.com/a.mp3"}}}};
    EXPECT_EQ(Price("speech_to_speech", input), 100);  // 300 s maximum
    EXPECT_DOUBLE_EQ(Price("speech_to_speech", input, Seconds("/media/uri", 31)), 10.333333);
}

TEST_F(CatalogPriceTest, MultilingualV2Is1Per50CharactersRoundedUp) {
    const auto price = [](const std::string& text) {
        return Price("text_to_speech", {{"model", "voice_multilingual_v2"}, {"promptText", text}});
    };
    EXPECT_EQ(price(std::string(101, 'a')), 3);
    EXPECT_EQ(price(std::string(100, 'a')), 2);
    EXPECT_EQ(price("a"), 1);
    // An emoji outside the BMP is 2 UTF-16 units (4 UTF-8 bytes, 1 code point).
    const std::string emoji = "\xF0\x9F\x98\x80";
    std::string fifty_units;
    for (int i = 0; i < 25; ++i) fifty_units += emoji;
    EXPECT_EQ(price(fifty_units), 1);
    EXPECT_EQ(price(fifty_units + emoji), 2);
    EXPECT_EQ(price(std::string(49, 'a') + emoji), 2);                   // 51 units, 50 code points
    EXPECT_EQ(price(std::string(48, 'a') + "\xC3\xA9\xE2\x82\xAC"), 1);  // é and € are 1 unit each
}

TEST_F(CatalogPriceTest, V3Is1Per50CharactersRoundedUp) {
    EXPECT_EQ(
        Price("text_to_speech", {{"model", "voice_v3"}, {"promptText", std::string(5000, 'x')}}),
        100);
}

TEST_F(CatalogPriceTest, DubbingIs1Per2SecondsOfInput) {
    const json input = {{"model", "voice_dubbing"}, {"audioUri", "https://e.com/a.mp3"}};
    EXPECT_EQ(Price("voice_dubbing", input), 1800);  // 3600 s maximum
    EXPECT_EQ(Price("voice_dubbing", input, Seconds("/audioUri", 61)), 30.5);
}

TEST_F(CatalogPriceTest, IsolationIs1Per6SecondsOfInput) {
    const json input = {{"model", "voice_isolation"}, {"audioUri", "https://e.com/a.mp3"}};
    EXPECT_EQ(Price("voice_isolation", input), 600);  // 3600 s maximum
    EXPECT_EQ(Price("voice_isolation", input, Seconds("/audioUri", 60)), 10);
}

TEST_F(CatalogPriceTest, AvatarVideoIs2Plus2Per6SecondsOfSpeech) {
    const json audio = {{"model", "gwm1_avatars"},
                        {"avatar", {{"type", "service-preset"}, {"presetId", "influencer"}}},
                        {"speech", {{"type", "audio"}, {"audio", "https://e.com/s.mp3"}}}};
    EXPECT_EQ(Price("avatar_videos", audio), 102);  // 300 s maximum
    EXPECT_EQ(Price("avatar_videos", audio, Seconds("/speech/audio", 12)), 6);
    const json text = {{"model", "gwm1_avatars"},
                       {"avatar", {{"type", "service-preset"}, {"presetId", "influencer"}}},
                       {"speech", {{"type", "text"}, {"text", std::string(90, 'a')}}}};
    EXPECT_EQ(Price("avatar_videos", text), 4);  // 90 characters ≈ 6 s at 15 per second
}

TEST_F(CatalogPriceTest, RealtimeSessionEstimateIs20PerMinuteOfMaxDuration) {
    EXPECT_EQ(Price("realtime_sessions", {{"model", "gwm1_avatars"}}), 100);  // 300 s default
    EXPECT_EQ(Price("realtime_sessions", {{"model", "gwm1_avatars"}, {"maxDuration", 90}}), 30);
}

// ---- contract
// ------------------------------------------------------------------------------------

TEST_F(CatalogPriceTest, EveryModelPricesABareRequestOnEveryEndpoint) {
    for (const ModelInfo& m : catalog_->Models()) {
        for (const std::string& endpoint : m.endpoints) {
            const double credits = Price(endpoint, {{"model", m.id}});
            EXPECT_TRUE(std::isfinite(credits) && credits >= 0) << m.id << " " << endpoint;
        }
    }
}

TEST_F(CatalogPriceTest, UnknownModelOrEndpointIsInvalidArgument) {
    EXPECT_THROW(Price("text_to_video", {{"model", "gen3a_turbo"}}), std::invalid_argument);
    EXPECT_THROW(Price("text_to_image", {{"model", "gen4.5"}}), std::invalid_argument);
    EXPECT_THROW(Price("text_to_video", {{"promptText", "x"}}), std::invalid_argument);
    EXPECT_THROW(Price("text_to_video", json::array()), std::invalid_argument);
}

}  // namespace
}  // namespace genhost::catalog
