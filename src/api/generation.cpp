// POST /v1/<generation endpoint>: validate, price, store the task, answer {id, estimatedCost}.
#include "handlers.hpp"

#include "genhost/core/ids.hpp"

namespace genhost::api {

namespace asio = boost::asio;

asio::awaitable<http::Response> CreateGeneration(App& app, const std::string& endpoint,
                                                 http::Request& req, const auth::Principal& who) {
    auto body = ParseJsonBody(req.body, app.max_json_depth);
    if (!body) co_return http::Response::Error(body.error(), app.doc_url);

    auto issues = app.schemas->Validate(endpoint, *body);
    if (!issues.empty()) {
        co_return http::Response::Error(
            ApiError::InvalidRequest("Invalid request body", std::move(issues)), app.doc_url);
    }
    nlohmann::json input = app.schemas->ApplyDefaults(endpoint, *body);
    const std::string model = input.at("model").get<std::string>();
    const auto* info = app.catalog->FindModel(model);
    if (info == nullptr) {
        // The schema knows a model the catalog does not: a data error of this server.
        throw std::logic_error("model " + model + " is in schemas/ but not in the catalog");
    }
    const double credits = app.catalog->EstimateCredits(endpoint, input);
    const TierLimits limits = LimitsFor(*app.catalog, who.tier, model);

    store::NewTask task;
    const std::string id = NewUuid();
    task.id = id;
    task.org_id = who.org_id;
    task.endpoint = endpoint;
    task.model = model;
    task.limit_key = info->concurrency_group.empty() ? model : info->concurrency_group;
    task.input_json = input.dump();
    task.estimated_credits = credits;
    task.max_concurrent = limits.max_concurrent;
    task.max_daily = limits.max_daily;
    const auto created = co_await app.tasks.Create(std::move(task));
    if (created.kind == store::CreateResult::Kind::kRateLimited) {
        ApiError e;
        e.code = ErrorCode::kRateLimited;
        e.message = "Your daily task limit has been reached.";
        e.retry_after_seconds = created.retry_after_seconds;
        co_return http::Response::Error(e, app.doc_url);
    }
    co_return http::Response::Json(
        200, {{"id", id}, {"estimatedCost", {{"credits", CreditsJson(credits)}}}});
}

}  // namespace genhost::api
