// Workflows (docs/workflows.md, CLIENTS.md 3.6): publishing (shared by POST /_genhost/workflows
// and the `workflows publish` command), GET /v1/workflows, GET and POST /v1/workflows/{id}, and
// GET /v1/workflow_invocations/{id}.
//
// POST /v1/workflows/{id} validates the overrides against the version's primitive nodes, puts
// every primitive's value into the fields its edges feed, checks each generation node's input
// against its endpoint's schema again (an override may not fit: the issue is at the override's
// path), fills the defaults, reads every media input of each node into the input folder of the
// task it will become (as a generation request would; a bad one is a 400 at its path), and stores
// the invocation with its plan; its job (tasks/workflow_runner.hpp) runs it.
#include "genhost/api/workflows.hpp"

#include "genhost/api/workflows_routes.hpp"
#include "handlers.hpp"

#include "genhost/assets/resolver.hpp"
#include "genhost/core/ids.hpp"

#include <functional>
#include <map>
#include <set>

namespace genhost::api {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

// A media string that passes every media field's format, standing for a generation node's output
// (which is only known when the node has run).
constexpr const char* kUpstreamPlaceholder = "https://genhost.invalid/upstream-node-output";

bool IsMediaType(const std::string& t) { return t == "image" || t == "video" || t == "audio"; }

std::string Describe(const std::string& type) {
    if (type == "text") return "text";
    if (type == "number") return "a number";
    if (type == "boolean") return "a boolean";
    return type + " media";
}

std::vector<std::string> Path(std::initializer_list<std::string> head,
                              const std::vector<std::string>& tail = {}) {
    std::vector<std::string> out(head);
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
}

bool StartsWith(const std::vector<std::string>& path, const std::vector<std::string>& prefix) {
    return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

std::string FieldText(const std::vector<std::string>& segments) {
    std::string out;
    for (const auto& s : segments) out += (out.empty() ? "" : ".") + s;
    return out;
}

// GraphEdge is an edge whose ends exist and fit: a source output into a generation node's field.
struct GraphEdge {
    std::size_t index = 0;  // in graph.edges
    std::size_t source = 0;
    std::size_t target = 0;
    std::string pointer;
    std::vector<std::string> segments;
    std::string type;  // what it carries: text, number, boolean, image, video or audio
    bool bad = false;  // already reported
};

// Graph is a publication's graph read for the checks and for planning invocations.
struct Graph {
    const json* nodes = nullptr;
    std::map<std::string, std::size_t> index;  // node id -> place
    std::vector<GraphEdge> edges;
};

// ReadGraph indexes the nodes and reads the edges; the issues of ids, endpoints and edges go to
// `issues` (nullptr: a stored graph, already checked).
Graph ReadGraph(const validate::SchemaSet& schemas, const catalog::Catalog& catalog,
                const json& graph, std::vector<Issue>* issues) {
    Graph g;
    g.nodes = &graph.at("nodes");
    const auto add = [&](std::vector<std::string> path, std::string message) {
        if (issues != nullptr) issues->push_back({"custom", std::move(path), std::move(message)});
    };
    const json& nodes = *g.nodes;
    std::size_t generation = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const auto& n = nodes[i];
        const std::string id = LowerUuid(n.at("id").get<std::string>());
        if (!g.index.emplace(id, i).second) {
            add(Path({"graph", "nodes", std::to_string(i), "id"}), "Another node has this id");
        }
        if (n.at("type") != "generation") continue;
        ++generation;
        const std::string endpoint = n.at("endpoint").get<std::string>();
        const auto* info = schemas.FindEndpoint(endpoint);
        if (info == nullptr || info->kind != "generation") {
            std::string expected;
            for (const auto& e : schemas.Endpoints()) {
                if (e.kind != "generation") continue;
                expected += (expected.empty() ? "'" : " | '") + e.name + "'";
            }
            add(Path({"graph", "nodes", std::to_string(i), "endpoint"}),
                "Unknown generation endpoint '" + endpoint + "'. Expected " + expected);
        }
        const auto& input = n.at("input");
        if (endpoint == "avatar_videos") {
            const json* avatar = input.contains("avatar") ? &input["avatar"] : nullptr;
            if (avatar != nullptr && avatar->is_object() && avatar->value("type", "") == "custom") {
                add(Path({"graph", "nodes", std::to_string(i), "input", "avatar", "type"}),
                    "Custom avatars cannot be used in a workflow: use a preset avatar");
            }
            const json* speech = input.contains("speech") ? &input["speech"] : nullptr;
            if (speech != nullptr && speech->is_object() && speech->contains("voice") &&
                (*speech)["voice"].is_object() &&
                (*speech)["voice"].value("type", "") == "custom") {
                add(Path({"graph", "nodes", std::to_string(i), "input", "speech", "voice", "type"}),
                    "Custom voices cannot be used in a workflow: use a preset voice");
            }
        }
    }
    if (generation == 0) add({"graph", "nodes"}, "A workflow needs at least one generation node");

    const json& edges = graph.at("edges");
    std::set<std::pair<std::size_t, std::string>> fed;
    for (std::size_t i = 0; i < edges.size(); ++i) {
        const auto& e = edges[i];
        const std::string at = std::to_string(i);
        const auto source = g.index.find(LowerUuid(e.at("source").at("node").get<std::string>()));
        const auto target = g.index.find(LowerUuid(e.at("target").at("node").get<std::string>()));
        bool ok = true;
        if (source == g.index.end()) {
            add(Path({"graph", "edges", at, "source", "node"}), "No node has this id");
            ok = false;
        }
        if (target == g.index.end()) {
            add(Path({"graph", "edges", at, "target", "node"}), "No node has this id");
            ok = false;
        }
        if (!ok) continue;
        const json& from = nodes[source->second];
        const json& to = nodes[target->second];
        const std::string from_type = from.at("type").get<std::string>();
        const std::string output = e.at("source").at("output").get<std::string>();
        const std::string expected_output = from_type == "generation" ? "output" : "value";
        if (output != expected_output) {
            add(Path({"graph", "edges", at, "source", "output"}),
                "A " + from_type + " node's output is '" + expected_output + "'");
            ok = false;
        }
        if (to.at("type") != "generation") {
            add(Path({"graph", "edges", at, "target", "node"}),
                "Only generation nodes take inputs; this is a " + to.at("type").get<std::string>() +
                    " node");
            ok = false;
        }
        const auto pointer = FieldPointer(e.at("target").at("field").get<std::string>());
        if (!pointer) {
            add(Path({"graph", "edges", at, "target", "field"}),
                "Expected a JSON pointer (/promptImage) or a dotted path (promptImage.0.uri)");
            ok = false;
        } else if (*pointer == "/model") {
            add(Path({"graph", "edges", at, "target", "field"}),
                "The model of a generation node cannot be fed by an edge");
            ok = false;
        } else if (!fed.emplace(target->second, *pointer).second) {
            add(Path({"graph", "edges", at, "target", "field"}), "Another edge feeds this field");
            ok = false;
        }
        if (source->second == target->second) {
            add(Path({"graph", "edges", at}), "A node cannot feed itself (a cycle)");
            ok = false;
        }
        if (!ok) continue;
        GraphEdge edge;
        edge.index = i;
        edge.source = source->second;
        edge.target = target->second;
        edge.pointer = *pointer;
        edge.segments = JsonPointerTokens(*pointer);
        edge.type = from_type == "generation"
                        ? OutputKind(catalog, from.at("endpoint").get<std::string>(),
                                     from.at("input").value("model", ""))
                        : from_type;
        g.edges.push_back(std::move(edge));
    }
    return g;
}

// CycleIssues reports each edge that closes a cycle of the graph's edges.
void CycleIssues(const Graph& g, std::vector<Issue>& issues) {
    const std::size_t n = g.nodes->size();
    std::vector<std::vector<const GraphEdge*>> out(n);
    for (const auto& e : g.edges) out[e.source].push_back(&e);
    std::vector<int> color(n, 0);  // 0 unseen, 1 on the stack, 2 done
    std::vector<std::size_t> stack;
    const auto name = [&](std::size_t i) { return (*g.nodes)[i].at("name").get<std::string>(); };
    std::function<void(std::size_t)> visit = [&](std::size_t v) {
        color[v] = 1;
        stack.push_back(v);
        for (const GraphEdge* e : out[v]) {
            if (color[e->target] == 1) {
                std::string cycle;
                const auto from = std::find(stack.begin(), stack.end(), e->target);
                for (auto it = from; it != stack.end(); ++it) cycle += name(*it) + " → ";
                cycle += name(e->target);
                issues.push_back({"custom",
                                  {"graph", "edges", std::to_string(e->index)},
                                  "This edge closes a cycle: " + cycle});
            } else if (color[e->target] == 0) {
                visit(e->target);
            }
        }
        stack.pop_back();
        color[v] = 2;
    };
    for (std::size_t v = 0; v < n; ++v) {
        if (color[v] == 0) visit(v);
    }
}

// FeedIssues checks generation node `j` with every edge into it carrying `values[edge]` (a
// primitive's value or a placeholder): types against the schema's media fields and
// invalid_type issues, then the rest of the schema. `report` maps an issue that concerns a
// primitive's value to its path; nullptr reports it at the node's input.
struct EdgeValue {
    GraphEdge* edge;
    json value;
};
void CheckNodeInput(const validate::SchemaSet& schemas, const std::string& endpoint, json& body,
                    std::vector<EdgeValue>& feeds, const std::vector<std::string>& node_path,
                    const std::function<std::vector<std::string>(const GraphEdge&)>& value_path,
                    std::vector<Issue>& issues) {
    // Which fed fields are media fields, and of which kind: asked of the body with a media
    // string in every fed field (a text in a media field selects no union branch).
    // Every target is checked against the schema's shape and bounds before anything is written:
    // nlohmann's pointer assignment grows an array to any index it names.
    for (auto& f : feeds) {
        const auto problem = schemas.FieldPlace(endpoint, body, f.edge->segments);
        if (!problem) continue;
        issues.push_back(
            {"custom",
             {"graph", "edges", std::to_string(f.edge->index), "target", "field"},
             "The input has no place for field " + FieldText(f.edge->segments) + ": " + *problem});
        f.edge->bad = true;
    }
    json probe = body;
    for (auto& f : feeds) {
        if (f.edge->bad) continue;
        try {
            probe[json::json_pointer(f.edge->pointer)] = kUpstreamPlaceholder;
            body[json::json_pointer(f.edge->pointer)] = f.value;
        } catch (const json::exception&) {
            issues.push_back({"custom",
                              {"graph", "edges", std::to_string(f.edge->index), "target", "field"},
                              "The input has no place for field " + FieldText(f.edge->segments)});
            f.edge->bad = true;
        }
    }
    std::map<std::string, std::string> media;
    for (const auto& m : schemas.MediaFields(endpoint, probe)) media[m.pointer] = m.kind;
    for (auto& f : feeds) {
        if (f.edge->bad) continue;
        const auto it = media.find(f.edge->pointer);
        const std::string field = FieldText(f.edge->segments);
        std::string problem;
        if (IsMediaType(f.edge->type)) {
            if (it == media.end()) {
                problem = "the edge carries " + Describe(f.edge->type) + ", but " + field + " of " +
                          endpoint + " is not a media field";
            } else if (it->second != f.edge->type) {
                problem = "the edge carries " + Describe(f.edge->type) + ", but " + field + " of " +
                          endpoint + " takes " + it->second + " media";
            }
        } else if (it != media.end()) {
            problem = "the edge carries " + Describe(f.edge->type) + ", but " + field + " of " +
                      endpoint + " takes " + it->second + " media";
        }
        if (!problem.empty()) {
            issues.push_back({"custom",
                              {"graph", "edges", std::to_string(f.edge->index), "target", "field"},
                              "Type mismatch: " + problem});
            f.edge->bad = true;
        }
    }
    for (const auto& issue : schemas.Validate(endpoint, body)) {
        const EdgeValue* feeding = nullptr;
        for (const auto& f : feeds) {
            if (StartsWith(issue.path, f.edge->segments)) feeding = &f;
        }
        if (feeding == nullptr) {
            std::vector<std::string> path = node_path;
            path.insert(path.end(), issue.path.begin(), issue.path.end());
            issues.push_back({issue.code, std::move(path), issue.message});
            continue;
        }
        if (feeding->edge->bad) continue;
        const std::string field = FieldText(feeding->edge->segments);
        if (issue.code == "invalid_type" && issue.path == feeding->edge->segments) {
            issues.push_back(
                {"custom",
                 {"graph", "edges", std::to_string(feeding->edge->index), "target", "field"},
                 "Type mismatch: the edge carries " + Describe(feeding->edge->type) + ", but " +
                     field + " of " + endpoint + " says: " + issue.message});
            feeding->edge->bad = true;
            continue;
        }
        issues.push_back({issue.code, value_path(*feeding->edge),
                          issue.message + " (as " + field + " of " + endpoint + ")"});
    }
}

json VersionJson(const store::WorkflowVersionRecord& v) {
    return {{"id", v.id},
            {"name", v.name},
            {"description", v.description ? json(*v.description) : json()},
            {"createdAt", FormatTimestamp(v.created_at)},
            {"updatedAt", FormatTimestamp(v.updated_at)},
            {"version", v.version},
            {"graph", json::parse(v.graph_json)}};
}

http::Response NotFound(const App& app, const char* what) {
    return http::Response::Error(ApiError::NotFound(what), app.doc_url);
}

}  // namespace

std::optional<std::string> FieldPointer(const std::string& field) {
    if (field.empty()) return std::nullopt;
    if (field.front() == '/') {
        try {
            (void)json::json_pointer(field);
        } catch (const json::exception&) {
            return std::nullopt;
        }
        return field;
    }
    std::string out;
    std::size_t at = 0;
    for (;;) {
        const std::size_t dot = field.find('.', at);
        const std::string seg =
            field.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
        if (seg.empty()) return std::nullopt;
        out += '/';
        for (const char c : seg) {
            if (c == '~') {
                out += "~0";
            } else if (c == '/') {
                out += "~1";
            } else {
                out += c;
            }
        }
        if (dot == std::string::npos) break;
        at = dot + 1;
    }
    return out;
}

std::string OutputKind(const catalog::Catalog& catalog, const std::string& endpoint,
                       const std::string& model) {
    const auto* info = catalog.FindModel(model);
    if (info == nullptr || !info->ServesEndpoint(endpoint)) return "";
    const auto modality = info->CapabilitiesFor(endpoint).value("modality", json());
    return modality.is_string() ? modality.get<std::string>() : "";
}

std::vector<Issue> CheckWorkflowGraph(const validate::SchemaSet& schemas,
                                      const catalog::Catalog& catalog, const json& graph) {
    std::vector<Issue> issues;
    Graph g = ReadGraph(schemas, catalog, graph, &issues);
    CycleIssues(g, issues);
    const json& nodes = *g.nodes;
    for (std::size_t j = 0; j < nodes.size(); ++j) {
        const json& node = nodes[j];
        if (node.at("type") != "generation") continue;
        const std::string endpoint = node.at("endpoint").get<std::string>();
        const auto* info = schemas.FindEndpoint(endpoint);
        if (info == nullptr || info->kind != "generation") continue;  // reported
        json body = node.at("input");
        std::vector<EdgeValue> feeds;
        for (auto& e : g.edges) {
            if (e.target != j) continue;
            const json& source = nodes[e.source];
            feeds.push_back({&e, source.at("type") == "generation" ? json(kUpstreamPlaceholder)
                                                                   : source.at("value")});
        }
        CheckNodeInput(
            schemas, endpoint, body, feeds, {"graph", "nodes", std::to_string(j), "input"},
            [](const GraphEdge& e) {
                return std::vector<std::string>{"graph", "nodes", std::to_string(e.source),
                                                "value"};
            },
            issues);
    }
    return issues;
}

Result<store::NewWorkflowVersion> WorkflowPublication(const validate::SchemaSet& schemas,
                                                      const catalog::Catalog& catalog,
                                                      const std::string& org_id, const json& body) {
    auto issues = schemas.Validate("workflows_publish", body);
    if (issues.empty()) issues = CheckWorkflowGraph(schemas, catalog, body.at("graph"));
    if (!issues.empty()) return ApiError::InvalidRequest("Invalid workflow", std::move(issues));
    store::NewWorkflowVersion v;
    v.id = NewUuid();
    v.org_id = org_id;
    v.name = body.at("name").get<std::string>();
    if (body.contains("description") && body.at("description").is_string()) {
        v.description = body.at("description").get<std::string>();
    }
    v.graph_json = body.at("graph").dump();
    return v;
}

namespace {

asio::awaitable<http::Response> PublishWorkflow(App& app, http::Request& req,
                                                const auth::Principal& who) {
    auto checked = co_await CheckedBody(app, std::move(req.body), "workflows_publish", false);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    auto version = WorkflowPublication(*app.schemas, *app.catalog, who.org_id, *checked);
    if (!version) co_return http::Response::Error(version.error(), app.doc_url);
    const auto published = co_await app.workflows.repo->Publish(std::move(*version));
    co_return http::Response::Json(200, VersionJson(published));
}

asio::awaitable<http::Response> ListWorkflows(App& app, http::Request&,
                                              const auth::Principal& who) {
    const auto workflows = co_await app.workflows.repo->List(who.org_id);
    json data = json::array();
    for (const auto& w : workflows) {
        json versions = json::array();
        for (const auto& v : w.versions) {
            versions.push_back({{"id", v.id},
                                {"createdAt", FormatTimestamp(v.created_at)},
                                {"version", v.version}});
        }
        data.push_back({{"name", w.name}, {"versions", std::move(versions)}});
    }
    co_return http::Response::Json(200, {{"data", std::move(data)}});
}

asio::awaitable<http::Response> GetWorkflow(App& app, http::Request& req,
                                            const auth::Principal& who) {
    const auto version =
        co_await app.workflows.repo->GetVersion(who.org_id, LowerUuid(req.params["id"]));
    if (!version) co_return NotFound(app, "Workflow not found");
    co_return http::Response::Json(200, VersionJson(*version));
}

// PlannedNode is a generation node of an invocation being planned.
struct PlannedNode {
    std::size_t position = 0;
    std::string id;
    std::string name;
    std::string endpoint;
    std::string model;
    std::string task_id;
    json input;
    json feeds = json::array();
    std::vector<assets::MediaInput> media;  // media strings to read, with their issue paths
};

asio::awaitable<http::Response> RunWorkflow(App& app, http::Request& req,
                                            const auth::Principal& who) {
    const auto version =
        co_await app.workflows.repo->GetVersion(who.org_id, LowerUuid(req.params["id"]));
    if (!version) co_return NotFound(app, "Workflow not found");
    auto checked = co_await CheckedBody(app, std::move(req.body), "workflows_run", false);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    const json graph = json::parse(version->graph_json);
    Graph g = ReadGraph(*app.schemas, *app.catalog, graph, nullptr);
    const json& nodes = *g.nodes;

    // The overrides: primitive nodes' values only, each of its node's type.
    std::vector<Issue> issues;
    std::map<std::size_t, json> values;  // primitive node -> its value
    std::set<std::size_t> overridden;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].at("type") != "generation") values[i] = nodes[i].at("value");
    }
    const json overrides = checked->value("nodeOutputs", json::object());
    for (const auto& [node_id, outputs] : overrides.items()) {
        const auto it = g.index.find(LowerUuid(node_id));
        if (it == g.index.end()) {
            issues.push_back(
                {"custom", {"nodeOutputs", node_id}, "No node of the workflow has this id"});
            continue;
        }
        const json& node = nodes[it->second];
        const std::string type = node.at("type").get<std::string>();
        if (type == "generation") {
            issues.push_back(
                {"custom",
                 {"nodeOutputs", node_id},
                 "Node " + node.at("name").get<std::string>() +
                     " is a generation node: only primitive nodes' outputs can be set"});
            continue;
        }
        for (const auto& [key, given] : outputs.items()) {
            if (key != "value") {
                issues.push_back({"custom",
                                  {"nodeOutputs", node_id, key},
                                  "A " + type + " node's only output is 'value'"});
                continue;
            }
            const std::string given_type = given.at("type").get<std::string>();
            bool fits = false;
            if (given_type == "primitive") {
                const json& v = given.at("value");
                fits = (type == "text" && v.is_string()) || (type == "number" && v.is_number()) ||
                       (type == "boolean" && v.is_boolean());
            } else {
                fits = given_type == type;
            }
            if (!fits) {
                const std::string expected =
                    IsMediaType(type) ? "{type: \"" + type + "\", uri}"
                                      : "{type: \"primitive\", value: " +
                                            std::string(type == "text" ? "string" : type) + "}";
                issues.push_back({"invalid_type",
                                  {"nodeOutputs", node_id, key},
                                  "Node " + node.at("name").get<std::string>() + " is a " + type +
                                      " node: expected " + expected});
                continue;
            }
            values[it->second] = given_type == "primitive" ? given.at("value") : given.at("uri");
            overridden.insert(it->second);
        }
    }
    if (!issues.empty()) {
        co_return http::Response::Error(ApiError::InvalidRequest("Invalid request body", issues),
                                        app.doc_url);
    }

    // Each generation node's input with its primitives in place, checked, defaults filled in.
    const auto value_path = [&](std::size_t primitive) {
        const std::string id = nodes[primitive].at("id").get<std::string>();
        std::vector<std::string> path = {"nodeOutputs", id, "value"};
        if (overridden.count(primitive) && IsMediaType(nodes[primitive].at("type"))) {
            path.push_back("uri");
        }
        return path;
    };
    std::vector<PlannedNode> planned;
    for (std::size_t j = 0; j < nodes.size(); ++j) {
        const json& node = nodes[j];
        if (node.at("type") != "generation") continue;
        PlannedNode p;
        p.position = j;
        p.id = LowerUuid(node.at("id").get<std::string>());
        p.name = node.at("name").get<std::string>();
        p.endpoint = node.at("endpoint").get<std::string>();
        p.input = node.at("input");
        p.model = p.input.value("model", "");
        p.task_id = NewOrderedUuid();
        std::vector<EdgeValue> feeds;
        std::map<std::string, std::size_t> fed_by_primitive;  // pointer -> primitive node
        std::set<std::string> fed_by_node;
        for (auto& e : g.edges) {
            if (e.target != j) continue;
            if (nodes[e.source].at("type") == "generation") {
                feeds.push_back({&e, json(kUpstreamPlaceholder)});
                p.feeds.push_back({{"node", LowerUuid(nodes[e.source].at("id").get<std::string>())},
                                   {"pointer", e.pointer}});
                fed_by_node.insert(e.pointer);
            } else {
                feeds.push_back({&e, values.at(e.source)});
                fed_by_primitive[e.pointer] = e.source;
            }
        }
        const std::vector<std::string> node_path = {"workflow", "nodes", std::to_string(j),
                                                    "input"};
        const std::size_t before = issues.size();
        CheckNodeInput(
            *app.schemas, p.endpoint, p.input, feeds, node_path,
            [&](const GraphEdge& e) { return value_path(e.source); }, issues);
        if (issues.size() != before) continue;
        app.schemas->FillDefaults(p.endpoint, p.input);
        for (const auto& m : app.schemas->MediaFields(p.endpoint, p.input)) {
            if (fed_by_node.count(m.pointer)) continue;
            assets::MediaInput media;
            media.pointer = m.pointer;
            media.kind = MediaKindByName(m.kind).value_or(MediaKind::kImage);
            const auto primitive = fed_by_primitive.find(m.pointer);
            if (primitive != fed_by_primitive.end()) {
                media.path = value_path(primitive->second);
            } else {
                media.path = node_path;
                media.path.insert(media.path.end(), m.path.begin(), m.path.end());
            }
            p.media.push_back(std::move(media));
        }
        planned.push_back(std::move(p));
    }
    if (!issues.empty()) {
        co_return http::Response::Error(ApiError::InvalidRequest("Invalid request body", issues),
                                        app.doc_url);
    }

    // Media inputs: read and probed into the folder of the task each node will become.
    std::vector<std::string> kept;  // task ids whose input folders hold files
    const auto discard = [&] {
        for (const auto& id : kept) app.inputs->Discard(id);
    };
    if (app.inputs != nullptr) {
        for (auto& p : planned) {
            if (p.media.empty()) continue;
            const auto* info = app.catalog->FindModel(p.model);
            assets::PrepareRequest prepare;
            prepare.task_id = p.task_id;
            prepare.org_id = who.org_id;
            prepare.input = std::move(p.input);
            prepare.media = p.media;
            prepare.field_limits = info != nullptr
                                       ? info->CapabilitiesFor(p.endpoint).value("inputs", json())
                                       : json();
            assets::Prepared prepared = co_await app.inputs->Prepare(std::move(prepare));
            if (!prepared.issues.empty()) {
                discard();
                co_return http::Response::Error(
                    ApiError::InvalidRequest("Invalid asset", std::move(prepared.issues)),
                    app.doc_url);
            }
            p.input = std::move(prepared.input);
            kept.push_back(p.task_id);
        }
    }

    json plan_nodes = json::array();
    store::NewInvocation inv;
    inv.id = NewUuid();
    inv.org_id = who.org_id;
    inv.version_id = version->id;
    for (const auto& p : planned) {
        const TierLimits limits = LimitsFor(*app.catalog, who.tier, p.model);
        const auto* info = app.catalog->FindModel(p.model);
        plan_nodes.push_back({{"id", p.id},
                              {"name", p.name},
                              {"endpoint", p.endpoint},
                              {"model", p.model},
                              {"taskId", p.task_id},
                              {"input", p.input},
                              {"feeds", p.feeds},
                              {"limitKey", info != nullptr ? info->concurrency_group : p.model},
                              {"maxConcurrent", limits.max_concurrent},
                              {"maxDaily", limits.max_daily},
                              {"maxSpend", limits.max_spend_credits}});
        inv.nodes.push_back({p.id, p.name, static_cast<int>(p.position), p.task_id});
    }
    inv.plan_json = json{{"nodes", std::move(plan_nodes)}}.dump();
    inv.overrides_json = overrides.dump();
    std::exception_ptr failure;
    try {
        co_await app.workflows.repo->CreateInvocation(inv);
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure) {
        discard();
        std::rethrow_exception(failure);
    }
    if (app.workflows.kick) app.workflows.kick();
    co_return http::Response::Json(200, {{"id", inv.id}});
}

asio::awaitable<http::Response> GetWorkflowInvocation(App& app, http::Request& req,
                                                      const auth::Principal& who) {
    const auto inv =
        co_await app.workflows.repo->GetInvocation(who.org_id, LowerUuid(req.params["id"]));
    if (!inv) co_return NotFound(app, "Workflow invocation not found");
    const std::string_view status = store::InvocationStatusName(inv->status);
    json out = {
        {"id", inv->id}, {"createdAt", FormatTimestamp(inv->created_at)}, {"status", status}};
    if (inv->status == store::InvocationStatus::kPending ||
        inv->status == store::InvocationStatus::kCancelled) {
        co_return http::Response::Json(200, out);
    }
    json output = json::object();
    json errors = json::object();
    for (const auto& node : inv->nodes) {
        if (node.status == store::NodeStatus::kSucceeded) {
            json urls = json::array();
            for (const auto& name : node.outputs) {
                urls.push_back(app.signer.Url(node.task_id, name, app.output_url_ttl_seconds));
            }
            output[node.node_id] = std::move(urls);
        } else if (node.status == store::NodeStatus::kFailed ||
                   node.status == store::NodeStatus::kSkipped) {
            errors[node.node_id] = {{"message", node.error}, {"nodeName", node.name}};
        }
    }
    if (inv->status == store::InvocationStatus::kRunning) {
        out["progress"] = inv->progress;
        out["output"] = std::move(output);
    } else if (inv->status == store::InvocationStatus::kSucceeded) {
        out["output"] = std::move(output);
    } else {
        out["failure"] = inv->failure.value_or("The workflow failed.");
        if (inv->failure_code) out["failureCode"] = *inv->failure_code;
    }
    if (!errors.empty()) out["nodeErrors"] = std::move(errors);
    co_return http::Response::Json(200, out);
}

}  // namespace

void RegisterWorkflowRoutes(Bindings& b) {
    b.Authed("publishWorkflow", PublishWorkflow);              // POST /_genhost/workflows
    b.Authed("listWorkflows", ListWorkflows);                  // GET /v1/workflows
    b.Authed("getWorkflow", GetWorkflow);                      // GET /v1/workflows/{id}
    b.Authed("runWorkflow", RunWorkflow);                      // POST /v1/workflows/{id}
    b.Authed("getWorkflowInvocation", GetWorkflowInvocation);  // GET /v1/workflow_invocations/{id}
}

}  // namespace genhost::api
