#include "genhost/providers/builtin.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/media/image.hpp"

#include <charconv>
#include <chrono>
#include <thread>

namespace genhost::providers {

BuiltinProvider::BuiltinProvider(const catalog::Catalog& catalog, double latency_scale)
    : catalog_(catalog), latency_scale_(latency_scale) {}

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

void BuiltinProvider::SimulateLatency(TaskContext& ctx, double from, double to) {
    const auto* model = catalog_.FindModel(ctx.model());
    const double seconds = model ? model->typical_latency_seconds * latency_scale_ : 0;
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

std::vector<Output> BuiltinProvider::Run(TaskContext& ctx) {
    if (ctx.endpoint() == "text_to_image") return TextToImage(ctx);
    throw TaskFailure("INTERNAL", "The builtin provider cannot run " + ctx.endpoint() +
                                      " yet; configure another provider for model " + ctx.model());
}

std::vector<Output> BuiltinProvider::TextToImage(TaskContext& ctx) {
    const auto& input = ctx.input();
    int width = 0;
    int height = 0;
    if (!ParseRatio(input.value("ratio", ""), width, height)) {
        throw TaskFailure("INTERNAL", "unusable ratio in a validated request");
    }
    SimulateLatency(ctx, 0.0, 0.9);
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
            Output{std::to_string(i) + (jpeg ? ".jpg" : ".png"), media::RenderImage(spec)});
        ctx.Progress(0.9 + 0.1 * (i + 1) / count);
    }
    return outputs;
}

}  // namespace genhost::providers
