// The published OpenAPI document (src/api/openapi.cpp): its structure over the shipped schemas
// and catalog, reference rewriting on small documents of its own, and the price summaries.
#include "genhost/api/openapi.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

namespace genhost::api {
namespace {

using OJson = nlohmann::ordered_json;
using ::testing::HasSubstr;

constexpr const char* kPrefix = "#/components/schemas/";

struct Shipped {
    std::vector<validate::SchemaDocument> documents = EmbeddedSchemaDocuments();
    std::shared_ptr<const validate::SchemaSet> schemas = validate::SchemaSet::Compile(documents);
    std::shared_ptr<const catalog::Catalog> catalog = catalog::Catalog::LoadEmbedded();
    OJson doc = BuildOpenApi(*schemas, *catalog, documents);
};

const Shipped& S() {
    static const Shipped s;
    return s;
}

// Walk calls `fn(node, pointer)` for every value of `v`.
void Walk(const OJson& v, const std::string& pointer,
          const std::function<void(const OJson&, const std::string&)>& fn) {
    fn(v, pointer);
    if (v.is_object()) {
        for (const auto& [key, value] : v.items()) {
            std::string token;
            for (const char c : key) token += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
            Walk(value, pointer + "/" + token, fn);
        }
    } else if (v.is_array()) {
        for (std::size_t i = 0; i < v.size(); ++i)
            Walk(v[i], pointer + "/" + std::to_string(i), fn);
    }
}

const OJson& Deref(const OJson& doc, const OJson& node) {
    if (node.is_object() && node.contains("$ref")) {
        const std::string ref = node["$ref"].get<std::string>();
        return doc.at(OJson::json_pointer(ref.substr(1)));
    }
    return node;
}

// ModelsOf reads the discriminator values of an endpoint's union straight from its schema text.
std::vector<std::string> ModelsOf(const std::string& endpoint) {
    std::map<std::string, OJson> docs;
    for (const auto& d : S().documents) {
        auto j = OJson::parse(d.text);
        const auto slash = d.path.rfind('/');
        docs[d.path.substr(slash + 1)] = std::move(j);
    }
    for (const auto& [file, j] : docs) {
        if (!j.contains("x-endpoint") || j["x-endpoint"]["name"] != endpoint) continue;
        std::vector<std::string> models;
        for (const auto& branch : j["oneOf"]) {
            const std::string ref = branch["$ref"].get<std::string>();
            const auto hash = ref.find('#');
            const OJson& target = hash == 0 ? j : docs.at(ref.substr(0, hash));
            const OJson& schema = target.at(OJson::json_pointer(ref.substr(hash + 1)));
            models.push_back(schema["properties"]["model"]["const"].get<std::string>());
        }
        return models;
    }
    ADD_FAILURE() << "no document for " << endpoint;
    return {};
}

TEST(OpenApi, IsOpenApi31WithARelativeServer) {
    const auto& doc = S().doc;
    EXPECT_EQ(doc["openapi"], "3.1.0");
    EXPECT_EQ(doc["info"]["version"], "2024-11-06");
    EXPECT_FALSE(doc["info"]["title"].get<std::string>().empty());
    ASSERT_EQ(doc["servers"].size(), 1u);
    EXPECT_EQ(doc["servers"][0]["url"], "/");
    EXPECT_EQ(doc["components"]["securitySchemes"]["bearerAuth"]["scheme"], "bearer");
    EXPECT_EQ(doc["security"][0].count("bearerAuth"), 1u);
}

TEST(OpenApi, EveryOperationListsWhatAnyRequestCanBeAnswered) {
    // Whatever the operation: a malformed request (400), headers too large (431), a node at its
    // connection cap (503); with a body, a body too large (413). Statuses in order.
    int operations = 0;
    for (const auto& [path, item] : S().doc.at("paths").items()) {
        for (const auto& [method, operation] : item.items()) {
            if (!operation.is_object() || !operation.contains("responses")) continue;
            ++operations;
            const auto& responses = operation.at("responses");
            std::vector<std::string> statuses;
            for (const auto& [status, response] : responses.items()) statuses.push_back(status);
            EXPECT_TRUE(std::is_sorted(statuses.begin(), statuses.end())) << method << " " << path;
            for (const char* status : {"400", "431", "503"}) {
                EXPECT_TRUE(responses.contains(status)) << method << " " << path << " " << status;
            }
            if (operation.contains("requestBody")) {
                EXPECT_TRUE(responses.contains("413")) << method << " " << path;
            }
        }
    }
    EXPECT_GT(operations, 20);
}

TEST(OpenApi, EveryGenerationEndpointIsAPathWithItsUnion) {
    const auto& doc = S().doc;
    int generation = 0;
    std::set<std::string> operation_ids;
    for (const auto& endpoint : S().schemas->Endpoints()) {
        if (endpoint.kind != "generation") continue;
        ++generation;
        SCOPED_TRACE(endpoint.name);
        std::string method = endpoint.method;
        for (auto& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        ASSERT_TRUE(doc["paths"].contains(endpoint.path));
        ASSERT_TRUE(doc["paths"][endpoint.path].contains(method));
        const auto& op = doc["paths"][endpoint.path][method];
        EXPECT_EQ(op["summary"], endpoint.summary);
        EXPECT_TRUE(operation_ids.insert(op["operationId"].get<std::string>()).second);
        EXPECT_EQ(op["tags"].size(), 1u);
        EXPECT_EQ(op["requestBody"]["required"], true);

        const auto& body = Deref(doc, op["requestBody"]["content"]["application/json"]["schema"]);
        ASSERT_TRUE(body.contains("oneOf"));
        ASSERT_EQ(body["discriminator"]["propertyName"], "model");
        const auto& mapping = body["discriminator"]["mapping"];
        const auto models = ModelsOf(endpoint.name);
        ASSERT_FALSE(models.empty());
        EXPECT_EQ(mapping.size(), models.size());
        EXPECT_EQ(body["oneOf"].size(), models.size());
        std::set<std::string> branch_refs;
        for (const auto& b : body["oneOf"]) branch_refs.insert(b["$ref"].get<std::string>());
        for (const auto& model : models) {
            SCOPED_TRACE(model);
            ASSERT_TRUE(mapping.contains(model));
            const std::string ref = mapping[model].get<std::string>();
            EXPECT_EQ(ref.rfind(kPrefix, 0), 0u);
            EXPECT_EQ(branch_refs.count(ref), 1u);
            const auto& branch = doc.at(OJson::json_pointer(ref.substr(1)));
            EXPECT_EQ(branch["properties"]["model"]["const"], model);
            // Properties keep the schema's order: `model` comes first.
            EXPECT_EQ(branch["properties"].begin().key(), "model");
            EXPECT_THAT(branch["description"].get<std::string>(),
                        HasSubstr("`" + model + "` on POST /v1/" + endpoint.name));
        }
        EXPECT_TRUE(body.contains("x-genhost-retired"));
    }
    EXPECT_GE(generation, 1);
}

TEST(OpenApi, NoDanglingRefsNoDefsNoForeignKeywords) {
    const auto& doc = S().doc;
    int refs = 0;
    Walk(doc, "", [&](const OJson& node, const std::string& pointer) {
        if (!node.is_object()) return;
        EXPECT_FALSE(node.contains("$defs")) << pointer;
        if (node.contains("$ref")) {
            ++refs;
            ASSERT_TRUE(node["$ref"].is_string()) << pointer;
            const std::string ref = node["$ref"].get<std::string>();
            ASSERT_EQ(ref.rfind("#/", 0), 0u) << pointer << ": " << ref;
            EXPECT_TRUE(doc.contains(OJson::json_pointer(ref.substr(1))))
                << pointer << ": dangling " << ref;
        }
        if (node.contains("discriminator")) {
            for (const auto& [value, ref] : node["discriminator"]["mapping"].items()) {
                EXPECT_TRUE(doc.contains(OJson::json_pointer(ref.get<std::string>().substr(1))))
                    << pointer << ": mapping " << value;
            }
        }
    });
    EXPECT_GT(refs, 50);
    // Inside the schemas: no $schema/$id, every extension namespaced, shared rules inlined.
    int rules = 0;
    Walk(doc["components"]["schemas"], "/components/schemas",
         [&](const OJson& node, const std::string& pointer) {
             if (!node.is_object()) return;
             EXPECT_FALSE(node.contains("$schema")) << pointer;
             EXPECT_FALSE(node.contains("$id")) << pointer;
             for (const auto& [key, value] : node.items()) {
                 if (key.rfind("x-", 0) == 0 && pointer.find("/x-genhost-") == std::string::npos) {
                     EXPECT_EQ(key.rfind("x-genhost-", 0), 0u) << pointer << "/" << key;
                 }
             }
             if (node.contains("x-genhost-rules") &&
                 pointer.find("/x-genhost-") == std::string::npos) {
                 for (const auto& rule : node["x-genhost-rules"]) {
                     ++rules;
                     EXPECT_TRUE(rule.contains("message")) << pointer;
                     EXPECT_TRUE(rule.contains("require")) << pointer;
                 }
             }
         });
    EXPECT_GT(rules, 0);
}

TEST(OpenApi, SharedDefinitionsBecomeNamedComponents) {
    const auto& schemas = S().doc["components"]["schemas"];
    ASSERT_TRUE(schemas.contains("common.seed"));
    EXPECT_EQ(schemas["common.seed"]["maximum"], 4294967295LL);
    ASSERT_TRUE(schemas.contains("common.contentModeration"));
    for (const auto& [name, schema] : schemas.items()) {
        for (const char c : name) {
            EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                        c == '-')
                << name;
        }
    }
}

TEST(OpenApi, GenerationResponsesAndErrorBodies) {
    const auto& doc = S().doc;
    const auto& op = doc["paths"]["/v1/text_to_image"]["post"];
    for (const char* status : {"200", "400", "401", "429", "503"}) {
        EXPECT_TRUE(op["responses"].contains(status)) << status;
    }
    const auto& ok = Deref(doc, op["responses"]["200"]["content"]["application/json"]["schema"]);
    EXPECT_EQ(ok["required"], OJson({"id", "estimatedCost"}));
    EXPECT_EQ(ok["properties"]["id"]["format"], "uuid");

    const auto& bad = Deref(doc, op["responses"]["400"]);
    const auto& body = Deref(doc, bad["content"]["application/json"]["schema"]);
    EXPECT_EQ(body["required"], OJson({"error", "docUrl", "issues"}));
    const auto& issue = Deref(doc, body["properties"]["issues"]["items"]);
    EXPECT_EQ(issue["required"], OJson({"code", "path", "message"}));
    EXPECT_EQ(issue["properties"]["path"]["type"], "array");
    EXPECT_EQ(issue["properties"]["path"]["items"]["type"], "string");

    const auto& limited = Deref(doc, op["responses"]["429"]);
    EXPECT_TRUE(limited["headers"].contains("Retry-After"));
    EXPECT_TRUE(Deref(doc, op["responses"]["503"])["headers"].contains("Retry-After"));
    EXPECT_EQ(
        Deref(doc,
              Deref(doc,
                    op["responses"]["401"])["content"]["application/json"]["schema"])["required"],
        OJson({"error"}));
}

TEST(OpenApi, VersionHeaderOnEveryKeyedOperation) {
    const auto& doc = S().doc;
    for (const auto& [path, item] : doc["paths"].items()) {
        for (const auto& [method, op] : item.items()) {
            if (method == "parameters") continue;
            SCOPED_TRACE(method + " " + path);
            EXPECT_TRUE(op.contains("operationId"));
            EXPECT_TRUE(op.contains("summary"));
            bool header = false;
            for (const auto& p : op.value("parameters", OJson::array())) {
                const auto& param = Deref(doc, p);
                if (param["name"] == "X-Service-Version") {
                    header = true;
                    EXPECT_EQ(param["in"], "header");
                    EXPECT_EQ(param["required"], true);
                    EXPECT_EQ(param["schema"]["enum"], OJson({"2024-11-06"}));
                }
            }
            // The API's operations and the stand-in extras under /_genhost/ need the key and
            // the version header.
            // Two realtime operations differ: consume takes the session key instead (and its
            // CORS preflight nothing), connect_backend the key without the version header (the
            // backend helper cannot send it).
            const bool consume = path.ends_with("/consume");
            const bool backend = path.ends_with("/connect_backend");
            const bool keyed = ((path.rfind("/v1/", 0) == 0 && path != "/v1/openapi.json") ||
                                path.rfind("/_genhost/", 0) == 0) &&
                               !consume && path != "/_genhost/realtime/page";
            EXPECT_EQ(header, keyed && !backend);
            if (consume && method == "post") {
                ASSERT_TRUE(op.contains("security"));
                EXPECT_EQ(op["security"][0].count("sessionKey"), 1u);
                continue;
            }
            // Public operations opt out of the bearer key.
            EXPECT_EQ(op.contains("security"), !keyed);
        }
    }
    for (const char* path : {"/healthz", "/readyz", "/v1/openapi.json", "/v1/tasks/{id}"}) {
        EXPECT_TRUE(doc["paths"].contains(path)) << path;
    }
}

TEST(OpenApi, TaskIsAUnionByStatus) {
    const auto& doc = S().doc;
    const auto& item = doc["paths"]["/v1/tasks/{id}"];
    EXPECT_TRUE(item["get"]["responses"].contains("404"));
    EXPECT_TRUE(item["delete"]["responses"].contains("204"));
    EXPECT_TRUE(item["delete"]["responses"].contains("404"));
    const auto& task =
        Deref(doc, item["get"]["responses"]["200"]["content"]["application/json"]["schema"]);
    EXPECT_EQ(task["discriminator"]["propertyName"], "status");
    const auto& mapping = task["discriminator"]["mapping"];
    const std::map<std::string, std::vector<std::string>> extra = {
        {"PENDING", {}},
        {"THROTTLED", {}},
        {"RUNNING", {"progress"}},
        {"SUCCEEDED", {"output"}},
        {"FAILED", {"failure", "failureCode"}},
        {"CANCELLED", {}}};
    EXPECT_EQ(mapping.size(), extra.size());
    for (const auto& [status, fields] : extra) {
        SCOPED_TRACE(status);
        ASSERT_TRUE(mapping.contains(status));
        const auto& s = doc.at(OJson::json_pointer(mapping[status].get<std::string>().substr(1)));
        EXPECT_EQ(s["properties"]["status"]["const"], status);
        std::set<std::string> required;
        for (const auto& r : s["required"]) required.insert(r.get<std::string>());
        for (const char* f : {"id", "createdAt", "status", "estimatedCost"}) {
            EXPECT_EQ(required.count(f), 1u) << f;
        }
        for (const auto& f : fields) EXPECT_EQ(required.count(f), 1u) << f;
        EXPECT_EQ(required.size(), 4 + fields.size());
    }
}

TEST(OpenApi, AvatarsArePublishedWithTheirBodiesAndTheAvatarUnion) {
    const auto& doc = S().doc;
    const auto& list = doc["paths"]["/v1/avatars"];
    const auto& one = doc["paths"]["/v1/avatars/{id}"];
    for (const auto* op :
         {&list["get"], &list["post"], &one["get"], &one["patch"], &one["delete"]}) {
        EXPECT_EQ((*op)["tags"], OJson::array({"Avatars"}));
    }
    // The request bodies are the schema documents' (create: name, referenceImage, ... required;
    // update: nothing required, the at-least-one rule carried along).
    const auto& create =
        Deref(doc, list["post"]["requestBody"]["content"]["application/json"]["schema"]);
    std::set<std::string> required;
    for (const auto& r : create["required"]) required.insert(r.get<std::string>());
    EXPECT_EQ(required, (std::set<std::string>{"name", "referenceImage", "personality", "voice"}));
    const auto& update =
        Deref(doc, one["patch"]["requestBody"]["content"]["application/json"]["schema"]);
    EXPECT_FALSE(update.contains("required"));
    EXPECT_THAT(update.dump(), HasSubstr("at least one field"));
    EXPECT_TRUE(one["patch"]["responses"].contains("409"));
    EXPECT_TRUE(one["delete"]["responses"].contains("204"));
    // Every answer is the Avatar union on status; a page holds Avatars and nextCursor.
    const auto& avatar =
        Deref(doc, one["get"]["responses"]["200"]["content"]["application/json"]["schema"]);
    EXPECT_EQ(avatar["discriminator"]["propertyName"], "status");
    EXPECT_EQ(avatar["discriminator"]["mapping"].size(), 3u);
    const auto& failed = doc.at(OJson::json_pointer(
        avatar["discriminator"]["mapping"]["FAILED"].get<std::string>().substr(1)));
    EXPECT_THAT(failed["required"].dump(), HasSubstr("failureReason"));
    const auto& page =
        Deref(doc, list["get"]["responses"]["200"]["content"]["application/json"]["schema"]);
    EXPECT_TRUE(page["properties"].contains("nextCursor"));
}

TEST(OpenApi, UploadsArePublished) {
    const auto& doc = S().doc;
    const auto& op = doc["paths"]["/v1/uploads"]["post"];
    const auto& request = Deref(doc, op["requestBody"]["content"]["application/json"]["schema"]);
    EXPECT_TRUE(request["properties"].contains("filename"));
    const auto& upload =
        Deref(doc, op["responses"]["200"]["content"]["application/json"]["schema"]);
    EXPECT_THAT(upload["required"].dump(), HasSubstr("runwayUri"));
    EXPECT_THAT(upload["required"].dump(), HasSubstr("uploadUrl"));
}

TEST(OpenApi, ModelDescriptionsCarryThePriceAndTheEstimateMarker) {
    const auto& doc = S().doc;
    int priced = 0;
    for (const auto& [name, schema] : doc["components"]["schemas"].items()) {
        if (!schema.contains("x-genhost-price")) continue;
        for (const auto& [endpoint, price] : schema["x-genhost-price"].items()) {
            ++priced;
            const auto* info = S().catalog->FindModel(price["model"].get<std::string>());
            ASSERT_NE(info, nullptr) << name;
            EXPECT_EQ(price["estimate"], info->PriceIsEstimateFor(endpoint)) << name;
            EXPECT_EQ(price["summary"], PriceSummary(*info, endpoint)) << name;
            EXPECT_THAT(schema["description"].get<std::string>(),
                        HasSubstr(price["summary"].get<std::string>()));
            if (info->PriceIsEstimateFor(endpoint)) {
                EXPECT_THAT(schema["description"].get<std::string>(), HasSubstr("estimate"));
            }
        }
    }
    EXPECT_GT(priced, 0);
    const auto& turbo = doc["components"]["schemas"]["text_to_image.gen4_image_turbo"];
    EXPECT_THAT(turbo["description"].get<std::string>(), HasSubstr("2 credits per output image"));
}

TEST(OpenApi, BuildIsDeterministic) {
    const auto again = BuildOpenApi(*S().schemas, *S().catalog, S().documents);
    EXPECT_EQ(again.dump(), S().doc.dump());
}

TEST(OpenApi, RequestShapesFollowTheSchemaBranches) {
    const auto shapes = RequestShapes(*S().schemas, S().documents);
    bool found = false;
    for (const auto& shape : shapes) {
        ASSERT_FALSE(shape.fields.empty()) << shape.endpoint << " " << shape.model;
        if (shape.endpoint.rfind("recipe_", 0) == 0) {
            // A recipe's model is its path, not a field (docs/recipes.md).
            EXPECT_THAT(shape.fields, ::testing::Contains("version")) << shape.endpoint;
            EXPECT_THAT(shape.required, ::testing::Contains("version")) << shape.endpoint;
            continue;
        }
        EXPECT_EQ(shape.fields.front(), "model") << shape.endpoint << " " << shape.model;
        if (shape.endpoint == "text_to_image" && shape.model == "gen4_image") {
            found = true;
            EXPECT_THAT(shape.required, ::testing::Contains("promptText"));
            EXPECT_THAT(shape.fields, ::testing::Contains("ratio"));
        }
    }
    EXPECT_TRUE(found);
}

// A small pair of documents: cross-document refs (also "./"), a nested discriminated union with
// an inline branch and no mapping, and a shared rule.
TEST(OpenApi, RewritesRefsHoistsInlineBranchesAndInlinesSharedRules) {
    const std::vector<validate::SchemaDocument> documents = {{"t/lib.json", R"({
          "$schema": "https://json-schema.org/draft/2020-12/schema",
          "$defs": {
            "seed": {"type": "integer", "minimum": 0, "maximum": 10},
            "pet": {"oneOf": [
                      {"type": "object", "properties": {"kind": {"type": "string", "const": "cat"},
                                                        "lives": {"type": "integer"}},
                       "required": ["kind"], "additionalProperties": false},
                      {"$ref": "#/$defs/dog"}],
                    "discriminator": {"propertyName": "kind"}},
            "dog": {"type": "object", "properties": {"kind": {"type": "string", "const": "dog"}},
                    "required": ["kind"], "additionalProperties": false}
          },
          "x-shared": {"rules": {"needsSeed": {"when": {"path": ["pet"], "present": true},
                                               "require": {"path": ["seed"], "present": true},
                                               "path": ["seed"], "message": "pet needs seed"}}}
        })"},
                                                             {"t/ep.json", R"({
          "$schema": "https://json-schema.org/draft/2020-12/schema",
          "x-endpoint": {"name": "pet_video", "method": "POST", "path": "/v1/pet_video",
                         "kind": "generation", "summary": "Film a pet."},
          "oneOf": [{"$ref": "#/$defs/m1"}],
          "discriminator": {"propertyName": "model"},
          "x-retired": {"gen3a_turbo": "replaced by gen4.5 or gen4_turbo",
                        "gen4_aleph": "replaced by aleph2"},
          "$defs": {
            "m1": {"type": "object",
                   "properties": {"model": {"type": "string", "const": "m1"},
                                  "seed": {"$ref": "lib.json#/$defs/seed"},
                                  "pet": {"$ref": "./lib.json#/$defs/pet"}},
                   "required": ["model"], "additionalProperties": false,
                   "x-rules": [{"$ref": "lib.json#/x-shared/rules/needsSeed"}]}
          }
        })"}};
    const auto schemas = validate::SchemaSet::Compile(documents);
    const auto doc = BuildOpenApi(*schemas, *S().catalog, documents,
                                  R"({"tags": {"Generation": "Pets."}, "operations": []})");
    const auto& c = doc["components"]["schemas"];
    ASSERT_TRUE(c.contains("PetVideoRequest"));
    EXPECT_EQ(c["PetVideoRequest"]["discriminator"]["mapping"]["m1"],
              std::string(kPrefix) + "ep.m1");
    ASSERT_TRUE(c.contains("ep.m1"));
    EXPECT_EQ(c["ep.m1"]["properties"]["seed"]["$ref"], std::string(kPrefix) + "lib.seed");
    EXPECT_EQ(c["ep.m1"]["properties"]["pet"]["$ref"], std::string(kPrefix) + "lib.pet");
    ASSERT_EQ(c["ep.m1"]["x-genhost-rules"].size(), 1u);
    EXPECT_EQ(c["ep.m1"]["x-genhost-rules"][0]["message"], "pet needs seed");
    EXPECT_THAT(c["ep.m1"]["description"].get<std::string>(),
                HasSubstr("not in the model catalog"));
    ASSERT_TRUE(c.contains("lib.pet"));
    EXPECT_EQ(c["lib.pet"]["discriminator"]["mapping"],
              OJson({{"cat", std::string(kPrefix) + "lib.pet.cat"},
                     {"dog", std::string(kPrefix) + "lib.dog"}}));
    EXPECT_EQ(c["lib.pet"]["oneOf"][0]["$ref"], std::string(kPrefix) + "lib.pet.cat");
    EXPECT_EQ(c["lib.pet.cat"]["properties"]["kind"]["const"], "cat");
    EXPECT_EQ(c["PetVideoRequest"]["x-genhost-retired"]["gen4_aleph"], "replaced by aleph2");
    EXPECT_FALSE(c["PetVideoRequest"].contains("x-endpoint"));
    EXPECT_EQ(doc["paths"]["/v1/pet_video"]["post"]["operationId"], "petVideo");
    EXPECT_EQ(doc["paths"]["/v1/pet_video"]["post"]["tags"], OJson({"Generation"}));
}

TEST(OpenApi, AnEndpointWithoutItsDocumentIsAnError) {
    const auto schemas = validate::SchemaSet::Compile(S().documents);
    EXPECT_THROW(BuildOpenApi(*schemas, *S().catalog, {}), std::runtime_error);
}

catalog::ModelInfo Model(nlohmann::json price,
                         nlohmann::json capabilities = nlohmann::json::object()) {
    catalog::ModelInfo m;
    m.id = "m";
    m.endpoints = {"text_to_video", "video_to_video"};
    m.price = std::move(price);
    m.capabilities = std::move(capabilities);
    return m;
}

TEST(PriceSummary, Rules) {
    EXPECT_EQ(
        PriceSummary(Model({{"components", {{{"rate", 12}, {"per", {{"kind", "duration"}}}}}}}),
                     "text_to_video"),
        "12 credits per output second");
    EXPECT_EQ(
        PriceSummary(Model({{"components",
                             {{{"rate", 28},
                               {"per", {{"kind", "media_seconds"}, {"media", {"videoUri"}}}}}}},
                            {"minimum", 56}}),
                     "video_to_video"),
        "28 credits per second of input `videoUri`, minimum 56 credits");
    EXPECT_EQ(
        PriceSummary(Model({{"components",
                             {{{"rate",
                                {{"by",
                                  {{"kind", "field"},
                                   {"field", "ratio"},
                                   {"via", "ratio_resolutions"},
                                   {"missing", "1280:720"}}},
                                 {"table", {{"480p", 5}, {"720p", 10}, {"1080p", 20}}}}},
                               {"per", {{"kind", "duration"}}}}}}},
                           {{"durations", {{"min", 4}, {"max", 15}, {"auto", true}}}}),
                     "text_to_video"),
        "5 (480p) / 10 (720p) / 20 (1080p) credits per output second, by the resolution class of "
        "`ratio` (1280:720 when absent); duration `auto` is billed as 15 s");
    EXPECT_EQ(PriceSummary(Model({{"components",
                                   {{{"rate", 1},
                                     {"per",
                                      {{"kind", "characters"},
                                       {"field", "promptText"},
                                       {"unit", 50},
                                       {"round", "up"}}}}}}}),
                           "text_to_video"),
              "1 credit per 50 characters of `promptText`, rounded up");
    EXPECT_EQ(
        PriceSummary(Model({{"components",
                             {{{"rate",
                                {{"by", {{"kind", "field"}, {"field", "duration"}}},
                                 {"steps", {{{"up_to", 10}, {"rate", 1}}, {{"rate", 2}}}}}}}}}}),
                     "text_to_video"),
        "1 (up to 10) / 2 (above 10) credits per task, by `duration`");
    // A per-endpoint override replaces the components and may drop the minimum.
    const auto m =
        Model({{"components", {{{"rate", 10}, {"per", {{"kind", "duration"}}}}}},
               {"minimum", 40},
               {"by_endpoint",
                {{"video_to_video",
                  {{"components",
                    {{{"rate", 0.7},
                      {"per", {{"kind", "frames"}, {"media", "videoUri"}, {"default_fps", 24}}},
                      {"multipliers",
                       {{{"when", {{"field", "fpsBoost"}, {"equals", true}}}, {"factor", 2}}}}}}},
                   {"minimum", nullptr}}}}}});
    EXPECT_EQ(PriceSummary(m, "text_to_video"), "10 credits per output second, minimum 40 credits");
    EXPECT_EQ(PriceSummary(m, "video_to_video"),
              "0.7 credits per output frame (seconds of input `videoUri` × its frame rate, 24 fps "
              "when unknown), ×2 when `fpsBoost` is true");
}

TEST(PriceSummary, EveryShippedModelHasOne) {
    for (const auto& model : S().catalog->Models()) {
        for (const auto& endpoint : model.endpoints) {
            const std::string s = PriceSummary(model, endpoint);
            EXPECT_THAT(s, HasSubstr("credit")) << model.id << " " << endpoint;
        }
    }
}

}  // namespace
}  // namespace genhost::api
