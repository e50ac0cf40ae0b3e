// ParseRequestJson: how a request body becomes JSON, and the 400s it gives instead.
#include "genhost/validate/json_body.hpp"

#include <gtest/gtest.h>

namespace genhost::validate {
namespace {

TEST(ParseRequestJson, ParsesObjectsAndArrays) {
    const auto r = ParseRequestJson(R"({"a": [1, 2, {"b": null}]})", 64);
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)["a"][2]["b"], nullptr);
}

TEST(ParseRequestJson, RefusesNestingBeyondTheLimitBeforeParsing) {
    const std::string deep = std::string(65, '[') + std::string(65, ']');
    const auto r = ParseRequestJson(deep, 64);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidRequest);
    ASSERT_EQ(r.error().issues.size(), 1u);
    EXPECT_EQ(r.error().issues[0].code, "custom");
    EXPECT_TRUE(r.error().issues[0].path.empty());
    EXPECT_TRUE(ParseRequestJson(std::string(64, '[') + std::string(64, ']'), 64));
    // Brackets inside strings do not count.
    EXPECT_TRUE(ParseRequestJson("{\"s\": \"" + std::string(1000, '[') + "\"}", 64));
}

TEST(ParseRequestJson, RefusesInvalidJsonUtf8AndTrailingGarbage) {
    for (const std::string body : {"{", "{\"a\":}", "{} x", "{\"a\": \"\xff\"}", "", "nul"}) {
        const auto r = ParseRequestJson(body, 64);
        ASSERT_FALSE(r) << body;
        EXPECT_EQ(r.error().issues.size(), 1u);
    }
}

TEST(ParseRequestJson, MessagesStayShortAndValidUtf8WhateverTheBody) {
    // A long string ending in a control character: the parser's "last read" token is the whole
    // string; the message quotes only its start.
    const std::string body = "{\"a\": \"" + std::string(100000, 'x') + "\x01\"}";
    const auto r = ParseRequestJson(body, 64);
    ASSERT_FALSE(r);
    EXPECT_LT(r.error().issues[0].message.size(), 1000u);
    const auto bad = ParseRequestJson("{\"a\": \"\xc3\x28\xff\xfe\"}", 64);
    ASSERT_FALSE(bad);
    // error() returns a copy: keep it alive while iterating over its message.
    const ApiError error = bad.error();
    for (const unsigned char c : error.issues[0].message) EXPECT_NE(c, 0xff);
}

}  // namespace
}  // namespace genhost::validate
