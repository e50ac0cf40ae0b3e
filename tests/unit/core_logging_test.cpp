// Tests for genhost/core/logging.hpp: JsonEscape (quotes, backslashes, every control character)
// checked against a real JSON parser, and SetupLogging: json lines that parse as JSON, text
// lines, and an unknown level refused.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

#include "genhost/core/logging.hpp"

namespace genhost {
namespace {

using ::testing::HasSubstr;

std::string ParseBack(const std::string& escaped) {
    return nlohmann::json::parse("\"" + escaped + "\"").get<std::string>();
}

TEST(JsonEscape, LeavesPlainTextAlone) {
    EXPECT_EQ(JsonEscape(""), "");
    EXPECT_EQ(JsonEscape("hello world /v1/tasks"), "hello world /v1/tasks");
    EXPECT_EQ(JsonEscape("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");  // UTF-8 kept
    EXPECT_EQ(JsonEscape("\x7f"), "\x7f");
}

TEST(JsonEscape, InvalidUtf8BecomesReplacementCharacters) {
    // A path as a client may send it: the line must still be JSON, and valid UTF-8.
    const std::string hostile =
        "/v1/tasks/\xff\xfe\x80"
        "a\xc3"
        "b\xed\xa0\x80"
        "c\xc0\xaf";
    const std::string escaped = JsonEscape(hostile);
    const std::string back = ParseBack(escaped);  // throws on invalid UTF-8
    EXPECT_EQ(back.rfind("/v1/tasks/", 0), 0u);
    EXPECT_THAT(back, HasSubstr("\xef\xbf\xbd"));  // U+FFFD
    EXPECT_THAT(back, HasSubstr("a"));
    for (const char c : escaped) {
        EXPECT_LT(static_cast<unsigned char>(c), 0x80) << escaped;  // all replaced or escaped
    }
    // Each kind of bad sequence: a lone continuation byte, a truncated sequence, an overlong
    // form, a surrogate, past U+10FFFF.
    for (const std::string bad : {"\x80", "\xe2\x9c", "\xc0\x80", "\xe0\x80\x80", "\xed\xa0\x80",
                                  "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80"}) {
        EXPECT_THAT(JsonEscape(bad), HasSubstr("\\ufffd")) << ParseBack(JsonEscape(bad));
        EXPECT_NO_THROW(ParseBack(JsonEscape(bad)));
    }
    // Well-formed sequences of every length stay as they are.
    const std::string good = "\x7f\xc2\x80\xe0\xa0\x80\xed\x9f\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf";
    EXPECT_EQ(JsonEscape(good), good);
}

TEST(JsonEscape, EscapesQuotesAndBackslashes) {
    EXPECT_EQ(JsonEscape("\""), "\\\"");
    EXPECT_EQ(JsonEscape("\\"), "\\\\");
    EXPECT_EQ(JsonEscape(R"(say "hi" \o/)"), R"(say \"hi\" \\o/)");
    EXPECT_EQ(JsonEscape("\\\""), "\\\\\\\"");
}

TEST(JsonEscape, EscapesCommonControlCharacters) {
    EXPECT_EQ(JsonEscape("\n"), "\\n");
    EXPECT_EQ(JsonEscape("\r"), "\\r");
    EXPECT_EQ(JsonEscape("\t"), "\\t");
    EXPECT_EQ(JsonEscape("a\r\nb"), "a\\r\\nb");
}

TEST(JsonEscape, EscapesOtherControlCharactersAsUnicode) {
    EXPECT_EQ(JsonEscape(std::string_view("\0", 1)), "\\u0000");
    EXPECT_EQ(JsonEscape("\x01"), "\\u0001");
    EXPECT_EQ(JsonEscape("\b"), "\\u0008");
    EXPECT_EQ(JsonEscape("\f"), "\\u000c");
    EXPECT_EQ(JsonEscape("\x1b[31m"), "\\u001b[31m");
    EXPECT_EQ(JsonEscape("\x1f"), "\\u001f");
}

TEST(JsonEscape, NoRawControlCharacterSurvives) {
    std::string all;
    for (int c = 0; c < 0x20; ++c) all += static_cast<char>(c);
    const std::string escaped = JsonEscape(all);
    for (const char c : escaped) {
        EXPECT_GE(static_cast<unsigned char>(c), 0x20) << static_cast<int>(c);
    }
}

TEST(JsonEscape, RoundTripsEveryAsciiCharacterThroughAJsonParser) {
    std::string ascii;
    for (int c = 0; c < 0x80; ++c) ascii += static_cast<char>(c);
    EXPECT_EQ(ParseBack(JsonEscape(ascii)), ascii);
    const std::string tricky = "line1\nline2\t\"quoted\" C:\\path\\ \x02 end";
    EXPECT_EQ(ParseBack(JsonEscape(tricky)), tricky);
}

TEST(SetupLogging, RejectsUnknownLevel) {
    EXPECT_THROW(SetupLogging("loud", "json"), std::invalid_argument);
    EXPECT_THROW(SetupLogging("", "text"), std::invalid_argument);
}

TEST(SetupLogging, JsonLinesAreJson) {
    SetupLogging("info", "json");
    ::testing::internal::CaptureStdout();
    spdlog::info("he said \"hi\"\nthen left \\ {}", 42);
    spdlog::debug("below the level");
    spdlog::default_logger()->flush();
    const std::string out = ::testing::internal::GetCapturedStdout();
    std::istringstream lines(out);
    std::string line;
    int count = 0;
    while (std::getline(lines, line)) {
        if (line.empty()) continue;
        ++count;
        const auto j = nlohmann::json::parse(line);
        EXPECT_EQ(j.at("level"), "info");
        EXPECT_EQ(j.at("logger"), "genhost");
        EXPECT_EQ(j.at("msg"), "he said \"hi\"\nthen left \\ 42");
        EXPECT_THAT(j.at("ts").get<std::string>(),
                    ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{3}Z"));
    }
    EXPECT_EQ(count, 1) << out;
}

TEST(SetupLogging, AccessLinesAreWrittenVerbatimInJsonFormat) {
    SetupLogging("info", "json");
    ASSERT_NE(AccessLogger(), nullptr);
    ::testing::internal::CaptureStdout();
    AccessLogger()->info(R"({"method":"GET","status":200})");
    AccessLogger()->flush();
    const std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(out, "{\"method\":\"GET\",\"status\":200}\n");
}

TEST(SetupLogging, TextFormat) {
    SetupLogging("warn", "text");
    ::testing::internal::CaptureStdout();
    spdlog::info("hidden");
    spdlog::warn("visible");
    spdlog::default_logger()->flush();
    const std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_THAT(out, HasSubstr("warning visible"));
    EXPECT_THAT(out, ::testing::Not(HasSubstr("hidden")));
    EXPECT_THAT(out, ::testing::Not(HasSubstr("{\"")));
}

}  // namespace
}  // namespace genhost
