// genhost/providers/builtin.hpp
//
// Provides BuiltinProvider: real media made on this machine with FFmpeg's libraries,
// deterministic for a given seed and input. It can take as long as the model's typical latency
// (scaled by `latency_scale`, 0 = as fast as the machine allows) so users can rehearse real
// timing; progress rises from 0 to 1 meanwhile and cancellation is honoured within ~50 ms.
//
// Endpoints it does not implement yet end FAILED with INTERNAL and a message saying so.
#pragma once

#include "genhost/catalog/catalog.hpp"
#include "genhost/providers/provider.hpp"

namespace genhost::providers {

class BuiltinProvider final : public Provider {
  public:
    BuiltinProvider(const catalog::Catalog& catalog, double latency_scale);

    std::vector<Output> Run(TaskContext& ctx) override;

    // PipelineEnv is what every builtin pipeline may use besides its task.
    struct Env {
        const catalog::Catalog& catalog;
        double latency_scale;
    };

  private:
    Env env_;
};

// SeedFor returns the task's seed: the request's `seed` when given, otherwise one derived from
// the task id (so a retried task makes the same output).
std::uint64_t SeedFor(const TaskContext& ctx);

// ParseRatio reads "W:H" into width and height; false if malformed.
bool ParseRatio(std::string_view ratio, int& width, int& height);

}  // namespace genhost::providers
