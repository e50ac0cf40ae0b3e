// genhost/media/audio.hpp
//
// Provides the media module's audio pieces, all made with FFmpeg's libraries and espeak-ng:
// - AudioWriter / WriteAudio: WAV (PCM s16le), MP3 (libmp3lame) and Ogg Opus (libopus) at an
//   exact sample rate and an exact number of samples (swresample converts rates);
// - AudioReader / ReadAudio: the first audio stream of any file libavformat reads (also the
//   audio track of a video) decoded to float PCM at a chosen rate and channel count, bounded in
//   duration and time;
// - AudioFilter / FilterAudio: a libavfilter graph (afftdn, highpass, loudnorm, rubberband,
//   atempo, aecho, ...) over float PCM;
// - SynthesizeSpeech: espeak-ng speech (22.05 kHz mono);
// - SynthesizeEffect: procedural sound effects from a text description;
// - EstimatePitch and small sample helpers.
//
// Everything is deterministic: the same inputs give the same samples and the same file bytes.
// Runs on the calling (worker) thread; objects belong to one thread. Failures throw MediaError
// (declared in genhost/media/image.hpp): undecodable input, libav failures, espeak failures.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "genhost/media/image.hpp"

namespace genhost::media {

// AudioBuffer is float PCM, interleaved when stereo, nominally within [-1, 1].
struct AudioBuffer {
    int sample_rate = 0;
    int channels = 1;
    std::vector<float> samples;

    std::int64_t frames() const {
        return channels > 0 ? static_cast<std::int64_t>(samples.size()) / channels : 0;
    }
    double seconds() const {
        return sample_rate > 0 ? static_cast<double>(frames()) / sample_rate : 0.0;
    }
};

enum class AudioFormat { kWav, kMp3, kOggOpus };

// ParseAudioFormat maps "wav", "mp3" and "ogg_opus" (the API's names); throws MediaError.
AudioFormat ParseAudioFormat(std::string_view name);

// AudioFormatExtension is the file extension without a dot: "wav", "mp3", "ogg".
std::string_view AudioFormatExtension(AudioFormat format);

// AudioEncoding says what file to write.
struct AudioEncoding {
    AudioFormat format = AudioFormat::kMp3;
    // The output rate. MP3 takes 8000-48000 Hz. Opus codes only at 8/12/16/24/48 kHz: other
    // rates (32000, 44100) are resampled to 48 kHz and every Opus stream is coded at 48 kHz (what
    // Opus decoders output); the requested rate is recorded as the OpusHead input sample rate.
    int sample_rate = 44100;
    int channels = 1;  // 1 or 2
    int bitrate = 0;   // bits per second for MP3 and Opus; 0 picks 128k (MP3) or 48k per channel
    // File-level tags (ID3v2 for MP3, INFO for WAV, Vorbis comments for Ogg), e.g. "comment".
    std::vector<std::pair<std::string, std::string>> metadata;
};

// AudioWriter encodes float PCM given at `input_rate` with encoding.channels channels into a
// file (or into memory when `path` is empty; see TakeBytes). Finish writes exactly
// round(frames_in * output_rate / input_rate) samples per channel: MP3 and Opus files carry
// their encoder delay and padding in their headers (LAME tag, OpusHead pre-skip, the Ogg end
// granule), so decoders return that many samples.
class AudioWriter {
  public:
    AudioWriter(const std::string& path, const AudioEncoding& encoding, int input_rate);
    ~AudioWriter();
    AudioWriter(const AudioWriter&) = delete;
    AudioWriter& operator=(const AudioWriter&) = delete;

    // Write appends `frames` interleaved frames.
    void Write(const float* samples, std::int64_t frames);
    // Finish flushes the encoder and writes the trailer; nothing may be written afterwards.
    void Finish();
    // TakeBytes returns the file of an in-memory writer (after Finish).
    std::string TakeBytes();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// WriteAudio encodes `audio` (its channel count must match encoding.channels) to `path`, or
// returns the bytes when `path` is empty.
std::string WriteAudio(const AudioBuffer& audio, const AudioEncoding& encoding,
                       const std::string& path = {});

// AudioReadOptions bounds and shapes what AudioReader returns.
struct AudioReadOptions {
    int sample_rate = 44100;
    // With min_sample_rate > 0 the output keeps the stream's own rate when that lies between
    // min_sample_rate and sample_rate, and is clamped to those bounds otherwise.
    int min_sample_rate = 0;
    int channels = 1;                   // 1 (downmixed) or 2
    double max_seconds = 3600.5;        // a longer stream fails with MediaError
    std::chrono::seconds timeout{300};  // wall clock for all reading
};

// AudioReader decodes the first audio stream of the file at `path` (a video's audio track
// included) through a private I/O context (no protocols, no nested opens). Throws MediaError
// when the file is unreadable or has no audio stream.
class AudioReader {
  public:
    AudioReader(const std::string& path, const AudioReadOptions& options);
    ~AudioReader();
    AudioReader(const AudioReader&) = delete;
    AudioReader& operator=(const AudioReader&) = delete;

    // DurationHint is the container's or stream's stated duration in seconds, 0 if unknown.
    double DurationHint() const;

    // SampleRate is the rate of the samples this reader outputs.
    int SampleRate() const;

    // Read appends up to about `max_frames` decoded frames (interleaved) to `out` and returns
    // how many it appended; 0 means the end. Throws MediaError on corrupt data past the budget of
    // tolerated errors or once the stream passes max_seconds.
    std::int64_t Read(std::vector<float>& out, std::int64_t max_frames);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// ReadAudio decodes a whole file; `keep_going` (optional) is asked between chunks and stops the
// work with MediaError("stopped") when it returns false.
AudioBuffer ReadAudio(const std::string& path, const AudioReadOptions& options,
                      const std::function<bool()>& keep_going = {});

// AudioFilter runs a libavfilter chain (e.g. "highpass=f=80,afftdn=nr=12") over float PCM of
// `sample_rate` and `channels`; its output is converted to `out_rate` / `out_channels` (0: the
// same as the input). Filters run single-threaded, so output is deterministic.
class AudioFilter {
  public:
    AudioFilter(std::string_view description, int sample_rate, int channels, int out_rate = 0,
                int out_channels = 0);
    ~AudioFilter();
    AudioFilter(const AudioFilter&) = delete;
    AudioFilter& operator=(const AudioFilter&) = delete;

    // Push feeds `frames` interleaved frames; Flush marks the end of the input.
    void Push(const float* samples, std::int64_t frames);
    void Flush();
    // Pull appends every frame the graph has ready to `out` and returns how many.
    std::int64_t Pull(std::vector<float>& out);

    int out_rate() const;
    int out_channels() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// FilterAudio runs `description` over all of `audio` ("anull" passes it through).
AudioBuffer FilterAudio(const AudioBuffer& audio, std::string_view description, int out_rate = 0,
                        int out_channels = 0);

// AudioFilterAvailable reports whether this FFmpeg build has the filter `name`.
bool AudioFilterAvailable(std::string_view name);

// kSpeechSampleRate is espeak-ng's output rate.
inline constexpr int kSpeechSampleRate = 22050;

// SpeechParams is one espeak-ng utterance.
struct SpeechParams {
    std::string text;             // UTF-8; SSML is not interpreted
    std::string voice = "en-us";  // espeak-ng voice name, optionally "+variant" (e.g. "en-us+f3")
    int rate_wpm = 175;           // 80..450 words per minute
    int pitch = 50;               // 0..100 (50 is the voice's own base pitch)
    int range = 50;               // 0..100 intonation range (0 is monotone)
    int volume = 100;             // 0..200
    int word_gap = 0;             // extra pause between words, units of 10 ms
};

// SynthesizeSpeech speaks `params` with espeak-ng and returns mono float PCM at 22.05 kHz.
// espeak-ng is one engine per process that keeps hidden state between utterances (pitch
// flutter phase, gain control, language settings), which would make the same request sound
// slightly different each time. So the engine is initialised once in this process and never
// used here: each utterance is spoken by a forked child, which starts from that same pristine
// state, writes its samples to a pipe and exits. Calls are serialised. `keep_going` (optional)
// is asked every ~50 ms; when it returns false the child is killed and an empty buffer returned.
// Throws MediaError when the voice does not exist or the engine fails.
AudioBuffer SynthesizeSpeech(const SpeechParams& params,
                             const std::function<bool()>& keep_going = {});

// SpeechVoiceExists reports whether espeak-ng has the voice `name` (language or
// language+variant).
bool SpeechVoiceExists(const std::string& name);

// EstimatePitch is the median fundamental frequency in Hz of the voiced 40 ms frames of `audio`
// (normalised autocorrelation, 60-500 Hz); 0 when nothing is voiced.
double EstimatePitch(const AudioBuffer& audio);

// EffectSpec describes a procedural sound effect.
struct EffectSpec {
    std::string prompt;  // keywords pick layers: rain, wind, whoosh, beep, explosion, ...
    double seconds = 2.0;
    bool loop = false;  // seamless: the end crossfades into the start
    std::uint64_t seed = 0;
    int sample_rate = 44100;
    int channels = 2;
    double pitch_semitones = 0;  // shifts the tonal layers
};

// SynthesizeEffect renders `spec`: exactly round(seconds * sample_rate) frames.
AudioBuffer SynthesizeEffect(const EffectSpec& spec);

// EffectLayers lists the layer names SynthesizeEffect picks for `prompt` (for docs and tests).
std::vector<std::string> EffectLayers(std::string_view prompt);

// FitFrames pads with silence or truncates `audio` to exactly `frames` frames.
void FitFrames(AudioBuffer& audio, std::int64_t frames);

// PeakLevel is the largest absolute sample; RmsLevel the root mean square.
float PeakLevel(const AudioBuffer& audio);
double RmsLevel(const AudioBuffer& audio);

// Resample converts `audio` to `rate` and `channels` with swresample.
AudioBuffer Resample(const AudioBuffer& audio, int rate, int channels);

}  // namespace genhost::media
