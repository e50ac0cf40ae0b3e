// genhost/api/organization_routes.hpp
//
// Provides the route set of the organization feature: its handlers, bound by operationId
// (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"
#include "genhost/store/credits_repo.hpp"

namespace genhost::api {

// organization.cpp: /v1/organization (credits and usage)
void RegisterOrganizationRoutes(Bindings& b, store::CreditRepo& repo);

}  // namespace genhost::api
