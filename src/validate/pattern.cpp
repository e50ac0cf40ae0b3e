// GCC 12 reports -Wmaybe-uninitialized inside libstdc++'s regex compiler (a false positive in
// regex_automaton.h); it is silenced here, the only file that instantiates std::regex.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "pattern.hpp"

#include <regex>

namespace genhost::validate::detail {

struct Pattern::Impl {
    std::regex regex;
};

Pattern::Pattern() : impl_(std::make_unique<Impl>()) {}
Pattern::~Pattern() = default;

std::shared_ptr<const Pattern> Pattern::Compile(const std::string& source, std::string& error) {
    std::shared_ptr<Pattern> pattern(new Pattern());
    try {
        pattern->impl_->regex = std::regex(source, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        error = e.what();
        return nullptr;
    }
    return pattern;
}

bool Pattern::Search(std::string_view s) const {
    return std::regex_search(s.begin(), s.end(), impl_->regex);
}

}  // namespace genhost::validate::detail
