// genhost/tasks/retention_sweeper.hpp
//
// Provides RetentionSweeper, the background job that ends the life of finished tasks: a task
// that finished (SUCCEEDED, FAILED or CANCELLED) more than `retention` ago is deleted with its
// stored outputs, so the disk or bucket stays bounded; GET /v1/tasks/{id} then answers 404, as
// after DELETE. Outputs go first and the row after, so a process that dies between the two
// leaves a row whose outputs the next sweep deletes again (deleting is idempotent); several
// nodes sweeping at once do the same harmless work twice. A zero retention keeps tasks forever.
// Every node runs it on its runtime's schedule (docs/outputs.md, tasks/runtime.hpp).
#pragma once

#include "genhost/outputs/output_store.hpp"
#include "genhost/store/tasks_repo.hpp"

#include <chrono>

namespace genhost::tasks {

struct RetentionOptions {
    std::chrono::seconds retention{std::chrono::hours(24 * 30)};
    std::chrono::milliseconds interval{60000};
    int batch = 500;
};

class RetentionSweeper {
  public:
    RetentionSweeper(RetentionOptions options, store::TaskRepo& repo,
                     outputs::OutputStore& outputs);

    // Enabled: retention is not 0 (a zero retention keeps tasks forever: nothing to schedule).
    bool Enabled() const { return options_.retention.count() > 0; }

    // SweepOnce deletes every retired task and its outputs now; returns how many tasks it
    // deleted. Throws what the repository throws.
    int SweepOnce();

  private:
    RetentionOptions options_;
    store::TaskRepo& repo_;
    outputs::OutputStore& outputs_;
};

}  // namespace genhost::tasks
