// The avatars feature (docs/avatars.md): custom avatars, processed on the runtime's jobs lane.
#include "genhost/api/avatars_routes.hpp"
#include "genhost/features/node.hpp"
#include "genhost/store/avatars_repo.hpp"
#include "genhost/tasks/avatar_processor.hpp"
#include "genhost/tasks/job_kinds.hpp"

namespace genhost::features {

void WireAvatars(Node& node) {
    auto& repo = node.Own<store::AvatarRepo>(node.db());
    tasks::AvatarProcessorOptions o;
    o.scratch_root = node.scratch_root();
    auto& processor = node.Own<tasks::AvatarProcessor>(
        o, repo, node.outputs(), node.Need(node.inputs, "the media inputs (uploads)"));
    node.runtime().AddKind(kJobsLane, tasks::kAvatarJobKind, processor.Kind());
    node.app().avatars.repo = &repo;
    node.app().avatars.kick = node.runtime().Kicker(kJobsLane);
    node.Routes(api::RegisterAvatarRoutes);
}

}  // namespace genhost::features
