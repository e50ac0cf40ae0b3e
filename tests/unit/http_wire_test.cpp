// Tests for genhost/http/wire.hpp: ResponseHead writes what Beast's serializer writes for the
// response the server used to build with Beast (statuses with and without a body, HEAD,
// HTTP/1.0 and 1.1 with and without keep-alive, headers set twice), and it never lets a header
// split the response.

#include <gtest/gtest.h>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <string>
#include <vector>

#include "genhost/http/wire.hpp"

namespace genhost::http {
namespace {

namespace bhttp = boost::beast::http;

// BeastWire is how the server wrote a response before ResponseHead: the whole message, or the
// head alone for HEAD.
std::string BeastWire(const Response& response, unsigned version, bool keep_alive, bool head,
                      const std::string& request_id) {
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(response.status), version};
    for (const auto& [k, v] : response.headers) res.set(k, v);
    res.set("X-Request-Id", request_id);
    res.keep_alive(keep_alive);
    if (head) {
        res.content_length(response.head_length.value_or(response.body.size()));
    } else {
        res.body() = response.body;
        res.prepare_payload();
    }
    bhttp::serializer<false, bhttp::string_body> sr(res);
    if (head) sr.split(true);
    std::string out;
    boost::system::error_code ec;
    while (head ? !sr.is_header_done() : !sr.is_done()) {
        sr.next(ec, [&](boost::system::error_code&, const auto& buffers) {
            std::size_t n = 0;
            for (const auto b : boost::beast::buffers_range_ref(buffers)) {
                out.append(static_cast<const char*>(b.data()), b.size());
                n += b.size();
            }
            sr.consume(n);
        });
        if (ec) break;
    }
    return out;
}

std::string OurWire(const Response& response, unsigned version, bool keep_alive, bool head,
                    const std::string& request_id) {
    std::string out = ResponseHead(response, version, keep_alive, head, request_id);
    if (BodySent(response, head)) out += response.body;
    return out;
}

Response Make(int status, std::vector<std::pair<std::string, std::string>> headers,
              std::string body) {
    Response r;
    r.status = status;
    r.headers = std::move(headers);
    r.body = std::move(body);
    return r;
}

TEST(ResponseHead, WritesWhatBeastWrote) {
    const std::vector<Response> responses = {
        Make(200, {{"Content-Type", "application/json"}}, R"({"id":"x"})"),
        Make(201, {{"Content-Type", "application/json"}, {"Location", "/v1/x"}}, "{}"),
        Make(204, {}, ""),
        Make(304, {{"ETag", "\"abc\""}}, ""),
        Make(400, {{"Content-Type", "application/json"}}, R"({"error":"bad"})"),
        Make(404, {{"Content-Type", "application/json"}}, R"({"error":"Task not found"})"),
        Make(405, {{"Allow", "GET, DELETE"}, {"Content-Type", "application/json"}}, "{}"),
        Make(429,
             {{"Content-Type", "application/json"},
              {"Retry-After", "30"},
              {"x-should-retry", "true"}},
             R"({"error":"slow down"})"),
        Make(503, {{"Retry-After", "1"}, {"content-type", "text/plain"}}, "down"),
        // Set twice: the last value, in the last one's place.
        Make(200,
             {{"Cache-Control", "no-store"},
              {"Content-Type", "image/png"},
              {"cache-control", "private"}},
             std::string(3000, 'p')),
        Make(500, {}, ""),
    };
    int compared = 0;
    for (const auto& r : responses) {
        for (const unsigned version : {10u, 11u}) {
            for (const bool keep_alive : {false, true}) {
                for (const bool head : {false, true}) {
                    EXPECT_EQ(OurWire(r, version, keep_alive, head, "req_123"),
                              BeastWire(r, version, keep_alive, head, "req_123"))
                        << r.status << " HTTP/" << version << " keep-alive " << keep_alive
                        << " head " << head;
                    ++compared;
                }
            }
        }
    }
    EXPECT_EQ(compared, 88);
}

TEST(ResponseHead, HeadAnnouncesTheLengthItWasGiven) {
    Response r = Make(200, {{"Content-Type", "image/png"}}, "");
    r.head_length = 191366;
    const std::string head = ResponseHead(r, 11, true, true, "r");
    EXPECT_EQ(head, BeastWire(r, 11, true, true, "r"));
    EXPECT_NE(head.find("\r\nContent-Length: 191366\r\n\r\n"), std::string::npos) << head;
    EXPECT_FALSE(BodySent(r, true));
    EXPECT_TRUE(BodySent(r, false));
}

TEST(ResponseHead, FramingComesOnlyFromTheArguments) {
    const Response r = Make(200,
                            {{"Content-Length", "999"},
                             {"Connection", "upgrade"},
                             {"Transfer-Encoding", "chunked"},
                             {"X-Request-Id", "theirs"}},
                            "abc");
    EXPECT_EQ(ResponseHead(r, 11, false, false, "ours"),
              "HTTP/1.1 200 OK\r\nX-Request-Id: ours\r\nConnection: close\r\n"
              "Content-Length: 3\r\n\r\n");
}

TEST(ResponseHead, AHeaderThatWouldSplitTheResponseIsDropped) {
    const Response r = Make(200,
                            {{"X-Ok", "1"},
                             {"X-Bad", "a\r\nSet-Cookie: x=1"},
                             {std::string("X-Nul\0", 6), "v"},
                             {"X-Lf", "a\nb"}},
                            "");
    EXPECT_EQ(ResponseHead(r, 11, true, false, "a\r\nb"),
              "HTTP/1.1 200 OK\r\nX-Ok: 1\r\nContent-Length: 0\r\n\r\n");
}

TEST(ResponseHead, BodilessStatusesSendNoBody) {
    const Response r = Make(204, {}, "stray");
    EXPECT_FALSE(BodySent(r, false));
    EXPECT_EQ(ResponseHead(r, 11, true, false, "i"),
              "HTTP/1.1 204 No Content\r\nX-Request-Id: i\r\nContent-Length: 0\r\n\r\n");
}

}  // namespace
}  // namespace genhost::http
