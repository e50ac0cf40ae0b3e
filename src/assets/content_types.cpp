#include "genhost/assets/content_types.hpp"

#include <algorithm>

namespace genhost::assets {
namespace {

// TypeRule: one approved media type, the libavformat demuxer names that may carry it (the
// first name of AVInputFormat::name's comma list, as MediaInfo::container spells it in full)
// and, for images, the one codec the picture must be in.
struct TypeRule {
    std::string_view type;
    MediaKind kind;
    std::vector<std::string_view> containers;
    std::string_view image_codec;
};

constexpr std::string_view kMov = "mov,mp4,m4a,3gp,3g2,mj2";
constexpr std::string_view kMatroska = "matroska,webm";

const std::vector<TypeRule>& Rules() {
    static const std::vector<TypeRule> rules = {
        {"image/png", MediaKind::kImage, {"png_pipe"}, "png"},
        {"image/jpeg", MediaKind::kImage, {"jpeg_pipe", "jpegls_pipe"}, "mjpeg"},
        {"image/jpg", MediaKind::kImage, {"jpeg_pipe", "jpegls_pipe"}, "mjpeg"},
        {"image/webp", MediaKind::kImage, {"webp_pipe"}, "webp"},
        {"video/mp4", MediaKind::kVideo, {kMov}, {}},
        {"video/quicktime", MediaKind::kVideo, {kMov}, {}},
        {"video/webm", MediaKind::kVideo, {kMatroska}, {}},
        {"video/x-matroska", MediaKind::kVideo, {kMatroska}, {}},
        {"audio/mpeg", MediaKind::kAudio, {"mp3"}, {}},
        {"audio/mp3", MediaKind::kAudio, {"mp3"}, {}},
        {"audio/wav", MediaKind::kAudio, {"wav"}, {}},
        {"audio/wave", MediaKind::kAudio, {"wav"}, {}},
        {"audio/x-wav", MediaKind::kAudio, {"wav"}, {}},
        {"audio/vnd.wave", MediaKind::kAudio, {"wav"}, {}},
        {"audio/ogg", MediaKind::kAudio, {"ogg"}, {}},
        {"audio/opus", MediaKind::kAudio, {"ogg"}, {}},
        {"audio/flac", MediaKind::kAudio, {"flac"}, {}},
        {"audio/x-flac", MediaKind::kAudio, {"flac"}, {}},
        {"audio/aac", MediaKind::kAudio, {"aac", kMov}, {}},
        {"audio/mp4", MediaKind::kAudio, {kMov}, {}},
        {"audio/m4a", MediaKind::kAudio, {kMov}, {}},
        {"audio/x-m4a", MediaKind::kAudio, {kMov}, {}},
        {"audio/webm", MediaKind::kAudio, {kMatroska}, {}},
    };
    return rules;
}

const TypeRule* FindRule(std::string_view type, MediaKind kind) {
    for (const TypeRule& rule : Rules()) {
        if (rule.type == type && rule.kind == kind) return &rule;
    }
    return nullptr;
}

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

}  // namespace

std::string NormalizeMediaType(std::string_view value) {
    value = value.substr(0, value.find(';'));
    while (!value.empty() && IsSpace(value.front())) value.remove_prefix(1);
    while (!value.empty() && IsSpace(value.back())) value.remove_suffix(1);
    std::string out(value);
    std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    });
    return out;
}

bool IsApprovedMediaType(std::string_view type, MediaKind kind) {
    return FindRule(type, kind) != nullptr;
}

const std::vector<std::string_view>& ApprovedMediaTypes(MediaKind kind) {
    static const auto lists = [] {
        std::vector<std::vector<std::string_view>> out(3);
        for (const TypeRule& rule : Rules()) {
            out[static_cast<std::size_t>(rule.kind)].push_back(rule.type);
        }
        return out;
    }();
    return lists[static_cast<std::size_t>(kind)];
}

bool IsStillImageContainer(std::string_view container) {
    return container == "image2" || container == "image2pipe" ||
           (container.size() > 5 && container.substr(container.size() - 5) == "_pipe");
}

bool MatchesProbe(const media::MediaInfo& info, MediaKind kind, std::string_view type) {
    const bool still = IsStillImageContainer(info.container);
    switch (kind) {
        case MediaKind::kImage:
            if (!still || info.video_codec.empty()) return false;
            break;
        case MediaKind::kVideo:
            if (still || info.video_codec.empty()) return false;
            break;
        case MediaKind::kAudio:
            if (still || info.audio_codec.empty()) return false;
            break;
    }
    if (type.empty()) return true;
    const TypeRule* rule = FindRule(type, kind);
    if (rule == nullptr) return false;
    const bool container_ok = std::find(rule->containers.begin(), rule->containers.end(),
                                        info.container) != rule->containers.end();
    if (!container_ok) return false;
    return rule->image_codec.empty() || rule->image_codec == info.video_codec;
}

}  // namespace genhost::assets
