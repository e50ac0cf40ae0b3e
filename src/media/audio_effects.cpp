// SynthesizeEffect: procedural sound effects. Keywords of the prompt pick layers (noise colours,
// tones, envelopes); the seed and the prompt pick their parameters; a loop crossfades its tail
// into its head so the last sample runs on into the first.

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "genhost/media/audio.hpp"
#include "prng.hpp"

namespace genhost::media {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

struct LayerRule {
    const char* name;
    std::array<const char*, 10> keywords;
};

// The layers and the words that select them (a word matches when a prompt word starts with it).
constexpr std::array<LayerRule, 14> kLayers = {{
    {"rain", {"rain", "drizzl", "shower", "downpour", "storm"}},
    {"wind", {"wind", "breez", "gust", "blizzard", "howl", "storm", "air"}},
    {"thunder", {"thunder", "lightning", "rumbl", "storm"}},
    {"whoosh", {"whoosh", "swoosh", "swish", "swip", "woosh", "fly", "transition", "swing"}},
    {"beep", {"beep", "bleep", "alarm", "alert", "notification", "ping", "buzzer", "siren"}},
    {"explosion", {"explo", "boom", "blast", "bomb", "deton", "impact", "crash", "smash"}},
    {"fire", {"fire", "crackl", "campfire", "flame", "burn", "fireplace"}},
    {"water", {"water", "stream", "river", "ocean", "wave", "sea", "splash", "bubbl", "brook"}},
    {"engine", {"engine", "car", "motor", "truck", "drone", "hum", "machine", "rev", "vehicle"}},
    {"bird", {"bird", "chirp", "tweet", "forest", "songbird", "morning"}},
    {"bell", {"bell", "chime", "ding", "gong", "church"}},
    {"laser", {"laser", "zap", "sci", "blaster", "shoot", "phaser", "ray"}},
    {"click", {"click", "tick", "clock", "tap", "typing", "keyboard", "button"}},
    {"footsteps", {"footstep", "step", "walk", "knock", "door", "thud", "stomp", "run"}},
}};

std::vector<std::string> Words(std::string_view prompt) {
    std::vector<std::string> words;
    std::string word;
    for (const char c : prompt) {
        if (std::isalnum(static_cast<unsigned char>(c))) {
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!word.empty()) {
            words.push_back(std::move(word));
            word.clear();
        }
    }
    if (!word.empty()) words.push_back(std::move(word));
    return words;
}

// Biquad is an RBJ cookbook filter (direct form I).
struct Biquad {
    double b0 = 1, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
    double x1 = 0, x2 = 0, y1 = 0, y2 = 0;

    void Set(char kind, double freq, double q, double rate) {
        freq = std::clamp(freq, 10.0, rate * 0.45);
        const double w = kTwoPi * freq / rate;
        const double alpha = std::sin(w) / (2 * q);
        const double cw = std::cos(w);
        double n0, n1, n2;
        if (kind == 'l') {
            n0 = (1 - cw) / 2, n1 = 1 - cw, n2 = (1 - cw) / 2;
        } else if (kind == 'h') {
            n0 = (1 + cw) / 2, n1 = -(1 + cw), n2 = (1 + cw) / 2;
        } else {
            n0 = alpha, n1 = 0, n2 = -alpha;  // band-pass, 0 dB peak
        }
        const double d0 = 1 + alpha;
        b0 = n0 / d0, b1 = n1 / d0, b2 = n2 / d0;
        a1 = -2 * cw / d0, a2 = (1 - alpha) / d0;
    }
    double Run(double x) {
        const double y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
        x2 = x1, x1 = x, y2 = y1, y1 = y;
        return y;
    }
};

// Pink is Paul Kellet's economical pink-noise filter.
struct Pink {
    double b0 = 0, b1 = 0, b2 = 0;
    double Run(double white) {
        b0 = 0.99765 * b0 + white * 0.0990460;
        b1 = 0.96300 * b1 + white * 0.2965164;
        b2 = 0.57000 * b2 + white * 1.0526913;
        return (b0 + b1 + b2 + white * 0.1848) * 0.25;
    }
};

struct Brown {
    double v = 0;
    double Run(double white) {
        v = (v + 0.02 * white) / 1.02;
        return v * 3.5;
    }
};

struct Canvas {
    int rate;
    std::int64_t frames;
    double pitch;  // frequency factor
    std::vector<float> left;
    std::vector<float> right;

    void Add(std::int64_t i, double l, double r) {
        if (i < 0 || i >= frames) return;
        left[static_cast<std::size_t>(i)] += static_cast<float>(l);
        right[static_cast<std::size_t>(i)] += static_cast<float>(r);
    }
    double Seconds() const { return static_cast<double>(frames) / rate; }
};

double Noise(Xoshiro256& rng) { return rng.Uniform(-1.0, 1.0); }

// Burst adds a decaying band-passed noise burst at `start` seconds, panned (-1..1).
void Burst(Canvas& c, Xoshiro256& rng, double start, double length, double freq, double q,
           double gain, double pan) {
    Biquad bp;
    bp.Set('b', freq * c.pitch, q, c.rate);
    const auto begin = static_cast<std::int64_t>(start * c.rate);
    const auto n = static_cast<std::int64_t>(length * c.rate);
    const double gl = gain * std::sqrt((1 - pan) / 2);
    const double gr = gain * std::sqrt((1 + pan) / 2);
    for (std::int64_t i = 0; i < n; ++i) {
        const double env = std::exp(-5.0 * static_cast<double>(i) / static_cast<double>(n));
        const double v = bp.Run(Noise(rng)) * env;
        c.Add(begin + i, v * gl, v * gr);
    }
}

// Tone adds a sine sweeping from f1 to f2 over `length` seconds with attack/decay ramps.
void Tone(Canvas& c, double start, double length, double f1, double f2, double gain, double pan,
          double decay = 0) {
    const auto begin = static_cast<std::int64_t>(start * c.rate);
    const auto n = static_cast<std::int64_t>(length * c.rate);
    const auto ramp = std::max<std::int64_t>(1, c.rate / 200);
    const double gl = gain * std::sqrt((1 - pan) / 2);
    const double gr = gain * std::sqrt((1 + pan) / 2);
    double phase = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double t = static_cast<double>(i) / static_cast<double>(n);
        const double f = (f1 + (f2 - f1) * t) * c.pitch;
        phase += kTwoPi * f / c.rate;
        double env =
            std::min({1.0, static_cast<double>(i) / ramp, static_cast<double>(n - i) / ramp});
        if (decay > 0) env *= std::exp(-decay * static_cast<double>(i) / c.rate);
        const double v = std::sin(phase) * env;
        c.Add(begin + i, v * gl, v * gr);
    }
}

void Rain(Canvas& c, Xoshiro256& rng) {
    Pink pl, pr;
    Biquad hl, hr;
    hl.Set('h', 500, 0.7, c.rate);
    hr.Set('h', 500, 0.7, c.rate);
    for (std::int64_t i = 0; i < c.frames; ++i) {
        c.Add(i, hl.Run(pl.Run(Noise(rng))) * 0.5, hr.Run(pr.Run(Noise(rng))) * 0.5);
    }
    const double per_second = rng.Uniform(25, 50);
    const auto drops = static_cast<int>(per_second * c.Seconds());
    for (int d = 0; d < drops; ++d) {
        Burst(c, rng, rng.Uniform(0, c.Seconds()), rng.Uniform(0.004, 0.02),
              rng.Uniform(1800, 6000), 4, rng.Uniform(0.1, 0.35), rng.Uniform(-0.9, 0.9));
    }
}

void Wind(Canvas& c, Xoshiro256& rng) {
    Brown bl, br;
    Biquad fl, fr;
    const double lfo = rng.Uniform(0.08, 0.25);
    const double gust = rng.Uniform(0.15, 0.4);
    const double phase = rng.Uniform(0, kTwoPi);
    for (std::int64_t i = 0; i < c.frames; ++i) {
        const double t = static_cast<double>(i) / c.rate;
        if (i % 64 == 0) {
            const double centre = 350 + 300 * std::sin(kTwoPi * lfo * t + phase);
            fl.Set('b', centre * c.pitch, 1.5, c.rate);
            fr.Set('b', centre * 1.07 * c.pitch, 1.5, c.rate);
        }
        const double amp = 0.6 + 0.4 * std::sin(kTwoPi * gust * t + 2 * phase);
        c.Add(i, fl.Run(bl.Run(Noise(rng))) * amp * 2.5, fr.Run(br.Run(Noise(rng))) * amp * 2.5);
    }
}

void Thunder(Canvas& c, Xoshiro256& rng) {
    const int claps = 1 + static_cast<int>(c.Seconds() / 6);
    for (int k = 0; k < claps; ++k) {
        const double start = k == 0 ? rng.Uniform(0, std::min(0.5, c.Seconds() / 4))
                                    : rng.Uniform(0, c.Seconds() * 0.8);
        Brown b;
        Biquad lp;
        lp.Set('l', 180 * c.pitch, 0.7, c.rate);
        const double decay = rng.Uniform(0.6, 1.2);
        const auto begin = static_cast<std::int64_t>(start * c.rate);
        for (std::int64_t i = 0; begin + i < c.frames; ++i) {
            const double t = static_cast<double>(i) / c.rate;
            const double env = std::min(1.0, t / 0.05) * std::exp(-decay * t);
            if (env < 1e-4 && t > 1) break;
            const double v = lp.Run(b.Run(Noise(rng))) * env * 3;
            c.Add(begin + i, v, v * 0.9);
        }
        Burst(c, rng, start, 0.15, 3000, 0.5, 0.5, rng.Uniform(-0.5, 0.5));
    }
}

void Whoosh(Canvas& c, Xoshiro256& rng) {
    const int count = std::max(1, static_cast<int>(c.Seconds() / 2.5));
    for (int k = 0; k < count; ++k) {
        const double length = std::min(c.Seconds() / count, rng.Uniform(0.6, 1.4));
        const double start =
            (c.Seconds() / count) * k + rng.Uniform(0, c.Seconds() / count - length);
        const auto begin = static_cast<std::int64_t>(start * c.rate);
        const auto n = static_cast<std::int64_t>(length * c.rate);
        Biquad bp;
        const double top = rng.Uniform(1800, 3500);
        for (std::int64_t i = 0; i < n; ++i) {
            const double t = static_cast<double>(i) / static_cast<double>(n);
            if (i % 32 == 0)
                bp.Set('b', (300 + top * std::sin(std::numbers::pi * t)) * c.pitch, 2, c.rate);
            const double env = std::pow(std::sin(std::numbers::pi * t), 2);
            const double pan = -0.9 + 1.8 * t;
            const double v = bp.Run(Noise(rng)) * env * 2.2;
            c.Add(begin + i, v * std::sqrt((1 - pan) / 2), v * std::sqrt((1 + pan) / 2));
        }
    }
}

void Beep(Canvas& c, Xoshiro256& rng) {
    const double f = rng.Uniform(800, 1400);
    const double on = rng.Uniform(0.1, 0.25);
    const double off = rng.Uniform(0.08, 0.2);
    for (double t = 0.02; t + on <= c.Seconds(); t += on + off) {
        Tone(c, t, on, f, f, 0.35, 0);
        Tone(c, t, on, 2 * f, 2 * f, 0.06, 0);
    }
}

void Explosion(Canvas& c, Xoshiro256& rng) {
    const double start = std::min(0.05, c.Seconds() / 10);
    const double decay = 3.0 / std::min(std::max(c.Seconds(), 0.5), 3.0);
    Brown b;
    Biquad lp;
    const auto begin = static_cast<std::int64_t>(start * c.rate);
    for (std::int64_t i = 0; begin + i < c.frames; ++i) {
        const double t = static_cast<double>(i) / c.rate;
        if (i % 64 == 0) lp.Set('l', (200 + 4000 * std::exp(-4 * t)) * c.pitch, 0.7, c.rate);
        const double env = std::min(1.0, t / 0.005) * std::exp(-decay * t);
        const double v = lp.Run(0.6 * Noise(rng) + 0.4 * b.Run(Noise(rng))) * env * 1.6;
        c.Add(begin + i, v, v * rng.Uniform(0.85, 1.0));
    }
    Tone(c, start, std::min(c.Seconds() - start, 2.0), 70, 28, 0.7, 0, decay);
    const int debris = static_cast<int>(c.Seconds() * 6);
    for (int d = 0; d < debris; ++d) {
        const double at = start + std::pow(rng.Uniform(), 2) * (c.Seconds() - start);
        Burst(c, rng, at, rng.Uniform(0.01, 0.05), rng.Uniform(800, 4000), 3,
              0.2 * std::exp(-decay * (at - start)), rng.Uniform(-1, 1));
    }
}

void Fire(Canvas& c, Xoshiro256& rng) {
    Brown bl, br;
    Biquad ll, lr;
    ll.Set('l', 600 * c.pitch, 0.7, c.rate);
    lr.Set('l', 600 * c.pitch, 0.7, c.rate);
    for (std::int64_t i = 0; i < c.frames; ++i) {
        c.Add(i, ll.Run(bl.Run(Noise(rng))) * 0.8, lr.Run(br.Run(Noise(rng))) * 0.8);
    }
    const auto crackles = static_cast<int>(c.Seconds() * rng.Uniform(12, 25));
    for (int k = 0; k < crackles; ++k) {
        Burst(c, rng, rng.Uniform(0, c.Seconds()), rng.Uniform(0.001, 0.006),
              rng.Uniform(2000, 7000), 1.5, rng.Uniform(0.2, 0.8), rng.Uniform(-0.8, 0.8));
    }
}

void Water(Canvas& c, Xoshiro256& rng) {
    Pink pl, pr;
    Biquad fl, fr;
    fl.Set('b', 900 * c.pitch, 0.6, c.rate);
    fr.Set('b', 1100 * c.pitch, 0.6, c.rate);
    const double wave = rng.Uniform(0.07, 0.15);
    const double phase = rng.Uniform(0, kTwoPi);
    for (std::int64_t i = 0; i < c.frames; ++i) {
        const double t = static_cast<double>(i) / c.rate;
        const double amp = 0.55 + 0.45 * std::sin(kTwoPi * wave * t + phase);
        c.Add(i, fl.Run(pl.Run(Noise(rng))) * amp * 1.5, fr.Run(pr.Run(Noise(rng))) * amp * 1.5);
    }
    const auto bubbles = static_cast<int>(c.Seconds() * rng.Uniform(3, 7));
    for (int k = 0; k < bubbles; ++k) {
        const double f = rng.Uniform(300, 900);
        Tone(c, rng.Uniform(0, c.Seconds()), rng.Uniform(0.02, 0.06), f, f * 2.2, 0.12,
             rng.Uniform(-0.7, 0.7), 30);
    }
}

void Engine(Canvas& c, Xoshiro256& rng) {
    const double base = rng.Uniform(38, 60) * c.pitch;
    const double wobble = rng.Uniform(0.3, 0.8);
    Brown b;
    Biquad lp;
    lp.Set('l', 300 * c.pitch, 0.7, c.rate);
    double phase = 0;
    for (std::int64_t i = 0; i < c.frames; ++i) {
        const double t = static_cast<double>(i) / c.rate;
        const double f = base * (1 + 0.04 * std::sin(kTwoPi * wobble * t));
        phase += kTwoPi * f / c.rate;
        double v = 0;
        for (int h = 1; h <= 8; ++h) v += std::sin(h * phase) / h;
        v = v * 0.18 + lp.Run(b.Run(Noise(rng))) * 0.6;
        c.Add(i, v, v * 0.95);
    }
}

void Bird(Canvas& c, Xoshiro256& rng) {
    for (double t = rng.Uniform(0.05, 0.4); t < c.Seconds() - 0.2; t += rng.Uniform(0.6, 1.6)) {
        const int notes = 2 + static_cast<int>(rng.Below(4));
        const double f = rng.Uniform(2200, 4200);
        const double pan = rng.Uniform(-0.8, 0.8);
        double at = t;
        for (int k = 0; k < notes && at < c.Seconds(); ++k) {
            const double len = rng.Uniform(0.04, 0.12);
            Tone(c, at, len, f, f * rng.Uniform(1.1, 1.5), 0.25, pan);
            at += len + rng.Uniform(0.02, 0.06);
        }
    }
}

void Bell(Canvas& c, Xoshiro256& rng) {
    const double f = rng.Uniform(440, 880);
    const double every = rng.Uniform(1.5, 2.5);
    constexpr std::array<double, 4> kPartials = {1.0, 2.76, 5.40, 8.93};
    for (double t = 0.02; t < c.Seconds(); t += every) {
        for (std::size_t k = 0; k < kPartials.size(); ++k) {
            Tone(c, t, c.Seconds() - t, f * kPartials[k], f * kPartials[k], 0.3 / (k + 1), 0,
                 1.5 + k);
        }
    }
}

void Laser(Canvas& c, Xoshiro256& rng) {
    const double every = rng.Uniform(0.35, 0.6);
    for (double t = 0.02; t + 0.25 <= c.Seconds(); t += every) {
        const double top = rng.Uniform(1500, 2600);
        Tone(c, t, 0.25, top, 180, 0.3, rng.Uniform(-0.5, 0.5), 6);
        Tone(c, t, 0.25, top * 3, 540, 0.08, 0, 8);
    }
}

void Click(Canvas& c, Xoshiro256& rng) {
    const bool regular = rng.Uniform() < 0.5;
    const double every = regular ? rng.Uniform(0.4, 1.0) : 0;
    for (double t = 0.01; t < c.Seconds(); t += regular ? every : rng.Uniform(0.06, 0.25)) {
        Burst(c, rng, t, 0.003, rng.Uniform(2500, 5000), 2, 0.9, rng.Uniform(-0.3, 0.3));
    }
}

void Footsteps(Canvas& c, Xoshiro256& rng) {
    const double every = rng.Uniform(0.45, 0.65);
    int k = 0;
    for (double t = 0.05; t < c.Seconds(); t += every, ++k) {
        const double pan = k % 2 == 0 ? -0.2 : 0.2;
        Burst(c, rng, t, 0.06, rng.Uniform(150, 400), 0.8, 1.2, pan);
        Tone(c, t, 0.12, 90, 60, 0.35, pan, 25);
    }
}

// Texture is the fallback: a slow chord from the prompt over a soft noise bed.
void Texture(Canvas& c, Xoshiro256& rng) {
    constexpr std::array<double, 7> kScale = {1.0,     9.0 / 8, 5.0 / 4, 4.0 / 3,
                                              3.0 / 2, 5.0 / 3, 15.0 / 8};
    const double root = rng.Uniform(110, 220);
    for (int k = 0; k < 3; ++k) {
        const double f = root * kScale[rng.Below(kScale.size())] * (k == 2 ? 2 : 1);
        Tone(c, 0, c.Seconds(), f, f * 1.002, 0.12, k == 0 ? -0.5 : (k == 1 ? 0.5 : 0));
    }
    Pink pl, pr;
    Biquad ll, lr;
    ll.Set('l', 1200, 0.7, c.rate);
    lr.Set('l', 1200, 0.7, c.rate);
    for (std::int64_t i = 0; i < c.frames; ++i) {
        c.Add(i, ll.Run(pl.Run(Noise(rng))) * 0.15, lr.Run(pr.Run(Noise(rng))) * 0.15);
    }
}

using LayerFn = void (*)(Canvas&, Xoshiro256&);

LayerFn LayerFunction(std::string_view name) {
    if (name == "rain") return &Rain;
    if (name == "wind") return &Wind;
    if (name == "thunder") return &Thunder;
    if (name == "whoosh") return &Whoosh;
    if (name == "beep") return &Beep;
    if (name == "explosion") return &Explosion;
    if (name == "fire") return &Fire;
    if (name == "water") return &Water;
    if (name == "engine") return &Engine;
    if (name == "bird") return &Bird;
    if (name == "bell") return &Bell;
    if (name == "laser") return &Laser;
    if (name == "click") return &Click;
    if (name == "footsteps") return &Footsteps;
    return &Texture;
}

}  // namespace

std::vector<std::string> EffectLayers(std::string_view prompt) {
    std::vector<std::string> layers;
    const auto words = Words(prompt);
    for (const LayerRule& rule : kLayers) {
        bool hit = false;
        for (const char* keyword : rule.keywords) {
            if (keyword == nullptr) break;
            const std::string_view k(keyword);
            for (const auto& w : words) {
                if (w.size() >= k.size() && std::string_view(w).substr(0, k.size()) == k) {
                    hit = true;
                    break;
                }
            }
            if (hit) break;
        }
        if (hit) layers.emplace_back(rule.name);
    }
    if (layers.empty()) layers.emplace_back("texture");
    return layers;
}

AudioBuffer SynthesizeEffect(const EffectSpec& spec) {
    if (spec.sample_rate < 8000 || spec.channels < 1 || spec.channels > 2 || spec.seconds <= 0 ||
        spec.seconds > 600) {
        throw MediaError("sound effect: bad parameters");
    }
    const auto frames = static_cast<std::int64_t>(std::llround(spec.seconds * spec.sample_rate));
    // A loop renders a tail past the end that is crossfaded into the head.
    const std::int64_t tail =
        spec.loop ? std::min<std::int64_t>(frames / 4, spec.sample_rate / 2) : 0;

    Canvas canvas{
        spec.sample_rate, frames + tail, std::pow(2.0, spec.pitch_semitones / 12.0), {}, {}};
    canvas.left.assign(static_cast<std::size_t>(canvas.frames), 0.0f);
    canvas.right.assign(static_cast<std::size_t>(canvas.frames), 0.0f);
    const std::uint64_t base = Mix64(spec.seed ^ Fnv1a64(spec.prompt));
    for (const auto& layer : EffectLayers(spec.prompt)) {
        Xoshiro256 rng(Mix64(base ^ Fnv1a64(layer)));
        LayerFunction(layer)(canvas, rng);
    }

    AudioBuffer out;
    out.sample_rate = spec.sample_rate;
    out.channels = spec.channels;
    out.samples.assign(static_cast<std::size_t>(frames * spec.channels), 0.0f);
    float peak = 0;
    for (std::int64_t i = 0; i < frames; ++i) {
        double l = canvas.left[static_cast<std::size_t>(i)];
        double r = canvas.right[static_cast<std::size_t>(i)];
        if (i < tail) {
            // Equal-power crossfade: the head fades in while the tail past the end fades out, so
            // sample frames-1 is followed (when looping) by what was rendered right after it.
            const double w = (static_cast<double>(i) + 0.5) / static_cast<double>(tail);
            const double gin = std::sin(0.5 * std::numbers::pi * w);
            const double gout = std::cos(0.5 * std::numbers::pi * w);
            l = l * gin + canvas.left[static_cast<std::size_t>(frames + i)] * gout;
            r = r * gin + canvas.right[static_cast<std::size_t>(frames + i)] * gout;
        }
        if (spec.channels == 1) {
            out.samples[static_cast<std::size_t>(i)] = static_cast<float>(0.5 * (l + r));
        } else {
            out.samples[static_cast<std::size_t>(2 * i)] = static_cast<float>(l);
            out.samples[static_cast<std::size_t>(2 * i + 1)] = static_cast<float>(r);
        }
    }
    for (const float v : out.samples) peak = std::max(peak, std::abs(v));
    const float gain = peak > 1e-6f ? 0.89f / peak : 0.0f;  // -1 dBFS
    for (float& v : out.samples) v *= gain;
    if (!spec.loop) {
        // 5 ms ramps at both ends keep a one-shot from clicking.
        const std::int64_t ramp = std::min<std::int64_t>(frames / 2, spec.sample_rate / 200);
        for (std::int64_t i = 0; i < ramp; ++i) {
            const float g = static_cast<float>(i) / static_cast<float>(ramp);
            for (int ch = 0; ch < spec.channels; ++ch) {
                out.samples[static_cast<std::size_t>(i * spec.channels + ch)] *= g;
                out.samples[static_cast<std::size_t>((frames - 1 - i) * spec.channels + ch)] *= g;
            }
        }
    }
    return out;
}

}  // namespace genhost::media
