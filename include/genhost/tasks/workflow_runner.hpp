// genhost/tasks/workflow_runner.hpp
//
// Provides WorkflowRunner, the `workflow_invocation` job kind of the job engine (job_engine.hpp):
// it runs one workflow invocation (store/workflows_repo.hpp, docs/workflows.md), a step at a
// time, on any node. A step reads the invocation with its nodes' tasks as they stand, then
// - records the end of every node whose task ended (SUCCEEDED with the task's output names;
//   FAILED with the task's failure, or "cancelled"; a task that is gone fails its node);
// - skips every waiting node an upstream node failed or skipped, with "an upstream node failed";
// - starts every waiting node whose upstream nodes all succeeded: its planned input, each field
//   fed by an upstream node set to an output reference (OutputReference) to that node's first
//   output, priced by the catalog (at the maxima its inputs allow: they are not probed), stored
//   as an ordinary task with TaskRepo::CreateSync under the task id fixed when the invocation
//   was made, so billing, limits and the queue apply as to any task. A refusal (daily limit,
//   credits, spend cap) fails the node;
// - ends the invocation when no node is waiting or running: SUCCEEDED when at least one output
//   node (a generation node no other node takes from) succeeded, else CANCELLED when every node
//   that failed was cancelled, else FAILED with the first failed node's error and code.
// Otherwise it answers Wait (kStepSeconds) and runs again when a node's task ends (a trigger
// wakes its job) or after that wait. A step is idempotent: a node's task id
// is fixed before the task exists, a task found for a waiting node is taken as its node's, and
// every change is a compare-and-set on the node's or the invocation's status.
//
// Also provides OutputReferences, the providers::InputResolver that reads output references: a
// task input may name another task's stored output as `genhost-output:<task id>/<object name>`
// (only this runner writes them; API callers cannot, since their media strings must be https:,
// genhost:// or data:). The object is copied from the output store into the run's scratch
// folder; anything else goes to the wrapped resolver.
//
// The plan (the invocation's `plan` column, written by api/workflows.hpp):
//   {"nodes": [{"id", "name", "endpoint", "model", "taskId", "input": {...},
//               "feeds": [{"node": upstream node id, "pointer": "/promptImage"}],
//               "limitKey", "maxConcurrent", "maxDaily", "maxSpend"}]}
// in graph order; `input` has the primitives' values in place and the defaults filled in.
#pragma once

#include "genhost/catalog/catalog.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/providers/provider.hpp"
#include "genhost/store/tasks_repo.hpp"
#include "genhost/store/workflows_repo.hpp"
#include "genhost/tasks/job_engine.hpp"
#include "genhost/tasks/job_kinds.hpp"

#include <string>
#include <string_view>

namespace genhost::tasks {

inline constexpr std::string_view kOutputReferenceScheme = "genhost-output:";

// OutputReference is the media string naming object `name` of task `task_id`'s outputs.
std::string OutputReference(std::string_view task_id, std::string_view name);

class OutputReferences : public providers::InputResolver {
  public:
    // `inner` resolves every other media string; `outputs` holds the referenced objects.
    OutputReferences(const providers::InputResolver& inner, outputs::OutputStore& outputs);

    // Resolve copies a referenced output into `scratch_dir` (TaskFailure ASSET.INVALID when the
    // reference is malformed or the object is gone), else asks the wrapped resolver.
    std::string Resolve(const std::string& media, MediaKind kind,
                        const std::string& scratch_dir) const override;

  private:
    const providers::InputResolver& inner_;
    outputs::OutputStore& outputs_;
};

class WorkflowRunner {
  public:
    // The next step comes as soon as a node's task ends (the trigger tasks_wake_workflows wakes
    // the job, migration 0016); this wait is only the safety net.
    static constexpr double kStepSeconds = 30;

    WorkflowRunner(store::WorkflowRepo& workflows, store::TaskRepo& tasks,
                   const catalog::Catalog& catalog);

    // Kind is the `workflow_invocation` job kind.
    JobKind Kind();

    // StepSync advances invocation `id` one step: Done once it has ended (or is gone), else
    // Wait(kStepSeconds). Throws for faults of the database (the engine retries).
    JobResult StepSync(const std::string& id);

  private:
    store::WorkflowRepo& workflows_;
    store::TaskRepo& tasks_;
    const catalog::Catalog& catalog_;
};

}  // namespace genhost::tasks
