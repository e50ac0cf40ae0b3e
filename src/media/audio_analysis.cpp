// EstimatePitch: median fundamental frequency by normalised autocorrelation.

#include <algorithm>
#include <cmath>
#include <vector>

#include "genhost/media/audio.hpp"

namespace genhost::media {
namespace {

constexpr int kAnalysisRate = 8000;
constexpr double kMinF0 = 60;
constexpr double kMaxF0 = 500;
constexpr int kMaxFrames = 600;  // frames analysed at most (spread over the whole clip)

}  // namespace

double EstimatePitch(const AudioBuffer& audio) {
    if (audio.frames() == 0 || audio.sample_rate <= 0) return 0;
    const AudioBuffer low = Resample(audio, kAnalysisRate, 1);
    const std::vector<float>& x = low.samples;
    const int frame = kAnalysisRate * 40 / 1000;
    const int hop = kAnalysisRate * 20 / 1000;
    const int min_lag = static_cast<int>(kAnalysisRate / kMaxF0);
    const int max_lag = static_cast<int>(kAnalysisRate / kMinF0);
    if (static_cast<int>(x.size()) < frame + max_lag) return 0;

    const double global_rms = RmsLevel(low);
    if (global_rms < 1e-4) return 0;
    const int positions = (static_cast<int>(x.size()) - frame - max_lag) / hop + 1;
    const int step = std::max(1, positions / kMaxFrames);

    std::vector<double> f0s;
    for (int p = 0; p < positions; p += step) {
        const float* s = x.data() + static_cast<std::ptrdiff_t>(p) * hop;
        double energy = 0;
        for (int i = 0; i < frame; ++i) energy += static_cast<double>(s[i]) * s[i];
        const double rms = std::sqrt(energy / frame);
        if (rms < 0.3 * global_rms || rms < 1e-3) continue;

        std::vector<double> r(static_cast<std::size_t>(max_lag + 2), 0.0);
        for (int lag = min_lag - 1; lag <= max_lag + 1; ++lag) {
            double num = 0;
            double e2 = 0;
            for (int i = 0; i < frame; ++i) {
                num += static_cast<double>(s[i]) * s[i + lag];
                e2 += static_cast<double>(s[i + lag]) * s[i + lag];
            }
            r[static_cast<std::size_t>(lag)] = num / std::sqrt(energy * e2 + 1e-12);
        }
        int best = -1;
        double best_r = 0.5;  // voicing threshold
        for (int lag = min_lag; lag <= max_lag; ++lag) {
            const double v = r[static_cast<std::size_t>(lag)];
            if (v > best_r && v >= r[static_cast<std::size_t>(lag - 1)] &&
                v >= r[static_cast<std::size_t>(lag + 1)]) {
                best_r = v;
                best = lag;
            }
        }
        if (best < 0) continue;
        // Prefer the shortest lag whose peak is nearly as strong (avoids octave-down errors).
        for (int lag = min_lag; lag < best; ++lag) {
            const double v = r[static_cast<std::size_t>(lag)];
            if (v > 0.9 * best_r && v >= r[static_cast<std::size_t>(lag - 1)] &&
                v >= r[static_cast<std::size_t>(lag + 1)] && best % lag <= 1) {
                best = lag;
                break;
            }
        }
        const double a = r[static_cast<std::size_t>(best - 1)];
        const double b = r[static_cast<std::size_t>(best)];
        const double c = r[static_cast<std::size_t>(best + 1)];
        const double denom = a - 2 * b + c;
        const double shift = std::abs(denom) > 1e-12 ? 0.5 * (a - c) / denom : 0.0;
        f0s.push_back(kAnalysisRate / (best + std::clamp(shift, -0.5, 0.5)));
    }
    if (f0s.empty()) return 0;
    std::nth_element(f0s.begin(), f0s.begin() + static_cast<std::ptrdiff_t>(f0s.size() / 2),
                     f0s.end());
    return f0s[f0s.size() / 2];
}

}  // namespace genhost::media
