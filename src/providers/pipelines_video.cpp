// Video generation pipelines of the builtin provider: text_to_video, image_to_video,
// video_to_video.
#include "pipelines.hpp"

namespace genhost::providers {

std::vector<Output> TextToVideo(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

std::vector<Output> ImageToVideo(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

std::vector<Output> VideoToVideo(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

}  // namespace genhost::providers
