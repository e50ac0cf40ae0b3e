#include "genhost/api/operations.hpp"

#include "genhost/core/clock.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/core/resources.hpp"
#include "genhost/core/utf8.hpp"

#include <charconv>

#include <cctype>
#include <set>
#include <stdexcept>

namespace genhost::api {

namespace {

using OJson = nlohmann::ordered_json;

std::string Field(const OJson& op, const char* name, bool required, const std::string& where) {
    if (!op.contains(name)) {
        if (required) throw std::runtime_error(where + ": no \"" + name + "\"");
        return "";
    }
    if (!op[name].is_string()) throw std::runtime_error(where + ": \"" + name + "\" not a string");
    return op[name].get<std::string>();
}

}  // namespace

std::string Camel(std::string_view name) {
    std::string out;
    bool upper = true;
    for (const char c : name) {
        if (c == '_' || c == '-' || c == '.' || c == '/') {
            upper = true;
            continue;
        }
        out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    return out;
}

std::string OperationIdOf(std::string_view name) {
    std::string id = Camel(name);
    if (!id.empty()) id[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(id[0])));
    return id;
}

OperationTable LoadOperations(const validate::SchemaSet& schemas, std::string_view text) {
    OperationTable table;
    std::set<std::string> ids;
    std::set<std::string> routes;
    const auto add = [&](Operation op) {
        if (!ids.insert(op.operation_id).second) {
            throw std::runtime_error("operations: two operations are called " + op.operation_id);
        }
        if (!routes.insert(op.method + " " + op.path).second) {
            throw std::runtime_error("operations: two operations serve " + op.method + " " +
                                     op.path);
        }
        table.operations.push_back(std::move(op));
    };
    for (const auto& endpoint : schemas.Endpoints()) {
        if (endpoint.kind == "recipe") {
            // A recipe (docs/recipes.md): its own handler (src/api/recipes.cpp) under the
            // operationId of its path's last segment (/v1/recipes/product_ad: productAd).
            Operation op;
            op.operation_id = OperationIdOf(endpoint.path.substr(endpoint.path.rfind('/') + 1));
            op.method = endpoint.method;
            op.path = endpoint.path;
            op.auth = "apiKey";
            op.tag = "Recipes";
            op.summary = endpoint.summary;
            op.description = endpoint.summary +
                             " The task runs in the background: poll GET /v1/tasks/{id}. Its "
                             "output holds the final media first, then each step's media, then "
                             "steps.json, the manifest of the steps.";
            op.request = endpoint.name;
            op.responses = {
                {"200",
                 {{"description",
                   "The task was created. `estimatedCost.credits` is the most it may charge."},
                  {"schema", "GenerationResponse"}}},
                {"400", "BadRequest"},
                {"401", "Unauthorized"},
                {"429", "RateLimited"}};
            add(std::move(op));
            continue;
        }
        if (endpoint.kind != "generation") continue;
        Operation op;
        op.operation_id = OperationIdOf(endpoint.name);
        op.method = endpoint.method;
        op.path = endpoint.path;
        op.auth = "apiKey";
        op.summary = endpoint.summary;
        op.request = endpoint.name;
        op.endpoint = endpoint.name;
        add(std::move(op));
    }

    const OJson doc = OJson::parse(text);
    if (doc.contains("pathParameters")) table.path_parameters = doc["pathParameters"];
    if (doc.contains("tags")) table.tags = doc["tags"];
    for (const auto& d : doc.at("operations")) {
        const std::string where =
            "operations: " + (d.contains("operationId") && d["operationId"].is_string()
                                  ? d["operationId"].get<std::string>()
                                  : std::string("an operation"));
        Operation op;
        op.operation_id = Field(d, "operationId", true, where);
        op.method = Field(d, "method", true, where);
        op.path = Field(d, "path", true, where);
        op.auth = Field(d, "auth", true, where);
        op.tag = Field(d, "tag", true, where);
        op.summary = Field(d, "summary", true, where);
        op.description = Field(d, "description", false, where);
        op.request = Field(d, "request", false, where);
        op.request_content = Field(d, "requestContent", false, where);
        const std::string query = Field(d, "query", false, where);
        if (!query.empty() && query != "page") throw std::runtime_error(where + ": query " + query);
        op.page = query == "page";
        if (d.contains("pageDefault")) {
            if (!op.page || !d["pageDefault"].is_number_integer() || d["pageDefault"] < 1 ||
                d["pageDefault"] > 100) {
                throw std::runtime_error(where + ": pageDefault is a page's default limit, 1-100");
            }
            op.page_default = d["pageDefault"].get<int>();
        }
        if (d.contains("queryParameters")) {
            const OJson& params = d["queryParameters"];
            if (!params.is_array()) throw std::runtime_error(where + ": queryParameters");
            for (const auto& p : params) {
                if (!p.contains("name") || !p["name"].is_string() || !p.contains("schema") ||
                    !p["schema"].is_object() || !p["schema"].contains("type")) {
                    throw std::runtime_error(where +
                                             ": a query parameter needs a name and a typed schema");
                }
                const std::string type = p["schema"]["type"].get<std::string>();
                if (type != "string" && type != "integer" && type != "array") {
                    throw std::runtime_error(where + ": query parameter type " + type);
                }
            }
            op.query_parameters = params;
        }
        if (op.auth != "apiKey" && op.auth != "apiKeyUnversioned" && op.auth != "sessionKey" &&
            op.auth != "public" && op.auth != "signedUrl") {
            throw std::runtime_error(
                where +
                ": auth must be apiKey, apiKeyUnversioned, sessionKey, public or signedUrl");
        }
        if (op.path.empty() || op.path.front() != '/') {
            throw std::runtime_error(where + ": path must start with /");
        }
        // What the hosted API has is under /v1/; the stand-in's own extras under /_genhost/.
        if ((op.auth == "apiKey" || op.auth == "apiKeyUnversioned") &&
            op.path.rfind("/v1/", 0) != 0 && op.path.rfind("/_genhost/", 0) != 0) {
            throw std::runtime_error(where + ": an apiKey operation is under /v1/ or /_genhost/");
        }
        if (!op.request.empty()) {
            const auto* endpoint = schemas.FindEndpoint(op.request);
            if (endpoint == nullptr || endpoint->kind == "generation") {
                throw std::runtime_error(where + ": request " + op.request +
                                         " names no resource schema document");
            }
        }
        for (std::size_t open = op.path.find('{'); open != std::string::npos;
             open = op.path.find('{', open + 1)) {
            if (!table.path_parameters.contains(op.path)) {
                throw std::runtime_error(where + ": " + op.path + " has no pathParameters entry");
            }
        }
        if (!d.contains("responses") || !d["responses"].is_object() || d["responses"].empty()) {
            throw std::runtime_error(where + ": no responses");
        }
        op.responses = d["responses"];
        add(std::move(op));
    }
    return table;
}

namespace {

// ValueIssue checks one query value against a string or integer schema.
void ValueIssue(const OJson& schema, const std::string& value, std::vector<std::string> path,
                std::vector<Issue>& issues) {
    const std::string type = schema.value("type", "string");
    if (type == "integer") {
        long long n = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (value.empty() || ec == std::errc::invalid_argument ||
            end != value.data() + value.size()) {
            issues.push_back(
                {"invalid_type", std::move(path), "Expected integer, received string"});
            return;
        }
        if (schema.contains("maximum") &&
            (ec == std::errc::result_out_of_range || n > schema["maximum"].get<long long>())) {
            issues.push_back({"too_big", std::move(path),
                              "Number must be less than or equal to " +
                                  std::to_string(schema["maximum"].get<long long>())});
        } else if (schema.contains("minimum") && n < schema["minimum"].get<long long>()) {
            issues.push_back({"too_small", std::move(path),
                              "Number must be greater than or equal to " +
                                  std::to_string(schema["minimum"].get<long long>())});
        }
        return;
    }
    // Query values are percent-decoded bytes: text must be UTF-8 before it is echoed in a
    // message, compared or sent to PostgreSQL (which refuses it: a 500 otherwise).
    if (!IsValidUtf8(value)) {
        issues.push_back({"invalid_string", std::move(path), "String must be valid UTF-8"});
        return;
    }
    if (schema.contains("enum")) {
        std::string expected;
        for (const auto& e : schema["enum"]) {
            if (e.get<std::string>() == value) return;
            expected += (expected.empty() ? "'" : " | '") + e.get<std::string>() + "'";
        }
        issues.push_back(
            {"invalid_enum_value", std::move(path),
             "Invalid enum value. Expected " + expected + ", received '" + value + "'"});
        return;
    }
    // U+0000 cannot be stored or searched (PostgreSQL's text ends at it): refused as in bodies.
    if (value.find('\0') != std::string::npos) {
        issues.push_back({"invalid_string", std::move(path), "String must not contain U+0000"});
        return;
    }
    // Lengths count characters (UTF-8 sequences), not bytes.
    std::size_t length = 0;
    for (const char c : value) length += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (schema.contains("minLength") && length < schema["minLength"].get<std::size_t>()) {
        issues.push_back({"too_small", std::move(path),
                          "String must contain at least " +
                              std::to_string(schema["minLength"].get<std::size_t>()) +
                              " character(s)"});
    } else if (schema.contains("maxLength") && length > schema["maxLength"].get<std::size_t>()) {
        issues.push_back({"too_big", std::move(path),
                          "String must contain at most " +
                              std::to_string(schema["maxLength"].get<std::size_t>()) +
                              " character(s)"});
    } else if (schema.value("format", "") == "uuid" && !IsUuid(value)) {
        issues.push_back({"invalid_string", std::move(path), "Invalid uuid"});
    } else if (schema.value("format", "") == "date-time" && !ParseDateTime(value)) {
        issues.push_back({"invalid_string", std::move(path), "Invalid datetime"});
    }
}

}  // namespace

std::vector<Issue> CheckQuery(const Operation& op, const http::Request& req) {
    std::vector<Issue> issues;
    for (const auto& p : op.query_parameters) {
        const std::string name = p["name"].get<std::string>();
        const OJson& schema = p["schema"];
        const std::vector<std::string> values = req.QueryParams(name);
        if (values.empty()) {
            if (p.value("required", false)) issues.push_back({"invalid_type", {name}, "Required"});
            continue;
        }
        if (schema["type"] == "array") {
            if (schema.contains("maxItems") &&
                values.size() > schema["maxItems"].get<std::size_t>()) {
                issues.push_back({"too_big",
                                  {name},
                                  "Array must contain at most " +
                                      std::to_string(schema["maxItems"].get<std::size_t>()) +
                                      " element(s)"});
                continue;
            }
            const OJson items = schema.value("items", OJson::object());
            for (std::size_t i = 0; i < values.size(); ++i) {
                ValueIssue(items, values[i], {name, std::to_string(i)}, issues);
            }
            continue;
        }
        if (values.size() > 1) {
            issues.push_back({"invalid_type",
                              {name},
                              "Expected one value, received " + std::to_string(values.size())});
            continue;
        }
        ValueIssue(schema, values.front(), {name}, issues);
    }
    return issues;
}

void CheckHandlers(const OperationTable& table, const std::set<std::string>& handlers) {
    std::set<std::string> declared;
    for (const Operation& op : table.operations) {
        if (!op.endpoint.empty()) continue;
        declared.insert(op.operation_id);
        if (handlers.count(op.operation_id) == 0) {
            throw std::runtime_error("operation " + op.operation_id + " (" + op.method + " " +
                                     op.path + ") has no handler");
        }
    }
    for (const auto& id : handlers) {
        if (declared.count(id) == 0)
            throw std::runtime_error("handler " + id + " has no operation");
    }
}

OperationTable EmbeddedOperations(const validate::SchemaSet& schemas) {
    const auto text = FindResource("schemas/operations.json");
    if (!text) throw std::runtime_error("schemas/operations.json is not embedded");
    return LoadOperations(schemas, *text);
}

}  // namespace genhost::api
