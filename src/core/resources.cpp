#include "genhost/core/resources.hpp"

namespace genhost {

std::optional<std::string_view> FindResource(std::string_view path) {
    for (const auto& r : EmbeddedResources()) {
        if (r.path == path) return r.content;
    }
    return std::nullopt;
}

}  // namespace genhost
