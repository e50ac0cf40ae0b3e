// A session's tools as the engines see them (genhost/realtime/engine.hpp): the stored create-body
// tools read into ToolSpecs, and the JSON Schema of a tool's arguments for function calling.
//
// The stored tools are the validated create body (schemas/realtime_sessions.json #/$defs/tool),
// so the readers here only fill in the defaults: timeoutSeconds 4, `required` true. They still
// tolerate missing or odd members (skipping what they cannot use) rather than throwing.
#include "genhost/realtime/engine.hpp"

namespace genhost::realtime {

namespace {

using nlohmann::json;

std::string StringMember(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool IsRequired(const json& parameter) {
    const auto it = parameter.find("required");
    return it == parameter.end() || !it->is_boolean() || it->get<bool>();
}

json ObjectSchema(const json& parameters);

// ParameterSchema is one parameter definition ({type, name, description, required?, enum?,
// items?, properties?}) as a JSON Schema property.
json ParameterSchema(const json& parameter) {
    const std::string type = StringMember(parameter, "type");
    json schema = json::object();
    if (type == "object") {
        const auto nested = parameter.find("properties");
        schema = ObjectSchema(nested != parameter.end() ? *nested : json::array());
    } else {
        schema["type"] = type;
    }
    const std::string description = StringMember(parameter, "description");
    if (!description.empty()) schema["description"] = description;
    if (const auto it = parameter.find("enum"); it != parameter.end() && it->is_array()) {
        schema["enum"] = *it;
    }
    if (type == "array") {
        json items = json::object();
        if (const auto it = parameter.find("items"); it != parameter.end() && it->is_object()) {
            const std::string item_type = StringMember(*it, "type");
            if (!item_type.empty()) items["type"] = item_type;
        }
        schema["items"] = std::move(items);
    }
    return schema;
}

// ObjectSchema is the schema of an object whose members are `parameters` (an array of parameter
// definitions): every one a property, the required ones (all unless `required: false`) listed.
json ObjectSchema(const json& parameters) {
    json properties = json::object();
    json required = json::array();
    if (parameters.is_array()) {
        for (const auto& parameter : parameters) {
            if (!parameter.is_object()) continue;
            const std::string name = StringMember(parameter, "name");
            if (name.empty()) continue;
            properties[name] = ParameterSchema(parameter);
            if (IsRequired(parameter)) required.push_back(name);
        }
    }
    return {{"type", "object"},
            {"properties", std::move(properties)},
            {"required", std::move(required)},
            {"additionalProperties", false}};
}

}  // namespace

std::vector<ToolSpec> ToolSpecs(const json& tools) {
    std::vector<ToolSpec> out;
    if (!tools.is_array()) return out;
    for (const auto& tool : tools) {
        if (!tool.is_object()) continue;
        ToolSpec spec;
        spec.type = StringMember(tool, "type");
        spec.name = StringMember(tool, "name");
        spec.description = StringMember(tool, "description");
        if (const auto it = tool.find("parameters"); it != tool.end() && it->is_array()) {
            spec.parameters = *it;
        }
        if (const auto it = tool.find("timeoutSeconds"); it != tool.end() && it->is_number()) {
            spec.timeout_seconds = it->get<double>();
        }
        out.push_back(std::move(spec));
    }
    return out;
}

json ToolJsonSchema(const ToolSpec& tool) { return ObjectSchema(tool.parameters); }

}  // namespace genhost::realtime
