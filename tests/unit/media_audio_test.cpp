// Tests for the media module's audio: the writer's formats, rates and exact lengths, the reader
// (audio files and a video's audio track), filters, espeak-ng speech, pitch estimation and the
// procedural sound effects.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "genhost/media/audio.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/video.hpp"

namespace genhost::media {
namespace {

AudioBuffer Sine(double seconds, int rate, double freq, int channels = 1) {
    AudioBuffer a;
    a.sample_rate = rate;
    a.channels = channels;
    const auto frames = static_cast<std::int64_t>(std::llround(seconds * rate));
    a.samples.resize(static_cast<std::size_t>(frames * channels));
    for (std::int64_t i = 0; i < frames; ++i) {
        const float v = static_cast<float>(0.5 * std::sin(2 * std::numbers::pi * freq * i / rate));
        for (int c = 0; c < channels; ++c)
            a.samples[static_cast<std::size_t>(i * channels + c)] = v;
    }
    return a;
}

class TempDir {
  public:
    TempDir() {
        path_ =
            std::filesystem::temp_directory_path() /
            ("genhost_audio_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::string File(const std::string& name) const { return (path_ / name).string(); }
    std::string Write(const std::string& name, const std::string& bytes) const {
        const std::string p = File(name);
        std::ofstream(p, std::ios::binary)
            .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return p;
    }

  private:
    static inline int counter_ = 0;
    std::filesystem::path path_;
};

struct FormatCase {
    AudioFormat format;
    const char* codec;
};

// Every format at every rate seed_audio offers: codec, rate, channels, and the exact number of
// samples a decoder returns.
TEST(AudioWriterTest, FormatsAndRatesKeepTheExactLength) {
    TempDir dir;
    const AudioBuffer input = Sine(1.2345, 22050, 440);
    for (const FormatCase fc :
         {FormatCase{AudioFormat::kWav, "pcm_s16le"}, FormatCase{AudioFormat::kMp3, "mp3"},
          FormatCase{AudioFormat::kOggOpus, "opus"}}) {
        for (const int rate : {8000, 16000, 24000, 32000, 44100, 48000}) {
            SCOPED_TRACE(std::string(fc.codec) + " " + std::to_string(rate));
            AudioEncoding enc;
            enc.format = fc.format;
            enc.sample_rate = rate;
            const std::string bytes = WriteAudio(input, enc);
            const MediaInfo info = ProbeMedia(bytes);
            EXPECT_EQ(info.audio_codec, fc.codec);
            EXPECT_EQ(info.channels, 1);
            const int coded_rate = fc.format == AudioFormat::kOggOpus ? 48000 : rate;
            EXPECT_EQ(info.sample_rate, coded_rate);
            const double expected =
                std::llround(input.frames() * static_cast<double>(rate) / 22050) /
                static_cast<double>(rate);
            // The MP3 demuxer states the duration of whole frames, encoder delay and padding
            // included (what the LAME tag says to trim only decoders apply): up to two frames
            // and the 529-sample delay more than the audio. The Ogg demuxer counts the Opus
            // pre-skip (312 samples at 48 kHz).
            const int per_frame = rate <= 24000 ? 576 : 1152;
            const double slack = fc.format == AudioFormat::kMp3 ? (2.0 * per_frame + 600) / rate
                                 : fc.format == AudioFormat::kOggOpus ? 0.01
                                                                      : 0.002;
            EXPECT_GE(info.duration_seconds, expected - 0.002);
            EXPECT_LE(info.duration_seconds, expected + slack);

            const std::string path =
                dir.Write("a." + std::string(AudioFormatExtension(fc.format)), bytes);
            AudioReadOptions options;
            options.sample_rate = coded_rate;
            const AudioBuffer decoded = ReadAudio(path, options);
            const auto wanted = std::llround(expected * coded_rate);
            // Decoders return the exact count (Opus: the Ogg end granule may add one sample).
            EXPECT_GE(decoded.frames(), wanted);
            EXPECT_LE(decoded.frames(), wanted + (fc.format == AudioFormat::kOggOpus ? 1 : 0));
            EXPECT_GT(RmsLevel(decoded), 0.2);
        }
    }
}

TEST(AudioWriterTest, StereoAndDeterministicBytes) {
    const AudioBuffer input = Sine(0.5, 48000, 1000, 2);
    for (const AudioFormat format : {AudioFormat::kWav, AudioFormat::kMp3, AudioFormat::kOggOpus}) {
        AudioEncoding enc;
        enc.format = format;
        enc.sample_rate = 48000;
        enc.channels = 2;
        const std::string a = WriteAudio(input, enc);
        const std::string b = WriteAudio(input, enc);
        EXPECT_EQ(a, b);
        EXPECT_EQ(ProbeMedia(a).channels, 2);
    }
}

TEST(AudioWriterTest, OpusHeadRecordsTheRequestedRate) {
    AudioEncoding enc;
    enc.format = AudioFormat::kOggOpus;
    enc.sample_rate = 24000;
    const std::string bytes = WriteAudio(Sine(0.3, 24000, 300), enc);
    const auto head = bytes.find("OpusHead");
    ASSERT_NE(head, std::string::npos);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + head);
    EXPECT_EQ(p[12] | (p[13] << 8) | (p[14] << 16) | (p[15] << 24), 24000);
}

TEST(AudioWriterTest, WritesFiles) {
    TempDir dir;
    AudioEncoding enc;
    enc.format = AudioFormat::kMp3;
    enc.sample_rate = 44100;
    const std::string path = dir.File("out.mp3");
    EXPECT_TRUE(WriteAudio(Sine(2.0, 44100, 200), enc, path).empty());
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NEAR(ProbeMedia(bytes).duration_seconds, 2.0, 0.06);
}

TEST(AudioReaderTest, RejectsGarbageAndSilenceOfStreams) {
    TempDir dir;
    const std::string path = dir.Write("junk.bin", std::string(5000, 'x'));
    EXPECT_THROW(ReadAudio(path, {}), MediaError);
    ImageSpec spec;
    spec.width = 16;
    spec.height = 16;
    const std::string png = dir.Write("p.png", RenderImage(spec));
    EXPECT_THROW(ReadAudio(png, {}), MediaError);
}

TEST(AudioReaderTest, EnforcesTheMaximumDuration) {
    TempDir dir;
    AudioEncoding enc;
    enc.format = AudioFormat::kWav;
    enc.sample_rate = 16000;
    const std::string path = dir.Write("long.wav", WriteAudio(Sine(3.0, 16000, 300), enc));
    AudioReadOptions options;
    options.sample_rate = 16000;
    options.max_seconds = 2.0;
    EXPECT_THROW(ReadAudio(path, options), MediaError);
    options.max_seconds = 4.0;
    EXPECT_EQ(ReadAudio(path, options).frames(), 48000);
}

TEST(AudioReaderTest, ReadsTheAudioTrackOfAVideo) {
    TempDir dir;
    VideoSpec spec;
    spec.width = 64;
    spec.height = 64;
    spec.fps = 24;
    spec.frame_count = 48;
    spec.audio = true;
    const std::string path = dir.File("v.mp4");
    {
        VideoWriter writer(spec, path, [](std::int64_t first, int count, float* l, float* r) {
            for (int i = 0; i < count; ++i) {
                l[i] = r[i] =
                    static_cast<float>(0.4 * std::sin(2 * std::numbers::pi * 220 *
                                                      static_cast<double>(first + i) / 48000));
            }
        });
        RgbImage frame(64, 64);
        for (int i = 0; i < spec.frame_count; ++i) writer.WriteFrame(frame);
        writer.Finish();
    }
    AudioReadOptions options;
    options.sample_rate = 16000;
    const AudioBuffer audio = ReadAudio(path, options);
    EXPECT_NEAR(audio.seconds(), 2.0, 0.05);
    EXPECT_NEAR(EstimatePitch(audio), 220, 10);
}

TEST(AudioFilterTest, FiltersKeepTheDuration) {
    const AudioBuffer input = Sine(3.0, 44100, 300);
    for (const char* chain :
         {"anull", "highpass=f=80,lowpass=f=8000", "afftdn=nr=12:nf=-40,highpass=f=80,acompressor",
          "equalizer=f=1000:t=q:w=1:g=4,vibrato=f=5:d=0.1"}) {
        SCOPED_TRACE(chain);
        const AudioBuffer out = FilterAudio(input, chain);
        EXPECT_EQ(out.frames(), input.frames());
        EXPECT_GT(RmsLevel(out), 0.05);
    }
    // Echoes ring on past the end; FitFrames cuts them back to the input's length.
    AudioBuffer echoed = FilterAudio(input, "aecho=0.8:0.6:40:0.2");
    EXPECT_GT(echoed.frames(), input.frames());
    FitFrames(echoed, input.frames());
    EXPECT_EQ(echoed.frames(), input.frames());
    const AudioBuffer resampled = FilterAudio(input, "anull", 16000, 2);
    EXPECT_EQ(resampled.sample_rate, 16000);
    EXPECT_EQ(resampled.channels, 2);
    EXPECT_NEAR(resampled.seconds(), 3.0, 0.01);
}

TEST(AudioFilterTest, RubberbandShiftsPitchNotTempo) {
    ASSERT_TRUE(AudioFilterAvailable("rubberband"));
    const AudioBuffer input = Sine(2.0, 22050, 200);
    const AudioBuffer up = FilterAudio(input, "rubberband=pitch=1.5");
    EXPECT_NEAR(up.seconds(), 2.0, 0.1);
    EXPECT_NEAR(EstimatePitch(up), 300, 15);
}

TEST(AudioFilterTest, BadChainsFail) {
    const AudioBuffer input = Sine(0.2, 8000, 300);
    EXPECT_THROW(FilterAudio(input, "nosuchfilter=1"), MediaError);
    EXPECT_FALSE(AudioFilterAvailable("nosuchfilter"));
}

TEST(SpeechTest, SpeaksPlausibleNonSilentAudio) {
    SpeechParams params;
    params.text = "The quick brown fox jumps over the lazy dog.";
    const AudioBuffer speech = SynthesizeSpeech(params);
    EXPECT_EQ(speech.sample_rate, kSpeechSampleRate);
    EXPECT_GT(speech.seconds(), 1.5);
    EXPECT_LT(speech.seconds(), 6.0);
    EXPECT_GT(RmsLevel(speech), 0.02);
    EXPECT_GT(EstimatePitch(speech), 70);
}

// espeak-ng keeps state between utterances; each one runs in a fresh child, so history does not
// change the samples.
TEST(SpeechTest, IsDeterministicWhateverCameBefore) {
    SpeechParams params;
    params.text = "Determinism matters, 42 times over.";
    params.voice = "en-us+f3";
    const AudioBuffer first = SynthesizeSpeech(params);
    SpeechParams other;
    other.text = "Guten Tag, wie geht es Ihnen?";
    other.voice = "de+m3";
    SynthesizeSpeech(other);
    other.voice = "ru";
    other.text = "Привет";
    SynthesizeSpeech(other);
    EXPECT_EQ(SynthesizeSpeech(params).samples, first.samples);
}

TEST(SpeechTest, VoicesDiffer) {
    SpeechParams low;
    low.text = "Hello there, how are you doing today?";
    low.voice = "en-us+m3";
    low.pitch = 30;
    SpeechParams high = low;
    high.voice = "en-us+f3";
    high.pitch = 70;
    const double f_low = EstimatePitch(SynthesizeSpeech(low));
    const double f_high = EstimatePitch(SynthesizeSpeech(high));
    EXPECT_GT(f_low, 60);
    EXPECT_GT(f_high, f_low * 1.4);
}

TEST(SpeechTest, RateChangesLength) {
    SpeechParams slow;
    slow.text = "One two three four five six seven eight nine ten.";
    slow.rate_wpm = 100;
    SpeechParams fast = slow;
    fast.rate_wpm = 300;
    EXPECT_GT(SynthesizeSpeech(slow).seconds(), 1.8 * SynthesizeSpeech(fast).seconds());
}

// Looking voices up on one thread while another speaks: every child finds its voice. (A child
// forked while espeak_ListVoices rebuilt the voice list failed with "no voice" now and then.)
TEST(SpeechTest, SpeakingWhileAnotherThreadListsVoices) {
    std::atomic<bool> stop{false};
    std::thread lister([&] {
        while (!stop) EXPECT_TRUE(SpeechVoiceExists("en-us+f4"));
    });
    SpeechParams params;
    params.text = "Hi.";
    params.voice = "en-us+f4";
    int failures = 0;
    for (int i = 0; i < 20; ++i) {
        try {
            SynthesizeSpeech(params);
        } catch (const MediaError& e) {
            ++failures;
        }
    }
    stop = true;
    lister.join();
    EXPECT_EQ(failures, 0);
}

TEST(SpeechTest, UnknownVoicesFail) {
    SpeechParams params;
    params.text = "x";
    params.voice = "xx-nonexistent";
    EXPECT_THROW(SynthesizeSpeech(params), MediaError);
    EXPECT_FALSE(SpeechVoiceExists("xx-nonexistent"));
    EXPECT_FALSE(SpeechVoiceExists("en+../../etc"));
    EXPECT_TRUE(SpeechVoiceExists("en-us"));
    EXPECT_TRUE(SpeechVoiceExists("cmn+f2"));
}

TEST(SpeechTest, StopsWhenAsked) {
    SpeechParams params;
    params.text = std::string(2000, 'a') + " long text";
    const AudioBuffer audio = SynthesizeSpeech(params, [] { return false; });
    EXPECT_EQ(audio.frames(), 0);
}

TEST(PitchTest, FindsTheFundamental) {
    for (const double f : {90.0, 150.0, 220.0, 330.0}) {
        EXPECT_NEAR(EstimatePitch(Sine(1.0, 44100, f)), f, f * 0.03);
    }
    AudioBuffer silence;
    silence.sample_rate = 16000;
    silence.samples.assign(16000, 0.0f);
    EXPECT_EQ(EstimatePitch(silence), 0);
}

TEST(EffectTest, ExactLengthDeterministicAndNonSilent) {
    EffectSpec spec;
    spec.prompt = "heavy rain with distant thunder";
    spec.seconds = 2.5;
    spec.seed = 9;
    spec.sample_rate = 44100;
    const AudioBuffer a = SynthesizeEffect(spec);
    EXPECT_EQ(a.frames(), 110250);
    EXPECT_EQ(a.channels, 2);
    EXPECT_GT(RmsLevel(a), 0.02);
    EXPECT_LE(PeakLevel(a), 0.9f);
    EXPECT_EQ(SynthesizeEffect(spec).samples, a.samples);
    spec.seed = 10;
    EXPECT_NE(SynthesizeEffect(spec).samples, a.samples);
}

TEST(EffectTest, KeywordsPickLayers) {
    EXPECT_THAT(EffectLayers("Rain and wind in a storm"),
                ::testing::IsSupersetOf({"rain", "wind", "thunder"}));
    EXPECT_THAT(EffectLayers("a sci-fi laser blaster"), ::testing::Contains("laser"));
    EXPECT_THAT(EffectLayers("zzz"), ::testing::ElementsAre("texture"));
    for (const char* prompt :
         {"whoosh", "beep beep", "huge explosion", "crackling fire", "ocean waves", "car engine",
          "birds chirping", "church bell", "clock ticking", "footsteps on wood", "ambient pad"}) {
        EffectSpec spec;
        spec.prompt = prompt;
        spec.seconds = 1.5;
        spec.sample_rate = 16000;
        spec.channels = 1;
        const AudioBuffer a = SynthesizeEffect(spec);
        EXPECT_EQ(a.frames(), 24000) << prompt;
        EXPECT_GT(RmsLevel(a), 0.005) << prompt;
    }
}

// A loop's last sample runs on into its first: the jump across the seam is no bigger than the
// usual step between neighbouring samples.
TEST(EffectTest, LoopsAreSeamless) {
    for (const char* prompt : {"wind", "engine hum", "rain"}) {
        EffectSpec spec;
        spec.prompt = prompt;
        spec.seconds = 3.0;
        spec.loop = true;
        spec.sample_rate = 48000;
        spec.channels = 1;
        const AudioBuffer a = SynthesizeEffect(spec);
        double mean_step = 0;
        for (std::size_t i = 1; i < a.samples.size(); ++i) {
            mean_step += std::abs(a.samples[i] - a.samples[i - 1]);
        }
        mean_step /= static_cast<double>(a.samples.size() - 1);
        const double seam = std::abs(a.samples.front() - a.samples.back());
        EXPECT_LT(seam, 4 * mean_step + 1e-3) << prompt;
    }
}

}  // namespace
}  // namespace genhost::media
