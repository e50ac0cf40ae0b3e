// ParseRequestJson: how a request body becomes JSON, and the 400s it gives instead.
#include "genhost/validate/json_body.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>

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

namespace genhost::validate {
namespace {

// The parser is Boost.JSON converted to nlohmann values: on every input of the fuzz corpus it
// must accept and refuse what nlohmann's own parser does, and give the same value.
TEST(ParseRequestJson, AgreesWithNlohmannOnTheFuzzCorpus) {
    int compared = 0;
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(GENHOST_SOURCE_DIR) + "/fuzz/corpus")) {
        std::ifstream in(entry.path(), std::ios::binary);
        const std::string body((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
        std::optional<nlohmann::json> expected;
        try {
            expected = nlohmann::json::parse(body);
        } catch (const nlohmann::json::exception&) {
        }
        const auto got = ParseRequestJson(body, 64);
        const bool too_deep =
            !got && got.error().issues[0].message.find("nesting") != std::string::npos;
        if (too_deep) continue;
        EXPECT_EQ(got.has_value(), expected.has_value()) << entry.path();
        if (got && expected) {
            EXPECT_EQ(*got, *expected) << entry.path();
        }
        ++compared;
    }
    EXPECT_GT(compared, 200);
}

TEST(ParseRequestJson, NumbersAndStringsAreReadAsNlohmannReadsThem) {
    const auto r =
        ParseRequestJson(R"({"u": 4294967295, "n": -1, "f": 5.0, "big": 18446744073709551615,
                                         "s": "caf\u00e9 \ud83d\ude00"})",
                         64);
    ASSERT_TRUE(r);
    EXPECT_TRUE((*r)["u"].is_number_unsigned());
    EXPECT_TRUE((*r)["n"].is_number_integer());
    EXPECT_TRUE((*r)["f"].is_number_float());
    EXPECT_EQ((*r)["big"].get<std::uint64_t>(), 18446744073709551615ull);
    EXPECT_EQ((*r)["s"], "caf\xc3\xa9 \xf0\x9f\x98\x80");
    EXPECT_TRUE(ParseRequestJson("\xEF\xBB\xBF{}", 64));       // a BOM is skipped
    EXPECT_FALSE(ParseRequestJson(R"({"s": "\ud800"})", 64));  // a lone surrogate is not text
    EXPECT_FALSE(ParseRequestJson(R"({"a": 1,})", 64));
    EXPECT_FALSE(ParseRequestJson("{} // comment", 64));
}

}  // namespace
}  // namespace genhost::validate
