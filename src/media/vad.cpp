// VoiceActivityDetector: 10 ms frame levels against a minimum-statistics noise floor.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "genhost/media/speech_recognition.hpp"

namespace genhost::media {
namespace {

constexpr double kSilentDbfs = -120;  // the level of digital silence
constexpr int kBlockMs = 250;         // the noise floor's minimum-statistics block
// A one-pole high-pass: removes DC and most rumble and hum, whose slow swings would make the
// levels of 10 ms frames of a quiet room jump by several dB.
constexpr double kHighPassHz = 100;

}  // namespace

VoiceActivityDetector::VoiceActivityDetector(const VadOptions& options) : options_(options) {
    const VadOptions& o = options_;
    if (o.sample_rate < 8000 || o.sample_rate > 48000 || o.sample_rate % 100 != 0) {
        throw std::invalid_argument("VAD sample rate must be 8000..48000 and a multiple of 100");
    }
    if (o.hangover_ms < 10 || o.min_speech_ms < 0 || o.noise_window_ms < kBlockMs ||
        o.max_utterance_ms <= o.min_speech_ms || o.continue_db > o.start_db || o.continue_db < 0) {
        throw std::invalid_argument("VAD options out of range");
    }
    frame_samples_ = o.sample_rate / 100;
    hangover_frames_ = (o.hangover_ms + 9) / 10;
    min_speech_frames_ = std::max(1, (o.min_speech_ms + 9) / 10);
    max_utterance_frames_ = (o.max_utterance_ms + 9) / 10;
    block_frames_ = kBlockMs / 10;
    block_minima_.assign(static_cast<std::size_t>(o.noise_window_ms / kBlockMs), 0.0);
    Reset();
}

void VoiceActivityDetector::Reset() {
    fed_ = 0;
    hp_prev_in_ = 0;
    hp_prev_out_ = 0;
    frame_energy_ = 0;
    frame_fill_ = 0;
    frame_index_ = 0;
    block_min_ = 0;
    block_fill_ = 0;
    ring_next_ = 0;
    ring_size_ = 0;
    state_ = State::kSilence;
    start_frame_ = 0;
    last_loud_frame_ = 0;
    loud_frames_ = 0;
}

double VoiceActivityDetector::noise_floor_dbfs() const {
    double floor = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < ring_size_; ++i) floor = std::min(floor, block_minima_[i]);
    if (block_fill_ > 0) floor = std::min(floor, block_min_);
    return std::isinf(floor) ? kSilentDbfs : floor;
}

std::vector<VadEvent> VoiceActivityDetector::Feed(std::span<const std::int16_t> samples) {
    std::vector<VadEvent> events;
    const double r = 1.0 - 2 * std::numbers::pi * kHighPassHz / options_.sample_rate;
    for (const std::int16_t s : samples) {
        // y[n] = x[n] - x[n-1] + r * y[n-1]
        const double x = s;
        const double y = x - hp_prev_in_ + r * hp_prev_out_;
        hp_prev_in_ = x;
        hp_prev_out_ = y;
        frame_energy_ += y * y;
        if (++frame_fill_ == frame_samples_) EndFrame(events);
    }
    fed_ += static_cast<std::int64_t>(samples.size());
    return events;
}

void VoiceActivityDetector::EndFrame(std::vector<VadEvent>& events) {
    const double mean_square = frame_energy_ / frame_samples_ / (32768.0 * 32768.0);
    const double level = std::max(kSilentDbfs, 10 * std::log10(mean_square + 1e-30));
    frame_energy_ = 0;
    frame_fill_ = 0;
    const std::int64_t f = frame_index_++;

    // Classify against the floor of the frames before this one (none yet: nothing is loud).
    const bool have_floor = ring_size_ > 0 || block_fill_ > 0;
    const double floor = noise_floor_dbfs();
    const double margin = state_ == State::kSilence ? options_.start_db : options_.continue_db;
    const bool loud = have_floor && level >= options_.min_level_dbfs && level >= floor + margin;

    // Then let this frame into the floor's window.
    block_min_ = block_fill_ == 0 ? level : std::min(block_min_, level);
    if (++block_fill_ == block_frames_) {
        block_minima_[ring_next_] = block_min_;
        ring_next_ = (ring_next_ + 1) % block_minima_.size();
        ring_size_ = std::min(ring_size_ + 1, block_minima_.size());
        block_fill_ = 0;
    }

    const std::int64_t n = frame_samples_;
    switch (state_) {
        case State::kSilence:
            if (!loud) break;
            start_frame_ = f;
            last_loud_frame_ = f;
            loud_frames_ = 1;
            state_ = State::kCandidate;
            [[fallthrough]];
        case State::kCandidate:
            if (loud && f != start_frame_) {
                last_loud_frame_ = f;
                ++loud_frames_;
            }
            if (loud_frames_ >= min_speech_frames_) {
                state_ = State::kSpeech;
                events.push_back({VadEvent::Kind::kSpeechStarted, start_frame_ * n, false});
            } else if (f - last_loud_frame_ >= hangover_frames_) {
                state_ = State::kSilence;  // a click: dropped
                break;
            }
            if (state_ != State::kSpeech) break;
            [[fallthrough]];
        case State::kSpeech:
            if (loud) last_loud_frame_ = f;
            if (f - last_loud_frame_ >= hangover_frames_) {
                events.push_back({VadEvent::Kind::kSpeechEnded, (last_loud_frame_ + 1) * n, false});
                state_ = State::kSilence;
            } else if (f + 1 - start_frame_ >= max_utterance_frames_) {
                events.push_back({VadEvent::Kind::kSpeechEnded, (f + 1) * n, true});
                state_ = State::kSilence;
            }
            break;
    }
}

}  // namespace genhost::media
