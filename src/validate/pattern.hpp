// src/validate/pattern.hpp (private to genhost_validate)
//
// Provides Pattern, a compiled "pattern" keyword (an ECMAScript regular expression, unanchored as
// in JSON Schema). std::regex lives only in pattern.cpp: it backtracks and recurses per input
// character, so the compiler allows a pattern only beside a small maxLength and the walker never
// runs it on a longer string.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace genhost::validate::detail {

class Pattern {
  public:
    // Compile returns the compiled `source`, or nullptr with `error` set.
    static std::shared_ptr<const Pattern> Compile(const std::string& source, std::string& error);

    // Search says whether the expression matches somewhere in `s`.
    bool Search(std::string_view s) const;

    ~Pattern();
    Pattern(const Pattern&) = delete;
    Pattern& operator=(const Pattern&) = delete;

  private:
    Pattern();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace genhost::validate::detail
