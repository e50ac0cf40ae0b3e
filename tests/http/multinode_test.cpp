// Several genhost processes on one PostgreSQL, as operators run them behind a load balancer: an
// API-only node and worker nodes share the queue, the keys (a key disabled through one node is
// refused by the others), the output signing secret and, through one data folder, the outputs;
// and a task whose node is killed mid-work is finished by another node.
#include "helpers.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace genhost::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// KeyIdOf finds the id of the key of organization `org` in `genhost keys list` output.
std::string KeyIdOf(const ServerProcess& node, const std::string& org) {
    std::string out;
    if (node.RunCommand("keys list", &out) != 0) throw std::runtime_error("keys list: " + out);
    const auto at = out.find(org);
    if (at == std::string::npos) throw std::runtime_error("no key of " + org + " in: " + out);
    return out.substr(out.rfind('\n', at) + 1, 36);
}

TEST(MultiNode, AnApiNodeAndAWorkerNodeShareTheQueueKeysSecretsAndOutputs) {
    TestDatabase db;
    SharedFolder data;
    // The API node runs no work; every task it accepts is done by the worker node.
    // Each node logs a task's start as an event line ("event":"start","task":ID).
    ServerProcess api(db.dsn(), {{"GENHOST_ROLE", "api"},
                                 {"GENHOST_LOG_LEVEL", "debug"},
                                 {"GENHOST_DATA_DIR", data.path()}});
    api.Start();
    ServerProcess worker(db.dsn(), {{"GENHOST_WORKERS", "2"},
                                    {"GENHOST_LATENCY_SCALE", "0"},
                                    {"GENHOST_LOG_LEVEL", "debug"},
                                    {"GENHOST_DATA_DIR", data.path()}});
    worker.Start();
    HttpClient a("127.0.0.1", api.port());
    HttpClient w("127.0.0.1", worker.port());

    std::vector<std::string> ids;
    for (int i = 0; i < 4; ++i) {
        const auto r = a.Send("POST", "/v1/text_to_image", AuthHeaders(),
                              ImageRequest("gen4_image", "1280:720", 100 + i).dump());
        ASSERT_EQ(r.status, 200) << r.body;
        ids.push_back(r.Json()["id"]);
    }
    for (const auto& id : ids) {
        const json on_api = WaitForStatus(a, id, {"SUCCEEDED", "FAILED", "CANCELLED"});
        ASSERT_EQ(on_api["status"], "SUCCEEDED") << on_api.dump() << "\n" << worker.Log();
        const json on_worker = WaitForStatus(w, id, {"SUCCEEDED"});
        EXPECT_EQ(on_worker["status"], "SUCCEEDED");
        EXPECT_EQ(on_worker["createdAt"], on_api["createdAt"]);
        // A URL signed by one node is honoured by the other (one secret, in the database), and
        // both serve the same file from the shared folder.
        const std::string url = on_api["output"][0];
        const auto from_api = a.Send("GET", PathOf(url), {});
        const auto from_worker = w.Send("GET", PathOf(url), {});
        ASSERT_EQ(from_api.status, 200) << url;
        ASSERT_EQ(from_worker.status, 200) << url;
        EXPECT_EQ(from_api.body, from_worker.body);
        EXPECT_EQ(PngSize(from_api.body), std::make_pair(1280, 720));
    }
    for (const auto& id : ids) {
        const std::string started = R"("event":"start","task":")" + id + "\"";
        EXPECT_NE(worker.Log().find(started), std::string::npos) << id;
        EXPECT_EQ(api.Log().find(started), std::string::npos) << id;
    }

    // Deleted through one node, gone on both at once.
    ASSERT_EQ(w.Send("DELETE", "/v1/tasks/" + ids[0], AuthHeaders()).status, 204);
    EXPECT_EQ(a.Send("GET", "/v1/tasks/" + ids[0], AuthHeaders()).status, 404);
    EXPECT_EQ(w.Send("GET", "/v1/tasks/" + ids[0], AuthHeaders()).status, 404);

    // A key made through one node works on the other; disabled through one, it is refused by
    // both (each node's key cache is told through LISTEN/NOTIFY), within a bounded wait.
    const std::string key = CreateKey(api, "tenant-b");
    EXPECT_EQ(w.Send("GET", "/v1/tasks/" + ids[1], AuthHeaders(key)).status, 404);  // not its task
    EXPECT_EQ(a.Send("GET", "/v1/tasks/" + ids[1], AuthHeaders(key)).status, 404);
    std::string out;
    ASSERT_EQ(worker.RunCommand("keys disable " + KeyIdOf(worker, "tenant-b"), &out), 0) << out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int on_api = 0, on_worker = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        on_api = a.Send("GET", "/v1/tasks/" + ids[1], AuthHeaders(key)).status;
        on_worker = w.Send("GET", "/v1/tasks/" + ids[1], AuthHeaders(key)).status;
        if (on_api == 401 && on_worker == 401) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(on_api, 401);
    EXPECT_EQ(on_worker, 401);
    EXPECT_EQ(a.Send("GET", "/v1/tasks/" + ids[1], AuthHeaders()).status, 200);
}

TEST(MultiNode, ATaskWhoseNodeIsKilledIsFinishedByAnotherNode) {
    TestDatabase db;
    SharedFolder data;
    ServerProcess api(db.dsn(), {{"GENHOST_ROLE", "api"}, {"GENHOST_DATA_DIR", data.path()}});
    api.Start();
    HttpClient a("127.0.0.1", api.port());
    std::string id;
    {
        // A slow worker node takes the task and dies with it.
        ServerProcess doomed(db.dsn(), {{"GENHOST_WORKERS", "1"},
                                        {"GENHOST_LEASE_SECONDS", "2"},
                                        {"GENHOST_LATENCY_SCALE", LatencyScaleFor(60.0)},
                                        {"GENHOST_DATA_DIR", data.path()}});
        doomed.Start();
        const auto r = a.Send("POST", "/v1/text_to_image", AuthHeaders(), ImageRequest().dump());
        ASSERT_EQ(r.status, 200) << r.body;
        id = r.Json()["id"];
        ASSERT_EQ(WaitForStatus(a, id, {"RUNNING"})["status"], "RUNNING") << doomed.Log();
        doomed.Signal(SIGKILL);
        ASSERT_EQ(doomed.WaitExit(std::chrono::seconds(5)), 128 + SIGKILL);
    }
    // Another node, started while the lease is still held by the dead one, takes the task up
    // once the lease expires; the API node answers throughout.
    ServerProcess rescuer(db.dsn(), {{"GENHOST_WORKERS", "1"},
                                     {"GENHOST_LEASE_SECONDS", "2"},
                                     {"GENHOST_LATENCY_SCALE", "0"},
                                     {"GENHOST_DATA_DIR", data.path()}});
    rescuer.Start();
    const json task =
        WaitForStatus(a, id, {"SUCCEEDED", "FAILED", "CANCELLED"}, std::chrono::seconds(60));
    ASSERT_EQ(task["status"], "SUCCEEDED") << task.dump() << "\n" << rescuer.Log();
    const auto file = a.Send("GET", PathOf(task["output"][0]), {});
    ASSERT_EQ(file.status, 200);
    EXPECT_EQ(PngSize(file.body), std::make_pair(1280, 720));
}

// Each node keeps the routers that generate requests name; a change made through another node
// reaches it by notification, well before the cache's two-second backstop.
TEST(MultiNode, ARouterChangedOnOneNodeRoutesByItsNewSettingsOnTheOther) {
    TestDatabase db;
    ServerProcess a(db.dsn(), {{"GENHOST_ROLE", "api"}});
    a.Start();
    ServerProcess b(db.dsn(), {{"GENHOST_ROLE", "api"}});
    b.Start();
    const std::string key = CreateKey(a, "routers-tenant");
    HttpClient ca("127.0.0.1", a.port());
    HttpClient cb("127.0.0.1", b.port());
    auto send = [&](HttpClient& c, const std::string& method, const std::string& path,
                    const json& body) {
        return c.Send(method, path, AuthHeaders(key), body.dump());
    };
    const auto router = send(ca, "POST", "/v1/routers", {{"slug", "shared"}});
    ASSERT_EQ(router.status, 200) << router.body;
    const json dry = {
        {"configId", "shared"}, {"dryRun", true}, {"input", {{"promptText", "a lighthouse"}}}};
    const auto first = send(cb, "POST", "/v1/generate/image", dry);  // b caches the router
    ASSERT_EQ(first.status, 200) << first.body;
    EXPECT_EQ(first.Json()["routing"]["resolvedSettings"]["optimizeFor"], "cost");
    ASSERT_EQ(send(ca, "PATCH", "/v1/routers/" + router.Json()["id"].get<std::string>(),
                   {{"settings", {{"optimizeFor", "quality"}}}})
                  .status,
              200);
    std::string seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(1000);
    while (std::chrono::steady_clock::now() < deadline && seen != "quality") {
        seen = send(cb, "POST", "/v1/generate/image", dry)
                   .Json()["routing"]["resolvedSettings"]["optimizeFor"];
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(seen, "quality");
    // Deleted through a: b answers 404 as soon as the notification is in.
    ASSERT_EQ(
        send(ca, "DELETE", "/v1/routers/" + router.Json()["id"].get<std::string>(), nullptr).status,
        204);
    int status = 200;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1000);
    while (std::chrono::steady_clock::now() < until && status != 404) {
        status = send(cb, "POST", "/v1/generate/image", dry).status;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(status, 404);
}

}  // namespace
}  // namespace genhost::testing
