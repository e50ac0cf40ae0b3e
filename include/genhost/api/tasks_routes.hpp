// genhost/api/tasks_routes.hpp
//
// Provides the route set of the tasks feature: its handlers, bound by operationId (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"

namespace genhost::api {

// tasks.cpp: GET and DELETE /v1/tasks/{id}, the task list
void RegisterTaskRoutes(Bindings& b);

}  // namespace genhost::api
