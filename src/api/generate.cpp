// POST /v1/generate/{video,image,audio}: routed generation (SPEC.md "Routed generation",
// CLIENTS.md 3.8, docs/routers.md).
//
// The body is validated against schemas/generate_<modality>.json; the router is looked up by its
// slug (404 when none is live); the selection engine (genhost/routing/engine.hpp) decides from the
// router's settings, the input, the catalog and a snapshot of the organization's concurrency
// slots and the measured latencies. The chosen model's own body is then created as an ordinary
// task (CreateTask, the path of direct generation), unless the request is a dry run. Every call
// that names a router is written to its decision log, off the request path (store::RouterLog).
#include "genhost/api/routers_routes.hpp"
#include "handlers.hpp"

#include "genhost/core/ids.hpp"

namespace genhost::api {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

SysTime Now() {
    return std::chrono::time_point_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now());
}

// ConfigId is the body's configId when it is a string (valid or not: the lookup decides).
std::optional<std::string> ConfigId(const std::optional<json>& body) {
    if (!body || !body->is_object()) return std::nullopt;
    auto it = body->find("configId");
    if (it == body->end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

json RoutingJson(const std::string& slug, const routing::Decision& d, double credits) {
    const auto& c = *d.Chosen();
    json routing = {{"configId", slug},
                    {"model", c.model},
                    {"provider", c.provider},
                    {"estimatedCost", {{"credits", CreditsJson(credits)}}},
                    {"resolvedSettings",
                     {{"optimizeFor", routing::OptimizeForName(d.optimize_for)},
                      {"priceCeiling", d.price_ceiling ? CreditsJson(*d.price_ceiling) : json()}}},
                    {"resolvedInput", c.resolved}};
    if (d.capacity_mattered) {
        routing["capacityFallback"] = {{"skipped", d.skipped}, {"allExhausted", d.all_exhausted}};
    }
    return routing;
}

// FindString returns the issue path, in the routed input, of the string `value` (a media URI of
// the chosen model's body), or nullopt.
std::optional<std::vector<std::string>> FindString(const json& node, const std::string& value,
                                                   std::vector<std::string>& path) {
    if (node.is_string()) {
        if (node.get_ref<const std::string&>() == value) return path;
        return std::nullopt;
    }
    if (node.is_object()) {
        for (const auto& [key, child] : node.items()) {
            path.push_back(key);
            auto found = FindString(child, value, path);
            path.pop_back();
            if (found) return found;
        }
    } else if (node.is_array()) {
        for (std::size_t i = 0; i < node.size(); ++i) {
            path.push_back(std::to_string(i));
            auto found = FindString(node[i], value, path);
            path.pop_back();
            if (found) return found;
        }
    }
    return std::nullopt;
}

// ToInputPaths rewrites the issues of the chosen model's body (a media input that could not be
// fetched, say) to the paths of the routed request that held the same value.
void ToInputPaths(ApiError& error, const json& body, const json& input) {
    for (auto& issue : error.issues) {
        std::string pointer;
        for (const auto& part : issue.path) pointer += "/" + part;
        const json::json_pointer ptr(pointer);
        std::vector<std::string> path = {"input"};
        std::optional<std::vector<std::string>> found;
        if (!pointer.empty() && body.contains(ptr) && body.at(ptr).is_string()) {
            found = FindString(input, body.at(ptr).get<std::string>(), path);
        }
        issue.path = found ? *found : std::vector<std::string>{"input"};
    }
}

// Logged fills what every decision log entry of this request shares.
store::RouterDecision Logged(const http::Request& req, const auth::Principal& who,
                             const store::RouterRecord& router, bool dry_run) {
    store::RouterDecision d;
    d.id = NewOrderedUuid();
    d.org_id = who.org_id;
    d.router_id = router.id;
    d.router_version = router.version;
    d.request_id = req.request_id;
    d.dry_run = dry_run;
    d.created_at = Now();
    return d;
}

void Describe(store::RouterDecision& entry, const routing::Decision& d) {
    entry.pipeline_json = d.pipeline.dump();
    entry.reason = d.reason;
    json emptied = json::array();
    if (d.emptied_by) emptied.push_back(routing::FilterName(*d.emptied_by));
    entry.emptied_by_json = emptied.dump();
    if (const auto* c = d.Chosen()) {
        entry.model = c->model;
        entry.provider = c->provider;
        entry.estimated_credits = c->credits;
        entry.reason_code = d.reason_code;
    }
}

asio::awaitable<http::Response> Generate(App& app, routing::Modality modality, http::Request& req,
                                         const auth::Principal& who) {
    const std::string schema = "generate_" + std::string(routing::ModalityName(modality));
    CheckedRequest parsed =
        co_await CheckedBodyKeepingInvalid(app, std::move(req.body), schema, /*defaults=*/true);
    // The router first: a request naming no live router is a 404 whatever else is wrong (a
    // configId that is not a slug is a 400 of the schema).
    std::optional<store::RouterRecord> router;
    store::GenerateContext context;
    bool have_slots = false;
    const auto slug = ConfigId(parsed.body);
    const bool slug_ok =
        slug && !(parsed.error && std::any_of(parsed.error->issues.begin(),
                                              parsed.error->issues.end(), [](const Issue& i) {
                                                  return !i.path.empty() && i.path[0] == "configId";
                                              }));
    if (slug_ok) {
        if (app.routers.cache != nullptr) router = app.routers.cache->Find(who.org_id, *slug);
        if (!router) {
            // The router and the organization's slots in one round trip.
            const std::uint64_t epoch =
                app.routers.cache != nullptr ? app.routers.cache->Epoch() : 0;
            context = co_await app.routers.repo->ForGenerate(who.org_id, *slug);
            have_slots = true;
            router = std::move(context.router);
            if (router && app.routers.cache != nullptr) app.routers.cache->Put(*router, epoch);
        }
        if (!router || router->deleted) {
            if (router) {
                // A deleted router's log records the attempt.
                auto entry = Logged(req, who, *router, false);
                entry.status = "router_config_not_found";
                entry.reason = "The router was deleted";
                app.routers.log->Append(std::move(entry));
            }
            co_return http::Response::Error(ApiError::NotFound("Router not found"), app.doc_url);
        }
    }
    if (parsed.error) {
        if (router) {
            const auto dry = parsed.body->find("dryRun");
            auto entry = Logged(req, who, *router,
                                dry != parsed.body->end() && dry->is_boolean() && dry->get<bool>());
            entry.status = "invalid_request";
            entry.reason = parsed.error->message;
            for (const auto& issue : parsed.error->issues) {
                *entry.reason += "; " + issue.PathText() + ": " + issue.message;
            }
            app.routers.log->Append(std::move(entry));
        }
        co_return http::Response::Error(*parsed.error, app.doc_url);
    }
    const json& body = *parsed.body;
    const json& input = body.at("input");
    const bool dry_run = body.value("dryRun", false);
    auto entry = Logged(req, who, *router, dry_run);

    // The snapshot: which models are at the organization's concurrency limit (read only when
    // the router's capacity fallback can use it), and latencies (only when ranked by latency).
    const auto settings = routing::Settings::FromJson(json::parse(router->settings_json));
    routing::Snapshot snapshot;
    if (settings.on_capacity) {
        if (!have_slots) context = co_await app.routers.repo->ForGenerate(who.org_id, *slug);
        for (const auto& id : app.routers.engine->Models(modality)) {
            const auto* info = app.catalog->FindModel(id);
            const std::string& group = info->concurrency_group;
            const auto active = context.active.find(group);
            const int used = active == context.active.end() ? 0 : active->second;
            if (context.waiting.contains(group) ||
                used >= LimitsFor(*app.catalog, who.tier, id).max_concurrent) {
                snapshot.at_limit.insert(id);
            }
        }
    }
    if (settings.optimize_for == routing::OptimizeFor::kLatency) {
        const auto latencies = co_await app.routers.snapshot->Latencies();
        for (const auto& [model, latency] : latencies) {
            snapshot.latency[model] = {latency.ewma_seconds, latency.samples};
        }
    }
    const routing::Decision decision =
        app.routers.engine->Route(modality, settings, input, snapshot);
    Describe(entry, decision);
    const auto* chosen = decision.Chosen();
    if (chosen == nullptr) {
        entry.status = "no_eligible_model";
        app.routers.log->Append(std::move(entry));
        const std::string filter(routing::FilterName(*decision.emptied_by));
        std::vector<Issue> issues = {
            {"custom", {"input"}, "No eligible model: the " + filter + " filter left none"}};
        for (const auto& e : decision.excluded) {
            issues.push_back(
                {"custom",
                 {"input"},
                 e.model + " (" + std::string(routing::FilterName(e.filter)) + "): " + e.why});
        }
        co_return http::Response::Error(
            ApiError::InvalidRequest("No eligible model: the " + filter + " filter left none",
                                     std::move(issues)),
            app.doc_url);
    }
    if (dry_run) {
        entry.status = "routed";
        app.routers.log->Append(std::move(entry));
        co_return http::Response::Json(
            200, {{"dryRun", true}, {"routing", RoutingJson(*slug, decision, chosen->credits)}});
    }
    Result<CreatedTask> created = ApiError::Internal();
    try {
        created = co_await CreateTask(app, chosen->endpoint, chosen->body, who);
    } catch (const std::exception& e) {
        entry.status = "error";
        entry.reason = "The task could not be created: " + std::string(e.what());
        app.routers.log->Append(std::move(entry));
        throw;
    }
    if (!created) {
        ApiError error = created.error();
        entry.status = error.code == ErrorCode::kRateLimited ? "error" : "invalid_request";
        entry.reason = *entry.reason + " The task was not created: " + error.message;
        if (!error.issues.empty()) *entry.reason += " (" + error.issues.front().message + ")";
        ToInputPaths(error, chosen->body, input);
        app.routers.log->Append(std::move(entry));
        co_return http::Response::Error(error, app.doc_url);
    }
    entry.status = "routed";
    entry.task_id = created->id;
    entry.estimated_credits = created->credits;
    app.routers.log->Append(std::move(entry));
    auto response =
        http::Response::Json(200, {{"dryRun", false},
                                   {"id", created->id},
                                   {"routing", RoutingJson(*slug, decision, created->credits)}});
    response.task_id = created->id;
    co_return response;
}

asio::awaitable<http::Response> GenerateVideo(App& app, http::Request& req,
                                              const auth::Principal& who) {
    co_return co_await Generate(app, routing::Modality::kVideo, req, who);
}
asio::awaitable<http::Response> GenerateImage(App& app, http::Request& req,
                                              const auth::Principal& who) {
    co_return co_await Generate(app, routing::Modality::kImage, req, who);
}
asio::awaitable<http::Response> GenerateAudio(App& app, http::Request& req,
                                              const auth::Principal& who) {
    co_return co_await Generate(app, routing::Modality::kAudio, req, who);
}

}  // namespace

void RegisterGenerateRoutes(Bindings& b) {
    b.Authed("generateVideo", GenerateVideo);
    b.Authed("generateImage", GenerateImage);
    b.Authed("generateAudio", GenerateAudio);
}

}  // namespace genhost::api
