// Audio pipelines of the builtin provider: text_to_speech, speech_to_speech, sound_effect,
// voice_isolation, voice_dubbing.
#include "pipelines.hpp"

namespace genhost::providers {

std::vector<Output> TextToSpeech(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

std::vector<Output> SpeechToSpeech(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

std::vector<Output> SoundEffect(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

std::vector<Output> VoiceIsolation(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

std::vector<Output> VoiceDubbing(const PipelineEnv&, TaskContext& ctx) { NotImplemented(ctx); }

}  // namespace genhost::providers
