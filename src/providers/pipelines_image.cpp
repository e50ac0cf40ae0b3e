// Image pipelines of the builtin provider: text_to_image and image_upscale.
#include "pipelines.hpp"

#include "genhost/media/image.hpp"

namespace genhost::providers {

std::vector<Output> TextToImage(const PipelineEnv& env, TaskContext& ctx) {
    const auto& input = ctx.input();
    int width = 0;
    int height = 0;
    if (!ParseRatio(input.value("ratio", ""), width, height)) NotImplemented(ctx);
    SimulateLatency(env, ctx, 0.0, 0.9);
    const int count = input.value("outputCount", 1);
    const std::uint64_t seed = SeedFor(ctx);
    std::vector<Output> outputs;
    for (int i = 0; i < count; ++i) {
        ctx.CheckCancelled();
        media::ImageSpec spec;
        spec.width = width;
        spec.height = height;
        spec.seed = seed + static_cast<std::uint64_t>(i);
        spec.prompt = input.value("promptText", "");
        const bool jpeg = input.value("outputFormat", "png") == "jpeg";
        spec.format = jpeg ? media::ImageFormat::kJpeg : media::ImageFormat::kPng;
        outputs.push_back(
            Output{std::to_string(i) + (jpeg ? ".jpg" : ".png"), media::RenderImage(spec), {}});
        ctx.Progress(0.9 + 0.1 * (i + 1) / count);
    }
    return outputs;
}

std::vector<Output> ImageUpscale(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

}  // namespace genhost::providers
