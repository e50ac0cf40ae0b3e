// The service feature (docs/operations.md, docs/openapi.md): health and readiness, /metrics with
// the API listener's gauges, the error pages, and the OpenAPI document with its pages.
#include "genhost/api/service_routes.hpp"
#include "genhost/features/node.hpp"

namespace genhost::features {

void WireService(Node& node) {
    if (http::Server* server = node.api_server()) {
        node.Gauges([server] {
            return std::vector<http::Sample>{
                {"genhost_http_connections",
                 "Open HTTP connections (GENHOST_MAX_CONNECTIONS caps them).",
                 {},
                 static_cast<double>(server->Connections())},
                {"genhost_http_connections_refused_total",
                 "Connections answered 503 at the connection cap, since start.",
                 {},
                 static_cast<double>(server->Refusals()),
                 true},
                {"genhost_http_body_memory_bytes",
                 "Request body bytes held now (GENHOST_MAX_BODY_MEMORY caps them).",
                 {},
                 static_cast<double>(server->BodyMemory())}};
        });
    }
    node.Routes(api::RegisterHealthRoutes);
    node.Routes(api::RegisterOpenApiRoutes);
}

}  // namespace genhost::features
