// Tests for genhost/http/multipart.hpp: the boundary of a Content-Type, and the incremental
// multipart/form-data parser fed whole, byte by byte and split at every position (the same
// parts and bytes must come out), with preamble, epilogue, transport padding, binary data that
// contains pieces of the delimiter, quoted parameters, and every malformed case and limit.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "genhost/http/multipart.hpp"

namespace genhost::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

constexpr char kBoundary[] = "----formdata-undici-0123456789";

// Part is one parsed part: its headers and all its bytes.
struct Part {
    PartHeaders headers;
    std::string data;
    bool ended = false;
};

struct Parsed {
    std::vector<Part> parts;
    bool end = false;
    std::optional<std::string> error;
};

// Parse feeds `body` in pieces of `piece` bytes (0: whole) and collects the parts.
Parsed Parse(const std::string& body, std::size_t piece = 0,
             const std::string& boundary = kBoundary) {
    Parsed out;
    MultipartParser parser(boundary);
    std::vector<MultipartParser::Event> events;
    const std::size_t step = piece == 0 ? body.size() : piece;
    for (std::size_t at = 0; at < body.size() && !out.error; at += step) {
        out.error = parser.Feed(std::string_view(body).substr(at, step), events);
        for (const auto& e : events) {
            switch (e.kind) {
                case MultipartParser::Event::Kind::kPartBegin:
                    out.parts.push_back(Part{e.part, "", false});
                    break;
                case MultipartParser::Event::Kind::kData:
                    out.parts.back().data.append(e.data);
                    break;
                case MultipartParser::Event::Kind::kPartEnd:
                    out.parts.back().ended = true;
                    break;
                case MultipartParser::Event::Kind::kEnd:
                    out.end = true;
                    break;
            }
        }
    }
    if (!out.error) out.error = parser.Finish();
    return out;
}

std::string Delim() { return std::string("--") + kBoundary; }

// Binary content with CR, LF, NUL and pieces of the delimiter that are not the delimiter.
std::string Binary() {
    std::string s = "\x89PNG\r\n\x1a\n";
    s += std::string("\0\r\n--", 5);
    s += "\r\n--" + std::string(kBoundary).substr(0, 10);
    s += "\r\n-";
    for (int i = 0; i < 300; ++i) s.push_back(static_cast<char>(i * 7));
    s += "\r\n";
    return s;
}

// Form builds a body like undici's FormData: fields, then the file.
std::string Form(const std::string& file) {
    std::string b;
    b += Delim() + "\r\nContent-Disposition: form-data; name=\"policy\"\r\n\r\nPOLICY\r\n";
    b += Delim() + "\r\nContent-Disposition: form-data; name=\"signature\"\r\n\r\nSIG\r\n";
    b += Delim() + "\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{}\r\n";
    b += Delim() +
         "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"pic.png\"\r\n"
         "Content-Type: image/png\r\n\r\n";
    b += file + "\r\n" + Delim() + "--\r\n";
    return b;
}

void ExpectForm(const Parsed& p, const std::string& file) {
    ASSERT_EQ(p.error, std::nullopt);
    EXPECT_TRUE(p.end);
    ASSERT_EQ(p.parts.size(), 4u);
    EXPECT_EQ(p.parts[0].headers.name, "policy");
    EXPECT_EQ(p.parts[0].data, "POLICY");
    EXPECT_EQ(p.parts[0].headers.filename, std::nullopt);
    EXPECT_EQ(p.parts[1].headers.name, "signature");
    EXPECT_EQ(p.parts[1].data, "SIG");
    EXPECT_EQ(p.parts[2].data, "{}");
    EXPECT_EQ(p.parts[3].headers.name, "file");
    EXPECT_THAT(p.parts[3].headers.filename, Optional(std::string("pic.png")));
    EXPECT_EQ(p.parts[3].headers.content_type, "image/png");
    EXPECT_EQ(p.parts[3].data, file);
    for (const auto& part : p.parts) EXPECT_TRUE(part.ended);
}

TEST(MultipartBoundary, ReadsTokenAndQuotedBoundaries) {
    EXPECT_THAT(MultipartBoundary("multipart/form-data; boundary=abc"),
                Optional(std::string("abc")));
    EXPECT_THAT(MultipartBoundary("Multipart/Form-Data;BOUNDARY=\"a b:c\""),
                Optional(std::string("a b:c")));
    EXPECT_THAT(MultipartBoundary("multipart/form-data; charset=utf-8; boundary=x-1"),
                Optional(std::string("x-1")));
    EXPECT_THAT(MultipartBoundary(std::string("multipart/form-data; boundary=") + kBoundary),
                Optional(std::string(kBoundary)));
}

TEST(MultipartBoundary, RefusesOtherTypesAndBadBoundaries) {
    EXPECT_EQ(MultipartBoundary("application/json"), std::nullopt);
    EXPECT_EQ(MultipartBoundary("multipart/mixed; boundary=abc"), std::nullopt);
    EXPECT_EQ(MultipartBoundary("multipart/form-data"), std::nullopt);
    EXPECT_EQ(MultipartBoundary("multipart/form-data; boundary="), std::nullopt);
    EXPECT_EQ(MultipartBoundary("multipart/form-data; boundary=" + std::string(71, 'a')),
              std::nullopt);
    EXPECT_THAT(MultipartBoundary("multipart/form-data; boundary=" + std::string(70, 'a')),
                Optional(std::string(70, 'a')));
    EXPECT_EQ(MultipartBoundary("multipart/form-data; boundary=a\"b"), std::nullopt);
    EXPECT_EQ(MultipartBoundary("multipart/form-data; boundary=\"ends in space \""), std::nullopt);
    EXPECT_EQ(MultipartBoundary("multipart/form-data; boundary=\"unterminated"), std::nullopt);
}

TEST(MultipartParser, ParsesAWholeForm) { ExpectForm(Parse(Form(Binary())), Binary()); }

TEST(MultipartParser, GivesTheSameResultByteByByte) {
    ExpectForm(Parse(Form(Binary()), 1), Binary());
}

TEST(MultipartParser, GivesTheSameResultSplitAtEveryPosition) {
    const std::string body = Form(Binary());
    for (std::size_t split = 1; split < body.size(); ++split) {
        Parsed out;
        MultipartParser parser(kBoundary);
        std::vector<MultipartParser::Event> events;
        std::string file;
        int parts = 0;
        for (const auto piece :
             {std::string_view(body).substr(0, split), std::string_view(body).substr(split)}) {
            ASSERT_EQ(parser.Feed(piece, events), std::nullopt) << "split " << split;
            for (const auto& e : events) {
                if (e.kind == MultipartParser::Event::Kind::kPartBegin) ++parts;
                if (e.kind == MultipartParser::Event::Kind::kData && parts == 4) {
                    file.append(e.data);
                }
            }
        }
        EXPECT_EQ(parser.Finish(), std::nullopt) << "split " << split;
        EXPECT_EQ(parts, 4) << "split " << split;
        EXPECT_EQ(file, Binary()) << "split " << split;
    }
}

TEST(MultipartParser, StreamsALargePartInBoundedPieces) {
    std::string big(3 * 1024 * 1024, 'x');
    for (std::size_t i = 0; i < big.size(); i += 4097) big[i] = '\r';
    const std::string body = Form(big);
    MultipartParser parser(kBoundary);
    std::vector<MultipartParser::Event> events;
    std::size_t file_bytes = 0;
    std::size_t largest = 0;
    for (std::size_t at = 0; at < body.size(); at += 65536) {
        ASSERT_EQ(parser.Feed(std::string_view(body).substr(at, 65536), events), std::nullopt);
        for (const auto& e : events) {
            if (e.kind == MultipartParser::Event::Kind::kData) {
                largest = std::max(largest, e.data.size());
                file_bytes += e.data.size();
            }
        }
    }
    EXPECT_EQ(parser.Finish(), std::nullopt);
    EXPECT_EQ(file_bytes, big.size() + 6 + 3 + 2);  // plus the three small fields
    EXPECT_LE(largest, 65536u + 128u);
}

TEST(MultipartParser, SkipsPreambleEpilogueAndTransportPadding) {
    std::string b = "This is a preamble.\r\n";
    b += Delim() + " \t\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n";
    b += Delim() + "\r\ncontent-disposition: FORM-DATA;name=b\r\nX-Other: y\r\n\r\n2\r\n";
    b += Delim() + "--\r\nThis is an epilogue with " + Delim() + " in it.";
    const auto p = Parse(b);
    ASSERT_EQ(p.error, std::nullopt);
    ASSERT_EQ(p.parts.size(), 2u);
    EXPECT_EQ(p.parts[0].data, "1");
    EXPECT_EQ(p.parts[1].headers.name, "b");
    EXPECT_EQ(p.parts[1].data, "2");
}

TEST(MultipartParser, ReadsQuotedParameters) {
    std::string b = Delim() +
                    "\r\nContent-Disposition: form-data; name=\"file\"; "
                    "filename=\"a \\\"quoted\\\"; name.png\"\r\n\r\nX\r\n" +
                    Delim() + "--";
    const auto p = Parse(b);
    ASSERT_EQ(p.error, std::nullopt);
    ASSERT_EQ(p.parts.size(), 1u);
    EXPECT_EQ(p.parts[0].headers.name, "file");
    EXPECT_THAT(p.parts[0].headers.filename, Optional(std::string("a \"quoted\"; name.png")));
    EXPECT_EQ(p.parts[0].headers.content_type, "");
}

TEST(MultipartParser, AcceptsEmptyParts) {
    const std::string b =
        Delim() + "\r\nContent-Disposition: form-data; name=\"e\"\r\n\r\n\r\n" + Delim() + "--\r\n";
    const auto p = Parse(b);
    ASSERT_EQ(p.error, std::nullopt);
    ASSERT_EQ(p.parts.size(), 1u);
    EXPECT_EQ(p.parts[0].data, "");
    EXPECT_TRUE(p.parts[0].ended);
}

TEST(MultipartParser, RefusesABodyWithoutClosingDelimiter) {
    std::string b = Form("abc");
    b.resize(b.size() - 4);  // cut "--\r\n"
    EXPECT_THAT(Parse(b).error, Optional(HasSubstr("ends before its closing boundary")));
    EXPECT_THAT(Parse("").error, Optional(HasSubstr("ends before")));
}

TEST(MultipartParser, RefusesABodyThatNeverStarts) {
    EXPECT_THAT(Parse(std::string(40000, 'a'), 1000).error,
                Optional(HasSubstr("does not start with its boundary")));
}

TEST(MultipartParser, RefusesMalformedDelimitersAndHeaders) {
    EXPECT_THAT(Parse(Delim() + "xyz\r\n").error,
                Optional(HasSubstr("Malformed multipart delimiter")));
    EXPECT_THAT(Parse(Delim() + "\r\nContent-Type: text/plain\r\n\r\nx\r\n" + Delim() + "--").error,
                Optional(HasSubstr("no Content-Disposition")));
    EXPECT_THAT(Parse(Delim() + "\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n" +
                      Delim() + "--")
                    .error,
                Optional(HasSubstr("not form-data")));
    EXPECT_THAT(
        Parse(Delim() + "\r\nContent-Disposition: form-data\r\n\r\nx\r\n" + Delim() + "--").error,
        Optional(HasSubstr("no name")));
    EXPECT_THAT(Parse(Delim() + "\r\nContent-Disposition: form-data; name=\"a\r\n\r\nx\r\n" +
                      Delim() + "--")
                    .error,
                Optional(HasSubstr("Malformed multipart Content-Disposition")));
    EXPECT_THAT(Parse(Delim() + "\r\nno colon here\r\n\r\nx\r\n" + Delim() + "--").error,
                Optional(HasSubstr("Malformed multipart part header")));
    // The whole delimiter inside a part, followed by something other than CRLF or "--".
    EXPECT_THAT(Parse(Delim() + "\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n" +
                      Delim() + "x\r\n")
                    .error,
                Optional(HasSubstr("Malformed multipart delimiter")));
}

TEST(MultipartParser, EnforcesItsLimits) {
    const std::string huge_header = Delim() + "\r\nContent-Disposition: form-data; name=\"a\"\r\n" +
                                    "X-Pad: " + std::string(9000, 'p') + "\r\n\r\nx\r\n" + Delim() +
                                    "--";
    EXPECT_THAT(Parse(huge_header).error, Optional(HasSubstr("header is too large")));
    EXPECT_THAT(Parse(huge_header, 100).error, Optional(HasSubstr("header is too large")));
    std::string many;
    for (std::size_t i = 0; i <= MultipartParser::kMaxParts; ++i) {
        many += Delim() + "\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nv\r\n";
    }
    many += Delim() + "--";
    EXPECT_THAT(Parse(many).error, Optional(HasSubstr("too many parts")));
}

TEST(MultipartParser, StaysFailedAfterAnError) {
    MultipartParser parser(kBoundary);
    std::vector<MultipartParser::Event> events;
    ASSERT_NE(parser.Feed(Delim() + "xyz\r\n", events), std::nullopt);
    EXPECT_NE(parser.Feed(Form("a"), events), std::nullopt);
    EXPECT_TRUE(events.empty());
    EXPECT_NE(parser.Finish(), std::nullopt);
}

}  // namespace
}  // namespace genhost::http
