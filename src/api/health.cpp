// GET /healthz, /readyz, /metrics and /docs/errors.
#include "genhost/api/service_routes.hpp"
#include "handlers.hpp"

#include "genhost/core/resources.hpp"
#include "genhost/core/version.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace genhost::api {

namespace asio = boost::asio;

namespace {

asio::awaitable<http::Response> Healthz(App& app, http::Request& req) {
    co_return http::Response::Json(200, {{"status", "ok"}});
}

asio::awaitable<http::Response> Readyz(App& app, http::Request& req) {
    if (app.draining->load()) {
        co_return http::Response::Error(
            ApiError::Unavailable("Shutting down: this node takes no new work"), app.doc_url);
    }
    bool ready = false;
    try {
        co_await app.db.Ping();
        ready = true;
    } catch (const std::exception&) {
    }
    if (!ready) {
        co_return http::Response::Error(ApiError::Unavailable("Database unreachable"), app.doc_url);
    }
    co_return http::Response::Json(200, {{"status", "ready"}});
}

// ProcessSamples are the process metrics under their usual names (process_*), read from
// /proc/self: CPU seconds, resident and virtual memory, open and allowed file descriptors,
// threads and start time.
void ProcessSamples(std::vector<http::Sample>& out) {
    std::ifstream stat_file("/proc/self/stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return;
    // After "pid (comm)": field 3 (state) onwards; utime and stime are fields 14 and 15, threads
    // 20, starttime 22, vsize 23 and rss 24.
    std::istringstream fields(stat.substr(close + 2));
    std::vector<std::string> f{"", "", ""};
    for (std::string v; fields >> v;) f.push_back(v);
    if (f.size() < 25) return;
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    // The boot time does not change: read once.
    static const double boot = [] {
        std::ifstream proc_stat("/proc/stat");
        for (std::string line; std::getline(proc_stat, line);) {
            if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
        }
        return 0.0;
    }();
    std::size_t fds = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        ++fds;
    }
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    out.push_back({"process_cpu_seconds_total",
                   "User and system CPU time of this process.",
                   {},
                   (std::stod(f[14]) + std::stod(f[15])) / ticks,
                   true});
    out.push_back(
        {"process_resident_memory_bytes", "Resident memory.", {}, std::stod(f[24]) * page});
    out.push_back({"process_virtual_memory_bytes", "Virtual memory.", {}, std::stod(f[23])});
    out.push_back({"process_open_fds", "Open file descriptors.", {}, static_cast<double>(fds)});
    out.push_back({"process_max_fds",
                   "The open-file limit.",
                   {},
                   limit.rlim_cur == RLIM_INFINITY ? -1.0 : static_cast<double>(limit.rlim_cur)});
    out.push_back({"process_threads", "Threads of this process.", {}, std::stod(f[20])});
    out.push_back({"process_start_time_seconds",
                   "When this process started, in seconds since the epoch.",
                   {},
                   boot + std::stod(f[22]) / ticks});
}

asio::awaitable<http::Response> MetricsText(App& app, http::Request& req) {
    std::vector<http::Sample> gauges;
    gauges.push_back({"genhost_build_info",
                      "The version of this genhost (always 1).",
                      {{"version", genhost::Version()}},
                      1});
    std::map<std::string, long long> counts;
    bool database_ok = true;
    try {
        counts = co_await app.tasks.ActiveCounts();
    } catch (const std::exception&) {
        database_ok = false;
    }
    // Finished tasks are counted by the nodes that ran them (genhost_tasks_finished_total):
    // counting them here would read the whole table at every scrape.
    for (const char* status : {"PENDING", "THROTTLED", "RUNNING"}) {
        gauges.push_back({"genhost_tasks",
                          "Unfinished tasks by status (cluster-wide).",
                          {{"status", status}},
                          static_cast<double>(counts[status])});
    }
    gauges.push_back({"genhost_queue_depth",
                      "Tasks waiting to run (PENDING + THROTTLED).",
                      {},
                      static_cast<double>(counts["PENDING"] + counts["THROTTLED"])});
    const auto pool = app.db.Stats();
    gauges.push_back({"genhost_db_pool_connections",
                      "Database connections in the pool.",
                      {},
                      static_cast<double>(pool.size)});
    gauges.push_back({"genhost_db_pool_busy",
                      "Database connections running a query.",
                      {},
                      static_cast<double>(pool.busy)});
    gauges.push_back({"genhost_db_pool_queued",
                      "Database jobs waiting for a connection.",
                      {},
                      static_cast<double>(pool.queued)});
    gauges.push_back({"genhost_db_pool_jobs_total",
                      "Database jobs run.",
                      {},
                      static_cast<double>(pool.jobs),
                      true});
    gauges.push_back({"genhost_db_pool_failures_total",
                      "Database jobs that failed.",
                      {},
                      static_cast<double>(pool.failures),
                      true});
    gauges.push_back({"genhost_db_up",
                      "Whether the database answered this scrape.",
                      {},
                      database_ok ? 1.0 : 0.0});
    if (app.extra_gauges) {
        for (auto& g : app.extra_gauges()) gauges.push_back(std::move(g));
    }
    ProcessSamples(gauges);
    http::Response r;
    r.body = app.metrics.Render(gauges);
    r.SetHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    co_return r;
}

asio::awaitable<http::Response> ErrorsDoc(App& app, http::Request& req) {
    http::Response r;
    r.body = std::string(FindResource("docs/errors.md").value_or("See docs/errors.md."));
    r.SetHeader("Content-Type", "text/markdown; charset=utf-8");
    co_return r;
}

}  // namespace

void RegisterHealthRoutes(Bindings& b) {
    b.Public("healthz", Healthz);
    b.Public("readyz", Readyz);
    b.Public("getMetrics", MetricsText);
    b.Public("getErrorsDoc", ErrorsDoc);
}

}  // namespace genhost::api
