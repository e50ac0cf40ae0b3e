// genhost/api/service_routes.hpp
//
// Provides the route set of the service feature: its handlers, bound by operationId
// (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"

namespace genhost::api {

// health.cpp: /healthz, /readyz, /metrics and /docs/errors
void RegisterHealthRoutes(Bindings& b);
// openapi.cpp: the OpenAPI document and its pages
void RegisterOpenApiRoutes(Bindings& b);

}  // namespace genhost::api
