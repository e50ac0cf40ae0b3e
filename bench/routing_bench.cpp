// One routing decision over the whole shipped catalog (genhost::routing::Engine::Route):
// mapping the input onto every model of the modality, the five filters (schema validation of
// every mapped body included), pricing, ranking and the capacity step. The goal is under 50 us
// per decision (docs/performance.md, "Model routers").
//   build/release/bench/routing_bench [--benchmark_min_time=1]
#include "genhost/api/app.hpp"
#include "genhost/routing/engine.hpp"

#include <benchmark/benchmark.h>

namespace {

using genhost::routing::Engine;
using genhost::routing::Modality;
using genhost::routing::OptimizeFor;
using genhost::routing::Settings;
using genhost::routing::Snapshot;
using nlohmann::json;

const Engine& TheEngine() {
    static const Engine engine(genhost::catalog::Catalog::LoadEmbedded(),
                               genhost::api::LoadEmbeddedSchemas());
    return engine;
}

Snapshot SomeSnapshot() {
    Snapshot s;
    for (auto m : {Modality::kVideo, Modality::kImage, Modality::kAudio}) {
        int i = 0;
        for (const auto& id : TheEngine().Models(m)) {
            s.latency[id] = {10.0 + i, 5 + i};
            if (++i % 4 == 0) s.at_limit.insert(id);
        }
    }
    return s;
}

void Route(benchmark::State& state, Modality modality, const json& input, OptimizeFor opt,
           bool on_capacity) {
    Settings settings;
    settings.optimize_for = opt;
    settings.on_capacity = on_capacity;
    const Snapshot snapshot = SomeSnapshot();
    std::size_t ranked = 0;
    for (auto _ : state) {
        const auto d = TheEngine().Route(modality, settings, input, snapshot);
        ranked = d.ranked.size();
        benchmark::DoNotOptimize(d.chosen);
    }
    state.counters["models"] = static_cast<double>(TheEngine().Models(modality).size());
    state.counters["eligible"] = static_cast<double>(ranked);
}

void BM_RouteVideoText(benchmark::State& state) {
    Route(state, Modality::kVideo, {{"promptText", "a red fox running through snow at dawn"}},
          OptimizeFor::kCost, false);
}
void BM_RouteVideoOptions(benchmark::State& state) {
    Route(state, Modality::kVideo,
          {{"promptText", "a red fox running through snow at dawn"},
           {"duration", 8},
           {"aspectRatio", "9:16"},
           {"resolution", "1080p"},
           {"audio", true},
           {"referenceImages", {{{"uri", "https://example.com/a.png"}, {"role", "first"}}}}},
          OptimizeFor::kLatency, true);
}
void BM_RouteImage(benchmark::State& state) {
    Route(state, Modality::kImage,
          {{"promptText", "a lighthouse at dusk"}, {"aspectRatio", "16:9"}, {"outputCount", 2}},
          OptimizeFor::kQuality, true);
}
void BM_RouteSpeech(benchmark::State& state) {
    Route(state, Modality::kAudio,
          {{"type", "speech"},
           {"promptText", "Welcome to the harbour tour."},
           {"voice", {{"type", "preset"}, {"presetId", "Maya"}}}},
          OptimizeFor::kCost, false);
}

BENCHMARK(BM_RouteVideoText)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RouteVideoOptions)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RouteImage)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RouteSpeech)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
