// genhost/api/recipes_routes.hpp
//
// Provides the route set of the recipes feature: its handlers, bound by operationId
// (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"

namespace genhost::api {

// recipes.cpp: the recipes extra
void RegisterRecipeRoutes(Bindings& b);

}  // namespace genhost::api
