#include "genhost/assets/limits.hpp"

#include "genhost/assets/content_types.hpp"

namespace genhost::assets {
namespace {

// Pointer turns a catalog input path ("reference.uri", "referenceVideos") into the JSON pointer
// prefix of the media strings it covers ("/reference/uri", "/referenceVideos").
std::string PointerOf(const std::string& dotted) {
    std::string out = "/";
    for (char c : dotted) out.push_back(c == '.' ? '/' : c);
    return out;
}

std::vector<std::string> PathOf(const std::string& dotted) {
    std::vector<std::string> out;
    std::string part;
    for (char c : dotted) {
        if (c == '.') {
            out.push_back(part);
            part.clear();
        } else {
            part.push_back(c);
        }
    }
    out.push_back(part);
    return out;
}

bool Covers(const std::string& prefix, const std::string& pointer) {
    return pointer == prefix ||
           (pointer.size() > prefix.size() && pointer.compare(0, prefix.size(), prefix) == 0 &&
            pointer[prefix.size()] == '/');
}

bool HasDuration(const ProbedInput& p) {
    return p.kind != MediaKind::kImage && !IsStillImageContainer(p.info.container);
}

std::optional<double> NumberAt(const nlohmann::json& rule, const char* key) {
    const auto it = rule.find(key);
    if (it == rule.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
}

}  // namespace

std::optional<AssetFailure> CheckProbed(const media::MediaInfo& info, MediaKind kind,
                                        std::string_view declared_type, const AssetLimits& limits) {
    if (!MatchesProbe(info, kind, declared_type)) {
        return Fail(FailureKind::kUnsupportedType, messages::kUnsupportedType,
                    "probed as " + info.container + " (video " + info.video_codec + ", audio " +
                        info.audio_codec + "), declared " + std::string(declared_type) + " for " +
                        MediaKindName(kind));
    }
    if (kind == MediaKind::kAudio) return std::nullopt;
    if (info.width <= 0 || info.height <= 0) {
        return Fail(FailureKind::kUnsupportedType, messages::kUnsupportedType, "no picture size");
    }
    if (info.width > limits.max_side || info.height > limits.max_side) {
        return Fail(FailureKind::kDimensions, messages::Dimensions(limits.max_side),
                    std::to_string(info.width) + "x" + std::to_string(info.height));
    }
    const double ratio = static_cast<double>(info.width) / info.height;
    if (ratio < limits.min_aspect_ratio || ratio > limits.max_aspect_ratio) {
        return Fail(FailureKind::kAspectRatio,
                    messages::AspectRatio(limits.min_aspect_ratio, limits.max_aspect_ratio),
                    std::to_string(info.width) + "x" + std::to_string(info.height));
    }
    return std::nullopt;
}

std::vector<Issue> CheckFieldLimits(const nlohmann::json& inputs,
                                    const std::vector<ProbedInput>& probed,
                                    const AssetLimits& limits) {
    std::vector<Issue> issues;
    if (!inputs.is_object()) return issues;
    for (const auto& [field, rule] : inputs.items()) {
        if (!rule.is_object()) continue;
        const std::string prefix = PointerOf(field);
        std::vector<const ProbedInput*> items;
        for (const ProbedInput& p : probed) {
            if (Covers(prefix, p.pointer)) items.push_back(&p);
        }
        if (items.empty()) continue;
        if (const auto max_items = NumberAt(rule, "max_items");
            max_items && static_cast<double>(items.size()) > *max_items) {
            issues.push_back({"too_big", PathOf(field),
                              "Array must contain at most " +
                                  std::to_string(static_cast<long long>(*max_items)) +
                                  " element(s)"});
        }
        // A field whose sound is the input (speech_to_speech's media, which may be a video).
        if (rule.value("needs_audio", false)) {
            for (const ProbedInput* p : items) {
                if (p->info.audio_codec.empty()) {
                    issues.push_back(
                        ToIssue(Fail(FailureKind::kNoAudio, messages::kNoAudio, "no audio stream"),
                                p->path));
                }
            }
        }
        const auto min_seconds = NumberAt(rule, "min_seconds");
        const auto max_seconds = NumberAt(rule, "max_seconds");
        const bool exclusive = rule.value("max_seconds_exclusive", false);
        double total = 0;
        std::size_t timed = 0;
        const ProbedInput* longest = nullptr;
        for (const ProbedInput* p : items) {
            if (!HasDuration(*p)) continue;
            const double seconds = p->info.duration_seconds;
            if (min_seconds && seconds < *min_seconds) {
                issues.push_back(ToIssue(
                    Fail(FailureKind::kDurationTooShort, messages::DurationAtLeast(*min_seconds)),
                    p->path));
            }
            total += seconds;
            ++timed;
            if (longest == nullptr || seconds > longest->info.duration_seconds) longest = p;
        }
        // "combined_with": other fields whose durations count toward this field's cap (hailuo3's
        // referenceVideos "combined with promptVideo ≤ 15 s"); the issue names every field.
        std::string names = field;
        std::size_t others = 0;
        if (const auto it = rule.find("combined_with"); it != rule.end() && it->is_array()) {
            for (const auto& other : *it) {
                if (!other.is_string()) continue;
                const std::string other_prefix = PointerOf(other.get<std::string>());
                for (const ProbedInput& p : probed) {
                    if (!Covers(other_prefix, p.pointer) || !HasDuration(p)) continue;
                    total += p.info.duration_seconds;
                    ++others;
                }
                names += " and " + other.get<std::string>();
            }
        }
        // An inclusive cap allows container rounding; an exclusive one ("< 30 s") is strict.
        const bool over = max_seconds && timed > 0 &&
                          (exclusive ? total >= *max_seconds
                                     : total > *max_seconds + limits.duration_tolerance_seconds);
        if (over) {
            if (timed == 1 && others == 0) {
                issues.push_back(ToIssue(Fail(FailureKind::kDurationTooLong,
                                              exclusive ? messages::DurationBelow(*max_seconds)
                                                        : messages::DurationAtMost(*max_seconds)),
                                         longest->path));
            } else {
                issues.push_back(
                    ToIssue(Fail(FailureKind::kDurationTooLong,
                                 exclusive ? messages::CombinedDurationBelow(names, *max_seconds)
                                           : messages::CombinedDurationAtMost(names, *max_seconds)),
                            PathOf(field)));
            }
        }
    }
    return issues;
}

catalog::InputFacts FactsOf(const std::vector<ProbedInput>& probed) {
    catalog::InputFacts facts;
    for (const ProbedInput& p : probed) {
        catalog::MediaFacts f;
        if (HasDuration(p) && p.info.duration_seconds > 0)
            f.duration_seconds = p.info.duration_seconds;
        if (p.info.frame_rate > 0) f.frames_per_second = p.info.frame_rate;
        if (p.info.width > 0 && p.info.height > 0) {
            f.width = p.info.width;
            f.height = p.info.height;
        }
        facts.media[p.pointer] = f;
    }
    return facts;
}

Issue ToIssue(const AssetFailure& failure, std::vector<std::string> path) {
    return Issue{IssueCode(failure), std::move(path), failure.message};
}

}  // namespace genhost::assets
