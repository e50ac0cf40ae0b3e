// genhost/core/resources.hpp
//
// Provides the files compiled into the binary: migrations/*.sql and schemas/*.json, keyed by
// their path relative to the source tree (for example "schemas/text_to_image.json").
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace genhost {

struct EmbeddedResource {
    std::string_view path;
    std::string_view content;
};

// EmbeddedResources returns every embedded file, in path order. Defined in generated code.
std::span<const EmbeddedResource> EmbeddedResources();

// FindResource returns the content of the embedded file at `path`, if any.
std::optional<std::string_view> FindResource(std::string_view path);

}  // namespace genhost
