#include "genhost/assets/failure.hpp"

#include <fmt/format.h>

namespace genhost::assets {

const char* IssueCode(const AssetFailure& failure) {
    switch (failure.kind) {
        case FailureKind::kInvalidDataUri:
        case FailureKind::kInvalidUrl:
        case FailureKind::kHttpsOnly:
            return "invalid_string";
        case FailureKind::kTooLarge:
        case FailureKind::kDimensions:
        case FailureKind::kDurationTooLong:
            return "too_big";
        case FailureKind::kDurationTooShort:
            return "too_small";
        default:
            return "custom";
    }
}

namespace messages {

std::string HttpStatus(int status) {
    return fmt::format(
        "Failed to fetch asset: HTTP status {} (only 200 is accepted; redirects are not followed)",
        status);
}

std::string Timeout(double seconds) {
    return fmt::format("Timeout while fetching asset (download longer than {} seconds)", seconds);
}

std::string ContentType(const std::string& type, const std::string& kind) {
    return fmt::format("Unsupported Content-Type '{}': not on the approved list for {} assets",
                       type, kind);
}

std::string Dimensions(int max_side) {
    return fmt::format("Invalid asset dimensions (either side must not exceed {} px)", max_side);
}

std::string AspectRatio(double min, double max) {
    return fmt::format("Invalid aspect ratio (width / height must be between {} and {})", min, max);
}

std::string DurationAtMost(double seconds) {
    return fmt::format("Invalid asset duration (must be at most {} seconds)", seconds);
}

std::string DurationAtLeast(double seconds) {
    return fmt::format("Invalid asset duration (must be at least {} seconds)", seconds);
}

std::string CombinedDurationAtMost(const std::string& field, double seconds) {
    return fmt::format("Invalid asset duration ({} must be at most {} seconds combined)", field,
                       seconds);
}

std::string DurationBelow(double seconds) {
    return fmt::format("Invalid asset duration (must be less than {} seconds)", seconds);
}

std::string CombinedDurationBelow(const std::string& field, double seconds) {
    return fmt::format("Invalid asset duration ({} must be less than {} seconds combined)", field,
                       seconds);
}

}  // namespace messages

void throw_exception_from_error(const AssetFailure& failure,
                                const boost::source_location& /*location*/) {
    throw AssetFailureException(failure);
}

AssetFailure Fail(FailureKind kind, std::string message, std::string detail) {
    return AssetFailure{kind, std::move(message), std::move(detail)};
}

}  // namespace genhost::assets
