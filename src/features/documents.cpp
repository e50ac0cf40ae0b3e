// The documents feature (docs/documents.md): knowledge documents, indexed on the runtime's jobs
// lane.
#include "genhost/api/documents_routes.hpp"
#include "genhost/features/node.hpp"
#include "genhost/store/documents_repo.hpp"
#include "genhost/tasks/document_indexer.hpp"
#include "genhost/tasks/job_kinds.hpp"

namespace genhost::features {

void WireDocuments(Node& node) {
    auto& repo = node.Own<store::DocumentRepo>(node.db());
    auto& indexer = node.Own<tasks::DocumentIndexer>(repo);
    node.runtime().AddKind(kJobsLane, tasks::kDocumentJobKind, indexer.Kind());
    node.app().documents.repo = &repo;
    node.app().documents.kick = node.runtime().Kicker(kJobsLane);
    node.Routes(api::RegisterDocumentRoutes);
}

}  // namespace genhost::features
