// genhost/api/routers_routes.hpp
//
// Provides the route set of the routers feature: its handlers, bound by operationId
// (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"

namespace genhost::api {

// routers.cpp: /v1/routers
void RegisterRouterRoutes(Bindings& b);
// generate.cpp: routed generation, /v1/generate/*
void RegisterGenerateRoutes(Bindings& b);

}  // namespace genhost::api
