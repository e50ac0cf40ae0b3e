// genhost/api/voices_routes.hpp
//
// Provides the route set of the voices feature: its handlers, bound by operationId
// (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"

namespace genhost::api {

// voices.cpp: /v1/voices
void RegisterVoiceRoutes(Bindings& b);

}  // namespace genhost::api
