#include "handlers.hpp"

namespace genhost::api {

void RegisterRoutes(http::Router& router, App& app) {
    using std::placeholders::_1;
    using std::placeholders::_2;
    const auto authed = [&](auto fn) { return Authed(app, std::bind(fn, std::ref(app), _1, _2)); };
    const auto open = [&](auto fn) { return Public(app, std::bind(fn, std::ref(app), _1)); };

    // GET /healthz: the process is up.
    router.Add("GET", "/healthz", open(Healthz));
    // GET /readyz: the database answers.
    router.Add("GET", "/readyz", open(Readyz));
    // GET /metrics: Prometheus text format.
    router.Add("GET", "/metrics", open(MetricsText));
    // GET /docs/errors: what the docUrl of a 400 points at.
    router.Add("GET", "/docs/errors", open(ErrorsDoc));
    // GET /v1/openapi.json: the OpenAPI 3.1 document, assembled from schemas/ (no key needed).
    router.Add("GET", "/v1/openapi.json", open(OpenApiDocument));
    // GET /outputs/{task}/{name}: signed, expiring output files (HEAD and Range too).
    router.Add("GET", "/outputs/{task}/{name}", open(GetOutput));

    // POST /uploads/{id}: the one multipart upload a POST /v1/uploads policy authorises; its
    // body streams to disk (no key: the signed policy in the form authorises it).
    if (app.uploads.repo != nullptr && app.uploads.signer != nullptr &&
        app.uploads.folder != nullptr) {
        router.AddStreaming("POST", "/uploads/{id}", UploadRouteBodyLimit(app),
                            PublicStreaming(app, [&app](http::Request& req, http::BodyReader& b) {
                                return ReceiveUpload(app, req, b);
                            }));
        // POST /v1/uploads: an upload URI and the signed form for its multipart POST.
        router.Add("POST", "/v1/uploads", authed(CreateUpload));
    }

    // /v1/avatars: custom avatars.
    if (app.avatars.repo != nullptr) {
        router.Add("GET", "/v1/avatars", authed(ListAvatars));
        router.Add("POST", "/v1/avatars", authed(CreateAvatar));
        router.Add("GET", "/v1/avatars/{id}", authed(GetAvatar));
        router.Add("PATCH", "/v1/avatars/{id}", authed(UpdateAvatar));
        router.Add("DELETE", "/v1/avatars/{id}", authed(DeleteAvatar));
    }

    // GET /v1/tasks/{id}
    router.Add("GET", "/v1/tasks/{id}", authed(GetTask));
    // DELETE /v1/tasks/{id}
    router.Add("DELETE", "/v1/tasks/{id}", authed(DeleteTask));

    // POST /v1/<generation endpoint>: one row per task-creating schema document in schemas/
    // (x-endpoint.kind == "generation"); the request shapes are data, the handler is shared.
    for (const auto& endpoint : app.schemas->Endpoints()) {
        if (endpoint.kind != "generation") continue;
        router.Add(endpoint.method, endpoint.path,
                   Authed(app, [&app, name = endpoint.name](http::Request& req,
                                                            const auth::Principal& who) {
                       return CreateGeneration(app, name, req, who);
                   }));
    }
}

}  // namespace genhost::api
