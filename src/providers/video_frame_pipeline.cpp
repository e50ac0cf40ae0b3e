// FramePipeline: frames drawn ahead of the encoder on a producer thread (see the header).
#include "video_frame_pipeline.hpp"

#include <stdexcept>
#include <utility>

namespace genhost::providers {

FramePipeline::FramePipeline(int frames, int width, int height, int depth, Draw draw)
    : frames_(frames), draw_(std::move(draw)) {
    if (depth < 1) depth = 1;
    slots_.reserve(static_cast<std::size_t>(depth));
    for (int i = 0; i < depth; ++i) slots_.emplace_back(width, height);
    thread_ = std::thread([this] { Run(); });
}

FramePipeline::~FramePipeline() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void FramePipeline::Run() {
    const int depth = static_cast<int>(slots_.size());
    for (int i = 0; i < frames_; ++i) {
        {
            std::unique_lock lock(mutex_);
            changed_.wait(lock, [&] { return stop_ || i - released_ < depth; });
            if (stop_) return;
        }
        // Slot i % depth is free: the consumer released frame i - depth, and only this thread
        // touches it until drawn_ passes i.
        try {
            draw_(i, slots_[static_cast<std::size_t>(i % depth)]);
        } catch (...) {
            std::lock_guard lock(mutex_);
            error_ = std::current_exception();
            stop_ = true;
            changed_.notify_all();
            return;
        }
        {
            std::lock_guard lock(mutex_);
            drawn_ = i + 1;
        }
        changed_.notify_all();
    }
}

const media::RgbImage& FramePipeline::Next() {
    std::unique_lock lock(mutex_);
    const int want = released_;
    if (want >= frames_) throw std::logic_error("FramePipeline::Next past the last frame");
    changed_.wait(lock, [&] { return drawn_ > want || error_ || stop_; });
    if (drawn_ <= want) {
        if (error_) std::rethrow_exception(error_);
        throw std::logic_error("FramePipeline stopped");
    }
    return slots_[static_cast<std::size_t>(want % static_cast<int>(slots_.size()))];
}

void FramePipeline::Release() {
    {
        std::lock_guard lock(mutex_);
        ++released_;
    }
    changed_.notify_all();
}

void EncodeAhead(TaskContext& ctx, media::VideoWriter& writer, int frames, int width, int height,
                 FramePipeline::Draw draw, double from, double span) {
    FramePipeline pipeline(frames, width, height, kFramesAhead, std::move(draw));
    for (int i = 0; i < frames; ++i) {
        ctx.CheckCancelled();
        writer.WriteFrame(pipeline.Next());
        pipeline.Release();
        ctx.Progress(from + span * (i + 1) / frames);
    }
}

}  // namespace genhost::providers
