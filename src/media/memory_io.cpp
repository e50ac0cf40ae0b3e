#include "memory_io.hpp"

extern "C" {
#include <libavutil/mem.h>
}

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace genhost::media {
namespace {

constexpr int kAvioBufferSize = 64 * 1024;

// RefuseNestedOpen replaces AVFormatContext::io_open so that no demuxer can open a second
// resource (an HLS or concat playlist naming file: or http: URLs, for example).
int RefuseNestedOpen(AVFormatContext* /*ctx*/, AVIOContext** /*pb*/, const char* /*url*/,
                     int /*flags*/, AVDictionary** /*options*/) {
    return AVERROR(EPERM);
}

// SeekTarget resolves an fseek-style (offset, whence) against a stream of `size` bytes at
// `position`; -1 when the target is outside [0, size] or whence is unknown.
std::int64_t SeekTarget(std::int64_t offset, int whence, std::size_t position, std::size_t size) {
    std::int64_t base = 0;
    switch (whence & ~AVSEEK_FORCE) {
        case SEEK_SET:
            base = 0;
            break;
        case SEEK_CUR:
            base = static_cast<std::int64_t>(position);
            break;
        case SEEK_END:
            base = static_cast<std::int64_t>(size);
            break;
        default:
            return -1;
    }
    // base is within [0, size], so neither comparison overflows.
    if (offset < -base || offset > static_cast<std::int64_t>(size) - base) {
        return -1;
    }
    return base + offset;
}

AvioContextPtr MakeAvio(bool writable, void* opaque, int (*read)(void*, std::uint8_t*, int),
                        int (*write)(void*, std::uint8_t*, int),
                        std::int64_t (*seek)(void*, std::int64_t, int)) {
    auto* buffer = static_cast<unsigned char*>(av_malloc(kAvioBufferSize));
    if (buffer == nullptr) {
        throw MediaError("av_malloc: out of memory");
    }
    AVIOContext* avio =
        avio_alloc_context(buffer, kAvioBufferSize, writable ? 1 : 0, opaque, read, write, seek);
    if (avio == nullptr) {
        av_free(buffer);
        throw MediaError("avio_alloc_context: out of memory");
    }
    return AvioContextPtr(avio);
}

}  // namespace

MemoryInput::MemoryInput(std::string_view bytes, const InputLimits& limits)
    : cursor_(std::make_unique<Cursor>()) {
    if (bytes.empty()) {
        throw MediaError("not a readable media file: no data");
    }
    cursor_->data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    cursor_->size = bytes.size();
    avio_ = MakeAvio(false, cursor_.get(), &MemoryInput::Read, nullptr, &MemoryInput::Seek);

    AVFormatContext* ctx = avformat_alloc_context();
    if (ctx == nullptr) {
        throw MediaError("avformat_alloc_context: out of memory");
    }
    ctx->pb = avio_.get();
    ctx->flags |= AVFMT_FLAG_CUSTOM_IO;
    ctx->probesize = limits.probe_bytes;
    ctx->max_analyze_duration = limits.analyze_microseconds;
    ctx->max_streams = limits.max_streams;
    ctx->io_open = &RefuseNestedOpen;
    // On failure avformat_open_input frees ctx (but not our pb) and nulls it.
    const int rc = avformat_open_input(&ctx, nullptr, nullptr, nullptr);
    if (rc < 0) {
        throw MediaError("not a readable media file: " + AvErrorText(rc));
    }
    format_.reset(ctx);
    const int info_rc = avformat_find_stream_info(ctx, nullptr);
    if (info_rc < 0) {
        throw MediaError("cannot read the streams of the media file: " + AvErrorText(info_rc));
    }
}

MemoryInput::~MemoryInput() = default;

int MemoryInput::Read(void* opaque, std::uint8_t* buffer, int size) {
    auto* cursor = static_cast<Cursor*>(opaque);
    const std::size_t remaining = cursor->size - cursor->position;
    if (remaining == 0 || size <= 0) {
        return AVERROR_EOF;
    }
    const std::size_t count = std::min(remaining, static_cast<std::size_t>(size));
    std::memcpy(buffer, cursor->data + cursor->position, count);
    cursor->position += count;
    return static_cast<int>(count);
}

std::int64_t MemoryInput::Seek(void* opaque, std::int64_t offset, int whence) {
    auto* cursor = static_cast<Cursor*>(opaque);
    if ((whence & AVSEEK_SIZE) != 0) {
        return static_cast<std::int64_t>(cursor->size);
    }
    const std::int64_t target = SeekTarget(offset, whence, cursor->position, cursor->size);
    if (target < 0) {
        return AVERROR(EINVAL);
    }
    cursor->position = static_cast<std::size_t>(target);
    return target;
}

MemoryOutput::MemoryOutput()
    : sink_(std::make_unique<Sink>()),
      avio_(MakeAvio(true, sink_.get(), nullptr, &MemoryOutput::Write, &MemoryOutput::Seek)) {}

MemoryOutput::~MemoryOutput() = default;

std::string MemoryOutput::Take() {
    avio_flush(avio_.get());
    if (avio_->error < 0) {
        throw MediaError("writing media output: " + AvErrorText(avio_->error));
    }
    std::string bytes = std::move(sink_->bytes);
    sink_->bytes.clear();
    sink_->position = 0;
    return bytes;
}

int MemoryOutput::Write(void* opaque, std::uint8_t* buffer, int size) {
    auto* sink = static_cast<Sink*>(opaque);
    if (size <= 0) {
        return 0;
    }
    const auto count = static_cast<std::size_t>(size);
    // Seek never moves past the end, so position <= bytes.size() here.
    const std::size_t overwritten = std::min(sink->bytes.size() - sink->position, count);
    sink->bytes.replace(sink->position, overwritten, reinterpret_cast<const char*>(buffer), count);
    sink->position += count;
    return size;
}

std::int64_t MemoryOutput::Seek(void* opaque, std::int64_t offset, int whence) {
    auto* sink = static_cast<Sink*>(opaque);
    if ((whence & AVSEEK_SIZE) != 0) {
        return static_cast<std::int64_t>(sink->bytes.size());
    }
    const std::int64_t target = SeekTarget(offset, whence, sink->position, sink->bytes.size());
    if (target < 0) {
        return AVERROR(EINVAL);
    }
    sink->position = static_cast<std::size_t>(target);
    return target;
}

}  // namespace genhost::media
