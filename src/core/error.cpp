#include "genhost/core/error.hpp"

namespace genhost {

ApiError ApiError::InvalidRequest(std::string message, std::vector<Issue> issues) {
    ApiError e;
    e.code = ErrorCode::kInvalidRequest;
    e.message = std::move(message);
    e.issues = std::move(issues);
    return e;
}

ApiError ApiError::Unauthorized(std::string message) {
    ApiError e;
    e.code = ErrorCode::kUnauthorized;
    e.message = std::move(message);
    return e;
}

ApiError ApiError::NotFound(std::string message) {
    ApiError e;
    e.code = ErrorCode::kNotFound;
    e.message = std::move(message);
    return e;
}

ApiError ApiError::Conflict(std::string message) {
    ApiError e;
    e.code = ErrorCode::kConflict;
    e.message = std::move(message);
    return e;
}

ApiError ApiError::Unavailable(std::string message) {
    ApiError e;
    e.code = ErrorCode::kUnavailable;
    e.message = std::move(message);
    e.retry_after_seconds = 1;
    return e;
}

ApiError ApiError::Internal() {
    ApiError e;
    e.code = ErrorCode::kInternal;
    e.message = "Internal server error";
    return e;
}

int HttpStatus(ErrorCode code) {
    switch (code) {
        case ErrorCode::kInvalidRequest:
            return 400;
        case ErrorCode::kUnauthorized:
            return 401;
        case ErrorCode::kForbidden:
            return 403;
        case ErrorCode::kNotFound:
            return 404;
        case ErrorCode::kMethodNotAllowed:
            return 405;
        case ErrorCode::kConflict:
            return 409;
        case ErrorCode::kPayloadTooLarge:
            return 413;
        case ErrorCode::kRateLimited:
            return 429;
        case ErrorCode::kInternal:
            return 500;
        case ErrorCode::kUnavailable:
            return 503;
    }
    return 500;
}

void throw_exception_from_error(const ApiError& e, const boost::source_location&) {
    throw ApiErrorException(e);
}

std::string Issue::PathText() const {
    std::string out;
    for (const auto& part : path) {
        if (!out.empty()) out += '.';
        out += part;
    }
    return out;
}

}  // namespace genhost
