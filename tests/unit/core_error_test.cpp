// Tests for genhost/core/error.hpp: the one mapping of ErrorCode onto HTTP statuses, the ApiError
// factories, and Result<T> holding a value or an ApiError (value() on an error throws
// ApiErrorException carrying it).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "genhost/core/error.hpp"

namespace genhost {
namespace {

TEST(HttpStatus, MapsEveryErrorCode) {
    const std::vector<std::pair<ErrorCode, int>> expected = {
        {ErrorCode::kInvalidRequest, 400},   {ErrorCode::kUnauthorized, 401},
        {ErrorCode::kForbidden, 403},        {ErrorCode::kNotFound, 404},
        {ErrorCode::kMethodNotAllowed, 405}, {ErrorCode::kConflict, 409},
        {ErrorCode::kPayloadTooLarge, 413},  {ErrorCode::kRateLimited, 429},
        {ErrorCode::kInternal, 500},         {ErrorCode::kUnavailable, 503},
    };
    std::set<int> statuses;
    for (const auto& [code, status] : expected) {
        EXPECT_EQ(HttpStatus(code), status) << static_cast<int>(code);
        statuses.insert(HttpStatus(code));
    }
    EXPECT_EQ(statuses.size(), expected.size()) << "two codes share a status";
}

TEST(HttpStatus, UnknownValueIsInternal) {
    EXPECT_EQ(HttpStatus(static_cast<ErrorCode>(999)), 500);
}

TEST(ApiError, DefaultIsInternal) {
    const ApiError e;
    EXPECT_EQ(e.code, ErrorCode::kInternal);
    EXPECT_TRUE(e.issues.empty());
    EXPECT_FALSE(e.retry_after_seconds.has_value());
    EXPECT_TRUE(e.allow.empty());
}

TEST(ApiError, InvalidRequestCarriesIssues) {
    const Issue issue{"invalid_type", {"referenceImages", "0", "uri"}, "Expected string"};
    const ApiError e = ApiError::InvalidRequest("Validation of body failed", {issue});
    EXPECT_EQ(e.code, ErrorCode::kInvalidRequest);
    EXPECT_EQ(e.message, "Validation of body failed");
    ASSERT_EQ(e.issues.size(), 1u);
    EXPECT_EQ(e.issues[0], issue);
    EXPECT_EQ(HttpStatus(e.code), 400);
}

TEST(ApiError, InvalidRequestWithoutIssues) {
    const ApiError e = ApiError::InvalidRequest("bad");
    EXPECT_EQ(e.code, ErrorCode::kInvalidRequest);
    EXPECT_TRUE(e.issues.empty());
}

TEST(ApiError, Factories) {
    EXPECT_EQ(ApiError::Unauthorized().code, ErrorCode::kUnauthorized);
    EXPECT_EQ(ApiError::Unauthorized().message, "Unauthorized");
    EXPECT_EQ(ApiError::Unauthorized("Invalid API key").message, "Invalid API key");
    EXPECT_EQ(ApiError::NotFound().code, ErrorCode::kNotFound);
    EXPECT_EQ(ApiError::NotFound().message, "Not found");
    EXPECT_EQ(ApiError::NotFound("Task not found").message, "Task not found");
    EXPECT_EQ(ApiError::Conflict("busy").code, ErrorCode::kConflict);
    EXPECT_EQ(ApiError::Conflict("busy").message, "busy");

    const ApiError unavailable = ApiError::Unavailable();
    EXPECT_EQ(unavailable.code, ErrorCode::kUnavailable);
    EXPECT_EQ(unavailable.message, "Service temporarily unavailable");
    EXPECT_EQ(unavailable.retry_after_seconds, 1);

    const ApiError internal = ApiError::Internal();
    EXPECT_EQ(internal.code, ErrorCode::kInternal);
    EXPECT_EQ(internal.message, "Internal server error");
}

TEST(Issue, EqualityComparesEveryField) {
    const Issue a{"too_big", {"promptText"}, "too long"};
    EXPECT_EQ(a, (Issue{"too_big", {"promptText"}, "too long"}));
    EXPECT_NE(a, (Issue{"too_small", {"promptText"}, "too long"}));
    EXPECT_NE(a, (Issue{"too_big", {"ratio"}, "too long"}));
    EXPECT_NE(a, (Issue{"too_big", {"promptText"}, "other"}));
    EXPECT_NE(a, (Issue{"too_big", {}, "too long"}));
}

Result<int> Half(int x) {
    if (x % 2 != 0) return ApiError::InvalidRequest("odd");
    return x / 2;
}

TEST(Result, HoldsAValue) {
    const Result<int> r = Half(10);
    ASSERT_TRUE(r.has_value());
    EXPECT_FALSE(r.has_error());
    EXPECT_EQ(*r, 5);
    EXPECT_EQ(r.value(), 5);
}

TEST(Result, HoldsAnError) {
    const Result<int> r = Half(3);
    ASSERT_TRUE(r.has_error());
    EXPECT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidRequest);
    EXPECT_EQ(r.error().message, "odd");
}

TEST(Result, ValueOnAnErrorThrowsApiErrorException) {
    const Result<int> r = ApiError::NotFound("Task not found");
    try {
        (void)r.value();
        FAIL() << "value() did not throw";
    } catch (const ApiErrorException& e) {
        EXPECT_EQ(e.error().code, ErrorCode::kNotFound);
        EXPECT_EQ(e.error().message, "Task not found");
        EXPECT_STREQ(e.what(), "Task not found");
    }
}

TEST(Result, HoldsMoveOnlyAndStringValues) {
    Result<std::string> s = std::string("hello");
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(*s, "hello");

    Result<std::unique_ptr<int>> p = std::make_unique<int>(7);
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(**p, 7);
}

TEST(Result, VoidResult) {
    Result<void> ok;
    EXPECT_TRUE(ok.has_value());
    Result<void> bad = ApiError::Unauthorized();
    ASSERT_TRUE(bad.has_error());
    EXPECT_EQ(bad.error().code, ErrorCode::kUnauthorized);
    EXPECT_THROW(bad.value(), ApiErrorException);
}

TEST(ApiErrorException, CarriesTheWholeError) {
    ApiError e;
    e.code = ErrorCode::kRateLimited;
    e.message = "limit";
    e.retry_after_seconds = 42;
    try {
        throw ApiErrorException(e);
    } catch (const std::exception& ex) {
        EXPECT_STREQ(ex.what(), "limit");
        const auto* api = dynamic_cast<const ApiErrorException*>(&ex);
        ASSERT_NE(api, nullptr);
        EXPECT_EQ(api->error().retry_after_seconds, 42);
        EXPECT_EQ(HttpStatus(api->error().code), 429);
    }
}

}  // namespace
}  // namespace genhost
