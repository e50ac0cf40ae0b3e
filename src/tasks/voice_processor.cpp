#include "genhost/tasks/voice_processor.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/media/audio.hpp"
#include "job_files.hpp"

#include <spdlog/spdlog.h>

namespace genhost::tasks {

namespace fs = std::filesystem;

std::string VoiceFolder(std::string_view id) { return "voice-" + LowerUuid(id); }

std::string VoicePreviewMp3(const media::VoiceProfile& profile, double& seconds,
                            const std::function<bool()>& keep_going) {
    const media::AudioBuffer spoken =
        media::SpeakWithProfile(profile, kVoicePreviewText, keep_going);
    if (spoken.frames() == 0) throw media::MediaError("speech synthesis returned no audio");
    const media::AudioBuffer out = media::Resample(spoken, 44100, 1);
    seconds = out.seconds();
    media::AudioEncoding encoding;
    encoding.format = media::AudioFormat::kMp3;
    encoding.sample_rate = 44100;
    encoding.channels = 1;
    return media::WriteAudio(out, encoding);
}

VoiceProcessor::VoiceProcessor(VoiceProcessorOptions options, store::VoiceRepo& repo,
                               outputs::OutputStore& outputs, const providers::InputResolver& fetch)
    : options_(std::move(options)), repo_(repo), outputs_(outputs), fetch_(fetch) {}

bool VoiceProcessor::ProcessSync(const store::VoiceWork& work,
                                 const std::atomic<bool>* lease_lost) {
    const auto keep_going = [lease_lost] { return lease_lost == nullptr || !*lease_lost; };
    const std::string folder = VoiceFolder(work.id);
    media::VoiceProfile profile;
    std::string reason;
    try {
        if (work.source == "audio") {
            JobScratch scratch(options_.scratch_root, "voice");
            fs::path path;
            if (!work.sample_uri.empty()) {
                path = fetch_.Resolve(work.sample_uri, MediaKind::kAudio, scratch.path.string());
            } else {
                const auto info = outputs_.Stat(folder, work.sample_name);
                if (work.sample_name.empty() || !info) {
                    throw media::MediaError("the sample is no longer stored");
                }
                path = scratch.path / "sample";
                WriteWholeFile(path, outputs_.Read(folder, work.sample_name, 0, info->size));
            }
            media::AudioReadOptions read;
            read.sample_rate = media::kVoiceAnalysisRate;
            read.channels = 1;
            // Read a little past the longest sample, so that a longer one is reported as such
            // by the analysis rather than as a decoding error.
            read.max_seconds = media::kVoiceSampleMaxSeconds + 60;
            media::AudioBuffer sample;
            try {
                sample = media::ReadAudio(path.string(), read, keep_going);
            } catch (const media::MediaError& e) {
                if (!keep_going()) return false;
                const std::string what = e.what();
                // (AudioReader's words for a stream past max_seconds.)
                reason = what.find("longer than allowed") != std::string::npos
                             ? "The sample is too long: at most " +
                                   std::to_string(static_cast<int>(media::kVoiceSampleMaxSeconds)) +
                                   " s of audio"
                             : "The sample could not be read as audio: " + what;
            }
            if (reason.empty()) {
                const media::VoiceAnalysis analysis = media::AnalyzeVoiceSample(sample);
                if (!analysis.ok()) {
                    reason = analysis.failure;
                } else {
                    profile = media::ProfileFromAnalysis(analysis);
                    spdlog::info(
                        "voice {}: cloned from {:.1f} s of speech (F0 {:.0f} Hz, {:.1f} "
                        "syllables/s, tilt {:.1f} dB/octave)",
                        work.id, analysis.speech_seconds, analysis.median_f0_hz,
                        analysis.syllables_per_second, analysis.spectral_tilt_db_per_octave);
                }
            }
        } else {
            profile = media::DesignVoiceProfile(work.prompt);
        }
        if (reason.empty()) {
            double seconds = 0;
            const std::string mp3 = VoicePreviewMp3(profile, seconds, keep_going);
            if (!keep_going()) return false;
            outputs_.Put(folder, "preview.mp3", mp3);
        }
    } catch (const media::MediaError& e) {
        if (!keep_going()) return false;
        reason = std::string("The voice could not be made: ") + e.what();
    } catch (const providers::TaskFailure& e) {
        reason = std::string("The sample could not be read: ") + e.what();
    }
    if (!reason.empty()) return repo_.FailSync(work, reason);
    if (!repo_.CompleteSync(work, media::ProfileToJson(profile).dump())) {
        return false;  // deleted meanwhile: its folder went with it, or goes now
    }
    return true;
}

JobKind VoiceProcessor::Kind() {
    JobKind kind;
    kind.run = [this](const store::JobClaim& job, const std::atomic<bool>& lease_lost) {
        if (const auto work = repo_.LoadWorkSync(job.subject, job.revision)) {
            ProcessSync(*work, &lease_lost);
        }
        return JobResult::Done();
    };
    kind.failed = [this](const store::JobClaim& job, const std::string& reason) {
        spdlog::error("voice {} revision {}: processing failed for good: {}", job.subject,
                      job.revision, reason);
        if (const auto work = repo_.LoadWorkSync(job.subject, job.revision)) {
            repo_.FailSync(*work, "The voice could not be processed (internal error)");
        }
    };
    return kind;
}

JobKind VoiceProcessor::ExpiryKind() {
    JobKind kind;
    kind.run = [this](const store::JobClaim& job, const std::atomic<bool>&) {
        outputs_.DeleteTask(job.subject);
        return JobResult::Done();
    };
    return kind;
}

}  // namespace genhost::tasks
