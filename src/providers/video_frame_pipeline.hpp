// src/providers/video_frame_pipeline.hpp (private to the builtin provider)
//
// FramePipeline draws a video's frames on a thread of its own, a few frames ahead of the caller
// that encodes them, through a bounded ring of pictures. Frames come out in index order and are
// drawn by one thread in order, so the output is the same as drawing them inline.
//
// Threads: the producer thread only runs `draw`; everything else (Next, Release, the destructor)
// belongs to the caller's thread. An exception thrown by `draw` stops the producer and is
// rethrown by Next. Destroying the pipeline (a cancelled task, an encoder failure) stops the
// producer after the frame it is drawing and joins it.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "genhost/media/video.hpp"
#include "genhost/providers/provider.hpp"

namespace genhost::providers {

class FramePipeline {
  public:
    // Draw fills `out` (already width x height) with frame `index`.
    using Draw = std::function<void(int index, media::RgbImage& out)>;

    // Starts drawing frames 0..frames-1 of width x height into `depth` (>= 1) slots.
    FramePipeline(int frames, int width, int height, int depth, Draw draw);
    ~FramePipeline();
    FramePipeline(const FramePipeline&) = delete;
    FramePipeline& operator=(const FramePipeline&) = delete;

    // Next waits for the next frame in order and returns it; it stays valid until Release.
    // Rethrows the producer's exception.
    const media::RgbImage& Next();
    // Release hands the frame Next returned back to the producer.
    void Release();

  private:
    void Run();

    const int frames_;
    Draw draw_;
    std::vector<media::RgbImage> slots_;
    std::mutex mutex_;
    std::condition_variable changed_;
    int drawn_ = 0;     // frames the producer has finished
    int released_ = 0;  // frames the consumer has handed back
    bool stop_ = false;
    std::exception_ptr error_;
    std::thread thread_;
};

// kFramesAhead is how many frames the producer may draw ahead of the encoder.
constexpr int kFramesAhead = 3;

// EncodeAhead writes frames 0..frames-1 of width x height to `writer`: `draw` makes them on a
// FramePipeline's producer thread, this thread encodes them in order, checking for cancellation
// before each and reporting progress from `from` to `from + span`. The pipeline is stopped and
// joined before it returns or throws; the caller finishes the writer.
void EncodeAhead(TaskContext& ctx, media::VideoWriter& writer, int frames, int width, int height,
                 FramePipeline::Draw draw, double from, double span);

}  // namespace genhost::providers
