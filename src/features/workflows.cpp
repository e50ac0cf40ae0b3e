// The workflows feature (docs/workflows.md): workflows and their invocations. An invocation
// advances on the `workflows` lane in short steps, woken when a node's task ends (NOTIFY), with
// the task lease, so an invocation whose node died mid-step goes on elsewhere as soon as a task
// would.
#include "genhost/api/workflows_routes.hpp"
#include "genhost/features/node.hpp"
#include "genhost/store/workflows_repo.hpp"
#include "genhost/tasks/job_kinds.hpp"
#include "genhost/tasks/workflow_runner.hpp"

namespace genhost::features {

void WireWorkflows(Node& node) {
    auto& repo = node.Own<store::WorkflowRepo>(node.db());
    auto& runner = node.Own<tasks::WorkflowRunner>(repo, node.tasks(), *node.catalog());
    tasks::LaneOptions lane;
    lane.name = "workflows";
    lane.runners = 2;
    lane.lease_seconds = node.settings().lease_seconds;
    node.runtime().AddLane(lane);
    node.runtime().AddKind("workflows", tasks::kWorkflowJobKind, runner.Kind());
    node.app().workflows.repo = &repo;
    node.app().workflows.kick = node.runtime().Kicker("workflows");
    node.Routes(api::RegisterWorkflowRoutes);
}

}  // namespace genhost::features
