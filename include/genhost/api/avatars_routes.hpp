// genhost/api/avatars_routes.hpp
//
// Provides the route set of the avatars feature: its handlers, bound by operationId
// (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"

namespace genhost::api {

// avatars.cpp: /v1/avatars
void RegisterAvatarRoutes(Bindings& b);

}  // namespace genhost::api
