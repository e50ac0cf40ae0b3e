#include "genhost/core/logging.hpp"

#include "genhost/core/utf8.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

namespace genhost {

namespace {

// Writes the log message JSON-escaped, for the json line pattern.
class EscapedMessage final : public spdlog::custom_flag_formatter {
  public:
    void format(const spdlog::details::log_msg& msg, const std::tm&,
                spdlog::memory_buf_t& dest) override {
        const std::string escaped =
            JsonEscape(std::string_view(msg.payload.data(), msg.payload.size()));
        dest.append(escaped.data(), escaped.data() + escaped.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<EscapedMessage>();
    }
};

std::shared_ptr<spdlog::logger>& AccessSlot() {
    static std::shared_ptr<spdlog::logger> logger;
    return logger;
}

std::shared_ptr<spdlog::logger>& EventSlot() {
    static std::shared_ptr<spdlog::logger> logger;
    return logger;
}

}  // namespace

std::string JsonEscape(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 8);
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            // UTF-8 is kept as it is; a byte that starts no well-formed sequence becomes U+FFFD,
            // so a line stays valid JSON (and valid UTF-8) whatever a client sent.
            const std::size_t n = Utf8SequenceLength(s.substr(i));
            if (n == 0) {
                out += "\\ufffd";
                ++i;
            } else {
                out.append(s.substr(i, n));
                i += n;
            }
            continue;
        }
        ++i;
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out;
}

void SetupLogging(const std::string& level, const std::string& format) {
    const auto lvl = spdlog::level::from_str(level);
    if (lvl == spdlog::level::off && level != "off") {
        throw std::invalid_argument("unknown log level: " + level);
    }
    // One sink per logger: a sink holds the formatter, so a shared sink would format every line
    // with whichever pattern was set last. The stdout sinks share one console mutex.
    auto main = std::make_shared<spdlog::logger>("genhost",
                                                 std::make_shared<spdlog::sinks::stdout_sink_mt>());
    auto access = std::make_shared<spdlog::logger>(
        "access", std::make_shared<spdlog::sinks::stdout_sink_mt>());
    auto events = std::make_shared<spdlog::logger>(
        "events", std::make_shared<spdlog::sinks::stdout_sink_mt>());
    if (format == "json") {
        auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
        f->add_flag<EscapedMessage>('*').set_pattern(
            R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","logger":"%n","msg":"%*"})");
        main->set_formatter(std::move(f));
        access->set_pattern("%v", spdlog::pattern_time_type::utc);
        events->set_pattern("%v", spdlog::pattern_time_type::utc);
    } else {
        main->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
        access->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ access %v", spdlog::pattern_time_type::utc);
        events->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
    }
    main->set_level(lvl);
    access->set_level(lvl);
    events->set_level(lvl);
    // Lines are flushed every second (and at once from warn up): a flush per access line would
    // cost a system call per request.
    main->flush_on(spdlog::level::warn);
    access->flush_on(spdlog::level::warn);
    events->flush_on(spdlog::level::warn);
    spdlog::flush_every(std::chrono::seconds(1));
    spdlog::set_default_logger(main);
    AccessSlot() = access;
    EventSlot() = events;
}

std::shared_ptr<spdlog::logger> AccessLogger() {
    auto& slot = AccessSlot();
    if (!slot) slot = spdlog::default_logger();
    return slot;
}

std::shared_ptr<spdlog::logger> EventLogger() {
    auto& slot = EventSlot();
    if (!slot) slot = spdlog::default_logger();
    return slot;
}

}  // namespace genhost
