// genhost/store/workflows_repo.hpp
//
// Provides WorkflowRepo: the workflows, their versions and their invocations of
// migrations/0015_workflows.sql (docs/workflows.md).
//
// - Publishing (operators: the CLI and POST /_genhost/workflows) adds the next version of a
//   workflow of an organization, creating the workflow on its first publication; every version
//   is kept. The API lists the workflows with their versions and reads one version.
// - Creating an invocation stores its plan and one row per generation node, each with the id its
//   task will have, and queues its job (kind `workflow_invocation`) in the same transaction. The
//   job (tasks/workflow_runner.hpp) reads the invocation with its nodes' tasks as they stand
//   (LoadSync) and moves nodes and the invocation on by compare-and-set on their status, so a
//   step that runs twice (its node died mid-step) changes nothing twice.
//
// Every read is scoped to an organization: a foreign id is not found. Awaitable methods are for
// I/O-thread coroutines, *Sync ones for job runners and the command line.
// Errors: DatabaseUnavailable when the database is unreachable; std::runtime_error for
// unexpected SQL failures. Ids that are not UUIDs are reported as not found, never sent to SQL.
#pragma once

#include "genhost/core/clock.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/tasks_repo.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

// WorkflowVersionRecord is one published version, as GET /v1/workflows/{id} shows it.
struct WorkflowVersionRecord {
    std::string id;  // the version's id
    std::string workflow_id;
    std::string org_id;
    std::string name;
    std::optional<std::string> description;  // as published with this version
    int version = 0;                         // 1, 2, ... per workflow
    std::string graph_json;
    SysTime created_at;  // the workflow's first publication
    SysTime updated_at;  // this version's publication
};

// WorkflowVersionRef is a version in the list.
struct WorkflowVersionRef {
    std::string id;
    int version = 0;
    SysTime created_at;  // its publication
};

// WorkflowSummary is a workflow in the list, with its versions newest first.
struct WorkflowSummary {
    std::string name;
    std::vector<WorkflowVersionRef> versions;
};

// NewWorkflowVersion is a publication: the version of workflow `name` of `org_id` after the
// newest (1 for a new name).
struct NewWorkflowVersion {
    std::string id;  // the new version's id
    std::string org_id;
    std::string name;
    std::optional<std::string> description;
    std::string graph_json;  // validated (api/workflows.hpp)
};

// InvocationStatus is where an invocation is; stored as its word (InvocationStatusName).
enum class InvocationStatus { kPending, kRunning, kSucceeded, kFailed, kCancelled };
std::string_view InvocationStatusName(InvocationStatus status);

// NodeStatus is where a generation node of an invocation is (migration 0015).
enum class NodeStatus { kWaiting, kRunning, kSucceeded, kFailed, kSkipped };
std::string_view NodeStatusName(NodeStatus status);

// NewInvocationNode is a generation node of a new invocation.
struct NewInvocationNode {
    std::string node_id;
    std::string name;
    int position = 0;
    std::string task_id;  // the id its task will have (its inputs are already in its folder)
};

// NewInvocation is what POST /v1/workflows/{id} stores (PENDING).
struct NewInvocation {
    std::string id;
    std::string org_id;
    std::string version_id;
    std::string plan_json;       // tasks/workflow_runner.hpp reads it
    std::string overrides_json;  // the request's nodeOutputs, for operators
    std::vector<NewInvocationNode> nodes;
};

// InvocationNode is a generation node's state, and its task's as it stands (LoadSync only).
struct InvocationNode {
    std::string node_id;
    std::string name;
    int position = 0;
    NodeStatus status = NodeStatus::kWaiting;
    std::string task_id;
    std::vector<std::string> outputs;  // kSucceeded: its task's output names
    std::string error;                 // kFailed, kSkipped
    std::string error_code;            // kFailed

    // LoadSync: the task `task_id` when it exists (deleted or not).
    std::optional<TaskStatus> task_status;
    double task_progress = 0;
    std::vector<std::string> task_outputs;
    std::string task_failure;
    std::string task_failure_code;
};

// InvocationRecord is an invocation with its nodes in graph order.
struct InvocationRecord {
    std::string id;
    std::string org_id;
    std::string version_id;
    InvocationStatus status = InvocationStatus::kPending;
    std::string plan_json;  // LoadSync only
    double progress = 0;
    std::optional<std::string> failure;
    std::optional<std::string> failure_code;
    SysTime created_at;
    std::vector<InvocationNode> nodes;
};

// NodeEnd is how a node ends (FinishNodeSync).
struct NodeEnd {
    NodeStatus status = NodeStatus::kSucceeded;  // kSucceeded, kFailed or kSkipped
    std::vector<std::string> outputs;            // kSucceeded
    std::string error;
    std::string error_code;
};

class WorkflowRepo {
  public:
    explicit WorkflowRepo(Database& db) : db_(db) { Prepare(db); }
    static void Prepare(Database& db);

    // Publish stores the next version of `v.name` (creating the workflow) and returns it.
    boost::asio::awaitable<WorkflowVersionRecord> Publish(NewWorkflowVersion v);
    WorkflowVersionRecord PublishSync(const NewWorkflowVersion& v);

    // List returns the organization's workflows, newest first, each with its versions newest
    // first.
    boost::asio::awaitable<std::vector<WorkflowSummary>> List(std::string org_id);

    // GetVersion returns version `id` of one of the organization's workflows.
    boost::asio::awaitable<std::optional<WorkflowVersionRecord>> GetVersion(std::string org_id,
                                                                            std::string id);

    // CreateInvocation stores `inv` PENDING with its nodes WAITING and queues its job; returns
    // its creation time.
    boost::asio::awaitable<SysTime> CreateInvocation(NewInvocation inv);

    // GetInvocation returns invocation `id` of the organization, its nodes as the job recorded
    // them (no task state, no plan).
    boost::asio::awaitable<std::optional<InvocationRecord>> GetInvocation(std::string org_id,
                                                                          std::string id);

    // LoadSync returns invocation `id` with its plan, and its nodes with their tasks as they
    // stand; nullopt when it is gone.
    std::optional<InvocationRecord> LoadSync(const std::string& id);

    // MarkRunningSync moves a PENDING invocation to RUNNING (false: it was not PENDING).
    bool MarkRunningSync(const std::string& id);

    // MarkNodeRunningSync moves a WAITING node to RUNNING once its task exists (false: it was
    // not WAITING).
    bool MarkNodeRunningSync(const std::string& id, const std::string& node_id);

    // FinishNodeSync ends a node that is `from` (WAITING or RUNNING) as `end` says (false: it
    // was not `from`).
    bool FinishNodeSync(const std::string& id, const std::string& node_id, NodeStatus from,
                        const NodeEnd& end);

    // SetProgressSync records the progress (0..1) of a RUNNING invocation.
    void SetProgressSync(const std::string& id, double progress);

    // FinishSync ends a PENDING or RUNNING invocation as `status` (kSucceeded, kFailed or
    // kCancelled); `failure` and `failure_code` only with kFailed. False when it had ended.
    bool FinishSync(const std::string& id, InvocationStatus status, const std::string& failure,
                    const std::string& failure_code);

  private:
    Database& db_;
};

}  // namespace genhost::store
