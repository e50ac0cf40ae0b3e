// genhost/api/documents_routes.hpp
//
// Provides the route set of the documents feature: its handlers, bound by operationId
// (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"

namespace genhost::api {

// documents.cpp: /v1/documents and the search extra
void RegisterDocumentRoutes(Bindings& b);

}  // namespace genhost::api
