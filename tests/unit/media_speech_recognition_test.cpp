// Tests for the media module's speech recognition: the voice-activity detector on espeak-ng
// speech (clean and over a noise floor), and pocketsphinx transcription of espeak-ng sentences,
// whole and streamed, alone and behind the detector. Prints the timings it measures.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "genhost/media/audio.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/speech_recognition.hpp"

namespace genhost::media {
namespace {

using Pcm = std::vector<std::int16_t>;
using Clock = std::chrono::steady_clock;
constexpr int kRate = kRecognitionSampleRate;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The Klatt variant: pocketsphinx's en-US model recognises it far better than espeak-ng's
// default voice (whose formant synthesis it mostly mishears).
constexpr const char* kVoice = "en-us+klatt";

// Speak synthesises `text` at 16 kHz mono PCM16 with the project's own espeak-ng and resampler.
const Pcm& Speak(const std::string& text) {
    static std::map<std::string, Pcm> cache;
    if (const auto it = cache.find(text); it != cache.end()) return it->second;
    SpeechParams params;
    params.text = text;
    params.voice = kVoice;
    const AudioBuffer audio = Resample(SynthesizeSpeech(params), kRate, 1);
    Pcm pcm(audio.samples.size());
    for (std::size_t i = 0; i < pcm.size(); ++i) {
        const float v = std::clamp(audio.samples[i], -1.0f, 32767.0f / 32768.0f);
        pcm[i] = static_cast<std::int16_t>(std::lround(v * 32768.0f));
    }
    return cache.emplace(text, std::move(pcm)).first->second;
}

Pcm Silence(double seconds) { return Pcm(static_cast<std::size_t>(seconds * kRate), 0); }

void Append(Pcm& to, const Pcm& from) { to.insert(to.end(), from.begin(), from.end()); }

enum class Noise { kWhite, kPink };

// AddNoise mixes in noise of the given level (the mean square in dBFS, as the detector measures
// it) from a fixed seed: white, or pink (Paul Kellet's filter of white noise), which is closer
// to a room heard through a microphone.
void AddNoise(Pcm& pcm, double level_dbfs, std::uint32_t seed = 1, Noise color = Noise::kWhite) {
    std::vector<double> noise(pcm.size());
    std::uint32_t state = seed;
    double b0 = 0, b1 = 0, b2 = 0;
    double sum = 0;
    for (auto& n : noise) {
        state = state * 1664525u + 1013904223u;
        const double white = (state >> 8) / 16777216.0 * 2 - 1;
        if (color == Noise::kWhite) {
            n = white;
        } else {
            b0 = 0.99765 * b0 + white * 0.0990460;
            b1 = 0.96300 * b1 + white * 0.2965164;
            b2 = 0.57000 * b2 + white * 1.0526913;
            n = b0 + b1 + b2 + white * 0.1848;
        }
        sum += n * n;
    }
    if (noise.empty() || sum == 0) return;
    const double gain = 32768.0 * std::pow(10.0, level_dbfs / 20) /
                        std::sqrt(sum / static_cast<double>(noise.size()));
    for (std::size_t i = 0; i < pcm.size(); ++i) {
        pcm[i] = static_cast<std::int16_t>(
            std::clamp(std::lround(pcm[i] + gain * noise[i]), -32768L, 32767L));
    }
}

void AddPinkNoise(Pcm& pcm, double level_dbfs, std::uint32_t seed = 1) {
    AddNoise(pcm, level_dbfs, seed, Noise::kPink);
}

// Voiced is the part of a synthesised clip between its first and last sample above 2% of its
// peak (espeak-ng pads its speech with silence): what a detector should find.
const Pcm& Voiced(const std::string& text) {
    static std::map<std::string, Pcm> cache;
    if (const auto it = cache.find(text); it != cache.end()) return it->second;
    const Pcm& clip = Speak(text);
    int peak = 0;
    for (const auto s : clip) peak = std::max(peak, std::abs(static_cast<int>(s)));
    std::size_t begin = clip.size();
    std::size_t end = 0;
    for (std::size_t i = 0; i < clip.size(); ++i) {
        if (std::abs(static_cast<int>(clip[i])) > peak / 50) {
            begin = std::min(begin, i);
            end = i + 1;
        }
    }
    return cache
        .emplace(text, Pcm(clip.begin() + static_cast<std::ptrdiff_t>(begin),
                           clip.begin() + static_cast<std::ptrdiff_t>(end)))
        .first->second;
}

// Span is where a Voiced clip was put in a stream.
struct Span {
    std::int64_t begin = 0;
    std::int64_t end = 0;
};

// AppendVoiced appends Voiced(text) and returns where it went.
Span AppendVoiced(Pcm& stream, const std::string& text) {
    const auto begin = static_cast<std::int64_t>(stream.size());
    Append(stream, Voiced(text));
    return {begin, static_cast<std::int64_t>(stream.size())};
}

// FeedAll runs `pcm` through a fresh detector in chunks of `chunk` samples.
std::vector<VadEvent> FeedAll(const Pcm& pcm, std::size_t chunk, const VadOptions& options = {}) {
    VoiceActivityDetector vad(options);
    std::vector<VadEvent> events;
    for (std::size_t i = 0; i < pcm.size(); i += chunk) {
        const auto more = vad.Feed(
            std::span<const std::int16_t>(pcm).subspan(i, std::min(chunk, pcm.size() - i)));
        events.insert(events.end(), more.begin(), more.end());
    }
    return events;
}

std::string Describe(const std::vector<VadEvent>& events) {
    std::ostringstream out;
    for (const auto& e : events) {
        out << (e.kind == VadEvent::Kind::kSpeechStarted ? "start@" : "end@")
            << static_cast<double>(e.sample) / kRate << (e.cut ? "(cut)" : "") << " ";
    }
    return out.str();
}

constexpr std::int64_t kTolerance = kRate * 150 / 1000;  // 150 ms

const char* const kFrance = "what is the capital of france";
const char* const kHello = "hello how are you";
const char* const kHours = "tell me about the opening hours";

// ---- VoiceActivityDetector ----

TEST(VoiceActivityDetectorTest, FindsOneUtteranceInSilenceAndInNoise) {
    for (const double noise : {0.0, -50.0, -40.0}) {
        for (const Noise color : {Noise::kWhite, Noise::kPink}) {
            SCOPED_TRACE("noise " + std::to_string(noise) +
                         (color == Noise::kPink ? " pink" : " white"));
            Pcm stream = Silence(1.0);
            const Span truth = AppendVoiced(stream, kFrance);
            Append(stream, Silence(1.5));
            if (noise < 0) AddNoise(stream, noise, 1, color);

            const auto events = FeedAll(stream, 320);
            SCOPED_TRACE(Describe(events));
            ASSERT_EQ(events.size(), 2u);
            EXPECT_EQ(events[0].kind, VadEvent::Kind::kSpeechStarted);
            EXPECT_EQ(events[1].kind, VadEvent::Kind::kSpeechEnded);
            EXPECT_FALSE(events[1].cut);
            EXPECT_NEAR(events[0].sample, truth.begin, kTolerance);
            EXPECT_NEAR(events[1].sample, truth.end, kTolerance);
            // The same events whatever the chunking.
            for (const std::size_t chunk : {stream.size(), std::size_t{137}, std::size_t{1}}) {
                const auto again = FeedAll(stream, chunk);
                ASSERT_EQ(again.size(), 2u);
                for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(again[i].sample, events[i].sample);
            }
        }
    }
}

TEST(VoiceActivityDetectorTest, ReportsWhenItIsSpeakingAndWhenTheEndIsKnown) {
    Pcm stream = Silence(0.5);
    AppendVoiced(stream, kHello);
    Append(stream, Silence(1.0));
    AddNoise(stream, -50);
    VoiceActivityDetector vad;
    bool started = false;
    bool ended = false;
    for (std::size_t i = 0; i < stream.size(); i += 320) {
        const auto chunk = std::span<const std::int16_t>(stream).subspan(
            i, std::min<std::size_t>(320, stream.size() - i));
        for (const auto& e : vad.Feed(chunk)) {
            if (e.kind == VadEvent::Kind::kSpeechStarted) {
                started = true;
                EXPECT_TRUE(vad.speaking());
                // Reported once min_speech_ms of it has been heard.
                EXPECT_GE(vad.samples_fed() - e.sample, kRate / 5);
            } else {
                ended = true;
                EXPECT_FALSE(vad.speaking());
                // Reported after the hangover (600 ms) of quiet.
                EXPECT_GE(vad.samples_fed() - e.sample, kRate * 6 / 10);
                EXPECT_LE(vad.samples_fed() - e.sample, kRate * 6 / 10 + 320 + 160);
            }
        }
        if (started && !ended) {
            EXPECT_TRUE(vad.speaking());
        }
    }
    EXPECT_TRUE(started);
    EXPECT_TRUE(ended);
    EXPECT_NEAR(vad.noise_floor_dbfs(), -50, 3);
}

TEST(VoiceActivityDetectorTest, TwoUtterancesASecondApartAreTwo) {
    for (const double noise : {0.0, -50.0}) {
        SCOPED_TRACE("noise " + std::to_string(noise));
        Pcm stream = Silence(0.5);
        const Span first = AppendVoiced(stream, kHello);
        Append(stream, Silence(1.0));
        const Span second = AppendVoiced(stream, kHours);
        Append(stream, Silence(1.0));
        if (noise < 0) AddPinkNoise(stream, noise);
        const auto events = FeedAll(stream, 320);
        SCOPED_TRACE(Describe(events));
        ASSERT_EQ(events.size(), 4u);
        EXPECT_EQ(events[0].kind, VadEvent::Kind::kSpeechStarted);
        EXPECT_EQ(events[1].kind, VadEvent::Kind::kSpeechEnded);
        EXPECT_EQ(events[2].kind, VadEvent::Kind::kSpeechStarted);
        EXPECT_EQ(events[3].kind, VadEvent::Kind::kSpeechEnded);
        EXPECT_NEAR(events[0].sample, first.begin, kTolerance);
        EXPECT_NEAR(events[1].sample, first.end, kTolerance);
        EXPECT_NEAR(events[2].sample, second.begin, kTolerance);
        EXPECT_NEAR(events[3].sample, second.end, kTolerance);
    }
}

TEST(VoiceActivityDetectorTest, APauseShorterThanTheHangoverDoesNotSplit) {
    Pcm stream = Silence(0.5);
    const Span first = AppendVoiced(stream, kHello);
    Append(stream, Silence(0.4));
    const Span second = AppendVoiced(stream, kHours);
    Append(stream, Silence(1.0));
    AddNoise(stream, -50);
    const auto events = FeedAll(stream, 320);
    SCOPED_TRACE(Describe(events));
    ASSERT_EQ(events.size(), 2u);
    EXPECT_NEAR(events[0].sample, first.begin, kTolerance);
    EXPECT_NEAR(events[1].sample, second.end, kTolerance);
    // A hangover shorter than the pause splits it.
    VadOptions short_hangover;
    short_hangover.hangover_ms = 250;
    EXPECT_EQ(FeedAll(stream, 320, short_hangover).size(), 4u);
}

TEST(VoiceActivityDetectorTest, NoiseAndClicksTriggerNothing) {
    for (const double noise : {-60.0, -50.0, -40.0}) {
        Pcm stream = Silence(6.0);
        AddNoise(stream, noise, 7);
        EXPECT_TRUE(FeedAll(stream, 320).empty()) << noise;
    }
    // Clicks: 50 ms bursts, each alone in silence.
    Pcm clicks = Silence(0.5);
    for (int i = 0; i < 5; ++i) {
        Pcm burst(kRate / 20, 0);
        AddNoise(burst, -15, 3 + i);
        Append(clicks, burst);
        Append(clicks, Silence(1.0));
    }
    AddNoise(clicks, -55);
    EXPECT_TRUE(FeedAll(clicks, 320).empty());
    // Digital silence.
    EXPECT_TRUE(FeedAll(Silence(3.0), 320).empty());
}

TEST(VoiceActivityDetectorTest, CutsOverlongUtterancesAndChecksOptions) {
    VadOptions options;
    options.max_utterance_ms = 1000;
    Pcm stream = Silence(0.5);
    AppendVoiced(stream, kFrance);
    Append(stream, Silence(1.0));
    const auto events = FeedAll(stream, 320, options);
    SCOPED_TRACE(Describe(events));
    ASSERT_GE(events.size(), 2u);
    EXPECT_TRUE(events[1].cut);
    EXPECT_EQ(events[1].sample - events[0].sample, kRate);

    VadOptions bad;
    bad.sample_rate = 16001;
    EXPECT_THROW(VoiceActivityDetector{bad}, std::invalid_argument);
    bad = {};
    bad.continue_db = 20;  // above start_db
    EXPECT_THROW(VoiceActivityDetector{bad}, std::invalid_argument);
}

// ---- SpeechRecognizer ----

long ResidentKb() {
    std::ifstream statm("/proc/self/statm");
    long size = 0;
    long resident = 0;
    statm >> size >> resident;
    return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

// TheModel is the test program's shared model, loaded once (and timed).
std::shared_ptr<SpeechModel> TheModel() {
    static const std::shared_ptr<SpeechModel> model = [] {
        const long rss = ResidentKb();
        const auto t0 = Clock::now();
        auto m = std::make_shared<SpeechModel>();
        m->Prewarm(1);  // the first decoder is made on first use
        std::printf("[timing] model load (first decoder): %.3f s, +%ld MB resident\n",
                    Seconds(Clock::now() - t0), (ResidentKb() - rss) / 1024);
        return m;
    }();
    return model;
}

std::vector<std::string> Words(const std::string& text) {
    std::vector<std::string> words;
    std::istringstream in(text);
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

// InOrder counts the expected words that appear in the text, in order.
int InOrder(const std::string& text, const std::string& expected) {
    const auto got = Words(text);
    std::size_t at = 0;
    int found = 0;
    for (const auto& w : Words(expected)) {
        const auto it = std::find(got.begin() + static_cast<std::ptrdiff_t>(at), got.end(), w);
        if (it != got.end()) {
            ++found;
            at = static_cast<std::size_t>(it - got.begin()) + 1;
        }
    }
    return found;
}

struct Sentence {
    const char* text;
    std::vector<std::string> key_words;
};

// Sentences espeak-ng's Klatt voice says and pocketsphinx gets right over a quiet room's noise.
// Found by trying: "good morning" (heard "what are they") and "please turn on the lights"
// ("... the night") are not among them.
const std::vector<Sentence>& Sentences() {
    static const std::vector<Sentence> sentences = {
        {kFrance, {"capital", "france"}},
        {kHello, {"hello", "how", "you"}},
        {kHours, {"opening", "hours"}},
        {"what time is it", {"time"}},
        {"thank you very much", {"thank", "much"}},
        {"i would like to book a table for two", {"book", "table"}},
        {"where is the nearest train station", {"nearest", "train", "station"}},
        {"can you help me find a good restaurant", {"help", "restaurant"}},
        {"the weather is nice today", {"weather", "today"}},
        {"how old are you", {"old"}},
        {"what is your name", {"name"}},
        {"do you speak english", {"speak", "english"}},
        {"how much does it cost", {"cost"}},
        {"where can i buy a ticket", {"buy", "ticket"}},
    };
    return sentences;
}

// Over pink noise at -50 dBFS (a quiet room through a microphone) every key word must come
// back and 95% of all words, in order; clean (digital silence around the words, which
// pocketsphinx's noise estimate likes less) 80% of the words. (At -40 dBFS, a noisy room, 65
// of the 75 words came back when this was written.)
TEST(SpeechRecognizerTest, RecognisesKeyWordsOfSpokenSentences) {
    const auto model = TheModel();
    for (const double noise : {-50.0, 0.0}) {
        int total_words = 0;
        int total_found = 0;
        for (const auto& s : Sentences()) {
            Pcm pcm = Silence(0.3);
            Append(pcm, Speak(s.text));
            Append(pcm, Silence(0.3));
            if (noise < 0) AddPinkNoise(pcm, noise);
            SpeechRecognizer recognizer(model);
            const std::string text = recognizer.Transcribe(pcm);
            const int found = InOrder(text, s.text);
            total_words += static_cast<int>(Words(s.text).size());
            total_found += found;
            std::printf("[asr] noise %3.0f dBFS  said \"%s\"  heard \"%s\"  (%d/%zu words)\n",
                        noise, s.text, text.c_str(), found, Words(s.text).size());
            if (noise == 0) continue;
            for (const auto& key : s.key_words) {
                EXPECT_THAT(Words(text), testing::Contains(key))
                    << "said \"" << s.text << "\", heard \"" << text << "\"";
            }
        }
        std::printf("[asr] noise %3.0f dBFS: %d of %d words recognised in order\n", noise,
                    total_found, total_words);
        EXPECT_GE(total_found * 100, total_words * (noise < 0 ? 95 : 80)) << "noise " << noise;
    }
}

TEST(SpeechRecognizerTest, StreamingInAnyChunksGivesTheSameTextAsTranscribe) {
    const auto model = TheModel();
    Pcm pcm = Silence(0.3);
    Append(pcm, Speak(kFrance));
    Append(pcm, Silence(0.6));
    AddPinkNoise(pcm, -50);
    const std::string whole = SpeechRecognizer(model).Transcribe(pcm);
    EXPECT_THAT(Words(whole), testing::Contains("capital"));
    for (const std::size_t chunk : {std::size_t{320}, std::size_t{137}, std::size_t{4000}}) {
        SpeechRecognizer recognizer(model);
        recognizer.StartUtterance();
        EXPECT_TRUE(recognizer.in_utterance());
        for (std::size_t i = 0; i < pcm.size(); i += chunk) {
            recognizer.Feed(
                std::span<const std::int16_t>(pcm).subspan(i, std::min(chunk, pcm.size() - i)));
        }
        EXPECT_EQ(recognizer.EndUtterance(), whole) << chunk;
        EXPECT_FALSE(recognizer.in_utterance());
    }
}

TEST(SpeechRecognizerTest, EmptyAudioGivesNothingAndMisuseThrows) {
    SpeechRecognizer recognizer(TheModel());
    EXPECT_EQ(recognizer.Transcribe({}), "");
    recognizer.StartUtterance();
    EXPECT_EQ(recognizer.EndUtterance(), "");
    recognizer.StartUtterance();
    recognizer.Feed({});
    EXPECT_EQ(recognizer.EndUtterance(), "");
    EXPECT_THROW(recognizer.Feed(Silence(0.1)), std::logic_error);
    EXPECT_THROW(recognizer.EndUtterance(), std::logic_error);
    recognizer.StartUtterance();
    EXPECT_THROW(recognizer.Transcribe(Silence(0.1)), std::logic_error);
    recognizer.AbortUtterance();
    EXPECT_FALSE(recognizer.in_utterance());
    // Silence with a little noise is not words.
    Pcm quiet = Silence(1.0);
    AddNoise(quiet, -60);
    EXPECT_EQ(recognizer.Transcribe(quiet), "");
}

TEST(SpeechRecognizerTest, PooledDecodersGiveTheSameTextAsFreshOnes) {
    const auto model = TheModel();
    Pcm a = Speak(kHours);
    AddPinkNoise(a, -50, 11);
    Pcm b = Speak(kHello);
    AddPinkNoise(b, -50, 12);
    const std::string first = SpeechRecognizer(model).Transcribe(a);
    {
        // Another session wears the decoders (and leaves an utterance abandoned).
        SpeechRecognizer other(model);
        EXPECT_FALSE(other.Transcribe(b).empty());
        other.StartUtterance();
        other.Feed(b);
    }
    EXPECT_EQ(SpeechRecognizer(model).Transcribe(a), first);
    // Within a session the cepstral mean carries over: the same order gives the same texts.
    SpeechRecognizer x(model);
    SpeechRecognizer y(model);
    for (const Pcm* pcm : {&b, &a}) EXPECT_EQ(x.Transcribe(*pcm), y.Transcribe(*pcm));
}

TEST(SpeechRecognizerTest, SessionsOnThreadsDecodeInParallel) {
    const auto model = TheModel();
    std::vector<Pcm> clips;
    for (const char* text : {kFrance, kHours}) {
        Pcm pcm = Speak(text);
        AddPinkNoise(pcm, -50, 5);
        clips.push_back(std::move(pcm));
    }
    std::vector<std::string> together(clips.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < clips.size(); ++i) {
        threads.emplace_back([&, i] {
            try {
                together[i] = SpeechRecognizer(model).Transcribe(clips[i]);
            } catch (const std::exception& e) {
                together[i] = std::string("error: ") + e.what();
            }
        });
    }
    for (auto& t : threads) t.join();
    for (std::size_t i = 0; i < clips.size(); ++i) {
        EXPECT_EQ(together[i], SpeechRecognizer(model).Transcribe(clips[i]));
    }
    EXPECT_THAT(Words(together[0]), testing::Contains("france"));
    EXPECT_THAT(Words(together[1]), testing::Contains("opening"));
}

TEST(SpeechRecognizerTest, MissingModelFilesNameTheFileAndThePackage) {
    SpeechModelFiles files;
    files.language_model = "/nonexistent/en-us.lm.bin";
    try {
        SpeechModel model(files);
        FAIL() << "no exception";
    } catch (const MediaError& e) {
        EXPECT_THAT(e.what(), testing::HasSubstr("/nonexistent/en-us.lm.bin"));
        EXPECT_THAT(e.what(), testing::HasSubstr("pocketsphinx-en-us"));
    }
    files = {};
    files.acoustic_model = "/nonexistent/en-us";
    EXPECT_THROW(SpeechModel{files}, std::runtime_error);
}

// The detector in front of a streaming recognizer, as a realtime session runs them: 20 ms
// frames, decoding from 200 ms before the reported start while the user speaks.
TEST(SpeechRecognizerTest, DetectorAndStreamingRecognizerTogether) {
    Pcm stream = Silence(0.8);
    Append(stream, Speak(kFrance));
    Append(stream, Silence(1.0));
    Append(stream, Speak(kHello));
    Append(stream, Silence(1.0));
    AddPinkNoise(stream, -45, 9);

    VoiceActivityDetector vad;
    SpeechRecognizer recognizer(TheModel());
    std::vector<std::string> texts;
    std::vector<double> end_latency;
    constexpr std::int64_t kPreroll = kRate / 5;
    constexpr std::size_t kFrame = kRate / 50;
    std::int64_t decoded_to = 0;  // stream samples given to the recognizer
    for (std::size_t i = 0; i < stream.size(); i += kFrame) {
        const auto frame =
            std::span<const std::int16_t>(stream).subspan(i, std::min(kFrame, stream.size() - i));
        for (const auto& e : vad.Feed(frame)) {
            if (e.kind == VadEvent::Kind::kSpeechStarted) {
                recognizer.StartUtterance();
                decoded_to = std::max<std::int64_t>(0, e.sample - kPreroll);
            } else {
                // Everything up to the end of the hangover has been decoded already.
                const auto t0 = Clock::now();
                texts.push_back(recognizer.EndUtterance());
                end_latency.push_back(Seconds(Clock::now() - t0));
            }
        }
        // While speaking, decode what has arrived (the new frame included).
        if (recognizer.in_utterance()) {
            const auto until = static_cast<std::int64_t>(i + frame.size());
            recognizer.Feed(std::span<const std::int16_t>(stream).subspan(
                static_cast<std::size_t>(decoded_to),
                static_cast<std::size_t>(until - decoded_to)));
            decoded_to = until;
        }
    }
    ASSERT_EQ(texts.size(), 2u);
    std::printf("[asr] behind the detector: \"%s\" / \"%s\"; EndUtterance took %.3f / %.3f s\n",
                texts[0].c_str(), texts[1].c_str(), end_latency[0], end_latency[1]);
    EXPECT_THAT(Words(texts[0]), testing::Contains("capital"));
    EXPECT_THAT(Words(texts[0]), testing::Contains("france"));
    EXPECT_THAT(Words(texts[1]), testing::Contains("hello"));
}

// Timings for the documentation (printed; only loosely asserted).
TEST(SpeechRecognizerTest, Timings) {
    const auto model = TheModel();
    // Decoders of a second model: the constructor makes none (it checks the files), the first
    // Prewarm one, the second another.
    SpeechModel other(SpeechModelFiles{}, 2);
    EXPECT_EQ(other.idle_decoders(), 0);
    long rss = ResidentKb();
    auto t0 = Clock::now();
    other.Prewarm(1);
    const double first = Seconds(Clock::now() - t0);
    const long first_kb = ResidentKb() - rss;
    rss = ResidentKb();
    t0 = Clock::now();
    other.Prewarm(2);
    const double second = Seconds(Clock::now() - t0);
    std::printf("[timing] decoder create: %.3f s (+%ld MB resident), another %.3f s (+%ld MB)\n",
                first, first_kb / 1024, second, (ResidentKb() - rss) / 1024);
    EXPECT_EQ(other.idle_decoders(), 2);

    // The detector over a minute of noisy audio, in 20 ms frames.
    Pcm minute = Silence(60.0);
    AddPinkNoise(minute, -50);
    VoiceActivityDetector vad;
    t0 = Clock::now();
    for (std::size_t i = 0; i < minute.size(); i += 320) {
        vad.Feed(std::span<const std::int16_t>(minute).subspan(i, 320));
    }
    std::printf("[timing] detector: %.1f ms per minute of audio\n",
                1000 * Seconds(Clock::now() - t0));

    Pcm pcm = Speak("can you tell me about the opening hours of the museum");
    AddPinkNoise(pcm, -50);
    const double seconds = static_cast<double>(pcm.size()) / kRate;
    SpeechRecognizer recognizer(model);
    recognizer.Transcribe(pcm);  // warm
    t0 = Clock::now();
    const std::string text = recognizer.Transcribe(pcm);
    const double whole = Seconds(Clock::now() - t0);
    std::printf("[timing] transcribe %.2f s of speech: %.3f s (real-time factor %.3f): \"%s\"\n",
                seconds, whole, whole / seconds, text.c_str());

    // Streamed in 20 ms frames: what is left after the last frame is the reply latency.
    recognizer.StartUtterance();
    double feeding = 0;
    for (std::size_t i = 0; i < pcm.size(); i += 320) {
        t0 = Clock::now();
        recognizer.Feed(std::span<const std::int16_t>(pcm).subspan(
            i, std::min<std::size_t>(320, pcm.size() - i)));
        feeding += Seconds(Clock::now() - t0);
    }
    t0 = Clock::now();
    const std::string streamed = recognizer.EndUtterance();
    const double end = Seconds(Clock::now() - t0);
    std::printf("[timing] streamed: %.3f s spent in Feed, EndUtterance %.3f s\n", feeding, end);
    EXPECT_THAT(Words(text), testing::Contains("opening"));
    EXPECT_LT(whole / seconds, 2.0);  // sanitizers slow the test build; release is ~0.1
}

}  // namespace
}  // namespace genhost::media
