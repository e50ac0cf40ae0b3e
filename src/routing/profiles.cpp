// Reads each routable model's request schema variant: which fields it has, their item shapes
// and limits, which are required, and how long promptText may be.
#include "profiles.hpp"

#include <array>
#include <stdexcept>

namespace genhost::routing {

namespace {

using nlohmann::json;

constexpr std::array<std::pair<std::string_view, Modality>, 6> kEndpoints = {{
    {"text_to_video", Modality::kVideo},
    {"image_to_video", Modality::kVideo},
    {"video_to_video", Modality::kVideo},
    {"text_to_image", Modality::kImage},
    {"text_to_speech", Modality::kAudio},
    {"sound_effect", Modality::kAudio},
}};

// Node is a schema node and the document it lives in (for resolving its $refs).
struct Node {
    std::string doc;  // "schemas/common.json"
    const json* value = nullptr;
};

Node Resolve(const validate::SchemaSet& schemas, Node node) {
    for (int depth = 0; depth < 16 && node.value != nullptr; ++depth) {
        if (!node.value->is_object() || !node.value->contains("$ref")) return node;
        const std::string ref = node.value->at("$ref").get<std::string>();
        const auto hash = ref.find('#');
        std::string doc = node.doc;
        if (hash != 0) doc = "schemas/" + ref.substr(0, hash);
        const json* document = schemas.Document(doc);
        if (document == nullptr) throw std::runtime_error("routing: no schema document " + doc);
        const std::string pointer = hash == std::string::npos ? "" : ref.substr(hash + 1);
        node = {doc, &document->at(json::json_pointer(pointer))};
    }
    return node;
}

// ArrayNode returns the array form of a field: the field itself, or its oneOf variant that is an
// array (promptImage: a media string or an array of items).
std::optional<Node> ArrayNode(const validate::SchemaSet& schemas, Node field) {
    field = Resolve(schemas, field);
    if (field.value == nullptr) return std::nullopt;
    if (field.value->value("type", json()) == "array") return field;
    if (field.value->contains("oneOf")) {
        for (const auto& variant : field.value->at("oneOf")) {
            Node v = Resolve(schemas, {field.doc, &variant});
            if (v.value->value("type", json()) == "array") return v;
        }
    }
    return std::nullopt;
}

FieldShape ShapeOf(const validate::SchemaSet& schemas, Node field) {
    FieldShape shape;
    const auto array = ArrayNode(schemas, field);
    if (!array) return shape;
    if (array->value->contains("maxItems")) {
        shape.max_items = array->value->at("maxItems").get<std::size_t>();
    }
    if (!array->value->contains("items")) return shape;
    Node items = Resolve(schemas, {array->doc, &array->value->at("items")});
    if (items.value->value("type", json()) == "string") {
        shape.string_items = true;
        return shape;
    }
    if (items.value->contains("properties")) {
        for (const auto& [name, p] : items.value->at("properties").items()) {
            Node prop = Resolve(schemas, {items.doc, &p});
            if (prop.value->contains("const")) shape.item_consts[name] = prop.value->at("const");
        }
    }
    return shape;
}

// Variant finds `model`'s branch of the endpoint document's oneOf.
std::optional<Node> Variant(const validate::SchemaSet& schemas, std::string_view endpoint,
                            const std::string& model) {
    const std::string doc = "schemas/" + std::string(endpoint) + ".json";
    const json* document = schemas.Document(doc);
    if (document == nullptr || !document->contains("oneOf")) return std::nullopt;
    for (const auto& branch : document->at("oneOf")) {
        Node v = Resolve(schemas, {doc, &branch});
        const json* props = v.value->contains("properties") ? &v.value->at("properties") : nullptr;
        if (props == nullptr || !props->contains("model")) continue;
        Node m = Resolve(schemas, {v.doc, &props->at("model")});
        if (m.value->value("const", json()) == model) return v;
    }
    return std::nullopt;
}

}  // namespace

std::optional<Engine::Profile> BuildProfile(const catalog::ModelInfo& model,
                                            const validate::SchemaSet& schemas) {
    Engine::Profile profile;
    profile.model = &model;
    for (const auto& [endpoint, modality] : kEndpoints) {
        if (!model.ServesEndpoint(endpoint)) continue;
        profile.modality = modality;
        const auto variant = Variant(schemas, endpoint, model.id);
        if (!variant) {
            throw std::runtime_error("routing: " + model.id + " serves " + std::string(endpoint) +
                                     " but its schema has no variant for it");
        }
        EndpointView view;
        view.endpoint = std::string(endpoint);
        view.caps = model.CapabilitiesFor(endpoint);
        for (const auto& [name, p] : variant->value->at("properties").items()) {
            if (name == "model") continue;
            Node field = Resolve(schemas, {variant->doc, &p});
            view.fields[name] = ShapeOf(schemas, field);
            if (name == "promptText") view.prompt_max = field.value->value("maxLength", 0);
        }
        if (variant->value->contains("required")) {
            for (const auto& r : variant->value->at("required")) {
                if (r != "model") view.required.insert(r.get<std::string>());
            }
        }
        profile.endpoints.emplace(view.endpoint, std::move(view));
    }
    if (profile.endpoints.empty()) return std::nullopt;
    return profile;
}

}  // namespace genhost::routing
