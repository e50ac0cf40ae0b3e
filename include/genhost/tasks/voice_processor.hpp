// genhost/tasks/voice_processor.hpp
//
// Provides VoiceProcessor, the `voice` job kind of the job engine (job_engine.hpp): it makes one
// revision of a custom voice READY or FAILED (docs/voices.md).
// - Cloned (`from.type` audio): the stored sample (or the URL a request left for a worker) is
//   decoded and analysed (media::AnalyzeVoiceSample); the measured profile
//   (media::ProfileFromAnalysis) is the voice. A sample without speech, too short or too long
//   ends the voice FAILED with the analysis's reason.
// - Designed (`from.type` text): the description's profile (media::DesignVoiceProfile).
// Either way the preview sentence is spoken in the new voice and kept as
// `voice-<id>/preview.mp3` in the output store, then the voice is READY with its profile.
// Also provides the `output_expiry` job kind (deletes an output-store folder when due) and
// VoicePreview, the MP3 of POST /v1/voices/preview.
#pragma once

#include "genhost/media/voice_profile.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/providers/provider.hpp"
#include "genhost/store/voices_repo.hpp"
#include "genhost/tasks/job_engine.hpp"
#include "genhost/tasks/job_kinds.hpp"

#include <string>

namespace genhost::tasks {

// What a preview says.
inline constexpr const char* kVoicePreviewText =
    "Hello! This is how I sound. I can read your scripts, answer your customers, and tell a "
    "story, all in this voice.";

// VoiceFolder is the output-store folder of voice `id`: its sample and preview.mp3.
std::string VoiceFolder(std::string_view id);

// VoiceSampleMaxBytes bounds a stored sample (a 16 MB data URI decodes to 12 MB; a URL or an
// upload may be larger, up to this).
inline constexpr std::uint64_t kVoiceSampleMaxBytes = 200ull * 1024 * 1024;

// VoicePreviewMp3 speaks kVoicePreviewText in `profile`'s voice: MP3 bytes (44.1 kHz mono,
// 128 kb/s) and their length in seconds. Blocking (espeak-ng and FFmpeg).
std::string VoicePreviewMp3(const media::VoiceProfile& profile, double& seconds,
                            const std::function<bool()>& keep_going = {});

struct VoiceProcessorOptions {
    std::string scratch_root;  // private folders for samples
};

class VoiceProcessor {
  public:
    // `fetch` reads a URL a request left for later (offline fetching) into a scratch folder.
    VoiceProcessor(VoiceProcessorOptions options, store::VoiceRepo& repo,
                   outputs::OutputStore& outputs, const providers::InputResolver& fetch);

    // Kind is the `voice` job kind; ExpiryKind the `output_expiry` one.
    JobKind Kind();
    JobKind ExpiryKind();

    // ProcessSync works on `work` and ends it READY or FAILED; false when the voice changed or
    // went meanwhile (nothing to do).
    bool ProcessSync(const store::VoiceWork& work, const std::atomic<bool>* lease_lost = nullptr);

  private:
    VoiceProcessorOptions options_;
    store::VoiceRepo& repo_;
    outputs::OutputStore& outputs_;
    const providers::InputResolver& fetch_;
};

}  // namespace genhost::tasks
