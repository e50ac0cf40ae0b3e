// tests/unit/issue_print.hpp: how GoogleTest prints a validation Issue in the validate tests'
// failure messages (its code, path and the message's first 300 characters).
#pragma once

#include "genhost/core/error.hpp"

#include <ostream>

namespace genhost {
inline void PrintTo(const Issue& issue, std::ostream* os) {
    *os << "{" << issue.code << ", [";
    for (std::size_t i = 0; i < issue.path.size(); ++i) *os << (i ? "," : "") << issue.path[i];
    *os << "], \"" << issue.message.substr(0, 300) << "\"}";
}
}  // namespace genhost
