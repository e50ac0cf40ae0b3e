// genhost/providers/provider_config.hpp
//
// Provides the operator's provider configuration (docs/configuration.md, "Providers"): the
// named HTTP providers (GENHOST_PROVIDERS "name=url,..." and the JSON file of
// GENHOST_PROVIDERS_FILE), the model routing override (GENHOST_MODEL_PROVIDERS
// "model=provider,...") laid over the catalog's `provider` fields, and the start-up check that
// names models whose provider is not configured.
//
// Every function is pure and throws std::invalid_argument with a message naming the setting and
// the offending entry; genhost refuses to start with it.
#pragma once

#include "genhost/catalog/catalog.hpp"
#include "genhost/providers/http_provider.hpp"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace genhost::providers {

// ParseProviders reads the providers of `list` (GENHOST_PROVIDERS: "name=url" entries separated
// by commas, default options) and of `file_json` (the text of GENHOST_PROVIDERS_FILE, empty for
// none). Names are [A-Za-z0-9._-]+, not "builtin", and unique across both.
std::vector<HttpProviderOptions> ParseProviders(std::string_view list, std::string_view file_json);

// ParseModelRoutes reads GENHOST_MODEL_PROVIDERS: "model=provider" entries separated by commas.
std::map<std::string, std::string> ParseModelRoutes(std::string_view list);

// RouteModels returns `models_json` (schemas/models.json) with the `provider` of every model in
// `routes` replaced. Throws std::invalid_argument for a model the catalog does not have.
std::string RouteModels(std::string_view models_json,
                        const std::map<std::string, std::string>& routes);

// UnservedModels returns (model, provider) for every model whose provider is not in `names`.
std::vector<std::pair<std::string, std::string>> UnservedModels(const catalog::Catalog& catalog,
                                                                const std::set<std::string>& names);

}  // namespace genhost::providers
