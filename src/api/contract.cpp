// Consistency between the request schemas (schemas/*.json) and the model catalog.
#include "genhost/api/app.hpp"
#include "genhost/core/resources.hpp"

#include <algorithm>

namespace genhost::api {

std::vector<std::string> CheckContract(const validate::SchemaSet& schemas,
                                       const catalog::Catalog& catalog) {
    std::vector<std::string> problems;
    for (const auto& endpoint : schemas.Endpoints()) {
        if (endpoint.kind == "recipe") {
            // A recipe's model is the last segment of its path (/v1/recipes/product_ad).
            const std::string model = endpoint.path.substr(endpoint.path.rfind('/') + 1);
            const auto* info = catalog.FindModel(model);
            if (info == nullptr || !info->ServesEndpoint(endpoint.name)) {
                problems.push_back("recipe " + endpoint.name + " has no catalog model " + model +
                                   " serving it");
            }
            continue;
        }
        if (endpoint.kind != "generation") continue;
        if (endpoint.models.empty()) {
            problems.push_back("endpoint " + endpoint.name + " has no `model` discriminator");
        }
        for (const auto& model : endpoint.models) {
            const auto* info = catalog.FindModel(model);
            if (info == nullptr) {
                problems.push_back("model " + model + " of endpoint " + endpoint.name +
                                   " is not in the catalog");
            } else if (std::find(info->endpoints.begin(), info->endpoints.end(), endpoint.name) ==
                       info->endpoints.end()) {
                problems.push_back("catalog model " + model + " does not list endpoint " +
                                   endpoint.name);
            }
        }
    }
    return problems;
}

std::shared_ptr<const validate::SchemaSet> LoadEmbeddedSchemas() {
    std::vector<validate::SchemaDocument> docs;
    for (const auto& r : EmbeddedResources()) {
        if (r.path.rfind("schemas/", 0) == 0) {
            docs.push_back({std::string(r.path), std::string(r.content)});
        }
    }
    return validate::SchemaSet::Compile(docs);
}

}  // namespace genhost::api
