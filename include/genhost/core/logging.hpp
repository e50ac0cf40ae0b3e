// genhost/core/logging.hpp
//
// Provides SetupLogging: spdlog configured for genhost. In `json` format every line is one JSON
// object ({"ts","level","logger","msg"}; access-log lines carry their own fields); in `text`
// format lines are plain. Access lines go through the logger returned by AccessLogger(), and
// events with fields of their own (a task's start and end) through EventLogger(): each message
// of theirs is a complete JSON object.
#pragma once

#include <memory>
#include <string>

namespace spdlog {
class logger;
}

namespace genhost {

// SetupLogging configures the default and access loggers; throws std::invalid_argument for an
// unknown level.
void SetupLogging(const std::string& level, const std::string& format);

// AccessLogger returns the logger for access-log lines (each message is a complete JSON object).
std::shared_ptr<spdlog::logger> AccessLogger();

// EventLogger returns the logger for event lines (each message is a complete JSON object with
// its "ts", "level" and "logger").
std::shared_ptr<spdlog::logger> EventLogger();

// JsonEscape escapes `s` for use inside a JSON string literal.
std::string JsonEscape(std::string_view s);

}  // namespace genhost
