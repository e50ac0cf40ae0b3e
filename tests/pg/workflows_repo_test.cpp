// WorkflowRepo and WorkflowRunner against a real PostgreSQL: publishing numbers the versions of a
// name (also when two publish at once) and keeps every one; lists are newest first and scoped to
// their organization; an invocation is stored with its nodes and its job in one transaction; the
// runner starts nodes in dependency order as ordinary tasks (fed fields referencing the upstream
// output), never creates a node's task twice when a step runs again, skips what depends on a
// failed node, and ends the invocation by the failure rules.
#include "support/org_database.hpp"

#include "genhost/catalog/catalog.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/store/jobs_repo.hpp"
#include "genhost/store/tasks_repo.hpp"
#include "genhost/store/workflows_repo.hpp"
#include "genhost/tasks/workflow_runner.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <future>

namespace genhost::testing {
namespace {

using nlohmann::json;

constexpr const char* kStill = "11111111-1111-4111-8111-111111111111";
constexpr const char* kClipA = "22222222-2222-4222-8222-222222222222";
constexpr const char* kClipB = "33333333-3333-4333-8333-333333333333";

class Workflows : public OrgDatabaseTest {
  protected:
    void SetUp() override {
        OrgDatabaseTest::SetUp();
        if (IsSkipped()) return;
        repo_ = std::make_unique<store::WorkflowRepo>(*pool_);
        tasks_ = std::make_unique<store::TaskRepo>(*pool_);
        jobs_ = std::make_unique<store::JobRepo>(*pool_);
        catalog_ = catalog::Catalog::LoadEmbedded();
        runner_ = std::make_unique<tasks::WorkflowRunner>(*repo_, *tasks_, *catalog_);
    }

    store::WorkflowVersionRecord Publish(const std::string& name, const std::string& org = "") {
        store::NewWorkflowVersion v;
        v.id = NewUuid();
        v.org_id = org.empty() ? org_ : org;
        v.name = name;
        v.description = name + " described";
        v.graph_json = R"({"version": 1, "nodes": [], "edges": []})";
        return Await(repo_->Publish(v));
    }

    // Invoke stores an invocation of a fan-out plan: a still whose image feeds two clips.
    std::string Invoke(const std::string& version_id) {
        const auto node = [](const std::string& id, const std::string& name,
                             const std::string& endpoint, json input, json feeds) {
            const std::string model = input["model"];
            return json{{"id", id},        {"name", name},        {"endpoint", endpoint},
                        {"model", model},  {"taskId", NewUuid()}, {"input", std::move(input)},
                        {"feeds", feeds},  {"limitKey", model},   {"maxConcurrent", 10},
                        {"maxDaily", 100}, {"maxSpend", -1}};
        };
        json plan = {
            {"nodes",
             {node(kStill, "Still", "text_to_image",
                   {{"model", "gen4_image"}, {"promptText", "a lighthouse"}, {"ratio", "1280:720"}},
                   json::array()),
              node(kClipA, "Clip A", "image_to_video",
                   {{"model", "gen4_turbo"}, {"ratio", "1280:720"}, {"duration", 5}},
                   {{{"node", kStill}, {"pointer", "/promptImage"}}}),
              node(kClipB, "Clip B", "image_to_video",
                   {{"model", "gen4_turbo"}, {"ratio", "1280:720"}, {"duration", 5}},
                   {{{"node", kStill}, {"pointer", "/promptImage"}}})}}};
        store::NewInvocation inv;
        inv.id = NewUuid();
        inv.org_id = org_;
        inv.version_id = version_id;
        inv.overrides_json = "{}";
        int position = 1;
        for (const auto& n : plan["nodes"]) {
            inv.nodes.push_back({n["id"], n["name"], position++, n["taskId"]});
        }
        inv.plan_json = plan.dump();
        Await(repo_->CreateInvocation(inv));
        return inv.id;
    }

    const store::InvocationNode& Node(const store::InvocationRecord& inv, const std::string& id) {
        for (const auto& n : inv.nodes) {
            if (n.node_id == id) return n;
        }
        throw std::runtime_error("no node " + id);
    }

    // Finish runs the claimed PENDING task `task_id` to its end as a worker would.
    void Finish(const std::string& task_id, store::TaskStatus status,
                const std::string& failure_code = "") {
        bool found = false;
        for (int i = 0; i < 10 && !found; ++i) {
            const auto claimed = tasks_->ClaimSync("test-worker", 30);
            ASSERT_TRUE(claimed.has_value()) << "task " << task_id << " was never claimed";
            found = claimed->id == task_id;
        }
        ASSERT_TRUE(found);
        ASSERT_TRUE(tasks_->FinishSync(task_id, "test-worker", status,
                                       status == store::TaskStatus::kSucceeded
                                           ? std::vector<std::string>{"0-abc.png"}
                                           : std::vector<std::string>{},
                                       failure_code.empty() ? "" : "refused", failure_code));
        tasks_->ReleaseOwnedSync("test-worker");  // the others claimed on the way
    }

    std::string TaskInput(const std::string& task_id) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        const auto r = n.exec("SELECT input::text FROM tasks WHERE id = '" + task_id + "'");
        return r.empty() ? "" : r[0][0].as<std::string>();
    }

    int CountTasks() {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        return n.exec1("SELECT count(*) FROM tasks")[0].as<int>();
    }

    std::unique_ptr<store::WorkflowRepo> repo_;
    std::unique_ptr<store::TaskRepo> tasks_;
    std::unique_ptr<store::JobRepo> jobs_;
    std::shared_ptr<const catalog::Catalog> catalog_;
    std::unique_ptr<tasks::WorkflowRunner> runner_;
};

TEST_F(Workflows, PublishingNumbersVersionsAndListsNewestFirstPerOrganization) {
    const auto a1 = Publish("alpha");
    const auto b1 = Publish("beta");
    const auto a2 = Publish("alpha");
    Publish("alpha", other_org_);
    EXPECT_EQ(a1.version, 1);
    EXPECT_EQ(b1.version, 1);
    EXPECT_EQ(a2.version, 2);
    EXPECT_EQ(a2.workflow_id, a1.workflow_id);
    EXPECT_EQ(a2.created_at, a1.created_at);  // the workflow's first publication
    EXPECT_GE(a2.updated_at, a1.updated_at);

    const auto list = Await(repo_->List(org_));
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0].name, "beta");  // created after alpha
    EXPECT_EQ(list[1].name, "alpha");
    ASSERT_EQ(list[1].versions.size(), 2u);
    EXPECT_EQ(list[1].versions[0].id, a2.id);  // newest first
    EXPECT_EQ(list[1].versions[0].version, 2);
    EXPECT_EQ(list[1].versions[1].id, a1.id);
    EXPECT_EQ(list[1].versions[1].created_at, a1.created_at);  // version 1 made the workflow

    const auto got = Await(repo_->GetVersion(org_, a1.id));
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->name, "alpha");
    EXPECT_EQ(got->version, 1);
    EXPECT_EQ(got->description, "alpha described");
    EXPECT_EQ(json::parse(got->graph_json)["version"], 1);
    EXPECT_FALSE(Await(repo_->GetVersion(other_org_, a1.id)).has_value());
    EXPECT_FALSE(Await(repo_->GetVersion(org_, "not-a-uuid")).has_value());
    EXPECT_EQ(Await(repo_->List(other_org_)).size(), 1u);
}

TEST_F(Workflows, ConcurrentPublicationsOfOneNameTakeDistinctVersions) {
    std::vector<std::future<int>> published;
    for (int i = 0; i < 8; ++i) {
        published.push_back(std::async(std::launch::async, [this] {
            store::NewWorkflowVersion v;
            v.id = NewUuid();
            v.org_id = org_;
            v.name = "raced";
            v.graph_json = "{}";
            return repo_->PublishSync(v).version;
        }));
    }
    std::set<int> versions;
    for (auto& f : published) versions.insert(f.get());
    EXPECT_EQ(versions, (std::set<int>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST_F(Workflows, AnInvocationRunsItsNodesInOrderAsTasksAndSucceeds) {
    const std::string id = Invoke(Publish("fan-out").id);
    // Stored with its job, in one transaction.
    const auto job = jobs_->GetSync(tasks::kWorkflowJobKind, id);
    ASSERT_TRUE(job.has_value());
    EXPECT_EQ(job->status, "PENDING");
    auto inv = Await(repo_->GetInvocation(org_, id));
    ASSERT_TRUE(inv.has_value());
    EXPECT_EQ(inv->status, store::InvocationStatus::kPending);
    ASSERT_EQ(inv->nodes.size(), 3u);
    EXPECT_FALSE(Await(repo_->GetInvocation(other_org_, id)).has_value());

    // First step: only the still can start.
    EXPECT_EQ(runner_->StepSync(id).kind, tasks::JobResult::Kind::kWait);
    auto loaded = repo_->LoadSync(id);
    EXPECT_EQ(loaded->status, store::InvocationStatus::kRunning);
    const std::string still_task = Node(*loaded, kStill).task_id;
    EXPECT_EQ(Node(*loaded, kStill).status, store::NodeStatus::kRunning);
    EXPECT_EQ(Node(*loaded, kClipA).status, store::NodeStatus::kWaiting);
    EXPECT_EQ(CountTasks(), 1);
    // A step that runs again changes nothing and creates no second task.
    EXPECT_EQ(runner_->StepSync(id).kind, tasks::JobResult::Kind::kWait);
    EXPECT_EQ(CountTasks(), 1);

    Finish(still_task, store::TaskStatus::kSucceeded);
    EXPECT_EQ(runner_->StepSync(id).kind, tasks::JobResult::Kind::kWait);
    loaded = repo_->LoadSync(id);
    EXPECT_EQ(Node(*loaded, kStill).status, store::NodeStatus::kSucceeded);
    EXPECT_EQ(Node(*loaded, kStill).outputs, std::vector<std::string>{"0-abc.png"});
    // Both clips started at once, each fed the still's output by reference.
    EXPECT_EQ(CountTasks(), 3);
    for (const char* clip : {kClipA, kClipB}) {
        const auto& node = Node(*loaded, clip);
        EXPECT_EQ(node.status, store::NodeStatus::kRunning);
        const auto input = json::parse(TaskInput(node.task_id));
        EXPECT_EQ(input["promptImage"], tasks::OutputReference(still_task, "0-abc.png"));
        EXPECT_EQ(input["model"], "gen4_turbo");
    }
    EXPECT_GT(Await(repo_->GetInvocation(org_, id))->progress, 0.3);

    Finish(Node(*loaded, kClipA).task_id, store::TaskStatus::kSucceeded);
    Finish(Node(*loaded, kClipB).task_id, store::TaskStatus::kSucceeded);
    EXPECT_EQ(runner_->StepSync(id).kind, tasks::JobResult::Kind::kDone);
    inv = Await(repo_->GetInvocation(org_, id));
    EXPECT_EQ(inv->status, store::InvocationStatus::kSucceeded);
    EXPECT_EQ(inv->progress, 1.0);
    for (const auto& n : inv->nodes) EXPECT_EQ(n.status, store::NodeStatus::kSucceeded);
    EXPECT_EQ(runner_->StepSync(id).kind, tasks::JobResult::Kind::kDone);  // ended: nothing to do
}

TEST_F(Workflows, ATaskCreatedByAStepThatDiedIsTakenUpNotCreatedAgain) {
    const std::string id = Invoke(Publish("crash").id);
    auto loaded = repo_->LoadSync(id);
    // The task of the still exists (a step created it and died before recording it).
    store::NewTask task;
    task.id = Node(*loaded, kStill).task_id;
    task.org_id = org_;
    task.endpoint = "text_to_image";
    task.model = "gen4_image";
    task.limit_key = "gen4_image";
    task.input_json = R"({"model": "gen4_image", "promptText": "x", "ratio": "1280:720"})";
    task.estimated_credits = 5;
    task.max_concurrent = 10;
    task.max_daily = 100;
    ASSERT_EQ(tasks_->CreateSync(task).kind, store::CreateResult::Kind::kCreated);
    EXPECT_EQ(runner_->StepSync(id).kind, tasks::JobResult::Kind::kWait);
    EXPECT_EQ(CountTasks(), 1);
    EXPECT_EQ(Node(*repo_->LoadSync(id), kStill).status, store::NodeStatus::kRunning);
}

TEST_F(Workflows, ANodeThatFailsSkipsItsDependantsAndFailsTheInvocation) {
    const std::string id = Invoke(Publish("failing").id);
    runner_->StepSync(id);
    const auto loaded = repo_->LoadSync(id);
    Finish(Node(*loaded, kStill).task_id, store::TaskStatus::kFailed, "SAFETY.INPUT.TEXT");
    EXPECT_EQ(runner_->StepSync(id).kind, tasks::JobResult::Kind::kDone);
    const auto inv = Await(repo_->GetInvocation(org_, id));
    EXPECT_EQ(inv->status, store::InvocationStatus::kFailed);
    EXPECT_EQ(inv->failure_code, "SAFETY.INPUT.TEXT");
    EXPECT_NE(inv->failure->find("Still"), std::string::npos) << *inv->failure;
    EXPECT_EQ(Node(*inv, kStill).status, store::NodeStatus::kFailed);
    EXPECT_EQ(Node(*inv, kStill).error, "refused");
    for (const char* clip : {kClipA, kClipB}) {
        EXPECT_EQ(Node(*inv, clip).status, store::NodeStatus::kSkipped);
        EXPECT_EQ(Node(*inv, clip).error, "An upstream node failed: Still");
    }
    EXPECT_EQ(CountTasks(), 1);
}

TEST_F(Workflows, OneOutputNodeFailingLeavesTheInvocationSucceededWithItsError) {
    const std::string id = Invoke(Publish("partial").id);
    runner_->StepSync(id);
    Finish(Node(*repo_->LoadSync(id), kStill).task_id, store::TaskStatus::kSucceeded);
    runner_->StepSync(id);
    const auto loaded = repo_->LoadSync(id);
    Finish(Node(*loaded, kClipA).task_id, store::TaskStatus::kSucceeded);
    // Clip B's task is cancelled by an operator.
    EXPECT_EQ(tasks_->CancelSync("", Node(*loaded, kClipB).task_id, false).kind,
              store::CancelResult::Kind::kCancelled);
    EXPECT_EQ(runner_->StepSync(id).kind, tasks::JobResult::Kind::kDone);
    const auto inv = Await(repo_->GetInvocation(org_, id));
    EXPECT_EQ(inv->status, store::InvocationStatus::kSucceeded);
    EXPECT_EQ(Node(*inv, kClipB).status, store::NodeStatus::kFailed);
    EXPECT_EQ(Node(*inv, kClipB).error, "The node's task was cancelled");
}

TEST_F(Workflows, AnInvocationWhoseTasksWereAllCancelledIsCancelled) {
    const std::string id = Invoke(Publish("cancelled").id);
    runner_->StepSync(id);
    const auto loaded = repo_->LoadSync(id);
    tasks_->CancelSync("", Node(*loaded, kStill).task_id, false);
    EXPECT_EQ(runner_->StepSync(id).kind, tasks::JobResult::Kind::kDone);
    EXPECT_EQ(Await(repo_->GetInvocation(org_, id))->status, store::InvocationStatus::kCancelled);
}

}  // namespace
}  // namespace genhost::testing
