// genhost/store/documents_repo.hpp
//
// Provides DocumentRepo: the knowledge documents of migrations/0008_documents.sql and their
// retrieval index. The API creates, reads, lists, updates and deletes documents (awaitable
// methods); every write that changes a document's content queues a job of kind `document` for
// its new revision in the same transaction, which any node's job engine runs: it cuts the content
// into chunks (knowledge/chunker.hpp) and stores them (*Sync methods). Search ranks the chunks of
// an organization's documents for a query. Every read and change is scoped to an organization: a
// foreign id is not found.
//
// Errors: DatabaseUnavailable when the database is unreachable; std::runtime_error for
// unexpected SQL failures. Ids that are not UUIDs are reported as not found, never sent to SQL.
#pragma once

#include "genhost/core/clock.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/keyset.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

// DocumentUser is an avatar that uses a document.
struct DocumentUser {
    std::string id;
    std::string name;
    bool has_previews = false;  // its processed picture exists (the API's imageUrl)
};

// DocumentRecord is a document as the API shows it; `content` only from Create and Get.
struct DocumentRecord {
    std::string id;
    std::string org_id;
    std::string name;
    std::string type;  // "text"
    std::optional<std::string> content;
    std::vector<DocumentUser> used_by;  // oldest avatar first
    std::int64_t revision = 1;
    std::int64_t indexed_revision = 0;  // the revision the index holds (0: none yet)
    SysTime created_at;
    SysTime updated_at;
};

// DocumentOrder is how List orders: by creation or last update, newest or oldest first.
struct DocumentOrder {
    enum class By { kCreatedAt, kUpdatedAt } by = By::kCreatedAt;
    bool ascending = false;
};

struct DocumentPage {
    std::vector<DocumentRecord> documents;
    bool more = false;  // another page follows the last document
};

// DocumentToIndex is what indexing one revision needs.
struct DocumentToIndex {
    std::string org_id;
    std::string content;
};

// IndexedChunk is one chunk to store (knowledge::Chunk, with its place in the document).
struct IndexedChunk {
    std::string heading;
    std::string text;
    std::size_t start = 0;
};

// SearchHit is one ranked chunk.
struct SearchHit {
    std::string document_id;
    std::string document_name;
    int chunk = 0;  // its index among the document's chunks
    std::string heading;
    std::string text;
    std::size_t start = 0;
    double score = 0;
};

// SearchResult is what Search found, and how: "websearch" (every word, or the phrase and
// operators of a web search query), "any_word" (some of the words), "similar_words" (words of the
// documents that look like the query's, for misspellings), or "none".
struct SearchResult {
    std::string strategy = "none";
    std::vector<SearchHit> hits;
    bool indexing = false;  // some searched document has a revision not indexed yet
};

class DocumentRepo {
  public:
    // Registers the repository's statements with `db` (Prepare), at any time.
    explicit DocumentRepo(Database& db) : db_(db) { Prepare(db); }

    static void Prepare(Database& db);

    // Create stores a document (committed before it returns; its indexing queued) and returns it
    // with its content.
    boost::asio::awaitable<DocumentRecord> Create(std::string id, std::string org_id,
                                                  std::string name, std::string content);

    // Get returns document `id` of `org_id` with its content, or nullopt.
    boost::asio::awaitable<std::optional<DocumentRecord>> Get(std::string org_id, std::string id);

    // List returns up to `limit` documents of `org_id` (without content) in `order`, after
    // `after` (the ordering time and id of the previous page's last document).
    boost::asio::awaitable<DocumentPage> List(std::string org_id, DocumentOrder order, int limit,
                                              std::optional<Keyset> after);

    // Update changes the name and/or the content of document `id` of `org_id`; a content that
    // differs from the stored one starts a new revision (and queues its indexing). False when
    // there is no such document.
    boost::asio::awaitable<bool> Update(std::string org_id, std::string id,
                                        std::optional<std::string> name,
                                        std::optional<std::string> content);

    // Delete removes document `id` of `org_id` and removes it from every avatar that used it, in
    // one transaction; false if there was none.
    boost::asio::awaitable<bool> Delete(std::string org_id, std::string id);

    // Missing returns the positions in `ids` of those that are not documents of `org_id`.
    boost::asio::awaitable<std::vector<std::size_t>> Missing(std::string org_id,
                                                             std::vector<std::string> ids);

    // Search ranks the chunks of `org_id`'s documents for `query`: of the documents `ids` when
    // given, else of all. Up to `limit` hits, best first (ties by document and chunk order).
    boost::asio::awaitable<SearchResult> Search(std::string org_id,
                                                std::optional<std::vector<std::string>> ids,
                                                std::string query, int limit);
    // SearchSync is Search for a worker thread (a realtime session's runtime).
    SearchResult SearchSync(const std::string& org_id,
                            const std::optional<std::vector<std::string>>& ids,
                            const std::string& query, int limit);

    // LoadForIndexSync returns revision `revision` of document `id`, or nullopt when the document
    // is gone or at another revision.
    std::optional<DocumentToIndex> LoadForIndexSync(const std::string& id, std::int64_t revision);

    // StoreIndexSync replaces the chunks of document `id` with `chunks` and adds `words` to its
    // organization's vocabulary, if the document is still at `revision` (compare-and-set);
    // false, changing nothing, otherwise.
    bool StoreIndexSync(const std::string& id, std::int64_t revision,
                        const std::vector<IndexedChunk>& chunks,
                        const std::vector<std::string>& words);

  private:
    Database& db_;
};

}  // namespace genhost::store
