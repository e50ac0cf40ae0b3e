// genhost/http/body_reader.hpp
//
// Provides BodyReader, through which the handler of a streaming route (Router::AddStreaming)
// reads its request body chunk by chunk instead of receiving it whole, so a large upload never
// sits in memory. The server has read and checked the header (and the announced Content-Length
// against the route's limit) before the handler runs; the body bytes stay in the socket until the
// handler asks for them. A client that sent `Expect: 100-continue` gets its `100 Continue` on the
// first Read, so a handler that refuses the request before reading never makes the client send
// the body.
//
// A BodyReader belongs to one request and one coroutine; it is only valid during the handler.
#pragma once

#include "genhost/core/error.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace genhost::http {

class BodyReader {
  public:
    virtual ~BodyReader() = default;

    // ContentLength returns the announced body length; nullopt for a chunked body.
    virtual std::optional<std::uint64_t> ContentLength() const = 0;

    // Read waits for the next bytes of the body, copies up to `buffer.size()` of them into
    // `buffer` and returns how many; 0 means the body is complete. Errors (after one, every later
    // Read returns it again): kPayloadTooLarge once the body passes the route's limit,
    // kInvalidRequest for a malformed or truncated body, a read timeout or a lost connection.
    virtual boost::asio::awaitable<Result<std::size_t>> Read(std::span<char> buffer) = 0;

    // Done reports whether the whole body has been read. When a handler answers before that,
    // the server closes the connection after its response (the rest of the body is discarded).
    virtual bool Done() const = 0;
};

}  // namespace genhost::http
