// /v1/documents: knowledge documents (docs/documents.md), and the search extra
// GET /_genhost/documents/search.
//
// POST validates the body (schemas/documents.json) and stores the document; GET reads one (with
// its content) or lists them (without, by creation or update time, either order, keyset pages);
// PATCH changes the name or content (schemas/documents_update.json) and answers 204; DELETE
// removes the document and takes it off every avatar that used it. `usedBy` is computed from the
// avatars' documentIds on every read. A new content is indexed by the job engine's `document`
// job (tasks/document_indexer.hpp) moments later; the search extra ranks the indexed chunks.
#include "genhost/api/documents_routes.hpp"
#include "genhost/api/page.hpp"
#include "handlers.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/tasks/avatar_processor.hpp"

namespace genhost::api {

namespace asio = boost::asio;

namespace {

constexpr int kDefaultSearchHits = 5;

// The request bodies (schemas/documents.json, documents_update.json), decoded.
struct NewDocumentBody {
    std::string name;
    std::string content;
};
void from_json(const nlohmann::json& j, NewDocumentBody& b) {
    j.at("name").get_to(b.name);
    j.at("content").get_to(b.content);
}
struct DocumentChangeBody {
    std::optional<std::string> name;
    std::optional<std::string> content;
};
void from_json(const nlohmann::json& j, DocumentChangeBody& b) {
    OptionalField(j, "name", b.name);
    OptionalField(j, "content", b.content);
}

nlohmann::json DocumentJson(const App& app, const store::DocumentRecord& d) {
    nlohmann::json used_by = nlohmann::json::array();
    for (const auto& u : d.used_by) {
        used_by.push_back(
            {{"id", u.id},
             {"name", u.name},
             {"imageUrl", u.has_previews ? nlohmann::json(app.signer.Url(
                                               tasks::AvatarFolder(u.id), "processed.jpg",
                                               app.output_url_ttl_seconds))
                                         : nlohmann::json(nullptr)}});
    }
    nlohmann::json out = {{"id", d.id},
                          {"name", d.name},
                          {"type", d.type},
                          {"usedBy", std::move(used_by)},
                          {"createdAt", FormatTimestamp(d.created_at)},
                          {"updatedAt", FormatTimestamp(d.updated_at)}};
    if (d.content) out["content"] = *d.content;
    return out;
}

http::Response NotFound(const App& app) {
    return http::Response::Error(ApiError::NotFound("Document not found"), app.doc_url);
}

void Kick(App& app) {
    if (app.documents.kick) app.documents.kick();
}

asio::awaitable<http::Response> CreateDocument(App& app, http::Request& req,
                                               const auth::Principal& who) {
    auto body = co_await DecodedBody<NewDocumentBody>(app, std::move(req.body), "documents", true);
    if (!body) co_return http::Response::Error(body.error(), app.doc_url);
    const auto created = co_await app.documents.repo->Create(
        NewUuid(), who.org_id, std::move(body->name), std::move(body->content));
    Kick(app);
    co_return http::Response::Json(200, DocumentJson(app, created));
}

asio::awaitable<http::Response> GetDocument(App& app, http::Request& req,
                                            const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    const auto doc = co_await app.documents.repo->Get(who.org_id, id);
    if (!doc) co_return NotFound(app);
    co_return http::Response::Json(200, DocumentJson(app, *doc));
}

asio::awaitable<http::Response> ListDocuments(App& app, http::Request& req,
                                              const auth::Principal& who) {
    // `sort` and `order` were checked against the operation's declaration (CheckQuery).
    const auto query = ParsePageQuery(req);
    if (!query) co_return http::Response::Error(query.error(), app.doc_url);
    store::DocumentOrder order;
    if (req.QueryParam("sort").value_or("createdAt") == "updatedAt") {
        order.by = store::DocumentOrder::By::kUpdatedAt;
    }
    order.ascending = req.QueryParam("order").value_or("desc") == "asc";
    const auto page =
        co_await app.documents.repo->List(who.org_id, order, query->limit, query->after);
    nlohmann::json data = nlohmann::json::array();
    for (const auto& d : page.documents) data.push_back(DocumentJson(app, d));
    std::optional<store::Keyset> next;
    if (page.more && !page.documents.empty()) {
        const auto& last = page.documents.back();
        next = store::Keyset{
            order.by == store::DocumentOrder::By::kCreatedAt ? last.created_at : last.updated_at,
            last.id};
    }
    co_return http::Response::Json(200, PageJson(std::move(data), next));
}

asio::awaitable<http::Response> UpdateDocument(App& app, http::Request& req,
                                               const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    auto body = co_await DecodedBody<DocumentChangeBody>(app, std::move(req.body),
                                                         "documents_update", false);
    if (!body) co_return http::Response::Error(body.error(), app.doc_url);
    const bool found = co_await app.documents.repo->Update(who.org_id, id, std::move(body->name),
                                                           std::move(body->content));
    if (!found) co_return NotFound(app);
    Kick(app);
    co_return http::Response::NoContent();
}

asio::awaitable<http::Response> DeleteDocument(App& app, http::Request& req,
                                               const auth::Principal& who) {
    // (No temporaries in a co_await of a condition: GCC 12 miscompiles them.)
    const std::string id = LowerUuid(req.params["id"]);
    const bool found = co_await app.documents.repo->Delete(who.org_id, id);
    if (!found) co_return NotFound(app);
    co_return http::Response::NoContent();
}

// GET /_genhost/documents/search (a genhost extra): `q`, `avatarId`, `documentId`s and `limit`
// were checked against the operation's declaration (CheckQuery).
asio::awaitable<http::Response> SearchDocuments(App& app, http::Request& req,
                                                const auth::Principal& who) {
    const std::string q = req.QueryParam("q").value_or("");
    int limit = kDefaultSearchHits;
    if (const auto text = req.QueryParam("limit")) limit = std::stoi(*text);
    std::optional<std::vector<std::string>> ids;
    if (const auto avatar_id = req.QueryParam("avatarId")) {
        const std::string avatar_lower = LowerUuid(*avatar_id);
        const auto avatar = co_await app.avatars.repo->Get(who.org_id, avatar_lower);
        if (!avatar) {
            co_return http::Response::Error(ApiError::NotFound("Avatar not found"), app.doc_url);
        }
        ids = avatar->document_ids;
    }
    const auto named = req.QueryParams("documentId");
    if (!named.empty()) {
        std::vector<std::string> lower;
        for (const auto& n : named) lower.push_back(LowerUuid(n));
        const auto missing = co_await app.documents.repo->Missing(who.org_id, lower);
        if (!missing.empty()) {
            std::vector<Issue> issues;
            for (const std::size_t i : missing) {
                issues.push_back(
                    {"custom", {"documentId", std::to_string(i)}, "Document not found"});
            }
            co_return http::Response::Error(
                ApiError::InvalidRequest("Invalid request", std::move(issues)), app.doc_url);
        }
        if (ids) {
            // Both: the avatar's documents among those named.
            std::vector<std::string> both;
            for (const auto& id : lower) {
                if (std::find(ids->begin(), ids->end(), id) != ids->end()) both.push_back(id);
            }
            ids = std::move(both);
        } else {
            ids = std::move(lower);
        }
    }
    store::SearchResult result;
    if (!ids || !ids->empty()) {
        result = co_await app.documents.repo->Search(who.org_id, ids, q, limit);
    }
    nlohmann::json data = nlohmann::json::array();
    for (const auto& h : result.hits) {
        data.push_back({{"documentId", h.document_id},
                        {"documentName", h.document_name},
                        {"chunk", h.chunk},
                        {"heading", h.heading},
                        {"text", h.text},
                        {"offset", h.start},
                        {"score", h.score}});
    }
    co_return http::Response::Json(200, {{"query", q},
                                         {"strategy", result.strategy},
                                         {"indexing", result.indexing},
                                         {"data", std::move(data)}});
}

}  // namespace

void RegisterDocumentRoutes(Bindings& b) {
    b.Authed("listDocuments", ListDocuments);
    b.Authed("createDocument", CreateDocument);
    b.Authed("getDocument", GetDocument);
    b.Authed("updateDocument", UpdateDocument);
    b.Authed("deleteDocument", DeleteDocument);
    b.Authed("searchDocuments", SearchDocuments);
}

}  // namespace genhost::api
