// genhost/assets/limits.hpp
//
// Provides the limits a usable media input must meet, as pure functions over what probing found
// (no I/O, unit-tested):
//
// - CheckProbed, per asset: the bytes are what the field's kind and the declared media type say
//   (else "Unsupported asset type"); each side of a picture is at most max_side px; width /
//   height lies within [min_aspect_ratio, max_aspect_ratio].
// - CheckFieldLimits, per request field, from the catalog's `capabilities.inputs` of the model on
//   the endpoint (docs/catalog.md): `max_items`; `min_seconds` for every item; `max_seconds` for
//   a single item, or for the sum of an array field's items (the "combined" caps of SPEC.md).
//   Bounds are inclusive; a maximum is allowed `duration_tolerance_seconds` of container
//   rounding (a "10 s" clip whose AAC priming makes it 10.02 s is still 10 s).
// - FactsOf: the probed facts the price rules read (Catalog::EstimateCredits).
//
// The byte caps per kind (CLIENTS.md 3.2) and the fetch timeout live here too, so the numbers
// the fetcher, the data-URI decoder and the checks use are in one place.
#pragma once

#include "genhost/assets/failure.hpp"
#include "genhost/catalog/catalog.hpp"
#include "genhost/core/error.hpp"
#include "genhost/media/image.hpp"
#include "genhost/providers/provider.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::assets {

inline constexpr std::uint64_t kMiB = 1024 * 1024;

struct AssetLimits {
    int max_side = 8000;             // SPEC.md: each side <= 8000 px
    double min_aspect_ratio = 0.25;  // width / height, genhost's bounds (docs/assets.md)
    double max_aspect_ratio = 4.0;
    double duration_tolerance_seconds = 0.05;
    // CLIENTS.md 3.2, per kind (image, video, audio).
    std::uint64_t url_bytes[3] = {16 * kMiB, 32 * kMiB, 32 * kMiB};
    std::uint64_t data_uri_bytes[3] = {5 * kMiB, 16 * kMiB, 16 * kMiB};
    std::chrono::milliseconds fetch_timeout{10000};  // SPEC.md: asset fetch timeout 10 s
    std::chrono::milliseconds probe_timeout{10000};

    std::uint64_t UrlBytes(MediaKind kind) const { return url_bytes[static_cast<int>(kind)]; }
    std::uint64_t DataUriBytes(MediaKind kind) const {
        return data_uri_bytes[static_cast<int>(kind)];
    }
};

// CheckProbed returns why `info` (the probe of an asset) is not usable as a `kind` asset whose
// declared media type is `declared_type` (normalized; empty for uploads), or nullopt.
std::optional<AssetFailure> CheckProbed(const media::MediaInfo& info, MediaKind kind,
                                        std::string_view declared_type, const AssetLimits& limits);

// ProbedInput is one media string of a request and what probing found.
struct ProbedInput {
    std::vector<std::string> path;  // issue path, e.g. {"promptImage", "0", "uri"}
    std::string pointer;            // JSON pointer, e.g. "/promptImage/0/uri"
    MediaKind kind = MediaKind::kImage;
    media::MediaInfo info;
};

// CheckFieldLimits checks `probed` against `inputs` (ModelInfo::CapabilitiesFor(endpoint)
// ["inputs"]: dotted field path -> {max_items?, min_seconds?, max_seconds?, ...}; null or absent
// means no limits). Returns one issue per violation: max_items at the field's path; a duration
// at the item's path, or at the field's path when several items add up past a combined cap.
std::vector<Issue> CheckFieldLimits(const nlohmann::json& inputs,
                                    const std::vector<ProbedInput>& probed,
                                    const AssetLimits& limits);

// FactsOf returns the facts of every probed input, keyed by its JSON pointer: duration (videos
// and audio), frame rate, width and height (pictures).
catalog::InputFacts FactsOf(const std::vector<ProbedInput>& probed);

// ToIssue turns a failure of the asset at `path` into its 400 issue.
Issue ToIssue(const AssetFailure& failure, std::vector<std::string> path);

}  // namespace genhost::assets
