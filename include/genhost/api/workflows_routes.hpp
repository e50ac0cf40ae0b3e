// genhost/api/workflows_routes.hpp
//
// Provides the route set of the workflows feature: its handlers, bound by operationId
// (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"

namespace genhost::api {

// workflows.cpp: workflows, invocations and the publish extra
void RegisterWorkflowRoutes(Bindings& b);

}  // namespace genhost::api
