// genhost/core/error.hpp
//
// Provides ApiError, the value in which every expected failure travels from a repository or
// validator to the HTTP boundary, the validation Issue, and Result<T>. One function (HttpStatus)
// maps error codes onto HTTP statuses; nothing else in genhost decides a status.
#pragma once

#include <boost/system/result.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genhost {

// Issue is one problem found in a request, shaped as SPEC.md's 400 body: a zod-style `code`,
// the `path` of the field (array indices written as decimal strings) and a human `message`.
struct Issue {
    std::string code;
    std::vector<std::string> path;
    std::string message;

    bool operator==(const Issue&) const = default;

    // PathText is `path` joined with '.' ("tools.0.name"; empty for the body itself), for prose.
    std::string PathText() const;
};

// ErrorCode is the stable kind of an ApiError.
enum class ErrorCode {
    kInvalidRequest,    // 400, with issues
    kUnauthorized,      // 401
    kForbidden,         // 403 (output URL signature expired or wrong)
    kNotFound,          // 404
    kMethodNotAllowed,  // 405, with `allow`
    kConflict,          // 409
    kPayloadTooLarge,   // 413
    kRateLimited,       // 429, with retry_after_seconds
    kInternal,          // 500; the message shown to clients is always generic
    kUnavailable,       // 503 (database unreachable)
};

// ApiError is an expected failure: a code, a message that is safe to show to the client, and the
// extras some statuses carry.
struct ApiError {
    ErrorCode code = ErrorCode::kInternal;
    std::string message;
    std::vector<Issue> issues;                        // kInvalidRequest only
    std::optional<std::int64_t> retry_after_seconds;  // kRateLimited, kUnavailable
    std::vector<std::string> allow;                   // kMethodNotAllowed only

    static ApiError InvalidRequest(std::string message, std::vector<Issue> issues = {});
    static ApiError Unauthorized(std::string message = "Unauthorized");
    static ApiError NotFound(std::string message = "Not found");
    static ApiError Conflict(std::string message);
    static ApiError Unavailable(std::string message = "Service temporarily unavailable");
    static ApiError Internal();
};

// HttpStatus returns the HTTP status for `code`.
int HttpStatus(ErrorCode code);

// Result is either a value or an ApiError.
template <class T>
using Result = boost::system::result<T, ApiError>;

// Called by Result<T>::value() on an error; throws ApiErrorException.
[[noreturn]] void throw_exception_from_error(const ApiError& e, const boost::source_location& loc);

// ApiErrorException carries an ApiError through code that prefers exceptions (rare).
class ApiErrorException : public std::exception {
  public:
    explicit ApiErrorException(ApiError e) : error_(std::move(e)) {}
    const char* what() const noexcept override { return error_.message.c_str(); }
    const ApiError& error() const { return error_; }

  private:
    ApiError error_;
};

}  // namespace genhost
