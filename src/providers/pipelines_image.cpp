// Image pipelines of the builtin provider: text_to_image and image_upscale.
#include "pipelines.hpp"

#include "edit_filters.hpp"
#include "genhost/media/image.hpp"

#include <algorithm>
#include <cmath>

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

// image_upscale: the input decoded to RGB, enhanced at its own resolution (flavor, ultraDetail,
// sharpen), scaled by scaleFactor with swscale's Lanczos filter, grained at the output
// resolution (smartGrain) and written as a PNG. The output's long side is capped at
// kMaxUpscaleSide (SPEC.md's asset limit: each side at most 8000 px), keeping the aspect.
std::vector<Output> ImageUpscale(const PipelineEnv& env, TaskContext& ctx) {
    constexpr int kMaxUpscaleSide = 8000;
    const auto& input = ctx.input();
    const std::string path = ctx.Input(input.value("imageUri", ""), MediaKind::kImage);
    SimulateLatency(env, ctx, 0.0, 0.5);
    media::RgbImage image = edit::LoadImage(path, "imageUri", kMaxUpscaleSide, kMaxUpscaleSide);
    ctx.CheckCancelled();
    ctx.Progress(0.6);

    const int factor = std::clamp(input.value("scaleFactor", 2), 1, 16);
    const int long_side = std::max(image.width, image.height);
    const double scale =
        std::min(static_cast<double>(factor), static_cast<double>(kMaxUpscaleSide) / long_side);
    const int out_w =
        std::clamp(static_cast<int>(std::lround(image.width * scale)), 1, kMaxUpscaleSide);
    const int out_h =
        std::clamp(static_cast<int>(std::lround(image.height * scale)), 1, kMaxUpscaleSide);

    // Enhancement at the source resolution: the Lanczos scale then carries it to the output.
    const std::string flavor = input.value("flavor", "");
    if (flavor == "photo_denoiser") edit::Denoise(image, 0.8);
    if (flavor == "sublime") edit::Look(image, 1.08, 1.04);
    const double ultra = input.value("ultraDetail", 0) / 100.0;
    edit::DetailBoost(image, ultra, 0.6 * ultra);
    ctx.CheckCancelled();
    edit::UnsharpMask(image, 1, 1.5 * input.value("sharpen", 0) / 100.0);
    ctx.CheckCancelled();
    ctx.Progress(0.7);

    media::RgbImage out = edit::LanczosResize(image, out_w, out_h);
    image = {};
    ctx.CheckCancelled();
    ctx.Progress(0.8);
    const double grain = input.value("smartGrain", 0) / 100.0;
    if (grain > 0) edit::Grain(SeedFor(ctx)).Apply(out, grain, 0);
    ctx.CheckCancelled();
    const std::string file = edit::OutputPath(ctx, "image_upscale.png");
    edit::WriteFile(file, edit::EncodePng(out));
    ctx.Progress(1.0);
    return {Output{"0.png", {}, file}};
}

}  // namespace genhost::providers
