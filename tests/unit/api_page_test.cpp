// Tests for genhost/api/page.hpp: `limit` and `cursor` as every list endpoint reads them, the
// opaque keyset cursor, and the `{data, hasMore, nextCursor}` answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "genhost/api/page.hpp"

namespace genhost::api {
namespace {

using ::testing::HasSubstr;

http::Request WithQuery(std::string query) {
    http::Request req;
    req.query = std::move(query);
    return req;
}

// IssueAt returns the message of the one issue a failed parse has, checking its path.
std::string IssueAt(const Result<PageQuery>& r, const std::string& field) {
    EXPECT_FALSE(r.has_value());
    if (r.has_value() || r.error().issues.size() != 1) return "";
    EXPECT_EQ(r.error().issues[0].path, std::vector<std::string>{field});
    return r.error().issues[0].message;
}

TEST(PageQuery, DefaultsAndBounds) {
    auto r = ParsePageQuery(WithQuery(""));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->limit, 50);
    EXPECT_FALSE(r->after.has_value());
    EXPECT_EQ(ParsePageQuery(WithQuery("limit=1"))->limit, 1);
    EXPECT_EQ(ParsePageQuery(WithQuery("limit=100"))->limit, 100);
}

TEST(PageQuery, EveryBadLimitAndCursorIsAnIssueAtItsName) {
    EXPECT_THAT(IssueAt(ParsePageQuery(WithQuery("limit=0")), "limit"),
                HasSubstr("greater than or equal to 1"));
    EXPECT_THAT(IssueAt(ParsePageQuery(WithQuery("limit=101")), "limit"),
                HasSubstr("less than or equal to 100"));
    EXPECT_THAT(IssueAt(ParsePageQuery(WithQuery("limit=99999999999999999999")), "limit"),
                HasSubstr("less than or equal to 100"));
    EXPECT_THAT(IssueAt(ParsePageQuery(WithQuery("limit=5x")), "limit"),
                HasSubstr("Expected integer"));
    EXPECT_THAT(IssueAt(ParsePageQuery(WithQuery("cursor=")), "cursor"),
                HasSubstr("at least 1 character"));
    EXPECT_THAT(IssueAt(ParsePageQuery(WithQuery("cursor=" + std::string(1001, 'a'))), "cursor"),
                HasSubstr("at most 1000 character"));
    EXPECT_THAT(IssueAt(ParsePageQuery(WithQuery("cursor=zzz")), "cursor"),
                HasSubstr("Invalid cursor"));
    // A cursor of the right encoding whose id is not a uuid is no cursor either.
    EXPECT_THAT(
        IssueAt(ParsePageQuery(WithQuery("cursor=" + EncodeCursor({SysTime{}, "x"}))), "cursor"),
        HasSubstr("Invalid cursor"));
    // Both at once: two issues.
    const auto both = ParsePageQuery(WithQuery("limit=0&cursor=zzz"));
    ASSERT_FALSE(both.has_value());
    EXPECT_EQ(both.error().issues.size(), 2u);
}

TEST(PageQuery, ACursorComesBackAsItsKeyset) {
    const store::Keyset keyset{SysTime{std::chrono::microseconds{1795842594123456}},
                               "01a21b68-ef45-43cb-9551-24c00bbbd4b4"};
    const std::string cursor = EncodeCursor(keyset);
    EXPECT_LE(cursor.size(), 1000u);
    const auto r = ParsePageQuery(WithQuery("limit=7&cursor=" + cursor));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->limit, 7);
    ASSERT_TRUE(r->after.has_value());
    EXPECT_EQ(r->after->at, keyset.at);
    EXPECT_EQ(r->after->id, keyset.id);
}

TEST(PageJson, HasMoreAndNextCursorAgree) {
    const auto last = PageJson(nlohmann::json::array({1, 2}), std::nullopt);
    EXPECT_EQ(last,
              nlohmann::json({{"data", {1, 2}}, {"hasMore", false}, {"nextCursor", nullptr}}));
    const store::Keyset keyset{SysTime{std::chrono::microseconds{5}},
                               "01a21b68-ef45-43cb-9551-24c00bbbd4b4"};
    const auto more = PageJson(nlohmann::json::array({1}), keyset);
    EXPECT_EQ(more["hasMore"], true);
    EXPECT_EQ(more["nextCursor"], EncodeCursor(keyset));
}

}  // namespace
}  // namespace genhost::api
