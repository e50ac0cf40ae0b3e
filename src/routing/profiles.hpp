// routing/profiles.hpp (private to the routing module)
//
// Provides the per-model view the engine maps inputs onto: for each endpoint a routable model
// serves, its effective capabilities (catalog) and what its request schema variant says about
// the fields routing fills (schemas/).
#pragma once

#include "genhost/routing/engine.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace genhost::routing {

// FieldShape is what the schema of one request field of a model says.
struct FieldShape {
    std::optional<std::size_t> max_items;  // arrays: maxItems
    bool string_items = false;             // arrays of media strings (not {uri} objects)
    nlohmann::json item_consts = nlohmann::json::object();  // {type: "video"} and the like
};

// RatioEntry is one value of the capabilities' `ratios`, parsed once (Engine's constructor).
struct RatioEntry {
    std::string text;
    int w = 0;
    int h = 0;
    bool concrete = false;    // pixels ("1280:720"); else an aspect ("16:9")
    std::string video_class;  // concrete: ratio_resolutions' class, else by area
    std::string image_tier;   // concrete: by area
};

struct EndpointView {
    std::string endpoint;
    nlohmann::json caps;             // effective capabilities
    std::vector<RatioEntry> ratios;  // the parseable `ratios` (not auto, adaptive, auto_720p)
    std::map<std::string, FieldShape, std::less<>> fields;  // the variant's properties
    std::set<std::string, std::less<>> required;
    std::size_t prompt_max = 0;  // promptText maxLength (UTF-16 units); 0 without promptText

    bool Has(std::string_view field) const { return fields.find(field) != fields.end(); }
};

struct Engine::Profile {
    const catalog::ModelInfo* model = nullptr;
    Modality modality = Modality::kVideo;
    std::map<std::string, EndpointView, std::less<>> endpoints;

    const EndpointView* Find(std::string_view endpoint) const {
        auto it = endpoints.find(endpoint);
        return it == endpoints.end() ? nullptr : &it->second;
    }
};

// BuildProfile reads `model`'s variants of the routable endpoints it serves; nullopt when it
// serves none. Throws std::runtime_error when a served endpoint has no variant for the model.
std::optional<Engine::Profile> BuildProfile(const catalog::ModelInfo& model,
                                            const validate::SchemaSet& schemas);

}  // namespace genhost::routing
