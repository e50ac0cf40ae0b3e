// GET and DELETE /v1/tasks/{id}.
#include "genhost/api/tasks_routes.hpp"
#include "handlers.hpp"

#include "genhost/api/task_json.hpp"
#include "genhost/core/ids.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace genhost::api {

namespace asio = boost::asio;

namespace {

asio::awaitable<http::Response> GetTask(App& app, http::Request& req, const auth::Principal& who) {
    const auto task = co_await app.tasks.Get(who.org_id, std::move(req.params["id"]));
    if (!task) co_return http::Response::Error(ApiError::NotFound("Task not found"), app.doc_url);

    std::vector<std::string> urls;
    if (task->status == store::TaskStatus::kSucceeded) {
        urls.reserve(task->outputs.size());
        for (const auto& name : task->outputs) {
            urls.push_back(app.signer.Url(task->id, name, app.output_url_ttl_seconds));
        }
    }
    co_return http::Response::JsonText(200, TaskJson(*task, urls));
}

asio::awaitable<http::Response> DeleteTask(App& app, http::Request& req,
                                           const auth::Principal& who) {
    // PostgreSQL matches a uuid in any case, but the output store's folders are named in lower
    // case: an id sent in capitals must not leave the deleted task's files behind.
    const std::string id = LowerUuid(req.params["id"]);
    const auto result = co_await app.tasks.Cancel(who.org_id, id, /*remove=*/true);
    using Kind = store::CancelResult::Kind;
    if (result.kind == Kind::kNotFound) {
        co_return http::Response::Error(ApiError::NotFound("Task not found"), app.doc_url);
    }
    if (result.kind == Kind::kDeleted) {
        // The record is gone; now its files (on the blocking pool: file I/O).
        co_await asio::co_spawn(
            app.blocking,
            [&]() -> asio::awaitable<void> {
                app.outputs.DeleteTask(id);
                co_return;
            },
            asio::use_awaitable);
    }
    co_return http::Response::NoContent();
}

}  // namespace

void RegisterTaskRoutes(Bindings& b) {
    b.Authed("getTask", GetTask);
    b.Authed("deleteTask", DeleteTask);
}

}  // namespace genhost::api
