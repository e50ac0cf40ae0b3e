// genhost/media/voice_profile.hpp
//
// Provides the signal side of custom voices (POST /v1/voices, CLIENTS.md 3.5):
// - VoiceProfile: what a custom voice is made of (an espeak-ng voice, its speed, pitch and
//   intonation range, then a pitch shift, a vocal-tract scale, a spectral tilt and breathiness
//   applied after synthesis), stored as JSON (ProfileToJson / ProfileFromJson);
// - AnalyzeVoiceSample: measurements of a speech sample (voiced time, median F0 and its spread,
//   syllable rate, spectral tilt, periodicity), or a human-readable reason why it is unusable;
// - ProfileFromAnalysis: the profile that imitates a measured sample (voice cloning);
// - DesignVoiceProfile: the profile a free-text description asks for (voice design);
// - SpeakWithProfile: speech in a profile's voice; ProfileTargetF0: the median F0 it aims at;
// - DescribeProfile: a few readable words about a profile.
//
// Everything is deterministic: the same sample, description or profile and text give the same
// result. Runs on the calling (worker) thread: AnalyzeVoiceSample and SpeakWithProfile are
// CPU-bound (FFmpeg, espeak-ng) and must not run on an I/O thread. Input that breaks a stated
// bound is reported as a value (VoiceAnalysis::failure) or std::invalid_argument (profiles);
// FFmpeg and espeak-ng failures throw MediaError.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "genhost/media/audio.hpp"

namespace genhost::media {

// Bounds of a voice sample, checked by AnalyzeVoiceSample on the decoded audio.
inline constexpr double kVoiceSampleMinSeconds = 3;        // shorter samples fail
inline constexpr double kVoiceSampleMaxSeconds = 300;      // longer samples fail
inline constexpr double kVoiceSampleMinVoicedSeconds = 2;  // voiced speech needed at least
// AnalyzeVoiceSample converts every sample to this rate, mono, before measuring.
inline constexpr int kVoiceAnalysisRate = 16000;

// Bounds of VoiceProfile's fields (inclusive); ProfileFromJson rejects values outside them.
inline constexpr int kVoiceMinRateWpm = 80;
inline constexpr int kVoiceMaxRateWpm = 450;
inline constexpr double kVoiceMaxPitchShift = 12;  // semitones, either way
inline constexpr double kVoiceMinFormantScale = 0.8;
inline constexpr double kVoiceMaxFormantScale = 1.25;
inline constexpr double kVoiceMaxTilt = 6;  // dB per octave, either way

// SpeakWithProfile's output rate (espeak-ng's own).
inline constexpr int kVoiceOutputRate = kSpeechSampleRate;

enum class VoiceGender { kFemale, kMale, kNeutral };

// VoiceGenderName is "female", "male" or "neutral".
std::string_view VoiceGenderName(VoiceGender gender);

// VoiceProfile drives SpeakWithProfile. The espeak-ng fields come first; the rest is applied to
// espeak-ng's output.
struct VoiceProfile {
    // base_voice is an espeak-ng language voice, optionally with one of the variants
    // VoiceVariants() lists: "en-us", "en-gb-x-rp+m3", "fr+f2". SpeechVoiceExists must know it.
    std::string base_voice = "en-us+m3";
    VoiceGender gender = VoiceGender::kMale;  // descriptive; the variant makes the sound
    int rate_wpm = 175;                       // kVoiceMinRateWpm..kVoiceMaxRateWpm
    int pitch = 50;                           // espeak-ng pitch 0..100 (moves F0 only)
    int range = 50;                           // espeak-ng intonation range 0..100
    // pitch_shift_semitones moves F0 after synthesis keeping the formants (rubberband),
    // within ±kVoiceMaxPitchShift.
    double pitch_shift_semitones = 0;
    // formant_scale multiplies the formant frequencies (a smaller vocal tract above 1) keeping F0
    // and the duration: resampling moves both, rubberband moves F0 back.
    double formant_scale = 1.0;
    // tilt_db_per_octave adds a spectral slope (six octave-spaced EQ shelves, 150 Hz to 4.8 kHz):
    // positive is brighter, negative darker; within ±kVoiceMaxTilt.
    double tilt_db_per_octave = 0;
    // breathiness 0..1 mixes aspiration noise (above 1.5 kHz) into the voiced sounds: 0.3 adds
    // about 4 dB of energy above 2.5 kHz to the vowels, 1 nearly whispers.
    double breathiness = 0;

    bool operator==(const VoiceProfile&) const = default;
};

// VoiceVariants lists the espeak-ng variants a profile may use ("m1".."m7", "f1".."f5",
// "grandma", "grandpa"): those whose pitch ProfileTargetF0 knows.
const std::vector<std::string>& VoiceVariants();

// ProfileToJson writes every field under fixed snake_case keys, with "version": 1. Equal
// profiles give equal JSON, and ProfileFromJson(ProfileToJson(p)) == p.
nlohmann::json ProfileToJson(const VoiceProfile& profile);

// ProfileFromJson reads what ProfileToJson writes. Throws std::invalid_argument naming the field
// when a field is missing, of the wrong type or out of range, when a key is unknown, when the
// version is not 1, or when base_voice is not a voice VoiceProfile allows. Asks espeak-ng
// whether the voice exists (it reads its voice files): call it on a worker thread.
VoiceProfile ProfileFromJson(const nlohmann::json& json);

// ValidateProfile throws std::invalid_argument as ProfileFromJson does for a bad field.
void ValidateProfile(const VoiceProfile& profile);

// VoiceAnalysis is what AnalyzeVoiceSample measured. With a failure, only audio_seconds (and
// whatever was measured before the sample was found unusable) is meaningful.
struct VoiceAnalysis {
    // failure is empty when the sample is usable, otherwise a sentence for the client, e.g.
    // "The sample holds no speech" or "The sample is too short: 1.2 s of audio, at least 3 s
    // needed".
    std::string failure;
    double audio_seconds = 0;
    double speech_seconds = 0;  // time with speech activity, pauses under 0.3 s included
    double voiced_seconds = 0;  // time in voiced 40 ms frames (10 ms apart)
    double median_f0_hz = 0;
    double f0_spread_semitones = 0;          // standard deviation of F0 in semitones
    double syllables_per_second = 0;         // syllable nuclei per second of speech_seconds
    double spectral_tilt_db_per_octave = 0;  // long-term average spectrum, 100 Hz - 5 kHz
    // periodicity is the median normalised autocorrelation peak of the voiced frames below 2 kHz,
    // 0..1. It falls with breathiness but also with noise, reverberation and fast speech.
    double periodicity = 0;

    bool ok() const { return failure.empty(); }
};

// AnalyzeVoiceSample measures a speech sample of any rate and channel count (converted to
// kVoiceAnalysisRate mono). A 40 ms frame every 10 ms is voiced when it is loud enough above the
// sample's own floor, periodic below 2 kHz (a normalised autocorrelation peak of at least 0.45
// at 60-500 Hz), has at least three harmonics within 30 dB (a sine does not) and belongs to a run
// of at least 40 ms whose F0 moves smoothly (noise is periodic only here and there). Syllable
// nuclei are peaks of the smoothed 300 Hz - 3 kHz energy at voiced frames, each after a 2 dB dip
// (de Jong and Wempe); they saturate near 7 per second. Fails (a value, not an exception) when
// the sample is shorter than kVoiceSampleMinSeconds or longer than kVoiceSampleMaxSeconds (checked
// before any work), holds no speech (silence, noise, tones, a steady buzz) or less than
// kVoiceSampleMinVoicedSeconds of voiced speech. Costs about 40 ms of one core per 30 s of
// 44.1 kHz stereo audio at -O1 (150 ms under the dev preset's sanitizers), resampling included;
// bench/voices/clone_bench.cpp measures it.
VoiceAnalysis AnalyzeVoiceSample(const AudioBuffer& sample);

// ProfileFromAnalysis is the profile whose speech imitates the analysed sample: gender and
// variant from the median F0 (male below 145 Hz, female above 175 Hz, neutral between), espeak-ng
// pitch plus a residual shift that put the median F0 at the sample's, the rate from the syllable
// rate, the range from the F0 spread, the tilt from the sample's tilt less espeak-ng's own.
// The language voice is always en-us (accents are not measured); breathiness stays 0 and the
// formant scale 1: periodicity cannot tell a breathy voice from a noisy room, and nothing measured
// here tells the vocal tract's size. Throws std::invalid_argument when `analysis` failed.
VoiceProfile ProfileFromAnalysis(const VoiceAnalysis& analysis);

// DesignVoiceProfile maps a description to a profile: gender words (woman, man, girl, boy...),
// age (child, young, teen, middle-aged, old, elderly), pitch (deep, low, high, squeaky), pace
// (slow, calm, fast, energetic), accent or language (british, american, scottish, irish,
// australian, indian, french, german, spanish, italian...: the nearest espeak-ng voice) and tone
// (warm, bright, raspy, breathy, soft, authoritative). Words it does not know still move pitch,
// speed, range and timbre a little, by a hash of the whole description, so different
// descriptions give different voices. The same description always gives the same profile.
VoiceProfile DesignVoiceProfile(std::string_view prompt);

// DescribeProfile is a few short phrases about a profile, e.g. {"male", "low pitch (98 Hz)",
// "slow", "British English (Received Pronunciation)", "warm"}.
std::vector<std::string> DescribeProfile(const VoiceProfile& profile);

// ProfileTargetF0 is the median F0 in Hz that SpeakWithProfile's speech has (within about a
// semitone for ordinary sentences): espeak-ng's measured pitch for the variant, pitch and range
// settings, moved by pitch_shift_semitones. Throws std::invalid_argument when base_voice's
// variant is not one of VoiceVariants().
double ProfileTargetF0(const VoiceProfile& profile);

// SpeakWithProfile speaks `text` in the profile's voice: mono float at kVoiceOutputRate, as long
// as espeak-ng's speech, peak at 0.89. The pitch shift needs FFmpeg's rubberband filter; without
// it the formants move with the pitch. Empty text gives an empty buffer. `keep_going`
// (optional) is asked during synthesis and between stages; when it returns false the result is
// an empty buffer. Throws std::invalid_argument for a profile ValidateProfile rejects and
// MediaError when espeak-ng or FFmpeg fail.
AudioBuffer SpeakWithProfile(const VoiceProfile& profile, std::string_view text,
                             const std::function<bool()>& keep_going = {});

}  // namespace genhost::media
