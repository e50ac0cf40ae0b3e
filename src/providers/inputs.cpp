#include "genhost/providers/inputs.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"

#include <filesystem>
#include <fstream>

namespace genhost::providers {

std::optional<DataUri> DecodeDataUri(std::string_view uri) {
    constexpr std::string_view kScheme = "data:";
    if (uri.substr(0, kScheme.size()) != kScheme) return std::nullopt;
    const auto comma = uri.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    std::string_view header = uri.substr(kScheme.size(), comma - kScheme.size());
    constexpr std::string_view kBase64 = ";base64";
    if (header.size() < kBase64.size() ||
        header.substr(header.size() - kBase64.size()) != kBase64) {
        return std::nullopt;
    }
    header.remove_suffix(kBase64.size());
    const std::string_view type = header.substr(0, header.find(';'));
    if (type.find('/') == std::string_view::npos) return std::nullopt;
    auto bytes = Base64Decode(uri.substr(comma + 1));
    if (!bytes) return std::nullopt;
    return DataUri{std::string(type), std::move(*bytes)};
}

bool MediaTypeMatches(std::string_view media_type, MediaKind kind) {
    const std::string_view prefix = kind == MediaKind::kImage   ? "image/"
                                    : kind == MediaKind::kVideo ? "video/"
                                                                : "audio/";
    return media_type.substr(0, prefix.size()) == prefix;
}

std::string DataUriResolver::Resolve(const std::string& media, MediaKind kind,
                                     const std::string& scratch_dir) const {
    if (media.rfind("data:", 0) != 0) {
        throw TaskFailure("ASSET.INVALID",
                          "Fetching HTTPS URLs and upload URIs is not available in this build; "
                          "send the media as a data URI");
    }
    const auto decoded = DecodeDataUri(media);
    if (!decoded) throw TaskFailure("ASSET.INVALID", "Invalid data URI");
    if (!MediaTypeMatches(decoded->media_type, kind)) {
        throw TaskFailure("ASSET.INVALID", "Unsupported asset type");
    }
    std::filesystem::create_directories(scratch_dir);
    const std::string path = scratch_dir + "/input_" + NewUuid().substr(0, 8);
    std::ofstream out(path, std::ios::binary);
    out.write(decoded->bytes.data(), static_cast<std::streamsize>(decoded->bytes.size()));
    if (!out) throw TaskFailure("INTERNAL", "cannot write an input to the scratch folder");
    return path;
}

}  // namespace genhost::providers
