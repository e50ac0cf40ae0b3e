// catalog/capabilities.hpp (private to the catalog module)
//
// Provides the checks and the per-endpoint view of a model's "capabilities" object, whose fields
// are listed in docs/catalog.md. Failures throw std::runtime_error naming the field.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace genhost::catalog::detail {

// EffectiveCapabilities returns `capabilities` with its "by_endpoint" entry for `endpoint` laid
// over it (a null value removes the key) and the "by_endpoint" key removed. It does not check
// anything.
nlohmann::json EffectiveCapabilities(const nlohmann::json& capabilities, std::string_view endpoint);

// CheckCapabilities validates `capabilities` of a model serving `endpoints`: the base object,
// its "by_endpoint" keys (each one of `endpoints`), and the effective capabilities of every
// endpoint.
void CheckCapabilities(const nlohmann::json& capabilities,
                       const std::vector<std::string>& endpoints, const std::string& where);

// EnumFieldValues returns the values a request field may take when the capabilities enumerate
// them: "resolution" → resolutions, "quality" → qualities, "mode" → modes, "outputFormat" →
// output_formats, "audio" → true/false when audio.toggle; empty when not enumerated. Values are
// written as price-table keys ("true", "768p").
std::vector<std::string> EnumFieldValues(const nlohmann::json& effective_capabilities,
                                         std::string_view field);

}  // namespace genhost::catalog::detail
