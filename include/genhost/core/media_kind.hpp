// genhost/core/media_kind.hpp
//
// MediaKind is what a media input must be: an image, a video or an audio file. The validator
// (the schemas' "x-media-kind"), the asset reader and the providers share it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace genhost {

enum class MediaKind : std::uint8_t { kImage, kVideo, kAudio };

// MediaKindName is "image", "video" or "audio": also the top-level media type of the kind.
constexpr const char* MediaKindName(MediaKind kind) {
    switch (kind) {
        case MediaKind::kImage:
            return "image";
        case MediaKind::kVideo:
            return "video";
        case MediaKind::kAudio:
            return "audio";
    }
    return "";
}

// MediaKindByName is the kind whose MediaKindName is `name`, or nullopt.
constexpr std::optional<MediaKind> MediaKindByName(std::string_view name) {
    if (name == "image") return MediaKind::kImage;
    if (name == "video") return MediaKind::kVideo;
    if (name == "audio") return MediaKind::kAudio;
    return std::nullopt;
}

}  // namespace genhost
