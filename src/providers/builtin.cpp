#include "genhost/providers/builtin.hpp"

#include "genhost/core/crypto.hpp"
#include "pipelines.hpp"

#include <map>

#include <charconv>
#include <chrono>
#include <thread>

namespace genhost::providers {

BuiltinProvider::BuiltinProvider(const catalog::Catalog& catalog, double latency_scale)
    : env_{catalog, latency_scale} {}

std::uint64_t SeedFor(const TaskContext& ctx) {
    const auto& input = ctx.input();
    // A seed parsed from JSON text is unsigned; one set in code (json{{"seed", 42}}) is signed.
    const auto requested = input.find("seed");
    if (requested != input.end() && requested->is_number_integer() &&
        (requested->is_number_unsigned() || requested->get<std::int64_t>() >= 0)) {
        return requested->get<std::uint64_t>();
    }
    const auto digest = Sha256(ctx.task_id());
    std::uint64_t seed = 0;
    for (int i = 0; i < 4; ++i) seed = (seed << 8) | digest[i];
    return seed;  // 0 .. 2^32-1, like a requested seed
}

bool ParseRatio(std::string_view ratio, int& width, int& height) {
    const auto colon = ratio.find(':');
    if (colon == std::string_view::npos) return false;
    const auto a = ratio.substr(0, colon);
    const auto b = ratio.substr(colon + 1);
    const auto ra = std::from_chars(a.data(), a.data() + a.size(), width);
    const auto rb = std::from_chars(b.data(), b.data() + b.size(), height);
    return ra.ec == std::errc() && ra.ptr == a.data() + a.size() && rb.ec == std::errc() &&
           rb.ptr == b.data() + b.size() && width > 0 && height > 0;
}

void SimulateLatency(const PipelineEnv& env, TaskContext& ctx, double from, double to) {
    const auto* model = env.catalog.FindModel(ctx.model());
    const double seconds = model ? model->typical_latency_seconds * env.latency_scale : 0;
    if (seconds <= 0) {
        ctx.CheckCancelled();
        ctx.Progress(to);
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    const auto total = std::chrono::duration<double>(seconds);
    for (;;) {
        ctx.CheckCancelled();
        const auto elapsed = std::chrono::steady_clock::now() - start;
        const double f = std::min(1.0, elapsed / total);
        ctx.Progress(from + (to - from) * f);
        if (f >= 1.0) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

[[noreturn]] void NotImplemented(const TaskContext& ctx) {
    throw TaskFailure("INTERNAL", "The builtin provider cannot run " + ctx.endpoint() + " (" +
                                      ctx.model() +
                                      ") yet; configure another provider for this model");
}

std::vector<Output> BuiltinProvider::Run(TaskContext& ctx) {
    // The pipeline of every endpoint: one entry each, implemented in pipelines_<family>.cpp.
    using Pipeline = std::vector<Output> (*)(const PipelineEnv&, TaskContext&);
    static const std::map<std::string, Pipeline, std::less<>> kPipelines = {
        {"text_to_image", &TextToImage},
        {"image_upscale", &ImageUpscale},
        {"text_to_video", &TextToVideo},
        {"image_to_video", &ImageToVideo},
        {"video_to_video", &VideoToVideo},
        {"video_upscale", &VideoUpscale},
        {"video_to_hdr", &VideoToHdr},
        {"character_performance", &CharacterPerformance},
        {"avatar_videos", &AvatarVideos},
        {"text_to_speech", &TextToSpeech},
        {"speech_to_speech", &SpeechToSpeech},
        {"sound_effect", &SoundEffect},
        {"voice_isolation", &VoiceIsolation},
        {"voice_dubbing", &VoiceDubbing},
        {"recipe_ad_localization", &Recipe},
        {"recipe_marketing_stock_image", &Recipe},
        {"recipe_multi_shot_video", &Recipe},
        {"recipe_product_ad", &Recipe},
        {"recipe_product_campaign_image", &Recipe},
        {"recipe_product_swap", &Recipe},
        {"recipe_product_ugc", &Recipe},
    };
    const auto it = kPipelines.find(ctx.endpoint());
    if (it == kPipelines.end()) NotImplemented(ctx);
    return it->second(env_, ctx);
}

}  // namespace genhost::providers
