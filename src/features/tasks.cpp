// The tasks and generation feature (docs/tasks.md, docs/providers.md, docs/moderation.md): the
// providers (the builtin one and the HTTP providers of GENHOST_PROVIDERS_FILE), moderation, the
// task queue's workers (a unit of the runtime), the retention sweep, the task routes and the
// channels that wake and cancel this node's workers.
#include "genhost/api/tasks_routes.hpp"
#include "genhost/features/node.hpp"
#include "genhost/providers/builtin.hpp"
#include "genhost/providers/http_provider.hpp"
#include "genhost/providers/provider_config.hpp"
#include "genhost/tasks/moderation.hpp"
#include "genhost/tasks/retention_sweeper.hpp"
#include "genhost/tasks/worker_pool.hpp"
#include "genhost/tasks/workflow_runner.hpp"

#include <spdlog/spdlog.h>

#include <set>

namespace genhost::features {

void WireTasks(Node& node) {
    const config::Settings& s = node.settings();
    const auto& catalog = node.catalog();
    auto& builtin = node.Own<providers::BuiltinProvider>(*catalog, s.latency_scale);
    std::map<std::string, providers::Provider*> providers{{"builtin", &builtin}};
    std::set<std::string> names{"builtin"};
    for (auto& o : providers::ParseProviders(
             s.providers, s.providers_file.empty() ? "" : ReadSettingsFile(s.providers_file))) {
        spdlog::info("provider {} at {}", o.name, o.url);
        auto& provider = node.Own<providers::HttpProvider>(std::move(o), *catalog);
        providers[provider.name()] = &provider;
        names.insert(provider.name());
    }
    for (const auto& [model, provider] : providers::UnservedModels(*catalog, names)) {
        spdlog::warn(
            "model {} is served by provider {}, which is not configured: its tasks will fail "
            "with INTERNAL",
            model, provider);
    }
    // Moderation before any provider runs.
    const auto moderation = tasks::Moderator::Load(s.moderation_file.empty()
                                                       ? EmbeddedResource("schemas/moderation.json")
                                                       : ReadSettingsFile(s.moderation_file));
    node.Keep(moderation);

    tasks::WorkerOptions o;
    o.owner = node.owner();
    o.workers = s.role == "api" ? 0 : s.workers;
    o.lease_seconds = s.lease_seconds;
    o.max_attempts = s.max_attempts;
    o.scratch_root = node.scratch_root();
    // Tasks of workflow nodes may name an upstream task's output (docs/workflows.md).
    o.inputs = &node.Own<tasks::OutputReferences>(
        node.Need(node.inputs, "the media inputs (uploads)"), node.outputs());
    o.nice = s.worker_nice;
    o.metrics = &node.metrics().Registry();
    o.moderation = moderation.get();
    auto& workers =
        node.Own<tasks::WorkerPool>(o, node.tasks(), *catalog, providers, node.outputs(),
                                    [catalog](int tier, const std::string& model) {
                                        return api::LimitsFor(*catalog, tier, model).max_concurrent;
                                    });
    node.runtime().AddUnit({"task queue", [&workers] { workers.Start(); },
                            [&workers](const core::Deadline& d) { workers.Stop(d); }});

    tasks::RetentionOptions retention;
    retention.retention = std::chrono::seconds(static_cast<long long>(s.task_retention_seconds));
    retention.interval =
        std::chrono::milliseconds(static_cast<long>(s.upload_sweep_interval_seconds * 1000));
    auto& sweeper = node.Own<tasks::RetentionSweeper>(retention, node.tasks(), node.outputs());
    if (sweeper.Enabled()) {
        node.runtime().Every("task retention sweep", retention.interval,
                             [&sweeper] { sweeper.SweepOnce(); });
    }

    node.Subscribe("genhost_tasks", [&workers](const std::string&) { workers.Wake(); });
    node.Subscribe("genhost_cancel",
                   [&workers](const std::string& id) { workers.CancelLocal(id); });
    node.Gauges([&workers] {
        return std::vector<http::Sample>{
            {"genhost_workers_running",
             "Tasks running in this process.",
             {},
             static_cast<double>(workers.Running())},
            {"genhost_worker_runs_abandoned_total",
             "Task runs of this process stopped because their lease was lost, since it started.",
             {},
             static_cast<double>(workers.Abandoned()),
             true}};
    });
    node.Routes(api::RegisterTaskRoutes);
}

}  // namespace genhost::features
