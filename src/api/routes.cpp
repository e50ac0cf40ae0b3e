// The route table: every operation of the operation table (genhost/api/operations.hpp) bound to
// the handler its resource registered under its operationId. The server refuses to start when an
// operation has no handler, a handler no operation, or a handler's kind does not fit its
// operation's auth. Declared query parameters are checked (CheckQuery) before the handler runs.
#include "handlers.hpp"

#include "genhost/api/operations.hpp"
#include "genhost/api/page.hpp"

#include <set>
#include <stdexcept>

namespace genhost::api {

void Bindings::Add(const std::string& operation_id, Binding binding) {
    if (!bindings_.emplace(operation_id, std::move(binding)).second) {
        throw std::runtime_error("two handlers for operation " + operation_id);
    }
}

void Bindings::Authed(const std::string& operation_id, AuthedFn fn) {
    App& app = app_;
    Add(operation_id,
        {Binding::Kind::kAuthed,
         [&app, fn](http::Request& req, const auth::Principal& who) { return fn(app, req, who); },
         {},
         {}});
}

void Bindings::Public(const std::string& operation_id, PublicFn fn) {
    App& app = app_;
    Add(operation_id,
        {Binding::Kind::kPublic, {}, [&app, fn](http::Request& req) { return fn(app, req); }, {}});
}

void Bindings::Streaming(const std::string& operation_id, std::size_t body_limit,
                         http::StreamingHandler handler) {
    Add(operation_id, {Binding::Kind::kStreaming, {}, {}, std::move(handler), body_limit});
}

namespace {

// WithQueryCheck answers a 400 with the issues of the request's query parameters (declared by
// `op`, and `limit` and `cursor` of a page) before `handler` runs.
AuthedHandler WithQueryCheck(App& app, const Operation& op, AuthedHandler handler) {
    if (op.query_parameters.empty()) return handler;
    return [&app, op, handler = std::move(handler)](
               http::Request& req,
               const auth::Principal& who) -> boost::asio::awaitable<http::Response> {
        auto issues = CheckQuery(op, req);
        if (op.page) {
            if (auto page = ParsePageQuery(req); !page) {
                for (auto& issue : page.error().issues) issues.push_back(std::move(issue));
            }
        }
        if (!issues.empty()) {
            co_return http::Response::Error(
                ApiError::InvalidRequest("Invalid request", std::move(issues)), app.doc_url);
        }
        co_return co_await handler(req, who);
    };
}

}  // namespace

std::vector<std::string> MissingDependencies(const App& app) {
    std::vector<std::string> missing;
    const auto need = [&](bool set, const char* name) {
        if (!set) missing.emplace_back(name);
    };
    need(app.schemas != nullptr, "schemas");
    need(app.catalog != nullptr, "catalog");
    need(app.draining != nullptr, "draining");
    need(app.inputs != nullptr, "inputs");
    need(app.input_files != nullptr, "input_files");
    need(app.uploads.repo != nullptr, "uploads.repo");
    need(app.uploads.signer != nullptr, "uploads.signer");
    need(app.uploads.folder != nullptr, "uploads.folder");
    need(app.uploads.clock != nullptr, "uploads.clock");
    need(app.avatars.repo != nullptr, "avatars.repo");
    need(static_cast<bool>(app.avatars.kick), "avatars.kick");
    need(app.documents.repo != nullptr, "documents.repo");
    need(static_cast<bool>(app.documents.kick), "documents.kick");
    need(app.voices.repo != nullptr, "voices.repo");
    need(static_cast<bool>(app.voices.kick), "voices.kick");
    need(app.routers.repo != nullptr, "routers.repo");
    need(app.routers.engine != nullptr, "routers.engine");
    need(app.routers.snapshot != nullptr, "routers.snapshot");
    need(app.routers.log != nullptr, "routers.log");
    need(app.realtime.repo != nullptr, "realtime.repo");
    need(!app.realtime.token_secret.empty(), "realtime.token_secret");
    need(static_cast<bool>(app.realtime.kick), "realtime.kick");
    need(app.realtime.live != nullptr, "realtime.live");
    need(app.workflows.repo != nullptr, "workflows.repo");
    need(static_cast<bool>(app.workflows.kick), "workflows.kick");
    return missing;
}

void RegisterRoutes(http::Router& router, App& app, const std::vector<RouteSet>& route_sets) {
    if (const auto missing = MissingDependencies(app); !missing.empty()) {
        std::string names;
        for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
        throw std::runtime_error("the routes' dependencies are not all set: " + names);
    }
    Bindings b(app);
    for (const RouteSet& route_set : route_sets) route_set(b);
    AddMediaPlane(router, app);
    const OperationTable table = EmbeddedOperations(*app.schemas);
    std::set<std::string> handlers;
    for (const auto& [id, binding] : b.all()) handlers.insert(id);
    CheckHandlers(table, handlers);
    for (const Operation& op : table.operations) {
        if (!op.endpoint.empty()) {
            // A generation endpoint: the request shapes are data, the handler is shared.
            router.Add(op.method, op.path,
                       Authed(app, [&app, name = op.endpoint](http::Request& req,
                                                              const auth::Principal& who) {
                           return CreateGeneration(app, name, req, who);
                       }));
            continue;
        }
        const Binding& binding = b.all().at(op.operation_id);
        const bool keyed = op.auth == "apiKey" || op.auth == "apiKeyUnversioned";
        const bool fits =
            keyed ? binding.kind == Binding::Kind::kAuthed : binding.kind != Binding::Kind::kAuthed;
        if (!fits) {
            throw std::runtime_error("operation " + op.operation_id + " is " + op.auth +
                                     ", which its handler does not fit");
        }
        if (!op.query_parameters.empty() && binding.kind != Binding::Kind::kAuthed) {
            throw std::runtime_error("operation " + op.operation_id +
                                     ": query parameters are checked on apiKey operations only");
        }
        switch (binding.kind) {
            case Binding::Kind::kAuthed:
                router.Add(
                    op.method, op.path,
                    Authed(app, WithQueryCheck(app, op, binding.authed), op.auth == "apiKey"));
                break;
            case Binding::Kind::kPublic:
                // GENHOST_METRICS_LISTEN moves /metrics off the API's port.
                (op.operation_id == "getMetrics" && app.metrics_router != nullptr
                     ? *app.metrics_router
                     : router)
                    .Add(op.method, op.path, Public(app, binding.open));
                break;
            case Binding::Kind::kStreaming:
                router.AddStreaming(op.method, op.path, binding.body_limit,
                                    PublicStreaming(app, binding.streaming));
                break;
        }
    }
}

}  // namespace genhost::api
