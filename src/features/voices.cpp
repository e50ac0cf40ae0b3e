// The voices feature (docs/voices.md): custom voices, analysed and previewed on the runtime's
// jobs lane, and their previews' expiry.
#include "genhost/api/voices_routes.hpp"
#include "genhost/features/node.hpp"
#include "genhost/store/voices_repo.hpp"
#include "genhost/tasks/job_kinds.hpp"
#include "genhost/tasks/voice_processor.hpp"

namespace genhost::features {

void WireVoices(Node& node) {
    auto& repo = node.Own<store::VoiceRepo>(node.db());
    tasks::VoiceProcessorOptions o;
    o.scratch_root = node.scratch_root();
    auto& processor = node.Own<tasks::VoiceProcessor>(
        o, repo, node.outputs(), node.Need(node.inputs, "the media inputs (uploads)"));
    node.runtime().AddKind(kJobsLane, tasks::kVoiceJobKind, processor.Kind());
    node.runtime().AddKind(kJobsLane, tasks::kOutputExpiryJobKind, processor.ExpiryKind());
    node.app().voices.repo = &repo;
    node.app().voices.kick = node.runtime().Kicker(kJobsLane);
    node.Routes(api::RegisterVoiceRoutes);
}

}  // namespace genhost::features
