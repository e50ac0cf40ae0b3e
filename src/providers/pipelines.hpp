// The builtin provider's pipelines, one function per endpoint, grouped in one file per family:
// pipelines_image.cpp (text_to_image, image_upscale), pipelines_video.cpp (text_to_video,
// image_to_video, video_to_video), pipelines_edit.cpp (video_upscale, video_to_hdr,
// character_performance, avatar_videos), pipelines_audio.cpp (text_to_speech,
// speech_to_speech, sound_effect, voice_isolation, voice_dubbing), pipelines_recipes.cpp (the seven
// recipes). Private to src/providers.
//
// A pipeline reads the validated input (defaults applied) from ctx.input(), materialises media
// inputs with ctx.Input(...), reports progress, checks ctx.CheckCancelled() often (at least every
// ~50 ms of work), and returns its outputs: small ones as bytes, media as files written in
// ctx.scratch_dir(). Expected failures throw TaskFailure; everything is deterministic for a
// given seed (SeedFor) and input.
#pragma once

#include "genhost/providers/builtin.hpp"

namespace genhost::providers {

using PipelineEnv = BuiltinProvider::Env;

// SimulateLatency spends the model's typical latency (catalog × latency scale) moving progress
// from `from` to `to`, honouring cancellation; returns at once when the scale is 0.
void SimulateLatency(const PipelineEnv& env, TaskContext& ctx, double from, double to);

// NotImplemented ends the task FAILED (INTERNAL) naming the endpoint and model.
[[noreturn]] void NotImplemented(const TaskContext& ctx);

std::vector<Output> TextToImage(const PipelineEnv& env, TaskContext& ctx);
std::vector<Output> ImageUpscale(const PipelineEnv& env, TaskContext& ctx);

std::vector<Output> TextToVideo(const PipelineEnv& env, TaskContext& ctx);
std::vector<Output> ImageToVideo(const PipelineEnv& env, TaskContext& ctx);
std::vector<Output> VideoToVideo(const PipelineEnv& env, TaskContext& ctx);

std::vector<Output> VideoUpscale(const PipelineEnv& env, TaskContext& ctx);
std::vector<Output> VideoToHdr(const PipelineEnv& env, TaskContext& ctx);
std::vector<Output> CharacterPerformance(const PipelineEnv& env, TaskContext& ctx);
std::vector<Output> AvatarVideos(const PipelineEnv& env, TaskContext& ctx);

std::vector<Output> TextToSpeech(const PipelineEnv& env, TaskContext& ctx);
std::vector<Output> SpeechToSpeech(const PipelineEnv& env, TaskContext& ctx);
std::vector<Output> SoundEffect(const PipelineEnv& env, TaskContext& ctx);
std::vector<Output> VoiceIsolation(const PipelineEnv& env, TaskContext& ctx);
std::vector<Output> VoiceDubbing(const PipelineEnv& env, TaskContext& ctx);

// Recipe runs the recipe of ctx.endpoint() (recipe_product_ad, ...): pipelines_recipes.cpp,
// each a multi-step pipeline over the pipelines above (docs/recipes.md).
std::vector<Output> Recipe(const PipelineEnv& env, TaskContext& ctx);

}  // namespace genhost::providers
