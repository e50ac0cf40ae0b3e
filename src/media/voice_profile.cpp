// Custom voices: analysis of a speech sample, the profile that imitates it or that a description
// asks for, and speech in a profile's voice (see genhost/media/voice_profile.hpp).
//
// The calibration tables below were measured on this module's own output (espeak-ng 1.51 through
// SynthesizeSpeech, measured with EstimatePitch and AnalyzeVoiceSample), so that a profile made
// from a sample speaks with the sample's measured F0, rate, range and tilt. `voice_clone_bench
// --calibrate` (bench/voices/clone_bench.cpp) measures them afresh; the voice profile tests check
// them against fresh synthesis.

#include "genhost/media/voice_profile.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "prng.hpp"

namespace genhost::media {
namespace {

// --- Analysis -------------------------------------------------------------------------------

constexpr int kFrameLength = kVoiceAnalysisRate * 40 / 1000;  // 640 samples
constexpr int kHop = kVoiceAnalysisRate / 100;                // 10 ms
constexpr double kHopSeconds = static_cast<double>(kHop) / kVoiceAnalysisRate;
constexpr int kFftSize = 1024;  // >= frame + longest lag: the autocorrelation does not wrap
constexpr int kBins = kFftSize / 2 + 1;
constexpr double kBinHz = static_cast<double>(kVoiceAnalysisRate) / kFftSize;
constexpr double kMinF0 = 60;
constexpr double kMaxF0 = 500;
constexpr int kMinLag = static_cast<int>(kVoiceAnalysisRate / kMaxF0);  // 32
constexpr int kMaxLag = static_cast<int>(kVoiceAnalysisRate / kMinF0);  // 266
// The autocorrelation is taken of the signal below this frequency: F0 and the first harmonics
// decide, not fricative noise or a bright microphone.
constexpr double kPeriodicityMaxHz = 2000;
constexpr double kVoicingThreshold = 0.45;  // normalised autocorrelation peak (as in Praat)
constexpr int kMinHarmonics = 3;            // within 30 dB of the strongest, below 4 kHz
constexpr int kMinVoicedRun = 4;            // frames (40 ms) of continuous F0
constexpr double kMaxF0Step = 2;            // semitones between neighbouring voiced frames
constexpr double kActiveAboveFloorDb = 10;  // speech activity: this far above the 10th percentile
constexpr double kActiveBelowPeakDb = 45;   // ... and no further below the 95th percentile
constexpr double kSilenceDb = -70;          // dBFS (mean square of a frame)
constexpr int kPauseFrames = 30;            // shorter gaps count as speech (0.3 s)
constexpr double kNucleusLowHz = 300;       // syllable nuclei: energy of the vowel band
constexpr double kNucleusHighHz = 3000;
constexpr double kNucleusDipDb = 2;         // nuclei are separated by this dip at least
constexpr double kNucleusBelowPeakDb = 25;  // and are at most this far below the loud frames
constexpr double kMinSpeechSpread = 0.08;   // semitones; steadier F0 is a tone, not a voice
// The long-term spectrum: third-octave bands from 100 Hz up to 5 kHz.
constexpr int kTiltBands = 17;

// Fft is an in-place radix-2 complex FFT of a fixed power-of-two size over separate real and
// imaginary arrays (std::complex multiplication is a library call without -ffast-math).
class Fft {
  public:
    explicit Fft(int n) : n_(n), rev_(static_cast<std::size_t>(n)) {
        int bits = 0;
        while ((1 << bits) < n) ++bits;
        for (int i = 0; i < n; ++i) {
            int r = 0;
            for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
            rev_[static_cast<std::size_t>(i)] = r;
        }
        for (int k = 0; k < n / 2; ++k) {
            const double a = 2 * std::numbers::pi * k / n;
            cos_.push_back(std::cos(a));
            sin_.push_back(std::sin(a));
        }
    }

    // Transform computes sum x[t] e^(∓2πikt/n) (the minus sign forward), without scaling.
    void Transform(std::vector<double>& re, std::vector<double>& im, bool inverse) const {
        for (int i = 0; i < n_; ++i) {
            const int j = rev_[static_cast<std::size_t>(i)];
            if (j > i) {
                std::swap(re[static_cast<std::size_t>(i)], re[static_cast<std::size_t>(j)]);
                std::swap(im[static_cast<std::size_t>(i)], im[static_cast<std::size_t>(j)]);
            }
        }
        const double sign = inverse ? 1.0 : -1.0;
        double* r = re.data();
        double* m = im.data();
        for (int len = 2; len <= n_; len <<= 1) {
            const int half = len / 2;
            const int step = n_ / len;
            for (int start = 0; start < n_; start += len) {
                for (int k = 0; k < half; ++k) {
                    const auto twiddle =
                        static_cast<std::size_t>(k) * static_cast<std::size_t>(step);
                    const double wr = cos_[twiddle];
                    const double wi = sign * sin_[twiddle];
                    const int a = start + k;
                    const int b = a + half;
                    const double tr = r[b] * wr - m[b] * wi;
                    const double ti = r[b] * wi + m[b] * wr;
                    r[b] = r[a] - tr;
                    m[b] = m[a] - ti;
                    r[a] += tr;
                    m[a] += ti;
                }
            }
        }
    }

  private:
    int n_;
    std::vector<int> rev_;
    std::vector<double> cos_;
    std::vector<double> sin_;
};

struct Frame {
    double energy_db = 0;  // mean square, dB
    double band_db = 0;    // energy of the syllable-nucleus band, dB
    double f0 = 0;         // > 0 when the frame is periodic and harmonic
    double peak = 0;       // normalised autocorrelation at the F0 lag
    bool active = false;
    bool voiced = false;                    // periodic, harmonic and part of a continuous F0 run
    std::array<float, kTiltBands> bands{};  // third-octave powers (periodic frames only)
};

double Percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

double Median(std::vector<double> v) { return Percentile(std::move(v), 0.5); }

std::string OneDecimal(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", v);
    return buffer;
}

// Bin is the FFT bin of a frequency, rounded down.
int Bin(double hz) { return std::clamp(static_cast<int>(hz / kBinHz), 0, kBins - 1); }

// Analyzer measures one mono kVoiceAnalysisRate signal.
class Analyzer {
  public:
    explicit Analyzer(std::vector<float> x);
    VoiceAnalysis Run(double audio_seconds);

  private:
    void Gate();
    void Spectra();
    void Measure(Frame& frame, const std::vector<double>& power, const std::vector<double>& acf);
    void KeepContinuousRuns();
    int Nuclei() const;
    double Tilt() const;

    std::vector<float> x_;
    Fft fft_;
    std::vector<double> window_;
    std::vector<double> window_acf_;  // the window's own autocorrelation, normalised
    std::array<std::pair<int, int>, kTiltBands> band_bins_{};
    std::vector<Frame> frames_;
};

Analyzer::Analyzer(std::vector<float> x) : x_(std::move(x)), fft_(kFftSize) {
    window_.resize(kFrameLength);
    for (int i = 0; i < kFrameLength; ++i) {
        window_[static_cast<std::size_t>(i)] =
            0.5 - 0.5 * std::cos(2 * std::numbers::pi * (i + 0.5) / kFrameLength);
    }
    // Dividing a frame's autocorrelation by the window's undoes the window's taper (Boersma
    // 1993), so a periodic frame peaks near 1 at its period.
    std::vector<double> re(kFftSize, 0.0);
    std::vector<double> im(kFftSize, 0.0);
    std::copy(window_.begin(), window_.end(), re.begin());
    fft_.Transform(re, im, false);
    for (std::size_t k = 0; k < re.size(); ++k) {
        re[k] = re[k] * re[k] + im[k] * im[k];
        im[k] = 0;
    }
    fft_.Transform(re, im, true);
    window_acf_.resize(kMaxLag + 2);
    for (std::size_t lag = 0; lag < window_acf_.size(); ++lag) window_acf_[lag] = re[lag] / re[0];

    for (int b = 0; b < kTiltBands; ++b) {
        const double centre = 100 * std::pow(2.0, b / 3.0);
        const int lo = static_cast<int>(std::ceil(centre * std::pow(2.0, -1.0 / 6) / kBinHz));
        const int hi = std::max(lo, Bin(centre * std::pow(2.0, 1.0 / 6)));
        band_bins_[static_cast<std::size_t>(b)] = {lo, hi};
    }
}

void Analyzer::Gate() {
    const std::size_t count = x_.size() < kFrameLength ? 0 : (x_.size() - kFrameLength) / kHop + 1;
    frames_.resize(count);
    std::vector<double> levels(count);
    for (std::size_t f = 0; f < count; ++f) {
        const float* s = x_.data() + f * kHop;
        double sum = 0;
        for (int i = 0; i < kFrameLength; ++i) sum += static_cast<double>(s[i]) * s[i];
        frames_[f].energy_db = 10 * std::log10(sum / kFrameLength + 1e-20);
        levels[f] = frames_[f].energy_db;
    }
    const double floor_db = Percentile(levels, 0.10);
    const double loud_db = Percentile(levels, 0.95);
    for (Frame& frame : frames_) {
        frame.active = frame.energy_db > kSilenceDb &&
                       frame.energy_db > floor_db + kActiveAboveFloorDb &&
                       frame.energy_db > loud_db - kActiveBelowPeakDb;
    }
}

// Spectra transforms the frames two at a time (one as the real part, one as the imaginary part
// of one complex FFT), then their power spectra two at a time back into autocorrelations.
void Analyzer::Spectra() {
    std::vector<double> re(kFftSize);
    std::vector<double> im(kFftSize);
    std::vector<double> power_a(kBins);
    std::vector<double> power_b(kBins);
    std::vector<double> acf_a(kMaxLag + 2);
    std::vector<double> acf_b(kMaxLag + 2);
    const int acf_bins = Bin(kPeriodicityMaxHz);
    for (std::size_t f = 0; f < frames_.size(); f += 2) {
        const bool pair = f + 1 < frames_.size();
        std::fill(re.begin(), re.end(), 0.0);
        std::fill(im.begin(), im.end(), 0.0);
        const float* a = x_.data() + f * kHop;
        const float* b = pair ? a + kHop : nullptr;
        for (std::size_t i = 0; i < kFrameLength; ++i) {
            re[i] = a[i] * window_[i];
            if (b != nullptr) im[i] = b[i] * window_[i];
        }
        fft_.Transform(re, im, false);
        for (std::size_t k = 0; k < kBins; ++k) {
            const std::size_t m = (kFftSize - k) % kFftSize;
            const double xr = re[k];
            const double xi = im[k];
            const double yr = re[m];
            const double yi = im[m];
            power_a[k] = 0.25 * ((xr + yr) * (xr + yr) + (xi - yi) * (xi - yi));
            power_b[k] = 0.25 * ((xi + yi) * (xi + yi) + (xr - yr) * (xr - yr));
        }
        // Both low-passed power spectra are real and even, so their inverse transforms are
        // real: one goes in the real part, the other in the imaginary part.
        for (int k = 0; k < kFftSize; ++k) {
            const int m = k < kBins ? k : kFftSize - k;
            const bool keep = m <= acf_bins;
            re[static_cast<std::size_t>(k)] = keep ? power_a[static_cast<std::size_t>(m)] : 0.0;
            im[static_cast<std::size_t>(k)] = keep ? power_b[static_cast<std::size_t>(m)] : 0.0;
        }
        fft_.Transform(re, im, true);
        std::copy_n(re.begin(), acf_a.size(), acf_a.begin());
        std::copy_n(im.begin(), acf_b.size(), acf_b.begin());
        Measure(frames_[f], power_a, acf_a);
        if (pair) Measure(frames_[f + 1], power_b, acf_b);
    }
}

void Analyzer::Measure(Frame& frame, const std::vector<double>& power,
                       const std::vector<double>& acf) {
    double band = 0;
    for (int k = Bin(kNucleusLowHz); k <= Bin(kNucleusHighHz); ++k) {
        band += power[static_cast<std::size_t>(k)];
    }
    frame.band_db = 10 * std::log10(band + 1e-20);
    if (!frame.active || acf[0] <= 0) return;

    std::array<double, kMaxLag + 2> r{};
    for (std::size_t lag = kMinLag - 1; lag < r.size(); ++lag) {
        r[lag] = std::min(1.0, acf[lag] / acf[0] / window_acf_[lag]);
    }
    std::size_t best = 0;
    double best_r = kVoicingThreshold;
    for (std::size_t lag = kMinLag; lag <= kMaxLag; ++lag) {
        if (r[lag] > best_r && r[lag] >= r[lag - 1] && r[lag] >= r[lag + 1]) {
            best_r = r[lag];
            best = lag;
        }
    }
    if (best == 0) return;
    // The best peak may be two or three periods long: take the shortest lag with a nearly as
    // strong peak that divides it.
    for (std::size_t lag = kMinLag; lag < best; ++lag) {
        if (r[lag] > 0.9 * best_r && r[lag] >= r[lag - 1] && r[lag] >= r[lag + 1]) {
            const double ratio = static_cast<double>(best) / static_cast<double>(lag);
            if (std::abs(ratio - std::round(ratio)) < 0.1) {
                best = lag;
                best_r = r[lag];
                break;
            }
        }
    }
    const double a = r[best - 1];
    const double b = r[best];
    const double c = r[best + 1];
    const double denom = a - 2 * b + c;
    const double shift =
        std::abs(denom) > 1e-12 ? std::clamp(0.5 * (a - c) / denom, -0.5, 0.5) : 0.0;
    const double f0 = kVoiceAnalysisRate / (static_cast<double>(best) + shift);

    // Speech has several harmonics within 30 dB of the strongest; a steady tone has one.
    std::array<double, 24> harmonics{};
    std::size_t count = 0;
    double strongest = 0;
    for (int h = 1; h <= 24 && h * f0 <= 4000; ++h) {
        const int lo = std::max(1, Bin((h - 0.25) * f0));
        const int hi = Bin((h + 0.25) * f0);
        double e = 0;
        for (int k = lo; k <= hi; ++k) e += power[static_cast<std::size_t>(k)];
        harmonics[count++] = e;
        strongest = std::max(strongest, e);
    }
    const auto strong = std::count_if(harmonics.begin(), harmonics.begin() + count,
                                      [&](double e) { return e >= strongest * 1e-3; });
    if (strong < kMinHarmonics) return;

    frame.f0 = f0;
    frame.peak = best_r;
    for (std::size_t band_index = 0; band_index < band_bins_.size(); ++band_index) {
        const auto [lo, hi] = band_bins_[band_index];
        double sum = 0;
        for (int k = lo; k <= hi; ++k) sum += power[static_cast<std::size_t>(k)];
        frame.bands[band_index] = static_cast<float>(sum / (hi - lo + 1));
    }
}

// KeepContinuousRuns marks as voiced the periodic frames that belong to a run of at least
// kMinVoicedRun frames whose F0 moves smoothly: noise is periodic only here and there.
void Analyzer::KeepContinuousRuns() {
    std::size_t start = 0;
    for (std::size_t i = 0; i <= frames_.size(); ++i) {
        const bool continues =
            i < frames_.size() && frames_[i].f0 > 0 &&
            (i == start ||
             std::abs(12 * std::log2(frames_[i].f0 / frames_[i - 1].f0)) <= kMaxF0Step);
        if (continues) continue;
        if (i - start >= kMinVoicedRun) {
            for (std::size_t j = start; j < i; ++j) frames_[j].voiced = true;
        }
        start = i < frames_.size() && frames_[i].f0 > 0 ? i : i + 1;
    }
}

// Nuclei counts syllable nuclei: peaks of the smoothed vowel-band energy at voiced frames, loud
// enough, each separated from the previous by a dip (de Jong and Wempe 2009).
int Analyzer::Nuclei() const {
    const std::size_t n = frames_.size();
    if (n < 3) return 0;
    std::vector<double> smooth(n);
    constexpr std::array<double, 5> kKernel = {1, 2, 3, 2, 1};
    for (std::size_t i = 0; i < n; ++i) {
        double sum = 0;
        double weight = 0;
        for (std::size_t k = 0; k < kKernel.size(); ++k) {
            if (i + k < 2 || i + k - 2 >= n) continue;
            sum += kKernel[k] * frames_[i + k - 2].band_db;
            weight += kKernel[k];
        }
        smooth[i] = sum / weight;
    }
    std::vector<double> active_bands;
    for (const Frame& f : frames_) {
        if (f.active) active_bands.push_back(f.band_db);
    }
    const double threshold = Percentile(active_bands, 0.95) - kNucleusBelowPeakDb;
    auto voiced_near = [&](std::size_t i) {
        for (std::size_t j = i >= 2 ? i - 2 : 0; j <= std::min(n - 1, i + 2); ++j) {
            if (frames_[j].voiced) return true;
        }
        return false;
    };

    std::vector<std::size_t> kept;
    for (std::size_t i = 1; i + 1 < n; ++i) {
        if (!(smooth[i] >= smooth[i - 1] && smooth[i] > smooth[i + 1])) continue;
        if (smooth[i] < threshold || !frames_[i].active || !voiced_near(i)) continue;
        if (kept.empty()) {
            kept.push_back(i);
            continue;
        }
        const std::size_t last = kept.back();
        const double dip = *std::min_element(smooth.begin() + static_cast<std::ptrdiff_t>(last),
                                             smooth.begin() + static_cast<std::ptrdiff_t>(i));
        if (smooth[last] - dip >= kNucleusDipDb && smooth[i] - dip >= kNucleusDipDb) {
            kept.push_back(i);
        } else if (smooth[i] > smooth[last]) {
            kept.back() = i;
        }
    }
    return static_cast<int>(kept.size());
}

// Tilt is the slope in dB per octave of a line fitted to the long-term average spectrum of the
// voiced frames in third-octave bands (equal weight per band, not per bin).
double Analyzer::Tilt() const {
    std::array<double, kTiltBands> sums{};
    for (const Frame& f : frames_) {
        if (!f.voiced) continue;
        for (std::size_t b = 0; b < sums.size(); ++b) sums[b] += f.bands[b];
    }
    double mx = 0;
    double my = 0;
    std::array<double, kTiltBands> levels{};
    for (std::size_t b = 0; b < sums.size(); ++b) {
        levels[b] = 10 * std::log10(sums[b] + 1e-30);
        mx += static_cast<double>(b) / 3;
        my += levels[b];
    }
    mx /= kTiltBands;
    my /= kTiltBands;
    double sxy = 0;
    double sxx = 0;
    for (std::size_t b = 0; b < sums.size(); ++b) {
        const double x = static_cast<double>(b) / 3 - mx;
        sxy += x * (levels[b] - my);
        sxx += x * x;
    }
    return sxy / sxx;
}

VoiceAnalysis Analyzer::Run(double audio_seconds) {
    VoiceAnalysis result;
    result.audio_seconds = audio_seconds;
    Gate();
    Spectra();
    KeepContinuousRuns();

    std::vector<double> f0s;
    std::vector<double> peaks;
    for (const Frame& f : frames_) {
        if (!f.voiced) continue;
        f0s.push_back(f.f0);
        peaks.push_back(f.peak);
    }
    result.voiced_seconds = static_cast<double>(f0s.size()) * kHopSeconds;

    std::size_t speech_frames = 0;
    std::optional<std::size_t> last_active;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
        if (!frames_[i].active) continue;
        const std::size_t gap = last_active ? i - *last_active - 1 : 0;
        speech_frames += 1 + (gap < kPauseFrames ? gap : 0);
        last_active = i;
    }
    result.speech_seconds = static_cast<double>(speech_frames) * kHopSeconds;

    const int nuclei = Nuclei();
    if (result.voiced_seconds < 0.3 || nuclei < 2) {
        result.failure = "The sample holds no speech";
        return result;
    }
    if (result.voiced_seconds < kVoiceSampleMinVoicedSeconds) {
        result.failure = "The sample holds too little speech: " +
                         OneDecimal(std::floor(result.voiced_seconds * 10) / 10) +
                         " s of voiced speech, at least 2 s needed";
        return result;
    }

    result.median_f0_hz = Median(f0s);
    double sum = 0;
    double sum2 = 0;
    int used = 0;
    for (const double f0 : f0s) {
        const double st = 12 * std::log2(f0 / result.median_f0_hz);
        if (std::abs(st) > 10) continue;  // octave errors
        sum += st;
        sum2 += st * st;
        ++used;
    }
    const double mean = sum / std::max(1, used);
    result.f0_spread_semitones = std::sqrt(std::max(0.0, sum2 / std::max(1, used) - mean * mean));
    // A buzzer or a synthesiser's steady note is periodic and harmonic, but speech's F0 moves.
    if (result.f0_spread_semitones < kMinSpeechSpread) {
        result.failure = "The sample holds no speech";
        return result;
    }
    result.syllables_per_second = result.speech_seconds > 0 ? nuclei / result.speech_seconds : 0;
    result.spectral_tilt_db_per_octave = Tilt();
    result.periodicity = Median(peaks);
    return result;
}

}  // namespace

VoiceAnalysis AnalyzeVoiceSample(const AudioBuffer& sample) {
    const double seconds = sample.seconds();
    VoiceAnalysis result;
    result.audio_seconds = seconds;
    if (sample.sample_rate <= 0 || sample.channels <= 0 || seconds < kVoiceSampleMinSeconds) {
        result.failure = "The sample is too short: " + OneDecimal(std::floor(seconds * 10) / 10) +
                         " s of audio, at least 3 s needed";
        return result;
    }
    if (seconds > kVoiceSampleMaxSeconds) {
        result.failure = "The sample is too long: " + OneDecimal(std::ceil(seconds * 10) / 10) +
                         " s of audio, at most 300 s allowed";
        return result;
    }
    AudioBuffer mono = Resample(sample, kVoiceAnalysisRate, 1);
    // Non-finite samples count as silence; a one-pole high-pass at 50 Hz removes DC and rumble.
    const double a = std::exp(-2 * std::numbers::pi * 50 / kVoiceAnalysisRate);
    double prev_in = 0;
    double prev_out = 0;
    for (float& v : mono.samples) {
        const double in = std::isfinite(v) ? v : 0.0;
        prev_out = a * (prev_out + in - prev_in);
        prev_in = in;
        v = static_cast<float>(prev_out);
    }
    return Analyzer(std::move(mono.samples)).Run(seconds);
}

namespace {

// --- Calibration ----------------------------------------------------------------------------

// VariantCalibration is what espeak-ng speaks with one variant (any language voice: they differ
// by less than half a semitone), measured on a three-sentence English text at 175 wpm, range 50,
// for pitch 0, 10, ..., 100.
struct VariantCalibration {
    const char* variant;  // "" is the language voice without a variant
    VoiceGender gender;
    std::array<double, 11> f0;      // EstimatePitch, Hz
    std::array<double, 11> spread;  // AnalyzeVoiceSample's F0 spread, semitones
    std::array<double, 11> tilt;    // AnalyzeVoiceSample's spectral tilt, dB per octave
};

constexpr VoiceGender kM = VoiceGender::kMale;
constexpr VoiceGender kF = VoiceGender::kFemale;

constexpr std::array<VariantCalibration, 15> kVariants = {{
    {"",
     kM,
     {70.5, 74.9, 79.5, 86.0, 93.4, 102.7, 113.0, 125.2, 138.9, 154.7, 170.8},
     {1.50, 1.59, 1.67, 1.86, 1.78, 1.60, 1.44, 1.31, 1.18, 1.05, 0.96},
     {-2.66, -2.71, -2.77, -2.81, -2.85, -2.93, -2.79, -2.65, -2.39, -1.99, -1.28}},
    {"m1",
     kM,
     {67.5, 71.0, 73.1, 79.9, 85.9, 94.9, 104.4, 115.5, 128.5, 143.0, 157.8},
     {1.06, 1.38, 1.51, 1.60, 1.68, 1.58, 1.43, 1.28, 1.17, 1.05, 0.94},
     {-2.86, -2.98, -3.04, -3.11, -3.13, -3.16, -3.14, -3.03, -2.89, -2.55, -2.05}},
    {"m2",
     kM,
     {65.7, 69.0, 74.7, 82.4, 90.9, 101.2, 112.9, 126.6, 142.1, 159.8, 177.5},
     {0.96, 1.22, 1.27, 1.41, 1.28, 1.15, 1.01, 0.90, 0.80, 0.71, 0.64},
     {-2.39, -2.41, -2.43, -2.46, -2.46, -2.56, -2.41, -2.35, -1.98, -1.42, -0.70}},
    {"m3",
     kM,
     {73.5, 78.2, 83.4, 89.5, 96.6, 106.3, 116.5, 128.7, 142.2, 157.6, 173.9},
     {1.68, 1.76, 1.80, 1.98, 1.89, 1.72, 1.55, 1.40, 1.27, 1.14, 1.03},
     {-2.54, -2.56, -2.60, -2.63, -2.69, -2.75, -2.66, -2.56, -2.31, -1.85, -1.06}},
    {"m4",
     kM,
     {69.7, 72.9, 76.4, 81.1, 86.4, 94.7, 103.2, 113.9, 125.2, 139.0, 152.8},
     {1.36, 1.58, 1.62, 1.72, 1.97, 1.86, 1.69, 1.53, 1.38, 1.25, 1.13},
     {-1.86, -1.96, -1.95, -1.99, -2.05, -2.11, -2.06, -1.99, -1.89, -1.67, -1.40}},
    {"m5",
     kM,
     {69.6, 74.8, 80.0, 86.9, 94.3, 103.8, 114.0, 126.2, 140.3, 156.2, 172.4},
     {1.23, 1.33, 1.41, 1.73, 1.62, 1.46, 1.32, 1.19, 1.05, 0.95, 0.86},
     {-2.41, -2.46, -2.48, -2.50, -2.55, -2.59, -2.53, -2.44, -2.22, -1.84, -1.20}},
    {"m6",
     kM,
     {68.4, 72.2, 78.0, 84.5, 92.6, 101.9, 112.6, 124.9, 139.7, 156.1, 172.3},
     {1.36, 1.53, 1.56, 1.76, 1.64, 1.47, 1.33, 1.20, 1.08, 0.95, 0.86},
     {-3.18, -3.20, -3.24, -3.28, -3.31, -3.38, -3.24, -3.16, -2.87, -2.46, -1.71}},
    {"m7",
     kM,
     {77.6, 83.1, 87.3, 92.8, 99.4, 107.7, 117.4, 128.6, 141.3, 156.4, 171.0},
     {2.01, 2.01, 2.08, 2.28, 2.23, 2.05, 1.86, 1.70, 1.57, 1.40, 1.27},
     {-5.17, -5.17, -5.23, -5.29, -5.36, -5.39, -5.34, -5.24, -4.94, -4.43, -3.88}},
    {"f1",
     kF,
     {116.9, 126.3, 135.6, 149.4, 163.0, 180.4, 199.0, 221.4, 247.2, 275.9, 306.2},
     {2.31, 2.11, 1.99, 1.79, 1.63, 1.47, 1.33, 1.18, 1.06, 0.95, 0.86},
     {-2.56, -2.57, -2.52, -2.40, -2.08, -1.54, -1.07, -0.67, -0.23, 0.15, 0.91}},
    {"f2",
     kF,
     {131.3, 141.4, 151.1, 164.9, 178.6, 196.3, 216.1, 238.7, 265.1, 293.5, 321.6},
     {2.69, 2.47, 2.29, 2.08, 1.91, 1.73, 1.58, 1.41, 1.27, 1.12, 1.00},
     {-2.87, -2.84, -2.72, -2.41, -1.92, -1.35, -0.74, -0.21, 0.28, 1.03, 1.50}},
    {"f3",
     kF,
     {149.6, 159.7, 169.6, 181.4, 195.2, 212.1, 230.9, 254.4, 277.2, 306.5, 333.7},
     {2.94, 2.75, 2.62, 2.41, 2.24, 2.04, 1.86, 1.71, 1.52, 1.37, 1.25},
     {-2.70, -2.57, -2.36, -2.13, -1.83, -1.47, -1.07, -0.71, -0.22, 0.37, 0.79}},
    {"f4",
     kF,
     {114.3, 124.1, 134.6, 147.6, 162.3, 180.1, 199.8, 222.0, 248.3, 277.2, 307.7},
     {2.37, 2.08, 1.92, 1.74, 1.56, 1.41, 1.26, 1.13, 1.00, 0.89, 0.81},
     {-2.59, -2.67, -2.62, -2.49, -2.13, -1.37, -0.70, 0.14, 0.54, 1.03, 1.62}},
    {"f5",
     kF,
     {131.6, 142.9, 154.5, 169.8, 186.0, 205.8, 228.2, 252.6, 283.3, 317.3, 349.3},
     {2.30, 2.13, 1.94, 1.75, 1.59, 1.43, 1.29, 1.15, 1.03, 0.91, 0.82},
     {-2.65, -2.58, -2.41, -1.93, -1.21, -0.62, 0.38, 1.01, 1.76, 2.24, 2.91}},
    {"grandma",
     kF,
     {151.8, 159.9, 167.5, 178.5, 189.0, 202.7, 219.9, 237.8, 259.0, 283.6, 308.2},
     {3.00, 2.85, 2.77, 2.69, 2.60, 2.38, 2.23, 2.10, 1.92, 1.76, 1.62},
     {-4.41, -4.31, -4.23, -3.97, -3.71, -3.26, -2.58, -2.15, -1.37, -0.69, -0.23}},
    {"grandpa",
     kM,
     {74.3, 78.2, 85.1, 90.0, 100.5, 106.7, 118.1, 129.0, 143.4, 158.6, 174.3},
     {1.79, 1.98, 2.05, 2.02, 1.94, 1.93, 1.80, 1.65, 1.51, 1.34, 1.24},
     {-2.37, -2.49, -2.38, -2.57, -2.55, -2.57, -2.53, -2.39, -2.12, -1.71, -1.04}},
}};

// The intonation range moves the median F0 (semitones) and scales the F0 spread, nearly the same
// for every variant; at range 0, 25, 50, 75, 100.
constexpr std::array<double, 5> kRangeF0Shift = {-2.72, -1.33, 0.0, 1.27, 2.49};
constexpr std::array<double, 5> kRangeSpreadScale = {0.13, 0.54, 1.0, 1.41, 1.64};

// Syllable nuclei per second of speech that AnalyzeVoiceSample finds in espeak-ng's English at a
// rate in words per minute (the mean of three variants). Faster speech is extrapolated from the
// last step: above 300 wpm espeak-ng's vowels are too short to count reliably.
constexpr std::array<std::pair<double, double>, 6> kRateSyllables = {{
    {80, 2.27},
    {120, 3.15},
    {160, 4.18},
    {200, 5.02},
    {250, 5.79},
    {300, 6.70},
}};

// How many dB per octave AnalyzeVoiceSample measures per dB per octave of the tilt EQ.
constexpr double kTiltEfficiency = 0.88;

// Typical F0 (Hz) of a voice of each gender, where DesignVoiceProfile starts.
constexpr double kMaleF0 = 112;
constexpr double kFemaleF0 = 205;
constexpr double kNeutralF0 = 155;

// Gender boundaries of a measured median F0.
constexpr double kMaleBelowF0 = 145;
constexpr double kFemaleAboveF0 = 175;

const VariantCalibration& Calibration(std::string_view variant) {
    for (const auto& c : kVariants) {
        if (variant == c.variant) return c;
    }
    throw std::invalid_argument("base_voice: unknown variant '" + std::string(variant) + "'");
}

// Interp is table[] read at `position` in 0..table.size()-1, linearly.
template <std::size_t N>
double Interp(const std::array<double, N>& table, double position) {
    position = std::clamp(position, 0.0, static_cast<double>(N - 1));
    const auto i = std::min(static_cast<std::size_t>(position), N - 2);
    const double t = position - static_cast<double>(i);
    return table[i] * (1 - t) + table[i + 1] * t;
}

// LogInterp interpolates geometrically (F0 is exponential in espeak-ng's pitch).
template <std::size_t N>
double LogInterp(const std::array<double, N>& table, double position) {
    std::array<double, N> logs{};
    for (std::size_t i = 0; i < N; ++i) logs[i] = std::log(table[i]);
    return std::exp(Interp(logs, position));
}

std::string_view VariantOf(std::string_view base_voice) {
    const auto plus = base_voice.find('+');
    return plus == std::string_view::npos ? std::string_view() : base_voice.substr(plus + 1);
}

std::string_view LanguageOf(std::string_view base_voice) {
    return base_voice.substr(0, base_voice.find('+'));
}

// EspeakF0 is the median F0 espeak-ng speaks with at `pitch` and `range`, before any shift.
double EspeakF0(const VariantCalibration& c, double pitch, double range) {
    return LogInterp(c.f0, pitch / 10) * std::pow(2.0, Interp(kRangeF0Shift, range / 25) / 12);
}

// Round snaps to a multiple of `step` (0.1 and 0.01 as the nearest doubles to the decimal, so
// JSON prints 0.94 and not 0.9400000000000001; never -0, which JSON would print as "-0.0").
double Round(double v, double step) {
    if (step < 1) {
        const double per_unit = std::round(1 / step);
        return std::round(v * per_unit) / per_unit + 0.0;
    }
    return std::round(v / step) * step + 0.0;
}

// Placement is where espeak-ng's pitch and the residual shift put a target F0.
struct Placement {
    int pitch = 50;
    double shift = 0;
};

Placement PlaceF0(const VariantCalibration& c, int range, double target_f0) {
    Placement best;
    double best_error = 1e9;
    for (int p = 0; p <= 100; ++p) {
        const double error = std::abs(std::log2(target_f0 / EspeakF0(c, p, range)));
        if (error < best_error - 1e-12) {
            best_error = error;
            best.pitch = p;
        }
    }
    best.shift = std::clamp(Round(12 * std::log2(target_f0 / EspeakF0(c, best.pitch, range)), 0.1),
                            -kVoiceMaxPitchShift, kVoiceMaxPitchShift);
    if (std::abs(best.shift) < 0.05) best.shift = 0;
    return best;
}

// RateFor is the espeak-ng rate whose speech has `syllables` nuclei per second.
int RateFor(double syllables) {
    std::size_t i = 1;
    while (i + 1 < kRateSyllables.size() && syllables > kRateSyllables[i].second) ++i;
    const auto [w0, s0] = kRateSyllables[i - 1];
    const auto [w1, s1] = kRateSyllables[i];
    const double wpm = w0 + (w1 - w0) * (syllables - s0) / (s1 - s0);
    return static_cast<int>(Round(std::clamp<double>(wpm, kVoiceMinRateWpm, kVoiceMaxRateWpm), 5));
}

// RangeFor is the espeak-ng range whose F0 spread is `spread` semitones.
int RangeFor(const VariantCalibration& c, int pitch, double spread) {
    const double scale = spread / std::max(0.1, Interp(c.spread, pitch / 10.0));
    int best = 50;
    double best_error = 1e9;
    for (int range = 0; range <= 100; ++range) {
        const double error = std::abs(Interp(kRangeSpreadScale, range / 25.0) - scale);
        if (error < best_error - 1e-12) {
            best_error = error;
            best = range;
        }
    }
    return best;
}

VoiceGender GenderFromName(std::string_view name) {
    if (name == "female") return VoiceGender::kFemale;
    if (name == "male") return VoiceGender::kMale;
    if (name == "neutral") return VoiceGender::kNeutral;
    throw std::invalid_argument("gender: must be female, male or neutral");
}

bool ValidLanguageName(std::string_view language) {
    if (language.empty() || language.size() > 32) return false;
    return std::all_of(language.begin(), language.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
    });
}

void CheckRange(const char* field, double v, double lo, double hi) {
    if (!std::isfinite(v) || v < lo || v > hi) {
        char buffer[160];
        std::snprintf(buffer, sizeof buffer, "%s: must be from %g to %g", field, lo, hi);
        throw std::invalid_argument(buffer);
    }
}

}  // namespace

std::string_view VoiceGenderName(VoiceGender gender) {
    switch (gender) {
        case VoiceGender::kFemale:
            return "female";
        case VoiceGender::kMale:
            return "male";
        case VoiceGender::kNeutral:
            break;
    }
    return "neutral";
}

const std::vector<std::string>& VoiceVariants() {
    static const std::vector<std::string> variants = [] {
        std::vector<std::string> v;
        for (const auto& c : kVariants) {
            if (*c.variant != '\0') v.emplace_back(c.variant);
        }
        return v;
    }();
    return variants;
}

void ValidateProfile(const VoiceProfile& p) {
    const std::string_view language = LanguageOf(p.base_voice);
    const std::string_view variant = VariantOf(p.base_voice);
    const bool known_variant =
        p.base_voice.find('+') == std::string::npos ||
        (!variant.empty() && std::find(VoiceVariants().begin(), VoiceVariants().end(), variant) !=
                                 VoiceVariants().end());
    if (!ValidLanguageName(language) || !known_variant || !SpeechVoiceExists(p.base_voice)) {
        throw std::invalid_argument("base_voice: '" + p.base_voice +
                                    "' is not an espeak-ng voice with a known variant");
    }
    CheckRange("rate_wpm", p.rate_wpm, kVoiceMinRateWpm, kVoiceMaxRateWpm);
    CheckRange("pitch", p.pitch, 0, 100);
    CheckRange("range", p.range, 0, 100);
    CheckRange("pitch_shift_semitones", p.pitch_shift_semitones, -kVoiceMaxPitchShift,
               kVoiceMaxPitchShift);
    CheckRange("formant_scale", p.formant_scale, kVoiceMinFormantScale, kVoiceMaxFormantScale);
    CheckRange("tilt_db_per_octave", p.tilt_db_per_octave, -kVoiceMaxTilt, kVoiceMaxTilt);
    CheckRange("breathiness", p.breathiness, 0, 1);
    if (p.gender != VoiceGender::kFemale && p.gender != VoiceGender::kMale &&
        p.gender != VoiceGender::kNeutral) {
        throw std::invalid_argument("gender: must be female, male or neutral");
    }
}

nlohmann::json ProfileToJson(const VoiceProfile& p) {
    // nlohmann::json keeps object keys sorted, so the text is the same for equal profiles.
    return nlohmann::json{
        {"version", 1},
        {"base_voice", p.base_voice},
        {"gender", VoiceGenderName(p.gender)},
        {"rate_wpm", p.rate_wpm},
        {"pitch", p.pitch},
        {"range", p.range},
        {"pitch_shift_semitones", p.pitch_shift_semitones},
        {"formant_scale", p.formant_scale},
        {"tilt_db_per_octave", p.tilt_db_per_octave},
        {"breathiness", p.breathiness},
    };
}

VoiceProfile ProfileFromJson(const nlohmann::json& json) {
    if (!json.is_object()) throw std::invalid_argument("voice profile: must be a JSON object");
    static const std::set<std::string, std::less<>> kKeys = {"version",
                                                             "base_voice",
                                                             "gender",
                                                             "rate_wpm",
                                                             "pitch",
                                                             "range",
                                                             "pitch_shift_semitones",
                                                             "formant_scale",
                                                             "tilt_db_per_octave",
                                                             "breathiness"};
    for (const auto& [key, value] : json.items()) {
        if (!kKeys.contains(key)) throw std::invalid_argument(key + ": unknown field");
    }
    auto field = [&](const char* key) -> const nlohmann::json& {
        const auto it = json.find(key);
        if (it == json.end()) throw std::invalid_argument(std::string(key) + ": missing");
        return *it;
    };
    auto integer = [&](const char* key) {
        const nlohmann::json& v = field(key);
        if (!v.is_number_integer()) {
            throw std::invalid_argument(std::string(key) + ": must be an integer");
        }
        // Large values saturate so that the range check, not a narrowing cast, rejects them.
        if (v.is_number_unsigned()) {
            return static_cast<int>(std::min<std::uint64_t>(v.get<std::uint64_t>(), 1u << 30));
        }
        return static_cast<int>(
            std::clamp<std::int64_t>(v.get<std::int64_t>(), -(1 << 30), 1 << 30));
    };
    auto number = [&](const char* key) {
        const nlohmann::json& v = field(key);
        if (!v.is_number()) throw std::invalid_argument(std::string(key) + ": must be a number");
        return v.get<double>();
    };
    auto string = [&](const char* key) {
        const nlohmann::json& v = field(key);
        if (!v.is_string()) throw std::invalid_argument(std::string(key) + ": must be a string");
        return v.get<std::string>();
    };
    if (integer("version") != 1) throw std::invalid_argument("version: must be 1");
    VoiceProfile p;
    p.base_voice = string("base_voice");
    p.gender = GenderFromName(string("gender"));
    p.rate_wpm = integer("rate_wpm");
    p.pitch = integer("pitch");
    p.range = integer("range");
    p.pitch_shift_semitones = number("pitch_shift_semitones");
    p.formant_scale = number("formant_scale");
    p.tilt_db_per_octave = number("tilt_db_per_octave");
    p.breathiness = number("breathiness");
    ValidateProfile(p);
    return p;
}

double ProfileTargetF0(const VoiceProfile& profile) {
    const VariantCalibration& c = Calibration(VariantOf(profile.base_voice));
    return EspeakF0(c, profile.pitch, profile.range) *
           std::pow(2.0, profile.pitch_shift_semitones / 12);
}

VoiceProfile ProfileFromAnalysis(const VoiceAnalysis& analysis) {
    if (!analysis.ok() || !(analysis.median_f0_hz > 0)) {
        throw std::invalid_argument("ProfileFromAnalysis: the analysis failed: " +
                                    analysis.failure);
    }
    const double f0 = analysis.median_f0_hz;
    VoiceProfile p;
    p.gender = f0 < kMaleBelowF0     ? VoiceGender::kMale
               : f0 > kFemaleAboveF0 ? VoiceGender::kFemale
                                     : VoiceGender::kNeutral;
    const char* variant = p.gender == VoiceGender::kMale     ? "m3"
                          : p.gender == VoiceGender::kFemale ? "f3"
                                                             : "f4";
    p.base_voice = std::string("en-us+") + variant;
    const VariantCalibration& c = Calibration(variant);

    // The range moves the median F0 and the pitch scales the spread: settle both in turn.
    Placement place = PlaceF0(c, 50, f0);
    for (int i = 0; i < 2; ++i) {
        p.range = RangeFor(c, place.pitch, analysis.f0_spread_semitones);
        place = PlaceF0(c, p.range, f0);
    }
    p.pitch = place.pitch;
    p.pitch_shift_semitones = place.shift;
    p.rate_wpm = RateFor(analysis.syllables_per_second);
    const double own_tilt = Interp(c.tilt, p.pitch / 10.0);
    p.tilt_db_per_octave =
        std::clamp(Round((analysis.spectral_tilt_db_per_octave - own_tilt) / kTiltEfficiency, 0.1),
                   -kVoiceMaxTilt, kVoiceMaxTilt);
    // Breathiness stays 0: a sample's periodicity falls with room noise, reverberation and speed
    // as much as with a breathy voice, so it cannot tell them apart.
    return p;
}

namespace {

// --- Design ---------------------------------------------------------------------------------

// Accent maps a word of a description to an espeak-ng language voice. English accents espeak-ng
// lacks take the nearest it has: Australian and New Zealand English the British voice (also
// non-rhotic), Irish English the Scottish one (rhotic, similar vowels).
struct Accent {
    const char* word;
    const char* language;
};

constexpr std::array<Accent, 44> kAccents = {{
    {"american", "en-us"},
    {"america", "en-us"},
    {"usa", "en-us"},
    {"texan", "en-us"},
    {"southern", "en-us"},
    {"york", "en-us-nyc"},
    {"brooklyn", "en-us-nyc"},
    {"british", "en-gb-x-rp"},
    {"posh", "en-gb-x-rp"},
    {"rp", "en-gb-x-rp"},
    {"aristocratic", "en-gb-x-rp"},
    {"english", "en"},
    {"england", "en"},
    {"london", "en"},
    {"uk", "en"},
    {"australian", "en"},
    {"aussie", "en"},
    {"zealand", "en"},
    {"kiwi", "en"},
    {"scottish", "en-gb-scotland"},
    {"scots", "en-gb-scotland"},
    {"irish", "en-gb-scotland"},
    {"northern", "en-gb-x-gbclan"},
    {"lancashire", "en-gb-x-gbclan"},
    {"midlands", "en-gb-x-gbcwmd"},
    {"brummie", "en-gb-x-gbcwmd"},
    {"caribbean", "en-029"},
    {"jamaican", "en-029"},
    {"indian", "hi"},
    {"hindi", "hi"},
    {"french", "fr"},
    {"german", "de"},
    {"spanish", "es"},
    {"mexican", "es-419"},
    {"latino", "es-419"},
    {"italian", "it"},
    {"portuguese", "pt"},
    {"brazilian", "pt-br"},
    {"dutch", "nl"},
    {"polish", "pl"},
    {"swedish", "sv"},
    {"russian", "ru"},
    {"welsh", "en-gb-x-gbcwmd"},
    {"canadian", "en-us"},
}};

// Language names for DescribeProfile.
constexpr std::array<Accent, 20> kLanguageNames = {{
    {"en-us", "American English"},
    {"en-us-nyc", "New York English"},
    {"en", "British English"},
    {"en-gb-x-rp", "British English (Received Pronunciation)"},
    {"en-gb-scotland", "Scottish English"},
    {"en-gb-x-gbclan", "Lancashire English"},
    {"en-gb-x-gbcwmd", "West Midlands English"},
    {"en-029", "Caribbean English"},
    {"hi", "Hindi accent"},
    {"fr", "French accent"},
    {"de", "German accent"},
    {"es", "Spanish accent"},
    {"es-419", "Latin American Spanish accent"},
    {"it", "Italian accent"},
    {"pt", "Portuguese accent"},
    {"pt-br", "Brazilian Portuguese accent"},
    {"nl", "Dutch accent"},
    {"pl", "Polish accent"},
    {"sv", "Swedish accent"},
    {"ru", "Russian accent"},
}};

enum class Age { kUnsaid, kChild, kYoung, kMiddle, kOld };

// Wish is what a description asks for, in relative terms.
struct Wish {
    int female_words = 0;
    int male_words = 0;
    Age age = Age::kUnsaid;
    double semitones = 0;  // F0 relative to the gender's typical
    double rate = 1.0;     // times 175 wpm
    double range = 50;
    bool monotone = false;
    double tilt = 0;
    double formant = 1.0;
    double breath = 0;
    std::string language;
    int known_words = 0;
};

// Words splits a description into lower-case ASCII words ("middle-aged" is "middle", "aged").
std::vector<std::string> Words(std::string_view prompt) {
    std::vector<std::string> words;
    std::string word;
    for (const char ch : prompt) {
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) {
            word += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
        } else if (!word.empty()) {
            words.push_back(std::move(word));
            word.clear();
        }
    }
    if (!word.empty()) words.push_back(std::move(word));
    return words;
}

bool Apply(Wish& w, std::string_view word) {
    static const std::set<std::string_view> kFemale = {
        "woman", "women",   "female",      "girl",    "lady",     "feminine",
        "she",   "her",     "mother",      "mom",     "daughter", "sister",
        "queen", "actress", "grandmother", "grandma", "aunt",     "princess"};
    static const std::set<std::string_view> kMale = {
        "man",   "men",         "male",    "boy",   "guy",   "gentleman", "masculine",
        "he",    "his",         "father",  "dad",   "son",   "brother",   "king",
        "actor", "grandfather", "grandpa", "uncle", "prince"};
    if (kFemale.contains(word)) {
        ++w.female_words;
    } else if (kMale.contains(word)) {
        ++w.male_words;
    }
    if (word == "grandmother" || word == "grandma" || word == "grandfather" || word == "grandpa") {
        w.age = Age::kOld;
        return true;
    }
    if (kFemale.contains(word) || kMale.contains(word)) return true;

    if (word == "child" || word == "kid" || word == "little" || word == "toddler") {
        w.age = Age::kChild;
    } else if (word == "young" || word == "teen" || word == "teenage" || word == "teenager" ||
               word == "youthful" || word == "student") {
        if (w.age != Age::kChild) w.age = Age::kYoung;
    } else if (word == "middle" || word == "mature" || word == "adult") {
        if (w.age == Age::kUnsaid) w.age = Age::kMiddle;
    } else if (word == "old" || word == "elderly" || word == "aged" || word == "senior" ||
               word == "ancient" || word == "aging") {
        if (word != "aged" || w.age != Age::kMiddle) w.age = Age::kOld;
    } else if (word == "deep") {
        w.semitones -= 4;
        w.formant *= 0.94;
        w.tilt -= 1;
    } else if (word == "low" || word == "baritone") {
        w.semitones -= 3;
    } else if (word == "bass") {
        w.semitones -= 5;
        w.formant *= 0.95;
    } else if (word == "high" || word == "soprano" || word == "tenor") {
        w.semitones += 3.5;
    } else if (word == "squeaky" || word == "shrill" || word == "chipmunk") {
        w.semitones += 6;
        w.formant *= 1.1;
        w.tilt += 2;
    } else if (word == "slow" || word == "leisurely" || word == "drawling") {
        w.rate *= 0.8;
    } else if (word == "calm" || word == "relaxed" || word == "soothing" || word == "gentle" ||
               word == "serene") {
        w.rate *= 0.9;
        w.range -= 10;
        w.tilt -= 0.5;
    } else if (word == "fast" || word == "quick" || word == "rapid" || word == "hurried") {
        w.rate *= 1.25;
    } else if (word == "energetic" || word == "excited" || word == "lively" ||
               word == "enthusiastic" || word == "upbeat" || word == "cheerful" ||
               word == "bubbly" || word == "animated") {
        w.rate *= 1.15;
        w.range += 25;
        w.semitones += 1;
    } else if (word == "monotone" || word == "flat" || word == "robotic" || word == "bored") {
        w.monotone = true;
    } else if (word == "expressive" || word == "dramatic" || word == "theatrical") {
        w.range += 25;
    } else if (word == "warm" || word == "smooth" || word == "mellow" || word == "rich") {
        w.tilt -= 2;
        w.formant *= 0.97;
    } else if (word == "bright" || word == "clear" || word == "crisp") {
        w.tilt += 2.5;
    } else if (word == "dark") {
        w.tilt -= 2.5;
    } else if (word == "raspy" || word == "gravelly" || word == "hoarse" || word == "husky" ||
               word == "rough" || word == "gruff") {
        w.breath += 0.35;
        w.tilt -= 1.5;
        w.semitones -= 1;
    } else if (word == "breathy" || word == "airy" || word == "whispery" || word == "sultry") {
        w.breath += 0.5;
    } else if (word == "soft" || word == "quiet") {
        w.breath += 0.15;
        w.tilt -= 2;
    } else if (word == "authoritative" || word == "commanding" || word == "confident" ||
               word == "strong" || word == "powerful" || word == "firm") {
        w.semitones -= 1.5;
        w.rate *= 0.95;
        w.range -= 5;
        w.tilt += 1;
    } else {
        for (const auto& accent : kAccents) {
            if (word == accent.word) {
                w.language = accent.language;
                return true;
            }
        }
        return false;
    }
    return true;
}

}  // namespace

VoiceProfile DesignVoiceProfile(std::string_view prompt) {
    const std::vector<std::string> words = Words(prompt);
    Wish w;
    std::set<std::string_view> seen;
    for (const std::string& word : words) {
        if (!seen.insert(word).second) continue;  // repeating a word does not strengthen it
        w.known_words += Apply(w, word) ? 1 : 0;
    }
    std::string joined;
    for (const std::string& word : words) joined += word + ' ';
    Xoshiro256 rng(Mix64(Fnv1a64(joined)));

    VoiceProfile p;
    p.gender = w.female_words > w.male_words   ? VoiceGender::kFemale
               : w.male_words > w.female_words ? VoiceGender::kMale
                                               : VoiceGender::kNeutral;
    double f0 = p.gender == VoiceGender::kFemale ? kFemaleF0
                : p.gender == VoiceGender::kMale ? kMaleF0
                                                 : kNeutralF0;
    double formant = w.formant;
    double rate = w.rate;
    double range = w.range;
    double breath = w.breath;
    std::string variant;
    switch (w.age) {
        case Age::kChild:
            f0 = p.gender == VoiceGender::kMale ? 275 : 295;
            formant *= 1.18;
            rate *= 1.05;
            range += 10;
            variant = "f5";
            break;
        case Age::kYoung:
            f0 *= std::pow(2.0, (p.gender == VoiceGender::kFemale ? 1.0 : 1.5) / 12);
            formant *= 1.04;
            rate *= 1.06;
            range += 5;
            break;
        case Age::kMiddle:
            f0 *= std::pow(2.0, -1.0 / 12);
            formant *= 0.98;
            break;
        case Age::kOld:
            // Men's voices rise a little with age, women's fall; both slow and shake.
            f0 *= std::pow(2.0, (p.gender == VoiceGender::kFemale ? -2.0 : 0.5) / 12);
            rate *= 0.85;
            breath += 0.15;
            variant = p.gender == VoiceGender::kFemale ? "grandma" : "grandpa";
            break;
        case Age::kUnsaid:
            break;
    }
    if (variant.empty()) {
        static constexpr std::array<const char*, 6> kMaleVariants = {"m1", "m2", "m3",
                                                                     "m4", "m5", "m6"};
        static constexpr std::array<const char*, 5> kFemaleVariants = {"f1", "f2", "f3", "f4",
                                                                       "f5"};
        static constexpr std::array<const char*, 2> kNeutralVariants = {"f4", "m5"};
        if (p.gender == VoiceGender::kMale) {
            variant = kMaleVariants[rng.Below(kMaleVariants.size())];
        } else if (p.gender == VoiceGender::kFemale) {
            variant = kFemaleVariants[rng.Below(kFemaleVariants.size())];
        } else {
            variant = kNeutralVariants[rng.Below(kNeutralVariants.size())];
        }
    } else {
        rng.Next();  // the same draws follow whichever way the variant was chosen
    }

    // The description's own hash varies what its words leave open, moderately.
    f0 *= std::pow(2.0, (w.semitones + rng.Uniform(-1.2, 1.2)) / 12);
    rate *= 1 + rng.Uniform(-0.06, 0.06);
    range += rng.Uniform(-8, 8);
    const double tilt = w.tilt + rng.Uniform(-0.8, 0.8);
    formant *= 1 + rng.Uniform(-0.03, 0.03);

    const std::string language = w.language.empty() ? "en-us" : w.language;
    p.base_voice = language + "+" + variant;
    if (!SpeechVoiceExists(p.base_voice)) p.base_voice = "en-us+" + variant;
    p.range = w.monotone ? 5 : std::clamp(static_cast<int>(std::lround(range)), 0, 100);
    const VariantCalibration& c = Calibration(variant);
    const Placement place = PlaceF0(c, p.range, f0);
    p.pitch = place.pitch;
    p.pitch_shift_semitones = place.shift;
    p.rate_wpm = static_cast<int>(
        Round(std::clamp<double>(175 * rate, kVoiceMinRateWpm, kVoiceMaxRateWpm), 5));
    p.tilt_db_per_octave = std::clamp(Round(tilt, 0.1), -kVoiceMaxTilt, kVoiceMaxTilt);
    p.formant_scale =
        std::clamp(Round(formant, 0.01), kVoiceMinFormantScale, kVoiceMaxFormantScale);
    p.breathiness = std::clamp(Round(breath, 0.01), 0.0, 1.0);
    return p;
}

std::vector<std::string> DescribeProfile(const VoiceProfile& profile) {
    std::vector<std::string> out;
    out.emplace_back(VoiceGenderName(profile.gender));
    const std::string_view variant = VariantOf(profile.base_voice);
    if (variant == "grandma" || variant == "grandpa") out.emplace_back("elderly");
    const double f0 = ProfileTargetF0(profile);
    if (profile.formant_scale >= 1.12 && f0 >= 250) out.emplace_back("childlike");

    const double typical = profile.gender == VoiceGender::kFemale ? kFemaleF0
                           : profile.gender == VoiceGender::kMale ? kMaleF0
                                                                  : kNeutralF0;
    const double st = 12 * std::log2(f0 / typical);
    const char* pitch = st < -4     ? "very low pitch"
                        : st < -1.5 ? "low pitch"
                        : st <= 1.5 ? "medium pitch"
                        : st <= 4   ? "high pitch"
                                    : "very high pitch";
    out.push_back(std::string(pitch) + " (" + std::to_string(std::lround(f0)) + " Hz)");

    const int wpm = profile.rate_wpm;
    out.emplace_back(wpm < 120    ? "very slow"
                     : wpm < 155  ? "slow"
                     : wpm <= 200 ? "moderate pace"
                     : wpm <= 250 ? "fast"
                                  : "very fast");
    const std::string_view language = LanguageOf(profile.base_voice);
    std::string accent = "espeak-ng voice " + std::string(language);
    for (const auto& name : kLanguageNames) {
        if (language == name.word) accent = name.language;
    }
    out.push_back(std::move(accent));
    if (profile.range < 20) out.emplace_back("monotone");
    if (profile.range > 70) out.emplace_back("expressive");
    if (profile.tilt_db_per_octave <= -1.5) out.emplace_back("warm");
    if (profile.tilt_db_per_octave >= 1.5) out.emplace_back("bright");
    if (profile.breathiness >= 0.25) out.emplace_back("breathy");
    if (profile.formant_scale <= 0.94) out.emplace_back("deep timbre");
    if (profile.formant_scale >= 1.06 && f0 < 250) out.emplace_back("light timbre");
    return out;
}

// --- Speech ---------------------------------------------------------------------------------

namespace {

std::string Num(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", v);
    return buffer;
}

// PostChain is the libavfilter chain applied to espeak-ng's speech at `rate`: rubberband moves
// F0 keeping the formants, resampling scales formants and F0 together (atempo keeps the length),
// shelving filters tilt the spectrum. rubberband comes first: after atempo in one graph it is
// handed frames past its final one.
std::string PostChain(const VoiceProfile& p, int rate) {
    std::vector<std::string> parts;
    const double shift = std::pow(2.0, p.pitch_shift_semitones / 12);
    double tract = p.formant_scale;
    const long shifted_rate = std::lround(rate * tract);
    tract = static_cast<double>(shifted_rate) / rate;
    const double pitch = shift / tract;
    if (std::abs(pitch - 1) > 1e-3) {
        if (AudioFilterAvailable("rubberband")) {
            parts.push_back("rubberband=pitch=" + Num(pitch) + ":formant=preserved:pitchq=quality");
        } else {
            // Without rubberband the formants follow the pitch shift.
            tract *= pitch;
        }
    }
    if (std::abs(tract - 1) > 1e-3) {
        const long r = std::lround(rate * tract);
        parts.push_back("asetrate=" + std::to_string(r) + ",aresample=" + std::to_string(rate) +
                        ",atempo=" + Num(static_cast<double>(rate) / static_cast<double>(r)));
    }
    if (std::abs(p.tilt_db_per_octave) >= 0.05) {
        // Six octave-spaced shelves, each adding the tilt once: a slope over 150 Hz - 4.8 kHz.
        for (const int f : {150, 300, 600, 1200, 2400, 4800}) {
            parts.push_back("highshelf=f=" + std::to_string(f) + ":g=" + Num(p.tilt_db_per_octave) +
                            ":t=s:w=0.5");
        }
    }
    std::string chain;
    for (const std::string& part : parts) chain += (chain.empty() ? "" : ",") + part;
    return chain.empty() ? "anull" : chain;
}

// AddBreath mixes aspiration into the voiced sounds: high-passed noise that follows the
// envelope of the speech below 1 kHz (vowels, not fricatives, which are noise already).
void AddBreath(AudioBuffer& audio, double breathiness) {
    if (breathiness <= 0) return;
    const double rate = audio.sample_rate;
    const double attack = std::exp(-1 / (0.005 * rate));
    const double release = std::exp(-1 / (0.030 * rate));
    const double low_pass = std::exp(-2 * std::numbers::pi * 1000 / rate);
    const double high_pass = std::exp(-2 * std::numbers::pi * 1500 / rate);
    Xoshiro256 rng(0x62726561746821ULL);
    double low = 0;
    double envelope = 0;
    double prev_noise = 0;
    double noise_hp = 0;
    const double level = 2.0 * breathiness;
    const double keep = 1 - 0.2 * breathiness;
    for (float& s : audio.samples) {
        low = low_pass * low + (1 - low_pass) * s;
        const double magnitude = std::abs(low);
        const double k = magnitude > envelope ? attack : release;
        envelope = k * envelope + (1 - k) * magnitude;
        const double noise = rng.Uniform(-1, 1);
        noise_hp = high_pass * (noise_hp + noise - prev_noise);
        prev_noise = noise;
        s = static_cast<float>(keep * s + level * envelope * noise_hp);
    }
}

}  // namespace

AudioBuffer SpeakWithProfile(const VoiceProfile& profile, std::string_view text,
                             const std::function<bool()>& keep_going) {
    ValidateProfile(profile);
    SpeechParams params;
    params.text = std::string(text);
    params.voice = profile.base_voice;
    params.rate_wpm = profile.rate_wpm;
    params.pitch = profile.pitch;
    params.range = profile.range;
    AudioBuffer speech = SynthesizeSpeech(params, keep_going);
    AudioBuffer empty{kVoiceOutputRate, 1, {}};
    if (speech.frames() == 0 || (keep_going && !keep_going())) return empty;

    const std::int64_t frames = speech.frames();
    AudioBuffer out =
        FilterAudio(speech, PostChain(profile, speech.sample_rate), kVoiceOutputRate, 1);
    if (keep_going && !keep_going()) return empty;
    FitFrames(out, static_cast<std::int64_t>(std::llround(static_cast<double>(frames) *
                                                          kVoiceOutputRate / speech.sample_rate)));
    AddBreath(out, profile.breathiness);
    const float peak = PeakLevel(out);
    if (peak > 0) {
        const float gain = 0.89f / peak;
        for (float& s : out.samples) s *= gain;
    }
    return out;
}

}  // namespace genhost::media
