// genhost/tasks/document_indexer.hpp
//
// Provides DocumentIndexer, the `document` job kind of the job engine (job_engine.hpp): it
// indexes one revision of a knowledge document for retrieval. The content is cut into chunks
// (knowledge/chunker.hpp) and stored with their full-text vectors, and the document's words join
// its organization's vocabulary (store::DocumentRepo::StoreIndexSync). A revision replaced or a
// document deleted meanwhile is left alone: the newer revision has a job of its own.
#pragma once

#include "genhost/store/documents_repo.hpp"
#include "genhost/tasks/job_engine.hpp"
#include "genhost/tasks/job_kinds.hpp"

namespace genhost::tasks {

class DocumentIndexer {
  public:
    explicit DocumentIndexer(store::DocumentRepo& repo) : repo_(repo) {}

    // Kind is the `document` job kind to register with the engine.
    JobKind Kind();

    // IndexSync indexes revision `revision` of document `id` now; false when the document is
    // gone or at another revision.
    bool IndexSync(const std::string& id, std::int64_t revision);

  private:
    store::DocumentRepo& repo_;
};

}  // namespace genhost::tasks
