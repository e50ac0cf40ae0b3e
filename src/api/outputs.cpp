// GET and HEAD /outputs/{task}/{name}: the signed output URLs genhost hands out.
#include "genhost/api/uploads_routes.hpp"
#include "handlers.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <charconv>

namespace genhost::api {

namespace asio = boost::asio;

namespace {

struct ByteRange {
    std::uint64_t first = 0;
    std::uint64_t last = 0;  // inclusive
};

// ParseRange reads a single `bytes=` range against a body of `size` bytes. Returns nullopt for a
// header to ignore (malformed or several ranges: the whole body is sent), and sets
// `unsatisfiable` when the range lies outside the body.
std::optional<ByteRange> ParseRange(std::string_view header, std::uint64_t size,
                                    bool& unsatisfiable) {
    unsatisfiable = false;
    constexpr std::string_view kPrefix = "bytes=";
    if (header.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
    const std::string_view spec = header.substr(kPrefix.size());
    if (spec.find(',') != std::string_view::npos) return std::nullopt;
    const auto dash = spec.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    auto number = [](std::string_view s, std::uint64_t& out) {
        if (s.empty()) return false;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
        return r.ec == std::errc() && r.ptr == s.data() + s.size();
    };
    const std::string_view a = spec.substr(0, dash);
    const std::string_view b = spec.substr(dash + 1);
    ByteRange range;
    if (a.empty()) {  // suffix: the last N bytes
        std::uint64_t n = 0;
        if (!number(b, n)) return std::nullopt;
        if (n == 0 || size == 0) {
            unsatisfiable = true;
            return std::nullopt;
        }
        range.first = n >= size ? 0 : size - n;
        range.last = size - 1;
        return range;
    }
    if (!number(a, range.first)) return std::nullopt;
    if (b.empty()) {
        range.last = size == 0 ? 0 : size - 1;
    } else if (!number(b, range.last) || range.last < range.first) {
        return std::nullopt;
    }
    if (range.first >= size) {
        unsatisfiable = true;
        return std::nullopt;
    }
    range.last = std::min(range.last, size - 1);
    return range;
}

asio::awaitable<http::Response> GetOutput(App& app, http::Request& req) {
    const std::string task = req.params["task"];
    const std::string name = req.params["name"];
    const auto expires = req.QueryParam("expires").value_or("");
    const auto signature = req.QueryParam("signature").value_or("");
    const auto check = app.signer.Verify(req.path, expires, signature);
    if (check != outputs::UrlSigner::Check::kValid) {
        ApiError e;
        e.code = ErrorCode::kForbidden;
        e.message = check == outputs::UrlSigner::Check::kExpired
                        ? "This output URL has expired; fetch the task again for a fresh one"
                        : "Invalid output URL signature";
        co_return http::Response::Error(e, app.doc_url);
    }

    const bool head = req.method == "HEAD";
    const auto range_header = req.Header("range");
    http::Response r;
    bool found = true;
    // Stat and read are file I/O: they run on the blocking pool.
    co_await asio::co_spawn(
        app.blocking,
        [&]() -> asio::awaitable<void> {
            const auto info = app.outputs.Stat(task, name);
            if (!info) {
                found = false;
                co_return;
            }
            r.SetHeader("Content-Type", info->content_type);
            r.SetHeader("Accept-Ranges", "bytes");
            r.SetHeader("Cache-Control", "private, max-age=3600");
            bool unsatisfiable = false;
            const auto range =
                range_header ? ParseRange(*range_header, info->size, unsatisfiable) : std::nullopt;
            if (unsatisfiable) {
                r.status = 416;
                r.SetHeader("Content-Range", "bytes */" + std::to_string(info->size));
                co_return;
            }
            std::uint64_t first = 0;
            std::uint64_t length = info->size;
            if (range) {
                r.status = 206;
                first = range->first;
                length = range->last - range->first + 1;
                r.SetHeader("Content-Range", "bytes " + std::to_string(range->first) + "-" +
                                                 std::to_string(range->last) + "/" +
                                                 std::to_string(info->size));
            }
            if (head) {
                r.head_length = length;
            } else {
                r.body = app.outputs.Read(task, name, first, length);
            }
        },
        asio::use_awaitable);
    if (!found)
        co_return http::Response::Error(ApiError::NotFound("Output not found"), app.doc_url);
    co_return r;
}

}  // namespace

void RegisterOutputRoutes(Bindings& b) { b.Public("getOutput", GetOutput); }

}  // namespace genhost::api
