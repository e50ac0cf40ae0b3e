// genhost/api/uploads_routes.hpp
//
// Provides the route set of the uploads feature: its handlers, bound by operationId
// (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"

namespace genhost::api {

// uploads.cpp: /v1/uploads and the upload URLs
void RegisterUploadRoutes(Bindings& b);
// outputs.cpp: signed output URLs
void RegisterOutputRoutes(Bindings& b);

}  // namespace genhost::api
