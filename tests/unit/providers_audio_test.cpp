// Tests for the builtin provider's audio pipelines (src/providers/pipelines_audio.cpp) and their
// data (src/providers/audio_voices.hpp): every output is decoded again (libavformat probe and the
// media module's reader) and checked for container, codec, sample rate, channels, duration,
// non-silence, what the request's knobs change, determinism and failures on corrupt input.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../../src/providers/audio_voices.hpp"
#include "genhost/catalog/catalog.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/media/audio.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/video.hpp"
#include "genhost/providers/builtin.hpp"
#include "genhost/providers/inputs.hpp"
#include "provider_test_catalog.hpp"

namespace genhost::providers {
namespace {

using json = nlohmann::json;
using media::AudioBuffer;
using ::testing::HasSubstr;

constexpr char kTaskId[] = "6a1d2c3e-1111-4222-8333-444455556666";

using test::ReadSource;
using test::TheCatalog;

class TempDir {
  public:
    TempDir() {
        path_ = std::filesystem::temp_directory_path() /
                ("genhost_providers_audio_" + std::to_string(::getpid()) + "_" +
                 std::to_string(counter_++));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::string path() const { return path_.string(); }

  private:
    static inline int counter_ = 0;
    std::filesystem::path path_;
};

std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Result is one run: its output (file bytes), the decoded probe and progress reports.
struct Result {
    Output output;
    std::string bytes;
    media::MediaInfo info;
    std::vector<double> progress;
};

Result RunTask(const std::string& endpoint, const json& input,
               const std::string& task_id = kTaskId) {
    TempDir scratch;
    DataUriResolver resolver;
    std::atomic<bool> cancelled{false};
    Result r;
    TaskContext ctx(
        task_id, endpoint, input.at("model").get<std::string>(), input, cancelled,
        [&](double p) { r.progress.push_back(p); }, scratch.path() + "/run", &resolver);
    BuiltinProvider provider(TheCatalog(), 0);
    const auto outputs = provider.Run(ctx);
    EXPECT_EQ(outputs.size(), 1u);
    if (outputs.empty()) return r;
    r.output = outputs[0];
    EXPECT_TRUE(r.output.data.empty());
    EXPECT_FALSE(r.output.file.empty());
    EXPECT_EQ(r.output.file.rfind(scratch.path() + "/run/", 0), 0u) << r.output.file;
    r.bytes = Slurp(r.output.file);
    r.info = media::ProbeMediaFile(r.output.file);
    return r;
}

// FailureCode runs a task expected to fail and returns its failure code.
std::string FailureCode(const std::string& endpoint, const json& input) {
    try {
        RunTask(endpoint, input);
    } catch (const TaskFailure& f) {
        return f.code();
    }
    return "none";
}

// Decode writes the bytes to a file and reads them back as mono at `rate` (0: the probe's).
AudioBuffer Decode(const Result& r, int rate = 0, int channels = 1) {
    TempDir dir;
    const std::string path = dir.path() + "/x";
    std::ofstream(path, std::ios::binary)
        .write(r.bytes.data(), static_cast<std::streamsize>(r.bytes.size()));
    media::AudioReadOptions options;
    options.sample_rate = rate > 0 ? rate : r.info.sample_rate;
    options.channels = channels;
    return media::ReadAudio(path, options);
}

std::string DataUri(const std::string& type, const std::string& bytes) {
    return "data:" + type + ";base64," + Base64Encode(bytes);
}

AudioBuffer Speech(const std::string& text, const std::string& voice) {
    media::SpeechParams p;
    p.text = text;
    p.voice = voice;
    return media::SynthesizeSpeech(p);
}

std::string Wav(const AudioBuffer& a) {
    media::AudioEncoding e;
    e.format = media::AudioFormat::kWav;
    e.sample_rate = a.sample_rate;
    e.channels = a.channels;
    return media::WriteAudio(a, e);
}

// Noise is deterministic white noise of `seconds` at `level` (peak).
AudioBuffer Noise(double seconds, int rate, float level) {
    AudioBuffer a;
    a.sample_rate = rate;
    a.samples.resize(static_cast<std::size_t>(std::llround(seconds * rate)));
    std::uint32_t x = 12345;
    for (float& v : a.samples) {
        x = x * 1664525u + 1013904223u;
        v = level * (static_cast<float>(x >> 8) / 8388608.0f - 1.0f);
    }
    return a;
}

// Mix returns `a` with `b` added at `at` seconds (a grows when needed).
AudioBuffer Mix(AudioBuffer a, const AudioBuffer& b, double at) {
    const auto start = static_cast<std::size_t>(std::llround(at * a.sample_rate));
    if (a.samples.size() < start + b.samples.size()) a.samples.resize(start + b.samples.size());
    for (std::size_t i = 0; i < b.samples.size(); ++i) a.samples[start + i] += b.samples[i];
    return a;
}

double RmsBetween(const AudioBuffer& a, double from, double to) {
    const auto f = static_cast<std::int64_t>(from * a.sample_rate);
    const auto t =
        std::min<std::int64_t>(a.frames(), static_cast<std::int64_t>(to * a.sample_rate));
    double sum = 0;
    for (std::int64_t i = f; i < t; ++i) {
        for (int c = 0; c < a.channels; ++c) {
            const float v = a.samples[static_cast<std::size_t>(i * a.channels + c)];
            sum += v * v;
        }
    }
    return t > f ? std::sqrt(sum / static_cast<double>((t - f) * a.channels)) : 0;
}

AudioBuffer Window(const AudioBuffer& a, double from, double to) {
    AudioBuffer w;
    w.sample_rate = a.sample_rate;
    w.channels = a.channels;
    const auto f = static_cast<std::size_t>(from * a.sample_rate) * a.channels;
    const auto t =
        std::min(a.samples.size(), static_cast<std::size_t>(to * a.sample_rate) * a.channels);
    w.samples.assign(a.samples.begin() + static_cast<std::ptrdiff_t>(f),
                     a.samples.begin() + static_cast<std::ptrdiff_t>(t));
    return w;
}

json Tts(const std::string& model, const std::string& voice, const std::string& text = "Hello.") {
    json in = {{"model", model}, {"promptText", text}};
    if (!voice.empty()) in["voice"] = {{"type", "service-preset"}, {"presetId", voice}};
    return in;
}

// --- voice table and text helpers ---------------------------------------------------------

TEST(AudioVoices, FortyNineVoicesInTheSchemaOrder) {
    const json common = json::parse(ReadSource("schemas/common.json"));
    const auto& ids = common["$defs"]["speechVoiceId"]["enum"];
    const auto voices = audio::Voices();
    ASSERT_EQ(voices.size(), 49u);
    ASSERT_EQ(ids.size(), 49u);
    for (std::size_t i = 0; i < voices.size(); ++i) {
        EXPECT_EQ(voices[i].id, ids[i].get<std::string>());
        EXPECT_EQ(audio::FindVoice(voices[i].id), &voices[i]);
    }
    EXPECT_EQ(audio::FindVoice("Nobody"), nullptr);
}

TEST(AudioVoices, EveryVoiceIsDistinctAndExistsInEspeak) {
    std::set<std::tuple<std::string, std::string, int, int, double, double, std::string>> seen;
    for (const auto& v : audio::Voices()) {
        EXPECT_TRUE(
            seen.emplace(v.accent, v.variant, v.pitch, v.range, v.speed, v.tract, v.colour).second)
            << v.id;
        EXPECT_TRUE(media::SpeechVoiceExists(std::string(v.accent) + "+" + v.variant)) << v.id;
        EXPECT_TRUE(media::AudioFilterAvailable(
            std::string(v.colour).substr(0, std::string(v.colour).find_first_of("=,"))))
            << v.id;
        EXPECT_GT(v.tract, 0.5);
        EXPECT_LT(v.tract, 2.0);
    }
}

TEST(AudioVoices, EveryDubbingLanguageHasAVoiceAndAScript) {
    const json schema = json::parse(ReadSource("schemas/voice_dubbing.json"));
    const auto& langs = schema["$defs"]["voice_dubbing"]["properties"]["targetLang"]["enum"];
    const auto codes = audio::DubbingLanguages();
    ASSERT_EQ(codes.size(), langs.size());
    std::set<std::string> scripts;
    for (std::size_t i = 0; i < codes.size(); ++i) {
        EXPECT_EQ(codes[i], langs[i].get<std::string>());
        const std::string voice = audio::LanguageVoice(codes[i]);
        EXPECT_FALSE(voice.empty()) << codes[i];
        EXPECT_TRUE(media::SpeechVoiceExists(voice)) << codes[i] << " " << voice;
        EXPECT_TRUE(scripts.emplace(audio::PlaceholderScript(codes[i])).second) << codes[i];
    }
    EXPECT_EQ(audio::LanguageVoice("zh"), "cmn");
    EXPECT_EQ(audio::LanguageVoice("pt-BR"), "pt-br");
    EXPECT_EQ(audio::LanguageVoice("xx"), "");
}

TEST(AudioVoices, DetectsLanguages) {
    EXPECT_EQ(audio::DetectLanguage("Hello, how are you doing today?"), "en");
    EXPECT_EQ(audio::DetectLanguage("¿Dónde está la estación de tren?"), "es");
    EXPECT_EQ(audio::DetectLanguage("Ich weiß nicht, ob das die richtige Straße ist."), "de");
    EXPECT_EQ(audio::DetectLanguage("Je ne sais pas où est la gare, c'est loin?"), "fr");
    EXPECT_EQ(audio::DetectLanguage("Привет, как дела?"), "ru");
    EXPECT_EQ(audio::DetectLanguage("Привіт, як справи? Це її місто."), "uk");
    EXPECT_EQ(audio::DetectLanguage("你好，今天天气很好。"), "zh");
    EXPECT_EQ(audio::DetectLanguage("こんにちは、元気ですか。"), "ja");
    EXPECT_EQ(audio::DetectLanguage("안녕하세요"), "ko");
    EXPECT_EQ(audio::DetectLanguage("नमस्ते, आप कैसे हैं?"), "hi");
    EXPECT_EQ(audio::DetectLanguage("مرحبا كيف حالك"), "ar");
    EXPECT_EQ(audio::DetectLanguage("Καλημέρα σας"), "el");
    EXPECT_EQ(audio::DetectLanguage("12345"), "en");
}

TEST(AudioVoices, SplitsExpressiveTags) {
    const auto s = audio::SplitExpressiveTags(
        "Hi there. [whispers] A secret. [laughs] [unknown tag] Done [shouting] NOW");
    ASSERT_EQ(s.size(), 5u);
    EXPECT_EQ(s[0].text, "Hi there. ");
    EXPECT_EQ(s[0].delivery, "");
    EXPECT_EQ(s[1].delivery, "whisper");
    EXPECT_EQ(s[1].text, " A secret. ");
    EXPECT_EQ(s[2].delivery, "laugh");
    EXPECT_EQ(s[2].text, "");
    EXPECT_EQ(s[3].text, " Done ");
    EXPECT_EQ(s[4].delivery, "loud");
    EXPECT_TRUE(audio::SplitExpressiveTags("[sighs]").empty());
    EXPECT_EQ(audio::SplitExpressiveTags("no [tags").at(0).text, "no [tags");
}

TEST(AudioVoices, NormalizesSymbols) {
    EXPECT_EQ(audio::NormalizeText("50% off"), "50 percent off");
    EXPECT_THAT(audio::NormalizeText("Tom & Jerry"), HasSubstr(" and "));
    EXPECT_THAT(audio::NormalizeText("it costs $12.50 now"), HasSubstr("12.50 dollars"));
    EXPECT_THAT(audio::NormalizeText("\xE2\x82\xAC"
                                     "5"),
                HasSubstr("5 euros"));
    EXPECT_THAT(audio::NormalizeText("a@b"), HasSubstr(" at "));
}

// --- text_to_speech -----------------------------------------------------------------------

TEST(BuiltinTextToSpeech, MultilingualV2SpeaksMp3) {
    const auto r = RunTask("text_to_speech", Tts("voice_multilingual_v2", "Maya", "Hello there."));
    EXPECT_EQ(r.output.suffix, "0.mp3");
    EXPECT_EQ(r.info.audio_codec, "mp3");
    EXPECT_EQ(r.info.sample_rate, 44100);
    EXPECT_EQ(r.info.channels, 1);
    const AudioBuffer a = Decode(r);
    EXPECT_GT(a.seconds(), 0.4);
    EXPECT_LT(a.seconds(), 3.0);
    EXPECT_GT(media::RmsLevel(a), 0.03);
    ASSERT_FALSE(r.progress.empty());
    EXPECT_DOUBLE_EQ(r.progress.back(), 1.0);
    for (std::size_t i = 1; i < r.progress.size(); ++i) EXPECT_GE(r.progress[i], r.progress[i - 1]);
}

TEST(BuiltinTextToSpeech, EveryPresetVoiceSoundsDifferent) {
    // Not only different bytes: any two voices differ in length by over 3 %, or their waveforms
    // differ by more than half their level.
    std::set<std::string> outputs;
    std::vector<std::pair<std::string, AudioBuffer>> decoded;
    for (const auto& v : audio::Voices()) {
        const auto r = RunTask("text_to_speech", Tts("voice_multilingual_v2", v.id, "Hi."));
        ASSERT_GT(r.info.duration_seconds, 0.1) << v.id;
        EXPECT_TRUE(outputs.insert(r.bytes).second) << v.id << " sounds like another voice";
        decoded.emplace_back(v.id, Decode(r, 16000));
    }
    for (std::size_t i = 0; i < decoded.size(); ++i) {
        for (std::size_t j = i + 1; j < decoded.size(); ++j) {
            const AudioBuffer& a = decoded[i].second;
            const AudioBuffer& b = decoded[j].second;
            if (std::abs(a.seconds() - b.seconds()) > 0.03 * std::max(a.seconds(), b.seconds())) {
                continue;
            }
            const std::size_t n = std::min(a.samples.size(), b.samples.size());
            double diff = 0;
            for (std::size_t k = 0; k < n; ++k) {
                diff += (a.samples[k] - b.samples[k]) * (a.samples[k] - b.samples[k]);
            }
            diff = std::sqrt(diff / static_cast<double>(n));
            EXPECT_GT(diff, 0.5 * std::max(media::RmsLevel(a), media::RmsLevel(b)))
                << decoded[i].first << " vs " << decoded[j].first;
        }
    }
}

TEST(BuiltinTextToSpeech, VoicesHaveTheirPitch) {
    auto pitch = [](const char* voice) {
        const auto r = RunTask("text_to_speech",
                               Tts("voice_multilingual_v2", voice, "We were away a year ago."));
        return media::EstimatePitch(Decode(r, 16000));
    };
    const double vincent = pitch("Vincent");
    const double mark = pitch("Mark");
    const double maya = pitch("Maya");
    const double pip = pitch("Pip");
    EXPECT_GT(vincent, 0);
    EXPECT_LT(vincent, mark);
    EXPECT_LT(mark, maya);
    EXPECT_LT(maya, pip);
}

TEST(BuiltinTextToSpeech, SeedAudioFormatsAndRates) {
    struct Case {
        const char* format;
        int rate;
        const char* codec;
        const char* suffix;
    };
    for (const Case c :
         {Case{"wav", 8000, "pcm_s16le", "0.wav"}, Case{"mp3", 16000, "mp3", "0.mp3"},
          Case{"ogg_opus", 24000, "opus", "0.ogg"}, Case{"wav", 48000, "pcm_s16le", "0.wav"}}) {
        json in = Tts("seed_audio", "", "Good morning.");
        in["outputFormat"] = c.format;
        in["sampleRate"] = c.rate;
        const auto r = RunTask("text_to_speech", in);
        EXPECT_EQ(r.output.suffix, c.suffix);
        EXPECT_EQ(r.info.audio_codec, c.codec) << c.format;
        // Opus always codes at 48 kHz (the requested rate is in the OpusHead).
        EXPECT_EQ(r.info.sample_rate, std::string(c.format) == "ogg_opus" ? 48000 : c.rate);
        EXPECT_EQ(r.info.channels, 1);
        EXPECT_GT(media::RmsLevel(Decode(r)), 0.02) << c.format;
    }
}

TEST(BuiltinTextToSpeech, SeedAudioDefaultsToMp3At24k) {
    const auto r = RunTask("text_to_speech", Tts("seed_audio", "", "Good morning."));
    EXPECT_EQ(r.info.audio_codec, "mp3");
    EXPECT_EQ(r.info.sample_rate, 24000);
}

TEST(BuiltinTextToSpeech, SeedAudioRatesChangeSpeedLoudnessAndPitch) {
    const std::string text = "We were away a year ago.";
    auto run = [&](const char* field, int value) {
        json in = Tts("seed_audio", "", text);
        in["outputFormat"] = "wav";
        in["sampleRate"] = 16000;
        in[field] = value;
        return Decode(RunTask("text_to_speech", in));
    };
    EXPECT_LT(run("speechRate", 100).seconds() * 1.5, run("speechRate", -50).seconds());
    EXPECT_GT(media::RmsLevel(run("loudnessRate", 60)),
              1.5 * media::RmsLevel(run("loudnessRate", -50)));
    const double low = media::EstimatePitch(run("pitchRate", -6));
    const double high = media::EstimatePitch(run("pitchRate", 6));
    EXPECT_NEAR(high / low, 2.0, 0.3);
}

TEST(BuiltinTextToSpeech, SeedAudioClonesTheReferencePitch) {
    // A reference voice an octave apart from another gives output pitches far apart too.
    AudioBuffer low = Speech("We were away a year ago, all of us.", "en-us+m7");
    AudioBuffer high = Speech("We were away a year ago, all of us.", "en-us+f5");
    const double low_f0 = media::EstimatePitch(low);
    const double high_f0 = media::EstimatePitch(high);
    ASSERT_LT(low_f0 * 1.4, high_f0);
    auto run = [&](const AudioBuffer& ref) {
        json in = Tts("seed_audio", "", "We were away a year ago.");
        in["voice"] = {{"type", "reference-audio"}, {"audioUri", DataUri("audio/wav", Wav(ref))}};
        return media::EstimatePitch(Decode(RunTask("text_to_speech", in), 16000));
    };
    const double out_low = run(low);
    const double out_high = run(high);
    EXPECT_NEAR(out_low, low_f0, low_f0 * 0.2);
    EXPECT_NEAR(out_high, high_f0, high_f0 * 0.2);
}

TEST(BuiltinTextToSpeech, VoiceV3SpeedLanguageTagsAndSeed) {
    const std::string text = "We were away a year ago.";
    json slow = Tts("voice_v3", "Tom", text);
    slow["speed"] = 0.7;
    json fast = slow;
    fast["speed"] = 1.2;
    EXPECT_GT(Decode(RunTask("text_to_speech", slow)).seconds(),
              1.3 * Decode(RunTask("text_to_speech", fast)).seconds());

    json english = Tts("voice_v3", "Tom", "Guten Morgen");
    english["languageCode"] = "en";
    json german = english;
    german["languageCode"] = "de";
    EXPECT_NE(RunTask("text_to_speech", english).bytes, RunTask("text_to_speech", german).bytes);

    json tagged = Tts("voice_v3", "Tom", "[whispers] Hello. [laughs] [shouting] Go!");
    const auto r = RunTask("text_to_speech", tagged);
    EXPECT_GT(media::RmsLevel(Decode(r)), 0.02);

    json seeded = Tts("voice_v3", "Tom", text);
    seeded["seed"] = 1;
    seeded["stability"] = 0.0;
    const std::string a = RunTask("text_to_speech", seeded).bytes;
    EXPECT_EQ(a, RunTask("text_to_speech", seeded).bytes);
    bool differs = false;
    for (int seed = 2; seed < 8 && !differs; ++seed) {
        seeded["seed"] = seed;
        differs = RunTask("text_to_speech", seeded).bytes != a;
    }
    EXPECT_TRUE(differs) << "the seed never changes the delivery at stability 0";
}

TEST(BuiltinTextToSpeech, IsDeterministic) {
    const json in = Tts("voice_multilingual_v2", "Clint", "Same words, same sound.");
    EXPECT_EQ(RunTask("text_to_speech", in).bytes, RunTask("text_to_speech", in).bytes);
}

TEST(BuiltinTextToSpeech, WithoutAScratchFolderReturnsBytes) {
    std::atomic<bool> cancelled{false};
    TaskContext ctx(kTaskId, "text_to_speech", "voice_multilingual_v2",
                    Tts("voice_multilingual_v2", "Maya"), cancelled, [](double) {});
    BuiltinProvider provider(TheCatalog(), 0);
    const auto outputs = provider.Run(ctx);
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_TRUE(outputs[0].file.empty());
    EXPECT_EQ(media::ProbeMedia(outputs[0].data).audio_codec, "mp3");
}

TEST(BuiltinTextToSpeech, CancelledBeforeRunThrowsCancelled) {
    std::atomic<bool> cancelled{true};
    TaskContext ctx(kTaskId, "text_to_speech", "voice_multilingual_v2",
                    Tts("voice_multilingual_v2", "Maya"), cancelled, [](double) {});
    BuiltinProvider provider(TheCatalog(), 0);
    EXPECT_THROW(provider.Run(ctx), Cancelled);
}

TEST(BuiltinTextToSpeech, CorruptReferenceFailsAssetInvalid) {
    json in = Tts("seed_audio", "", "Hello.");
    in["voice"] = {{"type", "reference-audio"},
                   {"audioUri", DataUri("audio/wav", "RIFF....WAVEgarbage-not-audio")}};
    EXPECT_EQ(FailureCode("text_to_speech", in), "ASSET.INVALID");
}

// --- speech_to_speech ---------------------------------------------------------------------

json Sts(const std::string& type, const std::string& uri, const std::string& voice) {
    return {{"model", "voice_multilingual_sts_v2"},
            {"media", {{"type", type}, {"uri", uri}}},
            {"voice", {{"type", "service-preset"}, {"presetId", voice}}}};
}

TEST(BuiltinSpeechToSpeech, MovesTheSpeechTowardTheVoiceKeepingTheDuration) {
    const AudioBuffer source = Speech("We were away a year ago, all of us.", "en-us+m1");
    const std::string uri = DataUri("audio/wav", Wav(source));
    const double source_f0 = media::EstimatePitch(source);
    const auto maya = RunTask("speech_to_speech", Sts("audio", uri, "Maya"));
    EXPECT_EQ(maya.info.audio_codec, "mp3");
    EXPECT_EQ(maya.info.sample_rate, 44100);
    EXPECT_EQ(maya.info.channels, 1);
    const AudioBuffer out = Decode(maya, 16000);
    EXPECT_NEAR(out.seconds(), source.seconds(), 0.03);
    EXPECT_GT(media::RmsLevel(out), 0.02);
    EXPECT_GT(media::EstimatePitch(out), source_f0 * 1.4);

    const auto monster = RunTask("speech_to_speech", Sts("audio", uri, "Monster"));
    EXPECT_LT(media::EstimatePitch(Decode(monster, 16000)), source_f0 * 0.9);
    EXPECT_EQ(maya.bytes, RunTask("speech_to_speech", Sts("audio", uri, "Maya")).bytes);
}

TEST(BuiltinSpeechToSpeech, RemovesBackgroundNoiseWhenAsked) {
    AudioBuffer source = Noise(3.0, 22050, 0.05f);
    source = Mix(source, Speech("We were away a year ago.", "en-us+m1"), 1.0);
    json in = Sts("audio", DataUri("audio/wav", Wav(source)), "Mark");
    const AudioBuffer noisy = Decode(RunTask("speech_to_speech", in));
    in["removeBackgroundNoise"] = true;
    const AudioBuffer clean = Decode(RunTask("speech_to_speech", in));
    EXPECT_NEAR(clean.seconds(), source.seconds(), 0.03);
    // The first second is noise only (relative to each output's speech level).
    EXPECT_LT(RmsBetween(clean, 0.2, 0.9) / RmsBetween(clean, 1.2, 2.0),
              0.5 * RmsBetween(noisy, 0.2, 0.9) / RmsBetween(noisy, 1.2, 2.0));
}

TEST(BuiltinSpeechToSpeech, VideoInputGivesAudioOfItsTrack) {
    TempDir dir;
    const AudioBuffer speech = media::Resample(Speech("Hello there, friend.", "en-us"), 48000, 1);
    media::VideoSpec spec;
    spec.width = 64;
    spec.height = 64;
    spec.fps = 24;
    spec.frame_count = 48;
    spec.audio = true;
    const std::string path = dir.path() + "/v.mp4";
    {
        media::VideoWriter writer(
            spec, path, [&](std::int64_t first, int count, float* l, float* r) {
                for (int i = 0; i < count; ++i) {
                    const auto at = static_cast<std::size_t>(first + i);
                    l[i] = r[i] = at < speech.samples.size() ? speech.samples[at] : 0.0f;
                }
            });
        media::RgbImage frame(64, 64);
        for (int i = 0; i < spec.frame_count; ++i) writer.WriteFrame(frame);
        writer.Finish();
    }
    const auto r =
        RunTask("speech_to_speech", Sts("video", DataUri("video/mp4", Slurp(path)), "Kylie"));
    EXPECT_EQ(r.output.suffix, "0.mp3");
    EXPECT_TRUE(r.info.video_codec.empty());
    const AudioBuffer out = Decode(r);
    EXPECT_NEAR(out.seconds(), 2.0, 0.06);
    EXPECT_GT(media::RmsLevel(out), 0.02);
}

TEST(BuiltinSpeechToSpeech, CorruptInputFailsAssetInvalid) {
    EXPECT_EQ(FailureCode("speech_to_speech",
                          Sts("audio", DataUri("audio/mpeg", std::string(2000, '\x17')), "Maya")),
              "ASSET.INVALID");
    EXPECT_EQ(FailureCode("speech_to_speech",
                          Sts("video", DataUri("video/mp4", "not a video at all"), "Maya")),
              "ASSET.INVALID");
}

// --- sound_effect -------------------------------------------------------------------------

TEST(BuiltinSoundEffect, TextToSoundHasTheRequestedDuration) {
    for (const double seconds : {0.5, 1.7}) {
        const json in = {{"model", "voice_text_to_sound_v2"},
                         {"promptText", "a door creaks, then a loud explosion"},
                         {"duration", seconds}};
        const auto r = RunTask("sound_effect", in);
        EXPECT_EQ(r.output.suffix, "0.mp3");
        EXPECT_EQ(r.info.audio_codec, "mp3");
        EXPECT_EQ(r.info.sample_rate, 44100);
        EXPECT_EQ(r.info.channels, 2);
        const AudioBuffer a = Decode(r, 44100, 2);
        EXPECT_NEAR(a.seconds(), seconds, 0.002);
        EXPECT_GT(media::RmsLevel(a), 0.02);
        EXPECT_EQ(r.bytes, RunTask("sound_effect", in).bytes);
    }
}

TEST(BuiltinSoundEffect, AutoDurationAndTaskSeed) {
    json in = {{"model", "voice_text_to_sound_v2"}, {"promptText", "laser 2 seconds"}};
    EXPECT_NEAR(Decode(RunTask("sound_effect", in)).seconds(), 2.0, 0.002);
    in["promptText"] = "a laser zap";
    const auto a = RunTask("sound_effect", in);
    EXPECT_NEAR(Decode(a).seconds(), 3.0, 0.002);
    // Neither sound model takes a seed: it comes from the task id (a retry sounds the same).
    EXPECT_EQ(a.bytes, RunTask("sound_effect", in).bytes);
    EXPECT_NE(a.bytes, RunTask("sound_effect", in, "6a1d2c3e-1111-4222-8333-777777777777").bytes);
}

TEST(BuiltinSoundEffect, LoopsAreSeamless) {
    for (const char* prompt : {"steady rain on a roof", "wind through trees"}) {
        const json in = {{"model", "voice_text_to_sound_v2"},
                         {"promptText", prompt},
                         {"duration", 2.0},
                         {"loop", true}};
        const AudioBuffer a = Decode(RunTask("sound_effect", in), 44100, 1);
        ASSERT_NEAR(a.seconds(), 2.0, 0.002);
        double mean_step = 0;
        for (std::size_t i = 1; i < a.samples.size(); ++i) {
            mean_step += std::abs(a.samples[i] - a.samples[i - 1]);
        }
        mean_step /= static_cast<double>(a.samples.size() - 1);
        EXPECT_LT(std::abs(a.samples.front() - a.samples.back()), 6 * mean_step + 2e-3) << prompt;
        // The level at the end matches the start (no fade out/in at the seam).
        EXPECT_NEAR(RmsBetween(a, 0, 0.1) / RmsBetween(a, 1.9, 2.0), 1.0, 0.5) << prompt;
    }
}

TEST(BuiltinSoundEffect, SeedAudioFormatsRatesAndKnobs) {
    json in = {{"model", "seed_audio"},
               {"promptText", "a bell rings"},
               {"outputFormat", "ogg_opus"},
               {"sampleRate", 16000}};
    auto r = RunTask("sound_effect", in);
    EXPECT_EQ(r.output.suffix, "0.ogg");
    EXPECT_EQ(r.info.audio_codec, "opus");
    EXPECT_EQ(r.info.channels, 2);
    in["outputFormat"] = "wav";
    in["sampleRate"] = 32000;
    r = RunTask("sound_effect", in);
    EXPECT_EQ(r.info.audio_codec, "pcm_s16le");
    EXPECT_EQ(r.info.sample_rate, 32000);
    const AudioBuffer plain = Decode(r);
    EXPECT_GT(media::RmsLevel(plain), 0.02);
    in["loudnessRate"] = -50;
    EXPECT_LT(media::RmsLevel(Decode(RunTask("sound_effect", in))), 0.8 * media::RmsLevel(plain));
    in.erase("loudnessRate");
    in["pitchRate"] = 7;
    EXPECT_NE(RunTask("sound_effect", in).bytes, r.bytes);
}

TEST(BuiltinSoundEffect, SeedAudioSpeaksDialogueAndMixesReferences) {
    const json base = {{"model", "seed_audio"},
                       {"promptText",
                        "a bell, and a man says \"we were away a year ago, all of us, and it was "
                        "a long and happy time\""},
                       {"outputFormat", "wav"},
                       {"sampleRate", 16000}};
    json slow = base;
    slow["speechRate"] = -50;
    const AudioBuffer normal = Decode(RunTask("sound_effect", base));
    EXPECT_GT(Decode(RunTask("sound_effect", slow)).seconds(), normal.seconds() + 0.5);
    EXPECT_GT(media::EstimatePitch(normal), 0);

    AudioBuffer tone;
    tone.sample_rate = 16000;
    tone.samples.resize(16000 * 4);
    for (std::size_t i = 0; i < tone.samples.size(); ++i) {
        tone.samples[i] =
            0.5f * static_cast<float>(std::sin(2 * std::numbers::pi * 440 * i / 16000.0));
    }
    json with_ref = {{"model", "seed_audio"},
                     {"promptText", "a bell, then @Audio1"},
                     {"referenceAudios", {DataUri("audio/wav", Wav(tone))}},
                     {"outputFormat", "wav"},
                     {"sampleRate", 16000}};
    const AudioBuffer mixed = Decode(RunTask("sound_effect", with_ref));
    EXPECT_GE(mixed.seconds(), 4.0 - 0.01);
    with_ref["referenceAudios"] = {DataUri("audio/wav", "garbage")};
    EXPECT_EQ(FailureCode("sound_effect", with_ref), "ASSET.INVALID");
}

// --- voice_isolation ----------------------------------------------------------------------

TEST(BuiltinVoiceIsolation, RemovesNoiseKeepingTheDuration) {
    AudioBuffer source = Noise(5.0, 22050, 0.08f);
    source = Mix(source, Speech("We were away a year ago, all of us together.", "en-us"), 2.0);
    const auto r = RunTask("voice_isolation", {{"model", "voice_isolation"},
                                               {"audioUri", DataUri("audio/wav", Wav(source))}});
    EXPECT_EQ(r.info.audio_codec, "mp3");
    EXPECT_EQ(r.info.sample_rate, 44100);
    const AudioBuffer out = Decode(r, 22050);
    EXPECT_NEAR(out.seconds(), source.seconds(), 0.002);
    const double in_ratio = RmsBetween(source, 0.5, 1.8) / RmsBetween(source, 2.2, 4.0);
    const double out_ratio = RmsBetween(out, 0.5, 1.8) / RmsBetween(out, 2.2, 4.0);
    EXPECT_LT(out_ratio, in_ratio / 4) << in_ratio << " " << out_ratio;
    EXPECT_GT(RmsBetween(out, 2.2, 4.0), 0.02);
    EXPECT_EQ(FailureCode("voice_isolation",
                          {{"model", "voice_isolation"}, {"audioUri", DataUri("audio/wav", "xx")}}),
              "ASSET.INVALID");
}

// --- voice_dubbing ------------------------------------------------------------------------

json Dub(const std::string& uri, const std::string& lang) {
    return {{"model", "voice_dubbing"}, {"audioUri", uri}, {"targetLang", lang}};
}

TEST(BuiltinVoiceDubbing, KeepsDurationSpeakersAndBackground) {
    // A low voice from 0.5 s, a high one from 3.5 s, over quiet noise.
    AudioBuffer source = Noise(7.0, 22050, 0.02f);
    source = Mix(source, Speech("We were away a year ago.", "en-us+m7"), 0.5);
    source = Mix(source, Speech("We were away a year ago.", "en-us+f5"), 3.5);
    const double low = media::EstimatePitch(Window(source, 0.5, 2.5));
    const double high = media::EstimatePitch(Window(source, 3.5, 5.5));
    ASSERT_LT(low * 1.4, high);
    const std::string uri = DataUri("audio/wav", Wav(source));

    const auto r = RunTask("voice_dubbing", Dub(uri, "de"));
    EXPECT_EQ(r.info.audio_codec, "mp3");
    // The file says that it is not a translation (ID3 comment; ASCII text is stored as is).
    const std::string file(r.bytes.begin(), r.bytes.end());
    EXPECT_NE(file.find("genhost builtin provider: not translated."), std::string::npos);
    EXPECT_NE(file.find("Target language: de."), std::string::npos);
    const AudioBuffer out = Decode(r, 22050);
    EXPECT_NEAR(out.seconds(), source.seconds(), 0.002);
    const double out_low = media::EstimatePitch(Window(out, 0.6, 2.2));
    const double out_high = media::EstimatePitch(Window(out, 3.6, 5.2));
    EXPECT_GT(out_low, 0);
    EXPECT_GT(out_high, out_low * 1.4) << out_low << " " << out_high;
    EXPECT_NE(Window(out, 0.6, 2.2).samples, Window(source, 0.6, 2.2).samples);
    // The background (noise where nobody speaks, e.g. the last second) is kept...
    EXPECT_NEAR(RmsBetween(out, 6.2, 6.9) / RmsBetween(source, 6.2, 6.9), 1.0, 0.6);
    // ...unless dropped.
    json dropped = Dub(uri, "de");
    dropped["dropBackgroundAudio"] = true;
    const AudioBuffer dry = Decode(RunTask("voice_dubbing", dropped), 22050);
    EXPECT_LT(RmsBetween(dry, 6.2, 6.9), 0.002);
    EXPECT_GT(RmsBetween(dry, 0.6, 2.2), 0.01);

    // One speaker when told so: both spans get the same voice (close pitches).
    json one = Dub(uri, "de");
    one["numSpeakers"] = 1;
    one["disableVoiceCloning"] = true;
    const AudioBuffer single = Decode(RunTask("voice_dubbing", one), 22050);
    const double a = media::EstimatePitch(Window(single, 0.6, 2.2));
    const double b = media::EstimatePitch(Window(single, 3.6, 5.2));
    EXPECT_NEAR(a / b, 1.0, 0.25) << a << " " << b;

    EXPECT_EQ(r.bytes, RunTask("voice_dubbing", Dub(uri, "de")).bytes);
    EXPECT_NE(r.bytes, RunTask("voice_dubbing", Dub(uri, "ja")).bytes);
}

TEST(BuiltinVoiceDubbing, CorruptInputFailsAssetInvalid) {
    EXPECT_EQ(FailureCode("voice_dubbing", Dub(DataUri("audio/mpeg", "ID3 junk"), "fr")),
              "ASSET.INVALID");
}

TEST(BuiltinVoiceDubbing, GivenSpeakerCountWithGenericVoices) {
    AudioBuffer source = Speech("We were away a year ago.", "en-us+m7");
    source = Mix(source, Speech("We were away a year ago.", "en-us+f5"), 3.0);
    json in = Dub(DataUri("audio/wav", Wav(source)), "es");
    in["numSpeakers"] = 2;
    in["disableVoiceCloning"] = true;
    in["dropBackgroundAudio"] = true;
    const AudioBuffer out = Decode(RunTask("voice_dubbing", in), 22050);
    EXPECT_NEAR(out.seconds(), source.seconds(), 0.002);
    const double first = media::EstimatePitch(Window(out, 0.1, 1.6));
    const double second = media::EstimatePitch(Window(out, 3.1, 4.6));
    EXPECT_GT(first, 0);
    EXPECT_GT(second, first * 1.4) << first << " " << second;
}

// --- every language, progress, cancellation -----------------------------------------------

TEST(BuiltinAudio, SpeaksEveryDubbingLanguage) {
    for (const char* code : audio::DubbingLanguages()) {
        json in =
            Tts("voice_v3", "Noah", std::string(audio::PlaceholderScript(code)).substr(0, 60));
        in["languageCode"] = code;
        in["speed"] = 1.2;
        const AudioBuffer a = Decode(RunTask("text_to_speech", in), 16000);
        EXPECT_GT(a.seconds(), 0.5) << code;
        EXPECT_GT(media::RmsLevel(a), 0.02) << code;
    }
}

TEST(BuiltinAudio, CancelDuringTheWorkStopsQuickly) {
    AudioBuffer source = Noise(20.0, 22050, 0.05f);
    const std::string uri = DataUri("audio/wav", Wav(source));
    TempDir scratch;
    DataUriResolver resolver;
    std::atomic<bool> cancelled{false};
    std::chrono::steady_clock::time_point at;
    TaskContext ctx(
        kTaskId, "voice_isolation", "voice_isolation",
        {{"model", "voice_isolation"}, {"audioUri", uri}}, cancelled,
        [&](double p) {
            if (p >= 0.5 && !cancelled) {
                at = std::chrono::steady_clock::now();
                cancelled = true;
            }
        },
        scratch.path(), &resolver);
    BuiltinProvider provider(TheCatalog(), 0);
    EXPECT_THROW(provider.Run(ctx), Cancelled);
    EXPECT_LT(std::chrono::steady_clock::now() - at, std::chrono::milliseconds(500));
}

TEST(BuiltinAudio, CancelDuringSimulatedLatencyStopsQuickly) {
    std::atomic<bool> cancelled{false};
    std::vector<double> progress;
    TaskContext ctx(kTaskId, "sound_effect", "voice_text_to_sound_v2",
                    {{"model", "voice_text_to_sound_v2"}, {"promptText", "rain"}}, cancelled,
                    [&](double p) { progress.push_back(p); });
    BuiltinProvider provider(TheCatalog(), 1.0);  // 10 s of simulated latency
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        cancelled = true;
    });
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(provider.Run(ctx), Cancelled);
    canceller.join();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
    ASSERT_FALSE(progress.empty());
    EXPECT_LT(progress.back(), 0.5);
}

TEST(BuiltinAudio, ProgressRisesToOneOnEveryEndpoint) {
    const std::string speech = DataUri(
        "audio/wav", Wav(Mix(Noise(5.0, 22050, 0.01f), Speech("Hello there.", "en-us"), 1.0)));
    const std::vector<std::pair<std::string, json>> cases = {
        {"text_to_speech", Tts("voice_v3", "Ella", "Hi.")},
        {"speech_to_speech", Sts("audio", speech, "Rina")},
        {"sound_effect",
         {{"model", "voice_text_to_sound_v2"}, {"promptText", "beep"}, {"duration", 1}}},
        {"voice_isolation", {{"model", "voice_isolation"}, {"audioUri", speech}}},
        {"voice_dubbing", Dub(speech, "it")},
    };
    for (const auto& [endpoint, input] : cases) {
        const auto r = RunTask(endpoint, input);
        ASSERT_FALSE(r.progress.empty()) << endpoint;
        EXPECT_DOUBLE_EQ(r.progress.back(), 1.0) << endpoint;
        for (std::size_t i = 1; i < r.progress.size(); ++i) {
            EXPECT_GE(r.progress[i], r.progress[i - 1]) << endpoint;
        }
        EXPECT_GT(r.info.duration_seconds, 0.5) << endpoint;
    }
}

}  // namespace
}  // namespace genhost::providers
