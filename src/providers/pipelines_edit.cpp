// Video processing pipelines of the builtin provider: video_upscale, video_to_hdr,
// character_performance, avatar_videos.
#include "pipelines.hpp"

namespace genhost::providers {

std::vector<Output> VideoUpscale(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

std::vector<Output> VideoToHdr(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

std::vector<Output> CharacterPerformance(const PipelineEnv&, TaskContext& ctx) {
    NotImplemented(ctx);
}

std::vector<Output> AvatarVideos(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

}  // namespace genhost::providers
