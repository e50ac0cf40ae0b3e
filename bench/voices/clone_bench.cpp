// bench/voices/clone_bench.cpp: what custom voices cost and how close a clone comes (CLIENTS.md
// 3.5), and the measurements behind src/media/voice_profile.cpp's calibration tables.
//
//   voice_clone_bench              timings, then clone accuracy
//   voice_clone_bench --calibrate  the calibration tables, measured afresh (C++ initialisers)
//
// Timings (median of 5 runs, wall clock, one thread): AnalyzeVoiceSample on 30 s and 300 s of
// espeak-ng speech at 44.1 kHz stereo (as an upload might be), ProfileFromAnalysis,
// DesignVoiceProfile, and SpeakWithProfile of one sentence with and without post-processing.
// Accuracy: for source voices of different pitch, speed and range, the source's measured median
// F0, F0 spread, syllable rate and tilt against those of its clone speaking another text.
// The sources are espeak-ng speech, so the accuracy says how well the measurements and the
// mapping invert each other, not how a clone of a human voice sounds.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "genhost/media/audio.hpp"
#include "genhost/media/voice_profile.hpp"

namespace {

using genhost::media::AnalyzeVoiceSample;
using genhost::media::AudioBuffer;
using genhost::media::SpeechParams;
using genhost::media::SynthesizeSpeech;
using genhost::media::VoiceAnalysis;
using genhost::media::VoiceProfile;

// The calibration text: three sentences, about 12 s at 175 wpm.
constexpr const char* kCalibrationText =
    "The quick brown fox jumps over the lazy dog. She sells sea shells by the sea shore, and "
    "then she goes home to rest for a while. Nobody knows where the river ends, but everyone "
    "agrees that the water is cold in winter.";
constexpr const char* kOtherText =
    "Every morning the baker opens his shop before sunrise. People line up for warm bread, and "
    "the smell fills the whole street until noon.";

double MedianMs(int runs, const std::function<void()>& work) {
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
        const auto start = std::chrono::steady_clock::now();
        work();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

AudioBuffer Speak(const std::string& voice, int pitch, int rate, int range,
                  const std::string& text = kCalibrationText) {
    SpeechParams params;
    params.text = text;
    params.voice = voice;
    params.pitch = pitch;
    params.rate_wpm = rate;
    params.range = range;
    return SynthesizeSpeech(params);
}

// Loop repeats `audio` (with 0.4 s of silence between) to `seconds`, as 44.1 kHz stereo.
AudioBuffer Loop(const AudioBuffer& audio, double seconds) {
    const AudioBuffer stereo = genhost::media::Resample(audio, 44100, 2);
    AudioBuffer out{44100, 2, {}};
    const auto want = static_cast<std::size_t>(seconds * 44100) * 2;
    while (out.samples.size() < want) {
        out.samples.insert(out.samples.end(), stereo.samples.begin(), stereo.samples.end());
        out.samples.resize(out.samples.size() + 44100 * 2 * 4 / 10, 0.0f);
    }
    out.samples.resize(want);
    return out;
}

void Timings() {
    const AudioBuffer speech = Speak("en-us+m3", 50, 175, 50);
    for (const double seconds : {30.0, 300.0}) {
        const AudioBuffer sample = Loop(speech, seconds);
        VoiceAnalysis analysis;
        const double ms = MedianMs(5, [&] { analysis = AnalyzeVoiceSample(sample); });
        std::printf("AnalyzeVoiceSample %5.0f s, 44.1 kHz stereo: %8.1f ms (%s)\n", seconds, ms,
                    analysis.ok() ? "ok" : analysis.failure.c_str());
    }
    const VoiceAnalysis analysis = AnalyzeVoiceSample(speech);
    std::printf("ProfileFromAnalysis:                    %8.3f ms\n",
                MedianMs(5, [&] { genhost::media::ProfileFromAnalysis(analysis); }));
    std::printf("DesignVoiceProfile:                     %8.3f ms\n", MedianMs(5, [&] {
                    genhost::media::DesignVoiceProfile("a deep old british man, slow and warm");
                }));
    VoiceProfile plain;
    VoiceProfile shaped = plain;
    shaped.pitch_shift_semitones = 3;
    shaped.formant_scale = 1.1;
    shaped.tilt_db_per_octave = 2;
    shaped.breathiness = 0.3;
    for (const auto& [name, profile] :
         {std::pair{"espeak-ng only", plain}, std::pair{"shift+formant+tilt+breath", shaped}}) {
        AudioBuffer out;
        const double ms =
            MedianMs(5, [&] { out = genhost::media::SpeakWithProfile(profile, kOtherText); });
        std::printf("SpeakWithProfile (%s): %8.1f ms for %.1f s of speech\n", name, ms,
                    out.seconds());
    }
}

void Accuracy() {
    struct Source {
        const char* name;
        const char* voice;
        int pitch;
        int rate;
        int range;
    };
    const Source sources[] = {
        {"low slow male", "en-us+m1", 20, 130, 40},    {"mid male", "en-gb-x-rp+m3", 50, 175, 50},
        {"high fast female", "en-us+f3", 80, 260, 70}, {"low female", "en-us+f2", 25, 160, 30},
        {"child-like", "en-us+f5", 100, 200, 80},      {"monotone", "en-us+m6", 45, 190, 5},
    };
    std::printf("\n%-17s %25s %25s %25s %23s\n", "source", "F0 Hz (src/clone, st)",
                "spread st (src/clone)", "syllables/s (src/clone)", "tilt dB/oct (src/clone)");
    for (const Source& s : sources) {
        const VoiceAnalysis source = AnalyzeVoiceSample(Speak(s.voice, s.pitch, s.rate, s.range));
        const VoiceProfile profile = genhost::media::ProfileFromAnalysis(source);
        const VoiceAnalysis clone =
            AnalyzeVoiceSample(genhost::media::SpeakWithProfile(profile, kCalibrationText));
        std::printf(
            "%-17s %7.1f / %7.1f (%+5.2f) %11.2f / %5.2f %15.2f / %5.2f %13.2f / %5.2f   %s\n",
            s.name, source.median_f0_hz, clone.median_f0_hz,
            12 * std::log2(clone.median_f0_hz / source.median_f0_hz), source.f0_spread_semitones,
            clone.f0_spread_semitones, source.syllables_per_second, clone.syllables_per_second,
            source.spectral_tilt_db_per_octave, clone.spectral_tilt_db_per_octave,
            genhost::media::ProfileToJson(profile).dump().c_str());
    }
}

void PrintRow(const char* label, const std::vector<double>& values, const char* format) {
    std::printf("     %s{", label);
    for (std::size_t i = 0; i < values.size(); ++i) {
        std::printf(format, values[i]);
        if (i + 1 < values.size()) std::printf(", ");
    }
    std::printf("},\n");
}

void Calibrate() {
    std::printf(
        "// kVariants: F0 (EstimatePitch), spread and tilt (AnalyzeVoiceSample) at pitch "
        "0..100, range 50, 175 wpm\n");
    std::vector<std::string> variants = {""};
    for (const std::string& v : genhost::media::VoiceVariants()) variants.push_back(v);
    for (const std::string& variant : variants) {
        std::vector<double> f0;
        std::vector<double> spread;
        std::vector<double> tilt;
        for (int pitch = 0; pitch <= 100; pitch += 10) {
            const AudioBuffer audio =
                Speak(variant.empty() ? "en-us" : "en-us+" + variant, pitch, 175, 50);
            const VoiceAnalysis a = AnalyzeVoiceSample(audio);
            f0.push_back(genhost::media::EstimatePitch(audio));
            spread.push_back(a.f0_spread_semitones);
            tilt.push_back(a.spectral_tilt_db_per_octave);
        }
        std::printf("    {\"%s\", ...,\n", variant.c_str());
        PrintRow("", f0, "%.1f");
        PrintRow("", spread, "%.2f");
        PrintRow("", tilt, "%.2f");
    }

    const char* kReference[] = {"en-us+m1", "en-us+m3", "en-us+f3"};
    std::vector<double> range_shift;
    std::vector<double> range_scale;
    for (int range = 0; range <= 100; range += 25) {
        double shift = 0;
        double scale = 0;
        for (const char* voice : kReference) {
            const AudioBuffer at50 = Speak(voice, 50, 175, 50);
            const AudioBuffer audio = Speak(voice, 50, 175, range);
            shift += 12 * std::log2(genhost::media::EstimatePitch(audio) /
                                    genhost::media::EstimatePitch(at50));
            scale += AnalyzeVoiceSample(audio).f0_spread_semitones /
                     AnalyzeVoiceSample(at50).f0_spread_semitones;
        }
        range_shift.push_back(shift / 3);
        range_scale.push_back(scale / 3);
    }
    std::printf("// kRangeF0Shift and kRangeSpreadScale at range 0, 25, 50, 75, 100\n");
    PrintRow("", range_shift, "%.2f");
    PrintRow("", range_scale, "%.2f");

    std::printf("// kRateSyllables: {wpm, syllables per second}\n    ");
    for (const int rate : {80, 120, 160, 200, 250, 300, 350, 400, 450}) {
        double syllables = 0;
        for (const char* voice : kReference) {
            syllables += AnalyzeVoiceSample(Speak(voice, 50, rate, 50)).syllables_per_second;
        }
        std::printf("{%d, %.2f}, ", rate, syllables / 3);
    }
    std::printf("\n");

    double efficiency = 0;
    int count = 0;
    for (const char* voice : {"en-us+m3", "en-us+f3"}) {
        VoiceProfile p;
        p.base_voice = voice;
        const double flat =
            AnalyzeVoiceSample(genhost::media::SpeakWithProfile(p, kCalibrationText))
                .spectral_tilt_db_per_octave;
        for (const double tilt : {-4.0, 4.0}) {
            p.tilt_db_per_octave = tilt;
            const double measured =
                AnalyzeVoiceSample(genhost::media::SpeakWithProfile(p, kCalibrationText))
                    .spectral_tilt_db_per_octave;
            efficiency += (measured - flat) / tilt;
            ++count;
        }
    }
    std::printf("// kTiltEfficiency\n    %.2f\n", efficiency / count);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--calibrate") == 0) {
        Calibrate();
        return 0;
    }
    Timings();
    Accuracy();
    return 0;
}
