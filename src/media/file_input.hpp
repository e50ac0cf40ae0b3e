// src/media/file_input.hpp (private to the media module)
//
// Provides FileInput: a libavformat demuxer reading one local file through a private
// AVIOContext (plain read + seek on a file descriptor), for untrusted files such as fetched or
// uploaded inputs. Like MemoryInput it never reaches a protocol and refuses nested opens
// (playlists, concat lists, image sequences naming other files or URLs); on top of that it
// bounds the wall-clock time of everything that reads (a deadline checked on every read and by
// libavformat's interrupt callback) and the picture size decoders in stream analysis accept.
//
// Single-thread object; neither copyable nor movable. Failures throw MediaError.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "av_handles.hpp"
#include "memory_io.hpp"

namespace genhost::media {

class FileInput {
  public:
    // FileInput opens `path` and runs avformat_find_stream_info within `limits`; reading stops
    // (MediaError) once `deadline` passes. Decoders opened during stream analysis refuse
    // pictures of more than `max_pixels`.
    FileInput(const std::string& path, const InputLimits& limits,
              std::chrono::steady_clock::time_point deadline, std::int64_t max_pixels);
    ~FileInput();
    FileInput(const FileInput&) = delete;
    FileInput& operator=(const FileInput&) = delete;

    AVFormatContext* Format() const { return format_.get(); }

    // Expired reports whether the deadline passed (a read failing for that reason).
    bool Expired() const;

  private:
    struct Source {
        int fd = -1;
        std::int64_t size = 0;
        std::chrono::steady_clock::time_point deadline;
        ~Source();
    };
    static int Read(void* opaque, std::uint8_t* buffer, int size);
    static std::int64_t Seek(void* opaque, std::int64_t offset, int whence);
    static int Interrupt(void* opaque);

    std::unique_ptr<Source> source_;
    AvioContextPtr avio_;
    InputFormatPtr format_;
};

}  // namespace genhost::media
