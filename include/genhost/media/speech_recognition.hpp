// genhost/media/speech_recognition.hpp
//
// Provides the listening side of realtime avatar sessions (16 kHz mono PCM16 from a browser):
// - VoiceActivityDetector: finds where utterances start and end in a stream of samples (frame
//   energy against an adaptive noise floor, with a hangover of trailing silence);
// - SpeechModel: the pocketsphinx en-US model (Debian package pocketsphinx-en-us) and a pool
//   of decoders made from it, shared by every session of the process;
// - SpeechRecognizer: one session's transcription, of a whole utterance or streamed while the
//   user speaks.
//
// Errors: SpeechModel throws MediaError (a std::runtime_error, genhost/media/image.hpp) naming
// the missing file and the package that provides it when the model files are absent, and
// MediaError when pocketsphinx cannot load them; SpeechRecognizer throws MediaError when
// pocketsphinx fails while decoding (the utterance is then dropped), and std::logic_error when
// misused (Feed or EndUtterance without StartUtterance, Transcribe inside a streamed
// utterance). Impossible options throw std::invalid_argument; VoiceActivityDetector throws
// nothing else.
//
// Threads: a VoiceActivityDetector or SpeechRecognizer belongs to one thread at a time (a
// session's). SpeechModel is thread-safe; decoders are created and freed one at a time under a
// process-wide mutex (sphinxbase keeps a few globals), and each is used by one recognizer at a
// time, so recognizers on different threads decode in parallel. pocketsphinx's own logging is
// switched off for the whole process (err_set_logfp(NULL)) before the first decoder is made.
//
// Everything is deterministic: the same samples give the same events and, for a recognizer with
// the same history, the same text, whatever the chunk sizes they arrive in.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace genhost::media {

// kRecognitionSampleRate is the rate SpeechRecognizer takes (the en-US model's rate).
inline constexpr int kRecognitionSampleRate = 16000;

// VadOptions are VoiceActivityDetector's thresholds. Levels are the mean square of a 10 ms
// frame in dB relative to a full-scale square wave (a full-scale sine is -3 dBFS).
struct VadOptions {
    int sample_rate = kRecognitionSampleRate;  // 8000..48000; frames are 10 ms of it
    double start_db = 12;          // a frame this far above the noise floor can start speech
    double continue_db = 6;        // a frame this far above it keeps an utterance going
    double min_level_dbfs = -55;   // a frame quieter than this is never speech
    int min_speech_ms = 200;       // an utterance with less loud time than this is a click
    int hangover_ms = 600;         // this much quiet after the last loud frame ends an utterance
    int noise_window_ms = 3000;    // the noise floor is the quietest frame of this window
    int max_utterance_ms = 20000;  // a longer utterance is cut here (ended; speech restarts it)
};

// VadEvent is a change VoiceActivityDetector::Feed reports. Sample indices count from the first
// sample fed (or the last Reset).
struct VadEvent {
    enum class Kind { kSpeechStarted, kSpeechEnded };
    Kind kind = Kind::kSpeechStarted;
    // kSpeechStarted: the first sample of the utterance's first loud frame. It is reported once
    // the utterance has min_speech_ms of loud frames, so up to a few hundred ms later.
    // kSpeechEnded: one past the last sample of its last loud frame. It is reported hangover_ms
    // later (samples_fed() tells when), or at once when cut.
    std::int64_t sample = 0;
    bool cut = false;  // kSpeechEnded because the utterance reached max_utterance_ms
};

// VoiceActivityDetector classifies 10 ms frames: loud when the frame's level (after a 100 Hz
// high-pass) exceeds both min_level_dbfs and the noise floor by start_db (continue_db inside an
// utterance). The noise floor is the quietest frame of the last noise_window_ms (minimum
// statistics over 250 ms blocks), so it follows a changing background within that time and
// speech pauses keep it down. A loud frame opens a candidate utterance; gaps shorter than
// hangover_ms join loud frames into one; the candidate becomes speech (kSpeechStarted) once it
// holds min_speech_ms of loud frames, and is dropped silently when it ends before that. A
// background that jumps by more than start_db (a fan switched on) reads as speech until the
// window has forgotten the quieter past: one false utterance of up to about noise_window_ms.
// Costs a few operations per sample (under 10 ms per minute of audio in the sanitizer build) and
// under 1 KB; results do not depend on how samples are chunked.
class VoiceActivityDetector {
  public:
    explicit VoiceActivityDetector(const VadOptions& options = {});

    // Feed takes the next samples (any count, also 0) and returns the events they complete, in
    // order (usually none).
    std::vector<VadEvent> Feed(std::span<const std::int16_t> samples);

    // speaking is true between a kSpeechStarted event and its kSpeechEnded event.
    bool speaking() const { return state_ == State::kSpeech; }
    // samples_fed counts the samples fed since construction or Reset.
    std::int64_t samples_fed() const { return fed_; }
    // noise_floor_dbfs is the current noise floor estimate (-120 before the first frame).
    double noise_floor_dbfs() const;
    // Reset forgets everything (noise floor included), as if newly made.
    void Reset();

    const VadOptions& options() const { return options_; }

  private:
    enum class State { kSilence, kCandidate, kSpeech };
    void EndFrame(std::vector<VadEvent>& events);

    VadOptions options_;
    int frame_samples_ = 160;
    int hangover_frames_ = 60;
    int min_speech_frames_ = 20;
    std::int64_t max_utterance_frames_ = 2000;
    int block_frames_ = 25;
    std::vector<double> block_minima_;  // ring of the completed blocks' quietest levels

    std::int64_t fed_ = 0;
    // The high-pass filter's last input and output; the frame being filled.
    double hp_prev_in_ = 0;
    double hp_prev_out_ = 0;
    double frame_energy_ = 0;
    int frame_fill_ = 0;
    std::int64_t frame_index_ = 0;  // of the frame being filled
    // Noise floor bookkeeping.
    double block_min_ = 0;
    int block_fill_ = 0;
    std::size_t ring_next_ = 0;
    std::size_t ring_size_ = 0;
    // Utterance bookkeeping.
    State state_ = State::kSilence;
    std::int64_t start_frame_ = 0;      // first loud frame of the candidate or utterance
    std::int64_t last_loud_frame_ = 0;  // its latest loud frame
    int loud_frames_ = 0;               // loud frames in the candidate
};

// SpeechModelFiles are the pocketsphinx model files; the defaults are where Debian's
// pocketsphinx-en-us installs them.
struct SpeechModelFiles {
    std::string acoustic_model = "/usr/share/pocketsphinx/model/en-us/en-us";  // a directory
    std::string dictionary = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict";
    std::string language_model = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin";
};

// SpeechModel is a shared pool of pocketsphinx decoders made from one configuration.
//
// pocketsphinx 0.8+5prealpha gives no way to share loaded model data between decoders: every
// ps_decoder_t loads the acoustic model, the 134k-word dictionary and the trigram language
// model itself, and a decoder is not thread-safe. Measured on the development machine (2 cores,
// busy with a compiler at the time; warm page cache; the Debian library, no sanitizers): a
// decoder takes 0.2-0.25 s to make and 91 MB of resident memory, which ps_free returns (under
// ASan 0.4-0.6 s and 115 MB). Decoding runs at 0.11-0.18 of real time: a 3 s utterance takes
// 0.47-0.54 s of one core, of which 0.11-0.14 s are the final search passes in EndUtterance,
// the reply latency when the samples were streamed. So a recognizer leases a decoder only for
// one utterance: StartUtterance takes an idle one (or makes one), EndUtterance gives it back.
// Memory is 91 MB times the number of utterances decoded at once, plus max_idle_decoders
// kept warm.
//
// A leased decoder is reset for each utterance (ps_start_stream resets the noise estimate,
// the recognizer's own cepstral mean is restored), so text does not depend on which decoder
// ran it. Construction checks the files (so a missing model fails here, not in a session; it
// throws MediaError); the first decoder, about 90 MB, is made when first needed, so a node that
// never recognises speech does not hold it.
class SpeechModel {
  public:
    explicit SpeechModel(SpeechModelFiles files = {}, int max_idle_decoders = 2);
    ~SpeechModel();
    SpeechModel(const SpeechModel&) = delete;
    SpeechModel& operator=(const SpeechModel&) = delete;

    // Prewarm makes decoders until `count` are idle (bounded by max_idle_decoders).
    void Prewarm(int count);
    // idle_decoders counts the decoders waiting in the pool.
    int idle_decoders() const;

    const SpeechModelFiles& files() const;

  private:
    friend class SpeechRecognizer;
    struct Pool;
    std::shared_ptr<Pool> pool_;  // shared with the recognizers, which may outlive the model
};

// SpeechRecognizer transcribes one session's utterances: 16 kHz mono PCM16 in, lower-case
// English words separated by single spaces out ("" when nothing was recognised). Samples are
// decoded in blocks of 100 ms as they arrive, so at EndUtterance only the last block and the
// final passes remain. It keeps the session's cepstral mean (pocketsphinx's live channel
// normalisation) from one utterance to the next, so later utterances adapt to the microphone;
// two recognizers given the same utterances in the same order return the same texts.
// Utterances are decoded up to kMaxUtteranceSeconds; later samples are ignored. Behind a
// VoiceActivityDetector, start feeding about 200 ms before its kSpeechStarted sample: the noise
// estimate needs a little background before the first word (without it a leading "hello" can
// come back as "so").
class SpeechRecognizer {
  public:
    static constexpr int kMaxUtteranceSeconds = 60;

    explicit SpeechRecognizer(std::shared_ptr<SpeechModel> model);
    ~SpeechRecognizer();
    SpeechRecognizer(const SpeechRecognizer&) = delete;
    SpeechRecognizer& operator=(const SpeechRecognizer&) = delete;

    // Transcribe decodes a whole utterance: the same as StartUtterance, Feed(pcm16k),
    // EndUtterance. Empty input gives "" without touching a decoder.
    std::string Transcribe(std::span<const std::int16_t> pcm16k);

    // StartUtterance leases a decoder and opens an utterance (one already open is abandoned).
    void StartUtterance();
    // Feed decodes the next samples of the open utterance.
    void Feed(std::span<const std::int16_t> pcm16k);
    // EndUtterance finishes the search, returns the text and gives the decoder back.
    std::string EndUtterance();
    // AbortUtterance drops the open utterance, if any (a false start, a barge-in).
    void AbortUtterance();
    bool in_utterance() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace genhost::media
