// Tests for custom voices (genhost/media/voice_profile.hpp): the analysis of speech samples made
// with espeak-ng at known settings (and of silence, noise and tones, which must fail), the
// profile JSON, voice design from descriptions, and speech in a profile's voice landing on the
// profile's pitch. Timings are not tested: bench/voices/clone_bench.cpp measures them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "genhost/media/audio.hpp"
#include "genhost/media/voice_profile.hpp"

namespace genhost::media {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// About 54 syllables; 12 s at 175 wpm.
constexpr const char* kSampleText =
    "The quick brown fox jumps over the lazy dog. She sells sea shells by the sea shore, and "
    "then she goes home to rest for a while. Nobody knows where the river ends, but everyone "
    "agrees that the water is cold in winter.";
constexpr int kSampleSyllables = 54;
constexpr const char* kOtherText =
    "Every morning the baker opens his shop before sunrise. People line up for warm bread, and "
    "the smell fills the whole street until noon.";

AudioBuffer Speak(const std::string& voice, int pitch, int rate, int range = 50,
                  const std::string& text = kSampleText) {
    SpeechParams params;
    params.text = text;
    params.voice = voice;
    params.pitch = pitch;
    params.rate_wpm = rate;
    params.range = range;
    return SynthesizeSpeech(params);
}

double Semitones(double f, double reference) { return 12 * std::log2(f / reference); }

// Lcg is a tiny deterministic noise source for test signals.
class Lcg {
  public:
    float Next() {
        state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<float>(static_cast<double>(state_ >> 40) / (1ULL << 24) * 2 - 1);
    }

  private:
    std::uint64_t state_ = 42;
};

AudioBuffer Signal(double seconds, int rate, int channels, const auto& sample_at) {
    AudioBuffer a{rate, channels, {}};
    const auto frames = static_cast<std::size_t>(std::llround(seconds * rate));
    a.samples.reserve(frames * static_cast<std::size_t>(channels));
    for (std::size_t i = 0; i < frames; ++i) {
        const float v = sample_at(static_cast<double>(i) / rate);
        for (int c = 0; c < channels; ++c) a.samples.push_back(v);
    }
    return a;
}

// Tilted is `audio` through six octave-spaced shelves of `db` each (a slope of about `db` dB per
// octave from 150 Hz to 4.8 kHz), peaking at 0.5.
AudioBuffer Tilted(const AudioBuffer& audio, int db) {
    std::string chain;
    for (const int f : {150, 300, 600, 1200, 2400, 4800}) {
        chain += (chain.empty() ? "" : ",") + std::string("highshelf=f=") + std::to_string(f) +
                 ":g=" + std::to_string(db) + ":t=s:w=0.5";
    }
    AudioBuffer out = FilterAudio(audio, chain);
    const float gain = 0.5f / PeakLevel(out);
    for (float& s : out.samples) s *= gain;
    return out;
}

TEST(AnalyzeVoiceSampleTest, LowSlowAndHighFastSpeechMeasureInOrder) {
    const AudioBuffer low = Speak("en-us+m1", 20, 130);
    const AudioBuffer high = Speak("en-us+f3", 80, 260);
    const VoiceAnalysis a = AnalyzeVoiceSample(low);
    const VoiceAnalysis b = AnalyzeVoiceSample(high);
    ASSERT_TRUE(a.ok()) << a.failure;
    ASSERT_TRUE(b.ok()) << b.failure;

    // F0 agrees with EstimatePitch, an independent estimator over the same audio.
    EXPECT_NEAR(Semitones(a.median_f0_hz, EstimatePitch(low)), 0, 0.7);
    EXPECT_NEAR(Semitones(b.median_f0_hz, EstimatePitch(high)), 0, 0.7);
    EXPECT_GT(Semitones(b.median_f0_hz, a.median_f0_hz), 12);
    EXPECT_THAT(a.median_f0_hz, ::testing::AllOf(::testing::Gt(60), ::testing::Lt(90)));
    EXPECT_THAT(b.median_f0_hz, ::testing::AllOf(::testing::Gt(250), ::testing::Lt(340)));

    // Both read the same text: the nuclei found are about its syllables, and the faster one
    // has twice the rate.
    EXPECT_NEAR(a.syllables_per_second * a.speech_seconds, kSampleSyllables, 8);
    EXPECT_NEAR(b.syllables_per_second * b.speech_seconds, kSampleSyllables, 8);
    EXPECT_GT(b.syllables_per_second, 1.6 * a.syllables_per_second);

    for (const VoiceAnalysis* v : {&a, &b}) {
        EXPECT_NEAR(v->audio_seconds, v == &a ? low.seconds() : high.seconds(), 1e-9);
        EXPECT_LE(v->speech_seconds, v->audio_seconds);
        EXPECT_LE(v->voiced_seconds, v->speech_seconds);
        EXPECT_GE(v->voiced_seconds, kVoiceSampleMinVoicedSeconds);
        EXPECT_GT(v->f0_spread_semitones, 0.5);
        EXPECT_LT(v->f0_spread_semitones, 4);
        EXPECT_GT(v->periodicity, 0.7);
        EXPECT_LE(v->periodicity, 1.0);
    }
}

TEST(AnalyzeVoiceSampleTest, AnyRateAndChannelCountMeasuresAlike) {
    const AudioBuffer speech = Speak("en-us+m3", 50, 175);
    const VoiceAnalysis base = AnalyzeVoiceSample(speech);
    ASSERT_TRUE(base.ok()) << base.failure;
    for (const auto& [rate, channels] : {std::pair{48000, 2}, std::pair{8000, 1}}) {
        SCOPED_TRACE(rate);
        const VoiceAnalysis v = AnalyzeVoiceSample(Resample(speech, rate, channels));
        ASSERT_TRUE(v.ok()) << v.failure;
        EXPECT_NEAR(Semitones(v.median_f0_hz, base.median_f0_hz), 0, 0.3);
        EXPECT_NEAR(v.syllables_per_second, base.syllables_per_second, 0.5);
        EXPECT_NEAR(v.audio_seconds, base.audio_seconds, 0.01);
    }
}

TEST(AnalyzeVoiceSampleTest, RangeMovesTheSpreadAndEqualisationTheTilt) {
    const VoiceAnalysis monotone = AnalyzeVoiceSample(Speak("en-us+m3", 50, 175, 0));
    const VoiceAnalysis lively = AnalyzeVoiceSample(Speak("en-us+m3", 50, 175, 100));
    ASSERT_TRUE(monotone.ok()) << monotone.failure;
    ASSERT_TRUE(lively.ok()) << lively.failure;
    EXPECT_LT(monotone.f0_spread_semitones, 0.6);
    EXPECT_GT(lively.f0_spread_semitones, 2.2);

    // Six octave-spaced shelves of ±4 dB tilt the spectrum by about ±4 dB per octave.
    const AudioBuffer speech = Speak("en-us+f3", 50, 175);
    const VoiceAnalysis dark = AnalyzeVoiceSample(Tilted(speech, -4));
    const VoiceAnalysis bright = AnalyzeVoiceSample(Tilted(speech, 4));
    ASSERT_TRUE(dark.ok()) << dark.failure;
    ASSERT_TRUE(bright.ok()) << bright.failure;
    EXPECT_NEAR(bright.spectral_tilt_db_per_octave - dark.spectral_tilt_db_per_octave, 8, 2.5);
    // Voicing, pitch and syllables do not depend on the microphone's colour.
    EXPECT_NEAR(Semitones(bright.median_f0_hz, dark.median_f0_hz), 0, 0.3);
    EXPECT_NEAR(bright.syllables_per_second, dark.syllables_per_second, 0.8);
}

TEST(AnalyzeVoiceSampleTest, SilenceNoiseAndTonesHoldNoSpeech) {
    Lcg lcg;
    double brown = 0;
    const std::vector<std::pair<const char*, AudioBuffer>> samples = {
        {"silence", Signal(5, 44100, 2, [](double) { return 0.0f; })},
        {"white noise", Signal(6, 16000, 1, [&](double) { return 0.3f * lcg.Next(); })},
        // Brown noise swelling four times a second, like syllables.
        {"rumble", Signal(6, 16000, 1,
                          [&](double t) {
                              brown = 0.995 * brown + 0.03 * lcg.Next();
                              return static_cast<float>(
                                  brown * (0.5 + 0.5 * std::sin(2 * std::numbers::pi * 4 * t)));
                          })},
        {"steady tone",
         Signal(6, 22050, 1,
                [](double t) { return 0.5f * std::sin(2 * std::numbers::pi * 220 * t); })},
        // A siren: a sine gliding between 180 and 260 Hz, on for 0.2 s, off for 0.2 s.
        {"siren",
         Signal(6, 22050, 1,
                [](double t) {
                    if (std::fmod(t, 0.4) >= 0.2) return 0.0f;
                    // Phase of 220 Hz + 40 Hz * sin(2π 2t).
                    const double phase = 220 * t - 40 / (2 * std::numbers::pi * 2) *
                                                       std::cos(2 * std::numbers::pi * 2 * t);
                    return static_cast<float>(0.5 * std::sin(2 * std::numbers::pi * phase));
                })},
        // A buzzer: a 150 Hz sawtooth (many harmonics) on for 0.2 s, off for 0.2 s.
        {"buzzer", Signal(6, 22050, 1,
                          [](double t) {
                              if (std::fmod(t, 0.4) >= 0.2) return 0.0f;
                              return static_cast<float>(0.5 * (2 * std::fmod(150 * t, 1.0) - 1));
                          })},
    };
    for (const auto& [name, sample] : samples) {
        SCOPED_TRACE(name);
        const VoiceAnalysis v = AnalyzeVoiceSample(sample);
        EXPECT_EQ(v.failure, "The sample holds no speech");
        EXPECT_FALSE(v.ok());
        EXPECT_NEAR(v.audio_seconds, sample.seconds(), 1e-9);
    }
}

TEST(AnalyzeVoiceSampleTest, TooShortTooLongAndTooLittleSpeechFail) {
    AudioBuffer speech = Speak("en-us+m3", 50, 175);
    FitFrames(speech, speech.sample_rate * 5 / 4);  // 1.25 s of speech
    EXPECT_EQ(AnalyzeVoiceSample(speech).failure,
              "The sample is too short: 1.2 s of audio, at least 3 s needed");
    EXPECT_EQ(AnalyzeVoiceSample(AudioBuffer{16000, 1, {}}).failure,
              "The sample is too short: 0.0 s of audio, at least 3 s needed");
    EXPECT_EQ(AnalyzeVoiceSample(AudioBuffer{0, 1, std::vector<float>(100)}).failure,
              "The sample is too short: 0.0 s of audio, at least 3 s needed");

    // 301 s at 8 kHz is 2.4 M samples: rejected by its length before any work.
    const AudioBuffer long_sample{8000, 1, std::vector<float>(8000 * 301, 0.1f)};
    const VoiceAnalysis too_long = AnalyzeVoiceSample(long_sample);
    EXPECT_EQ(too_long.failure, "The sample is too long: 301.0 s of audio, at most 300 s allowed");
    EXPECT_NEAR(too_long.audio_seconds, 301, 1e-9);
    EXPECT_EQ(kVoiceSampleMaxSeconds, 300);
    EXPECT_EQ(kVoiceSampleMinSeconds, 3);

    // Two words in four seconds: speech, but not enough of it.
    AudioBuffer hello = Speak("en-us+m3", 50, 175, 50, "Hello there.");
    ASSERT_LT(hello.seconds(), 2);
    FitFrames(hello, hello.sample_rate * 4);
    const VoiceAnalysis little = AnalyzeVoiceSample(hello);
    EXPECT_THAT(little.failure, StartsWith("The sample holds too little speech: "));
    EXPECT_THAT(little.failure, HasSubstr(" s of voiced speech, at least 2 s needed"));
}

TEST(VoiceProfileJsonTest, WritesFixedKeysAndRoundTrips) {
    EXPECT_EQ(ProfileToJson(VoiceProfile{}).dump(),
              R"({"base_voice":"en-us+m3","breathiness":0.0,"formant_scale":1.0,"gender":"male",)"
              R"("pitch":50,"pitch_shift_semitones":0.0,"range":50,"rate_wpm":175,)"
              R"("tilt_db_per_octave":0.0,"version":1})");
    VoiceProfile odd;
    odd.base_voice = "fr+f2";
    odd.gender = VoiceGender::kNeutral;
    odd.rate_wpm = 80;
    odd.pitch = 0;
    odd.range = 100;
    odd.pitch_shift_semitones = -12;
    odd.formant_scale = 1.25;
    odd.tilt_db_per_octave = 5.9;
    odd.breathiness = 1;
    std::vector<VoiceProfile> profiles = {VoiceProfile{}, odd,
                                          DesignVoiceProfile("deep old british man"),
                                          DesignVoiceProfile("young energetic american woman")};
    for (const VoiceProfile& p : profiles) {
        const std::string text = ProfileToJson(p).dump();
        SCOPED_TRACE(text);
        EXPECT_EQ(ProfileFromJson(nlohmann::json::parse(text)), p);
        EXPECT_EQ(ProfileFromJson(ProfileToJson(p)), p);
        EXPECT_EQ(ProfileToJson(ProfileFromJson(nlohmann::json::parse(text))).dump(), text);
    }
}

TEST(VoiceProfileJsonTest, RejectsBadFields) {
    const nlohmann::json good = ProfileToJson(VoiceProfile{});
    ASSERT_NO_THROW(ProfileFromJson(good));
    const std::vector<std::pair<std::string, nlohmann::json>> bad = {
        {"rate_wpm", 79},
        {"rate_wpm", 451},
        {"rate_wpm", 175.5},
        {"rate_wpm", 4294967296},
        {"pitch", -1},
        {"pitch", 101},
        {"pitch", "50"},
        {"range", 101},
        {"range", nullptr},
        {"pitch_shift_semitones", 12.01},
        {"pitch_shift_semitones", -13},
        {"formant_scale", 0.79},
        {"formant_scale", 1.26},
        {"tilt_db_per_octave", -6.5},
        {"breathiness", 1.01},
        {"breathiness", -0.1},
        {"gender", "robot"},
        {"gender", 1},
        {"base_voice", "xx-nowhere"},
        {"base_voice", "en-us+m99"},
        {"base_voice", "en-us+"},
        {"base_voice", "../en-us"},
        {"base_voice", "en-us+!v/m3"},
        {"base_voice", ""},
        {"version", 2},
    };
    for (const auto& [key, value] : bad) {
        nlohmann::json j = good;
        j[key] = value;
        SCOPED_TRACE(j.dump());
        try {
            ProfileFromJson(j);
            ADD_FAILURE() << "accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_THAT(e.what(), HasSubstr(key));
        }
    }
    nlohmann::json missing = good;
    missing.erase("breathiness");
    EXPECT_THROW(ProfileFromJson(missing), std::invalid_argument);
    nlohmann::json extra = good;
    extra["colour"] = "blue";
    EXPECT_THROW(ProfileFromJson(extra), std::invalid_argument);
    EXPECT_THROW(ProfileFromJson(nlohmann::json::array()), std::invalid_argument);
    EXPECT_THROW(ProfileFromJson(nlohmann::json("en-us")), std::invalid_argument);

    VoiceProfile nan;
    nan.tilt_db_per_octave = std::nan("");
    EXPECT_THROW(ValidateProfile(nan), std::invalid_argument);
    EXPECT_THROW(SpeakWithProfile(nan, "Hello."), std::invalid_argument);
}

TEST(VoiceProfileTest, VariantsExistAndTheTableKnowsTheirPitch) {
    ASSERT_EQ(VoiceVariants().size(), 14u);
    for (const std::string& variant : VoiceVariants()) {
        SCOPED_TRACE(variant);
        EXPECT_TRUE(SpeechVoiceExists("en-us+" + variant));
        VoiceProfile p;
        p.base_voice = "en-us+" + variant;
        EXPECT_NO_THROW(ValidateProfile(p));
        p.pitch = 0;
        const double low = ProfileTargetF0(p);
        p.pitch = 100;
        EXPECT_GT(Semitones(ProfileTargetF0(p), low), 10);
    }
}

TEST(DesignVoiceProfileTest, IsDeterministicAndIgnoresCaseAndPunctuation) {
    for (const char* prompt : {"deep old british man", "", "a voice", "ÉLÉGANT 😀 voice"}) {
        EXPECT_EQ(DesignVoiceProfile(prompt), DesignVoiceProfile(prompt)) << prompt;
        EXPECT_NO_THROW(ValidateProfile(DesignVoiceProfile(prompt))) << prompt;
    }
    EXPECT_EQ(DesignVoiceProfile("Deep, OLD British man!"),
              DesignVoiceProfile("deep old british man"));
}

TEST(DesignVoiceProfileTest, DescriptorsMoveTheVoiceTheRightWay) {
    const VoiceProfile old_man = DesignVoiceProfile("deep old british man");
    const VoiceProfile young_woman = DesignVoiceProfile("young energetic american woman");
    EXPECT_EQ(old_man.gender, VoiceGender::kMale);
    EXPECT_EQ(young_woman.gender, VoiceGender::kFemale);
    EXPECT_THAT(old_man.base_voice, StartsWith("en-gb-x-rp+"));
    EXPECT_THAT(young_woman.base_voice, StartsWith("en-us+f"));
    EXPECT_LT(ProfileTargetF0(old_man), 100);
    EXPECT_GT(ProfileTargetF0(young_woman), 220);
    EXPECT_LT(old_man.rate_wpm, 160);
    EXPECT_GT(young_woman.rate_wpm, 190);
    EXPECT_LT(old_man.range, young_woman.range);
    EXPECT_LT(old_man.formant_scale, young_woman.formant_scale);
    EXPECT_THAT(DescribeProfile(old_man),
                ::testing::IsSupersetOf(
                    {"male", "elderly", "slow", "British English (Received Pronunciation)"}));
    EXPECT_THAT(DescribeProfile(young_woman),
                ::testing::IsSupersetOf({"female", "fast", "American English", "expressive"}));

    EXPECT_THAT(DesignVoiceProfile("a scottish narrator").base_voice,
                StartsWith("en-gb-scotland+"));
    EXPECT_THAT(DesignVoiceProfile("french woman").base_voice, StartsWith("fr+f"));
    EXPECT_THAT(DesignVoiceProfile("an old lady").base_voice, ::testing::EndsWith("+grandma"));
    EXPECT_LT(ProfileTargetF0(DesignVoiceProfile("a deep male voice")),
              ProfileTargetF0(DesignVoiceProfile("a high male voice")));
    EXPECT_LT(DesignVoiceProfile("a slow calm man").rate_wpm,
              DesignVoiceProfile("a fast man").rate_wpm);
    EXPECT_LT(DesignVoiceProfile("a warm woman").tilt_db_per_octave,
              DesignVoiceProfile("a bright woman").tilt_db_per_octave);
    EXPECT_GT(DesignVoiceProfile("a breathy woman").breathiness, 0.3);
    EXPECT_EQ(DesignVoiceProfile("a robotic monotone man").range, 5);
    const VoiceProfile child = DesignVoiceProfile("a little boy");
    EXPECT_GT(ProfileTargetF0(child), 250);
    EXPECT_GT(child.formant_scale, 1.1);
}

TEST(DesignVoiceProfileTest, UnknownWordsVaryModerately) {
    const std::vector<std::string> prompts = {
        "a voice for my podcast about gardening", "a voice for my podcast about cooking",
        "the narrator of a mystery novel", "customer support for a bank",
        "someone reading the weather forecast"};
    std::set<std::string> seen;
    for (const std::string& prompt : prompts) {
        const VoiceProfile p = DesignVoiceProfile(prompt);
        SCOPED_TRACE(prompt);
        seen.insert(ProfileToJson(p).dump());
        EXPECT_EQ(p.gender, VoiceGender::kNeutral);
        EXPECT_NEAR(Semitones(ProfileTargetF0(p), 155), 0, 1.5);
        EXPECT_NEAR(p.rate_wpm, 175, 15);
        EXPECT_NEAR(p.range, 50, 9);
        EXPECT_NEAR(p.tilt_db_per_octave, 0, 0.85);
        EXPECT_NEAR(p.formant_scale, 1, 0.035);
        EXPECT_EQ(p.breathiness, 0);
        EXPECT_THAT(p.base_voice, StartsWith("en-us+"));
    }
    EXPECT_EQ(seen.size(), prompts.size());
}

TEST(SpeakWithProfileTest, PitchLandsOnTheTarget) {
    VoiceProfile shaped;
    shaped.base_voice = "en-gb-x-rp+f2";
    shaped.gender = VoiceGender::kFemale;
    shaped.pitch = 35;
    shaped.pitch_shift_semitones = 5;
    shaped.formant_scale = 1.15;
    shaped.tilt_db_per_octave = -3;
    shaped.breathiness = 0.3;
    VoiceProfile lowered;
    lowered.pitch = 60;
    lowered.range = 20;
    lowered.rate_wpm = 140;
    lowered.pitch_shift_semitones = -7;
    lowered.formant_scale = 0.85;
    const std::vector<VoiceProfile> profiles = {
        VoiceProfile{}, shaped, lowered, DesignVoiceProfile("deep old british man"),
        DesignVoiceProfile("young energetic american woman")};
    for (const VoiceProfile& p : profiles) {
        SCOPED_TRACE(ProfileToJson(p).dump());
        const AudioBuffer out = SpeakWithProfile(p, kOtherText);
        ASSERT_GT(out.frames(), 0);
        EXPECT_EQ(out.sample_rate, kVoiceOutputRate);
        EXPECT_EQ(out.channels, 1);
        EXPECT_LE(PeakLevel(out), 0.8901f);
        EXPECT_GT(PeakLevel(out), 0.88f);
        EXPECT_NEAR(Semitones(EstimatePitch(out), ProfileTargetF0(p)), 0, 2);
        // Post-processing keeps espeak-ng's length.
        SpeechParams params;
        params.text = kOtherText;
        params.voice = p.base_voice;
        params.rate_wpm = p.rate_wpm;
        params.pitch = p.pitch;
        params.range = p.range;
        EXPECT_EQ(out.frames(), SynthesizeSpeech(params).frames());
    }
    EXPECT_EQ(SpeakWithProfile(shaped, kOtherText).samples,
              SpeakWithProfile(shaped, kOtherText).samples);
}

// VowelBrightness is the energy above 2.5 kHz relative to that below 1 kHz, in the 20 ms frames
// whose energy below 1 kHz is above the median (vowels rather than fricatives or pauses).
double VowelBrightness(const AudioBuffer& audio) {
    const AudioBuffer low = FilterAudio(audio, "lowpass=f=1000,lowpass=f=1000");
    const AudioBuffer high = FilterAudio(audio, "highpass=f=2500,highpass=f=2500");
    const std::size_t frame = static_cast<std::size_t>(audio.sample_rate) / 50;
    std::vector<std::pair<double, double>> frames;  // low, high energy
    for (std::size_t start = 0; start + frame <= low.samples.size(); start += frame) {
        double l = 0;
        double h = 0;
        for (std::size_t i = start; i < start + frame; ++i) {
            l += static_cast<double>(low.samples[i]) * low.samples[i];
            h += static_cast<double>(high.samples[i]) * high.samples[i];
        }
        frames.emplace_back(l, h);
    }
    std::vector<double> lows;
    for (const auto& [l, h] : frames) lows.push_back(l);
    std::nth_element(lows.begin(), lows.begin() + static_cast<std::ptrdiff_t>(lows.size() / 2),
                     lows.end());
    double l_sum = 0;
    double h_sum = 0;
    for (const auto& [l, h] : frames) {
        if (l < lows[lows.size() / 2]) continue;
        l_sum += l;
        h_sum += h;
    }
    return h_sum / l_sum;
}

TEST(SpeakWithProfileTest, BreathinessAddsNoiseToTheVowels) {
    VoiceProfile p;
    auto brightness = [&](double breathiness) {
        p.breathiness = breathiness;
        return VowelBrightness(SpeakWithProfile(p, kOtherText));
    };
    const double modal = brightness(0);
    const double some = brightness(0.3);
    const double breathy = brightness(0.8);
    // espeak-ng's vowels are -12.5 dB above 2.5 kHz; 0.3 adds about 4 dB, 0.8 about 12 dB.
    EXPECT_GT(some, 2 * modal);
    EXPECT_GT(breathy, 4 * some);
}

TEST(SpeakWithProfileTest, StopsWhenAskedAndSpeaksNothingForNoText) {
    const AudioBuffer stopped = SpeakWithProfile(VoiceProfile{}, kOtherText, [] { return false; });
    EXPECT_EQ(stopped.frames(), 0);
    EXPECT_EQ(stopped.sample_rate, kVoiceOutputRate);
    EXPECT_EQ(SpeakWithProfile(VoiceProfile{}, "").frames(), 0);
}

TEST(ProfileFromAnalysisTest, ClonesDifferAndSpeakLikeTheirSamples) {
    // Sources darker and brighter than espeak-ng's own voices, so the clone needs its tilt.
    const VoiceAnalysis low = AnalyzeVoiceSample(Tilted(Speak("en-us+m1", 20, 130, 40), -3));
    const VoiceAnalysis high = AnalyzeVoiceSample(Tilted(Speak("en-us+f3", 80, 260, 70), 3));
    ASSERT_TRUE(low.ok()) << low.failure;
    ASSERT_TRUE(high.ok()) << high.failure;
    const VoiceProfile a = ProfileFromAnalysis(low);
    const VoiceProfile b = ProfileFromAnalysis(high);
    EXPECT_EQ(a.gender, VoiceGender::kMale);
    EXPECT_EQ(b.gender, VoiceGender::kFemale);
    EXPECT_LT(a.rate_wpm + 60, b.rate_wpm);
    EXPECT_GT(Semitones(ProfileTargetF0(b), ProfileTargetF0(a)), 12);
    EXPECT_LT(a.tilt_db_per_octave, -1.5);
    EXPECT_GT(b.tilt_db_per_octave, 1.5);

    for (const auto& [analysis, profile_ptr] : {std::pair{&low, &a}, std::pair{&high, &b}}) {
        const VoiceProfile& profile = *profile_ptr;
        SCOPED_TRACE(ProfileToJson(profile).dump());
        EXPECT_NEAR(Semitones(ProfileTargetF0(profile), analysis->median_f0_hz), 0, 0.5);
        // The clone reads another text with the sample's pitch, speed and melody.
        const VoiceAnalysis clone = AnalyzeVoiceSample(SpeakWithProfile(profile, kSampleText));
        ASSERT_TRUE(clone.ok()) << clone.failure;
        EXPECT_NEAR(Semitones(clone.median_f0_hz, analysis->median_f0_hz), 0, 2);
        EXPECT_NEAR(clone.syllables_per_second / analysis->syllables_per_second, 1, 0.2);
        EXPECT_NEAR(clone.f0_spread_semitones, analysis->f0_spread_semitones, 0.5);
        EXPECT_NEAR(clone.spectral_tilt_db_per_octave, analysis->spectral_tilt_db_per_octave, 1.5);
    }

    VoiceAnalysis failed;
    failed.failure = "The sample holds no speech";
    EXPECT_THROW(ProfileFromAnalysis(failed), std::invalid_argument);
}

TEST(DescribeProfileTest, NamesGenderPitchPaceAndAccent) {
    EXPECT_THAT(DescribeProfile(VoiceProfile{}),
                ::testing::ElementsAre("male", "medium pitch (106 Hz)", "moderate pace",
                                       "American English"));
    VoiceProfile p;
    p.base_voice = "de+f1";
    p.gender = VoiceGender::kFemale;
    p.pitch = 10;
    p.rate_wpm = 100;
    p.range = 10;
    p.tilt_db_per_octave = 2;
    p.breathiness = 0.5;
    EXPECT_THAT(DescribeProfile(p),
                ::testing::ElementsAre("female", "very low pitch (111 Hz)", "very slow",
                                       "German accent", "monotone", "bright", "breathy"));
}

}  // namespace
}  // namespace genhost::media
