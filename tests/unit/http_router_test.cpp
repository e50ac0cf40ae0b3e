// Tests for genhost/http/router.hpp: literal and {param} segments, 404 for an unknown path
// whatever the method, 405 with the Allow list (HEAD wherever GET is) for a known path,
// parameter extraction, and paths that must not match (trailing slash, empty segments).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "genhost/http/router.hpp"

namespace genhost::http {
namespace {

namespace asio = boost::asio;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;
using Kind = Router::Match::Kind;

// Tagged is a handler answering 200 with `tag` as its body, so a test can tell which route ran.
Handler Tagged(std::string tag) {
    return [tag](Request&) -> asio::awaitable<Response> {
        Response r;
        r.body = tag;
        co_return r;
    };
}

// Invoke runs the matched handler to completion and returns its body.
std::string Invoke(const Router::Match& m) {
    if (m.handler == nullptr) return "<no handler>";
    asio::io_context io;
    Request req;
    req.params = m.params;
    auto fut = asio::co_spawn(io, (*m.handler)(req), asio::use_future);
    io.run();
    return fut.get().body;
}

class RouterTest : public ::testing::Test {
  protected:
    void SetUp() override {
        router_.Add("GET", "/healthz", Tagged("healthz"));
        router_.Add("POST", "/v1/text_to_image", Tagged("t2i"));
        router_.Add("GET", "/v1/tasks/{id}", Tagged("get-task"));
        router_.Add("DELETE", "/v1/tasks/{id}", Tagged("delete-task"));
        router_.Add("GET", "/outputs/{task}/{name}", Tagged("output"));
        router_.Add("GET", "/", Tagged("root"));
    }
    Router router_;
};

TEST_F(RouterTest, MatchesLiteralRoute) {
    const auto m = router_.Find("GET", "/healthz");
    ASSERT_EQ(m.kind, Kind::kFound);
    EXPECT_EQ(m.pattern, "/healthz");
    EXPECT_THAT(m.params, IsEmpty());
    EXPECT_EQ(Invoke(m), "healthz");
}

TEST_F(RouterTest, MatchesRootRoute) {
    const auto m = router_.Find("GET", "/");
    ASSERT_EQ(m.kind, Kind::kFound);
    EXPECT_EQ(Invoke(m), "root");
}

TEST_F(RouterTest, ExtractsOneParameter) {
    const auto m = router_.Find("GET", "/v1/tasks/0f8b1c2e-1111-4222-8333-444455556666");
    ASSERT_EQ(m.kind, Kind::kFound);
    EXPECT_EQ(m.pattern, "/v1/tasks/{id}");
    EXPECT_THAT(m.params, ElementsAre(Pair("id", "0f8b1c2e-1111-4222-8333-444455556666")));
    EXPECT_EQ(Invoke(m), "get-task");
}

TEST_F(RouterTest, ExtractsSeveralParameters) {
    const auto m = router_.Find("GET", "/outputs/task-1/0.png");
    ASSERT_EQ(m.kind, Kind::kFound);
    EXPECT_EQ(m.pattern, "/outputs/{task}/{name}");
    EXPECT_THAT(m.params, UnorderedElementsAre(Pair("task", "task-1"), Pair("name", "0.png")));
    EXPECT_EQ(Invoke(m), "output");
}

TEST_F(RouterTest, ChoosesTheHandlerByMethod) {
    const auto get = router_.Find("GET", "/v1/tasks/abc");
    const auto del = router_.Find("DELETE", "/v1/tasks/abc");
    ASSERT_EQ(get.kind, Kind::kFound);
    ASSERT_EQ(del.kind, Kind::kFound);
    EXPECT_EQ(Invoke(get), "get-task");
    EXPECT_EQ(Invoke(del), "delete-task");
    EXPECT_THAT(del.params, ElementsAre(Pair("id", "abc")));
}

TEST_F(RouterTest, HeadRunsTheGetHandler) {
    const auto m = router_.Find("HEAD", "/v1/tasks/abc");
    ASSERT_EQ(m.kind, Kind::kFound);
    EXPECT_EQ(Invoke(m), "get-task");
    EXPECT_THAT(m.params, ElementsAre(Pair("id", "abc")));
}

TEST_F(RouterTest, UnknownPathIsNotFoundForEveryMethod) {
    for (const char* method : {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
        const auto m = router_.Find(method, "/v1/nothing");
        EXPECT_EQ(m.kind, Kind::kNotFound) << method;
        EXPECT_EQ(m.handler, nullptr);
        EXPECT_THAT(m.allow, IsEmpty());
    }
}

TEST_F(RouterTest, WrongMethodIsMethodNotAllowedWithAllow) {
    const auto m = router_.Find("POST", "/v1/tasks/abc");
    ASSERT_EQ(m.kind, Kind::kMethodNotAllowed);
    EXPECT_EQ(m.handler, nullptr);
    EXPECT_THAT(m.allow, UnorderedElementsAre("GET", "HEAD", "DELETE"));
    EXPECT_EQ(m.pattern, "/v1/tasks/{id}");  // still known, for the metrics label
}

TEST_F(RouterTest, AllowListsHeadOnlyWhereGetIs) {
    const auto post_only = router_.Find("GET", "/v1/text_to_image");
    ASSERT_EQ(post_only.kind, Kind::kMethodNotAllowed);
    EXPECT_THAT(post_only.allow, ElementsAre("POST"));

    const auto head = router_.Find("HEAD", "/v1/text_to_image");
    ASSERT_EQ(head.kind, Kind::kMethodNotAllowed);
    EXPECT_THAT(head.allow, ElementsAre("POST"));

    const auto get_only = router_.Find("PUT", "/healthz");
    ASSERT_EQ(get_only.kind, Kind::kMethodNotAllowed);
    EXPECT_THAT(get_only.allow, ElementsAre("GET", "HEAD"));
}

TEST_F(RouterTest, MethodsAreCaseSensitive) {
    const auto m = router_.Find("get", "/healthz");
    EXPECT_EQ(m.kind, Kind::kMethodNotAllowed);
}

TEST_F(RouterTest, PathsAreCaseSensitive) {
    EXPECT_EQ(router_.Find("GET", "/HEALTHZ").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "/V1/tasks/abc").kind, Kind::kNotFound);
}

TEST_F(RouterTest, TrailingSlashDoesNotMatch) {
    EXPECT_EQ(router_.Find("GET", "/healthz/").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("POST", "/v1/text_to_image/").kind, Kind::kNotFound);
    // An empty last segment is not a parameter value.
    EXPECT_EQ(router_.Find("GET", "/v1/tasks/").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "/v1/tasks/abc/").kind, Kind::kNotFound);
}

TEST_F(RouterTest, EmptySegmentsDoNotMatch) {
    EXPECT_EQ(router_.Find("GET", "//healthz").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "/v1//tasks/abc").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "/v1/tasks//abc").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "/outputs//0.png").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "/outputs/t//").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "//").kind, Kind::kNotFound);
}

TEST_F(RouterTest, ExtraOrMissingSegmentsDoNotMatch) {
    EXPECT_EQ(router_.Find("GET", "/v1/tasks").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "/v1/tasks/abc/def").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "/outputs/t").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "/healthz/extra").kind, Kind::kNotFound);
}

TEST_F(RouterTest, PathsWithoutLeadingSlashNeverMatch) {
    EXPECT_EQ(router_.Find("GET", "").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "healthz").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "*").kind, Kind::kNotFound);
    EXPECT_EQ(router_.Find("GET", "http://host/healthz").kind, Kind::kNotFound);
}

TEST_F(RouterTest, ParameterTakesTheWholeSegmentVerbatim) {
    const auto m = router_.Find("GET", "/v1/tasks/a%2Fb.c-d_e~f");
    ASSERT_EQ(m.kind, Kind::kFound);
    EXPECT_THAT(m.params, ElementsAre(Pair("id", "a%2Fb.c-d_e~f")));
}

TEST(Router, PathsUpToSixteenSegmentsMatchAndLongerOnesAreNotFound) {
    std::string sixteen;
    for (int i = 0; i < 16; ++i) sixteen += "/s" + std::to_string(i);
    Router router;
    router.Add("GET", sixteen, Tagged("deep"));
    const auto m = router.Find("GET", sixteen);
    ASSERT_EQ(m.kind, Kind::kFound);
    EXPECT_EQ(Invoke(m), "deep");
    EXPECT_EQ(router.Find("GET", sixteen + "/s16").kind, Kind::kNotFound);
    EXPECT_EQ(router.Find("POST", sixteen + "/s16").kind, Kind::kNotFound);
    std::string many;
    for (int i = 0; i < 1000; ++i) many += "/x";
    EXPECT_EQ(router.Find("GET", many).kind, Kind::kNotFound);
    EXPECT_THROW(router.Add("GET", sixteen + "/s16", Tagged("too deep")), std::invalid_argument);
}

TEST(Router, RejectsPatternsThatAreNotAbsolutePaths) {
    Router router;
    EXPECT_THROW(router.Add("GET", "healthz", Tagged("x")), std::invalid_argument);
    EXPECT_THROW(router.Add("GET", "", Tagged("x")), std::invalid_argument);
}

TEST(Router, EmptyRouterFindsNothing) {
    const Router router;
    EXPECT_EQ(router.Find("GET", "/").kind, Kind::kNotFound);
    EXPECT_EQ(router.Find("GET", "/anything").kind, Kind::kNotFound);
}

TEST(Router, FirstRegisteredRouteWinsOnOverlap) {
    Router router;
    router.Add("GET", "/v1/tasks/count", Tagged("literal"));
    router.Add("GET", "/v1/tasks/{id}", Tagged("param"));
    const auto literal = router.Find("GET", "/v1/tasks/count");
    ASSERT_EQ(literal.kind, Kind::kFound);
    EXPECT_EQ(Invoke(literal), "literal");
    EXPECT_EQ(literal.pattern, "/v1/tasks/count");
    EXPECT_THAT(literal.params, IsEmpty());

    const auto param = router.Find("GET", "/v1/tasks/other");
    ASSERT_EQ(param.kind, Kind::kFound);
    EXPECT_EQ(Invoke(param), "param");
    EXPECT_EQ(param.pattern, "/v1/tasks/{id}");
}

TEST(Router, AllowMergesOverlappingPatternsWithoutDuplicates) {
    Router router;
    router.Add("GET", "/a/{x}", Tagged("1"));
    router.Add("GET", "/a/b", Tagged("2"));
    router.Add("POST", "/a/b", Tagged("3"));
    const auto m = router.Find("DELETE", "/a/b");
    ASSERT_EQ(m.kind, Kind::kMethodNotAllowed);
    EXPECT_THAT(m.allow, UnorderedElementsAre("GET", "HEAD", "POST"));
}

TEST(Router, ExplicitHeadRouteIsAllowedOnceInEitherOrder) {
    for (const bool head_first : {false, true}) {
        Router router;
        if (head_first) router.Add("HEAD", "/x", Tagged("head"));
        router.Add("GET", "/x", Tagged("get"));
        if (!head_first) router.Add("HEAD", "/x", Tagged("head"));
        const auto m = router.Find("POST", "/x");
        ASSERT_EQ(m.kind, Kind::kMethodNotAllowed);
        EXPECT_EQ(std::count(m.allow.begin(), m.allow.end(), "HEAD"), 1)
            << "head_first=" << head_first << " " << ::testing::PrintToString(m.allow);
    }
}

TEST(Router, ParametersDoNotLeakFromOtherRoutes) {
    Router router;
    router.Add("DELETE", "/r/{a}", Tagged("del"));
    router.Add("GET", "/r/{b}", Tagged("get"));
    const auto m = router.Find("GET", "/r/value");
    ASSERT_EQ(m.kind, Kind::kFound);
    EXPECT_THAT(m.params, ElementsAre(Pair("b", "value")));
}

}  // namespace
}  // namespace genhost::http
