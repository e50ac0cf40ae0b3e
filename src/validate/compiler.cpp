#include "compiler.hpp"

#include "formats.hpp"
#include "messages.hpp"
#include "rules.hpp"
#include "walker.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace genhost::validate::detail {
namespace {

constexpr const char* kDialect = "https://json-schema.org/draft/2020-12/schema";

constexpr std::string_view kKeywords[] = {
    // core and annotations
    "$ref", "$defs", "$schema", "$id", "$comment", "title", "description", "examples", "default",
    "deprecated",
    // any type
    "type", "enum", "const",
    // strings
    "minLength", "maxLength", "pattern", "x-pattern-message", "format", "x-media-kind",
    // numbers
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    // objects
    "properties", "required", "additionalProperties", "x-rules", "x-defaults",
    // arrays
    "items", "minItems", "maxItems",
    // unions
    "oneOf", "anyOf", "discriminator", "x-retired",
    // document root only
    "x-endpoint", "x-shared"};

constexpr std::string_view kRefSiblings[] = {"$ref",     "$comment", "title",     "description",
                                             "examples", "default",  "deprecated"};

constexpr std::string_view kLibraryRootKeys[] = {"$schema",     "$id",   "$comment", "title",
                                                 "description", "$defs", "x-shared"};

template <std::size_t N>
bool OneOf(std::string_view key, const std::string_view (&set)[N]) {
    return std::find(std::begin(set), std::end(set), key) != std::end(set);
}

std::string EscapePointer(std::string_view key) {
    std::string out;
    for (char c : key) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

TypeMask TypeBitByName(const std::string& name) {
    if (name == "string") return kTypeString;
    if (name == "integer") return kTypeInteger;
    if (name == "number") return kTypeNumber;
    if (name == "boolean") return kTypeBoolean;
    if (name == "object") return kTypeObject;
    if (name == "array") return kTypeArray;
    if (name == "null") return kTypeNull;
    return 0;
}

std::size_t NonNegativeInteger(const OJson& json, const std::string& location) {
    if (json.is_number_unsigned()) return json.get<std::size_t>();
    if (json.is_number_integer() && json.get<std::int64_t>() >= 0) return json.get<std::size_t>();
    Fail(location, "must be a non-negative integer");
}

NumberBound Bound(const OJson& json, const std::string& location) {
    if (!json.is_number()) Fail(location, "must be a number");
    const double value = json.get<double>();
    return {value, FormatNumber(value)};
}

std::string RequireString(const OJson& json, const char* key, const std::string& location) {
    if (!json.contains(key) || !json.at(key).is_string() ||
        json.at(key).get<std::string>().empty()) {
        Fail(location, std::string("needs a non-empty string \"") + key + "\"");
    }
    return json.at(key).get<std::string>();
}

class Compiler {
  public:
    explicit Compiler(const std::vector<SchemaDocument>& documents) {
        for (const SchemaDocument& document : documents) {
            for (const Doc& existing : docs_) {
                if (existing.path == document.path) Fail(document.path, "duplicate document path");
            }
            Doc doc;
            doc.path = document.path;
            const std::size_t slash = doc.path.rfind('/');
            doc.dir = slash == std::string::npos ? "" : doc.path.substr(0, slash + 1);
            try {
                doc.root = OJson::parse(document.text);
            } catch (const nlohmann::json::exception& e) {
                Fail(doc.path, std::string("not valid JSON: ") + e.what());
            }
            if (!IsSchemaDocument(doc)) continue;
            docs_.push_back(std::move(doc));
        }
    }

    CompiledSet Run() {
        CompiledSet out;
        for (std::size_t i = 0; i < docs_.size(); ++i) {
            const Doc& doc = docs_[i];
            if (doc.root.contains("x-endpoint")) {
                CompiledEndpoint endpoint;
                endpoint.info = EndpointInfoOf(doc);
                for (const CompiledEndpoint& other : out.endpoints) {
                    if (other.info.name == endpoint.info.name) {
                        Fail(Location(i, "/x-endpoint"),
                             "endpoint " + Quote(endpoint.info.name) + " is defined twice");
                    }
                }
                endpoint.root = CompileAt(i, "");
                for (const Node* n = endpoint.root; n != nullptr; n = n->ref) {
                    if (!n->discriminator) continue;
                    for (const auto& branch : n->discriminator->branches) {
                        endpoint.info.models.push_back(branch.first);
                    }
                    break;
                }
                out.endpoints.push_back(std::move(endpoint));
            } else {
                for (const auto& [key, value] : doc.root.items()) {
                    if (!OneOf(key, kLibraryRootKeys)) {
                        Fail(Location(i, ""), "unknown key " + Quote(key) +
                                                  " at the root of a document without x-endpoint");
                    }
                }
                if (doc.root.contains("$defs")) CompileDefs(i, "");
            }
        }
        CheckDefaultsAndExamples();
        std::sort(out.endpoints.begin(), out.endpoints.end(),
                  [](const CompiledEndpoint& a, const CompiledEndpoint& b) {
                      return a.info.name < b.info.name;
                  });
        for (const Doc& doc : docs_) out.documents.emplace(doc.path, ToJson(doc.root));
        out.arena = std::move(arena_);
        return out;
    }

  private:
    struct Doc {
        std::string path;
        std::string dir;
        OJson root;
    };

    // PendingDefault is an x-defaults value, checked against its property once all is compiled.
    struct PendingDefault {
        const Node* property;
        Json value;
        std::string location;
    };

    // IsSchemaDocument tells schema documents (a "$schema" of the dialect) from the other data
    // files that live in schemas/ (the model catalog, the tier table), which are skipped.
    static bool IsSchemaDocument(const Doc& doc) {
        const bool looks_like_schema =
            doc.root.is_object() && (doc.root.contains("$schema") ||
                                     doc.root.contains("x-endpoint") || doc.root.contains("$defs"));
        if (!looks_like_schema) return false;
        const auto it = doc.root.find("$schema");
        if (it == doc.root.end() || *it != kDialect) {
            Fail(doc.path + "#",
                 std::string("a schema document declares \"$schema\": \"") + kDialect + "\"");
        }
        return true;
    }

    std::string Location(std::size_t doc, const std::string& pointer) const {
        return docs_[doc].path + "#" + pointer;
    }

    EndpointInfo EndpointInfoOf(const Doc& doc) const {
        const std::string location = doc.path + "#/x-endpoint";
        const OJson& json = doc.root.at("x-endpoint");
        if (!json.is_object()) Fail(location, "must be an object");
        for (const auto& [key, value] : json.items()) {
            if (key != "name" && key != "method" && key != "path" && key != "kind" &&
                key != "summary") {
                Fail(location, "unknown key " + Quote(key));
            }
        }
        EndpointInfo info;
        info.name = RequireString(json, "name", location);
        info.method = RequireString(json, "method", location);
        info.path = RequireString(json, "path", location);
        info.kind = RequireString(json, "kind", location);
        info.summary = RequireString(json, "summary", location);
        if (info.method != "GET" && info.method != "POST" && info.method != "PUT" &&
            info.method != "PATCH" && info.method != "DELETE") {
            Fail(location, "method must be an upper-case HTTP method");
        }
        if (!info.path.starts_with("/")) Fail(location, "path must start with /");
        return info;
    }

    void CompileDefs(std::size_t doc, const std::string& pointer) {
        const std::string at = pointer + "/$defs";
        const OJson& defs = Lookup(doc, at, Location(doc, at));
        if (!defs.is_object()) Fail(Location(doc, at), "must be an object");
        for (const auto& [name, value] : defs.items())
            CompileAt(doc, at + "/" + EscapePointer(name));
    }

    const OJson& Lookup(std::size_t doc, const std::string& pointer,
                        const std::string& from) const {
        try {
            const OJson::json_pointer ptr(pointer);
            if (!docs_[doc].root.contains(ptr)) Fail(from, "nothing at " + Location(doc, pointer));
            return docs_[doc].root.at(ptr);
        } catch (const nlohmann::json::exception& e) {
            Fail(from, "bad JSON pointer " + Quote(pointer) + ": " + e.what());
        }
    }

    // ParseRef splits "<file>#<pointer>" (file relative to the referring document, empty for the
    // same document) into a document index and a pointer.
    std::pair<std::size_t, std::string> ParseRef(std::size_t doc, const std::string& ref,
                                                 const std::string& location) const {
        const std::size_t hash = ref.find('#');
        std::string file = ref.substr(0, hash);
        const std::string pointer = hash == std::string::npos ? "" : ref.substr(hash + 1);
        if (!pointer.empty() && pointer.front() != '/') {
            Fail(location, "$ref " + Quote(ref) + ": only JSON-pointer fragments are supported");
        }
        if (file.empty()) return {doc, pointer};
        if (file.starts_with("./")) file = file.substr(2);
        const std::string path = docs_[doc].dir + file;
        for (std::size_t i = 0; i < docs_.size(); ++i) {
            if (docs_[i].path == path) return {i, pointer};
        }
        Fail(location, "$ref " + Quote(ref) + ": no document " + Quote(path));
    }

    const Node* ResolveRef(std::size_t doc, const std::string& ref, const std::string& location) {
        const auto [target_doc, pointer] = ParseRef(doc, ref, location);
        if (in_progress_.count(Location(target_doc, pointer)) != 0) {
            Fail(location, "$ref cycle through " + Quote(ref));
        }
        return CompileAt(target_doc, pointer);
    }

    Node* CompileAt(std::size_t doc, const std::string& pointer) {
        const std::string location = Location(doc, pointer);
        if (const auto it = memo_.find(location); it != memo_.end()) return it->second;
        const OJson& json = Lookup(doc, pointer, location);
        auto owned = std::make_unique<Node>();
        Node* node = owned.get();
        node->location = location;
        arena_.push_back(std::move(owned));
        memo_.emplace(location, node);
        in_progress_.insert(location);
        Fill(*node, doc, pointer, json);
        in_progress_.erase(location);
        return node;
    }

    void Fill(Node& node, std::size_t doc, const std::string& pointer, const OJson& json) {
        const std::string& loc = node.location;
        if (!json.is_object()) Fail(loc, "a schema must be a JSON object");
        for (const auto& [key, value] : json.items()) {
            if (!OneOf(key, kKeywords)) Fail(loc, "unknown keyword " + Quote(key));
            const bool root_only =
                key == "x-endpoint" || key == "x-shared" || key == "$schema" || key == "$id";
            if (root_only && !pointer.empty())
                Fail(loc, Quote(key) + " belongs at the document root");
        }
        if (json.contains("$defs")) CompileDefs(doc, pointer);
        FillAnnotations(node, json);

        if (json.contains("$ref")) {
            for (const auto& [key, value] : json.items()) {
                const bool root_extra =
                    pointer.empty() && (key == "x-endpoint" || key == "$defs" || key == "$schema" ||
                                        key == "$id" || key == "x-shared");
                if (!OneOf(key, kRefSiblings) && !root_extra) {
                    Fail(loc, "beside \"$ref\" only annotations and a default are allowed, not " +
                                  Quote(key));
                }
            }
            const OJson& ref = json.at("$ref");
            if (!ref.is_string()) Fail(loc, "\"$ref\" must be a string");
            node.ref = ResolveRef(doc, ref.get<std::string>(), loc);
            node.accepts = Target(node).accepts;
            return;
        }

        FillTypeAndValues(node, json);
        FillString(node, json);
        FillNumber(node, json);
        FillArray(node, doc, pointer, json);
        FillObject(node, doc, pointer, json);
        FillUnion(node, doc, pointer, json);
        node.accepts = AcceptedTypes(node);
    }

    void FillAnnotations(Node& node, const OJson& json) {
        const std::string& loc = node.location;
        for (const char* key : {"title", "description", "$comment", "$schema", "$id"}) {
            if (json.contains(key) && !json.at(key).is_string()) {
                Fail(loc, Quote(key) + " must be a string");
            }
        }
        if (json.contains("deprecated") && !json.at("deprecated").is_boolean()) {
            Fail(loc, "\"deprecated\" must be a boolean");
        }
        if (json.contains("default")) node.default_value = ToJson(json.at("default"));
        if (json.contains("examples")) {
            const OJson& examples = json.at("examples");
            if (!examples.is_array()) Fail(loc, "\"examples\" must be an array");
            for (const OJson& example : examples) node.examples.push_back(ToJson(example));
        }
    }

    void FillTypeAndValues(Node& node, const OJson& json) {
        const std::string& loc = node.location;
        if (json.contains("type")) {
            const OJson& type = json.at("type");
            std::vector<std::string> names;
            if (type.is_string()) {
                names.push_back(type.get<std::string>());
            } else if (type.is_array() && !type.empty()) {
                for (const OJson& name : type) {
                    if (!name.is_string()) Fail(loc, "\"type\" must name types");
                    names.push_back(name.get<std::string>());
                }
            } else {
                Fail(loc, "\"type\" must be a type name or a non-empty array of them");
            }
            for (const std::string& name : names) {
                const TypeMask bit = TypeBitByName(name);
                if (bit == 0) Fail(loc, "unknown type " + Quote(name));
                if (node.types & bit) Fail(loc, "type " + Quote(name) + " is listed twice");
                node.types |= bit;
            }
        }
        if (json.contains("const")) node.const_value = ToJson(json.at("const"));
        if (json.contains("enum")) {
            const OJson& values = json.at("enum");
            if (!values.is_array() || values.empty())
                Fail(loc, "\"enum\" must be a non-empty array");
            for (const OJson& value : values) {
                Json v = ToJson(value);
                if (std::find(node.enum_values.begin(), node.enum_values.end(), v) !=
                    node.enum_values.end()) {
                    Fail(loc, "\"enum\" lists " + v.dump() + " twice");
                }
                node.enum_values.push_back(std::move(v));
            }
            node.string_enum = std::all_of(node.enum_values.begin(), node.enum_values.end(),
                                           [](const Json& v) { return v.is_string(); });
        }
        if (node.const_value && !node.enum_values.empty()) {
            Fail(loc, "use \"const\" or \"enum\", not both");
        }
        auto check_value_type = [&](const Json& v) {
            const TypeMask bits = JsonTypeBits(v);
            if (node.types != 0 && (node.types & bits) == 0) {
                Fail(loc, "value " + v.dump() + " does not have the schema's type");
            }
        };
        if (node.const_value) check_value_type(*node.const_value);
        for (const Json& v : node.enum_values) check_value_type(v);
    }

    void RequireType(const Node& node, const OJson& json, TypeMask needed, const char* key,
                     const char* type_name) const {
        if (json.contains(key) && (node.types & needed) == 0) {
            Fail(node.location, Quote(key) + " needs \"type\" to include " + Quote(type_name));
        }
    }

    void FillString(Node& node, const OJson& json) {
        const std::string& loc = node.location;
        for (const char* key :
             {"minLength", "maxLength", "pattern", "x-pattern-message", "format", "x-media-kind"}) {
            RequireType(node, json, kTypeString, key, "string");
        }
        if (json.contains("minLength")) {
            node.min_length = NonNegativeInteger(json.at("minLength"), loc + "/minLength");
        }
        if (json.contains("maxLength")) {
            node.max_length = NonNegativeInteger(json.at("maxLength"), loc + "/maxLength");
        }
        if (json.contains("pattern")) {
            if (!json.at("pattern").is_string()) Fail(loc, "\"pattern\" must be a string");
            if (!node.max_length || *node.max_length > kMaxPatternInputLength) {
                Fail(loc, "\"pattern\" needs \"maxLength\" of at most " +
                              std::to_string(kMaxPatternInputLength) +
                              " (regular expressions never run on unbounded input; use a format)");
            }
            node.pattern_source = json.at("pattern").get<std::string>();
            std::string error;
            node.pattern = Pattern::Compile(node.pattern_source, error);
            if (!node.pattern) Fail(loc, "\"pattern\" does not compile: " + error);
        }
        if (json.contains("x-pattern-message")) {
            if (!json.contains("pattern") || !json.at("x-pattern-message").is_string()) {
                Fail(loc, "\"x-pattern-message\" must be a string beside a \"pattern\"");
            }
            node.pattern_message = json.at("x-pattern-message").get<std::string>();
        }
        if (json.contains("format")) {
            const OJson& format = json.at("format");
            const std::optional<Format> parsed =
                format.is_string() ? FormatByName(format.get<std::string>()) : std::nullopt;
            if (!parsed) Fail(loc, "unknown format " + format.dump());
            node.format = *parsed;
        }
        if (json.contains("x-media-kind")) {
            const OJson& kind = json.at("x-media-kind");
            const std::optional<MediaKind> parsed =
                kind.is_string() ? MediaKindByName(kind.get<std::string>()) : std::nullopt;
            if (!parsed) Fail(loc, "\"x-media-kind\" must be image, video or audio");
            if (node.format != Format::kMedia) Fail(loc, "\"x-media-kind\" goes with format media");
            node.media_kind = *parsed;
        } else if (node.format == Format::kMedia) {
            Fail(loc, "format media needs \"x-media-kind\"");
        }
        if (node.min_length && node.max_length && *node.min_length > *node.max_length) {
            Fail(loc, "minLength is greater than maxLength");
        }
    }

    void FillNumber(Node& node, const OJson& json) {
        const std::string& loc = node.location;
        for (const char* key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
            RequireType(node, json, kTypeInteger | kTypeNumber, key, "number");
        }
        if (json.contains("minimum")) node.minimum = Bound(json.at("minimum"), loc + "/minimum");
        if (json.contains("maximum")) node.maximum = Bound(json.at("maximum"), loc + "/maximum");
        if (json.contains("exclusiveMinimum")) {
            node.exclusive_minimum = Bound(json.at("exclusiveMinimum"), loc + "/exclusiveMinimum");
        }
        if (json.contains("exclusiveMaximum")) {
            node.exclusive_maximum = Bound(json.at("exclusiveMaximum"), loc + "/exclusiveMaximum");
        }
    }

    void FillArray(Node& node, std::size_t doc, const std::string& pointer, const OJson& json) {
        const std::string& loc = node.location;
        for (const char* key : {"items", "minItems", "maxItems"}) {
            RequireType(node, json, kTypeArray, key, "array");
        }
        if (json.contains("items")) node.items = CompileAt(doc, pointer + "/items");
        if (json.contains("minItems")) {
            node.min_items = NonNegativeInteger(json.at("minItems"), loc + "/minItems");
        }
        if (json.contains("maxItems")) {
            node.max_items = NonNegativeInteger(json.at("maxItems"), loc + "/maxItems");
        }
        if (node.min_items && node.max_items && *node.min_items > *node.max_items) {
            Fail(loc, "minItems is greater than maxItems");
        }
    }

    void FillObject(Node& node, std::size_t doc, const std::string& pointer, const OJson& json) {
        const std::string& loc = node.location;
        for (const char* key :
             {"properties", "required", "additionalProperties", "x-rules", "x-defaults"}) {
            RequireType(node, json, kTypeObject, key, "object");
        }
        if (!(node.types & kTypeObject)) return;
        if (!json.contains("additionalProperties")) {
            Fail(loc,
                 "an object schema must set \"additionalProperties\" (false in request schemas)");
        }
        if (json.contains("properties")) {
            const OJson& properties = json.at("properties");
            if (!properties.is_object()) Fail(loc, "\"properties\" must be an object");
            for (const auto& [name, value] : properties.items()) {
                Property property;
                property.name = name;
                property.schema = CompileAt(doc, pointer + "/properties/" + EscapePointer(name));
                node.properties.push_back(std::move(property));
            }
        }
        if (json.contains("required")) {
            const OJson& required = json.at("required");
            if (!required.is_array()) Fail(loc, "\"required\" must be an array");
            for (const OJson& name : required) {
                Property* property =
                    name.is_string() ? FindProperty(node, name.get<std::string>()) : nullptr;
                if (property == nullptr) {
                    Fail(loc,
                         "\"required\" names " + name.dump() + ", which is not in \"properties\"");
                }
                if (property->required) Fail(loc, "\"required\" lists " + name.dump() + " twice");
                property->required = true;
            }
        }
        const OJson& additional = json.at("additionalProperties");
        if (additional.is_boolean()) {
            node.additional = additional.get<bool>() ? Additional::kAllow : Additional::kForbid;
        } else if (additional.is_object()) {
            node.additional = Additional::kSchema;
            node.additional_schema = CompileAt(doc, pointer + "/additionalProperties");
        } else {
            Fail(loc, "\"additionalProperties\" must be a boolean or a schema");
        }
        if (json.contains("x-rules")) {
            for (const auto& [entry, entry_loc] :
                 SpliceEntries(doc, json.at("x-rules"), loc + "/x-rules")) {
                node.rules.push_back(CompileRule(node, *entry, entry_loc));
            }
        }
        if (json.contains("x-defaults")) {
            for (const auto& [entry, entry_loc] :
                 SpliceEntries(doc, json.at("x-defaults"), loc + "/x-defaults")) {
                node.conditional_defaults.push_back(
                    CompileConditionalDefault(node, *entry, entry_loc));
            }
        }
    }

    static Property* FindProperty(Node& node, const std::string& name) {
        for (Property& property : node.properties) {
            if (property.name == name) return &property;
        }
        return nullptr;
    }

    // SpliceEntries lists the entries of an x-rules / x-defaults array; an entry that is only
    // {"$ref": "..."} is replaced by the entry, or the array of entries, it points to (typically
    // under common.json's "x-shared").
    std::vector<std::pair<const OJson*, std::string>> SpliceEntries(std::size_t doc,
                                                                    const OJson& json,
                                                                    const std::string& loc) {
        if (!json.is_array()) Fail(loc, "must be an array");
        std::vector<std::pair<const OJson*, std::string>> out;
        for (std::size_t i = 0; i < json.size(); ++i) {
            const OJson& entry = json[i];
            const std::string entry_loc = loc + "/" + std::to_string(i);
            if (!(entry.is_object() && entry.size() == 1 && entry.contains("$ref"))) {
                out.emplace_back(&entry, entry_loc);
                continue;
            }
            if (!entry.at("$ref").is_string()) Fail(entry_loc, "\"$ref\" must be a string");
            const auto [target_doc, pointer] =
                ParseRef(doc, entry.at("$ref").get<std::string>(), entry_loc);
            const OJson& target = Lookup(target_doc, pointer, entry_loc);
            const std::string target_loc = Location(target_doc, pointer);
            if (target.is_array()) {
                for (std::size_t j = 0; j < target.size(); ++j) {
                    out.emplace_back(&target[j], target_loc + "/" + std::to_string(j));
                }
            } else {
                out.emplace_back(&target, target_loc);
            }
        }
        for (const auto& [entry, entry_loc] : out) {
            if (entry->is_object() && entry->contains("$ref")) {
                Fail(entry_loc, "a shared rule or default cannot itself be a \"$ref\"");
            }
        }
        return out;
    }

    void CheckDeclared(const Node& node, const std::vector<std::string>& names,
                       const std::string& loc) const {
        for (const std::string& name : names) {
            const bool declared =
                std::any_of(node.properties.begin(), node.properties.end(),
                            [&name](const Property& p) { return p.name == name; });
            if (!declared) {
                Fail(loc, "path starts with " + Quote(name) + ", which is not a property of " +
                              node.location);
            }
        }
    }

    Rule CompileRule(const Node& node, const OJson& json, const std::string& loc) const {
        if (!json.is_object()) Fail(loc, "a rule must be an object");
        for (const auto& [key, value] : json.items()) {
            if (key != "when" && key != "require" && key != "path" && key != "message" &&
                key != "description") {
                Fail(loc, "unknown rule key " + Quote(key));
            }
        }
        if (!json.contains("require")) Fail(loc, "a rule needs \"require\"");
        Rule rule;
        rule.message = RequireString(json, "message", loc);
        if (json.contains("when")) rule.when = CompileCond(json.at("when"), loc + "/when");
        rule.require = CompileCond(json.at("require"), loc + "/require");
        if (json.contains("path")) {
            const OJson& path = json.at("path");
            if (!path.is_array()) Fail(loc + "/path", "must be an array of strings");
            for (const OJson& segment : path) {
                if (!segment.is_string() || segment.get<std::string>().empty() ||
                    segment.get<std::string>() == kWildcard) {
                    Fail(loc + "/path", "must be an array of property names or indices (no \"*\")");
                }
                rule.path.push_back(segment.get<std::string>());
            }
        }
        std::vector<std::string> first;
        if (rule.when) FirstSegments(*rule.when, first);
        FirstSegments(rule.require, first);
        if (!rule.path.empty()) first.push_back(rule.path.front());
        CheckDeclared(node, first, loc);
        if (rule.when) CollectReads(*rule.when, {}, rule.reads);
        CollectReads(rule.require, {}, rule.reads);
        return rule;
    }

    ConditionalDefault CompileConditionalDefault(Node& node, const OJson& json,
                                                 const std::string& loc) {
        if (!json.is_object()) Fail(loc, "an x-defaults entry must be an object");
        for (const auto& [key, value] : json.items()) {
            if (key != "when" && key != "property" && key != "value" && key != "description") {
                Fail(loc, "unknown x-defaults key " + Quote(key));
            }
        }
        ConditionalDefault out;
        out.property = RequireString(json, "property", loc);
        if (!json.contains("value")) Fail(loc, "an x-defaults entry needs \"value\"");
        out.value = ToJson(json.at("value"));
        if (json.contains("when")) {
            out.when = CompileCond(json.at("when"), loc + "/when");
            std::vector<std::string> first;
            FirstSegments(*out.when, first);
            CheckDeclared(node, first, loc);
        }
        const Property* property = FindProperty(node, out.property);
        if (property == nullptr) {
            Fail(loc, "property " + Quote(out.property) + " is not declared");
        }
        pending_defaults_.push_back({property->schema, out.value, loc});
        return out;
    }

    void FillUnion(Node& node, std::size_t doc, const std::string& pointer, const OJson& json) {
        const std::string& loc = node.location;
        if (json.contains("oneOf") && json.contains("anyOf"))
            Fail(loc, "use oneOf or anyOf, not both");
        const char* key = json.contains("oneOf")   ? "oneOf"
                          : json.contains("anyOf") ? "anyOf"
                                                   : nullptr;
        if (key == nullptr) {
            if (json.contains("discriminator")) Fail(loc, "\"discriminator\" needs oneOf");
            if (json.contains("x-retired")) Fail(loc, "\"x-retired\" needs a discriminator");
            return;
        }
        if (node.types != 0 || node.const_value || !node.enum_values.empty()) {
            Fail(loc,
                 "a union carries no type, const or enum of its own; put them in the branches");
        }
        const OJson& branches = json.at(key);
        if (!branches.is_array() || branches.empty()) {
            Fail(loc, Quote(key) + " must be a non-empty array of schemas");
        }
        for (std::size_t i = 0; i < branches.size(); ++i) {
            node.branches.push_back(CompileAt(doc, pointer + "/" + key + "/" + std::to_string(i)));
        }
        if (json.contains("discriminator")) FillDiscriminator(node, doc, json);
    }

    void FillDiscriminator(Node& node, std::size_t doc, const OJson& json) {
        const std::string loc = node.location + "/discriminator";
        const OJson& d = json.at("discriminator");
        if (!d.is_object()) Fail(loc, "must be an object");
        for (const auto& [key, value] : d.items()) {
            if (key != "propertyName" && key != "mapping") Fail(loc, "unknown key " + Quote(key));
        }
        Discriminator out;
        out.property = RequireString(d, "propertyName", loc);
        for (const Node* branch : node.branches) {
            const Node& target = Target(*branch);
            const Property* property = nullptr;
            for (const Property& p : target.properties) {
                if (p.name == out.property) property = &p;
            }
            if (!(target.types & kTypeObject) || property == nullptr || !property->required) {
                Fail(target.location,
                     "a discriminated branch must be an object schema that requires " +
                         Quote(out.property));
            }
            const Node& tag = Target(*property->schema);
            if (!tag.const_value || !tag.const_value->is_string()) {
                Fail(tag.location,
                     Quote(out.property) + " of a discriminated branch needs a string \"const\"");
            }
            const std::string value = tag.const_value->get<std::string>();
            for (const auto& existing : out.branches) {
                if (existing.first == value) Fail(loc, "two branches have " + Quote(value));
            }
            out.branches.emplace_back(value, branch);
        }
        if (d.contains("mapping")) {
            const OJson& mapping = d.at("mapping");
            if (!mapping.is_object() || mapping.size() != out.branches.size()) {
                Fail(loc + "/mapping", "must map every branch's value, and nothing else");
            }
            for (const auto& entry : mapping.items()) {
                const std::string& value = entry.key();
                const OJson& ref = entry.value();
                const auto it = std::find_if(out.branches.begin(), out.branches.end(),
                                             [&value](const auto& b) { return b.first == value; });
                if (it == out.branches.end() || !ref.is_string() ||
                    &Target(*ResolveRef(doc, ref.get<std::string>(), loc + "/mapping")) !=
                        &Target(*it->second)) {
                    Fail(loc + "/mapping", Quote(value) + " does not map to the branch whose " +
                                               out.property + " const is " + Quote(value));
                }
            }
        }
        if (json.contains("x-retired")) {
            const std::string retired_loc = node.location + "/x-retired";
            const OJson& retired = json.at("x-retired");
            if (!retired.is_object()) Fail(retired_loc, "must be an object of value: hint");
            for (const auto& [value, hint] : retired.items()) {
                if (!hint.is_string())
                    Fail(retired_loc, "the hint for " + Quote(value) + " must be a string");
                for (const auto& live : out.branches) {
                    if (live.first == value)
                        Fail(retired_loc, Quote(value) + " is also a live branch");
                }
                out.retired.emplace_back(value, hint.get<std::string>());
            }
        }
        node.discriminator = std::move(out);
    }

    static TypeMask AcceptedTypes(const Node& node) {
        if (node.discriminator) return kTypeObject;
        if (!node.branches.empty()) {
            TypeMask mask = 0;
            for (const Node* branch : node.branches) {
                const TypeMask accepts = Target(*branch).accepts;
                if (accepts == 0) return 0;
                mask |= accepts;
            }
            return mask;
        }
        if (node.types != 0) return node.types;
        if (node.const_value) return JsonTypeBits(*node.const_value);
        TypeMask mask = 0;
        for (const Json& v : node.enum_values) mask |= JsonTypeBits(v);
        return mask;
    }

    // CheckDefaultsAndExamples validates every default, example and x-defaults value against
    // its own schema, so a typo in a document fails at start-up rather than in a response.
    void CheckDefaultsAndExamples() const {
        for (const auto& node : arena_) {
            if (node->default_value)
                CheckValue(*node, *node->default_value, node->location + "/default");
            for (const Json& example : node->examples) {
                CheckValue(*node, example, node->location + "/examples");
            }
        }
        for (const PendingDefault& pending : pending_defaults_) {
            CheckValue(*pending.property, pending.value, pending.location + "/value");
        }
    }

    static void CheckValue(const Node& node, const Json& value, const std::string& loc) {
        const std::vector<Issue> issues = CollectIssues(node, value, 1);
        if (issues.empty()) return;
        std::string path;
        for (const std::string& segment : issues.front().path) path += "/" + segment;
        Fail(loc,
             "does not validate: " + issues.front().message + (path.empty() ? "" : " at " + path));
    }

    std::vector<Doc> docs_;
    std::vector<std::unique_ptr<Node>> arena_;
    std::unordered_map<std::string, Node*> memo_;
    std::unordered_set<std::string> in_progress_;
    std::vector<PendingDefault> pending_defaults_;
};

}  // namespace

CompiledSet CompileDocuments(const std::vector<SchemaDocument>& documents) {
    return Compiler(documents).Run();
}

}  // namespace genhost::validate::detail
