#include "file_input.hpp"

extern "C" {
#include <libavutil/mem.h>
}

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

namespace genhost::media {
namespace {

constexpr int kAvioBufferSize = 64 * 1024;

int RefuseNestedOpen(AVFormatContext* /*ctx*/, AVIOContext** /*pb*/, const char* /*url*/,
                     int /*flags*/, AVDictionary** /*options*/) {
    return AVERROR(EPERM);
}

// StreamOptions is one dictionary per stream for avformat_find_stream_info, freed together.
class StreamOptions {
  public:
    StreamOptions(unsigned count, std::int64_t max_pixels) : dicts_(count, nullptr) {
        for (AVDictionary*& d : dicts_) {
            CheckAv(av_dict_set_int(&d, "max_pixels", max_pixels, 0), "av_dict_set_int");
            CheckAv(av_dict_set_int(&d, "threads", 1, 0), "av_dict_set_int");
        }
    }
    ~StreamOptions() {
        for (AVDictionary*& d : dicts_) av_dict_free(&d);
    }
    StreamOptions(const StreamOptions&) = delete;
    StreamOptions& operator=(const StreamOptions&) = delete;
    AVDictionary** Get() { return dicts_.empty() ? nullptr : dicts_.data(); }

  private:
    std::vector<AVDictionary*> dicts_;
};

}  // namespace

FileInput::Source::~Source() {
    if (fd >= 0) ::close(fd);
}

FileInput::FileInput(const std::string& path, const InputLimits& limits,
                     std::chrono::steady_clock::time_point deadline, std::int64_t max_pixels)
    : source_(std::make_unique<Source>()) {
    source_->deadline = deadline;
    source_->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (source_->fd < 0) throw MediaError("cannot open the media file");
    struct stat st {};
    if (::fstat(source_->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        throw MediaError("not a regular file");
    }
    source_->size = st.st_size;
    if (source_->size == 0) throw MediaError("not a readable media file: no data");

    auto* buffer = static_cast<unsigned char*>(av_malloc(kAvioBufferSize));
    if (buffer == nullptr) throw MediaError("av_malloc: out of memory");
    AVIOContext* avio = avio_alloc_context(buffer, kAvioBufferSize, 0, source_.get(),
                                           &FileInput::Read, nullptr, &FileInput::Seek);
    if (avio == nullptr) {
        av_free(buffer);
        throw MediaError("avio_alloc_context: out of memory");
    }
    avio_.reset(avio);

    AVFormatContext* ctx = avformat_alloc_context();
    if (ctx == nullptr) throw MediaError("avformat_alloc_context: out of memory");
    ctx->pb = avio_.get();
    ctx->flags |= AVFMT_FLAG_CUSTOM_IO;
    ctx->probesize = limits.probe_bytes;
    ctx->max_analyze_duration = limits.analyze_microseconds;
    ctx->max_streams = limits.max_streams;
    ctx->io_open = &RefuseNestedOpen;
    ctx->interrupt_callback.callback = &FileInput::Interrupt;
    ctx->interrupt_callback.opaque = source_.get();
    const int rc = avformat_open_input(&ctx, nullptr, nullptr, nullptr);
    if (rc < 0) throw MediaError("not a readable media file: " + AvErrorText(rc));
    format_.reset(ctx);
    StreamOptions options(ctx->nb_streams, max_pixels);
    const int info_rc = avformat_find_stream_info(ctx, options.Get());
    if (info_rc < 0) {
        throw MediaError("cannot read the streams of the media file: " + AvErrorText(info_rc));
    }
    if (Expired()) throw MediaError("probing took too long");
}

FileInput::~FileInput() = default;

bool FileInput::Expired() const { return std::chrono::steady_clock::now() > source_->deadline; }

int FileInput::Read(void* opaque, std::uint8_t* buffer, int size) {
    auto* source = static_cast<Source*>(opaque);
    if (std::chrono::steady_clock::now() > source->deadline) return AVERROR_EXIT;
    if (size <= 0) return AVERROR_EOF;
    for (;;) {
        const ssize_t n = ::read(source->fd, buffer, static_cast<std::size_t>(size));
        if (n > 0) return static_cast<int>(n);
        if (n == 0) return AVERROR_EOF;
        if (errno != EINTR) return AVERROR(errno);
    }
}

std::int64_t FileInput::Seek(void* opaque, std::int64_t offset, int whence) {
    auto* source = static_cast<Source*>(opaque);
    if ((whence & AVSEEK_SIZE) != 0) return source->size;
    const int how = whence & ~AVSEEK_FORCE;
    if (how != SEEK_SET && how != SEEK_CUR && how != SEEK_END) return AVERROR(EINVAL);
    const off_t at = ::lseek(source->fd, static_cast<off_t>(offset), how);
    if (at < 0 || at > source->size) return AVERROR(EINVAL);
    return at;
}

int FileInput::Interrupt(void* opaque) {
    const auto* source = static_cast<const Source*>(opaque);
    return std::chrono::steady_clock::now() > source->deadline ? 1 : 0;
}

}  // namespace genhost::media
