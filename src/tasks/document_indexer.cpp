#include "genhost/tasks/document_indexer.hpp"

#include "genhost/knowledge/chunker.hpp"

#include <spdlog/spdlog.h>

namespace genhost::tasks {

bool DocumentIndexer::IndexSync(const std::string& id, std::int64_t revision) {
    const auto doc = repo_.LoadForIndexSync(id, revision);
    if (!doc) return false;
    std::vector<store::IndexedChunk> chunks;
    for (auto& c : knowledge::ChunkDocument(doc->content)) {
        chunks.push_back({std::move(c.heading), std::move(c.text), c.start});
    }
    const auto words = knowledge::Words(doc->content);
    const bool stored = repo_.StoreIndexSync(id, revision, chunks, words);
    if (stored) {
        spdlog::debug("document {} revision {}: indexed {} chunks, {} words", id, revision,
                      chunks.size(), words.size());
    }
    return stored;
}

JobKind DocumentIndexer::Kind() {
    JobKind kind;
    kind.run = [this](const store::JobClaim& job, const std::atomic<bool>&) {
        IndexSync(job.subject, job.revision);  // false: deleted or changed, nothing to do
        return JobResult::Done();
    };
    kind.failed = [](const store::JobClaim& job, const std::string& reason) {
        // The document keeps its previous chunks (indexed_revision says which); the next change
        // of its content queues a new job.
        spdlog::error("document {} revision {}: indexing failed for good: {}", job.subject,
                      job.revision, reason);
    };
    return kind;
}

}  // namespace genhost::tasks
