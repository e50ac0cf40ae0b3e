#include "genhost/http/multipart.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <utility>

namespace genhost::http {

namespace {

std::string_view Trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::string Lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// ParseParameters reads `; key=value` pairs (value a token or a quoted string with backslash
// escapes) after a media type or disposition type; keys come back lower case. nullopt when
// malformed.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseParameters(
    std::string_view s) {
    std::vector<std::pair<std::string, std::string>> out;
    while (true) {
        s = Trim(s);
        if (s.empty()) return out;
        if (s.front() != ';') return std::nullopt;
        s.remove_prefix(1);
        s = Trim(s);
        if (s.empty()) return out;  // a trailing ';' is tolerated
        const auto eq = s.find('=');
        if (eq == std::string_view::npos) return std::nullopt;
        std::string key = Lower(Trim(s.substr(0, eq)));
        if (key.empty()) return std::nullopt;
        s = Trim(s.substr(eq + 1));
        std::string value;
        if (!s.empty() && s.front() == '"') {
            std::size_t i = 1;
            bool closed = false;
            for (; i < s.size(); ++i) {
                if (s[i] == '\\' && i + 1 < s.size()) {
                    value.push_back(s[++i]);
                } else if (s[i] == '"') {
                    closed = true;
                    break;
                } else {
                    value.push_back(s[i]);
                }
            }
            if (!closed) return std::nullopt;
            s.remove_prefix(i + 1);
        } else {
            const auto semi = s.find(';');
            value = std::string(Trim(s.substr(0, semi)));
            s = semi == std::string_view::npos ? std::string_view() : s.substr(semi);
        }
        out.emplace_back(std::move(key), std::move(value));
    }
}

// IsBoundaryChar: RFC 2046's bchars.
bool IsBoundaryChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

// ParsePartHeaders reads a part's header block (lines without the final empty line).
std::optional<std::string> ParsePartHeaders(std::string_view block, PartHeaders& part) {
    part = PartHeaders{};
    bool disposition = false;
    while (!block.empty()) {
        const auto eol = block.find("\r\n");
        const std::string_view line = block.substr(0, eol);
        block = eol == std::string_view::npos ? std::string_view() : block.substr(eol + 2);
        if (line.empty() || line.front() == ' ' || line.front() == '\t') {
            return "Malformed multipart part header";
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) return "Malformed multipart part header";
        const std::string name = Lower(Trim(line.substr(0, colon)));
        const std::string_view value = Trim(line.substr(colon + 1));
        if (name == "content-disposition") {
            const auto semi = value.find(';');
            if (Lower(Trim(value.substr(0, semi))) != "form-data") {
                return "A multipart part is not form-data";
            }
            const auto params = ParseParameters(
                semi == std::string_view::npos ? std::string_view() : value.substr(semi));
            if (!params) return "Malformed multipart Content-Disposition header";
            disposition = true;
            for (const auto& [key, v] : *params) {
                if (key == "name") part.name = v;
                if (key == "filename") part.filename = v;
            }
        } else if (name == "content-type") {
            part.content_type = std::string(value);
        }
    }
    if (!disposition) return "A multipart part has no Content-Disposition header";
    if (part.name.empty()) return "A multipart part has no name";
    return std::nullopt;
}

}  // namespace

std::optional<std::string> MultipartBoundary(std::string_view content_type) {
    const auto semi = content_type.find(';');
    if (Lower(Trim(content_type.substr(0, semi))) != "multipart/form-data") return std::nullopt;
    if (semi == std::string_view::npos) return std::nullopt;
    const auto params = ParseParameters(content_type.substr(semi));
    if (!params) return std::nullopt;
    for (const auto& [key, value] : *params) {
        if (key != "boundary") continue;
        if (value.empty() || value.size() > 70 || value.back() == ' ') return std::nullopt;
        if (!std::all_of(value.begin(), value.end(), IsBoundaryChar)) return std::nullopt;
        return value;
    }
    return std::nullopt;
}

MultipartParser::MultipartParser(std::string boundary)
    : delimiter_("\r\n--" + std::move(boundary)), buffer_("\r\n") {
    // The CRLF in front lets a body that starts with its first delimiter (no preamble) match
    // the delimiter as it appears everywhere else.
}

std::size_t MultipartParser::FindDelimiter(std::string_view haystack) const {
    // Horspool keeps the search linear on adversarial bodies (long runs of "\r\n--").
    const std::boyer_moore_horspool_searcher searcher(delimiter_.begin(), delimiter_.end());
    const auto it = std::search(haystack.begin(), haystack.end(), searcher);
    return it == haystack.end() ? std::string_view::npos
                                : static_cast<std::size_t>(it - haystack.begin());
}

std::optional<std::string> MultipartParser::Fail(std::string message) {
    state_ = State::kFailed;
    error_ = std::move(message);
    return error_;
}

std::optional<std::string> MultipartParser::Feed(std::string_view input,
                                                 std::vector<Event>& events) {
    events.clear();
    if (state_ == State::kFailed) return error_;
    if (state_ == State::kEpilogue) return std::nullopt;
    buffer_.erase(0, consumed_);
    consumed_ = 0;
    buffer_.append(input);
    // Bytes that may be the start of a delimiter split across two chunks stay in the buffer.
    const std::size_t hold = delimiter_.size() - 1;
    for (;;) {
        const std::string_view rest = std::string_view(buffer_).substr(consumed_);
        switch (state_) {
            case State::kPreamble: {
                const auto at = FindDelimiter(rest);
                const std::size_t skip =
                    at == std::string_view::npos ? rest.size() - std::min(rest.size(), hold) : at;
                preamble_bytes_ += skip;
                consumed_ += skip;
                if (preamble_bytes_ > kMaxPreambleBytes) {
                    return Fail("The multipart body does not start with its boundary");
                }
                if (at == std::string_view::npos) return std::nullopt;
                consumed_ += delimiter_.size();
                state_ = State::kDelimiterTail;
                break;
            }
            case State::kDelimiterTail: {
                if (rest.size() < 2) return std::nullopt;
                if (rest.substr(0, 2) == "--") {
                    consumed_ += 2;
                    state_ = State::kEpilogue;
                    events.push_back(Event{Event::Kind::kEnd, {}, {}});
                    consumed_ = buffer_.size();
                    return std::nullopt;
                }
                // Transport padding (RFC 2046: spaces and tabs) may precede the CRLF.
                std::size_t i = 0;
                while (i < rest.size() && i <= 64 && (rest[i] == ' ' || rest[i] == '\t')) ++i;
                if (i > 64) return Fail("Malformed multipart delimiter");
                if (rest.size() < i + 2) return std::nullopt;
                if (rest.substr(i, 2) != "\r\n") return Fail("Malformed multipart delimiter");
                consumed_ += i + 2;
                state_ = State::kHeaders;
                break;
            }
            case State::kHeaders: {
                std::string_view block;
                std::size_t skip = 0;
                if (rest.substr(0, 2) == "\r\n") {
                    skip = 2;  // no header lines at all
                } else {
                    const auto end = rest.find("\r\n\r\n");
                    if (end == std::string_view::npos) {
                        if (rest.size() > kMaxPartHeaderBytes) {
                            return Fail("A multipart part header is too large");
                        }
                        return std::nullopt;
                    }
                    block = rest.substr(0, end);
                    skip = end + 4;
                }
                if (block.size() > kMaxPartHeaderBytes) {
                    return Fail("A multipart part header is too large");
                }
                if (++parts_ > kMaxParts) return Fail("The multipart body has too many parts");
                Event begin{Event::Kind::kPartBegin, {}, {}};
                if (auto error = ParsePartHeaders(block, begin.part)) return Fail(*error);
                events.push_back(std::move(begin));
                consumed_ += skip;
                state_ = State::kBody;
                break;
            }
            case State::kBody: {
                const auto at = FindDelimiter(rest);
                if (at == std::string_view::npos) {
                    const std::size_t n = rest.size() - std::min(rest.size(), hold);
                    if (n > 0) events.push_back(Event{Event::Kind::kData, {}, rest.substr(0, n)});
                    consumed_ += n;
                    return std::nullopt;
                }
                if (at > 0) events.push_back(Event{Event::Kind::kData, {}, rest.substr(0, at)});
                events.push_back(Event{Event::Kind::kPartEnd, {}, {}});
                consumed_ += at + delimiter_.size();
                state_ = State::kDelimiterTail;
                break;
            }
            case State::kEpilogue:
                consumed_ = buffer_.size();
                return std::nullopt;
            case State::kFailed:
                return error_;
        }
    }
}

std::optional<std::string> MultipartParser::Finish() const {
    if (state_ == State::kFailed) return error_;
    if (state_ != State::kEpilogue) return "The multipart body ends before its closing boundary";
    return std::nullopt;
}

}  // namespace genhost::http
