#include "genhost/media/log.hpp"

#include <spdlog/spdlog.h>

extern "C" {
#include <libavutil/log.h>
}

#include <cstdarg>
#include <memory>
#include <string>

namespace genhost::media {

namespace {

std::shared_ptr<spdlog::logger>& LibavLogger() {
    static std::shared_ptr<spdlog::logger> logger;
    return logger;
}

spdlog::level::level_enum LevelOf(int av_level) {
    if (av_level <= AV_LOG_FATAL) return spdlog::level::err;
    if (av_level <= AV_LOG_ERROR) return spdlog::level::info;
    if (av_level <= AV_LOG_WARNING) return spdlog::level::debug;
    return spdlog::level::trace;
}

// The least important libav level that the logger would still write.
int AvLevelFor(spdlog::level::level_enum level) {
    switch (level) {
        case spdlog::level::trace:
            return AV_LOG_DEBUG;
        case spdlog::level::debug:
            return AV_LOG_WARNING;
        case spdlog::level::info:
        case spdlog::level::warn:
            return AV_LOG_ERROR;
        case spdlog::level::err:
        case spdlog::level::critical:
            return AV_LOG_FATAL;
        default:
            return AV_LOG_QUIET;
    }
}

void Callback(void* context, int level, const char* format, va_list args) {
    const auto& logger = LibavLogger();
    if (!logger || level > av_log_get_level()) return;
    const auto ours = LevelOf(level);
    if (!logger->should_log(ours)) return;
    // libav may write one line in several calls; each thread keeps its unfinished line.
    thread_local std::string pending;
    thread_local int print_prefix = 1;
    char piece[1024];
    va_list copy;
    va_copy(copy, args);
    av_log_format_line2(context, level, format, copy, piece, sizeof piece, &print_prefix);
    va_end(copy);
    pending += piece;
    std::size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
        if (newline > 0) logger->log(ours, "{}", std::string_view(pending).substr(0, newline));
        pending.erase(0, newline + 1);
    }
    if (pending.size() > 4096) {  // a line that never ends is not kept for ever
        logger->log(ours, "{}", pending);
        pending.clear();
    }
}

}  // namespace

void RouteLibavLog() {
    const auto base = spdlog::default_logger();
    auto logger =
        std::make_shared<spdlog::logger>("ffmpeg", base->sinks().begin(), base->sinks().end());
    logger->set_level(base->level());
    logger->flush_on(spdlog::level::warn);
    LibavLogger() = logger;
    av_log_set_level(AvLevelFor(base->level()));
    av_log_set_callback(&Callback);
}

}  // namespace genhost::media
