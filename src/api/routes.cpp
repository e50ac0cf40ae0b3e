// The route table: every operation of the operation table (genhost/api/operations.hpp) bound to
// its handler by operationId. The server refuses to start when an operation has no handler, a
// handler no operation, or a handler's kind does not fit its operation's auth.
#include "handlers.hpp"

#include "genhost/api/operations.hpp"

#include <map>
#include <set>
#include <stdexcept>

namespace genhost::api {

namespace {

// Binding is the handler of one operation, of the kind its auth asks for.
struct Binding {
    enum class Kind { kAuthed, kPublic, kStreaming } kind;
    AuthedHandler authed;
    http::Handler open;
    http::StreamingHandler streaming;
};

}  // namespace

void RegisterRoutes(http::Router& router, App& app) {
    using std::placeholders::_1;
    using std::placeholders::_2;
    const auto authed = [&](auto fn) {
        return Binding{Binding::Kind::kAuthed, std::bind(fn, std::ref(app), _1, _2), {}, {}};
    };
    const auto open = [&](auto fn) {
        return Binding{Binding::Kind::kPublic, {}, std::bind(fn, std::ref(app), _1), {}};
    };
    // operationId -> handler. The generation endpoints share one handler (below).
    std::map<std::string, Binding> bindings = {
        {"getTask", authed(GetTask)},
        {"deleteTask", authed(DeleteTask)},
        {"listAvatars", authed(ListAvatars)},
        {"createAvatar", authed(CreateAvatar)},
        {"getAvatar", authed(GetAvatar)},
        {"updateAvatar", authed(UpdateAvatar)},
        {"deleteAvatar", authed(DeleteAvatar)},
        {"createUpload", authed(CreateUpload)},
        {"receiveUpload",
         {Binding::Kind::kStreaming,
          {},
          {},
          [&app](http::Request& req, http::BodyReader& body) {
              return ReceiveUpload(app, req, body);
          }}},
        {"getOutput", open(GetOutput)},
        {"getOpenApi", open(OpenApiDocument)},
        {"getErrorsDoc", open(ErrorsDoc)},
        {"healthz", open(Healthz)},
        {"readyz", open(Readyz)},
        {"getMetrics", open(MetricsText)},
    };

    const OperationTable table = EmbeddedOperations(*app.schemas);
    std::set<std::string> handlers;
    for (const auto& [id, binding] : bindings) handlers.insert(id);
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
        const Binding& b = bindings.at(op.operation_id);
        const bool fits = op.auth == "apiKey" ? b.kind == Binding::Kind::kAuthed
                                              : b.kind != Binding::Kind::kAuthed;
        if (!fits) {
            throw std::runtime_error("operation " + op.operation_id + " is " + op.auth +
                                     ", which its handler does not fit");
        }
        switch (b.kind) {
            case Binding::Kind::kAuthed:
                router.Add(op.method, op.path, Authed(app, b.authed));
                break;
            case Binding::Kind::kPublic:
                router.Add(op.method, op.path, Public(app, b.open));
                break;
            case Binding::Kind::kStreaming:
                router.AddStreaming(op.method, op.path, UploadRouteBodyLimit(app),
                                    PublicStreaming(app, b.streaming));
                break;
        }
    }
}

}  // namespace genhost::api
