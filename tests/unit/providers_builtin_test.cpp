// Tests for genhost/providers: ParseRatio, SeedFor, and BuiltinProvider::Run for text_to_image
// with the catalog of the source tree (schemas/models.json and schemas/tiers.json): exact PNG
// sizes (read from the IHDR chunk and confirmed with media::ProbeMedia), determinism, JPEG output,
// cancellation before and during the run, progress rising to exactly 1, and endpoints the builtin
// provider does not implement failing with INTERNAL.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <string>
#include <vector>

#include "genhost/catalog/catalog.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/media/image.hpp"
#include "genhost/providers/builtin.hpp"
#include "provider_test_catalog.hpp"

namespace genhost::providers {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

constexpr char kTaskId[] = "0f8b1c2e-1111-4222-8333-444455556666";

using test::TheCatalog;

// PngSize reads width and height from the IHDR chunk, which must come first.
std::pair<int, int> PngSize(const std::string& png) {
    static const std::string kSignature("\x89PNG\r\n\x1a\n", 8);
    if (png.size() < 24 || png.compare(0, 8, kSignature) != 0 || png.compare(12, 4, "IHDR") != 0) {
        ADD_FAILURE() << "not a PNG";
        return {0, 0};
    }
    auto be32 = [&](std::size_t at) {
        return static_cast<int>(
            (static_cast<std::uint32_t>(static_cast<unsigned char>(png[at])) << 24) |
            (static_cast<std::uint32_t>(static_cast<unsigned char>(png[at + 1])) << 16) |
            (static_cast<std::uint32_t>(static_cast<unsigned char>(png[at + 2])) << 8) |
            static_cast<std::uint32_t>(static_cast<unsigned char>(png[at + 3])));
    };
    return {be32(16), be32(20)};
}

// Run is one BuiltinProvider run, recording progress.
struct RunResult {
    std::vector<Output> outputs;
    std::vector<double> progress;
};

RunResult RunBuiltin(const json& input, std::string endpoint = "text_to_image",
                     std::string task_id = kTaskId, double latency_scale = 0) {
    RunResult r;
    std::atomic<bool> cancelled{false};
    TaskContext ctx(std::move(task_id), std::move(endpoint), input.value("model", "gen4_image"),
                    input, cancelled, [&](double p) { r.progress.push_back(p); });
    BuiltinProvider provider(TheCatalog(), latency_scale);
    r.outputs = provider.Run(ctx);
    return r;
}

json Input(std::string ratio, std::string prompt = "a red fox in the snow") {
    return json::parse(R"({"model":"gen4_image","promptText":")" + prompt + R"(","ratio":")" +
                       ratio + R"(","seed":7})");
}

// --- ParseRatio ----------------------------------------------------------------------------

TEST(ParseRatio, Accepts) {
    int w = 0;
    int h = 0;
    ASSERT_TRUE(ParseRatio("1920:1080", w, h));
    EXPECT_EQ(w, 1920);
    EXPECT_EQ(h, 1080);
    ASSERT_TRUE(ParseRatio("1:1", w, h));
    EXPECT_EQ(w, 1);
    EXPECT_EQ(h, 1);
    ASSERT_TRUE(ParseRatio("720:1280", w, h));
    EXPECT_EQ(w, 720);
    EXPECT_EQ(h, 1280);
    ASSERT_TRUE(ParseRatio("08:09", w, h));
    EXPECT_EQ(w, 8);
    EXPECT_EQ(h, 9);
}

TEST(ParseRatio, Rejects) {
    for (const char* bad :
         {"",        ":",      "1920",          "1920:",        ":1080", "1920x1080", "1920/1080",
          "0:1080",  "1920:0", "-1:5",          "5:-1",         "+5:5",  " 5:5",      "5:5 ",
          "5 :5",    "5: 5",   "5:5:5",         "5.5:5",        "5:5.0", "a:b",       "auto",
          "auto_1k", "16:9x",  "99999999999:1", "1:99999999999"}) {
        int w = -7;
        int h = -7;
        EXPECT_FALSE(ParseRatio(bad, w, h)) << "'" << bad << "'";
    }
}

// --- SeedFor -------------------------------------------------------------------------------

std::uint64_t Seed(const json& input, const std::string& task_id = kTaskId) {
    std::atomic<bool> cancelled{false};
    const TaskContext ctx(task_id, "text_to_image", "gen4_image", input, cancelled, [](double) {});
    return SeedFor(ctx);
}

TEST(SeedFor, UsesTheRequestSeed) {
    EXPECT_EQ(Seed(json::parse(R"({"seed":42})")), 42u);
    EXPECT_EQ(Seed(json::parse(R"({"seed":0})")), 0u);
    EXPECT_EQ(Seed(json::parse(R"({"seed":4294967295})")), 4294967295u);
}

TEST(SeedFor, UsesASeedBuiltInCode) {
    // A json built in C++ holds 42 as a signed integer; it is still the request's seed.
    EXPECT_EQ(Seed(json{{"seed", 42}}), 42u);
    EXPECT_EQ(Seed(json{{"seed", 42u}}), 42u);
}

TEST(SeedFor, DerivesAStableSeedFromTheTaskIdOtherwise) {
    const std::uint64_t a = Seed(json::object());
    EXPECT_EQ(Seed(json::object()), a);
    EXPECT_EQ(Seed(json{{"promptText", "other"}}), a);  // only the task id matters
    EXPECT_LT(a, std::uint64_t{1} << 32);
    EXPECT_NE(Seed(json::object(), "another-task"), a);
    // The first four bytes of SHA-256(task id), big-endian.
    const auto d = Sha256(kTaskId);
    const std::uint64_t expected = (std::uint64_t{d[0]} << 24) | (std::uint64_t{d[1]} << 16) |
                                   (std::uint64_t{d[2]} << 8) | std::uint64_t{d[3]};
    EXPECT_EQ(a, expected);
}

TEST(SeedFor, DerivedSeedsStayBelow2To32) {
    for (int i = 0; i < 200; ++i) {
        EXPECT_LT(Seed(json::object(), "task-" + std::to_string(i)), std::uint64_t{1} << 32);
    }
}

TEST(SeedFor, IgnoresASeedThatIsNotANonNegativeInteger) {
    const std::uint64_t derived = Seed(json::object());
    EXPECT_EQ(Seed(json::parse(R"({"seed":"42"})")), derived);
    EXPECT_EQ(Seed(json::parse(R"({"seed":-1})")), derived);
    EXPECT_EQ(Seed(json::parse(R"({"seed":1.5})")), derived);
    EXPECT_EQ(Seed(json::parse(R"({"seed":null})")), derived);
}

// --- BuiltinProvider: text_to_image --------------------------------------------------------

TEST(BuiltinTextToImage, CatalogHasTheModels) {
    ASSERT_NE(TheCatalog().FindModel("gen4_image"), nullptr);
    ASSERT_NE(TheCatalog().FindModel("gen4_image_turbo"), nullptr);
    EXPECT_EQ(TheCatalog().FindModel("gen4_image")->provider, "builtin");
}

class BuiltinRatio : public ::testing::TestWithParam<const char*> {};

TEST_P(BuiltinRatio, MakesAPngOfExactlyTheRatiosSize) {
    int w = 0;
    int h = 0;
    ASSERT_TRUE(ParseRatio(GetParam(), w, h));
    const auto r = RunBuiltin(Input(GetParam()));
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].suffix, "0.png");
    EXPECT_EQ(PngSize(r.outputs[0].data), std::make_pair(w, h));
    const auto info = media::ProbeMedia(r.outputs[0].data);
    EXPECT_EQ(info.video_codec, "png");
    EXPECT_EQ(info.width, w);
    EXPECT_EQ(info.height, h);
}

INSTANTIATE_TEST_SUITE_P(Gen4ImageRatios, BuiltinRatio,
                         ::testing::Values("1280:720", "720:1280", "720:720", "1080:1920",
                                           "2112:912", "1168:880"),
                         [](const auto& info) {
                             std::string name = info.param;
                             for (auto& c : name) c = c == ':' ? 'x' : c;
                             return name;
                         });

TEST(BuiltinTextToImage, EveryGen4RatioParses) {
    for (const char* model : {"gen4_image", "gen4_image_turbo"}) {
        const auto* info = TheCatalog().FindModel(model);
        ASSERT_NE(info, nullptr);
        for (const auto& ratio : info->capabilities.at("ratios")) {
            int w = 0;
            int h = 0;
            EXPECT_TRUE(ParseRatio(ratio.get<std::string>(), w, h)) << model << " " << ratio;
        }
    }
}

TEST(BuiltinTextToImage, IsDeterministic) {
    const auto a = RunBuiltin(Input("720:720"));
    const auto b = RunBuiltin(Input("720:720"));
    ASSERT_EQ(a.outputs.size(), 1u);
    ASSERT_EQ(b.outputs.size(), 1u);
    EXPECT_TRUE(a.outputs[0].data == b.outputs[0].data);
}

TEST(BuiltinTextToImage, SeedAndPromptChangeThePicture) {
    const auto base = RunBuiltin(Input("720:720")).outputs.at(0).data;
    json other_seed = Input("720:720");
    other_seed["seed"] = 8;
    EXPECT_TRUE(RunBuiltin(other_seed).outputs.at(0).data != base);
    EXPECT_TRUE(RunBuiltin(Input("720:720", "a blue whale")).outputs.at(0).data != base);
}

TEST(BuiltinTextToImage, WithoutASeedTheTaskIdDecides) {
    json input = Input("720:720");
    input.erase("seed");
    const auto a = RunBuiltin(input, "text_to_image", "task-a").outputs.at(0).data;
    EXPECT_TRUE(RunBuiltin(input, "text_to_image", "task-a").outputs.at(0).data == a);
    EXPECT_TRUE(RunBuiltin(input, "text_to_image", "task-b").outputs.at(0).data != a);
}

TEST(BuiltinTextToImage, SeveralOutputsDiffer) {
    json input = Input("720:720");
    input["outputCount"] = 2;
    const auto r = RunBuiltin(input);
    ASSERT_EQ(r.outputs.size(), 2u);
    EXPECT_EQ(r.outputs[0].suffix, "0.png");
    EXPECT_EQ(r.outputs[1].suffix, "1.png");
    EXPECT_TRUE(r.outputs[0].data != r.outputs[1].data);
    EXPECT_EQ(PngSize(r.outputs[1].data), std::make_pair(720, 720));
    // Output i is what seed + i gives alone.
    json next = Input("720:720");
    next["seed"] = 8;
    EXPECT_TRUE(RunBuiltin(next).outputs.at(0).data == r.outputs[1].data);
}

TEST(BuiltinTextToImage, JpegOutput) {
    json input = Input("1280:720");
    input["outputFormat"] = "jpeg";
    const auto r = RunBuiltin(input);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].suffix, "0.jpg");
    ASSERT_GE(r.outputs[0].data.size(), 3u);
    EXPECT_EQ(r.outputs[0].data.substr(0, 3), std::string("\xff\xd8\xff"));
    const auto info = media::ProbeMedia(r.outputs[0].data);
    EXPECT_EQ(info.width, 1280);
    EXPECT_EQ(info.height, 720);
}

TEST(BuiltinTextToImage, ProgressRisesToExactlyOne) {
    for (const int count : {1, 3}) {
        json input = Input("720:720");
        input["outputCount"] = count;
        const auto r = RunBuiltin(input);
        ASSERT_FALSE(r.progress.empty());
        for (std::size_t i = 0; i < r.progress.size(); ++i) {
            EXPECT_GE(r.progress[i], 0.0);
            EXPECT_LE(r.progress[i], 1.0);
            if (i > 0) {
                EXPECT_GE(r.progress[i], r.progress[i - 1]);
            }
        }
        EXPECT_EQ(r.progress.back(), 1.0) << count;
    }
}

TEST(BuiltinTextToImage, ProgressRisesDuringSimulatedLatency) {
    // gen4_image_turbo typically takes 8 s; a scale of 0.01 makes that 80 ms.
    json input = Input("720:720");
    input["model"] = "gen4_image_turbo";
    const auto r = RunBuiltin(input, "text_to_image", kTaskId, 0.01);
    ASSERT_GE(r.progress.size(), 3u);
    EXPECT_LT(r.progress.front(), 0.9);
    EXPECT_EQ(r.progress.back(), 1.0);
    for (std::size_t i = 1; i < r.progress.size(); ++i) {
        EXPECT_GE(r.progress[i], r.progress[i - 1]);
    }
}

TEST(BuiltinTextToImage, CancelledBeforeRunThrowsCancelled) {
    std::atomic<bool> cancelled{true};
    TaskContext ctx(kTaskId, "text_to_image", "gen4_image", Input("720:720"), cancelled,
                    [](double) {});
    BuiltinProvider provider(TheCatalog(), 0);
    EXPECT_THROW(provider.Run(ctx), Cancelled);
}

TEST(BuiltinTextToImage, CancelledDuringSimulatedLatencyStopsQuickly) {
    std::atomic<bool> cancelled{false};
    int calls = 0;
    TaskContext ctx(kTaskId, "text_to_image", "gen4_image", Input("720:720"), cancelled,
                    [&](double) {
                        ++calls;
                        cancelled = true;  // cancel as soon as the work has started
                    });
    BuiltinProvider provider(TheCatalog(), 1.0);  // would take gen4_image's full 20 s
    const auto started = std::chrono::steady_clock::now();
    EXPECT_THROW(provider.Run(ctx), Cancelled);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
    EXPECT_GE(calls, 1);
}

TEST(BuiltinTextToImage, UnusableRatioFailsWithInternal) {
    for (const json& input :
         {json::parse(R"({"model":"gen4_image","promptText":"x"})"),
          json::parse(R"({"model":"gen4_image","promptText":"x","ratio":"wide"})")}) {
        try {
            RunBuiltin(input);
            ADD_FAILURE() << "no TaskFailure for " << input.dump();
        } catch (const TaskFailure& e) {
            EXPECT_EQ(e.code(), "INTERNAL");
        }
    }
}

// An input the validator would have refused (image_to_video without its promptImage) is a
// programming error, not the client's: INTERNAL, naming the endpoint and model.
TEST(BuiltinProvider, AnInputWithoutItsMediaFailsWithInternal) {
    try {
        RunBuiltin(json::parse(R"({"model":"gen4_turbo","promptText":"x","ratio":"1280:720"})"),
                   "image_to_video");
        FAIL() << "no TaskFailure";
    } catch (const TaskFailure& e) {
        EXPECT_EQ(e.code(), "INTERNAL");
        EXPECT_THAT(e.what(), HasSubstr("image_to_video"));
        EXPECT_THAT(e.what(), HasSubstr("gen4_turbo"));
    }
}

TEST(BuiltinProvider, UnknownEndpointFailsWithInternal) {
    EXPECT_THROW(RunBuiltin(Input("720:720"), "no_such_endpoint"), TaskFailure);
}

TEST(TaskContext, ExposesItsFields) {
    std::atomic<bool> cancelled{false};
    double last = -1;
    const TaskContext ctx("id-1", "text_to_image", "gen4_image", json{{"a", 1}}, cancelled,
                          [&](double p) { last = p; });
    EXPECT_EQ(ctx.task_id(), "id-1");
    EXPECT_EQ(ctx.endpoint(), "text_to_image");
    EXPECT_EQ(ctx.model(), "gen4_image");
    EXPECT_EQ(ctx.input(), (json{{"a", 1}}));
    EXPECT_FALSE(ctx.IsCancelled());
    EXPECT_NO_THROW(ctx.CheckCancelled());
    ctx.Progress(0.25);
    EXPECT_EQ(last, 0.25);
    cancelled = true;
    EXPECT_TRUE(ctx.IsCancelled());
    EXPECT_THROW(ctx.CheckCancelled(), Cancelled);
}

TEST(TaskFailure, CarriesCodeAndMessage) {
    const TaskFailure f("ASSET.INVALID", "The image could not be decoded");
    EXPECT_EQ(f.code(), "ASSET.INVALID");
    EXPECT_STREQ(f.what(), "The image could not be decoded");
}

}  // namespace
}  // namespace genhost::providers
