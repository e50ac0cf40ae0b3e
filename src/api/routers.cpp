// /v1/routers: model routers, saved routing configurations (docs/routers.md, SPEC.md "Model
// Router", CLIENTS.md 3.7).
//
// POST validates the body (schemas/routers.json), checks that every model id is a public video,
// image or audio model of the catalog, fills the default settings and stores the router at
// version 1 (a slug the organization already uses is a 409). GET reads one or lists them (newest
// first, keyset pages). PATCH (schemas/routers_update.json) merges the settings field by field
// into the stored ones under a row lock; the version grows only when the effective settings
// change. DELETE marks the router deleted: its slug is free again. GET /v1/routers/{id}/requests
// lists the router's decision log (store::RouterLog; generate.cpp writes it), deleted routers'
// too.
#include "genhost/api/page.hpp"
#include "genhost/api/routers_routes.hpp"
#include "handlers.hpp"

#include "genhost/core/ids.hpp"

#include <array>
#include <set>
#include <string_view>

namespace genhost::api {

namespace asio = boost::asio;

namespace {

// DefaultSettings are the settings of a router created without any: cost-optimised, every model
// allowed, no credit cap, no capacity fallback.
nlohmann::json DefaultSettings() {
    return {{"schemaVersion", 1},
            {"models", {{"mode", "allow_new_except"}, {"ids", nlohmann::json::array()}}},
            {"maxCreditsPerGeneration", nlohmann::json::object()},
            {"optimizeFor", "cost"},
            {"fallback", {{"onCapacity", false}}}};
}

// MergeSettings lays `patch` (validated by the schema) over the effective settings `base`, field
// by field: within `models`, `maxCreditsPerGeneration` and `fallback`, a member left out keeps
// its value. Repeated model ids are kept once.
nlohmann::json MergeSettings(nlohmann::json base, const nlohmann::json& patch) {
    for (const auto& [key, value] : patch.items()) {
        if (value.is_object() && base.contains(key) && base[key].is_object()) {
            for (const auto& [member, v] : value.items()) base[key][member] = v;
        } else {
            base[key] = value;
        }
    }
    auto& ids = base["models"]["ids"];
    nlohmann::json unique = nlohmann::json::array();
    std::set<std::string> seen;
    for (const auto& id : ids) {
        if (seen.insert(id.get<std::string>()).second) unique.push_back(id);
    }
    ids = std::move(unique);
    base["schemaVersion"] = 1;
    return base;
}

// kRoutableEndpoints are the endpoints whose models routed generation chooses among: video
// (text, image or video to video), image (text to image) and audio (speech and sound effects).
// Upscalers, dubbing, isolation, performances and avatars are not generation from a prompt.
constexpr std::array<std::string_view, 6> kRoutableEndpoints = {"text_to_video",  "image_to_video",
                                                                "video_to_video", "text_to_image",
                                                                "text_to_speech", "sound_effect"};

bool Routable(const catalog::ModelInfo& model) {
    for (const auto endpoint : kRoutableEndpoints) {
        if (model.ServesEndpoint(endpoint)) return true;
    }
    return false;
}

// ModelIssues are the 400 issues of model ids in `settings` that are not public video, image or
// audio generation models of the catalog (kRoutableEndpoints).
std::vector<Issue> ModelIssues(const catalog::Catalog& catalog, const nlohmann::json& settings) {
    std::vector<Issue> issues;
    if (!settings.contains("models") || !settings["models"].contains("ids")) return issues;
    const auto& ids = settings["models"]["ids"];
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::string id = ids[i].get<std::string>();
        const auto* model = catalog.FindModel(id);
        if (model == nullptr || !Routable(*model)) {
            issues.push_back(
                {"custom",
                 {"settings", "models", "ids", std::to_string(i)},
                 "Unknown model: " + id + " is not a video, image or audio generation model"});
        }
    }
    return issues;
}

nlohmann::json RouterJson(const store::RouterRecord& r) {
    return {{"id", r.id},
            {"slug", r.slug},
            {"name", r.name},
            {"description", r.description ? nlohmann::json(*r.description) : nlohmann::json()},
            {"version", r.version},
            {"settings", nlohmann::json::parse(r.settings_json)},
            {"createdAt", FormatTimestamp(r.created_at)},
            {"updatedAt", FormatTimestamp(r.updated_at)}};
}

http::Response NotFound(const App& app) {
    return http::Response::Error(ApiError::NotFound("Router not found"), app.doc_url);
}

http::Response Invalid(const App& app, std::vector<Issue> issues) {
    return http::Response::Error(
        ApiError::InvalidRequest("Invalid request body", std::move(issues)), app.doc_url);
}

asio::awaitable<http::Response> CreateRouter(App& app, http::Request& req,
                                             const auth::Principal& who) {
    auto checked = co_await CheckedBody(app, std::move(req.body), "routers", /*defaults=*/true);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    const nlohmann::json input = std::move(*checked);
    const nlohmann::json patch = input.value("settings", nlohmann::json::object());
    if (auto issues = ModelIssues(*app.catalog, patch); !issues.empty()) {
        co_return Invalid(app, std::move(issues));
    }
    store::NewRouter router;
    router.id = NewUuid();
    router.org_id = who.org_id;
    router.slug = input.at("slug").get<std::string>();
    router.name = input.value("name", router.slug);
    if (input.contains("description") && !input.at("description").is_null()) {
        router.description = input.at("description").get<std::string>();
    }
    router.settings_json = MergeSettings(DefaultSettings(), patch).dump();
    const std::string slug = router.slug;
    const auto created = co_await app.routers.repo->Create(std::move(router));
    if (!created) {
        co_return http::Response::Error(
            ApiError::Conflict("A router with slug " + slug + " already exists"), app.doc_url);
    }
    co_return http::Response::Json(200, RouterJson(*created));
}

asio::awaitable<http::Response> GetRouter(App& app, http::Request& req,
                                          const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    const auto router = co_await app.routers.repo->Get(who.org_id, id);
    if (!router) co_return NotFound(app);
    co_return http::Response::Json(200, RouterJson(*router));
}

asio::awaitable<http::Response> ListRouters(App& app, http::Request& req,
                                            const auth::Principal& who) {
    const auto query = ParsePageQuery(req);
    if (!query) co_return http::Response::Error(query.error(), app.doc_url);
    const auto page = co_await app.routers.repo->List(who.org_id, query->limit, query->after);
    nlohmann::json data = nlohmann::json::array();
    for (const auto& r : page.routers) data.push_back(RouterJson(r));
    std::optional<store::Keyset> next;
    if (page.more && !page.routers.empty()) {
        next = store::Keyset{page.routers.back().created_at, page.routers.back().id};
    }
    co_return http::Response::Json(200, PageJson(std::move(data), next));
}

asio::awaitable<http::Response> UpdateRouter(App& app, http::Request& req,
                                             const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    auto checked =
        co_await CheckedBody(app, std::move(req.body), "routers_update", /*defaults=*/false);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    const nlohmann::json input = std::move(*checked);
    const nlohmann::json patch = input.value("settings", nlohmann::json::object());
    if (auto issues = ModelIssues(*app.catalog, patch); !issues.empty()) {
        co_return Invalid(app, std::move(issues));
    }
    store::RouterChange change;
    if (input.contains("name")) change.name = input.at("name").get<std::string>();
    if (input.contains("description")) {
        change.set_description = true;
        if (!input.at("description").is_null()) {
            change.description = input.at("description").get<std::string>();
        }
    }
    change.change_settings = input.contains("settings");
    const auto updated = co_await app.routers.repo->Update(
        who.org_id, id, std::move(change), [&patch](const std::string& stored) {
            return MergeSettings(nlohmann::json::parse(stored), patch).dump();
        });
    // This node's cached routers go now; other nodes' on the notification (docs/routers.md).
    if (app.routers.cache != nullptr) app.routers.cache->Clear();
    if (!updated) co_return NotFound(app);
    co_return http::Response::Json(200, RouterJson(*updated));
}

asio::awaitable<http::Response> DeleteRouter(App& app, http::Request& req,
                                             const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    const bool found = co_await app.routers.repo->Delete(who.org_id, id);
    if (app.routers.cache != nullptr) app.routers.cache->Clear();
    if (!found) co_return NotFound(app);
    co_return http::Response::NoContent();
}

nlohmann::json DecisionJson(const store::RouterDecision& d) {
    auto or_null = [](const std::optional<std::string>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json();
    };
    return {{"id", d.id},
            {"requestId", d.request_id},
            {"createdAt", FormatTimestamp(d.created_at)},
            {"status", d.status},
            {"dryRun", d.dry_run},
            {"routerVersion", d.router_version},
            {"taskId", or_null(d.task_id)},
            {"model", or_null(d.model)},
            {"provider", or_null(d.provider)},
            {"estimatedCredits",
             d.estimated_credits ? CreditsJson(*d.estimated_credits) : nlohmann::json()},
            {"reasonCode", or_null(d.reason_code)},
            {"reason", or_null(d.reason)},
            {"emptiedBy", nlohmann::json::parse(d.emptied_by_json)},
            {"pipeline", nlohmann::json::parse(d.pipeline_json)}};
}

// GET /v1/routers/{id}/requests: the decision log, newest first; deleted routers keep theirs.
asio::awaitable<http::Response> ListRouterRequests(App& app, http::Request& req,
                                                   const auth::Principal& who) {
    const auto query = ParsePageQuery(req);
    if (!query) co_return http::Response::Error(query.error(), app.doc_url);
    const std::string id = LowerUuid(req.params["id"]);
    const auto router = co_await app.routers.repo->GetAny(who.org_id, id);
    if (!router) co_return NotFound(app);
    const auto page = co_await app.routers.log->List(who.org_id, id, query->limit, query->after);
    nlohmann::json data = nlohmann::json::array();
    for (const auto& d : page.decisions) data.push_back(DecisionJson(d));
    std::optional<store::Keyset> next;
    if (page.more && !page.decisions.empty()) {
        next = store::Keyset{page.decisions.back().created_at, page.decisions.back().id};
    }
    co_return http::Response::Json(200, PageJson(std::move(data), next));
}

}  // namespace

void RegisterRouterRoutes(Bindings& b) {
    b.Authed("listRouters", ListRouters);
    b.Authed("createRouter", CreateRouter);
    b.Authed("getRouter", GetRouter);
    b.Authed("updateRouter", UpdateRouter);
    b.Authed("deleteRouter", DeleteRouter);
    b.Authed("listRouterRequests", ListRouterRequests);
}

}  // namespace genhost::api
