// The published contract and the real answers cannot drift apart: this drives every operation of
// GET /v1/openapi.json against a real server (successes, the usual failures, every task state it
// can reach) and validates each answer's body against the schema its operation declares for that
// status, with genhost's own validator (validate::SchemaSet). An answer whose status the
// operation does not list, or whose body its schema refuses, fails; so does an operation that no
// request reached. Object schemas of answers are checked closed: a field the contract does not
// declare fails too.
#include "helpers.hpp"
#include "support/media_fixtures.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/validate/schema_set.hpp"

#include <gmock/gmock.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace genhost::testing {
namespace {

using nlohmann::json;

constexpr std::string_view kComponents = "#/components/schemas/";

// Contract is the published document compiled into one validator per answer schema.
class Contract {
  public:
    explicit Contract(json doc) : doc_(std::move(doc)) {
        std::vector<validate::SchemaDocument> documents;
        std::set<std::string> reachable;
        std::map<std::string, std::string> roots;  // schema text -> endpoint name
        for (auto& [path, item] : doc_.at("paths").items()) {
            for (auto& [method, operation] : item.items()) {
                if (!operation.is_object() || !operation.contains("responses")) continue;
                std::string upper = method;
                for (char& c : upper) c = static_cast<char>(std::toupper(c));
                operations_.insert(upper + " " + path);
                for (auto& [status, response] : operation.at("responses").items()) {
                    const json& r = Deref(response);
                    const auto key = upper + " " + path + " " + status;
                    statuses_.insert(key);
                    if (r.contains("content") && !r["content"].contains("application/json")) {
                        other_content_.insert(key);  // text or bytes: not validated here
                    }
                    if (!r.contains("content") || !r["content"].contains("application/json")) {
                        continue;
                    }
                    json schema = r["content"]["application/json"].at("schema");
                    Rewrite(schema);
                    Reach(schema, reachable);
                    const std::string text = schema.dump();
                    auto [it, added] =
                        roots.emplace(text, "answer_" + std::to_string(roots.size()));
                    if (added) {
                        json endpoint = schema;
                        Close(endpoint);
                        Repoint(endpoint, "#/$defs/", "answers.json#/$defs/");
                        endpoint["$schema"] = "https://json-schema.org/draft/2020-12/schema";
                        endpoint["x-endpoint"] = {{"name", it->second},
                                                  {"method", "GET"},
                                                  {"path", "/" + it->second},
                                                  {"kind", "answer"},
                                                  {"summary", key}};
                        documents.push_back({"schemas/" + it->second + ".json", endpoint.dump()});
                    }
                    schema_of_[key] = it->second;
                }
            }
        }
        json defs = json::object();
        for (const auto& name : reachable) {
            json schema = doc_["components"]["schemas"].at(name);
            Rewrite(schema);
            Close(schema);
            defs[name] = std::move(schema);
        }
        documents.push_back({"schemas/answers.json",
                             json{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                                  {"$defs", std::move(defs)}}
                                 .dump()});
        set_ = validate::SchemaSet::Compile(documents);
    }

    // Check validates `r`, an answer of `method` on the operation `path` (its template).
    void Check(const std::string& method, const std::string& path, const HttpResponse& r) {
        const std::string op = method + " " + path;
        ASSERT_TRUE(operations_.count(op)) << op << " is no operation of the contract";
        const std::string key = op + " " + std::to_string(r.status);
        ASSERT_TRUE(statuses_.count(key))
            << op << " answered " << r.status << ", which the contract does not list: " << r.body;
        answered_.insert(op);
        ++checked_;
        const auto it = schema_of_.find(key);
        if (it == schema_of_.end()) {
            if (other_content_.count(key) == 0) {
                EXPECT_TRUE(r.body.empty()) << key << " has no body in the contract: " << r.body;
            }
            return;
        }
        const json body = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
        ASSERT_FALSE(body.is_discarded()) << key << ": not JSON: " << r.body;
        const auto issues = set_->Validate(it->second, body);
        for (const auto& issue : issues) {
            std::string where;
            for (const auto& p : issue.path) where += "/" + p;
            ADD_FAILURE() << key << ": " << issue.code << " at " << where << ": " << issue.message
                          << "\n  body: " << r.body.substr(0, 600);
        }
    }

    const std::set<std::string>& operations() const { return operations_; }
    const std::set<std::string>& answered() const { return answered_; }
    int checked() const { return checked_; }

  private:
    const json& Deref(const json& node) const {
        if (!node.contains("$ref")) return node;
        const std::string ref = node["$ref"];
        return doc_.at(json::json_pointer(ref.substr(1)));
    }
    // Repoint changes the prefix `from` of every reference in `node` ($ref, discriminator
    // mappings) to `to`.
    static void Repoint(json& node, std::string_view from, const std::string& to) {
        const auto repoint = [&](json& ref) {
            if (ref.is_string() && ref.get<std::string>().rfind(from, 0) == 0) {
                ref = to + ref.get<std::string>().substr(from.size());
            }
        };
        if (node.is_object()) {
            for (auto& [k, v] : node.items()) {
                if (k == "$ref") {
                    repoint(v);
                } else if (k == "mapping") {
                    for (auto& [value, target] : v.items()) repoint(target);
                } else {
                    Repoint(v, from, to);
                }
            }
        } else if (node.is_array()) {
            for (auto& v : node) Repoint(v, from, to);
        }
    }
    // Rewrite points component references at the answers library's $defs.
    static void Rewrite(json& node) { Repoint(node, kComponents, "#/$defs/"); }
    // Reach collects the components a schema refers to, transitively.
    void Reach(const json& node, std::set<std::string>& out) const {
        if (node.is_object()) {
            if (node.contains("$ref") && node["$ref"].is_string()) {
                const std::string ref = node["$ref"];
                if (ref.rfind("#/$defs/", 0) == 0) {
                    const std::string name = ref.substr(8);
                    if (out.insert(name).second) {
                        json target = doc_["components"]["schemas"].at(name);
                        Rewrite(target);
                        Reach(target, out);
                    }
                }
            }
            for (const auto& [k, v] : node.items()) Reach(v, out);
        } else if (node.is_array()) {
            for (const auto& v : node) Reach(v, out);
        }
    }
    // Close makes every object schema with declared properties that says nothing of others
    // refuse them.
    static void Close(json& node) {
        if (node.is_object()) {
            // An object with declared properties: nothing else. A bare `type: object` (the
            // OpenAPI document's own) stays open.
            if (!node.contains("additionalProperties")) {
                if (node.contains("properties")) {
                    node["additionalProperties"] = false;
                } else if (node.contains("type") && node["type"] == "object") {
                    node["additionalProperties"] = true;
                }
            }
            for (auto& [k, v] : node.items()) {
                if (k == "properties") {
                    for (auto& [name, schema] : v.items()) Close(schema);
                } else if (k != "enum" && k != "const" && k != "examples" && k != "default") {
                    Close(v);
                }
            }
        } else if (node.is_array()) {
            for (auto& v : node) Close(v);
        }
    }

    json doc_;
    std::shared_ptr<const validate::SchemaSet> set_;
    std::set<std::string> operations_;
    std::set<std::string> statuses_;
    std::map<std::string, std::string> schema_of_;
    std::set<std::string> other_content_;  // answers declared with a body that is not JSON
    std::set<std::string> answered_;
    int checked_ = 0;
};

class ContractAnswers : public ServerSuite<ContractAnswers> {
  protected:
    static void SetUpTestSuite() {
        StartServer({{"GENHOST_LATENCY_SCALE", "0"}, {"GENHOST_MAX_BODY_BYTES", "25165824"}});
    }
};

TEST_F(ContractAnswers, EveryAnswerMatchesItsOperationsSchema) {
    auto c = Client();
    const auto published = c.Send("GET", "/v1/openapi.json");
    ASSERT_EQ(published.status, 200);
    Contract contract(published.Json());
    contract.Check("GET", "/v1/openapi.json", published);
    contract.Check("GET", "/healthz", c.Send("GET", "/healthz"));
    contract.Check("GET", "/readyz", c.Send("GET", "/readyz"));

    const Headers auth = AuthHeaders();
    const std::string missing = "00000000-0000-4000-8000-000000000000";
    // Every generation endpoint: a request of each that works (its task polled to its end), one
    // with bad input, one without a key, and its task after DELETE.
    std::ifstream in(std::string(GENHOST_SOURCE_DIR) + "/tests/http/model_requests.json");
    std::stringstream text;
    text << in.rdbuf();
    std::set<std::string> endpoints;
    std::string output_url;  // a finished task's first output
    const json cases = json::parse(text.str())["cases"];
    for (const auto& kase : cases) {
        const std::string endpoint = kase["endpoint"];
        if (!endpoints.insert(endpoint).second) continue;  // one case per endpoint
        const std::string path = "/v1/" + endpoint;
        json body = kase["body"];
        FillMediaPlaceholders(body);
        const auto created = c.Send("POST", path, auth, body.dump());
        contract.Check("POST", path, created);
        ASSERT_EQ(created.status, 200) << endpoint << ": " << created.body;
        const std::string id = created.Json()["id"];
        for (int i = 0; i < 600; ++i) {
            const auto polled = c.Send("GET", "/v1/tasks/" + id, auth);
            contract.Check("GET", "/v1/tasks/{id}", polled);
            const std::string status = polled.Json().value("status", "");
            if (status == "SUCCEEDED" && output_url.empty()) {
                output_url = polled.Json()["output"][0].get<std::string>();
            }
            if (status == "SUCCEEDED" || status == "FAILED" || status == "CANCELLED") break;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        contract.Check("POST", path, c.Send("POST", path, auth, R"({"model": "nope"})"));
        contract.Check("POST", path,
                       c.Send("POST", path, {{"Content-Type", "application/json"}}, body.dump()));
        contract.Check("DELETE", "/v1/tasks/{id}", c.Send("DELETE", "/v1/tasks/" + id, auth));
        contract.Check("GET", "/v1/tasks/{id}", c.Send("GET", "/v1/tasks/" + id, auth));
    }
    // A task cancelled by an operator, and the usual failures of the task routes.
    {
        const auto created = c.Send("POST", "/v1/text_to_image", auth, ImageRequest().dump());
        const std::string id = created.Json()["id"];
        server_->RunCommand("tasks cancel " + id);
        contract.Check("GET", "/v1/tasks/{id}", c.Send("GET", "/v1/tasks/" + id, auth));
    }
    contract.Check("GET", "/v1/tasks/{id}", c.Send("GET", "/v1/tasks/" + missing, auth));
    contract.Check("GET", "/v1/tasks/{id}", c.Send("GET", "/v1/tasks/" + missing));
    contract.Check(
        "GET", "/v1/tasks/{id}",
        c.Send("GET", "/v1/tasks/" + missing, {{"Authorization", "Bearer " + kTestKey}}));
    contract.Check("DELETE", "/v1/tasks/{id}", c.Send("DELETE", "/v1/tasks/" + missing, auth));
    // Framing, headers too large and a body too large answer in the contract's terms too.
    contract.Check("GET", "/v1/tasks/{id}",
                   c.SendRaw("GET /v1/tasks/" + missing + " HTTP/1.1\r\n\r\n"));
    contract.Check("GET", "/v1/tasks/{id}",
                   c.SendRaw("GET /v1/tasks/" + missing + " HTTP/1.1\r\nHost: x\r\nX-Big: " +
                             std::string(20000, 'h') + "\r\n\r\n"));
    contract.Check(
        "POST", "/v1/text_to_image",
        c.SendRaw("POST /v1/text_to_image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                  kTestKey +
                  "\r\nX-Service-Version: 2024-11-06\r\n"
                  "Content-Length: 99999999\r\n\r\n"));

    // A finished task's output file: whole, a range, a range past its end, a forged signature.
    ASSERT_FALSE(output_url.empty());
    const auto path_of = [](const std::string& url) {
        return url.substr(url.find('/', url.find("://") + 3));
    };
    const std::string output = path_of(output_url);
    contract.Check("GET", "/outputs/{task}/{name}", c.Send("GET", output));
    contract.Check("GET", "/outputs/{task}/{name}",
                   c.Send("GET", output, {{"Range", "bytes=0-9"}}));
    contract.Check("GET", "/outputs/{task}/{name}",
                   c.Send("GET", output, {{"Range", "bytes=999999999-"}}));
    contract.Check("GET", "/outputs/{task}/{name}",
                   c.Send("GET", output.substr(0, output.size() - 4) + "0000"));
    contract.Check("GET", "/metrics", c.Send("GET", "/metrics"));
    contract.Check("GET", "/docs/errors", c.Send("GET", "/docs/errors"));

    // An upload: the signed form, its file sent once, then again (the upload is used up).
    const auto upload =
        c.Send("POST", "/v1/uploads", auth, R"({"filename": "a.png", "type": "ephemeral"})");
    contract.Check("POST", "/v1/uploads", upload);
    contract.Check("POST", "/v1/uploads", c.Send("POST", "/v1/uploads", auth, R"({})"));
    const json form = upload.Json();
    const std::string boundary = "----genhost-contract-boundary";
    std::string multipart;
    for (const auto& [name, value] : form["fields"].items()) {
        multipart += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name +
                     "\"\r\n\r\n" + value.get<std::string>() + "\r\n";
    }
    multipart += "--" + boundary +
                 "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n"
                 "Content-Type: image/png\r\n\r\n" +
                 MakePng(64, 64) + "\r\n--" + boundary + "--\r\n";
    const Headers multipart_headers = {
        {"Content-Type", "multipart/form-data; boundary=" + boundary}};
    const std::string upload_path = path_of(form["uploadUrl"].get<std::string>());
    contract.Check("POST", "/uploads/{id}",
                   c.Send("POST", upload_path, multipart_headers, multipart));
    contract.Check("POST", "/uploads/{id}",
                   c.Send("POST", upload_path, multipart_headers, multipart));
    contract.Check("POST", "/uploads/{id}",
                   c.Send("POST", "/uploads/" + missing, multipart_headers, multipart));

    // Avatars: create, list, get, update (409 while processing, then 200), delete, and 404s.
    const json avatar = {
        {"name", "Contract"},
        {"referenceImage", "data:image/png;base64," + Base64Encode(MakePng(600, 800))},
        {"personality", "Answers in the contract's terms."},
        {"voice", {{"type", "service-live-preset"}, {"presetId", "clara"}}}};
    const auto made = c.Send("POST", "/v1/avatars", auth, avatar.dump());
    contract.Check("POST", "/v1/avatars", made);
    ASSERT_EQ(made.status, 200) << made.body;
    const std::string avatar_id = made.Json()["id"];
    contract.Check("POST", "/v1/avatars", c.Send("POST", "/v1/avatars", auth, R"({"name": ""})"));
    contract.Check("PATCH", "/v1/avatars/{id}",
                   c.Send("PATCH", "/v1/avatars/" + avatar_id, auth, R"({"name": "Busy"})"));
    std::string status;
    for (int i = 0; i < 300 && status != "READY" && status != "FAILED"; ++i) {
        const auto got = c.Send("GET", "/v1/avatars/" + avatar_id, auth);
        contract.Check("GET", "/v1/avatars/{id}", got);
        status = got.Json().value("status", "");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    contract.Check("GET", "/v1/avatars", c.Send("GET", "/v1/avatars?limit=1", auth));
    contract.Check("GET", "/v1/avatars", c.Send("GET", "/v1/avatars?limit=0", auth));
    contract.Check("PATCH", "/v1/avatars/{id}",
                   c.Send("PATCH", "/v1/avatars/" + avatar_id, auth, R"({"name": "Renamed"})"));
    contract.Check("PATCH", "/v1/avatars/{id}",
                   c.Send("PATCH", "/v1/avatars/" + missing, auth, R"({"name": "Nobody"})"));
    contract.Check("GET", "/v1/avatars/{id}", c.Send("GET", "/v1/avatars/" + missing, auth));

    // Documents: create, attach to the avatar (usedBy), list, get, update, search, delete, and
    // the failures.
    const json document = {
        {"name", "Handbook"},
        {"content", "# Returns\nAny item within 30 days.\n# Shipping\nNext day."}};
    const auto doc_made = c.Send("POST", "/v1/documents", auth, document.dump());
    contract.Check("POST", "/v1/documents", doc_made);
    ASSERT_EQ(doc_made.status, 200) << doc_made.body;
    const std::string doc_id = doc_made.Json()["id"];
    contract.Check("POST", "/v1/documents",
                   c.Send("POST", "/v1/documents", auth, R"({"name": 1})"));
    const auto attached = c.Send("PATCH", "/v1/avatars/" + avatar_id, auth,
                                 json{{"documentIds", json::array({doc_id, missing})}}.dump());
    contract.Check("PATCH", "/v1/avatars/{id}", attached);
    EXPECT_EQ(attached.status, 400) << attached.body;
    contract.Check("PATCH", "/v1/avatars/{id}",
                   c.Send("PATCH", "/v1/avatars/" + avatar_id, auth,
                          json{{"documentIds", json::array({doc_id})}}.dump()));
    contract.Check("GET", "/v1/documents/{id}", c.Send("GET", "/v1/documents/" + doc_id, auth));
    contract.Check("GET", "/v1/documents/{id}", c.Send("GET", "/v1/documents/" + missing, auth));
    contract.Check("GET", "/v1/documents",
                   c.Send("GET", "/v1/documents?limit=1&sort=updatedAt&order=asc", auth));
    contract.Check("GET", "/v1/documents", c.Send("GET", "/v1/documents?sort=size", auth));
    contract.Check(
        "PATCH", "/v1/documents/{id}",
        c.Send("PATCH", "/v1/documents/" + doc_id, auth, R"({"content": "Shipping is free."})"));
    contract.Check("PATCH", "/v1/documents/{id}",
                   c.Send("PATCH", "/v1/documents/" + doc_id, auth, R"({})"));
    contract.Check("PATCH", "/v1/documents/{id}",
                   c.Send("PATCH", "/v1/documents/" + missing, auth, R"({"name": "x"})"));
    contract.Check(
        "GET", "/_genhost/documents/search",
        c.Send("GET", "/_genhost/documents/search?q=shipping&avatarId=" + avatar_id, auth));
    contract.Check("GET", "/_genhost/documents/search",
                   c.Send("GET", "/_genhost/documents/search?q=x&avatarId=" + missing, auth));
    contract.Check("GET", "/_genhost/documents/search",
                   c.Send("GET", "/_genhost/documents/search?limit=0", auth));
    contract.Check("DELETE", "/v1/documents/{id}",
                   c.Send("DELETE", "/v1/documents/" + doc_id, auth));
    contract.Check("DELETE", "/v1/documents/{id}",
                   c.Send("DELETE", "/v1/documents/" + doc_id, auth));

    // Voices: designed (READY), cloned from a tone (FAILED: no speech), preview, list, get,
    // update, an avatar speaking with one, delete, and the failures.
    const auto designed = c.Send("POST", "/v1/voices", auth, R"({"name": "Narrator",
        "from": {"type": "text", "model": "voice_ttv_v3",
                 "prompt": "A calm, deep voice of an old British man"}})");
    contract.Check("POST", "/v1/voices", designed);
    ASSERT_EQ(designed.status, 200) << designed.body;
    const std::string voice_id = designed.Json()["id"];
    const auto toned = c.Send(
        "POST", "/v1/voices", auth,
        json{{"name", "Tone"},
             {"from",
              {{"type", "audio"}, {"audio", "data:audio/wav;base64," + Base64Encode(MakeWav(4))}}}}
            .dump());
    contract.Check("POST", "/v1/voices", toned);
    contract.Check("POST", "/v1/voices", c.Send("POST", "/v1/voices", auth, R"({"name": "x"})"));
    for (const auto& id : {voice_id, toned.Json()["id"].get<std::string>()}) {
        std::string voice_status;
        for (int i = 0; i < 300 && (voice_status.empty() || voice_status == "PROCESSING"); ++i) {
            const auto got = c.Send("GET", "/v1/voices/" + id, auth);
            contract.Check("GET", "/v1/voices/{id}", got);
            voice_status = got.Json().value("status", "");
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    contract.Check("GET", "/v1/voices/{id}", c.Send("GET", "/v1/voices/" + missing, auth));
    contract.Check("GET", "/v1/voices", c.Send("GET", "/v1/voices?limit=1", auth));
    contract.Check("GET", "/v1/voices", c.Send("GET", "/v1/voices?cursor=nope", auth));
    contract.Check("PATCH", "/v1/voices/{id}",
                   c.Send("PATCH", "/v1/voices/" + voice_id, auth, "{}"));
    contract.Check("PATCH", "/v1/voices/{id}",
                   c.Send("PATCH", "/v1/voices/" + voice_id, auth,
                          R"({"name": "Narrator 2", "description": null})"));
    contract.Check("PATCH", "/v1/voices/{id}",
                   c.Send("PATCH", "/v1/voices/" + missing, auth, R"({"name": "x"})"));
    contract.Check("POST", "/v1/voices/preview",
                   c.Send("POST", "/v1/voices/preview", auth,
                          R"({"model": "voice_multilingual_ttv_v2",
                              "prompt": "A bright young French woman, quick"})"));
    contract.Check("POST", "/v1/voices/preview",
                   c.Send("POST", "/v1/voices/preview", auth, R"({"prompt": "short"})"));
    contract.Check("PATCH", "/v1/avatars/{id}",
                   c.Send("PATCH", "/v1/avatars/" + avatar_id, auth,
                          json{{"voice", {{"type", "custom"}, {"id", voice_id}}}}.dump()));
    contract.Check("GET", "/v1/avatars/{id}", c.Send("GET", "/v1/avatars/" + avatar_id, auth));
    contract.Check("DELETE", "/v1/voices/{id}", c.Send("DELETE", "/v1/voices/" + voice_id, auth));
    contract.Check("DELETE", "/v1/voices/{id}", c.Send("DELETE", "/v1/voices/" + voice_id, auth));
    contract.Check("GET", "/v1/avatars/{id}", c.Send("GET", "/v1/avatars/" + avatar_id, auth));

    contract.Check("DELETE", "/v1/avatars/{id}",
                   c.Send("DELETE", "/v1/avatars/" + avatar_id, auth));
    contract.Check("DELETE", "/v1/avatars/{id}",
                   c.Send("DELETE", "/v1/avatars/" + avatar_id, auth));

    // Routers: create (and a duplicate slug, an unknown model), list, get, update, delete, 404s.
    const auto router = c.Send("POST", "/v1/routers", auth,
                               R"({"slug": "contract", "settings": {"optimizeFor": "quality",
                                   "models": {"mode": "allowlist_only", "ids": ["gen4_image"]},
                                   "maxCreditsPerGeneration": {"image": 20}}})");
    contract.Check("POST", "/v1/routers", router);
    ASSERT_EQ(router.status, 200) << router.body;
    const std::string router_id = router.Json()["id"];
    contract.Check("POST", "/v1/routers",
                   c.Send("POST", "/v1/routers", auth, R"({"slug": "contract"})"));
    contract.Check("POST", "/v1/routers",
                   c.Send("POST", "/v1/routers", auth,
                          R"({"slug": "x", "settings": {"models": {"ids": ["nope"]}}})"));
    contract.Check("GET", "/v1/routers", c.Send("GET", "/v1/routers?limit=1", auth));
    contract.Check("GET", "/v1/routers/{id}", c.Send("GET", "/v1/routers/" + router_id, auth));
    contract.Check("GET", "/v1/routers/{id}", c.Send("GET", "/v1/routers/" + missing, auth));
    contract.Check(
        "PATCH", "/v1/routers/{id}",
        c.Send("PATCH", "/v1/routers/" + router_id, auth,
               R"({"name": "Contract", "settings": {"fallback": {"onCapacity": true}}})"));
    contract.Check("PATCH", "/v1/routers/{id}",
                   c.Send("PATCH", "/v1/routers/" + router_id, auth, R"({"slug": "other"})"));
    // Routed generation through it: a dry run, a real one (capacity fallback on), an input no
    // model may serve (the cap), bad input, an unknown router; then its decision log.
    contract.Check("POST", "/v1/generate/image",
                   c.Send("POST", "/v1/generate/image", auth,
                          R"({"configId": "contract", "dryRun": true,
                              "input": {"promptText": "a cat", "aspectRatio": "4:3"}})"));
    contract.Check("POST", "/v1/generate/image",
                   c.Send("POST", "/v1/generate/image", auth,
                          R"({"configId": "contract", "input": {"promptText": "a cat"}})"));
    contract.Check("POST", "/v1/generate/image",
                   c.Send("POST", "/v1/generate/image", auth,
                          R"({"configId": "contract",
                              "input": {"promptText": "a cat", "outputCount": 3}})"));
    contract.Check("POST", "/v1/generate/video",
                   c.Send("POST", "/v1/generate/video", auth,
                          R"({"configId": "contract", "input": {"duration": 1}})"));
    contract.Check("POST", "/v1/generate/video",
                   c.Send("POST", "/v1/generate/video", auth,
                          R"({"configId": "contract", "input": {"promptText": "waves"}})"));
    contract.Check("POST", "/v1/generate/audio",
                   c.Send("POST", "/v1/generate/audio", auth,
                          R"({"configId": "nobody", "input": {"type": "speech",
                              "promptText": "hi"}})"));
    contract.Check("POST", "/v1/generate/audio",
                   c.Send("POST", "/v1/generate/audio", auth, R"({"configId": "contract"})"));
    contract.Check("GET", "/v1/routers/{id}/requests",
                   c.Send("GET", "/v1/routers/" + router_id + "/requests?limit=2", auth));
    contract.Check("GET", "/v1/routers/{id}/requests",
                   c.Send("GET", "/v1/routers/" + router_id + "/requests", auth));
    contract.Check("GET", "/v1/routers/{id}/requests",
                   c.Send("GET", "/v1/routers/" + missing + "/requests", auth));
    contract.Check("DELETE", "/v1/routers/{id}",
                   c.Send("DELETE", "/v1/routers/" + router_id, auth));
    contract.Check("DELETE", "/v1/routers/{id}",
                   c.Send("DELETE", "/v1/routers/" + router_id, auth));

    // Realtime sessions: create (and bad bodies), poll to READY, consume (its preflight, a
    // wrong key, twice), connect_backend, cancel; an integration session that fails; their
    // conversations (list, detail of ended and failed, delete) and usage.
    const json session_body = {
        {"model", "gwm1_avatars"},
        {"avatar", {{"type", "service-preset"}, {"presetId", "influencer"}}},
        {"tools", {{{"type", "client_event"}, {"name", "click"}, {"description", "Clicks"}}}}};
    const auto session = c.Send("POST", "/v1/realtime_sessions", auth, session_body.dump());
    contract.Check("POST", "/v1/realtime_sessions", session);
    ASSERT_EQ(session.status, 200) << session.body;
    const std::string session_id = session.Json()["id"];
    contract.Check("POST", "/v1/realtime_sessions",
                   c.Send("POST", "/v1/realtime_sessions", auth, R"({"model": "gwm1_avatars"})"));
    json ready;
    for (int i = 0; i < 200; ++i) {
        const auto r = c.Send("GET", "/v1/realtime_sessions/" + session_id, auth);
        contract.Check("GET", "/v1/realtime_sessions/{id}", r);
        ready = r.Json();
        if (ready["status"] == "READY") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ASSERT_EQ(ready["status"], "READY");
    contract.Check("GET", "/v1/realtime_sessions/{id}",
                   c.Send("GET", "/v1/realtime_sessions/" + missing, auth));
    const std::string consume = "/v1/realtime_sessions/" + session_id + "/consume";
    contract.Check("OPTIONS", "/v1/realtime_sessions/{id}/consume",
                   c.Send("OPTIONS", consume, {{"Origin", "https://example.com"}}));
    contract.Check("POST", "/v1/realtime_sessions/{id}/consume",
                   c.Send("POST", consume, {{"Authorization", "Bearer nope"}}));
    const Headers session_key = {
        {"Authorization", "Bearer " + ready["sessionKey"].get<std::string>()}};
    contract.Check("POST", "/v1/realtime_sessions/{id}/consume",
                   c.Send("POST", consume, session_key));
    contract.Check("POST", "/v1/realtime_sessions/{id}/consume",
                   c.Send("POST", consume, session_key));
    const std::string backend = "/v1/realtime_sessions/" + session_id + "/connect_backend";
    contract.Check("POST", "/v1/realtime_sessions/{id}/connect_backend",
                   c.Send("POST", backend, {{"Authorization", "Bearer " + kTestKey}}));
    contract.Check("POST", "/v1/realtime_sessions/{id}/connect_backend",
                   c.Send("POST", "/v1/realtime_sessions/" + missing + "/connect_backend", auth));
    contract.Check("GET", "/v1/avatar_conversations/{id}",
                   c.Send("GET", "/v1/avatar_conversations/" + session_id, auth));
    contract.Check("DELETE", "/v1/avatar_conversations/{id}",
                   c.Send("DELETE", "/v1/avatar_conversations/" + session_id, auth));
    contract.Check("DELETE", "/v1/realtime_sessions/{id}",
                   c.Send("DELETE", "/v1/realtime_sessions/" + session_id, auth));
    contract.Check("DELETE", "/v1/realtime_sessions/{id}",
                   c.Send("DELETE", "/v1/realtime_sessions/" + missing, auth));
    contract.Check("POST", "/v1/realtime_sessions/{id}/connect_backend",
                   c.Send("POST", backend, auth));
    json integration_body = session_body;
    integration_body["integration"] = {{"type", "voice_provider"},
                                       {"signedUrl", "wss://agents.example.com/ws"}};
    const std::string failing =
        c.Send("POST", "/v1/realtime_sessions", auth, integration_body.dump()).Json()["id"];
    for (int i = 0; i < 200; ++i) {
        const auto r = c.Send("GET", "/v1/realtime_sessions/" + failing, auth);
        contract.Check("GET", "/v1/realtime_sessions/{id}", r);
        if (r.Json()["status"] == "FAILED") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    contract.Check("GET", "/v1/avatar_conversations/{id}",
                   c.Send("GET", "/v1/avatar_conversations/" + failing, auth));
    contract.Check("GET", "/v1/avatar_conversations/{id}",
                   c.Send("GET", "/v1/avatar_conversations/" + session_id, auth));
    contract.Check("GET", "/v1/avatar_conversations/{id}",
                   c.Send("GET", "/v1/avatar_conversations/" + missing, auth));
    contract.Check("GET", "/v1/avatar_conversations",
                   c.Send("GET", "/v1/avatar_conversations?limit=1", auth));
    contract.Check("GET", "/v1/avatar_conversations",
                   c.Send("GET", "/v1/avatar_conversations?startDate=never", auth));
    const std::string range = "startDate=2026-01-01T00:00:00Z&endDate=2026-01-03T00:00:00Z";
    contract.Check("GET", "/v1/avatar_usage", c.Send("GET", "/v1/avatar_usage?" + range, auth));
    contract.Check("GET", "/v1/avatar_usage", c.Send("GET", "/v1/avatar_usage", auth));
    contract.Check("DELETE", "/v1/avatar_conversations/{id}",
                   c.Send("DELETE", "/v1/avatar_conversations/" + session_id, auth));
    contract.Check("DELETE", "/v1/avatar_conversations/{id}",
                   c.Send("DELETE", "/v1/avatar_conversations/" + session_id, auth));

    contract.Check("GET", "/_genhost/realtime/page", c.Send("GET", "/_genhost/realtime/page"));

    // The organization: its credits and tier, and usage (with a bad range).
    contract.Check("GET", "/v1/organization", c.Send("GET", "/v1/organization", auth));
    contract.Check("GET", "/v1/organization",
                   c.Send("GET", "/v1/organization", {{"X-Service-Version", "2024-11-06"}}));
    contract.Check("POST", "/v1/organization/usage",
                   c.Send("POST", "/v1/organization/usage", auth, "{}"));
    contract.Check("POST", "/v1/organization/usage",
                   c.Send("POST", "/v1/organization/usage", auth,
                          R"({"startDate": "2026-01-01", "beforeDate": "2026-12-01"})"));

    // Recipes: a valid request of each (its task cancelled at once), bad input and no key.
    {
        const auto image = [] {
            return json{{"uri", "data:image/png;base64," + Base64Encode(MakePng(64, 64))}};
        };
        const std::string video = "data:video/mp4;base64," + Base64Encode(MakeMp4(160, 90, 2));
        const std::map<std::string, json> recipes = {
            {"ad_localization",
             {{"referenceImage", image()}, {"targetLanguage", "fr"}, {"version", "2026-06"}}},
            {"marketing_stock_image", {{"prompt", "a bike"}, {"version", "2026-06"}}},
            {"multi_shot_video", {{"mode", "auto"}, {"prompt", "rain"}, {"version", "2026-06"}}},
            {"product_ad", {{"productImages", {image()}}, {"version", "2026-07"}}},
            {"product_campaign_image",
             {{"image", image()}, {"prompt", "bold"}, {"version", "unsafe-latest"}}},
            {"product_swap",
             {{"newProductImages", {image()}},
              {"originalProductImage", image()},
              {"referenceVideo", {{"uri", video}}},
              {"version", "2026-06"}}},
            {"product_ugc",
             {{"characterImage", image()}, {"productImage", image()}, {"version", "2026-06"}}}};
        for (const auto& [recipe, body] : recipes) {
            const std::string path = "/v1/recipes/" + recipe;
            const auto created = c.Send("POST", path, auth, body.dump());
            contract.Check("POST", path, created);
            ASSERT_EQ(created.status, 200) << recipe << ": " << created.body;
            c.Send("DELETE", "/v1/tasks/" + created.Json()["id"].get<std::string>(), auth);
            contract.Check("POST", path, c.Send("POST", path, auth, "{}"));
            contract.Check(
                "POST", path,
                c.Send("POST", path, {{"Content-Type", "application/json"}}, body.dump()));
        }
    }

    // Workflows: publish (and a bad graph), list, get, run (and bad overrides, an unknown
    // version), invocations polled until they end (one succeeds, one fails), unknown ids.
    const json workflow = {
        {"name", "contract"},
        {"graph",
         {{"version", 1},
          {"nodes",
           {{{"id", "6a1e0f2c-3b4d-4e5f-8a6b-7c8d9e0f1a2b"},
             {"name", "Prompt"},
             {"type", "text"},
             {"value", "a lighthouse"}},
            {{"id", "7b2f1a3d-4c5e-4f6a-9b7c-8d9e0f1a2b3c"},
             {"name", "Still"},
             {"type", "generation"},
             {"endpoint", "text_to_image"},
             {"input", {{"model", "gen4_image"}, {"ratio", "1280:720"}}}}}},
          {"edges",
           {{{"source", {{"node", "6a1e0f2c-3b4d-4e5f-8a6b-7c8d9e0f1a2b"}, {"output", "value"}}},
             {"target",
              {{"node", "7b2f1a3d-4c5e-4f6a-9b7c-8d9e0f1a2b3c"}, {"field", "promptText"}}}}}}}}};
    const auto published_workflow = c.Send("POST", "/_genhost/workflows", auth, workflow.dump());
    contract.Check("POST", "/_genhost/workflows", published_workflow);
    ASSERT_EQ(published_workflow.status, 200) << published_workflow.body;
    const std::string workflow_id = published_workflow.Json()["id"];
    json cyclic = workflow;
    cyclic["graph"]["edges"].push_back(
        {{"source", {{"node", "7b2f1a3d-4c5e-4f6a-9b7c-8d9e0f1a2b3c"}, {"output", "output"}}},
         {"target", {{"node", "7b2f1a3d-4c5e-4f6a-9b7c-8d9e0f1a2b3c"}, {"field", "seed"}}}});
    contract.Check("POST", "/_genhost/workflows",
                   c.Send("POST", "/_genhost/workflows", auth, cyclic.dump()));
    contract.Check("GET", "/v1/workflows", c.Send("GET", "/v1/workflows", auth));
    contract.Check("GET", "/v1/workflows/{id}",
                   c.Send("GET", "/v1/workflows/" + workflow_id, auth));
    contract.Check("GET", "/v1/workflows/{id}", c.Send("GET", "/v1/workflows/" + missing, auth));
    contract.Check("POST", "/v1/workflows/{id}",
                   c.Send("POST", "/v1/workflows/" + missing, auth, "{}"));
    contract.Check("POST", "/v1/workflows/{id}",
                   c.Send("POST", "/v1/workflows/" + workflow_id, auth,
                          R"({"nodeOutputs": {"6a1e0f2c-3b4d-4e5f-8a6b-7c8d9e0f1a2b":
                              {"value": {"type": "primitive", "value": 3}}}})"));
    const auto invoked = c.Send("POST", "/v1/workflows/" + workflow_id, auth, "{}");
    contract.Check("POST", "/v1/workflows/{id}", invoked);
    const auto refused_run = c.Send("POST", "/v1/workflows/" + workflow_id, auth,
                                    R"({"nodeOutputs": {"6a1e0f2c-3b4d-4e5f-8a6b-7c8d9e0f1a2b":
                                        {"value": {"type": "primitive",
                                                   "value": "A Torture-Porn scene"}}}})");
    contract.Check("POST", "/v1/workflows/{id}", refused_run);
    for (const auto& run : {invoked, refused_run}) {
        ASSERT_EQ(run.status, 200) << run.body;
        const std::string invocation = run.Json()["id"];
        std::string invocation_status;
        for (int i = 0; i < 600; ++i) {
            const auto got = c.Send("GET", "/v1/workflow_invocations/" + invocation, auth);
            contract.Check("GET", "/v1/workflow_invocations/{id}", got);
            invocation_status = got.Json().value("status", "");
            if (invocation_status == "SUCCEEDED" || invocation_status == "FAILED") break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        EXPECT_EQ(invocation_status, run.body == invoked.body ? "SUCCEEDED" : "FAILED");
    }
    contract.Check("GET", "/v1/workflow_invocations/{id}",
                   c.Send("GET", "/v1/workflow_invocations/" + missing, auth));

    // Every operation was reached.
    for (const auto& op : contract.operations()) {
        EXPECT_TRUE(contract.answered().count(op)) << "no request reached " << op;
    }
    EXPECT_GT(contract.checked(), 100);
}

}  // namespace
}  // namespace genhost::testing
