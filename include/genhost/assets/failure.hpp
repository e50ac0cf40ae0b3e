// genhost/assets/failure.hpp
//
// Provides AssetFailure: why a media input cannot be used, as the client will read it. Every
// kind has one message in SPEC.md's wording (Errors, "Asset failure messages"); docs/assets.md
// lists them all. At request time a failure becomes a 400 issue at the path of the field that
// holds the asset; in a worker it ends the task FAILED with `ASSET.INVALID` and the same message.
// `detail` is for the server log only (addresses, libav's words) and never reaches a client.
#pragma once

#include <boost/system/result.hpp>

#include <stdexcept>
#include <string>

namespace genhost::assets {

enum class FailureKind {
    kInvalidDataUri,    // malformed data URI
    kUnsupportedType,   // media type not for the field, or bytes libav cannot decode as it
    kInvalidUrl,        // the URL cannot be parsed
    kHttpsOnly,         // another scheme
    kIpLiteral,         // the host is an IP address
    kFetchFailed,       // DNS, refused address, connection, TLS or protocol failure
    kHttpStatus,        // a status other than 200 (3xx included: redirects are not followed)
    kTimeout,           // the download took longer than the fetch timeout
    kContentType,       // Content-Type missing or not approved for the kind
    kNoContentLength,   // Content-Length absent (chunked or close-delimited body)
    kTooLarge,          // over the size cap, or bytes received differ from Content-Length
    kDimensions,        // a side over the maximum
    kAspectRatio,       // width / height outside the bounds
    kDurationTooShort,  // shorter than the field's minimum
    kDurationTooLong,   // longer than the field's maximum (alone or combined)
    kNoAudio,           // a field that needs sound ("needs_audio") got media without an audio track
    kUnknownUpload,     // an upload URI that is unknown, expired or another organization's
    kInputUnavailable,  // (worker) a stored input reference whose file is gone
};

struct AssetFailure {
    FailureKind kind = FailureKind::kFetchFailed;
    std::string message;  // safe for clients
    std::string detail;   // for logs
};

// IssueCode is the zod-style issue code a failure is reported with: `too_big` for sizes,
// dimensions and durations over a maximum, `too_small` for durations under a minimum,
// `invalid_string` for unparseable URIs, `custom` for the rest.
const char* IssueCode(const AssetFailure& failure);

// Messages, in SPEC.md's wording. Functions where the text names a number or a value.
namespace messages {
inline constexpr const char* kInvalidDataUri = "Invalid data URI";
inline constexpr const char* kUnsupportedType = "Unsupported asset type";
inline constexpr const char* kInvalidUrl = "Invalid URL";
inline constexpr const char* kHttpsOnly = "Only HTTPS URLs are allowed";
inline constexpr const char* kIpLiteral = "The URL must be a domain, not an IP address";
inline constexpr const char* kFetchFailed = "Failed to fetch asset";
inline constexpr const char* kNoContentLength =
    "Content-Length not provided (streamed responses of unknown length are rejected)";
inline constexpr const char* kTooLarge = "Asset size exceeds the maximum for the type";
inline constexpr const char* kNoAudio = "The media has no audio track";
inline constexpr const char* kContentTypeMissing = "Content-Type response header missing";
inline constexpr const char* kUnknownUpload =
    "Failed to fetch asset: the upload URI is unknown or has expired";
inline constexpr const char* kInputUnavailable =
    "Failed to fetch asset: the stored input is no longer available";

std::string HttpStatus(int status);
std::string Timeout(double seconds);
std::string ContentType(const std::string& type, const std::string& kind);
std::string Dimensions(int max_side);
std::string AspectRatio(double min, double max);
std::string DurationAtMost(double seconds);
std::string DurationAtLeast(double seconds);
std::string CombinedDurationAtMost(const std::string& field, double seconds);
std::string DurationBelow(double seconds);
std::string CombinedDurationBelow(const std::string& field, double seconds);
}  // namespace messages

// Result is a value or the AssetFailure that prevented it.
template <class T>
using Result = boost::system::result<T, AssetFailure>;

// Called by Result<T>::value() on a failure; throws AssetFailureException.
[[noreturn]] void throw_exception_from_error(const AssetFailure& failure,
                                             const boost::source_location& location);

class AssetFailureException : public std::runtime_error {
  public:
    explicit AssetFailureException(AssetFailure failure)
        : std::runtime_error(failure.message), failure_(std::move(failure)) {}
    const AssetFailure& failure() const { return failure_; }

  private:
    AssetFailure failure_;
};

// Fail builds a failure of `kind` with its message and a log detail.
AssetFailure Fail(FailureKind kind, std::string message, std::string detail = {});

}  // namespace genhost::assets
