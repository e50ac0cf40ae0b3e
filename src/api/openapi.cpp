// GET /v1/openapi.json and the OpenAPI 3.1 document it serves, assembled from the request
// schemas and the model catalog (include/genhost/api/openapi.hpp, docs/openapi.md).
#include "genhost/api/openapi.hpp"

#include "genhost/api/operations.hpp"

#include "genhost/api/service_routes.hpp"
#include "genhost/core/resources.hpp"
#include "handlers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>

namespace genhost::api {

namespace asio = boost::asio;
using OJson = nlohmann::ordered_json;

namespace {

constexpr std::string_view kDialect = "https://json-schema.org/draft/2020-12/schema";
constexpr std::string_view kSchemasPrefix = "#/components/schemas/";

// ---------------------------------------------------------------------------------------------
// Small text helpers.

std::string Num(double v) {
    if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 1e15) {
        return std::to_string(static_cast<long long>(v));
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

std::string Code(std::string_view s) { return "`" + std::string(s) + "`"; }

// Text writes a JSON scalar as a person reads it: strings bare, numbers as JavaScript does.
template <class J>
std::string Text(const J& v) {
    if (v.is_string()) return v.template get<std::string>();
    if (v.is_number()) return Num(v.template get<double>());
    return v.dump();
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) out += sep;
        out += parts[i];
    }
    return out;
}

// Sanitize keeps what OpenAPI allows in a component name (^[a-zA-Z0-9._-]+$).
std::string Sanitize(std::string_view s) {
    std::string out;
    for (const char c : s) {
        const bool ok =
            std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
        out += ok ? c : '_';
    }
    return out.empty() ? std::string("_") : out;
}

std::string EscapeToken(std::string_view token) {
    std::string out;
    for (const char c : token) {
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

std::string Folder(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash + 1));
}

std::string Stem(std::string_view path) {
    const auto slash = path.rfind('/');
    std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") {
        name.remove_suffix(5);
    }
    return std::string(name);
}

// Normalize resolves "." and ".." segments of a relative path.
std::string Normalize(std::string_view path) {
    std::vector<std::string> segments;
    std::size_t start = 0;
    while (start <= path.size()) {
        const auto slash = path.find('/', start);
        const std::string segment(
            path.substr(start, slash == std::string_view::npos ? slash : slash - start));
        if (segment == "..") {
            if (!segments.empty()) segments.pop_back();
        } else if (!segment.empty() && segment != ".") {
            segments.push_back(segment);
        }
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return Join(segments, "/");
}

// ---------------------------------------------------------------------------------------------
// The schema documents and their references.

struct Doc {
    std::string path;  // e.g. "schemas/common.json"
    std::string stem;  // e.g. "common"
    OJson json;
    const validate::EndpointInfo* endpoint = nullptr;  // for endpoint documents
};

// Target is a schema inside a document: the document's index and a JSON pointer ("" = root).
struct Target {
    std::size_t doc = 0;
    std::string pointer;

    auto operator<=>(const Target&) const = default;
};

class Library {
  public:
    Library(const validate::SchemaSet& schemas,
            const std::vector<validate::SchemaDocument>& documents) {
        for (const auto& d : documents) {
            const nlohmann::json* compiled = schemas.Document(d.path);
            if (compiled == nullptr) continue;
            // The text keeps member order (properties in schema order); the compiled document
            // stays the authority should the two ever differ.
            OJson parsed;
            try {
                parsed = OJson::parse(d.text);
                if (nlohmann::json::parse(parsed.dump()) != *compiled) parsed = nullptr;
            } catch (const nlohmann::json::exception&) {
                parsed = nullptr;
            }
            if (parsed.is_null()) parsed = OJson::parse(compiled->dump());
            if (!parsed.is_object() || parsed.value("$schema", std::string()) != kDialect) {
                continue;
            }
            docs_.push_back(Doc{d.path, Stem(d.path), std::move(parsed), nullptr});
        }
        for (const auto& endpoint : schemas.Endpoints()) {
            bool found = false;
            for (auto& doc : docs_) {
                const auto it = doc.json.find("x-endpoint");
                if (it != doc.json.end() && it->is_object() &&
                    it->value("name", std::string()) == endpoint.name) {
                    doc.endpoint = &endpoint;
                    endpoints_.push_back(&doc - docs_.data());
                    found = true;
                    break;
                }
            }
            if (!found) {
                throw std::runtime_error("OpenAPI: no schema document describes endpoint " +
                                         endpoint.name);
            }
        }
    }

    const std::vector<Doc>& docs() const { return docs_; }
    // endpoints lists the endpoint documents, in SchemaSet::Endpoints() order (by name).
    const std::vector<std::size_t>& endpoints() const { return endpoints_; }

    // Resolve turns a "$ref" written in document `from` into a target.
    Target Resolve(std::size_t from, const OJson& ref) const {
        if (!ref.is_string()) throw std::runtime_error("OpenAPI: $ref is not a string");
        const std::string text = ref.get<std::string>();
        const auto hash = text.find('#');
        const std::string file = text.substr(0, hash);
        const std::string fragment = hash == std::string::npos ? "" : text.substr(hash + 1);
        std::size_t doc = from;
        if (!file.empty()) {
            const std::string path = Normalize(Folder(docs_[from].path) + file);
            const auto it = std::find_if(docs_.begin(), docs_.end(),
                                         [&](const Doc& d) { return Normalize(d.path) == path; });
            if (it == docs_.end()) {
                throw std::runtime_error("OpenAPI: $ref " + text + " in " + docs_[from].path +
                                         " names an unknown document");
            }
            doc = static_cast<std::size_t>(it - docs_.begin());
        }
        if (!fragment.empty() && fragment[0] != '/') {
            throw std::runtime_error("OpenAPI: $ref " + text + " in " + docs_[from].path +
                                     " is not a JSON pointer");
        }
        if (!docs_[doc].json.contains(OJson::json_pointer(fragment))) {
            throw std::runtime_error("OpenAPI: $ref " + text + " in " + docs_[from].path +
                                     " points at nothing");
        }
        return Target{doc, fragment};
    }

    const OJson& At(const Target& t) const {
        return docs_.at(t.doc).json.at(OJson::json_pointer(t.pointer));
    }

    // Deref follows "$ref"s from `t` to the schema that is not a reference.
    Target Deref(Target t) const {
        for (int hops = 0; hops < 64; ++hops) {
            const OJson& node = At(t);
            if (!node.is_object() || !node.contains("$ref")) return t;
            t = Resolve(t.doc, node["$ref"]);
        }
        throw std::runtime_error("OpenAPI: $ref chain too long at " + docs_[t.doc].path);
    }

    // ConstOf returns the discriminator value a union branch gives property `name`.
    std::optional<std::string> ConstOf(const Target& branch, const std::string& name) const {
        const Target object = Deref(branch);
        const OJson& node = At(object);
        const auto properties = node.find("properties");
        if (properties == node.end() || !properties->contains(name)) return std::nullopt;
        const Target property =
            Deref(Target{object.doc, object.pointer + "/properties/" + EscapeToken(name)});
        const OJson& p = At(property);
        if (p.contains("const") && p["const"].is_string()) return p["const"].get<std::string>();
        if (p.contains("enum") && p["enum"].is_array() && p["enum"].size() == 1 &&
            p["enum"][0].is_string()) {
            return p["enum"][0].get<std::string>();
        }
        return std::nullopt;
    }

  private:
    std::vector<Doc> docs_;
    std::vector<std::size_t> endpoints_;
};

// Branch is one alternative of a discriminated union.
struct Branch {
    std::string value;  // the discriminator value, e.g. a model id
    Target target;      // the branch as written: its $ref target, or the inline schema
};

// UnionBranches lists the branches of the discriminated union at `t` (empty if it is none).
std::vector<Branch> UnionBranches(const Library& lib, const Target& t) {
    std::vector<Branch> out;
    const OJson& node = lib.At(t);
    if (!node.is_object() || !node.contains("discriminator")) return out;
    const std::string property = node["discriminator"].value("propertyName", std::string());
    for (const char* keyword : {"oneOf", "anyOf"}) {
        const auto it = node.find(keyword);
        if (it == node.end() || !it->is_array()) continue;
        for (std::size_t i = 0; i < it->size(); ++i) {
            const OJson& branch = (*it)[i];
            const Target bt =
                branch.is_object() && branch.contains("$ref")
                    ? lib.Resolve(t.doc, branch["$ref"])
                    : Target{t.doc, t.pointer + "/" + keyword + "/" + std::to_string(i)};
            const auto value = lib.ConstOf(bt, property);
            if (!value) {
                throw std::runtime_error("OpenAPI: a branch of the union at " +
                                         lib.docs()[t.doc].path + "#" + t.pointer + " has no " +
                                         property + " const");
            }
            out.push_back(Branch{*value, bt});
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Price summaries from the catalog's price rules (docs/catalog.md, "The price-rule language").

std::string Credits(double credits) {
    return Num(credits) + (credits == 1 ? " credit" : " credits");
}

std::string Condition(const nlohmann::json& c) {
    const std::string field = Code(c.value("field", std::string()));
    if (c.contains("equals")) return field + " is " + Text(c["equals"]);
    if (c.contains("in")) {
        std::vector<std::string> values;
        for (const auto& v : c["in"]) values.push_back(Text(v));
        return field + " is one of " + Join(values, ", ");
    }
    return field;
}

// Per describes the quantity a rate is multiplied by.
std::string Per(const nlohmann::json& v) {
    const std::string kind = v.value("kind", std::string());
    std::string one;
    std::string many;
    std::string suffix;
    if (kind == "duration") {
        const std::string field = v.value("field", std::string("duration"));
        if (field == "duration") {
            one = "output second";
            many = "output seconds";
        } else {
            one = "second of " + Code(field);
            many = "seconds of " + Code(field);
        }
    } else if (kind == "media_seconds") {
        std::vector<std::string> media;
        if (v.contains("media")) {
            for (const auto& m : v["media"]) media.push_back(Code(Text(m)));
        }
        one = "second of input " + Join(media, " + ");
        many = "seconds of input " + Join(media, " + ");
    } else if (kind == "frames") {
        one = "output frame";
        many = "output frames";
        suffix = " (seconds of input " + Code(v.value("media", std::string())) +
                 " × its frame rate, " + Num(v.value("default_fps", 0.0)) + " fps when unknown)";
    } else if (kind == "characters") {
        one = "character of " + Code(v.value("field", std::string()));
        many = "characters of " + Code(v.value("field", std::string()));
    } else if (kind == "text_seconds") {
        one = "second of speech";
        many = "seconds of speech";
        suffix = " (the length of " + Code(v.value("field", std::string())) + " at " +
                 Num(v.value("characters_per_second", 0.0)) + " characters per second)";
    } else if (kind == "count") {
        const std::string field = Code(v.value("field", std::string()));
        if (v.contains("without_key")) {
            const std::string key = Code(v.value("without_key", std::string()));
            one = field + " item without " + key;
            many = field + " items without " + key;
        } else {
            one = "item of " + field;
            many = "items of " + field;
        }
    } else if (kind == "field") {
        const std::string field = v.value("field", std::string());
        if (field == "outputCount") {
            one = "output image";
            many = "output images";
        } else {
            std::string s = "× " + Code(field);
            if (v.contains("missing")) s += " (" + Text(v["missing"]) + " when absent)";
            return s;
        }
    } else {
        one = many = kind;
    }
    const double unit = v.value("unit", 1.0);
    std::string s = "per " + (unit != 1 ? Num(unit) + " " + many : one) + suffix;
    if (v.value("round", std::string()) == "up") s += ", rounded up";
    if (v.contains("cap")) s += " (at most " + Num(v.value("cap", 0.0)) + " counted)";
    return s;
}

// By describes the value a rate table or step list is keyed by.
std::string By(const nlohmann::json& v) {
    const std::string kind = v.value("kind", std::string());
    std::string s;
    if (kind == "field") {
        const std::string field = Code(v.value("field", std::string()));
        const std::string via = v.value("via", std::string());
        if (via == "ratio_resolutions") {
            s = "by the resolution class of " + field;
        } else if (!via.empty()) {
            s = "by " + field + " (through " + Code(via) + ")";
        } else {
            s = "by " + field;
        }
        if (v.contains("missing")) s += " (" + Text(v["missing"]) + " when absent)";
    } else if (kind == "media_long_side") {
        s = "by the output's long side in px (the long side of input " +
            Code(v.value("media", std::string()));
        if (v.contains("times_field")) {
            s += " × " + Code(v.value("times_field", std::string()));
            if (v.contains("times_missing")) {
                s += ", " + Text(v["times_missing"]) + " when absent";
            }
        }
        s += "; the highest rate while the input is not probed)";
    } else if (kind == "duration") {
        s = "by output duration";
    } else {
        s = "by " + Per(v).substr(4);
    }
    return s;
}

// Rate describes a RATE; `by` receives what a table or step list is keyed by.
std::string Rate(const nlohmann::json& rate, std::string& by) {
    if (rate.is_number()) return Credits(rate.get<double>());
    by = By(rate.value("by", nlohmann::json::object()));
    std::vector<std::string> parts;
    if (rate.contains("table")) {
        std::vector<std::pair<double, std::string>> entries;
        for (const auto& [key, value] : rate["table"].items()) {
            entries.emplace_back(value.get<double>(), key);
        }
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t i = 0; i < entries.size();) {
            std::vector<std::string> keys;
            std::size_t j = i;
            for (; j < entries.size() && entries[j].first == entries[i].first; ++j) {
                keys.push_back(entries[j].second);
            }
            parts.push_back(Num(entries[i].first) + " (" + Join(keys, ", ") + ")");
            i = j;
        }
    } else if (rate.contains("steps")) {
        std::optional<double> previous;
        for (const auto& step : rate["steps"]) {
            const double r = step.value("rate", 0.0);
            if (step.contains("up_to")) {
                parts.push_back(Num(r) + " (up to " + Num(step["up_to"].get<double>()) + ")");
                previous = step["up_to"].get<double>();
            } else {
                parts.push_back(Num(r) + (previous ? " (above " + Num(*previous) + ")" : ""));
            }
        }
    }
    return Join(parts, " / ") + " credits";
}

std::string Component(const nlohmann::json& c) {
    std::string by;
    std::string s = Rate(c.value("rate", nlohmann::json()), by);
    s += " " + (c.contains("per") ? Per(c["per"]) : std::string("per task"));
    if (!by.empty()) s += ", " + by;
    if (c.contains("when")) s += " when " + Condition(c["when"]);
    if (c.contains("multipliers")) {
        for (const auto& m : c["multipliers"]) {
            s += ", ×" + Num(m.value("factor", 1.0)) + " when " +
                 Condition(m.value("when", nlohmann::json::object()));
        }
    }
    return s;
}

bool UsesDuration(const nlohmann::json& v) {
    if (v.is_object()) {
        if (v.value("kind", std::string()) == "duration") return true;
        for (const auto& [key, value] : v.items()) {
            if (UsesDuration(value)) return true;
        }
    } else if (v.is_array()) {
        for (const auto& value : v) {
            if (UsesDuration(value)) return true;
        }
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// The assembly.

const OJson& Answers();

// CoreComponentNames are the component schemas of schemas/responses.json: request components
// must not take their names.
const std::set<std::string>& CoreComponentNames() {
    static const std::set<std::string> names = [] {
        std::set<std::string> out;
        for (const auto& [name, schema] : Answers().at("schemas").items()) out.insert(name);
        return out;
    }();
    return names;
}

class Assembler {
  public:
    explicit Assembler(const Library& lib) : lib_(lib), taken_(CoreComponentNames()) {}

    // RequestName is the component holding an endpoint's request body.
    static std::string RequestName(std::string_view endpoint) {
        return Camel(endpoint) + "Request";
    }

    // NameFor returns the component name of `t`, registering (and queueing) it on first use.
    std::string NameFor(const Target& t, const std::string& preferred = "") {
        if (const auto it = names_.find(t); it != names_.end()) return it->second;
        const Doc& doc = lib_.docs()[t.doc];
        std::string base;
        if (t.pointer.empty() && doc.endpoint != nullptr) {
            base = RequestName(doc.endpoint->name);
        } else if (!preferred.empty()) {
            base = Sanitize(preferred);
        } else {
            std::vector<std::string> parts = {doc.stem};
            for (const auto& token : JsonPointerTokens(t.pointer)) {
                if (token != "$defs") parts.push_back(token);
            }
            base = Sanitize(Join(parts, "."));
        }
        std::string name = base;
        for (int n = 2; taken_.count(name) > 0; ++n) name = base + "_" + std::to_string(n);
        taken_.insert(name);
        names_.emplace(t, name);
        queue_.emplace_back(t, name);
        return name;
    }

    // Drain converts every queued schema into its component.
    void Drain() {
        while (!queue_.empty()) {
            const auto [target, name] = queue_.front();
            queue_.pop_front();
            components_[name] = Convert(lib_.At(target), target, name);
        }
    }

    std::map<std::string, OJson>& components() { return components_; }

  private:
    // Convert rewrites one schema node: references to components, `$defs` dropped (each
    // definition becomes a component when referenced), genhost's x- keywords to x-genhost-
    // extensions with shared rules inlined, discriminators with an explicit mapping.
    OJson Convert(const OJson& node, const Target& where, const std::string& owner) {
        if (!node.is_object()) return node;
        OJson out = OJson::object();
        for (const auto& [key, value] : node.items()) {
            const std::string child = where.pointer + "/" + EscapeToken(key);
            if (key == "$ref") {
                out["$ref"] = std::string(kSchemasPrefix) + NameFor(lib_.Resolve(where.doc, value));
            } else if (key == "$defs" || key == "$schema" || key == "$id" || key == "x-endpoint" ||
                       key == "x-shared") {
                continue;
            } else if ((key == "properties" || key == "patternProperties" ||
                        key == "dependentSchemas") &&
                       value.is_object()) {
                OJson map = OJson::object();
                for (const auto& [name, sub] : value.items()) {
                    map[name] =
                        Convert(sub, Target{where.doc, child + "/" + EscapeToken(name)}, owner);
                }
                out[key] = std::move(map);
            } else if (key == "items" || key == "additionalProperties" || key == "not" ||
                       key == "contains" || key == "propertyNames" || key == "if" ||
                       key == "then" || key == "else" || key == "unevaluatedItems" ||
                       key == "unevaluatedProperties") {
                out[key] =
                    value.is_object() ? Convert(value, Target{where.doc, child}, owner) : value;
            } else if ((key == "oneOf" || key == "anyOf" || key == "allOf" ||
                        key == "prefixItems") &&
                       value.is_array()) {
                const bool discriminated =
                    node.contains("discriminator") && (key == "oneOf" || key == "anyOf");
                OJson list = OJson::array();
                for (std::size_t i = 0; i < value.size(); ++i) {
                    const Target bt{where.doc, child + "/" + std::to_string(i)};
                    const OJson& branch = value[i];
                    if (discriminated && branch.is_object() && !branch.contains("$ref")) {
                        // A discriminator mapping names components: an inline branch becomes one.
                        const auto property =
                            node["discriminator"].value("propertyName", std::string());
                        const auto tag = lib_.ConstOf(bt, property);
                        list.push_back(
                            {{"$ref",
                              std::string(kSchemasPrefix) +
                                  NameFor(bt, owner + "." + tag.value_or(std::to_string(i)))}});
                    } else {
                        list.push_back(Convert(branch, bt, owner));
                    }
                }
                out[key] = std::move(list);
            } else if (key == "discriminator") {
                out[key] = nullptr;  // filled below, once the branches have names
            } else if (key == "x-rules" || key == "x-defaults") {
                out["x-genhost-" + key.substr(2)] = InlineShared(value, where.doc);
            } else if (key.rfind("x-genhost-", 0) == 0) {
                out[key] = value;
            } else if (key.rfind("x-", 0) == 0) {
                out["x-genhost-" + key.substr(2)] = value;
            } else {
                out[key] = value;
            }
        }
        if (node.contains("discriminator")) {
            const std::string property = node["discriminator"].value("propertyName", std::string());
            OJson mapping = OJson::object();
            for (const auto& branch : UnionBranches(lib_, where)) {
                mapping[branch.value] = std::string(kSchemasPrefix) + NameFor(branch.target);
            }
            out["discriminator"] = {{"propertyName", property}, {"mapping", std::move(mapping)}};
        }
        return out;
    }

    // InlineShared replaces entries that are only {"$ref": ...} (shared x-rules / x-defaults of
    // common.json's x-shared) by the rule or rules they point at.
    OJson InlineShared(const OJson& list, std::size_t doc) {
        if (!list.is_array()) return list;
        OJson out = OJson::array();
        for (const auto& entry : list) {
            if (entry.is_object() && entry.size() == 1 && entry.contains("$ref")) {
                const OJson& shared = lib_.At(lib_.Resolve(doc, entry["$ref"]));
                if (shared.is_array()) {
                    for (const auto& rule : shared) out.push_back(rule);
                } else {
                    out.push_back(shared);
                }
            } else {
                out.push_back(entry);
            }
        }
        return out;
    }

    const Library& lib_;
    std::set<std::string> taken_;
    std::map<Target, std::string> names_;
    std::deque<std::pair<Target, std::string>> queue_;
    std::map<std::string, OJson> components_;
};

// Describe sets a schema's description to `text` (after the one it has, if any), keeping
// `description` right after `title` where the schema has no description yet.
void Describe(OJson& schema, const std::string& text) {
    if (schema.contains("description") && schema["description"].is_string()) {
        schema["description"] = schema["description"].get<std::string>() + "\n\n" + text;
        return;
    }
    OJson out = OJson::object();
    if (!schema.contains("title")) out["description"] = text;
    for (auto& [key, value] : schema.items()) {
        out[key] = std::move(value);
        if (key == "title") out["description"] = text;
    }
    schema = std::move(out);
}

OJson Ref(std::string_view kind, std::string_view name) {
    return {{"$ref", "#/components/" + std::string(kind) + "/" + std::string(name)}};
}

OJson JsonContent(const OJson& schema) { return {{"application/json", {{"schema", schema}}}}; }

// Answers returns schemas/responses.json: the response schemas and the shared responses,
// parameters, headers and security schemes, as data (copied into the document as they are).
const OJson& Answers() {
    static const OJson answers = [] {
        const auto text = FindResource("schemas/responses.json");
        if (!text) throw std::runtime_error("schemas/responses.json is not embedded");
        OJson doc = OJson::parse(*text);
        // The version header's one value is the server's.
        const auto& version = doc.at("parameters").at("ServiceVersion").at("schema").at("enum");
        if (version != OJson::array({std::string(kServiceVersion)})) {
            throw std::runtime_error("schemas/responses.json: ServiceVersion is not " +
                                     std::string(kServiceVersion));
        }
        return doc;
    }();
    return answers;
}

// Tag returns the tag of a generation endpoint: the modality its models produce.
std::string GenerationTag(const catalog::Catalog& catalog, const std::string& endpoint,
                          const std::vector<Branch>& models) {
    std::set<std::string> modalities;
    for (const auto& m : models) {
        const auto* info = catalog.FindModel(m.value);
        if (info == nullptr) continue;
        const auto caps = info->CapabilitiesFor(endpoint);
        if (caps.contains("modality") && caps["modality"].is_string()) {
            modalities.insert(caps["modality"].get<std::string>());
        }
    }
    if (modalities.size() == 1) {
        const std::string m = *modalities.begin();
        if (m == "video") return "Video generation";
        if (m == "image") return "Image generation";
        if (m == "audio") return "Audio generation";
    }
    return "Generation";
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::vector<validate::SchemaDocument> EmbeddedSchemaDocuments() {
    std::vector<validate::SchemaDocument> docs;
    for (const auto& r : EmbeddedResources()) {
        const std::string_view path = r.path;
        if (path.rfind("schemas/", 0) == 0 && path.size() > 5 &&
            path.substr(path.size() - 5) == ".json") {
            docs.push_back({std::string(path), std::string(r.content)});
        }
    }
    return docs;
}

std::string PriceSummary(const catalog::ModelInfo& model, std::string_view endpoint) {
    const nlohmann::json& price = model.price;
    nlohmann::json components = price.value("components", nlohmann::json::array());
    std::optional<double> minimum;
    if (price.contains("minimum") && price["minimum"].is_number()) {
        minimum = price["minimum"].get<double>();
    }
    if (price.contains("by_endpoint") && price["by_endpoint"].contains(std::string(endpoint))) {
        const auto& override = price["by_endpoint"][std::string(endpoint)];
        if (override.contains("components")) components = override["components"];
        if (override.contains("minimum")) {
            minimum = override["minimum"].is_number()
                          ? std::optional<double>(override["minimum"].get<double>())
                          : std::nullopt;
        }
    }
    std::vector<std::string> parts;
    for (const auto& c : components) parts.push_back(Component(c));
    std::string s = Join(parts, " + ");
    if (minimum) s += ", minimum " + Credits(*minimum);
    const auto caps = model.CapabilitiesFor(endpoint);
    if (caps.contains("durations") && caps["durations"].value("auto", false) &&
        UsesDuration(components)) {
        const auto& d = caps["durations"];
        double max = d.value("max", 0.0);
        if (d.contains("values")) {
            for (const auto& v : d["values"]) max = std::max(max, v.get<double>());
        }
        s += "; duration `auto` is billed as " + Num(max) + " s";
    }
    return s;
}

std::vector<RequestShape> RequestShapes(const validate::SchemaSet& schemas,
                                        const std::vector<validate::SchemaDocument>& documents) {
    const Library lib(schemas, documents);
    std::vector<RequestShape> shapes;
    for (const std::size_t d : lib.endpoints()) {
        const validate::EndpointInfo& info = *lib.docs()[d].endpoint;
        const std::string& endpoint = info.name;
        if (info.kind == "recipe") {
            // One shape per recipe, its model the path's last segment; a union's fields are
            // those of every branch, required when every branch requires them.
            RequestShape shape;
            shape.endpoint = endpoint;
            shape.model = info.path.substr(info.path.rfind('/') + 1);
            std::vector<Target> parts;
            for (const auto& branch : UnionBranches(lib, Target{d, ""})) {
                parts.push_back(branch.target);
            }
            if (parts.empty()) parts.push_back(Target{d, ""});
            std::map<std::string, std::size_t> required;
            for (const Target& part : parts) {
                const OJson& node = lib.At(lib.Deref(part));
                if (node.contains("properties")) {
                    for (const auto& [name, _] : node["properties"].items()) {
                        if (std::find(shape.fields.begin(), shape.fields.end(), name) ==
                            shape.fields.end()) {
                            shape.fields.push_back(name);
                        }
                    }
                }
                if (node.contains("required")) {
                    for (const auto& name : node["required"]) ++required[name.get<std::string>()];
                }
            }
            for (const auto& name : shape.fields) {
                if (required[name] == parts.size()) shape.required.push_back(name);
            }
            shapes.push_back(std::move(shape));
            continue;
        }
        if (info.kind != "generation") continue;
        for (const auto& branch : UnionBranches(lib, Target{d, ""})) {
            RequestShape shape;
            shape.endpoint = endpoint;
            shape.model = branch.value;
            const OJson& node = lib.At(lib.Deref(branch.target));
            if (node.contains("properties")) {
                for (const auto& [name, _] : node["properties"].items())
                    shape.fields.push_back(name);
            }
            if (node.contains("required")) {
                for (const auto& name : node["required"]) {
                    shape.required.push_back(name.get<std::string>());
                }
            }
            shapes.push_back(std::move(shape));
        }
    }
    return shapes;
}

nlohmann::ordered_json BuildOpenApi(const validate::SchemaSet& schemas,
                                    const catalog::Catalog& catalog) {
    return BuildOpenApi(schemas, catalog, EmbeddedSchemaDocuments());
}

nlohmann::ordered_json BuildOpenApi(const validate::SchemaSet& schemas,
                                    const catalog::Catalog& catalog,
                                    const std::vector<validate::SchemaDocument>& documents) {
    const auto text = FindResource("schemas/operations.json");
    if (!text) throw std::runtime_error("schemas/operations.json is not embedded");
    return BuildOpenApi(schemas, catalog, documents, *text);
}

nlohmann::ordered_json BuildOpenApi(const validate::SchemaSet& schemas,
                                    const catalog::Catalog& catalog,
                                    const std::vector<validate::SchemaDocument>& documents,
                                    std::string_view operations_json) {
    const OperationTable table = LoadOperations(schemas, operations_json);
    const Library lib(schemas, documents);
    Assembler assembler(lib);

    OJson paths = OJson::object();
    std::set<std::string> tags_used;
    std::set<std::string> operation_ids;
    // Model branch component → the (endpoint, model) pairs that use it, for price descriptions.
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> model_uses;
    std::map<std::string, std::vector<std::string>> request_models;

    std::map<std::string, std::string> resource_requests;  // endpoint name -> component
    for (const std::size_t d : lib.endpoints()) {
        const validate::EndpointInfo& endpoint = *lib.docs()[d].endpoint;
        if (endpoint.kind != "generation") {
            // A resource's request body: a component when an operation takes it (below).
            for (const Operation& op : table.operations) {
                if (op.request == endpoint.name) {
                    resource_requests[endpoint.name] = assembler.NameFor(Target{d, ""});
                }
            }
            continue;
        }
        const std::string request = assembler.NameFor(Target{d, ""});
        const auto branches = UnionBranches(lib, Target{d, ""});
        std::vector<std::string> models;
        for (const auto& b : branches) {
            model_uses[assembler.NameFor(b.target)].emplace_back(endpoint.name, b.value);
            models.push_back(b.value);
        }
        request_models[request] = models;

        const std::string tag = GenerationTag(catalog, endpoint.name, branches);
        tags_used.insert(tag);
        const std::string operation_id = OperationIdOf(endpoint.name);
        if (!operation_ids.insert(operation_id).second) {
            throw std::runtime_error("OpenAPI: two endpoints share operationId " + operation_id);
        }
        std::vector<std::string> model_list;
        for (const auto& m : models) model_list.push_back(Code(m));
        OJson operation = {
            {"operationId", operation_id},
            {"summary", endpoint.summary},
            {"description",
             endpoint.summary + "\n\nThe body is a union on `model`: " + Join(model_list, ", ") +
                 ". Each model's schema lists its fields and its price. Retired model ids are "
                 "refused with a 400 naming their replacement. The task runs in the background: "
                 "poll GET /v1/tasks/{id}."},
            {"tags", {tag}},
            {"parameters", {Ref("parameters", "ServiceVersion")}},
            {"requestBody",
             {{"required", true},
              {"content", JsonContent(OJson{{"$ref", std::string(kSchemasPrefix) + request}})}}},
            {"responses",
             {{"200",
               {{"description",
                 "The task was created. `estimatedCost.credits` is the most it may charge."},
                {"content", JsonContent(Ref("schemas", "GenerationResponse"))}}},
              {"400", Ref("responses", "BadRequest")},
              {"401", Ref("responses", "Unauthorized")},
              {"413", Ref("responses", "PayloadTooLarge")},
              {"429", Ref("responses", "RateLimited")},
              {"431", Ref("responses", "HeadersTooLarge")},
              {"503", Ref("responses", "Unavailable")}}}};
        std::string method = endpoint.method;
        std::transform(method.begin(), method.end(), method.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        paths[endpoint.path][method] = std::move(operation);
    }
    assembler.Drain();

    auto& components = assembler.components();
    // Requests: say which models the union holds.
    for (const auto& [name, models] : request_models) {
        auto& schema = components.at(name);
        std::vector<std::string> list;
        for (const auto& m : models) list.push_back(Code(m));
        Describe(schema, "One of the models " + Join(list, ", ") +
                             ", chosen by `model`; each has its own fields.");
    }
    // Model branches: the price rule in words, with the estimate marker.
    for (const auto& [name, uses] : model_uses) {
        auto& schema = components.at(name);
        std::vector<std::string> lines;
        OJson prices = OJson::object();
        for (const auto& [endpoint, model] : uses) {
            const auto* info = catalog.FindModel(model);
            std::string line = "Model `" + model + "` on POST /v1/" + endpoint + ": ";
            if (info == nullptr || !info->ServesEndpoint(endpoint)) {
                line += "not in the model catalog.";
                lines.push_back(line);
                continue;
            }
            const std::string summary = PriceSummary(*info, endpoint);
            const bool estimate = info->PriceIsEstimateFor(endpoint);
            line += summary + ".";
            if (estimate) line += " This price is an estimate: no public price exists.";
            lines.push_back(line);
            prices[endpoint] = {{"model", model}, {"summary", summary}, {"estimate", estimate}};
        }
        Describe(schema, Join(lines, "\n\n"));
        if (!prices.empty()) schema["x-genhost-price"] = std::move(prices);
    }

    // Every other operation, from the operation table (schemas/operations.json).
    for (const Operation& op : table.operations) {
        if (!op.endpoint.empty()) continue;  // the generation endpoints, above
        if (!operation_ids.insert(op.operation_id).second) {
            throw std::runtime_error("OpenAPI: two operations share operationId " +
                                     op.operation_id);
        }
        OJson operation = {{"operationId", op.operation_id}, {"summary", op.summary}};
        if (!op.description.empty()) operation["description"] = op.description;
        operation["tags"] = {op.tag};
        tags_used.insert(op.tag);
        OJson parameters = OJson::array();
        if (op.auth == "apiKey") {
            parameters.push_back(Ref("parameters", "ServiceVersion"));
        } else if (op.auth == "sessionKey") {
            operation["security"] = OJson::array({{{"sessionKey", OJson::array()}}});
        } else if (op.auth != "apiKeyUnversioned") {
            operation["security"] = OJson::array();
        }
        if (op.page) {
            parameters.push_back({{"name", "limit"},
                                  {"in", "query"},
                                  {"description", "Items per page."},
                                  {"schema",
                                   {{"type", "integer"},
                                    {"minimum", 1},
                                    {"maximum", 100},
                                    {"default", op.page_default}}}});
            parameters.push_back(
                {{"name", "cursor"},
                 {"in", "query"},
                 {"description", "`nextCursor` of the previous page."},
                 {"schema", {{"type", "string"}, {"minLength", 1}, {"maxLength", 1000}}}});
        }
        for (const auto& declared : op.query_parameters) {
            OJson parameter = {{"name", declared["name"]}, {"in", "query"}};
            for (const auto& [key, value] : declared.items()) {
                if (key != "name") parameter[key] = value;
            }
            parameters.push_back(std::move(parameter));
        }
        if (!parameters.empty()) operation["parameters"] = std::move(parameters);
        if (!op.request.empty()) {
            operation["requestBody"] = {
                {"required", true},
                {"content", JsonContent(OJson{{"$ref", std::string(kSchemasPrefix) +
                                                           resource_requests.at(op.request)}})}};
        } else if (!op.request_content.empty()) {
            operation["requestBody"] = {
                {"required", true},
                {"content", {{op.request_content, {{"schema", {{"type", "object"}}}}}}}};
        }
        OJson responses = OJson::object();
        for (const auto& [status, declared] : op.responses.items()) {
            if (declared.is_string()) {
                responses[status] = Ref("responses", declared.get<std::string>());
                continue;
            }
            OJson response = {{"description", declared.value("description", "")}};
            if (declared.contains("schema")) {
                const OJson& schema = declared["schema"];
                response["content"] = JsonContent(
                    schema.is_string() ? Ref("schemas", schema.get<std::string>()) : schema);
            } else if (declared.contains("content")) {
                response["content"] = {
                    {declared["content"].get<std::string>(), {{"schema", {{"type", "string"}}}}}};
            }
            responses[status] = std::move(response);
        }
        operation["responses"] = std::move(responses);
        std::string method = op.method;
        std::transform(method.begin(), method.end(), method.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        auto& item = paths[op.path];
        if (table.path_parameters.contains(op.path) && !item.contains("parameters")) {
            OJson parameters = OJson::array();
            const OJson& declared = table.path_parameters[op.path];
            for (std::size_t open = op.path.find('{'); open != std::string::npos;
                 open = op.path.find('{', open + 1)) {
                const std::string name =
                    op.path.substr(open + 1, op.path.find('}', open) - open - 1);
                OJson parameter = {{"name", name}, {"in", "path"}, {"required", true}};
                const OJson& about = declared.contains(name) ? declared[name] : declared;
                if (about.contains("description")) parameter["description"] = about["description"];
                parameter["schema"] = about.value("schema", OJson{{"type", "string"}});
                parameters.push_back(std::move(parameter));
            }
            item["parameters"] = std::move(parameters);
        }
        item[method] = std::move(operation);
    }

    OJson tags = OJson::array();
    // Tags in the order operations.json lists them, those some operation uses.
    for (const auto& [tag, description] : table.tags.items()) {
        if (tags_used.erase(tag) > 0) tags.push_back({{"name", tag}, {"description", description}});
    }
    if (!tags_used.empty()) {
        throw std::runtime_error("OpenAPI: tag " + *tags_used.begin() + " has no description");
    }

    OJson schemas_out = Answers().at("schemas");
    for (auto& [name, schema] : components) schemas_out[name] = std::move(schema);

    OJson doc = OJson::object();
    doc["openapi"] = "3.1.0";
    doc["info"] = {
        {"title", "genhost API"},
        {"version", std::string(kServiceVersion)},
        {"description",
         "genhost: generative media tasks behind one API. Every /v1 request carries "
         "`Authorization: Bearer <key>` and `X-Service-Version: " +
             std::string(kServiceVersion) +
             "`. Generation endpoints create a task and answer `{id, estimatedCost}` at once; "
             "poll `GET /v1/tasks/{id}` for the result. Prices are in credits (1 credit = USD "
             "0.01).\n\nRequest bodies are unions on `model`; each model's schema is generated "
             "from genhost's request schemas and carries these extensions: "
             "`x-genhost-rules` (cross-field rules, each failing as a `custom` issue with its "
             "message), `x-genhost-defaults` (conditional defaults), `x-genhost-retired` "
             "(retired model ids and their replacements), `x-genhost-media-kind` (the kind of "
             "a `format: media` string: an HTTPS URL, an upload URI or a base64 data URI) and "
             "`x-genhost-price` (the model's price rule in words). String lengths count UTF-16 "
             "code units."}};
    doc["servers"] =
        OJson::array({{{"url", "/"}, {"description", "The host that serves this document."}}});
    doc["security"] = OJson::array({{{"bearerAuth", OJson::array()}}});
    doc["tags"] = std::move(tags);
    // What any request may be answered, whatever its operation: one that cannot be framed or
    // read (400), headers too large (431), a node at its connection cap (503); with a body, one
    // too large (413) or a node at its cap of body memory (503).
    for (auto& [path, item] : paths.items()) {
        for (auto& [method, operation] : item.items()) {
            if (!operation.is_object() || !operation.contains("responses")) continue;  // parameters
            auto& responses = operation["responses"];
            const auto add = [&](const char* status, const char* name) {
                if (!responses.contains(status)) responses[status] = Ref("responses", name);
            };
            add("400", "BadRequest");
            add("431", "HeadersTooLarge");
            add("503", "Unavailable");
            if (operation.contains("requestBody")) add("413", "PayloadTooLarge");
            std::map<std::string, OJson> sorted;
            for (auto& [status, response] : responses.items()) {
                sorted.emplace(status, std::move(response));
            }
            responses = OJson::object();
            for (auto& [status, response] : sorted) responses[status] = std::move(response);
        }
    }
    doc["paths"] = std::move(paths);
    doc["components"] = {{"securitySchemes", Answers().at("securitySchemes")},
                         {"parameters", Answers().at("parameters")},
                         {"headers", Answers().at("headers")},
                         {"responses", Answers().at("responses")},
                         {"schemas", std::move(schemas_out)}};
    return doc;
}

std::shared_ptr<const std::string> OpenApiText(const App& app) {
    static std::mutex mu;
    static std::weak_ptr<const validate::SchemaSet> built_schemas;
    static std::weak_ptr<const catalog::Catalog> built_catalog;
    static std::shared_ptr<const std::string> text;
    const auto same = [](const auto& weak, const auto& shared) {
        return !weak.owner_before(shared) && !shared.owner_before(weak) && !weak.expired();
    };
    std::lock_guard lock(mu);
    if (text && same(built_schemas, app.schemas) && same(built_catalog, app.catalog)) return text;
    text = std::make_shared<const std::string>(BuildOpenApi(*app.schemas, *app.catalog).dump());
    built_schemas = app.schemas;
    built_catalog = app.catalog;
    return text;
}

namespace {

asio::awaitable<http::Response> OpenApiDocument(App& app, http::Request& req) {
    const auto text = OpenApiText(app);
    http::Response r;
    r.body = *text;
    r.SetHeader("Content-Type", "application/json");
    r.SetHeader("Cache-Control", "public, max-age=300");
    co_return r;
}

}  // namespace

void RegisterOpenApiRoutes(Bindings& b) { b.Public("getOpenApi", OpenApiDocument); }

}  // namespace genhost::api
