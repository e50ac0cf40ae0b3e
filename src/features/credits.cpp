// The credits feature (docs/credits.md): organization balances, spend and usage
// (/v1/organization).
#include "genhost/api/organization_routes.hpp"
#include "genhost/features/node.hpp"
#include "genhost/store/credits_repo.hpp"

namespace genhost::features {

void WireCredits(Node& node) {
    auto& repo = node.Own<store::CreditRepo>(node.db());
    node.Routes([&repo](api::Bindings& b) { api::RegisterOrganizationRoutes(b, repo); });
}

}  // namespace genhost::features
