// Tests for genhost/http/message.hpp: case-insensitive request headers, query parameters and
// percent decoding, and the response helpers: JSON bodies and the contract's error bodies (400
// with docUrl and issues, a 500 that never carries the message, Retry-After and x-should-retry
// on 429, Allow on 405).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "genhost/http/message.hpp"

namespace genhost::http {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using json = nlohmann::json;

std::optional<std::string> HeaderOf(const Response& r, std::string_view name) {
    std::optional<std::string> found;
    int count = 0;
    for (const auto& [k, v] : r.headers) {
        if (k.size() == name.size() &&
            std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) ==
                       std::tolower(static_cast<unsigned char>(b));
            })) {
            found = v;
            ++count;
        }
    }
    EXPECT_LE(count, 1) << "header " << name << " set twice";
    return found;
}

// --- Request::Header -----------------------------------------------------------------------

TEST(RequestHeader, IsCaseInsensitive) {
    Request req;
    req.headers = {{"authorization", "Bearer x"}, {"x-request-id", "abc"}, {"content-type", ""}};
    EXPECT_EQ(req.Header("authorization"), "Bearer x");
    EXPECT_EQ(req.Header("Authorization"), "Bearer x");
    EXPECT_EQ(req.Header("AUTHORIZATION"), "Bearer x");
    EXPECT_EQ(req.Header("X-Request-Id"), "abc");
    EXPECT_EQ(req.Header("x-REQUEST-id"), "abc");
    EXPECT_EQ(req.Header("Content-Type"), "");  // present but empty
}

TEST(RequestHeader, MissingIsNullopt) {
    Request req;
    EXPECT_EQ(req.Header("authorization"), std::nullopt);
    req.headers = {{"authorization", "x"}};
    EXPECT_EQ(req.Header("authorizatio"), std::nullopt);
    EXPECT_EQ(req.Header("authorization2"), std::nullopt);
    EXPECT_EQ(req.Header(""), std::nullopt);
}

TEST(RequestHeader, FirstOccurrenceWins) {
    Request req;
    req.headers = {{"x-service-version", "2024-11-06"}, {"x-service-version", "1999-01-01"}};
    EXPECT_EQ(req.Header("X-Service-Version"), "2024-11-06");
}

// --- PercentDecode -------------------------------------------------------------------------

TEST(PercentDecode, PlainTextUnchanged) {
    EXPECT_EQ(PercentDecode("", false), "");
    EXPECT_EQ(PercentDecode("abc-._~", false), "abc-._~");
}

TEST(PercentDecode, DecodesEscapesInEitherCase) {
    EXPECT_EQ(PercentDecode("%41%62%63", false), "Abc");
    EXPECT_EQ(PercentDecode("a%2fb%2Fc", false), "a/b/c");
    EXPECT_EQ(PercentDecode("%e2%9c%93", false), "\xe2\x9c\x93");
    EXPECT_EQ(PercentDecode("%00", false), std::string(1, '\0'));
    EXPECT_EQ(PercentDecode("%25", false), "%");
    EXPECT_EQ(PercentDecode("%2541", false), "%41");  // decoded once only
}

TEST(PercentDecode, PlusIsSpaceOnlyWhenAsked) {
    EXPECT_EQ(PercentDecode("a+b", true), "a b");
    EXPECT_EQ(PercentDecode("a+b", false), "a+b");
    EXPECT_EQ(PercentDecode("a%2Bb", true), "a+b");  // an escaped plus stays a plus
    EXPECT_EQ(PercentDecode("a%20b", false), "a b");
}

TEST(PercentDecode, RejectsBadEscapes) {
    for (const char* bad : {"%", "%4", "a%", "a%4", "%4g", "%g4", "%%41", "%-1", "% 4", "%+4"}) {
        EXPECT_EQ(PercentDecode(bad, false), std::nullopt) << bad;
        EXPECT_EQ(PercentDecode(bad, true), std::nullopt) << bad;
    }
}

// --- Request::QueryParam -------------------------------------------------------------------

TEST(QueryParam, FindsAndDecodesValues) {
    Request req;
    req.query = "expires=1730851200&signature=ab%43d&name=hello+world&path=%2Fa%2Fb";
    EXPECT_EQ(req.QueryParam("expires"), "1730851200");
    EXPECT_EQ(req.QueryParam("signature"), "abCd");
    EXPECT_EQ(req.QueryParam("name"), "hello world");
    EXPECT_EQ(req.QueryParam("path"), "/a/b");
}

TEST(QueryParam, MissingIsNullopt) {
    Request req;
    EXPECT_EQ(req.QueryParam("a"), std::nullopt);
    req.query = "ab=1&b=2";
    EXPECT_EQ(req.QueryParam("a"), std::nullopt);
    EXPECT_EQ(req.QueryParam("B"), std::nullopt);  // names are case-sensitive
    EXPECT_EQ(req.QueryParam("b="), std::nullopt);
}

TEST(QueryParam, RepeatedParametersAndValuesThatDoNotDecode) {
    Request req;
    req.query = "id=a&x=1&id=b%20c&id=&bad=%zz&bad=ok";
    EXPECT_EQ(req.QueryParams("id"), (std::vector<std::string>{"a", "b c", ""}));
    EXPECT_EQ(req.QueryParam("id"), "a");
    EXPECT_TRUE(req.QueryParams("none").empty());
    // Kept as sent, so the parameter's check refuses it rather than the server ignoring it.
    EXPECT_EQ(req.QueryParam("bad"), "%zz");
    EXPECT_EQ(req.QueryParams("bad"), (std::vector<std::string>{"%zz", "ok"}));
}

TEST(QueryParam, EmptyValueAndBareKey) {
    Request req;
    req.query = "empty=&bare&x=1";
    EXPECT_EQ(req.QueryParam("empty"), "");
    EXPECT_EQ(req.QueryParam("bare"), "");
    EXPECT_EQ(req.QueryParam("x"), "1");
}

TEST(QueryParam, ValueMayContainEquals) {
    Request req;
    req.query = "a=b=c";
    EXPECT_EQ(req.QueryParam("a"), "b=c");
}

TEST(QueryParam, FirstOccurrenceWins) {
    Request req;
    req.query = "a=1&a=2";
    EXPECT_EQ(req.QueryParam("a"), "1");
}

TEST(QueryParam, KeysAreDecodedToo) {
    Request req;
    req.query = "my%20key=1&other+key=2";
    EXPECT_EQ(req.QueryParam("my key"), "1");
    EXPECT_EQ(req.QueryParam("other key"), "2");
}

TEST(QueryParam, SkipsEmptyPairs) {
    Request req;
    req.query = "&&a=1&&b=2&";
    EXPECT_EQ(req.QueryParam("a"), "1");
    EXPECT_EQ(req.QueryParam("b"), "2");
}

// A value with a bad escape is present, as sent: its check refuses it (a cursor "%ZZ" is a 400,
// never a silent first page).
TEST(QueryParam, BadEscapeInValueIsKeptAsSent) {
    Request req;
    req.query = "a=%ZZ&b=%4&c=ok";
    EXPECT_EQ(req.QueryParam("a"), "%ZZ");
    EXPECT_EQ(req.QueryParam("b"), "%4");
    EXPECT_EQ(req.QueryParam("c"), "ok");
}

TEST(QueryParam, BadEscapeInAnotherKeyIsSkipped) {
    Request req;
    req.query = "%ZZ=1&x=2";
    EXPECT_EQ(req.QueryParam("x"), "2");
}

// --- Response ------------------------------------------------------------------------------

TEST(ResponseJson, RendersStatusBodyAndContentType) {
    const Response r = Response::Json(201, {{"id", "abc"}, {"estimatedCost", {{"credits", 8}}}});
    EXPECT_EQ(r.status, 201);
    EXPECT_EQ(HeaderOf(r, "Content-Type"), "application/json");
    EXPECT_EQ(json::parse(r.body), (json{{"id", "abc"}, {"estimatedCost", {{"credits", 8}}}}));
    EXPECT_THAT(r.body, Not(HasSubstr("\n")));  // compact
    EXPECT_FALSE(r.head_length.has_value());
}

TEST(ResponseJson, InvalidUtf8DoesNotThrow) {
    Response r;
    ASSERT_NO_THROW(r = Response::Json(200, {{"s", std::string("bad \xff utf8")}}));
    EXPECT_TRUE(json::parse(r.body).is_object());
}

TEST(ResponseNoContent, IsAnEmpty204) {
    const Response r = Response::NoContent();
    EXPECT_EQ(r.status, 204);
    EXPECT_TRUE(r.body.empty());
    EXPECT_EQ(HeaderOf(r, "Content-Type"), std::nullopt);
}

TEST(ResponseSetHeader, ReplacesCaseInsensitivelyOrAdds) {
    Response r = Response::Json(200, json::object());
    r.SetHeader("content-type", "text/plain");
    EXPECT_EQ(HeaderOf(r, "Content-Type"), "text/plain");
    r.SetHeader("X-Extra", "1");
    r.SetHeader("x-extra", "2");
    EXPECT_EQ(HeaderOf(r, "X-Extra"), "2");
    EXPECT_EQ(r.headers.size(), 2u);
}

TEST(ResponseError, BadRequestHasErrorDocUrlAndIssues) {
    const ApiError e = ApiError::InvalidRequest(
        "Validation of body failed",
        {Issue{"invalid_type", {"promptText"}, "Required"},
         Issue{"invalid_enum_value", {"referenceImages", "0", "tag"}, "Invalid tag"}});
    const Response r = Response::Error(e, "https://example.com/docs/errors");
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(HeaderOf(r, "Content-Type"), "application/json");
    const json body = json::parse(r.body);
    const json expected = {
        {"error", "Validation of body failed"},
        {"docUrl", "https://example.com/docs/errors"},
        {"issues",
         json::array({
             {{"code", "invalid_type"}, {"path", {"promptText"}}, {"message", "Required"}},
             {{"code", "invalid_enum_value"},
              {"path", {"referenceImages", "0", "tag"}},
              {"message", "Invalid tag"}},
         })},
    };
    EXPECT_EQ(body, expected);
    EXPECT_EQ(HeaderOf(r, "Retry-After"), std::nullopt);
}

TEST(ResponseError, BadRequestWithoutIssuesHasEmptyIssuesArray) {
    const Response r =
        Response::Error(ApiError::InvalidRequest("X-Service-Version must be 2024-11-06"), "d");
    const json body = json::parse(r.body);
    EXPECT_EQ(body.at("error"), "X-Service-Version must be 2024-11-06");
    EXPECT_EQ(body.at("docUrl"), "d");
    EXPECT_TRUE(body.at("issues").is_array());
    EXPECT_TRUE(body.at("issues").empty());
}

TEST(ResponseError, IssuePathWithEmptyPathIsAnEmptyArray) {
    const Response r =
        Response::Error(ApiError::InvalidRequest("bad", {Issue{"custom", {}, "Whole body"}}), "d");
    const json body = json::parse(r.body);
    EXPECT_TRUE(body.at("issues").at(0).at("path").is_array());
    EXPECT_TRUE(body.at("issues").at(0).at("path").empty());
}

TEST(ResponseError, InternalNeverCarriesTheMessage) {
    ApiError e = ApiError::Internal();
    e.message = "pqxx::broken_connection: password=hunter2 host=db.internal";
    e.issues = {Issue{"x", {"y"}, "secret issue"}};
    const Response r = Response::Error(e, "doc");
    EXPECT_EQ(r.status, 500);
    EXPECT_EQ(json::parse(r.body), (json{{"error", "Internal server error"}}));
    EXPECT_THAT(r.body, Not(HasSubstr("hunter2")));
    EXPECT_THAT(r.body, Not(HasSubstr("secret")));
}

TEST(ResponseError, OtherStatusesCarryOnlyTheError) {
    for (const auto& [code, status] :
         std::vector<std::pair<ErrorCode, int>>{{ErrorCode::kUnauthorized, 401},
                                                {ErrorCode::kForbidden, 403},
                                                {ErrorCode::kNotFound, 404},
                                                {ErrorCode::kConflict, 409},
                                                {ErrorCode::kPayloadTooLarge, 413}}) {
        ApiError e;
        e.code = code;
        e.message = "message \"quoted\" \\ \n";
        const Response r = Response::Error(e, "doc");
        EXPECT_EQ(r.status, status);
        EXPECT_EQ(json::parse(r.body), (json{{"error", "message \"quoted\" \\ \n"}})) << status;
        EXPECT_EQ(HeaderOf(r, "Retry-After"), std::nullopt);
        EXPECT_EQ(HeaderOf(r, "Allow"), std::nullopt);
        EXPECT_EQ(HeaderOf(r, "x-should-retry"), std::nullopt);
    }
}

TEST(ResponseError, RateLimitedHasRetryAfterAndShouldRetry) {
    ApiError e;
    e.code = ErrorCode::kRateLimited;
    e.message = "You have exceeded the daily generation limit";
    e.retry_after_seconds = 3600;
    const Response r = Response::Error(e, "doc");
    EXPECT_EQ(r.status, 429);
    EXPECT_EQ(HeaderOf(r, "Retry-After"), "3600");
    EXPECT_EQ(HeaderOf(r, "x-should-retry"), "true");
    EXPECT_EQ(json::parse(r.body).at("error"), e.message);
}

TEST(ResponseError, UnavailableHasRetryAfter) {
    const Response r = Response::Error(ApiError::Unavailable(), "doc");
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(HeaderOf(r, "Retry-After"), "1");
    EXPECT_EQ(HeaderOf(r, "x-should-retry"), std::nullopt);
    EXPECT_EQ(json::parse(r.body), (json{{"error", "Service temporarily unavailable"}}));
}

TEST(ResponseError, MethodNotAllowedHasAllow) {
    ApiError e;
    e.code = ErrorCode::kMethodNotAllowed;
    e.message = "Method not allowed";
    e.allow = {"GET", "HEAD", "DELETE"};
    const Response r = Response::Error(e, "doc");
    EXPECT_EQ(r.status, 405);
    EXPECT_EQ(HeaderOf(r, "Allow"), "GET, HEAD, DELETE");
    EXPECT_EQ(json::parse(r.body), (json{{"error", "Method not allowed"}}));
}

TEST(ResponseError, BodyIsAlwaysAnObjectWithAStringError) {
    for (int c = 0; c <= static_cast<int>(ErrorCode::kUnavailable); ++c) {
        ApiError e;
        e.code = static_cast<ErrorCode>(c);
        e.message = "m";
        const Response r = Response::Error(e, "doc");
        const json body = json::parse(r.body);
        ASSERT_TRUE(body.is_object()) << c;
        EXPECT_TRUE(body.at("error").is_string()) << c;
        EXPECT_EQ(r.status, HttpStatus(e.code));
        EXPECT_THAT(r.headers, Contains(Pair("Content-Type", "application/json")));
    }
}

}  // namespace
}  // namespace genhost::http
