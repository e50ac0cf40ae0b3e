// Workflows against a real server (docs/workflows.md, CLIENTS.md 3.6): published by the command
// and by the extra endpoint (each publication a new version), listed and read back; a fan-out
// (a text primitive into a still whose image feeds two clips) runs to SUCCEEDED with every node's
// output served; a node refused by moderation is a node error while the rest succeeds, and fails
// the invocation when nothing is left; bad versions, overrides and invocations are refused; and
// an invocation whose node is killed with SIGKILL mid-run is finished by another node.
#include "helpers.hpp"

#include <gmock/gmock.h>
#include <pqxx/pqxx>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace genhost::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kPrompt = "0c8f6a52-4f7e-4d0b-9a51-2d3c4b5a6f70";
constexpr const char* kStill = "1d9a7b63-5a8f-4e1c-8b62-3e4d5c6b7a81";
constexpr const char* kClipA = "2eab8c74-6b9a-4f2d-9c73-4f5e6d7c8b92";
constexpr const char* kClipB = "3fbc9d85-7cab-4a3e-8d84-5a6f7e8d9ca3";
constexpr const char* kRefused = "A Torture-Porn scene in a lighthouse";  // moderation_test.cpp

json Edge(const std::string& from, const std::string& output, const std::string& to,
          const std::string& field) {
    return {{"source", {{"node", from}, {"output", output}}},
            {"target", {{"node", to}, {"field", field}}}};
}

json Generation(const std::string& id, const std::string& name, const std::string& endpoint,
                json input) {
    return {{"id", id},
            {"name", name},
            {"type", "generation"},
            {"endpoint", endpoint},
            {"input", std::move(input)}};
}

json Clip(const std::string& id, const std::string& name) {
    return Generation(id, name, "image_to_video",
                      {{"model", "gen4_turbo"}, {"ratio", "1280:720"}, {"duration", 2}});
}

// FanOut: a text primitive into a still whose image feeds two clips.
json FanOut(const std::string& name) {
    return {{"name", name},
            {"description", "One still, two clips"},
            {"graph",
             {{"version", 1},
              {"nodes",
               {{{"id", kPrompt}, {"name", "Prompt"}, {"type", "text"}, {"value", "a lighthouse"}},
                Generation(kStill, "Still", "text_to_image",
                           {{"model", "gen4_image"}, {"ratio", "1280:720"}}),
                Clip(kClipA, "Clip A"),
                Clip(kClipB, "Clip B")}},
              {"edges",
               {Edge(kPrompt, "value", kStill, "promptText"),
                Edge(kStill, "output", kClipA, "promptImage"),
                Edge(kStill, "output", kClipB, "promptImage")}}}}};
}

// TwoStills: a text primitive into one still; a second still with a prompt moderation refuses.
json TwoStills(const std::string& name) {
    return {{"name", name},
            {"graph",
             {{"version", 1},
              {"nodes",
               {{{"id", kPrompt}, {"name", "Prompt"}, {"type", "text"}, {"value", "a lighthouse"}},
                Generation(kStill, "Clean", "text_to_image",
                           {{"model", "gen4_image"}, {"ratio", "1280:720"}}),
                Generation(
                    kClipA, "Refused", "text_to_image",
                    {{"model", "gen4_image"}, {"ratio", "1280:720"}, {"promptText", kRefused}})}},
              {"edges", {Edge(kPrompt, "value", kStill, "promptText")}}}}};
}

// Publish publishes `body` through POST /_genhost/workflows and returns the version's id.
std::string Publish(HttpClient& client, const json& body) {
    const auto r = client.Send("POST", "/_genhost/workflows", AuthHeaders(), body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json().value("id", "");
}

// Invoke starts an invocation of version `version` and returns its id.
std::string Invoke(HttpClient& client, const std::string& version,
                   const json& body = json::object()) {
    const auto r = client.Send("POST", "/v1/workflows/" + version, AuthHeaders(), body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Json().size(), 1u) << r.body;
    return r.Json().value("id", "");
}

// Settle polls invocation `id` until it ends (or `timeout` passes) and returns the last answer.
json Settle(HttpClient& client, const std::string& id,
            std::chrono::seconds timeout = std::chrono::seconds(90)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    json last;
    while (std::chrono::steady_clock::now() < deadline) {
        const auto r = client.Send("GET", "/v1/workflow_invocations/" + id, AuthHeaders());
        if (r.status != 200) return {{"httpStatus", r.status}, {"body", r.body}};
        last = r.Json();
        const std::string status = last["status"];
        if (status == "SUCCEEDED" || status == "FAILED" || status == "CANCELLED") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return last;
}

std::vector<std::string> IssuePath(const HttpResponse& r, std::size_t i = 0) {
    const auto issues = r.Json()["issues"];
    if (issues.size() <= i) return {};
    return issues[i]["path"].get<std::vector<std::string>>();
}

class WorkflowsApi : public ServerSuite<WorkflowsApi> {
  protected:
    static void SetUpTestSuite() {
        StartServer({{"GENHOST_LATENCY_SCALE", "0"}, {"GENHOST_WORKERS", "2"}});
    }

    HttpClient client_ = Client();
};

TEST_F(WorkflowsApi, PublishedByTheCommandAndTheExtraEndpointListedAndRead) {
    const fs::path file = fs::path(server_->data_dir()) / "fan-out.json";
    std::ofstream(file) << FanOut("Published").dump();
    std::string out;
    ASSERT_EQ(server_->RunCommand("workflows publish " + file.string() + " --org default", &out), 0)
        << out;
    const auto at = out.find("version_id: ");
    ASSERT_NE(at, std::string::npos) << out;
    const std::string v1 = out.substr(at + 12, 36);
    EXPECT_THAT(out, HasSubstr("(version 1)"));

    // The extra endpoint adds version 2 of the same name and answers it.
    json changed = FanOut("Published");
    changed["description"] = nullptr;
    const auto r = client_.Send("POST", "/_genhost/workflows", AuthHeaders(), changed.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const json v2 = r.Json();
    EXPECT_EQ(v2["version"], 2);
    EXPECT_EQ(v2["name"], "Published");
    EXPECT_TRUE(v2["description"].is_null());
    EXPECT_EQ(v2["graph"], changed["graph"]);

    const auto list = client_.Send("GET", "/v1/workflows", AuthHeaders());
    ASSERT_EQ(list.status, 200) << list.body;
    json published;
    const json listed = list.Json();
    for (const auto& w : listed["data"]) {
        if (w["name"] == "Published") published = w;
    }
    ASSERT_EQ(published["versions"].size(), 2u) << list.body;
    EXPECT_EQ(published["versions"][0]["id"], v2["id"]);  // newest first
    EXPECT_EQ(published["versions"][0]["version"], 2);
    EXPECT_EQ(published["versions"][1]["id"], v1);
    EXPECT_EQ(published["versions"][1]["createdAt"], v2["createdAt"]);  // the first publication

    const auto got = client_.Send("GET", "/v1/workflows/" + v1, AuthHeaders());
    ASSERT_EQ(got.status, 200) << got.body;
    EXPECT_EQ(got.Json()["version"], 1);
    EXPECT_EQ(got.Json()["description"], "One still, two clips");
    EXPECT_EQ(got.Json()["graph"], FanOut("x")["graph"]);

    // Another organization sees none of it.
    const std::string other = CreateKey(*server_, "workflows-other");
    EXPECT_EQ(client_.Send("GET", "/v1/workflows/" + v1, AuthHeaders(other)).status, 404);
    EXPECT_EQ(client_.Send("GET", "/v1/workflows", AuthHeaders(other)).Json()["data"],
              json::array());

    // A graph with a cycle and a type mismatch: every problem at its path, from both.
    json bad = FanOut("Bad");
    bad["graph"]["edges"].push_back(Edge(kClipA, "output", kStill, "seed"));
    bad["graph"]["edges"].push_back(Edge(kPrompt, "value", kClipB, "duration"));
    const auto refused = client_.Send("POST", "/_genhost/workflows", AuthHeaders(), bad.dump());
    ASSERT_EQ(refused.status, 400) << refused.body;
    EXPECT_THAT(refused.body, HasSubstr("cycle"));
    bool mismatch = false;
    const json refusal = refused.Json();
    for (const auto& issue : refusal["issues"]) {
        if (issue["path"] == json{"graph", "edges", "4", "target", "field"}) mismatch = true;
    }
    EXPECT_TRUE(mismatch) << refused.body;
    std::ofstream(file) << bad.dump();
    out.clear();
    EXPECT_EQ(server_->RunCommand("workflows publish " + file.string() + " --org default", &out),
              1);
    EXPECT_THAT(out, HasSubstr(R"(["graph","edges","4","target","field"])"));
    EXPECT_NE(server_->RunCommand("workflows publish " + file.string() + " --org nobody", &out), 0);
}

TEST_F(WorkflowsApi, AFanOutRunsToSucceededWithEveryNodesOutput) {
    const std::string version = Publish(client_, FanOut("Fan-out"));
    const std::string id = Invoke(
        client_, version,
        {{"nodeOutputs",
          {{kPrompt, {{"value", {{"type", "primitive"}, {"value", "a red lighthouse"}}}}}}}});
    const json done = Settle(client_, id);
    ASSERT_EQ(done["status"], "SUCCEEDED") << done.dump() << "\n" << server_->Log();
    EXPECT_FALSE(done.contains("nodeErrors"));
    EXPECT_FALSE(done.contains("progress"));
    const auto& output = done["output"];
    ASSERT_EQ(output.size(), 3u) << done.dump();
    const auto still = client_.Send("GET", PathOf(output[kStill][0]));
    ASSERT_EQ(still.status, 200);
    EXPECT_EQ(PngSize(still.body), std::make_pair(1280, 720));
    for (const char* clip : {kClipA, kClipB}) {
        ASSERT_EQ(output[clip].size(), 1u) << done.dump();
        const auto video = client_.Send("GET", PathOf(output[clip][0]));
        ASSERT_EQ(video.status, 200);
        EXPECT_EQ(video.Header("content-type"), "video/mp4");
        EXPECT_GT(video.body.size(), 1000u);
    }
    // Each node ran as an ordinary task of the organization, with the override in place and the
    // clips fed the still's output.
    pqxx::connection c(db_->dsn());
    pqxx::nontransaction n(c);
    const auto rows = n.exec(
        "SELECT t.endpoint, t.status, t.input::text FROM workflow_invocation_nodes w"
        " JOIN tasks t ON t.id = w.task_id WHERE w.invocation_id = '" +
        id + "' ORDER BY w.position");
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(json::parse(rows[0][2].as<std::string>())["promptText"], "a red lighthouse");
    for (int i = 1; i < 3; ++i) {
        EXPECT_EQ(rows[i][0].as<std::string>(), "image_to_video");
        EXPECT_THAT(json::parse(rows[i][2].as<std::string>())["promptImage"].get<std::string>(),
                    HasSubstr("genhost-output:"));
    }
    // URLs are signed afresh on every read.
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    const json again = client_.Send("GET", "/v1/workflow_invocations/" + id, AuthHeaders()).Json();
    EXPECT_NE(again["output"][kStill][0], output[kStill][0]);

    // Issue 31: once a node's task is deleted its outputs are gone, so the node lists no URLs
    // (they would answer 404); the other nodes' URLs still serve.
    const auto task_of = [&](const char* node) {
        return n
            .exec1("SELECT task_id::text FROM workflow_invocation_nodes WHERE invocation_id = '" +
                   id + "' AND node_id = '" + node + "'")[0]
            .as<std::string>();
    };
    const auto deleted = client_.Send("DELETE", "/v1/tasks/" + task_of(kStill), AuthHeaders());
    ASSERT_EQ(deleted.status, 204) << deleted.body;
    EXPECT_EQ(client_.Send("GET", PathOf(again["output"][kStill][0])).status, 404);
    const json after = client_.Send("GET", "/v1/workflow_invocations/" + id, AuthHeaders()).Json();
    EXPECT_EQ(after["status"], "SUCCEEDED") << after.dump();
    EXPECT_EQ(after["output"][kStill], json::array()) << after.dump();
    ASSERT_EQ(after["output"][kClipA].size(), 1u) << after.dump();
    EXPECT_EQ(client_.Send("GET", PathOf(after["output"][kClipA][0])).status, 200);
}

TEST_F(WorkflowsApi, ARefusedNodeIsANodeErrorAndFailsTheInvocationOnlyWhenNothingIsLeft) {
    const std::string id = Invoke(client_, Publish(client_, TwoStills("Two stills")));
    const json done = Settle(client_, id);
    ASSERT_EQ(done["status"], "SUCCEEDED") << done.dump();
    EXPECT_EQ(done["output"].size(), 1u);
    EXPECT_TRUE(done["output"].contains(kStill));
    ASSERT_TRUE(done.contains("nodeErrors")) << done.dump();
    EXPECT_EQ(done["nodeErrors"][kClipA]["nodeName"], "Refused");
    EXPECT_THAT(done["nodeErrors"][kClipA]["message"].get<std::string>(), HasSubstr("promptText"));

    // The still of a fan-out refused: the clips cannot run, and nothing is produced.
    const std::string failing = Invoke(
        client_, Publish(client_, FanOut("Refused fan-out")),
        {{"nodeOutputs", {{kPrompt, {{"value", {{"type", "primitive"}, {"value", kRefused}}}}}}}});
    const json failed = Settle(client_, failing);
    ASSERT_EQ(failed["status"], "FAILED") << failed.dump();
    EXPECT_EQ(failed["failureCode"], "SAFETY.INPUT.TEXT");
    EXPECT_THAT(failed["failure"].get<std::string>(), HasSubstr("Still"));
    EXPECT_FALSE(failed.contains("output"));
    ASSERT_EQ(failed["nodeErrors"].size(), 3u) << failed.dump();
    EXPECT_EQ(failed["nodeErrors"][kClipB]["message"], "An upstream node failed: Still");
}

TEST_F(WorkflowsApi, BadVersionsOverridesAndInvocationsAreRefused) {
    const std::string version = Publish(client_, FanOut("Strict"));
    const std::string unknown = "182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e";
    auto r = client_.Send("POST", "/v1/workflows/" + unknown, AuthHeaders(), "{}");
    EXPECT_EQ(r.status, 404) << r.body;
    EXPECT_EQ(r.Json()["error"], "Workflow not found");
    EXPECT_EQ(client_.Send("GET", "/v1/workflows/" + unknown, AuthHeaders()).status, 404);
    EXPECT_EQ(client_.Send("GET", "/v1/workflows/nope", AuthHeaders()).status, 404);
    r = client_.Send("GET", "/v1/workflow_invocations/" + unknown, AuthHeaders());
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.Json()["error"], "Workflow invocation not found");

    const auto run = [&](const json& overrides) {
        return client_.Send("POST", "/v1/workflows/" + version, AuthHeaders(),
                            json{{"nodeOutputs", overrides}}.dump());
    };
    r = run({{unknown, {{"value", {{"type", "primitive"}, {"value", "x"}}}}}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(IssuePath(r), (std::vector<std::string>{"nodeOutputs", unknown}));
    r = run({{kPrompt, {{"value", {{"type", "primitive"}, {"value", 7}}}}}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(IssuePath(r), (std::vector<std::string>{"nodeOutputs", kPrompt, "value"}));
    r = run({{kPrompt, {{"value", {{"type", "image"}, {"uri", "https://example.com/a.png"}}}}}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(IssuePath(r), (std::vector<std::string>{"nodeOutputs", kPrompt, "value"}));
    r = run({{kStill, {{"output", {{"type", "image"}, {"uri", "https://example.com/a.png"}}}}}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(IssuePath(r), (std::vector<std::string>{"nodeOutputs", kStill}));
    r = run({{kPrompt, {{"output", {{"type", "primitive"}, {"value", "x"}}}}}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(IssuePath(r), (std::vector<std::string>{"nodeOutputs", kPrompt, "output"}));
    // Checked by the schema like any media string.
    r = run({{kPrompt, {{"value", {{"type", "video"}, {"uri", "http://example.com/a.mp4"}}}}}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(IssuePath(r), (std::vector<std::string>{"nodeOutputs", kPrompt, "value", "uri"}));
    // A text too long for the field it feeds.
    r = run({{kPrompt, {{"value", {{"type", "primitive"}, {"value", std::string(1001, 'a')}}}}}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(IssuePath(r), (std::vector<std::string>{"nodeOutputs", kPrompt, "value"}));
    EXPECT_THAT(r.body, HasSubstr("promptText of text_to_image"));
    r = client_.Send("POST", "/v1/workflows/" + version, AuthHeaders(), R"({"nodes": {}})");
    EXPECT_EQ(r.status, 400) << r.body;
}

TEST(WorkflowsMultiNode, AnInvocationWhoseNodeIsKilledFinishesElsewhere) {
    TestDatabase db;
    SharedFolder data;
    // The API node runs no tasks; a slow worker node takes the still and dies with it.
    ServerProcess api(db.dsn(), {{"GENHOST_ROLE", "api"},
                                 {"GENHOST_LEASE_SECONDS", "2"},
                                 {"GENHOST_DATA_DIR", data.path()}});
    api.Start();
    HttpClient a("127.0.0.1", api.port());
    const std::string version = Publish(a, FanOut("Survivor"));
    std::string id;
    {
        ServerProcess doomed(db.dsn(), {{"GENHOST_WORKERS", "1"},
                                        {"GENHOST_LEASE_SECONDS", "2"},
                                        {"GENHOST_LATENCY_SCALE", LatencyScaleFor(60.0)},
                                        {"GENHOST_DATA_DIR", data.path()}});
        doomed.Start();
        id = Invoke(a, version);
        pqxx::connection c(db.dsn());
        bool running = false;
        for (int i = 0; i < 200 && !running; ++i) {
            pqxx::nontransaction n(c);
            running = n.exec1(
                           "SELECT count(*) FROM workflow_invocation_nodes w JOIN tasks t"
                           " ON t.id = w.task_id WHERE t.status = 'RUNNING' AND"
                           " w.invocation_id = '" +
                           id + "'")[0]
                          .as<int>() > 0;
            if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ASSERT_TRUE(running) << doomed.Log();
        const json mid = a.Send("GET", "/v1/workflow_invocations/" + id, AuthHeaders()).Json();
        EXPECT_EQ(mid["status"], "RUNNING") << mid.dump();
        EXPECT_EQ(mid["output"], json::object());
        doomed.Signal(SIGKILL);
        ASSERT_EQ(doomed.WaitExit(std::chrono::seconds(5)), 128 + SIGKILL);
    }
    ServerProcess rescuer(db.dsn(), {{"GENHOST_WORKERS", "2"},
                                     {"GENHOST_LEASE_SECONDS", "2"},
                                     {"GENHOST_LATENCY_SCALE", "0"},
                                     {"GENHOST_DATA_DIR", data.path()}});
    rescuer.Start();
    const json done = Settle(a, id, std::chrono::seconds(120));
    ASSERT_EQ(done["status"], "SUCCEEDED") << done.dump() << "\n" << rescuer.Log();
    ASSERT_EQ(done["output"].size(), 3u);
    for (const char* node : {kStill, kClipA, kClipB}) {
        EXPECT_EQ(a.Send("GET", PathOf(done["output"][node][0])).status, 200) << node;
    }
}

}  // namespace
}  // namespace genhost::testing
