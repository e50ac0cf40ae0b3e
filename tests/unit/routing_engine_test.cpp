// The selection engine of routed generation over the whole shipped catalog: specific decisions,
// and properties over random inputs, settings and snapshots (mapped bodies always pass the
// chosen model's schema; allow and deny lists and price caps hold; the same arguments decide the
// same; ranking is monotone in cost, latency and quality).
#include "genhost/routing/engine.hpp"

#include "genhost/core/resources.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace genhost::routing {
namespace {

using nlohmann::json;

std::shared_ptr<const validate::SchemaSet> Schemas() {
    static const auto schemas = [] {
        std::vector<validate::SchemaDocument> docs;
        for (const auto& r : EmbeddedResources()) {
            if (r.path.rfind("schemas/", 0) == 0) {
                docs.push_back({std::string(r.path), std::string(r.content)});
            }
        }
        return validate::SchemaSet::Compile(docs);
    }();
    return schemas;
}

const Engine& E() {
    static const Engine engine(catalog::Catalog::LoadEmbedded(), Schemas());
    return engine;
}

Settings Default() { return Settings{}; }

std::vector<std::string> RankedIds(const Decision& d) {
    std::vector<std::string> out;
    for (const auto& c : d.ranked) out.push_back(c.model);
    return out;
}

const Exclusion* ExclusionOf(const Decision& d, const std::string& model) {
    for (const auto& e : d.excluded) {
        if (e.model == model) return &e;
    }
    return nullptr;
}

constexpr const char* kImage = "https://example.com/a.png";
constexpr const char* kVideo = "https://example.com/a.mp4";
constexpr const char* kAudio = "https://example.com/a.mp3";

TEST(RoutingEngine, EveryModalityRoutesAmongItsGenerationModels) {
    const auto video = E().Models(Modality::kVideo);
    const auto image = E().Models(Modality::kImage);
    const auto audio = E().Models(Modality::kAudio);
    EXPECT_GE(video.size(), 15u);
    EXPECT_EQ(image.size(), 8u);
    EXPECT_EQ(audio.size(), 4u);  // seed_audio, voice_multilingual_v2, voice_v3, sound v2
    // Upscalers, performances, dubbing and avatars are not routed.
    for (const auto& id : {"upscale_video_upscaler_creative", "act_two", "gwm1_avatars", "ruby"}) {
        EXPECT_EQ(std::count(video.begin(), video.end(), id), 0) << id;
    }
}

TEST(RoutingEngine, CostPicksTheCheapestAndNamesEveryExclusion) {
    const auto d =
        E().Route(Modality::kVideo, Default(), {{"promptText", "a red fox"}, {"duration", 5}}, {});
    ASSERT_NE(d.Chosen(), nullptr);
    EXPECT_EQ(d.reason_code, "lowest_cost");
    EXPECT_EQ(d.rank_outcome, "cost");
    for (std::size_t i = 1; i < d.ranked.size(); ++i) {
        EXPECT_LE(d.ranked[i - 1].per_output, d.ranked[i].per_output);
    }
    // veo takes 4, 6 or 8 s; gen4_turbo needs a first frame; aleph2 a source video.
    const auto* veo = ExclusionOf(d, "veo3.1");
    ASSERT_NE(veo, nullptr);
    EXPECT_EQ(veo->filter, Filter::kCapability);
    EXPECT_EQ(veo->why, "duration 5 s is not one of 4, 6, 8");
    ASSERT_NE(ExclusionOf(d, "gen4_turbo"), nullptr);
    EXPECT_EQ(ExclusionOf(d, "gen4_turbo")->filter, Filter::kInputSupport);
    ASSERT_NE(ExclusionOf(d, "aleph2"), nullptr);
    EXPECT_EQ(ExclusionOf(d, "aleph2")->filter, Filter::kInputSupport);
    EXPECT_NE(d.reason.find("veo3.1 (capability: duration 5 s is not one of 4, 6, 8)"),
              std::string::npos)
        << d.reason;
    // The chosen body is the model's own: ratio concrete, duration set.
    const auto& c = *d.Chosen();
    EXPECT_EQ(c.body.at("model"), c.model);
    EXPECT_EQ(c.resolved.at("duration"), 5);
    EXPECT_EQ(c.resolved.at("ratio").get<std::string>().find(':') != std::string::npos, true);
    EXPECT_TRUE(Schemas()->Validate(c.endpoint, c.body).empty());
}

TEST(RoutingEngine, FiltersRunInOrderAndTheEmptyingFilterIsNamed) {
    // Allow only veo3.1, then ask for 5 s: capability empties the pool before allow_deny.
    Settings s;
    s.allowlist_only = true;
    s.ids = {"veo3.1"};
    auto d = E().Route(Modality::kVideo, s, {{"promptText", "x"}, {"duration", 5}}, {});
    EXPECT_EQ(d.Chosen(), nullptr);
    ASSERT_TRUE(d.emptied_by);
    EXPECT_EQ(*d.emptied_by, Filter::kAllowDeny);  // veo is excluded by capability, others by
                                                   // the allowlist, which empties the pool
    EXPECT_EQ(ExclusionOf(d, "veo3.1")->filter, Filter::kCapability);
    ASSERT_EQ(d.pipeline.size(), 5u);
    EXPECT_EQ(d.pipeline[3].at("filter"), "allow_deny");
    EXPECT_TRUE(d.pipeline[3].at("models").empty());
    EXPECT_FALSE(d.pipeline[2].at("models").empty());
    // With 8 s, veo is the only eligible model.
    d = E().Route(Modality::kVideo, s, {{"promptText", "x"}, {"duration", 8}}, {});
    ASSERT_NE(d.Chosen(), nullptr);
    EXPECT_EQ(d.Chosen()->model, "veo3.1");
    EXPECT_EQ(d.reason_code, "only_eligible_model");
    EXPECT_EQ(d.rank_outcome, "single_candidate");
    // 30 s at 4k in 21:9: no model makes it; the two that need more inputs than a prompt go at
    // input_support, which empties the pool.
    d = E().Route(
        Modality::kVideo, Default(),
        {{"promptText", "x"}, {"duration", 30}, {"aspectRatio", "21:9"}, {"resolution", "4k"}}, {});
    EXPECT_EQ(d.Chosen(), nullptr);
    EXPECT_EQ(d.emptied_by, Filter::kInputSupport);
    EXPECT_NE(d.reason.find("No eligible model: the input_support filter left none."),
              std::string::npos)
        << d.reason;
    EXPECT_NE(d.reason.find("wan3 (capability: aspect ratio 21:9 at 4k: no such size)"),
              std::string::npos)
        << d.reason;
    // Capability alone: ten images with a seed (only gen4_image takes a seed, one per task).
    d = E().Route(Modality::kImage, Default(),
                  {{"promptText", "x"}, {"seed", 1}, {"outputCount", 10}}, {});
    EXPECT_EQ(d.Chosen(), nullptr);
    EXPECT_EQ(d.emptied_by, Filter::kCapability);
    EXPECT_TRUE(d.pipeline[0].at("models").empty());
}

TEST(RoutingEngine, PromptLengthAndInputSupport) {
    const std::string long_prompt(4500, 'a');
    auto d = E().Route(Modality::kVideo, Default(), {{"promptText", long_prompt}}, {});
    const auto* gen45 = ExclusionOf(d, "gen4.5");
    ASSERT_NE(gen45, nullptr);
    EXPECT_EQ(gen45->filter, Filter::kPromptLength);
    EXPECT_EQ(gen45->why, "promptText of 4500 characters, at most 1000");
    for (const auto& c : d.ranked) {
        EXPECT_TRUE(c.model == "wan3" || c.model == "wan3_prime" || c.model == "hailuo3" ||
                    c.model == "seedance2_5" || c.model == "h3_max")
            << c.model;
    }
    // Images: gen4_image_turbo needs reference images.
    d = E().Route(Modality::kImage, Default(), {{"promptText", "a cat"}}, {});
    ASSERT_NE(ExclusionOf(d, "gen4_image_turbo"), nullptr);
    EXPECT_EQ(ExclusionOf(d, "gen4_image_turbo")->filter, Filter::kInputSupport);
    d = E().Route(Modality::kImage, Default(),
                  {{"promptText", "a cat"}, {"referenceImages", {{{"uri", kImage}}}}}, {});
    ASSERT_NE(d.Chosen(), nullptr);
    EXPECT_EQ(d.Chosen()->model, "gen4_image_turbo");  // 2 credits
    EXPECT_EQ(d.Chosen()->body.at("referenceImages"), json::array({{{"uri", kImage}}}));
}

TEST(RoutingEngine, VideoOptionsKeepOnlyModelsThatHonourThem) {
    // Sound: only models whose output has sound.
    auto d = E().Route(Modality::kVideo, Default(), {{"promptText", "x"}, {"audio", true}}, {});
    ASSERT_FALSE(d.ranked.empty());
    for (const auto& c : d.ranked) {
        EXPECT_TRUE(c.model.starts_with("veo") || c.model.starts_with("seedance") ||
                    c.model.starts_with("wan3"))
            << c.model;
        EXPECT_EQ(c.body.value("audio", true), true);
    }
    // A source video: video to video; keyframes: aleph2 alone.
    d = E().Route(Modality::kVideo, Default(),
                  {{"promptText", "make it snow"},
                   {"referenceVideos", {{{"uri", kVideo}, {"role", "source"}}}}},
                  {});
    ASSERT_FALSE(d.ranked.empty());
    for (const auto& c : d.ranked) EXPECT_EQ(c.endpoint, "video_to_video") << c.model;
    d = E().Route(Modality::kVideo, Default(),
                  {{"promptText", "make it snow"},
                   {"referenceVideos", {{{"uri", kVideo}, {"role", "source"}}}},
                   {"keyframes", {{{"uri", kImage}, {"seconds", 1}}}}},
                  {});
    ASSERT_EQ(RankedIds(d), std::vector<std::string>{"aleph2"});
    EXPECT_EQ(d.Chosen()->body.at("videoUri"), kVideo);
    EXPECT_EQ(d.Chosen()->resolved.at("ratio"), "auto");
    // First and last frames: image to video models with both positions.
    d = E().Route(Modality::kVideo, Default(),
                  {{"promptText", "x"},
                   {"referenceImages",
                    {{{"uri", kImage}, {"role", "first"}}, {{"uri", kImage}, {"role", "last"}}}}},
                  {});
    ASSERT_FALSE(d.ranked.empty());
    for (const auto& c : d.ranked) {
        EXPECT_EQ(c.endpoint, "image_to_video");
        EXPECT_EQ(c.body.at("promptImage").size(), 2u);
    }
    EXPECT_EQ(ExclusionOf(d, "gen4.5")->why, "referenceImages role last: not supported");
    // 9:16 at 1080p: a concrete portrait ratio of the 1080p class.
    d = E().Route(Modality::kVideo, Default(),
                  {{"promptText", "x"}, {"aspectRatio", "9:16"}, {"resolution", "1080p"}}, {});
    ASSERT_NE(d.Chosen(), nullptr);
    for (const auto& c : d.ranked) {
        EXPECT_EQ(c.resolved.at("resolution"), "1080p") << c.model;
        const std::string ratio = c.resolved.at("ratio");
        if (ratio != "9:16") {
            const auto colon = ratio.find(':');
            EXPECT_LT(std::stoi(ratio.substr(0, colon)), std::stoi(ratio.substr(colon + 1)));
        }
    }
    // A seed: never to a model without one.
    d = E().Route(Modality::kVideo, Default(), {{"promptText", "x"}, {"seed", 7}}, {});
    EXPECT_EQ(ExclusionOf(d, "hailuo3")->why, "seed: not supported");
}

TEST(RoutingEngine, ImageRatiosTiersCountsAndSeeds) {
    auto d =
        E().Route(Modality::kImage, Default(),
                  {{"promptText", "a cat"}, {"aspectRatio", "16:9"}, {"resolution", "2k"}}, {});
    ASSERT_NE(d.Chosen(), nullptr);
    for (const auto& c : d.ranked) {
        EXPECT_EQ(c.resolved.at("resolution"), "2k") << c.model;
        EXPECT_EQ(c.resolved.at("aspectRatio"), "16:9");
    }
    // Only gen4_image and gen4_image_turbo take a seed.
    d = E().Route(Modality::kImage, Default(), {{"promptText", "a cat"}, {"seed", 1}}, {});
    EXPECT_EQ(RankedIds(d), std::vector<std::string>{"gen4_image"});
    // Ten images: models making ten per task, priced per output.
    d = E().Route(Modality::kImage, Default(), {{"promptText", "a cat"}, {"outputCount", 10}}, {});
    ASSERT_NE(d.Chosen(), nullptr);
    for (const auto& c : d.ranked) {
        EXPECT_EQ(c.body.at("outputCount"), 10);
        EXPECT_DOUBLE_EQ(c.per_output, c.credits / 10);
    }
    EXPECT_EQ(ExclusionOf(d, "gen4_image")->why, "outputCount 10: one image per task");
}

TEST(RoutingEngine, AudioSpeechVoicesAndSoundEffects) {
    auto d = E().Route(Modality::kAudio, Default(),
                       {{"type", "speech"},
                        {"promptText", "hello"},
                        {"voice", {{"type", "reference-audio"}, {"audioUri", kAudio}}}},
                       {});
    ASSERT_EQ(RankedIds(d), std::vector<std::string>{"seed_audio"});
    EXPECT_EQ(d.Chosen()->resolved, json({{"type", "speech"}, {"voice", "reference-audio"}}));
    EXPECT_EQ(ExclusionOf(d, "voice_v3")->why,
              "voice reference-audio: the model cannot clone a voice");
    d = E().Route(Modality::kAudio, Default(),
                  {{"type", "speech"},
                   {"promptText", "hello"},
                   {"voice", {{"type", "preset"}, {"presetId", "Maya"}}}},
                  {});
    ASSERT_NE(d.Chosen(), nullptr);
    for (const auto& c : d.ranked) {
        EXPECT_EQ(c.body.at("voice"), json({{"type", "service-preset"}, {"presetId", "Maya"}}));
    }
    // No voice: the models' default voices.
    d = E().Route(Modality::kAudio, Default(), {{"type", "speech"}, {"promptText", "hello"}}, {});
    EXPECT_EQ(d.ranked.size(), 3u);
    for (const auto& c : d.ranked) EXPECT_EQ(c.resolved.at("voice"), "default");
    // Sound effects: a duration and a loop only voice_text_to_sound_v2 takes.
    d = E().Route(Modality::kAudio, Default(),
                  {{"type", "audio"}, {"promptText", "rain"}, {"duration", 12.5}, {"loop", true}},
                  {});
    ASSERT_EQ(RankedIds(d), std::vector<std::string>{"voice_text_to_sound_v2"});
    EXPECT_EQ(d.Chosen()->body.at("duration"), 12.5);
    EXPECT_EQ(d.Chosen()->resolved.at("voice"), "none");
    d = E().Route(
        Modality::kAudio, Default(),
        {{"type", "audio"}, {"promptText", "rain"}, {"referenceAudios", {{{"uri", kAudio}}}}}, {});
    ASSERT_EQ(RankedIds(d), std::vector<std::string>{"seed_audio"});
    EXPECT_EQ(d.Chosen()->body.at("referenceAudios"), json::array({kAudio}));
}

TEST(RoutingEngine, CapacityFallbackSkipsModelsAtTheirLimit) {
    Settings s;
    s.on_capacity = true;
    const json input = {{"promptText", "a cat"}};
    const auto plain = E().Route(Modality::kImage, s, input, {});
    ASSERT_GE(plain.ranked.size(), 3u);
    EXPECT_FALSE(plain.capacity_mattered);
    Snapshot snap;
    snap.at_limit = {plain.ranked[0].model, plain.ranked[1].model};
    auto d = E().Route(Modality::kImage, s, input, snap);
    EXPECT_EQ(d.Chosen()->model, plain.ranked[2].model);
    EXPECT_EQ(d.skipped, (std::vector<std::string>{plain.ranked[0].model, plain.ranked[1].model}));
    EXPECT_TRUE(d.capacity_mattered);
    EXPECT_FALSE(d.all_exhausted);
    EXPECT_EQ(d.reason_code, "filter_order_fallback");
    EXPECT_EQ(d.pipeline[5],
              json({{"type", "capacity"}, {"skipped", d.skipped}, {"allExhausted", false}}));
    EXPECT_EQ(d.pipeline[6], json({{"type", "rank"}, {"outcome", "fallback"}}));
    // Every eligible model at its limit: the best-ranked, all exhausted.
    for (const auto& c : plain.ranked) snap.at_limit.insert(c.model);
    d = E().Route(Modality::kImage, s, input, snap);
    EXPECT_EQ(d.Chosen()->model, plain.ranked[0].model);
    EXPECT_TRUE(d.all_exhausted);
    EXPECT_TRUE(d.skipped.empty());
    EXPECT_EQ(d.reason_code, "lowest_cost");
    // Without onCapacity the limit does not matter.
    s.on_capacity = false;
    d = E().Route(Modality::kImage, s, input, snap);
    EXPECT_EQ(d.Chosen()->model, plain.ranked[0].model);
    EXPECT_FALSE(d.capacity_mattered);
}

TEST(RoutingEngine, SettingsAreReadFromTheStoredForm) {
    const auto s = Settings::FromJson({{"schemaVersion", 1},
                                       {"models", {{"mode", "allowlist_only"}, {"ids", {"a"}}}},
                                       {"maxCreditsPerGeneration", {{"image", 5}}},
                                       {"optimizeFor", "quality"},
                                       {"fallback", {{"onCapacity", true}}}});
    EXPECT_EQ(s.optimize_for, OptimizeFor::kQuality);
    EXPECT_TRUE(s.allowlist_only);
    EXPECT_TRUE(s.ids.contains("a"));
    EXPECT_EQ(s.CapFor(Modality::kImage), 5);
    EXPECT_EQ(s.CapFor(Modality::kVideo), std::nullopt);
    EXPECT_TRUE(s.on_capacity);
    EXPECT_THROW(Settings::FromJson({{"optimizeFor", "speed"}}), std::runtime_error);
}

// ---- properties over random requests ----

json RandomVideo(std::mt19937& rng) {
    auto coin = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
    json in = json::object();
    if (coin(90)) in["promptText"] = std::string(1 + rng() % (coin(10) ? 6000 : 300), 'p');
    if (coin(40)) in["duration"] = 2 + static_cast<int>(rng() % 29);
    static const std::vector<std::string> aspects = {"16:9", "9:16", "1:1", "4:3", "3:4", "21:9"};
    static const std::vector<std::string> res = {"480p", "720p", "1080p", "4k"};
    if (coin(50)) in["aspectRatio"] = aspects[rng() % aspects.size()];
    if (coin(30)) in["resolution"] = res[rng() % res.size()];
    if (coin(30)) in["audio"] = coin(50);
    if (coin(20)) in["seed"] = static_cast<int>(rng() % 1000);
    if (coin(10)) in["negativePrompt"] = "blur";
    json images = json::array();
    if (coin(30)) images.push_back({{"uri", kImage}, {"role", "first"}});
    if (coin(15)) images.push_back({{"uri", kImage}, {"role", "last"}});
    if (coin(25)) images.push_back({{"uri", kImage}, {"role", "reference"}});
    if (!images.empty()) in["referenceImages"] = images;
    json videos = json::array();
    const bool source = coin(20);
    if (source) videos.push_back({{"uri", kVideo}, {"role", "source"}});
    if (coin(15)) videos.push_back({{"uri", kVideo}, {"role", "reference"}});
    if (!videos.empty()) in["referenceVideos"] = videos;
    if (coin(10)) in["referenceAudio"] = {{{"uri", kAudio}}};
    if (source && coin(30)) in["keyframes"] = {{{"uri", kImage}, {"seconds", 2}}};
    return in;
}

json RandomImage(std::mt19937& rng) {
    auto coin = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
    json in = {{"promptText", std::string(1 + rng() % (coin(10) ? 8000 : 300), 'p')}};
    static const std::vector<std::string> aspects = {"16:9", "9:16", "1:1", "4:3", "3:4",
                                                     "21:9", "2:3",  "3:2", "4:5", "5:4"};
    static const std::vector<std::string> tiers = {"1k", "2k", "4k"};
    if (coin(60)) in["aspectRatio"] = aspects[rng() % aspects.size()];
    if (coin(40)) in["resolution"] = tiers[rng() % tiers.size()];
    if (coin(30)) in["outputCount"] = 1 + static_cast<int>(rng() % 10);
    if (coin(15)) in["seed"] = 3;
    if (coin(40)) {
        json refs = json::array();
        for (unsigned i = 0; i <= rng() % 8; ++i) refs.push_back({{"uri", kImage}});
        in["referenceImages"] = refs;
    }
    return in;
}

json RandomAudio(std::mt19937& rng) {
    auto coin = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
    const bool speech = coin(60);
    json in = {{"type", speech ? "speech" : "audio"},
               {"promptText", std::string(1 + rng() % (coin(20) ? 3000 : 200), 'p')}};
    if (speech && coin(40)) in["voice"] = {{"type", "preset"}, {"presetId", "Bernard"}};
    if (speech && coin(20)) in["voice"] = {{"type", "reference-audio"}, {"audioUri", kAudio}};
    if (!speech && coin(40)) in["duration"] = 0.5 + (rng() % 59) / 2.0;
    if (!speech && coin(20)) in["loop"] = coin(50);
    if (coin(15)) in["referenceAudios"] = {{{"uri", kAudio}}};
    return in;
}

Settings RandomSettings(std::mt19937& rng, const std::vector<std::string>& models) {
    Settings s;
    s.optimize_for = static_cast<OptimizeFor>(rng() % 3);
    s.allowlist_only = rng() % 2 == 0;
    for (const auto& m : models) {
        if (rng() % 3 == 0) s.ids.insert(m);
    }
    if (rng() % 2 == 0) s.caps[Modality::kVideo] = 20 + rng() % 400;
    if (rng() % 2 == 0) s.caps[Modality::kImage] = 1 + rng() % 10;
    if (rng() % 2 == 0) s.caps[Modality::kAudio] = 1 + rng() % 10;
    s.on_capacity = rng() % 2 == 0;
    return s;
}

Snapshot RandomSnapshot(std::mt19937& rng, const std::vector<std::string>& models) {
    Snapshot snap;
    for (const auto& m : models) {
        if (rng() % 4 == 0) snap.at_limit.insert(m);
        if (rng() % 2 == 0)
            snap.latency[m] = {1.0 + rng() % 300, 1 + static_cast<long long>(rng() % 50)};
    }
    return snap;
}

TEST(RoutingEngineProperties, DecisionsHoldEveryRuleOverRandomRequests) {
    std::mt19937 rng(20261127);
    int routed = 0;
    int empty = 0;
    for (int i = 0; i < 1500; ++i) {
        const Modality modality = static_cast<Modality>(i % 3);
        const auto models = E().Models(modality);
        const json input = modality == Modality::kVideo   ? RandomVideo(rng)
                           : modality == Modality::kImage ? RandomImage(rng)
                                                          : RandomAudio(rng);
        const std::string schema = "generate_" + std::string(ModalityName(modality));
        ASSERT_TRUE(Schemas()->Validate(schema, {{"configId", "r"}, {"input", input}}).empty())
            << input.dump();
        const Settings s = RandomSettings(rng, models);
        const Snapshot snap = RandomSnapshot(rng, models);
        const Decision d = E().Route(modality, s, input, snap);
        // Every model is either ranked or excluded once.
        ASSERT_EQ(d.ranked.size() + d.excluded.size(), models.size()) << input.dump();
        for (const auto& c : d.ranked) {
            // The mapped body passes the model's schema, defaults and all.
            EXPECT_TRUE(Schemas()->Validate(c.endpoint, c.body).empty())
                << c.model << " " << c.body.dump();
            EXPECT_EQ(c.body.at("model"), c.model);
            // Allow and deny lists, and the price cap.
            EXPECT_EQ(s.ids.contains(c.model), s.allowlist_only) << c.model;
            if (const auto cap = s.CapFor(modality)) EXPECT_LE(c.per_output, *cap) << c.model;
        }
        // Ranked best first by the optimisation criterion.
        for (std::size_t k = 1; k < d.ranked.size(); ++k) {
            const auto& a = d.ranked[k - 1];
            const auto& b = d.ranked[k];
            switch (s.optimize_for) {
                case OptimizeFor::kCost:
                    EXPECT_LE(a.per_output, b.per_output);
                    break;
                case OptimizeFor::kLatency:
                    EXPECT_LE(a.latency, b.latency);
                    break;
                case OptimizeFor::kQuality:
                    EXPECT_GE(a.quality, b.quality);
                    break;
            }
        }
        // The same arguments decide the same (a dry run equals the real run).
        const Decision again = E().Route(modality, s, input, snap);
        EXPECT_EQ(RankedIds(again), RankedIds(d));
        EXPECT_EQ(again.chosen, d.chosen);
        EXPECT_EQ(again.pipeline, d.pipeline);
        EXPECT_EQ(again.reason, d.reason);
        if (d.Chosen() == nullptr) {
            ++empty;
            EXPECT_TRUE(d.emptied_by.has_value());
            EXPECT_TRUE(d.reason_code.empty());
            continue;
        }
        ++routed;
        // The capacity rule.
        const auto& chosen = *d.Chosen();
        if (s.on_capacity && !d.all_exhausted) EXPECT_FALSE(snap.at_limit.contains(chosen.model));
        if (!s.on_capacity || d.all_exhausted) EXPECT_EQ(*d.chosen, 0u);
        for (const auto& skipped : d.skipped) EXPECT_TRUE(snap.at_limit.contains(skipped));
    }
    // The generator reaches both outcomes often.
    EXPECT_GT(routed, 300);
    EXPECT_GT(empty, 100);
}

TEST(RoutingEngineProperties, ImprovingAModelNeverLowersItsRank) {
    // Latency: lowering a model's measured latency never moves it down.
    std::mt19937 rng(7);
    Settings s;
    s.optimize_for = OptimizeFor::kLatency;
    const json input = {{"promptText", "x"}};
    const auto models = E().Models(Modality::kVideo);
    for (int i = 0; i < 200; ++i) {
        Snapshot snap = RandomSnapshot(rng, models);
        snap.at_limit.clear();
        const auto before = E().Route(Modality::kVideo, s, input, snap);
        ASSERT_FALSE(before.ranked.empty());
        const auto& target = before.ranked[rng() % before.ranked.size()].model;
        auto position = [&](const Decision& d) {
            const auto ids = RankedIds(d);
            return std::find(ids.begin(), ids.end(), target) - ids.begin();
        };
        snap.latency[target] = {1.0, 20};  // much faster than any prior
        const auto after = E().Route(Modality::kVideo, s, input, snap);
        EXPECT_LE(position(after), position(before)) << target;
    }
    // Cost and quality: the order is the order of the criterion, so a model with a lower cost
    // (or higher quality) than another is always ranked before it.
    for (auto opt : {OptimizeFor::kCost, OptimizeFor::kQuality}) {
        s.optimize_for = opt;
        const auto d = E().Route(Modality::kImage, s, {{"promptText", "a cat"}}, {});
        for (std::size_t a = 0; a < d.ranked.size(); ++a) {
            for (std::size_t b = a + 1; b < d.ranked.size(); ++b) {
                if (opt == OptimizeFor::kCost) {
                    EXPECT_LE(d.ranked[a].per_output, d.ranked[b].per_output);
                } else {
                    EXPECT_GE(d.ranked[a].quality, d.ranked[b].quality);
                }
            }
        }
    }
    EXPECT_DOUBLE_EQ(BlendedLatency(100, nullptr), 100);
    const LatencySample measured{10, 20};
    EXPECT_NEAR(BlendedLatency(100, &measured), (300 + 200) / 23.0, 1e-9);
}

}  // namespace
}  // namespace genhost::routing
