#include "genhost/store/documents_repo.hpp"

#include "keyset_page.hpp"

#include "genhost/core/ids.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace genhost::store {

namespace {

// Times travel as microseconds since the epoch; usedBy as JSON (oldest avatar first).
constexpr const char* kColumns =
    "d.id::text, d.org_id::text, d.name, d.type, d.revision, d.indexed_revision,"
    " (extract(epoch FROM d.created_at) * 1000000)::bigint,"
    " (extract(epoch FROM d.updated_at) * 1000000)::bigint,"
    " coalesce((SELECT json_agg(json_build_array(a.id::text, a.name, a.has_previews)"
    " ORDER BY a.created_at, a.id) FROM avatars a"
    " WHERE a.org_id = d.org_id AND a.document_ids @> ARRAY[d.id]), '[]')::text";

constexpr const char* kInsert = "documents_insert";
const std::string kInsertSql = std::string(
                                   "WITH d AS (INSERT INTO documents (id, org_id, name, content)"
                                   " VALUES ($1, $2, $3, $4) RETURNING *) SELECT ") +
                               kColumns + ", d.content FROM d";
constexpr const char* kGet = "documents_get";
const std::string kGetSql = std::string("SELECT ") + kColumns +
                            ", d.content FROM documents d WHERE d.id = $1 AND d.org_id = $2";

// The four orders of GET /v1/documents.
KeysetList ListOf(const DocumentOrder& o) {
    const bool created = o.by == DocumentOrder::By::kCreatedAt;
    return {std::string("documents_list_") + (created ? "created" : "updated") +
                (o.ascending ? "_asc" : "_desc"),
            std::string("SELECT ") + kColumns + " FROM documents d WHERE d.org_id = $1",
            created ? "d.created_at" : "d.updated_at", "d.id", o.ascending};
}

// A new content is a new revision (its indexing is queued by the trigger); a name alone is not.
constexpr const char* kUpdate = "documents_update";
constexpr const char* kUpdateSql =
    "UPDATE documents SET name = CASE WHEN $3 THEN $4 ELSE name END,"
    " content = CASE WHEN $5 THEN $6 ELSE content END,"
    " revision = CASE WHEN $5 AND content IS DISTINCT FROM $6 THEN revision + 1 ELSE revision END,"
    " updated_at = clock_timestamp()"
    " WHERE id = $1 AND org_id = $2 RETURNING id";
// Deleting takes the document first: an avatar being stored with it meanwhile waits for its
// key-share lock on the row and then finds it gone (avatars_repo.cpp); the avatars that already
// use it lose it in the same transaction.
constexpr const char* kDelete = "documents_delete";
constexpr const char* kDeleteSql =
    "DELETE FROM documents WHERE id = $1 AND org_id = $2 RETURNING id";
constexpr const char* kDetach = "documents_detach";
constexpr const char* kDetachSql =
    "UPDATE avatars SET document_ids = array_remove(document_ids, $1::uuid),"
    " updated_at = clock_timestamp()"
    " WHERE org_id = $2 AND document_ids @> ARRAY[$1::uuid]";
constexpr const char* kMissing = "documents_missing";
constexpr const char* kMissingSql =
    "SELECT (x.i - 1)::int FROM unnest($2::uuid[]) WITH ORDINALITY AS x(id, i)"
    " WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = x.id AND d.org_id = $1)"
    " ORDER BY x.i";
constexpr const char* kSearch = "documents_search";
constexpr const char* kSearchSql =
    "SELECT strategy, document_id::text, document_name, ord, heading, body, start_offset, score"
    " FROM genhost_search_documents($1, $2::uuid[], $3, $4)";
constexpr const char* kPending = "documents_pending_index";
constexpr const char* kPendingSql =
    "SELECT EXISTS (SELECT 1 FROM documents WHERE org_id = $1"
    " AND ($2::uuid[] IS NULL OR id = ANY ($2::uuid[])) AND indexed_revision < revision)";
constexpr const char* kLoad = "documents_load_for_index";
constexpr const char* kLoadSql =
    "SELECT org_id::text, content FROM documents WHERE id = $1 AND revision = $2";
constexpr const char* kLock = "documents_lock_revision";
constexpr const char* kLockSql =
    "SELECT org_id::text FROM documents WHERE id = $1 AND revision = $2 FOR UPDATE";
constexpr const char* kClearChunks = "documents_clear_chunks";
constexpr const char* kClearChunksSql = "DELETE FROM document_chunks WHERE document_id = $1";
// The chunks come as one JSON array of {o, h, b, s}: order, heading, text, byte offset.
constexpr const char* kInsertChunks = "documents_insert_chunks";
constexpr const char* kInsertChunksSql =
    "INSERT INTO document_chunks (document_id, ord, org_id, heading, body, start_offset, tsv)"
    " SELECT $1, x.o, $2, x.h, x.b, x.s,"
    " setweight(to_tsvector('english', x.h), 'A') || setweight(to_tsvector('english', x.b), 'B')"
    " FROM jsonb_to_recordset($3::jsonb) AS x(o integer, h text, b text, s integer)";
constexpr const char* kInsertWords = "documents_insert_words";
constexpr const char* kInsertWordsSql =
    "INSERT INTO document_words (org_id, word)"
    " SELECT $1, w FROM jsonb_array_elements_text($2::jsonb) w ON CONFLICT DO NOTHING";
constexpr const char* kIndexed = "documents_indexed";
constexpr const char* kIndexedSql = "UPDATE documents SET indexed_revision = $2 WHERE id = $1";

DocumentRecord ReadDocument(const pqxx::row& r, bool with_content) {
    DocumentRecord d;
    d.id = r[0].as<std::string>();
    d.org_id = r[1].as<std::string>();
    d.name = r[2].as<std::string>();
    d.type = r[3].as<std::string>();
    d.revision = r[4].as<std::int64_t>();
    d.indexed_revision = r[5].as<std::int64_t>();
    d.created_at = FromEpochMicros(r[6].as<long long>());
    d.updated_at = FromEpochMicros(r[7].as<long long>());
    for (const auto& u : nlohmann::json::parse(r[8].as<std::string>())) {
        d.used_by.push_back(
            {u.at(0).get<std::string>(), u.at(1).get<std::string>(), u.at(2).get<bool>()});
    }
    if (with_content) d.content = r[9].as<std::string>();
    return d;
}

std::string Dump(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void DocumentRepo::Prepare(Database& db) {
    db.Prepare(kInsert, kInsertSql);
    db.Prepare(kGet, kGetSql);
    for (const auto by : {DocumentOrder::By::kCreatedAt, DocumentOrder::By::kUpdatedAt}) {
        for (const bool ascending : {false, true}) {
            const DocumentOrder order{by, ascending};
            ListOf(order).Prepare(db);
        }
    }
    db.Prepare(kUpdate, kUpdateSql);
    db.Prepare(kDelete, kDeleteSql);
    db.Prepare(kDetach, kDetachSql);
    db.Prepare(kMissing, kMissingSql);
    db.Prepare(kSearch, kSearchSql);
    db.Prepare(kPending, kPendingSql);
    db.Prepare(kLoad, kLoadSql);
    db.Prepare(kLock, kLockSql);
    db.Prepare(kClearChunks, kClearChunksSql);
    db.Prepare(kInsertChunks, kInsertChunksSql);
    db.Prepare(kInsertWords, kInsertWordsSql);
    db.Prepare(kIndexed, kIndexedSql);
}

boost::asio::awaitable<DocumentRecord> DocumentRepo::Create(std::string id, std::string org_id,
                                                            std::string name, std::string content) {
    DocumentRecord out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(kInsert, id, org_id, name, content);
        w.commit();
        out = ReadDocument(r[0], true);
    });
    co_return out;
}

boost::asio::awaitable<std::optional<DocumentRecord>> DocumentRepo::Get(std::string org_id,
                                                                        std::string id) {
    std::optional<DocumentRecord> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kGet, id, org_id);
        if (!r.empty()) out = ReadDocument(r[0], true);
    });
    co_return out;
}

boost::asio::awaitable<DocumentPage> DocumentRepo::List(std::string org_id, DocumentOrder order,
                                                        int limit, std::optional<Keyset> after) {
    DocumentPage page;
    if (!IsUuid(org_id) || limit < 1) co_return page;
    if (after && !IsUuid(after->id)) co_return page;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        page.more = ReadKeysetPage(
            n, ListOf(order), org_id, limit, after,
            [](const pqxx::row& row) { return ReadDocument(row, false); }, page.documents);
    });
    co_return page;
}

boost::asio::awaitable<bool> DocumentRepo::Update(std::string org_id, std::string id,
                                                  std::optional<std::string> name,
                                                  std::optional<std::string> content) {
    bool found = false;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return found;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(kUpdate, id, org_id, name.has_value(), name.value_or(""),
                                       content.has_value(), content.value_or(""));
        w.commit();
        found = !r.empty();
    });
    co_return found;
}

boost::asio::awaitable<bool> DocumentRepo::Delete(std::string org_id, std::string id) {
    bool found = false;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return found;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        found = !w.exec_prepared(kDelete, id, org_id).empty();
        if (found) w.exec_prepared(kDetach, id, org_id);
        w.commit();
    });
    co_return found;
}

boost::asio::awaitable<std::vector<std::size_t>> DocumentRepo::Missing(
    std::string org_id, std::vector<std::string> ids) {
    std::vector<std::size_t> missing;
    if (ids.empty()) co_return missing;
    std::vector<std::string> checked;  // ids that are not UUIDs are missing without asking
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (IsUuid(ids[i]) && IsUuid(org_id)) {
            checked.push_back(ids[i]);
            where.push_back(i);
        } else {
            missing.push_back(i);
        }
    }
    if (!checked.empty()) {
        co_await db_.Run([&](pqxx::connection_base& c) {
            pqxx::nontransaction n(c);
            for (const auto& row : n.exec_prepared(kMissing, org_id, UuidArray(checked))) {
                missing.push_back(where.at(row[0].as<std::size_t>()));
            }
        });
    }
    std::sort(missing.begin(), missing.end());
    co_return missing;
}

namespace {

// SearchOn runs the search on a connection of a database thread.
SearchResult SearchOn(pqxx::connection_base& c, const std::string& org_id,
                      const std::optional<std::vector<std::string>>& ids, const std::string& query,
                      int limit) {
    SearchResult out;
    pqxx::nontransaction n(c);
    // Whether an index is pending is asked first: a revision indexed between the two
    // statements is then searched, never reported as done yet missed.
    const auto pending = ids ? n.exec_prepared(kPending, org_id, UuidArray(*ids))
                             : n.exec_prepared(kPending, org_id, nullptr);
    out.indexing = pending[0][0].as<bool>();
    const auto r = ids ? n.exec_prepared(kSearch, org_id, UuidArray(*ids), query, limit)
                       : n.exec_prepared(kSearch, org_id, nullptr, query, limit);
    for (const auto& row : r) {
        out.strategy = row[0].as<std::string>();
        out.hits.push_back({row[1].as<std::string>(), row[2].as<std::string>(), row[3].as<int>(),
                            row[4].as<std::string>(), row[5].as<std::string>(),
                            row[6].as<std::size_t>(), row[7].as<double>()});
    }
    return out;
}

}  // namespace

boost::asio::awaitable<SearchResult> DocumentRepo::Search(
    std::string org_id, std::optional<std::vector<std::string>> ids, std::string query, int limit) {
    SearchResult out;
    if (!IsUuid(org_id) || limit < 1) co_return out;
    co_await db_.Run(
        [&](pqxx::connection_base& c) { out = SearchOn(c, org_id, ids, query, limit); });
    co_return out;
}

SearchResult DocumentRepo::SearchSync(const std::string& org_id,
                                      const std::optional<std::vector<std::string>>& ids,
                                      const std::string& query, int limit) {
    SearchResult out;
    if (!IsUuid(org_id) || limit < 1) return out;
    db_.RunSync([&](pqxx::connection_base& c) { out = SearchOn(c, org_id, ids, query, limit); });
    return out;
}

std::optional<DocumentToIndex> DocumentRepo::LoadForIndexSync(const std::string& id,
                                                              std::int64_t revision) {
    std::optional<DocumentToIndex> out;
    if (!IsUuid(id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kLoad, id, revision);
        if (!r.empty()) out = DocumentToIndex{r[0][0].as<std::string>(), r[0][1].as<std::string>()};
    });
    return out;
}

bool DocumentRepo::StoreIndexSync(const std::string& id, std::int64_t revision,
                                  const std::vector<IndexedChunk>& chunks,
                                  const std::vector<std::string>& words) {
    if (!IsUuid(id)) return false;
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        rows.push_back(
            {{"o", i}, {"h", chunks[i].heading}, {"b", chunks[i].text}, {"s", chunks[i].start}});
    }
    const std::string rows_json = Dump(rows);
    const std::string words_json = Dump(words);
    bool stored = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto locked = w.exec_prepared(kLock, id, revision);
        if (locked.empty()) return;  // deleted or changed meanwhile: its new revision is queued
        const std::string org_id = locked[0][0].as<std::string>();
        w.exec_prepared(kClearChunks, id);
        w.exec_prepared(kInsertChunks, id, org_id, rows_json);
        w.exec_prepared(kInsertWords, org_id, words_json);
        w.exec_prepared(kIndexed, id, revision);
        w.commit();
        stored = true;
    });
    return stored;
}

}  // namespace genhost::store
