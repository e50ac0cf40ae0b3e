// Tests for genhost/core/utf8.hpp: well-formed and ill-formed UTF-8 (Unicode's table 3-7), cuts
// at character boundaries for every byte budget, and the nesting depth of JSON texts with
// brackets inside strings and escapes.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "genhost/core/utf8.hpp"

namespace genhost {
namespace {

TEST(Utf8, WellFormedSequences) {
    EXPECT_TRUE(IsValidUtf8(""));
    EXPECT_TRUE(IsValidUtf8("plain ascii"));
    EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"));
    EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));  // U+0000 is UTF-8; callers refuse it
    EXPECT_EQ(Utf8SequenceLength("\xc3\xa9"), 2u);
    EXPECT_EQ(Utf8SequenceLength("\xe2\x9c\x93"), 3u);
    EXPECT_EQ(Utf8SequenceLength("\xf0\x9f\x98\x80"), 4u);
    EXPECT_EQ(Utf8SequenceLength(""), 0u);
}

TEST(Utf8, IllFormedSequences) {
    EXPECT_FALSE(IsValidUtf8("\xff\xfe"));          // never in UTF-8
    EXPECT_FALSE(IsValidUtf8("\x80"));              // a lone continuation byte
    EXPECT_FALSE(IsValidUtf8("\xc3"));              // cut short
    EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
    EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));      // overlong, three bytes
    EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // a surrogate
    EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
    EXPECT_FALSE(IsValidUtf8("ok\xe2\x9c"));        // cut inside the last character
}

TEST(Utf8, PrefixNeverCutsACharacter) {
    const std::string text = "a\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80z";  // 1+2+3+4+1 bytes
    for (std::size_t budget = 0; budget <= text.size() + 2; ++budget) {
        const auto cut = Utf8Prefix(text, budget);
        EXPECT_LE(cut.size(), budget);
        EXPECT_TRUE(IsValidUtf8(cut)) << budget;
        EXPECT_EQ(text.compare(0, cut.size(), cut), 0);
        // Nothing more would fit: the next character would pass the budget.
        if (cut.size() < text.size()) {
            EXPECT_GT(cut.size() + Utf8SequenceLength(std::string_view(text).substr(cut.size())),
                      budget);
        }
        // And a serialiser takes it.
        EXPECT_NO_THROW((void)nlohmann::json(std::string(cut)).dump());
    }
    EXPECT_EQ(Utf8Prefix(text, 3), "a\xc3\xa9");
    EXPECT_EQ(Utf8Prefix(text, 5), "a\xc3\xa9");
    EXPECT_EQ(Utf8Prefix(text, 6), "a\xc3\xa9\xe2\x9c\x93");
}

TEST(JsonNesting, CountsBracketsOutsideStrings) {
    EXPECT_EQ(JsonNestingDepth("1"), 0u);
    EXPECT_EQ(JsonNestingDepth("{}"), 1u);
    EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": [[]]}], "c": {}})"), 5u);
    EXPECT_EQ(JsonNestingDepth(R"({"s": "[[[[{{{{"})"), 1u);
    EXPECT_EQ(JsonNestingDepth(R"({"s": "\"[[[", "t": [1]})"), 2u);
    EXPECT_EQ(JsonNestingDepth(R"(["\\", [[]]])"), 3u);
    EXPECT_EQ(JsonNestingDepth(std::string(50000, '[')), 50000u);
    EXPECT_EQ(JsonNestingDepth("]]]]"), 0u);
}

}  // namespace
}  // namespace genhost
