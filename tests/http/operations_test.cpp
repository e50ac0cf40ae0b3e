// Issue 32, operations: /metrics on a listener of its own (GENHOST_METRICS_LISTEN),
// X-Forwarded-For honoured only from trusted proxies (GENHOST_TRUSTED_PROXIES), and hostile
// methods and paths that cannot grow /metrics.

#include "helpers.hpp"

#include <gmock/gmock.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <pqxx/pqxx>

#include <random>
#include <set>
#include <sstream>

namespace genhost::testing {
namespace {

using ::testing::HasSubstr;

// FreePort returns a loopback port that was free a moment ago.
unsigned short FreePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

// AccessLine returns the access-log line of the request with id `request_id`, or null.
nlohmann::json AccessLine(const ServerProcess& server, const std::string& request_id) {
    for (int i = 0; i < 40; ++i) {
        std::istringstream in(server.Log());
        for (std::string l; std::getline(in, l);) {
            const auto j = nlohmann::json::parse(l, nullptr, /*allow_exceptions=*/false);
            if (j.is_object() && j.value("logger", "") == "access" &&
                j.value("request_id", "") == request_id) {
                return j;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return nullptr;
}

TEST(Operations, MetricsListenServesMetricsOffTheApiPort) {
    TestDatabase db;
    const unsigned short port = FreePort();
    ServerProcess server(db.dsn(),
                         {{"GENHOST_METRICS_LISTEN", "127.0.0.1:" + std::to_string(port)}});
    server.Start();
    HttpClient api("127.0.0.1", server.port());
    HttpClient metrics("127.0.0.1", port);
    EXPECT_EQ(api.Send("GET", "/healthz").status, 200);
    EXPECT_EQ(api.Send("GET", "/metrics").status, 404);  // off the public port
    const auto r = metrics.Send("GET", "/metrics");
    ASSERT_EQ(r.status, 200);
    EXPECT_THAT(r.body, HasSubstr("genhost_build_info{version=\""));
    EXPECT_THAT(r.body, HasSubstr("route=\"/healthz\""));  // the API's requests are counted
    // Nothing else is served there.
    EXPECT_EQ(metrics.Send("GET", "/healthz").status, 404);
    EXPECT_EQ(
        metrics.Send("GET", "/v1/tasks/00000000-0000-0000-0000-000000000000", AuthHeaders()).status,
        404);
    EXPECT_THAT(server.Log(), HasSubstr("metrics on 127.0.0.1:" + std::to_string(port)));
}

TEST(Operations, ABadMetricsListenOrTrustedProxiesStopsTheStart) {
    TestDatabase db;
    for (const auto& [name, value] : std::map<std::string, std::string>{
             {"GENHOST_METRICS_LISTEN", "nowhere"}, {"GENHOST_TRUSTED_PROXIES", "10.0.0.0/40"}}) {
        ServerProcess server(db.dsn(), {{name, value}});
        EXPECT_THROW(server.Start(std::chrono::seconds(20)), std::exception) << name;
        EXPECT_THAT(server.Log(), HasSubstr(name == "GENHOST_METRICS_LISTEN"
                                                ? "invalid metrics listen address"
                                                : "not an address or network: 10.0.0.0/40"));
    }
}

TEST(Operations, ForwardedForNamesTheClientOnlyFromATrustedProxy) {
    TestDatabase db;
    const Headers forwarded = {{"X-Forwarded-For", "6.6.6.6, 198.51.100.7"},
                               {"X-Request-Id", "xff-probe-1"}};
    {
        ServerProcess server(db.dsn(), {{"GENHOST_TRUSTED_PROXIES", "127.0.0.1,10.0.0.0/8"}});
        server.Start();
        HttpClient c("127.0.0.1", server.port());
        EXPECT_EQ(c.Send("GET", "/healthz", forwarded).status, 200);
        const auto line = AccessLine(server, "xff-probe-1");
        ASSERT_TRUE(line.is_object()) << server.Log();
        EXPECT_EQ(line["remote"], "198.51.100.7");
        EXPECT_EQ(line["peer"], "127.0.0.1");
    }
    // Without trusted proxies (the default) the header is ignored: a client cannot choose the
    // address it is logged under.
    ServerProcess server(db.dsn());
    server.Start();
    HttpClient c("127.0.0.1", server.port());
    EXPECT_EQ(c.Send("GET", "/healthz", forwarded).status, 200);
    const auto line = AccessLine(server, "xff-probe-1");
    ASSERT_TRUE(line.is_object()) << server.Log();
    EXPECT_EQ(line["remote"], "127.0.0.1");
    EXPECT_FALSE(line.contains("peer"));
}

// Series of genhost_http_requests_total: one per route, method and status.
std::set<std::string> RequestSeries(HttpClient& c) {
    std::set<std::string> out;
    std::istringstream in(c.Send("GET", "/metrics").body);
    for (std::string l; std::getline(in, l);) {
        if (l.rfind("genhost_http_requests_total{", 0) == 0) out.insert(l.substr(0, l.rfind(' ')));
    }
    return out;
}

// Issue 32: job kinds are declared once (tasks/job_kinds.hpp); a kind in the database that no
// engine of this version serves (a rolling upgrade's) is reported at start and left queued.
TEST(Operations, AnUnknownJobKindInTheDatabaseIsReportedAtStart) {
    TestDatabase db;
    {
        ServerProcess first(db.dsn());
        first.Start();  // migrates
    }
    {
        pqxx::connection c(db.dsn());
        pqxx::nontransaction n(c);
        n.exec("SELECT genhost_enqueue_job('thumbnail', 'x1', 1)");
        n.exec("SELECT genhost_enqueue_job('thumbnail', 'x2', 1)");
    }
    ServerProcess server(db.dsn());
    server.Start();
    EXPECT_THAT(server.Log(), HasSubstr("2 job(s) of kind 'thumbnail' are in the database, and no "
                                        "engine of this version serves that kind"));
    HttpClient c("127.0.0.1", server.port());
    EXPECT_EQ(c.Send("GET", "/readyz").status, 200);
    pqxx::connection conn(db.dsn());
    pqxx::nontransaction n(conn);
    EXPECT_EQ(
        n.exec1("SELECT count(*) FROM jobs WHERE kind = 'thumbnail' AND status = 'PENDING'")[0]
            .as<int>(),
        2);
}

TEST(Operations, ThousandRandomMethodsAndPathsWithoutAKeyGrowMetricsByAHandfulOfSeries) {
    TestDatabase db;
    ServerProcess server(db.dsn());
    server.Start();
    HttpClient c("127.0.0.1", server.port());
    const auto before = RequestSeries(c);
    std::mt19937 rng(32);
    const std::string letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    for (int i = 0; i < 1000; ++i) {
        std::string method;
        for (int n = 3 + static_cast<int>(rng() % 6); n > 0; --n) method += letters[rng() % 26];
        const std::string path = "/x" + std::to_string(rng()) + "/" + std::to_string(rng());
        c.Send(i % 2 ? method : "GET", path);
    }
    const auto after = RequestSeries(c);
    std::vector<std::string> added;
    for (const auto& s : after) {
        if (!before.count(s)) added.push_back(s);
    }
    EXPECT_LE(added.size(), 6u) << ::testing::PrintToString(added);
    EXPECT_EQ(c.Send("GET", "/healthz").status, 200);
}

}  // namespace
}  // namespace genhost::testing
