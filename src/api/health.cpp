// GET /healthz, /readyz, /metrics and /docs/errors.
#include "handlers.hpp"

#include "genhost/core/resources.hpp"

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

asio::awaitable<http::Response> MetricsText(App& app, http::Request& req) {
    std::vector<http::Sample> gauges;
    std::map<std::string, long long> counts;
    bool database_ok = true;
    try {
        counts = co_await app.tasks.StatusCounts();
    } catch (const std::exception&) {
        database_ok = false;
    }
    for (const char* status :
         {"PENDING", "THROTTLED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"}) {
        gauges.push_back({"genhost_tasks",
                          "Tasks by status (cluster-wide).",
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
    gauges.push_back(
        {"genhost_db_pool_jobs_total", "Database jobs run.", {}, static_cast<double>(pool.jobs)});
    gauges.push_back({"genhost_db_pool_failures_total",
                      "Database jobs that failed.",
                      {},
                      static_cast<double>(pool.failures)});
    gauges.push_back({"genhost_db_up",
                      "Whether the database answered this scrape.",
                      {},
                      database_ok ? 1.0 : 0.0});
    if (app.extra_gauges) {
        for (auto& g : app.extra_gauges()) gauges.push_back(std::move(g));
    }
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
