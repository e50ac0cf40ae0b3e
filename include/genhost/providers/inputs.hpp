// genhost/providers/inputs.hpp
//
// Provides the pieces of input resolution that need no network: DecodeDataUri (strict
// `data:<type>/<subtype>[;params];base64,<data>` parsing) and DataUriResolver, an InputResolver
// that materialises data URIs as files and refuses other media strings. The asset module
// provides the full resolver (HTTPS fetching, uploads) on top of it.
#pragma once

#include "genhost/providers/provider.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace genhost::providers {

struct DataUri {
    std::string media_type;  // e.g. "image/png" (parameters dropped)
    std::string bytes;       // decoded
};

// DecodeDataUri decodes a base64 data URI; nullopt when malformed.
std::optional<DataUri> DecodeDataUri(std::string_view uri);

// KindOf reports whether `media_type` (e.g. "video/mp4") belongs to `kind`.
bool MediaTypeMatches(std::string_view media_type, MediaKind kind);

class DataUriResolver : public InputResolver {
  public:
    std::string Resolve(const std::string& media, MediaKind kind,
                        const std::string& scratch_dir) const override;
};

}  // namespace genhost::providers
