// Audio pipelines of the builtin provider: text_to_speech, speech_to_speech, sound_effect,
// voice_isolation, voice_dubbing. What each really does is described in docs/pipelines.md.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "audio_voices.hpp"
#include "genhost/media/audio.hpp"
#include "pipelines.hpp"

namespace genhost::providers {
namespace {

using json = nlohmann::json;
using media::AudioBuffer;

// Num prints a filter argument.
std::string Num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return buf;
}

std::function<bool()> KeepGoing(const TaskContext& ctx) {
    return [&ctx] { return !ctx.IsCancelled(); };
}

// Filter runs a libavfilter chain over `in` in chunks, checking cancellation between them.
AudioBuffer Filter(const TaskContext& ctx, const AudioBuffer& in, const std::string& chain,
                   int out_rate = 0, int out_channels = 0) {
    media::AudioFilter filter(chain, in.sample_rate, in.channels, out_rate, out_channels);
    AudioBuffer out;
    out.sample_rate = filter.out_rate();
    out.channels = filter.out_channels();
    constexpr std::int64_t kChunk = 8192;
    for (std::int64_t done = 0; done < in.frames(); done += kChunk) {
        ctx.CheckCancelled();
        filter.Push(in.samples.data() + done * in.channels, std::min(kChunk, in.frames() - done));
        filter.Pull(out.samples);
    }
    ctx.CheckCancelled();
    filter.Flush();
    filter.Pull(out.samples);
    return out;
}

// ReadInput materialises the media string `uri` and decodes its (first) audio track to mono
// float PCM at `rate`, or with `min_rate` > 0 at the track's own rate when that lies between
// min_rate and rate; undecodable media end the task ASSET.INVALID.
AudioBuffer ReadInput(const TaskContext& ctx, const std::string& uri, MediaKind kind, int rate,
                      double max_seconds, int min_rate = 0) {
    const std::string path = ctx.Input(uri, kind);
    media::AudioReadOptions options;
    options.sample_rate = rate;
    options.min_sample_rate = min_rate;
    options.channels = 1;
    options.max_seconds = max_seconds + 0.5;
    AudioBuffer audio;
    try {
        audio = media::ReadAudio(path, options, KeepGoing(ctx));
    } catch (const media::MediaError& e) {
        ctx.CheckCancelled();
        throw TaskFailure("ASSET.INVALID", std::string("The ") + MediaKindName(kind) +
                                               " input could not be decoded: " + e.what());
    }
    ctx.CheckCancelled();
    if (audio.frames() == 0) {
        throw TaskFailure("ASSET.INVALID", "The input has no audio samples");
    }
    return audio;
}

// Output writes `audio` (whose channel count is encoding.channels) as the file `0.<ext>` in
// the scratch folder, or in memory when the context has none.
Output WriteOutput(const TaskContext& ctx, const AudioBuffer& audio,
                   const media::AudioEncoding& encoding) {
    const std::string suffix = "0." + std::string(media::AudioFormatExtension(encoding.format));
    std::string path;
    if (!ctx.scratch_dir().empty()) {
        std::filesystem::create_directories(ctx.scratch_dir());
        path = ctx.scratch_dir() + "/output_" + suffix;
    }
    media::AudioWriter writer(path, encoding, audio.sample_rate);
    constexpr std::int64_t kChunk = 16384;
    for (std::int64_t done = 0; done < audio.frames(); done += kChunk) {
        ctx.CheckCancelled();
        writer.Write(audio.samples.data() + done * audio.channels,
                     std::min(kChunk, audio.frames() - done));
    }
    writer.Finish();
    ctx.CheckCancelled();
    if (path.empty()) return Output{suffix, writer.TakeBytes(), {}};
    return Output{suffix, {}, path};
}

media::AudioEncoding Encoding(const json& input, int default_rate, int channels) {
    media::AudioEncoding encoding;
    encoding.format = media::ParseAudioFormat(input.value("outputFormat", "mp3"));
    encoding.sample_rate = input.value("sampleRate", default_rate);
    encoding.channels = channels;
    return encoding;
}

// Level scales `audio` to peak at `peak` (silence stays silent), then applies `gain` through
// a soft limiter that keeps samples below full scale.
void Level(AudioBuffer& audio, float peak, double gain = 1.0) {
    const float current = media::PeakLevel(audio);
    if (current < 1e-6f) return;
    const double scale = peak / current * gain;
    for (float& v : audio.samples) {
        double x = v * scale;
        const double a = std::abs(x);
        if (a > 0.9) x = std::copysign(0.9 + 0.09 * std::tanh((a - 0.9) / 0.09), x);
        v = static_cast<float>(x);
    }
}

void Append(AudioBuffer& to, const AudioBuffer& from) {
    if (to.sample_rate == 0) {
        to.sample_rate = from.sample_rate;
        to.channels = from.channels;
    }
    to.samples.insert(to.samples.end(), from.samples.begin(), from.samples.end());
}

AudioBuffer Slice(const AudioBuffer& a, std::int64_t from, std::int64_t to) {
    AudioBuffer s;
    s.sample_rate = a.sample_rate;
    s.channels = a.channels;
    from = std::clamp<std::int64_t>(from, 0, a.frames());
    to = std::clamp<std::int64_t>(to, from, a.frames());
    s.samples.assign(a.samples.begin() + from * a.channels, a.samples.begin() + to * a.channels);
    return s;
}

// NoiseFloor is the RMS of the quietest 20 ms frames (10th percentile) of `a`.
double NoiseFloor(const AudioBuffer& a) {
    const std::int64_t hop = std::max(1, a.sample_rate / 50);
    std::vector<double> rms;
    for (std::int64_t at = 0; at + hop <= a.frames(); at += hop) {
        double sum = 0;
        for (std::int64_t i = at; i < at + hop; ++i) {
            sum += static_cast<double>(a.samples[static_cast<std::size_t>(i)]) *
                   a.samples[static_cast<std::size_t>(i)];
        }
        rms.push_back(std::sqrt(sum / static_cast<double>(hop)));
    }
    if (rms.empty()) return 0;
    std::nth_element(rms.begin(), rms.begin() + static_cast<std::ptrdiff_t>(rms.size() / 10),
                     rms.end());
    return rms[rms.size() / 10];
}

// DenoiseChain is the speech band, spectral denoising (twice: the second pass takes what the
// first left) with the noise floor measured on `a`, then a gate just above that floor.
std::string DenoiseChain(const AudioBuffer& a) {
    const double floor = std::max(1e-5, NoiseFloor(a));
    const double floor_db = std::clamp(20 * std::log10(floor) + 3, -80.0, -20.0);
    return "highpass=f=80,lowpass=f=8000,afftdn=nr=60:nf=" + Num(floor_db) +
           ":tn=1,afftdn=nr=30:nf=" + Num(std::max(-80.0, floor_db - 13)) +
           ":tn=1,agate=threshold=" + Num(std::clamp(floor * 0.7, 0.001, 0.1)) +
           ":ratio=4:attack=5:release=120";
}

// TractChain scales pitch and formants by `factor` keeping the duration (a smaller vocal tract
// when > 1): resampling changes both, atempo restores the length.
std::string TractChain(double factor, int rate) {
    if (std::abs(factor - 1.0) < 1e-3) return "anull";
    const long shifted = std::lround(rate * factor);
    return "asetrate=" + std::to_string(shifted) + ",aresample=" + std::to_string(rate) +
           ",atempo=" + Num(static_cast<double>(rate) / static_cast<double>(shifted));
}

// VoiceF0 is the typical fundamental of a preset voice in Hz (espeak-ng's base pitch moved by
// the profile's pitch setting and vocal tract).
double VoiceF0(const audio::VoiceProfile& v) {
    // Measured on espeak-ng's output, low voices sit a little above this curve: at least 65 Hz.
    return std::max(65.0,
                    (v.female ? 190.0 : 95.0) * std::pow(2.0, (v.pitch - 50) / 60.0) * v.tract);
}

// SpeakRequest is one utterance of a preset voice.
struct SpeakRequest {
    const audio::VoiceProfile* voice = nullptr;
    std::string language;  // ISO 639-1; "" or "en" speaks with the voice's English accent
    std::string text;
    double rate = 1.0;         // multiplies the voice's speed
    int pitch_offset = 0;      // espeak-ng pitch units
    double range_scale = 1.0;  // multiplies the voice's intonation range
    std::string delivery;      // "", "whisper", "loud", "soft"
};

// EspeakVoice names the espeak-ng voice (language + variant) of a request.
std::string EspeakVoice(const SpeakRequest& r) {
    std::string base;
    if (!r.language.empty() && r.language != "en") base = audio::LanguageVoice(r.language);
    if (base.empty()) base = r.voice->accent;
    std::string variant = r.voice->variant;
    if (r.delivery == "whisper") variant = r.voice->female ? "whisperf" : "whisper";
    const std::string name = base + "+" + variant;
    return media::SpeechVoiceExists(name) ? name : base;
}

// Speak synthesises one utterance with the voice's timbre: espeak-ng, then the vocal tract
// scaling and the voice's colour. Mono, 22.05 kHz.
AudioBuffer Speak(const TaskContext& ctx, const SpeakRequest& r) {
    media::SpeechParams params;
    params.text = r.text;
    params.voice = EspeakVoice(r);
    params.rate_wpm =
        static_cast<int>(std::clamp(std::lround(175.0 * r.voice->speed * r.rate), 80L, 450L));
    params.pitch = std::clamp(r.voice->pitch + r.pitch_offset, 0, 100);
    params.range =
        static_cast<int>(std::clamp(std::lround(r.voice->range * r.range_scale), 0L, 100L));
    if (r.delivery == "loud") params.volume = 160;
    if (r.delivery == "soft") params.volume = 60;
    AudioBuffer speech;
    try {
        speech = media::SynthesizeSpeech(params, KeepGoing(ctx));
    } catch (const media::MediaError&) {
        ctx.CheckCancelled();
        throw;
    }
    ctx.CheckCancelled();
    if (speech.frames() == 0) return speech;
    return Filter(ctx, speech,
                  TractChain(r.voice->tract, speech.sample_rate) + "," + r.voice->colour);
}

// PitchShift moves the pitch by `semitones` keeping the duration (rubberband).
AudioBuffer PitchShift(const TaskContext& ctx, const AudioBuffer& a, double semitones,
                       bool keep_formants = false) {
    if (std::abs(semitones) < 0.01 || a.frames() == 0) return a;
    std::string chain = "rubberband=pitch=" + Num(std::pow(2.0, semitones / 12.0));
    if (keep_formants) chain += ":formant=preserved";
    return Filter(ctx, a, chain);
}

const audio::VoiceProfile& PresetVoice(const json& input) {
    const std::string id = input.contains("voice") && input["voice"].is_object()
                               ? input["voice"].value("presetId", "")
                               : std::string();
    const auto* voice = audio::FindVoice(id);
    if (voice == nullptr) throw TaskFailure("INTERNAL", "unknown preset voice '" + id + "'");
    return *voice;
}

// SeedUnit maps a seed to a deterministic number in [-1, 1].
double SeedUnit(std::uint64_t seed) {
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) / static_cast<double>(1ull << 52) - 1.0;
}

}  // namespace

// --- text_to_speech -----------------------------------------------------------------------

std::vector<Output> TextToSpeech(const PipelineEnv& env, TaskContext& ctx) {
    const auto& input = ctx.input();
    const std::string& model = ctx.model();
    SimulateLatency(env, ctx, 0.0, 0.5);
    const std::string text = input.value("promptText", "");

    SpeakRequest base;
    double semitones = 0;  // a pitch shift after synthesis
    double gain = 1.0;
    bool normalize_text = true;
    bool speaker_boost = false;
    std::vector<audio::Segment> segments;
    media::AudioEncoding encoding;
    double clone_f0 = 0;  // seed_audio with a reference clip: the pitch to match

    if (model == "seed_audio") {
        encoding = Encoding(input, 24000, 1);
        base.rate = 1.0 + input.value("speechRate", 0) / 100.0;
        gain = 1.0 + input.value("loudnessRate", 0) / 100.0;
        semitones = input.value("pitchRate", 0);
        base.voice = audio::FindVoice("Leslie");
        if (input.contains("voice") && input["voice"].is_object() &&
            input["voice"].contains("audioUri")) {
            const AudioBuffer reference =
                ReadInput(ctx, input["voice"].value("audioUri", ""), MediaKind::kAudio,
                          media::kSpeechSampleRate, 3600);
            clone_f0 = media::EstimatePitch(reference);
            base.voice = audio::FindVoice(clone_f0 > 0 && clone_f0 < 165 ? "Mark" : "Leslie");
        }
        base.language = audio::DetectLanguage(text);
        segments.push_back({text, ""});
    } else {
        encoding.format = media::AudioFormat::kMp3;
        encoding.sample_rate = 44100;
        encoding.channels = 1;
        base.voice = &PresetVoice(input);
        if (model == "voice_v3") {
            base.rate = input.value("speed", 1.0);
            const std::string code = input.value("languageCode", "");
            base.language = code.empty() ? audio::DetectLanguage(text) : code;
            const double stability = input.value("stability", 0.5);
            const double style = input.value("style", 0.0);
            base.range_scale = 1.5 - stability + 0.6 * style;
            // Lower stability lets the seed move the delivery a little, like a sampled model.
            base.pitch_offset =
                static_cast<int>(std::lround(SeedUnit(SeedFor(ctx)) * 4.0 * (1.0 - stability)));
            speaker_boost = input.value("useSpeakerBoost", false);
            normalize_text = input.value("applyTextNormalization", "auto") != "off";
            segments = audio::SplitExpressiveTags(text);
        } else {
            base.language = audio::DetectLanguage(text);
            segments.push_back({text, ""});
        }
    }
    const bool english = base.language.empty() || base.language.rfind("en", 0) == 0;

    AudioBuffer speech;
    speech.sample_rate = media::kSpeechSampleRate;
    for (std::size_t i = 0; i < segments.size(); ++i) {
        const auto& segment = segments[i];
        SpeakRequest r = base;
        r.delivery = segment.delivery == "laugh" ? "" : segment.delivery;
        if (segment.delivery == "laugh") {
            SpeakRequest laugh = base;
            laugh.text = "ha ha ha!";
            laugh.language = "en";
            laugh.rate = base.rate * 1.3;
            laugh.pitch_offset = base.pitch_offset + 15;
            Append(speech, Speak(ctx, laugh));
        }
        if (!segment.text.empty()) {
            r.text = english && normalize_text ? audio::NormalizeText(segment.text) : segment.text;
            if (r.delivery == "loud") r.pitch_offset += 6;
            if (r.delivery == "soft") r.pitch_offset -= 3, r.rate *= 0.92;
            Append(speech, Speak(ctx, r));
        }
        ctx.Progress(0.5 + 0.4 * static_cast<double>(i + 1) / static_cast<double>(segments.size()));
    }
    if (speech.frames() == 0) {
        speech.samples.assign(static_cast<std::size_t>(media::kSpeechSampleRate / 2), 0.0f);
    }
    if (clone_f0 > 0) {
        const double own = media::EstimatePitch(speech);
        if (own > 0) semitones += std::clamp(12.0 * std::log2(clone_f0 / own), -12.0, 12.0);
    }
    speech = PitchShift(ctx, speech, semitones);
    if (speaker_boost) speech = Filter(ctx, speech, "equalizer=f=3000:t=q:w=1:g=3");
    Level(speech, 0.7f, gain);
    auto out = WriteOutput(ctx, speech, encoding);
    ctx.Progress(1.0);
    return {std::move(out)};
}

// --- speech_to_speech ---------------------------------------------------------------------

std::vector<Output> SpeechToSpeech(const PipelineEnv& env, TaskContext& ctx) {
    const auto& input = ctx.input();
    SimulateLatency(env, ctx, 0.0, 0.4);
    const json& media_field = input.at("media");
    const MediaKind kind =
        media_field.value("type", "audio") == "video" ? MediaKind::kVideo : MediaKind::kAudio;
    // The voice is moved at the input's own rate when it is below 44.1 kHz (espeak-ng speaks at
    // 22.05 kHz; at least 22.05 kHz so the chains' filters stay below Nyquist): rubberband's work
    // grows with the rate and there is nothing above the input's Nyquist frequency to move. The
    // chain ends resampling to 44.1 kHz.
    constexpr int kRate = 44100;
    AudioBuffer source = ReadInput(ctx, media_field.value("uri", ""), kind, kRate, 300, 22050);
    const int rate = source.sample_rate;
    const std::int64_t frames = static_cast<std::int64_t>(
        std::llround(static_cast<double>(source.frames()) * kRate / static_cast<double>(rate)));
    const auto& voice = PresetVoice(input);
    ctx.Progress(0.5);

    if (input.value("removeBackgroundNoise", false)) {
        source = Filter(ctx, source, DenoiseChain(source));
    }
    ctx.Progress(0.6);
    // Pitch moves to the voice's; formants follow partly (a quarter of the pitch move, in
    // octaves) and by the voice's vocal tract.
    const double f0 = media::EstimatePitch(source);
    const double ratio = f0 > 0 ? std::clamp(VoiceF0(voice) / f0, 0.5, 2.0) : 1.0;
    const double formant = std::clamp(voice.tract * std::pow(ratio, 0.25), 0.7, 1.4);
    const long shifted = std::lround(rate * formant);
    const double actual = static_cast<double>(shifted) / rate;
    // rubberband first: after atempo in the same graph it is handed frames past its final one.
    std::string chain;
    const double pitch = ratio / actual;
    if (std::abs(pitch - 1.0) > 1e-3) {
        chain = "rubberband=pitch=" + Num(pitch) + ":formant=preserved,";
    }
    chain += TractChain(actual, rate) + "," + voice.colour;
    AudioBuffer converted = Filter(ctx, source, chain, kRate);
    ctx.Progress(0.9);
    media::FitFrames(converted, frames);
    Level(converted, 0.89f);
    media::AudioEncoding encoding;
    encoding.format = media::AudioFormat::kMp3;
    encoding.sample_rate = kRate;
    encoding.channels = 1;
    auto out = WriteOutput(ctx, converted, encoding);
    ctx.Progress(1.0);
    return {std::move(out)};
}

// --- sound_effect -------------------------------------------------------------------------

namespace {

// AutoDuration is the length chosen from a description: "N seconds" when it says so, 3 s for
// one-shot sounds, 6 s for ambiences.
double AutoDuration(const std::string& prompt) {
    for (std::size_t i = 0; i < prompt.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(prompt[i]))) continue;
        if (i > 0 &&
            (std::isalnum(static_cast<unsigned char>(prompt[i - 1])) || prompt[i - 1] == '.')) {
            continue;
        }
        std::size_t j = i;
        while (j < prompt.size() &&
               (std::isdigit(static_cast<unsigned char>(prompt[j])) || prompt[j] == '.')) {
            ++j;
        }
        std::size_t k = j;
        while (k < prompt.size() && prompt[k] == ' ') ++k;
        std::string unit;
        while (k < prompt.size() && std::isalpha(static_cast<unsigned char>(prompt[k]))) {
            unit += static_cast<char>(std::tolower(static_cast<unsigned char>(prompt[k++])));
        }
        if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" ||
            unit == "seconds") {
            return std::clamp(std::atof(prompt.substr(i, j - i).c_str()), 0.5, 30.0);
        }
        i = j;
    }
    for (const auto& layer : media::EffectLayers(prompt)) {
        if (layer == "rain" || layer == "wind" || layer == "fire" || layer == "water" ||
            layer == "engine" || layer == "bird" || layer == "texture" || layer == "footsteps") {
            return 6.0;
        }
    }
    return 3.0;
}

// QuotedDialogue returns the text between straight or curly double quotes.
std::string QuotedDialogue(const std::string& prompt) {
    std::string out;
    std::size_t i = 0;
    auto next_quote = [&](std::size_t from, std::size_t& len) {
        std::size_t best = std::string::npos;
        for (const char* q : {"\"", "\xE2\x80\x9C", "\xE2\x80\x9D"}) {
            const std::size_t at = prompt.find(q, from);
            if (at < best) best = at, len = std::char_traits<char>::length(q);
        }
        return best;
    };
    for (;;) {
        std::size_t len = 0;
        const std::size_t open = next_quote(i, len);
        if (open == std::string::npos) break;
        std::size_t len2 = 0;
        const std::size_t close = next_quote(open + len, len2);
        if (close == std::string::npos) break;
        if (!out.empty()) out += ' ';
        out += prompt.substr(open + len, close - open - len);
        i = close + len2;
    }
    return out;
}

void MixInto(AudioBuffer& bed, const AudioBuffer& part, std::int64_t at, float gain) {
    const std::int64_t n = std::min(part.frames(), bed.frames() - at);
    for (std::int64_t i = 0; i < n; ++i) {
        for (int c = 0; c < bed.channels; ++c) {
            const int pc = part.channels == 1 ? 0 : std::min(c, part.channels - 1);
            bed.samples[static_cast<std::size_t>((at + i) * bed.channels + c)] +=
                gain * part.samples[static_cast<std::size_t>(i * part.channels + pc)];
        }
    }
}

}  // namespace

std::vector<Output> SoundEffect(const PipelineEnv& env, TaskContext& ctx) {
    const auto& input = ctx.input();
    const bool seed_audio = ctx.model() == "seed_audio";
    SimulateLatency(env, ctx, 0.0, 0.5);
    media::EffectSpec spec;
    spec.prompt = input.value("promptText", "");
    spec.seed = SeedFor(ctx);
    spec.channels = 2;
    media::AudioEncoding encoding;
    encoding.format = media::AudioFormat::kMp3;
    encoding.sample_rate = 44100;
    encoding.channels = 2;
    double gain = 1.0;
    std::vector<AudioBuffer> parts;  // dialogue and reference clips mixed over the effect

    if (seed_audio) {
        encoding = Encoding(input, 44100, 2);
        gain = 1.0 + input.value("loudnessRate", 0) / 100.0;
        spec.pitch_semitones = input.value("pitchRate", 0);
        double seconds = AutoDuration(spec.prompt);
        const std::string dialogue = QuotedDialogue(spec.prompt);
        if (!dialogue.empty()) {
            SpeakRequest r;
            r.voice = audio::FindVoice("Leslie");
            r.text = dialogue;
            r.language = audio::DetectLanguage(dialogue);
            r.rate = 1.0 + input.value("speechRate", 0) / 100.0;
            AudioBuffer speech = Speak(ctx, r);
            speech = PitchShift(ctx, speech, spec.pitch_semitones);
            speech = Filter(ctx, speech, "anull", encoding.sample_rate, 1);
            Level(speech, 0.6f);
            seconds = std::max(seconds, speech.seconds() + 1.0);
            parts.push_back(std::move(speech));
        }
        if (input.contains("referenceAudios") && input["referenceAudios"].is_array()) {
            const auto& refs = input["referenceAudios"];
            bool any_named = false;
            for (std::size_t i = 0; i < refs.size(); ++i) {
                any_named |=
                    spec.prompt.find("@Audio" + std::to_string(i + 1)) != std::string::npos;
            }
            for (std::size_t i = 0; i < refs.size(); ++i) {
                AudioBuffer clip = ReadInput(ctx, refs[i].get<std::string>(), MediaKind::kAudio,
                                             encoding.sample_rate, 3600);
                if (any_named &&
                    spec.prompt.find("@Audio" + std::to_string(i + 1)) == std::string::npos) {
                    continue;
                }
                media::FitFrames(clip, std::min<std::int64_t>(
                                           clip.frames(), std::int64_t{30} * encoding.sample_rate));
                Level(clip, 0.5f);
                seconds = std::max(seconds, clip.seconds());
                parts.push_back(std::move(clip));
            }
        }
        spec.seconds = std::min(seconds, 30.0);
    } else {
        spec.seconds = input.contains("duration") ? input["duration"].get<double>()
                                                  : AutoDuration(spec.prompt);
        spec.loop = input.value("loop", false);
    }
    spec.sample_rate = encoding.sample_rate;
    ctx.CheckCancelled();
    AudioBuffer effect = media::SynthesizeEffect(spec);
    ctx.CheckCancelled();
    ctx.Progress(0.8);
    if (!parts.empty()) {
        for (float& v : effect.samples) v *= 0.35f;
        for (const auto& part : parts) {
            MixInto(effect, part,
                    part.frames() + effect.sample_rate / 2 <= effect.frames()
                        ? effect.sample_rate / 2
                        : 0,
                    1.0f);
        }
        Level(effect, 0.89f);
    }
    if (gain != 1.0) Level(effect, 0.7f, gain);
    auto out = WriteOutput(ctx, effect, encoding);
    ctx.Progress(1.0);
    return {std::move(out)};
}

// --- voice_isolation ----------------------------------------------------------------------

std::vector<Output> VoiceIsolation(const PipelineEnv& env, TaskContext& ctx) {
    const auto& input = ctx.input();
    SimulateLatency(env, ctx, 0.0, 0.4);
    constexpr int kRate = 44100;
    const AudioBuffer source =
        ReadInput(ctx, input.value("audioUri", ""), MediaKind::kAudio, kRate, 3600);
    ctx.Progress(0.5);
    AudioBuffer voice = Filter(ctx, source, DenoiseChain(source));
    media::FitFrames(voice, source.frames());
    Level(voice, 0.89f);
    ctx.Progress(0.9);
    media::AudioEncoding encoding;
    encoding.format = media::AudioFormat::kMp3;
    encoding.sample_rate = kRate;
    encoding.channels = 1;
    auto out = WriteOutput(ctx, voice, encoding);
    ctx.Progress(1.0);
    return {std::move(out)};
}

// --- voice_dubbing ------------------------------------------------------------------------

namespace {

struct SpeechSpan {
    std::int64_t from = 0;  // frames
    std::int64_t to = 0;
    double f0 = 0;
    double rms = 0;
    int speaker = 0;
};

// FindSpeech finds the stretches of `a` louder than its noise floor in the speech band (20 ms
// frames, gaps under 300 ms bridged, blips under 150 ms dropped).
std::vector<SpeechSpan> FindSpeech(const TaskContext& ctx, const AudioBuffer& a) {
    const AudioBuffer band = Filter(ctx, a, "highpass=f=100,lowpass=f=4000");
    const std::int64_t hop = a.sample_rate / 50;
    std::vector<double> rms;
    for (std::int64_t at = 0; at < band.frames(); at += hop) {
        double sum = 0;
        const std::int64_t end = std::min(band.frames(), at + hop);
        for (std::int64_t i = at; i < end; ++i) sum += band.samples[i] * band.samples[i];
        rms.push_back(std::sqrt(sum / static_cast<double>(std::max<std::int64_t>(1, end - at))));
    }
    std::vector<SpeechSpan> spans;
    if (rms.empty()) return spans;
    std::vector<double> sorted = rms;
    std::sort(sorted.begin(), sorted.end());
    const double floor = sorted[sorted.size() / 10];
    const double loud = sorted[sorted.size() * 95 / 100];
    const double threshold = std::max({floor * 3.0, loud * 0.08, 1e-4});
    const std::size_t bridge = 15;   // 300 ms
    const std::size_t shortest = 8;  // 160 ms
    std::size_t i = 0;
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    while (i < rms.size()) {
        if (rms[i] < threshold) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < rms.size() && rms[j] >= threshold) ++j;
        if (!runs.empty() && i - runs.back().second <= bridge) {
            runs.back().second = j;
        } else {
            runs.emplace_back(i, j);
        }
        i = j;
    }
    for (const auto& [from, to] : runs) {
        if (to - from < shortest) continue;
        SpeechSpan s;
        s.from = static_cast<std::int64_t>(from) * hop;
        s.to = std::min(a.frames(), static_cast<std::int64_t>(to) * hop);
        const AudioBuffer part = Slice(a, s.from, s.to);
        s.f0 = media::EstimatePitch(part);
        s.rms = media::RmsLevel(part);
        spans.push_back(s);
    }
    return spans;
}

// AssignSpeakers groups spans by pitch: `count` groups when given (> 0), otherwise as many as
// there are pitch clusters more than ~4 semitones apart. Returns the number of speakers.
int AssignSpeakers(std::vector<SpeechSpan>& spans, int count) {
    std::vector<std::size_t> voiced;
    for (std::size_t i = 0; i < spans.size(); ++i) {
        if (spans[i].f0 > 0) voiced.push_back(i);
    }
    std::sort(voiced.begin(), voiced.end(),
              [&](std::size_t a, std::size_t b) { return spans[a].f0 < spans[b].f0; });
    std::vector<std::pair<double, std::size_t>> gaps;  // octave gap, index after the gap
    for (std::size_t k = 1; k < voiced.size(); ++k) {
        gaps.emplace_back(std::log2(spans[voiced[k]].f0 / spans[voiced[k - 1]].f0), k);
    }
    std::vector<std::size_t> cuts;
    if (count > 0) {
        std::sort(gaps.begin(), gaps.end(), std::greater<>());
        for (std::size_t k = 0; k + 1 < static_cast<std::size_t>(count) && k < gaps.size(); ++k) {
            cuts.push_back(gaps[k].second);
        }
    } else {
        for (const auto& [gap, at] : gaps) {
            if (gap > 0.33) cuts.push_back(at);
        }
        if (cuts.size() > 5) cuts.resize(5);
    }
    std::sort(cuts.begin(), cuts.end());
    for (std::size_t k = 0; k < voiced.size(); ++k) {
        spans[voiced[k]].speaker =
            static_cast<int>(std::upper_bound(cuts.begin(), cuts.end(), k) - cuts.begin());
    }
    // Unvoiced spans belong to the previous span's speaker.
    for (std::size_t i = 0; i < spans.size(); ++i) {
        if (spans[i].f0 <= 0) spans[i].speaker = i > 0 ? spans[i - 1].speaker : 0;
    }
    return count > 0 ? count : static_cast<int>(cuts.size()) + 1;
}

}  // namespace

// The note every builtin dubbing output carries in its metadata (docs/pipelines.md).
constexpr const char* kNotTranslatedNote =
    "genhost builtin provider: not translated. The builtin provider has no speech recognition or "
    "translation model; the dubbed speech is a fixed sentence in the target language, timed to the "
    "source's speech. Configure an HTTP provider for real dubbing. Target language: ";

std::vector<Output> VoiceDubbing(const PipelineEnv& env, TaskContext& ctx) {
    const auto& input = ctx.input();
    SimulateLatency(env, ctx, 0.0, 0.3);
    constexpr int kRate = 44100;
    const AudioBuffer source =
        ReadInput(ctx, input.value("audioUri", ""), MediaKind::kAudio, kRate, 3600);
    const std::string lang = input.value("targetLang", "en");
    const bool cloning = !input.value("disableVoiceCloning", false);
    const bool keep_background = !input.value("dropBackgroundAudio", false);
    std::vector<SpeechSpan> spans = FindSpeech(ctx, source);
    const int speakers = AssignSpeakers(spans, input.value("numSpeakers", 0));
    ctx.Progress(0.4);

    // One voice per speaker, chosen by the speaker's pitch (female voices above 165 Hz); with
    // cloning on, its pitch moved to the speaker's median. Each speaker's voice reads the
    // placeholder script in the target language; the script's audio is laid over that speaker's
    // spans in order, continuing (and repeating) from one span to the next.
    static constexpr const char* kFemale[] = {"Leslie", "Rachel", "Sandra", "Lisa", "Paula"};
    static constexpr const char* kMale[] = {"Mark", "Tom", "Noah", "Martin", "Elliot"};
    AudioBuffer dub;
    dub.sample_rate = kRate;
    dub.channels = 1;
    dub.samples.assign(source.samples.size(), 0.0f);
    int females = 0;
    int males = 0;
    for (int s = 0; s < speakers; ++s) {
        std::vector<double> pitches;
        for (const auto& span : spans) {
            if (span.speaker == s && span.f0 > 0) pitches.push_back(span.f0);
        }
        bool any = false;
        for (const auto& span : spans) any |= span.speaker == s;
        if (!any) continue;
        double median = 0;
        if (!pitches.empty()) {
            std::nth_element(pitches.begin(), pitches.begin() + pitches.size() / 2, pitches.end());
            median = pitches[pitches.size() / 2];
        }
        const bool female = median >= 165;
        SpeakRequest r;
        r.voice = audio::FindVoice(female ? kFemale[females++ % 5] : kMale[males++ % 5]);
        r.language = lang;
        r.text = std::string(audio::PlaceholderScript(lang));
        AudioBuffer voice = Speak(ctx, r);
        if (cloning && median > 0) {
            const double own = media::EstimatePitch(voice);
            if (own > 0) {
                voice = PitchShift(ctx, voice,
                                   std::clamp(12.0 * std::log2(median / own), -12.0, 12.0), true);
            }
        }
        voice = Filter(ctx, voice, "anull", kRate, 1);
        if (voice.frames() == 0) continue;
        const double voice_rms = std::max(1e-6, media::RmsLevel(voice));
        // Word starts: where the voice resumes after at least 30 ms of quiet. Every span starts
        // at the next one, so spans begin on a word (they may still end inside one).
        std::vector<std::int64_t> starts;
        const std::int64_t hop = kRate / 100;
        int quiet = 3;
        for (std::int64_t at = 0; at + hop <= voice.frames(); at += hop) {
            double sum = 0;
            for (std::int64_t i = at; i < at + hop; ++i) {
                sum += static_cast<double>(voice.samples[static_cast<std::size_t>(i)]) *
                       voice.samples[static_cast<std::size_t>(i)];
            }
            if (std::sqrt(sum / static_cast<double>(hop)) < 0.15 * voice_rms) {
                ++quiet;
            } else {
                if (quiet >= 3) starts.push_back(at);
                quiet = 0;
            }
        }
        if (starts.empty()) starts.push_back(0);
        std::int64_t pos = 0;
        for (const auto& span : spans) {
            if (span.speaker != s) continue;
            ctx.CheckCancelled();
            const auto next = std::lower_bound(starts.begin(), starts.end(), pos);
            pos = next == starts.end() ? starts.front() : *next;
            const std::int64_t n = span.to - span.from;
            const float g = static_cast<float>(std::clamp(span.rms / voice_rms, 0.05, 4.0));
            const std::int64_t fade = std::min<std::int64_t>(n / 2, kRate / 60);
            for (std::int64_t i = 0; i < n; ++i) {
                float w = g;
                if (i < fade) w *= static_cast<float>(i) / static_cast<float>(fade);
                if (n - 1 - i < fade) w *= static_cast<float>(n - 1 - i) / static_cast<float>(fade);
                dub.samples[static_cast<std::size_t>(span.from + i)] +=
                    w * voice.samples[static_cast<std::size_t>(pos)];
                if (++pos >= voice.frames()) pos = 0;
            }
        }
        ctx.Progress(0.4 + 0.4 * (s + 1) / speakers);
    }

    if (keep_background) {
        // Outside speech the original stays; under speech, the noise afftdn estimates (its
        // noise output), with 30 ms crossfades.
        const AudioBuffer noise = Filter(ctx, source, "afftdn=nr=40:nf=-60:tn=1:om=n");
        std::vector<float> mask(static_cast<std::size_t>(source.frames()), 0.0f);
        const std::int64_t ramp = kRate * 3 / 100;
        for (const auto& span : spans) {
            for (std::int64_t i = std::max<std::int64_t>(0, span.from - ramp);
                 i < std::min(source.frames(), span.to + ramp); ++i) {
                float w = 1.0f;
                if (i < span.from) w = static_cast<float>(i - (span.from - ramp)) / ramp;
                if (i >= span.to) w = static_cast<float>(span.to + ramp - i) / ramp;
                mask[static_cast<std::size_t>(i)] = std::max(mask[static_cast<std::size_t>(i)], w);
            }
        }
        for (std::int64_t i = 0; i < source.frames(); ++i) {
            const float m = mask[static_cast<std::size_t>(i)];
            const float n = i < noise.frames() ? noise.samples[static_cast<std::size_t>(i)] : 0.0f;
            dub.samples[static_cast<std::size_t>(i)] +=
                (1.0f - m) * source.samples[static_cast<std::size_t>(i)] + m * n;
        }
    }
    ctx.CheckCancelled();
    media::FitFrames(dub, source.frames());
    Level(dub, std::min(0.89f, std::max(0.3f, media::PeakLevel(source))));
    ctx.Progress(0.9);
    media::AudioEncoding encoding;
    encoding.format = media::AudioFormat::kMp3;
    encoding.sample_rate = kRate;
    encoding.channels = 1;
    // The task record has no field for notes; the file itself says what it is (an ID3 comment).
    encoding.metadata.emplace_back("comment", std::string(kNotTranslatedNote) + lang + ".");
    auto out = WriteOutput(ctx, dub, encoding);
    ctx.Progress(1.0);
    return {std::move(out)};
}

}  // namespace genhost::providers
