#include "genhost/tasks/workflow_runner.hpp"

#include "genhost/core/ids.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace genhost::tasks {

namespace {

using store::NodeEnd;
using store::NodeStatus;

constexpr std::uint64_t kCopyChunk = 8ull * 1024 * 1024;

bool Ended(NodeStatus s) {
    return s == NodeStatus::kSucceeded || s == NodeStatus::kFailed || s == NodeStatus::kSkipped;
}

// PlannedNode is a generation node of the plan (workflow_runner.hpp).
struct PlannedNode {
    std::string id;
    std::string name;
    std::string endpoint;
    std::string model;
    std::string task_id;
    nlohmann::json input;
    std::vector<std::pair<std::string, std::string>> feeds;  // (upstream node, JSON pointer)
    std::string limit_key;
    int max_concurrent = 0;
    int max_daily = 0;
    std::int64_t max_spend = -1;
};

std::map<std::string, PlannedNode> ReadPlan(const std::string& plan_json) {
    std::map<std::string, PlannedNode> out;
    const auto plan = nlohmann::json::parse(plan_json);
    for (const auto& n : plan.at("nodes")) {
        PlannedNode p;
        p.id = n.at("id").get<std::string>();
        p.name = n.value("name", "");
        p.endpoint = n.at("endpoint").get<std::string>();
        p.model = n.at("model").get<std::string>();
        p.task_id = n.at("taskId").get<std::string>();
        p.input = n.at("input");
        for (const auto& f : n.value("feeds", nlohmann::json::array())) {
            p.feeds.emplace_back(f.at("node").get<std::string>(),
                                 f.at("pointer").get<std::string>());
        }
        p.limit_key = n.value("limitKey", p.model);
        p.max_concurrent = n.value("maxConcurrent", 0);
        p.max_daily = n.value("maxDaily", 0);
        p.max_spend = n.value("maxSpend", static_cast<std::int64_t>(-1));
        out.emplace(p.id, std::move(p));
    }
    return out;
}

// Refusal is why a node's task could not be created.
NodeEnd Refusal(const store::CreateResult& r, const PlannedNode& p, double credits) {
    NodeEnd end;
    end.status = NodeStatus::kFailed;
    using Kind = store::CreateResult::Kind;
    if (r.kind == Kind::kRateLimited) {
        end.error = "The organization's daily generation limit for " + p.model +
                    " was reached (retry in " + std::to_string(r.retry_after_seconds) + " s)";
        end.error_code = "RATE_LIMITED";
    } else if (r.kind == Kind::kInsufficientCredits) {
        end.error = "Not enough credits to run this node: it needs " +
                    std::to_string(store::ReservedCredits(credits)) + " credits";
        end.error_code = "INSUFFICIENT_CREDITS";
    } else {
        end.error = "Running this node would take the organization past its monthly spend limit";
        end.error_code = "SPEND_LIMITED";
    }
    return end;
}

}  // namespace

std::string OutputReference(std::string_view task_id, std::string_view name) {
    std::string out(kOutputReferenceScheme);
    out += task_id;
    out += '/';
    out += name;
    return out;
}

OutputReferences::OutputReferences(const providers::InputResolver& inner,
                                   outputs::OutputStore& outputs)
    : inner_(inner), outputs_(outputs) {}

std::string OutputReferences::Resolve(const std::string& media, MediaKind kind,
                                      const std::string& scratch_dir) const {
    if (media.rfind(kOutputReferenceScheme, 0) != 0) {
        return inner_.Resolve(media, kind, scratch_dir);
    }
    const std::string rest = media.substr(kOutputReferenceScheme.size());
    const auto slash = rest.find('/');
    const std::string task = rest.substr(0, slash);
    const std::string name = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (!IsUuid(task) || !outputs::IsSafeObjectName(name)) {
        throw providers::TaskFailure("ASSET.INVALID", "Invalid reference to an upstream output");
    }
    const auto info = outputs_.Stat(task, name);
    if (!info) {
        throw providers::TaskFailure("ASSET.INVALID",
                                     "An upstream node's output is no longer stored");
    }
    const auto path = std::filesystem::path(scratch_dir) / ("upstream-" + name);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    for (std::uint64_t offset = 0; offset < info->size; offset += kCopyChunk) {
        const std::string chunk = outputs_.Read(task, name, offset, kCopyChunk);
        if (chunk.empty()) break;
        out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    }
    if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
    return path.string();
}

WorkflowRunner::WorkflowRunner(store::WorkflowRepo& workflows, store::TaskRepo& tasks,
                               const catalog::Catalog& catalog)
    : workflows_(workflows), tasks_(tasks), catalog_(catalog) {}

JobKind WorkflowRunner::Kind() {
    JobKind kind;
    kind.run = [this](const store::JobClaim& job, const std::atomic<bool>&) {
        return StepSync(job.subject);
    };
    kind.failed = [this](const store::JobClaim& job, const std::string& reason) {
        spdlog::error("workflow invocation {}: failed for good: {}", job.subject, reason);
        workflows_.FinishSync(job.subject, store::InvocationStatus::kFailed,
                              "The workflow could not be run (internal error)", "INTERNAL");
    };
    return kind;
}

JobResult WorkflowRunner::StepSync(const std::string& id) {
    auto inv = workflows_.LoadSync(id);
    if (!inv) return JobResult::Done();
    if (inv->status != store::InvocationStatus::kPending &&
        inv->status != store::InvocationStatus::kRunning) {
        return JobResult::Done();
    }
    if (inv->status == store::InvocationStatus::kPending) workflows_.MarkRunningSync(id);
    const auto plan = ReadPlan(inv->plan_json);
    std::map<std::string, store::InvocationNode*> state;
    for (auto& node : inv->nodes) state[node.node_id] = &node;

    // End nodes whose tasks ended.
    for (auto& node : inv->nodes) {
        if (node.status != NodeStatus::kRunning) continue;
        NodeEnd end;
        end.status = NodeStatus::kFailed;
        if (!node.task_status) {
            end.error = "The node's task is gone";
            end.error_code = "INTERNAL";
        } else if (*node.task_status == store::TaskStatus::kSucceeded) {
            if (node.task_outputs.empty()) {
                end.error = "The node's task made no output";
                end.error_code = "INTERNAL";
            } else {
                end.status = NodeStatus::kSucceeded;
                end.outputs = node.task_outputs;
            }
        } else if (*node.task_status == store::TaskStatus::kFailed) {
            end.error = node.task_failure.empty() ? "The node's task failed" : node.task_failure;
            end.error_code = node.task_failure_code.empty() ? "INTERNAL" : node.task_failure_code;
        } else if (*node.task_status == store::TaskStatus::kCancelled) {
            end.error = "The node's task was cancelled";
            end.error_code = "CANCELLED";
        } else {
            continue;  // still queued or running
        }
        if (workflows_.FinishNodeSync(id, node.node_id, NodeStatus::kRunning, end)) {
            node.status = end.status;
            node.outputs = end.outputs;
            node.error = end.error;
            node.error_code = end.error_code;
        }
    }

    // Skip or start waiting nodes, until nothing changes (a skip makes its dependants skip).
    for (bool changed = true; changed;) {
        changed = false;
        for (auto& node : inv->nodes) {
            if (node.status != NodeStatus::kWaiting) continue;
            const auto planned = plan.find(node.node_id);
            if (planned == plan.end()) {
                throw std::runtime_error("node " + node.node_id + " is not in the plan");
            }
            const PlannedNode& p = planned->second;
            if (node.task_status) {
                // Created by a step that ended before recording it.
                if (workflows_.MarkNodeRunningSync(id, node.node_id)) {
                    node.status = NodeStatus::kRunning;
                }
                continue;
            }
            const store::InvocationNode* failed_upstream = nullptr;
            bool ready = true;
            for (const auto& [upstream, pointer] : p.feeds) {
                const auto it = state.find(upstream);
                if (it == state.end()) throw std::runtime_error("node " + upstream + " unknown");
                const auto s = it->second->status;
                if (s == NodeStatus::kFailed || s == NodeStatus::kSkipped) {
                    failed_upstream = it->second;
                } else if (s != NodeStatus::kSucceeded) {
                    ready = false;
                }
            }
            if (failed_upstream != nullptr) {
                NodeEnd end;
                end.status = NodeStatus::kSkipped;
                end.error = "An upstream node failed: " + failed_upstream->name;
                if (workflows_.FinishNodeSync(id, node.node_id, NodeStatus::kWaiting, end)) {
                    node.status = NodeStatus::kSkipped;
                    node.error = end.error;
                    changed = true;
                }
                continue;
            }
            if (!ready) continue;

            nlohmann::json input = p.input;
            for (const auto& [upstream, pointer] : p.feeds) {
                const auto* up = state.at(upstream);
                input[nlohmann::json::json_pointer(pointer)] =
                    OutputReference(up->task_id, up->outputs.front());
            }
            double credits = 0;
            try {
                credits = catalog_.EstimateCredits(p.endpoint, input);
            } catch (const std::invalid_argument& e) {
                NodeEnd end;
                end.status = NodeStatus::kFailed;
                end.error = std::string("The node cannot be priced: ") + e.what();
                end.error_code = "INTERNAL";
                if (workflows_.FinishNodeSync(id, node.node_id, NodeStatus::kWaiting, end)) {
                    node.status = NodeStatus::kFailed;
                    node.error = end.error;
                    node.error_code = end.error_code;
                    changed = true;
                }
                continue;
            }
            store::NewTask task;
            task.id = node.task_id;
            task.org_id = inv->org_id;
            task.endpoint = p.endpoint;
            task.model = p.model;
            task.limit_key = p.limit_key;
            task.input_json = input.dump();
            task.estimated_credits = credits;
            task.max_concurrent = p.max_concurrent;
            task.max_daily = p.max_daily;
            task.max_spend_credits = p.max_spend;
            const auto created = tasks_.CreateSync(task);
            if (created.kind == store::CreateResult::Kind::kCreated) {
                spdlog::info("workflow invocation {}: node {} started as task {}", id, node.node_id,
                             node.task_id);
                if (workflows_.MarkNodeRunningSync(id, node.node_id)) {
                    node.status = NodeStatus::kRunning;
                }
                continue;
            }
            const NodeEnd end = Refusal(created, p, credits);
            if (workflows_.FinishNodeSync(id, node.node_id, NodeStatus::kWaiting, end)) {
                node.status = NodeStatus::kFailed;
                node.error = end.error;
                node.error_code = end.error_code;
                changed = true;
            }
        }
    }

    // Ended?
    double done = 0;
    bool open = false;
    for (const auto& node : inv->nodes) {
        if (Ended(node.status)) {
            done += 1;
        } else {
            open = true;
            if (node.status == NodeStatus::kRunning &&
                node.task_status == store::TaskStatus::kRunning) {
                done += std::clamp(node.task_progress, 0.0, 1.0);
            }
        }
    }
    if (open) {
        const double n = static_cast<double>(std::max<std::size_t>(inv->nodes.size(), 1));
        workflows_.SetProgressSync(id, std::min(done / n, 0.99));
        return JobResult::Wait(kStepSeconds);
    }
    std::set<std::string> fed;  // nodes another node takes from
    for (const auto& [node_id, p] : plan) {
        for (const auto& [upstream, pointer] : p.feeds) fed.insert(upstream);
    }
    bool output_made = false;
    const store::InvocationNode* first_failed = nullptr;
    bool all_cancelled = true;
    for (const auto& node : inv->nodes) {
        if (node.status == NodeStatus::kSucceeded && fed.count(node.node_id) == 0) {
            output_made = true;
        }
        if (node.status == NodeStatus::kFailed) {
            if (first_failed == nullptr) first_failed = &node;
            if (node.error_code != "CANCELLED") all_cancelled = false;
        }
    }
    if (output_made) {
        workflows_.FinishSync(id, store::InvocationStatus::kSucceeded, "", "");
    } else if (first_failed != nullptr && all_cancelled) {
        workflows_.FinishSync(id, store::InvocationStatus::kCancelled, "", "");
    } else {
        const std::string why = first_failed != nullptr ? "Node " + first_failed->name +
                                                              " failed: " + first_failed->error
                                                        : std::string("No node produced an output");
        workflows_.FinishSync(
            id, store::InvocationStatus::kFailed, "The workflow produced no output. " + why,
            first_failed != nullptr && !first_failed->error_code.empty() ? first_failed->error_code
                                                                         : "INTERNAL");
    }
    spdlog::info("workflow invocation {} ended", id);
    return JobResult::Done();
}

}  // namespace genhost::tasks
