// The recipes' planning (src/providers/recipe_plan.hpp) and one recipe run through the builtin
// provider: its outputs, its manifest, determinism and cancellation. Every recipe runs end to
// end through the server in tests/http/recipes_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include <unistd.h>

#include "../../src/providers/recipe_plan.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/video.hpp"
#include "genhost/providers/builtin.hpp"
#include "genhost/providers/inputs.hpp"
#include "provider_test_catalog.hpp"

namespace genhost::providers {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::StartsWith;

TEST(RecipePlan, AStoryOfManySentencesIsGroupedInOrderIntoFiveShots) {
    const auto prompts = recipes::SplitStory(
        "A fox wakes. It stretches. It runs to the river! It drinks? It sleeps; The end.\nDark.",
        5);
    ASSERT_EQ(prompts.size(), 5u);
    EXPECT_EQ(prompts[0], "Establishing wide shot: A fox wakes. It stretches.");
    EXPECT_EQ(prompts[1], "Medium shot: It runs to the river!");
    EXPECT_EQ(prompts[2], "Close-up: It drinks? It sleeps;");
    EXPECT_EQ(prompts[3], "Detail shot: The end.");
    EXPECT_EQ(prompts[4], "Closing wide shot: Dark.");
}

TEST(RecipePlan, AShortStoryIsReusedWithDifferentFramings) {
    const auto prompts = recipes::SplitStory("a lighthouse at dusk", 5);
    ASSERT_EQ(prompts.size(), 5u);
    for (const auto& p : prompts) EXPECT_THAT(p, ::testing::EndsWith(": a lighthouse at dusk"));
    EXPECT_NE(prompts[0], prompts[1]);
    EXPECT_NE(prompts[1], prompts[2]);
    const auto two = recipes::SplitStory("One. Two.", 5);
    EXPECT_EQ(two[0], "Establishing wide shot: One.");
    EXPECT_EQ(two[4], "Closing wide shot: Two.");
    // Full-width punctuation ends a sentence too.
    EXPECT_EQ(recipes::SplitStory("\xE7\x8B\x90\xE3\x80\x82\xE6\xB2\xB3\xE3\x80\x82", 2)[1],
              "Closing wide shot: \xE6\xB2\xB3\xE3\x80\x82");
}

TEST(RecipePlan, FramesAddUpExactlyToTheTotal) {
    EXPECT_THAT(recipes::AllocateFrames({2, 2, 2, 2, 2}, 24), ElementsAre(48, 48, 48, 48, 48));
    const auto thirds = recipes::AllocateFrames({3.3, 3.3, 3.4}, 24);
    EXPECT_EQ(std::accumulate(thirds.begin(), thirds.end(), 0), 240);
    EXPECT_THAT(thirds, ElementsAre(79, 79, 82));
    const auto odd = recipes::AllocateFrames(recipes::EqualShots(5, 3), 24);
    EXPECT_EQ(std::accumulate(odd.begin(), odd.end(), 0), 120);
    for (const int f : odd) EXPECT_NEAR(f, 40, 1);
    // A shot too short for a frame still gets one, from the longest shot.
    const auto tiny = recipes::AllocateFrames({0.001, 4.999}, 24);
    EXPECT_THAT(tiny, ElementsAre(1, 119));
}

media::RgbImage Plain(int w, int h, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    media::RgbImage image(w, h);
    for (std::size_t i = 0; i < image.pixels.size(); i += 3) {
        image.pixels[i] = r;
        image.pixels[i + 1] = g;
        image.pixels[i + 2] = b;
    }
    return image;
}

void Fill(media::RgbImage& image, int x0, int y0, int w, int h, std::uint8_t r, std::uint8_t g,
          std::uint8_t b) {
    for (int y = y0; y < y0 + h; ++y) {
        for (int x = x0; x < x0 + w; ++x) {
            std::uint8_t* p = image.Row(y) + 3 * x;
            p[0] = r;
            p[1] = g;
            p[2] = b;
        }
    }
}

TEST(RecipePlan, APlainBackgroundIsKeyedOutAndABusyOneKept) {
    auto photo = Plain(40, 40, 250, 250, 250);
    Fill(photo, 10, 10, 20, 20, 200, 20, 20);
    const auto matte = recipes::KeyOutBackground(photo);
    EXPECT_EQ(matte.alpha[0], 0);               // the white border
    EXPECT_EQ(matte.alpha[20 * 40 + 20], 255);  // the red product
    auto busy = photo;
    for (int x = 0; x < 40; x += 2) Fill(busy, x, 0, 1, 40, 0, 0, 0);  // stripes everywhere
    const auto kept = recipes::KeyOutBackground(busy);
    EXPECT_EQ(kept.alpha[0], 255);

    auto frame = Plain(40, 40, 0, 0, 255);
    recipes::Composite(matte, 0, 0, 1.0, frame);
    EXPECT_EQ(frame.Row(0)[2], 255);  // background pixel: the frame shows through
    EXPECT_EQ(frame.Row(20)[3 * 20], 200);
}

TEST(RecipePlan, TheProductIsFoundWhereItIsInTheFrame) {
    auto frame = Plain(320, 180, 30, 90, 30);
    Fill(frame, 200, 40, 60, 90, 220, 200, 40);
    auto product = Plain(60, 90, 220, 200, 40);
    const auto box = recipes::LocateProduct(frame, product);
    const int cx = box.x + box.width / 2;
    const int cy = box.y + box.height / 2;
    EXPECT_NEAR(cx, 230, 20);
    EXPECT_NEAR(cy, 85, 20);
}

std::string PngUri(const media::RgbImage& image) {
    return "data:image/png;base64," +
           Base64Encode(media::EncodePicture(image, media::ImageFormat::kPng));
}

struct Scratch {
    Scratch() {
        path = (std::filesystem::temp_directory_path() /
                ("genhost_recipes_" + std::to_string(::getpid()) + "_" + std::to_string(++n)))
                   .string();
        std::filesystem::create_directories(path);
    }
    ~Scratch() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string path;
    static inline int n = 0;
};

std::string ReadAll(const Output& o) {
    if (o.file.empty()) return o.data;
    std::ifstream in(o.file, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<Output> RunRecipe(const std::string& recipe, const json& input, const Scratch& scratch,
                              std::atomic<bool>& cancelled) {
    static const DataUriResolver resolver;
    TaskContext ctx(
        "00000000-0000-4000-8000-00000000abcd", "recipe_" + recipe, recipe, input, cancelled,
        [](double) {}, scratch.path, &resolver);
    BuiltinProvider provider(test::TheCatalog(), 0);
    return provider.Run(ctx);
}

TEST(RecipeRun, MarketingStockImageMakesItsImagesBrandsThemAndListsItsSteps) {
    auto logo = Plain(64, 32, 255, 255, 255);
    Fill(logo, 8, 8, 48, 16, 10, 10, 200);
    const json input = {{"prompt", "a bright kitchen, morning"},
                        {"version", "2026-06"},
                        {"outputCount", 2},
                        {"quality", "low"},
                        {"referenceImage", {{"uri", PngUri(logo)}}},
                        {"seed", 7}};
    Scratch scratch;
    std::atomic<bool> cancelled{false};
    const auto outputs = RunRecipe("marketing_stock_image", input, scratch, cancelled);
    // 2 branded finals, 2 generated images, the logo cut-out, steps.json.
    ASSERT_EQ(outputs.size(), 6u);
    EXPECT_EQ(outputs[0].suffix, "3_brand_1.png");
    EXPECT_EQ(outputs[1].suffix, "3_brand_2.png");
    EXPECT_EQ(outputs[5].suffix, "steps.json");
    const json manifest = json::parse(outputs[5].data);
    EXPECT_EQ(manifest["recipe"], "marketing_stock_image");
    EXPECT_THAT(manifest["final"], ElementsAre("3_brand_1.png", "3_brand_2.png"));
    ASSERT_EQ(manifest["steps"].size(), 3u);
    EXPECT_EQ(manifest["steps"][0]["endpoint"], "text_to_image");
    EXPECT_EQ(manifest["steps"][0]["model"], "image_gen_2");
    EXPECT_EQ(manifest["steps"][0]["inputs"]["outputCount"], 2);
    EXPECT_EQ(manifest["steps"][1]["inputs"]["image"], "request /referenceImage/uri");
    for (std::size_t i = 0; i < 5; ++i) {
        const auto info = media::ProbeMedia(ReadAll(outputs[i]));
        EXPECT_EQ(info.video_codec, "png") << outputs[i].suffix;
    }
    EXPECT_EQ(media::ProbeMedia(ReadAll(outputs[0])).width, 1920);
    // The logo changed the corner of the generated picture, not the rest.
    EXPECT_NE(ReadAll(outputs[0]), ReadAll(outputs[2]));

    Scratch again;
    const auto repeated = RunRecipe("marketing_stock_image", input, again, cancelled);
    ASSERT_EQ(repeated.size(), outputs.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        EXPECT_EQ(ReadAll(repeated[i]), ReadAll(outputs[i])) << outputs[i].suffix;
    }
}

TEST(RecipeRun, ACancelledRecipeStops) {
    const json input = {
        {"mode", "auto"}, {"prompt", "waves"}, {"version", "2026-06"}, {"duration", 5}};
    Scratch scratch;
    std::atomic<bool> cancelled{true};
    EXPECT_THROW(RunRecipe("multi_shot_video", input, scratch, cancelled), Cancelled);
}

}  // namespace
}  // namespace genhost::providers
