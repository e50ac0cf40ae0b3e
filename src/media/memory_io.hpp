// src/media/memory_io.hpp (private to the media module)
//
// Provides MemoryInput, a libavformat demuxer reading from bytes in memory through a custom
// AVIOContext (read + seek callbacks), and MemoryOutput, a seekable AVIOContext that collects a
// muxer's output in a std::string. Neither touches the file system or the network.
//
// Both are single-thread objects, neither copyable nor movable: libav holds a pointer to their
// state as the AVIOContext opaque. Failures throw MediaError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "av_handles.hpp"

namespace genhost::media {

// InputLimits bounds the work avformat_open_input and avformat_find_stream_info may do.
struct InputLimits {
    std::int64_t probe_bytes = 5 * 1024 * 1024;         // AVFormatContext::probesize
    std::int64_t analyze_microseconds = 5 * 1'000'000;  // max_analyze_duration
    int max_streams = 64;                               // more streams than this is refused
};

// MemoryInput opens `bytes` with libavformat (format auto-detected) and runs
// avformat_find_stream_info within `limits`. `bytes` is not copied and must outlive the object.
// The demuxer may not open anything else: nested opens (playlists, concat lists, image sequences,
// which could otherwise reach local files or URLs) are refused. Throws MediaError when the data
// is empty, not a recognised container, or its streams cannot be read.
class MemoryInput {
  public:
    explicit MemoryInput(std::string_view bytes, const InputLimits& limits = {});
    ~MemoryInput();
    MemoryInput(const MemoryInput&) = delete;
    MemoryInput& operator=(const MemoryInput&) = delete;

    // Format is the opened demuxer context; owned by this object.
    AVFormatContext* Format() const { return format_.get(); }

  private:
    struct Cursor {
        const std::uint8_t* data = nullptr;
        std::size_t size = 0;
        std::size_t position = 0;
    };
    static int Read(void* opaque, std::uint8_t* buffer, int size);
    static std::int64_t Seek(void* opaque, std::int64_t offset, int whence);

    // Declaration order is destruction order reversed: the demuxer goes before the AVIOContext
    // it reads through, and that before the cursor it points at.
    std::unique_ptr<Cursor> cursor_;
    AvioContextPtr avio_;
    InputFormatPtr format_;
};

// MemoryOutput is a writable, seekable AVIOContext whose bytes land in memory, for muxers that
// seek back to patch headers (mp4's moov atom size, wav's RIFF sizes). Assign Avio() to
// AVFormatContext::pb and set AVFMT_FLAG_CUSTOM_IO; the MemoryOutput must outlive the muxer's
// use of it (destroy or av_write_trailer the muxer first). Muxers that reopen their output by
// name (mp4's `+faststart`) cannot work through it.
class MemoryOutput {
  public:
    MemoryOutput();
    ~MemoryOutput();
    MemoryOutput(const MemoryOutput&) = delete;
    MemoryOutput& operator=(const MemoryOutput&) = delete;

    AVIOContext* Avio() const { return avio_.get(); }

    // Take flushes the AVIOContext and moves out everything written. Call it once the muxer is
    // done (after av_write_trailer); the MemoryOutput is not meant to be written to afterwards.
    std::string Take();

  private:
    struct Sink {
        std::string bytes;
        std::size_t position = 0;
    };
    static int Write(void* opaque, std::uint8_t* buffer, int size);
    static std::int64_t Seek(void* opaque, std::int64_t offset, int whence);

    std::unique_ptr<Sink> sink_;
    AvioContextPtr avio_;
};

}  // namespace genhost::media
