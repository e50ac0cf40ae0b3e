// genhost/assets/content_types.hpp
//
// Provides the approved media types per kind (for a fetched asset's Content-Type and a data
// URI's media type) and the check that what libav found in the bytes is what the type claimed.
// Generic types (application/octet-stream, binary/octet-stream, text/plain) are never approved:
// a file's extension is not evidence. The lists are in docs/assets.md. Pure; thread-safe.
#pragma once

#include "genhost/media/image.hpp"
#include "genhost/providers/provider.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace genhost::assets {

// NormalizeMediaType returns the type/subtype of a Content-Type header value or data-URI media
// type, lower case, parameters and surrounding spaces removed ("Image/PNG; q=1" -> "image/png").
std::string NormalizeMediaType(std::string_view value);

// IsApprovedMediaType reports whether normalized `type` is on the approved list for `kind`.
bool IsApprovedMediaType(std::string_view type, MediaKind kind);

// ApprovedMediaTypes lists the approved types of `kind`, in documentation order.
const std::vector<std::string_view>& ApprovedMediaTypes(MediaKind kind);

// IsStillImageContainer reports whether a libavformat demuxer name is one of the single-picture
// demuxers (png_pipe, jpeg_pipe, webp_pipe, image2, ...).
bool IsStillImageContainer(std::string_view container);

// MatchesProbe reports whether `info` (what libav read from the bytes) is an asset of `kind`
// and, when `type` is not empty, of that media type: an image is a single picture whose codec
// is the one the type names; a video has a video stream in a container of the type's family;
// audio has an audio stream in a container of the type's family. Uploads have no declared type
// and pass an empty one: only the kind is checked.
bool MatchesProbe(const media::MediaInfo& info, MediaKind kind, std::string_view type);

}  // namespace genhost::assets
