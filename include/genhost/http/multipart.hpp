// genhost/http/multipart.hpp
//
// Provides MultipartParser, an incremental parser of `multipart/form-data` bodies (RFC 7578,
// with the delimiter rules of RFC 2046) for bodies read chunk by chunk: it never needs more than
// one chunk plus a part's header block in memory, so a file part of any size streams through.
// Also MultipartBoundary, which takes the boundary out of a Content-Type header.
//
// Limits: a part's header block is at most kMaxPartHeaderBytes, a body at most kMaxParts parts,
// the preamble before the first delimiter at most kMaxPreambleBytes; beyond them, and for any
// malformed input, Feed returns an error message (which is safe to show to the client).
//
// Not thread-safe: one parser per request.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::http {

// MultipartBoundary returns the `boundary` parameter of a `multipart/form-data` media type
// (1–70 characters, quoted or not); nullopt for another media type or a missing or invalid
// boundary.
std::optional<std::string> MultipartBoundary(std::string_view content_type);

// PartHeaders is what a part's header block says about it.
struct PartHeaders {
    std::string name;                     // Content-Disposition `name`
    std::optional<std::string> filename;  // Content-Disposition `filename`, if given
    std::string content_type;             // as sent; empty when the part has none
};

class MultipartParser {
  public:
    static constexpr std::size_t kMaxPartHeaderBytes = 8 * 1024;
    static constexpr std::size_t kMaxParts = 64;
    static constexpr std::size_t kMaxPreambleBytes = 16 * 1024;

    // Event is one step of the body. kPartBegin carries the part's headers; kData carries
    // `data`, a view into the parser's own buffer that stays valid until the next Feed; kEnd is
    // the closing delimiter.
    struct Event {
        enum class Kind { kPartBegin, kData, kPartEnd, kEnd } kind = Kind::kEnd;
        PartHeaders part;
        std::string_view data;
    };

    explicit MultipartParser(std::string boundary);
    MultipartParser(const MultipartParser&) = delete;
    MultipartParser& operator=(const MultipartParser&) = delete;

    // Feed parses the next `input` bytes and appends what they complete to `events` (cleared
    // first). Returns an error message for a malformed body or a passed limit; after an error
    // the parser stays failed.
    std::optional<std::string> Feed(std::string_view input, std::vector<Event>& events);

    // Finish is called at the end of the body; it reports an error unless the closing delimiter
    // was seen.
    std::optional<std::string> Finish() const;

    // Complete reports whether the closing delimiter has been seen (the rest is epilogue).
    bool Complete() const { return state_ == State::kEpilogue; }

  private:
    enum class State { kPreamble, kDelimiterTail, kHeaders, kBody, kEpilogue, kFailed };

    std::optional<std::string> Fail(std::string message);
    std::size_t FindDelimiter(std::string_view haystack) const;

    std::string delimiter_;  // CRLF "--" boundary
    std::string buffer_;     // bytes received and not yet consumed (from `consumed_` on)
    std::size_t consumed_ = 0;
    std::size_t preamble_bytes_ = 0;
    std::size_t parts_ = 0;
    State state_ = State::kPreamble;
    std::string error_;
};

}  // namespace genhost::http
