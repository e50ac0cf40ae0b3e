#include "genhost/store/workflows_repo.hpp"

#include "genhost/core/ids.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <stdexcept>

namespace genhost::store {

namespace {

constexpr const char* kPublish = "workflows_publish";
// A new name takes version 1 and leaves next_version at 2; a known one takes its next_version
// and moves it on. The row lock of ON CONFLICT DO UPDATE orders concurrent publications of one
// name, and the update reads the latest row: two never take the same version.
constexpr const char* kPublishSql =
    "WITH w AS ("
    "  INSERT INTO workflows AS w (id, org_id, name, next_version) VALUES ($2, $3, $4, 2)"
    "  ON CONFLICT (org_id, name) DO UPDATE"
    "    SET next_version = w.next_version + 1, updated_at = clock_timestamp()"
    "  RETURNING w.id, w.created_at, w.next_version - 1 AS version)"
    " INSERT INTO workflow_versions (id, workflow_id, version, description, graph, created_at)"
    " SELECT $1, w.id, w.version, CASE WHEN $5 THEN $6::text END, $7::jsonb,"
    "        CASE WHEN w.version = 1 THEN w.created_at ELSE clock_timestamp() END FROM w"
    " RETURNING workflow_id::text, version,"
    " (extract(epoch FROM (SELECT created_at FROM w)) * 1000000)::bigint,"
    " (extract(epoch FROM created_at) * 1000000)::bigint";
constexpr const char* kList = "workflows_list";
constexpr const char* kListSql =
    "SELECT w.name, v.id::text, v.version, (extract(epoch FROM v.created_at) * 1000000)::bigint"
    " FROM workflows w JOIN workflow_versions v ON v.workflow_id = w.id"
    " WHERE w.org_id = $1 ORDER BY w.created_at DESC, w.id DESC, v.version DESC";
constexpr const char* kGetVersion = "workflows_get_version";
constexpr const char* kGetVersionSql =
    "SELECT v.id::text, w.id::text, w.org_id::text, w.name, v.description, v.version,"
    " v.graph::text, (extract(epoch FROM w.created_at) * 1000000)::bigint,"
    " (extract(epoch FROM v.created_at) * 1000000)::bigint"
    " FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id"
    " WHERE v.id = $1 AND w.org_id = $2";
constexpr const char* kCreateInvocation = "workflows_create_invocation";
constexpr const char* kCreateInvocationSql =
    "WITH i AS ("
    "  INSERT INTO workflow_invocations (id, org_id, version_id, status, plan, overrides)"
    "  VALUES ($1, $2, $3, 'PENDING', $4::jsonb, $5::jsonb) RETURNING id, created_at),"
    " n AS ("
    "  INSERT INTO workflow_invocation_nodes (invocation_id, node_id, position, name, task_id)"
    "  SELECT i.id, x.node_id, x.position, x.name, x.task_id::uuid FROM i,"
    "    jsonb_to_recordset($6::jsonb) AS x(node_id text, position integer, name text,"
    "                                       task_id text))"
    " SELECT (extract(epoch FROM created_at) * 1000000)::bigint FROM i";
// The invocation's columns, then its nodes as one JSON array of arrays in graph order.
constexpr const char* kInvocationColumns =
    "i.id::text, i.org_id::text, i.version_id::text, i.status, i.progress, i.failure,"
    " i.failure_code, (extract(epoch FROM i.created_at) * 1000000)::bigint";
constexpr const char* kGetInvocation = "workflows_get_invocation";
// A succeeded node whose task has since been deleted (DELETE /v1/tasks/{id}, the retention
// sweep) has no outputs left to sign: it lists none, as the task itself answers 404.
const std::string kGetInvocationSql =
    std::string("SELECT ") + kInvocationColumns +
    ", coalesce((SELECT json_agg(json_build_array(n.node_id, n.name, n.position, n.status,"
    " coalesce(n.task_id::text, ''), CASE WHEN n.outputs IS NULL OR EXISTS (SELECT 1 FROM tasks t"
    "   WHERE t.id = n.task_id AND NOT t.deleted) THEN n.outputs ELSE '[]'::jsonb END,"
    " coalesce(n.error, ''),"
    " coalesce(n.error_code, '')) ORDER BY n.position)"
    " FROM workflow_invocation_nodes n WHERE n.invocation_id = i.id), '[]')::text"
    " FROM workflow_invocations i WHERE i.id = $1 AND i.org_id = $2";
constexpr const char* kLoad = "workflows_load_invocation";
const std::string kLoadSql =
    std::string("SELECT ") + kInvocationColumns +
    ", coalesce((SELECT json_agg(json_build_array(n.node_id, n.name, n.position, n.status,"
    " coalesce(n.task_id::text, ''), n.outputs, coalesce(n.error, ''),"
    " coalesce(n.error_code, ''), t.status, t.progress, t.outputs, t.failure, t.failure_code)"
    " ORDER BY n.position)"
    " FROM workflow_invocation_nodes n LEFT JOIN tasks t ON t.id = n.task_id"
    " WHERE n.invocation_id = i.id), '[]')::text, i.plan::text"
    " FROM workflow_invocations i WHERE i.id = $1";
constexpr const char* kMarkRunning = "workflows_mark_running";
constexpr const char* kMarkRunningSql =
    "UPDATE workflow_invocations SET status = 'RUNNING', updated_at = clock_timestamp()"
    " WHERE id = $1 AND status = 'PENDING' RETURNING id";
constexpr const char* kMarkNodeRunning = "workflows_mark_node_running";
constexpr const char* kMarkNodeRunningSql =
    "UPDATE workflow_invocation_nodes SET status = 'RUNNING', updated_at = clock_timestamp()"
    " WHERE invocation_id = $1 AND node_id = $2 AND status = 'WAITING' RETURNING node_id";
constexpr const char* kFinishNode = "workflows_finish_node";
constexpr const char* kFinishNodeSql =
    "UPDATE workflow_invocation_nodes SET status = $4::text,"
    " outputs = CASE WHEN $4::text = 'SUCCEEDED' THEN $5::jsonb END,"
    " error = NULLIF($6::text, ''), error_code = NULLIF($7::text, ''),"
    " updated_at = clock_timestamp()"
    " WHERE invocation_id = $1 AND node_id = $2 AND status = $3::text RETURNING node_id";
constexpr const char* kSetProgress = "workflows_set_progress";
constexpr const char* kSetProgressSql =
    "UPDATE workflow_invocations SET progress = $2, updated_at = clock_timestamp()"
    " WHERE id = $1 AND status = 'RUNNING' AND progress IS DISTINCT FROM $2::double precision";
constexpr const char* kFinish = "workflows_finish_invocation";
constexpr const char* kFinishSql =
    "UPDATE workflow_invocations SET status = $2::text,"
    " failure = CASE WHEN $2::text = 'FAILED' THEN $3::text END,"
    " failure_code = CASE WHEN $2::text = 'FAILED' THEN NULLIF($4::text, '') END,"
    " progress = CASE WHEN $2::text = 'SUCCEEDED' THEN 1 ELSE progress END,"
    " finished_at = clock_timestamp(), updated_at = clock_timestamp()"
    " WHERE id = $1 AND status IN ('PENDING', 'RUNNING') RETURNING id";

InvocationStatus ParseInvocationStatus(std::string_view s) {
    if (s == "PENDING") return InvocationStatus::kPending;
    if (s == "RUNNING") return InvocationStatus::kRunning;
    if (s == "SUCCEEDED") return InvocationStatus::kSucceeded;
    if (s == "FAILED") return InvocationStatus::kFailed;
    if (s == "CANCELLED") return InvocationStatus::kCancelled;
    throw std::runtime_error("workflows: unknown invocation status " + std::string(s));
}

NodeStatus ParseNodeStatus(std::string_view s) {
    if (s == "WAITING") return NodeStatus::kWaiting;
    if (s == "RUNNING") return NodeStatus::kRunning;
    if (s == "SUCCEEDED") return NodeStatus::kSucceeded;
    if (s == "FAILED") return NodeStatus::kFailed;
    if (s == "SKIPPED") return NodeStatus::kSkipped;
    throw std::runtime_error("workflows: unknown node status " + std::string(s));
}

std::vector<std::string> Names(const nlohmann::json& j) {
    std::vector<std::string> out;
    if (j.is_array()) {
        for (const auto& n : j) {
            if (n.is_string()) out.push_back(n.get<std::string>());
        }
    }
    return out;
}

std::string Text(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : ""; }

// ReadInvocation reads the columns of kInvocationColumns and the nodes' array after them (with
// their tasks when `with_tasks`).
InvocationRecord ReadInvocation(const pqxx::row& r, bool with_tasks) {
    InvocationRecord inv;
    inv.id = r[0].as<std::string>();
    inv.org_id = r[1].as<std::string>();
    inv.version_id = r[2].as<std::string>();
    inv.status = ParseInvocationStatus(r[3].as<std::string>());
    inv.progress = r[4].as<double>();
    if (!r[5].is_null()) inv.failure = r[5].as<std::string>();
    if (!r[6].is_null()) inv.failure_code = r[6].as<std::string>();
    inv.created_at = FromEpochMicros(r[7].as<long long>());
    for (const auto& n : nlohmann::json::parse(r[8].as<std::string>())) {
        InvocationNode node;
        node.node_id = n.at(0).get<std::string>();
        node.name = n.at(1).get<std::string>();
        node.position = n.at(2).get<int>();
        node.status = ParseNodeStatus(n.at(3).get<std::string>());
        node.task_id = n.at(4).get<std::string>();
        node.outputs = Names(n.at(5));
        node.error = n.at(6).get<std::string>();
        node.error_code = n.at(7).get<std::string>();
        if (with_tasks && n.at(8).is_string()) {
            node.task_status = ParseTaskStatus(n.at(8).get<std::string>());
            node.task_progress = n.at(9).is_number() ? n.at(9).get<double>() : 0.0;
            node.task_outputs = Names(n.at(10));
            node.task_failure = Text(n.at(11));
            node.task_failure_code = Text(n.at(12));
        }
        inv.nodes.push_back(std::move(node));
    }
    return inv;
}

WorkflowVersionRecord Published(const NewWorkflowVersion& v, const pqxx::row& r) {
    WorkflowVersionRecord out;
    out.id = v.id;
    out.workflow_id = r[0].as<std::string>();
    out.org_id = v.org_id;
    out.name = v.name;
    out.description = v.description;
    out.version = r[1].as<int>();
    out.graph_json = v.graph_json;
    out.created_at = FromEpochMicros(r[2].as<long long>());
    out.updated_at = FromEpochMicros(r[3].as<long long>());
    return out;
}

WorkflowVersionRecord PublishOn(pqxx::connection_base& c, const NewWorkflowVersion& v) {
    pqxx::work w(c);
    const auto r =
        w.exec_prepared(kPublish, v.id, NewUuid(), v.org_id, v.name, v.description.has_value(),
                        v.description.value_or(""), v.graph_json);
    w.commit();
    return Published(v, r[0]);
}

}  // namespace

std::string_view InvocationStatusName(InvocationStatus status) {
    switch (status) {
        case InvocationStatus::kPending:
            return "PENDING";
        case InvocationStatus::kRunning:
            return "RUNNING";
        case InvocationStatus::kSucceeded:
            return "SUCCEEDED";
        case InvocationStatus::kFailed:
            return "FAILED";
        case InvocationStatus::kCancelled:
            return "CANCELLED";
    }
    return "PENDING";
}

std::string_view NodeStatusName(NodeStatus status) {
    switch (status) {
        case NodeStatus::kWaiting:
            return "WAITING";
        case NodeStatus::kRunning:
            return "RUNNING";
        case NodeStatus::kSucceeded:
            return "SUCCEEDED";
        case NodeStatus::kFailed:
            return "FAILED";
        case NodeStatus::kSkipped:
            return "SKIPPED";
    }
    return "WAITING";
}

void WorkflowRepo::Prepare(Database& db) {
    db.Prepare(kPublish, kPublishSql);
    db.Prepare(kList, kListSql);
    db.Prepare(kGetVersion, kGetVersionSql);
    db.Prepare(kCreateInvocation, kCreateInvocationSql);
    db.Prepare(kGetInvocation, kGetInvocationSql);
    db.Prepare(kLoad, kLoadSql);
    db.Prepare(kMarkRunning, kMarkRunningSql);
    db.Prepare(kMarkNodeRunning, kMarkNodeRunningSql);
    db.Prepare(kFinishNode, kFinishNodeSql);
    db.Prepare(kSetProgress, kSetProgressSql);
    db.Prepare(kFinish, kFinishSql);
}

boost::asio::awaitable<WorkflowVersionRecord> WorkflowRepo::Publish(NewWorkflowVersion v) {
    WorkflowVersionRecord out;
    co_await db_.Run([&](pqxx::connection_base& c) { out = PublishOn(c, v); });
    co_return out;
}

WorkflowVersionRecord WorkflowRepo::PublishSync(const NewWorkflowVersion& v) {
    WorkflowVersionRecord out;
    db_.RunSync([&](pqxx::connection_base& c) { out = PublishOn(c, v); });
    return out;
}

boost::asio::awaitable<std::vector<WorkflowSummary>> WorkflowRepo::List(std::string org_id) {
    std::vector<WorkflowSummary> out;
    if (!IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec_prepared(kList, org_id)) {
            auto name = row[0].as<std::string>();
            if (out.empty() || out.back().name != name) {
                out.push_back({std::move(name), {}});
            }
            out.back().versions.push_back({row[1].as<std::string>(), row[2].as<int>(),
                                           FromEpochMicros(row[3].as<long long>())});
        }
    });
    co_return out;
}

boost::asio::awaitable<std::optional<WorkflowVersionRecord>> WorkflowRepo::GetVersion(
    std::string org_id, std::string id) {
    std::optional<WorkflowVersionRecord> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kGetVersion, id, org_id);
        if (r.empty()) return;
        WorkflowVersionRecord v;
        v.id = r[0][0].as<std::string>();
        v.workflow_id = r[0][1].as<std::string>();
        v.org_id = r[0][2].as<std::string>();
        v.name = r[0][3].as<std::string>();
        if (!r[0][4].is_null()) v.description = r[0][4].as<std::string>();
        v.version = r[0][5].as<int>();
        v.graph_json = r[0][6].as<std::string>();
        v.created_at = FromEpochMicros(r[0][7].as<long long>());
        v.updated_at = FromEpochMicros(r[0][8].as<long long>());
        out = std::move(v);
    });
    co_return out;
}

boost::asio::awaitable<SysTime> WorkflowRepo::CreateInvocation(NewInvocation inv) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : inv.nodes) {
        nodes.push_back({{"node_id", n.node_id},
                         {"position", n.position},
                         {"name", n.name},
                         {"task_id", n.task_id}});
    }
    const std::string nodes_json = nodes.dump();
    SysTime created;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(kCreateInvocation, inv.id, inv.org_id, inv.version_id,
                                       inv.plan_json, inv.overrides_json, nodes_json);
        w.commit();
        created = FromEpochMicros(r[0][0].as<long long>());
    });
    co_return created;
}

boost::asio::awaitable<std::optional<InvocationRecord>> WorkflowRepo::GetInvocation(
    std::string org_id, std::string id) {
    std::optional<InvocationRecord> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kGetInvocation, id, org_id);
        if (!r.empty()) out = ReadInvocation(r[0], /*with_tasks=*/false);
    });
    co_return out;
}

std::optional<InvocationRecord> WorkflowRepo::LoadSync(const std::string& id) {
    std::optional<InvocationRecord> out;
    if (!IsUuid(id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kLoad, id);
        if (r.empty()) return;
        out = ReadInvocation(r[0], /*with_tasks=*/true);
        out->plan_json = r[0][9].as<std::string>();
    });
    return out;
}

bool WorkflowRepo::MarkRunningSync(const std::string& id) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kMarkRunning, id).empty();
    });
    return done;
}

bool WorkflowRepo::MarkNodeRunningSync(const std::string& id, const std::string& node_id) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kMarkNodeRunning, id, node_id).empty();
    });
    return done;
}

bool WorkflowRepo::FinishNodeSync(const std::string& id, const std::string& node_id,
                                  NodeStatus from, const NodeEnd& end) {
    const std::string outputs = nlohmann::json(end.outputs).dump();
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kFinishNode, id, node_id, std::string(NodeStatusName(from)),
                                std::string(NodeStatusName(end.status)), outputs, end.error,
                                end.error_code)
                    .empty();
    });
    return done;
}

void WorkflowRepo::SetProgressSync(const std::string& id, double progress) {
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        n.exec_prepared(kSetProgress, id, progress);
    });
}

bool WorkflowRepo::FinishSync(const std::string& id, InvocationStatus status,
                              const std::string& failure, const std::string& failure_code) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kFinish, id, std::string(InvocationStatusName(status)), failure,
                                failure_code)
                    .empty();
    });
    return done;
}

}  // namespace genhost::store
