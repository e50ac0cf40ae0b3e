// genhost/http/wire.hpp
//
// Provides ResponseHead: the status line and header block of a response, built in one string.
// It writes the bytes Beast's serializer writes for a `response<string_body>` built as the
// server used to build it (each of Response::headers `set` in turn, then X-Request-Id,
// `keep_alive`, and `prepare_payload`, or `content_length` for HEAD), without Beast's field
// container and its allocation per field (docs/performance.md, "Runs of 2026-11-23 21:20–21:55
// UTC"). The unit test compares the two byte for byte.
//
// What it decides:
// - A header set twice keeps its last value, in the last one's place (Beast's `set`).
// - Connection, Content-Length, Transfer-Encoding and X-Request-Id come only from the
//   arguments; a handler's own are dropped (no handler sets them).
// - A header whose name or value holds CR, LF or NUL is dropped rather than split a response.
// - 1xx, 204 and 304 carry no body: their Content-Length is 0 whatever the body held (Beast
//   threw instead).
#pragma once

#include "genhost/http/message.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace genhost::http {

// ResponseHead renders the head of `response` for an HTTP/`version` (10 or 11) request. With
// `head` (a HEAD request) Content-Length is `response.head_length`, or the body's size; the
// caller sends no body. BodySent says whether the caller sends `response.body` after the head.
std::string ResponseHead(const Response& response, unsigned version, bool keep_alive, bool head,
                         std::string_view request_id);
bool BodySent(const Response& response, bool head);

}  // namespace genhost::http
