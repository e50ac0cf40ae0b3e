// POST /v1/uploads and POST /uploads/{id}: ephemeral uploads (docs/uploads.md).
//
// POST /v1/uploads stores an upload row and answers the upload URI (`genhost://<id>`, under the
// key the official Node client reads and under a neutral one) with the URL and the signed form
// fields for one multipart POST of the file. POST /uploads/{id} is that POST: unauthenticated,
// streamed. It reads the form's fields, checks the policy they carry before the first byte of
// the file, claims the upload in PostgreSQL, streams the file part to `<id>.part` under the
// policy's size cap, renames it into place and marks the upload complete.
#include "genhost/api/uploads_routes.hpp"
#include "handlers.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/http/multipart.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <vector>

namespace genhost::api {

namespace asio = boost::asio;

namespace {

constexpr std::string_view kUriScheme = "genhost://";
// The body is read and written in chunks of this size: memory per upload stays flat.
constexpr std::size_t kChunkBytes = 64 * 1024;
// The form's parts before the file: the policy, its signature, the client's optional metadata.
constexpr std::size_t kMaxFieldBytes = 64 * 1024;
constexpr std::size_t kMaxFormBytes = 256 * 1024;
// Part headers and delimiters, on top of the file and the fields.
constexpr std::size_t kFramingBytes = 64 * 1024;
// Longest stored Content-Type or file name of the file part.
constexpr std::size_t kMaxStoredChars = 255;

ApiError Forbidden(std::string message) {
    ApiError e;
    e.code = ErrorCode::kForbidden;
    e.message = std::move(message);
    return e;
}

ApiError TooLarge(std::string message) {
    ApiError e;
    e.code = ErrorCode::kPayloadTooLarge;
    e.message = std::move(message);
    return e;
}

// Utf8SequenceLength returns the length of the valid UTF-8 sequence at the start of `s`, or 0.
std::size_t Utf8SequenceLength(std::string_view s) {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    std::size_t n = 0;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    if (c >= 0xe0 && c <= 0xef) n = 3;
    if (c >= 0xf0 && c <= 0xf4) n = 4;
    if (n == 0 || s.size() < n) return 0;
    for (std::size_t i = 1; i < n; ++i) {
        if ((b(i) & 0xc0) != 0x80) return 0;
    }
    // Overlong forms, surrogates and code points past U+10FFFF.
    if (c == 0xe0 && b(1) < 0xa0) return 0;
    if (c == 0xed && b(1) > 0x9f) return 0;
    if (c == 0xf0 && b(1) < 0x90) return 0;
    if (c == 0xf4 && b(1) > 0x8f) return 0;
    return n;
}

// Storable keeps what a client sent in a part header storable and printable: control characters
// and invalid UTF-8 are dropped and the result is cut to kMaxStoredChars bytes on a character
// boundary.
std::string Storable(std::string_view s) {
    std::string out;
    while (!s.empty()) {
        const std::size_t n = Utf8SequenceLength(s);
        if (n == 0) {
            s.remove_prefix(1);
            continue;
        }
        const auto c = static_cast<unsigned char>(s.front());
        if ((n > 1 || (c >= 0x20 && c != 0x7f)) && out.size() + n <= kMaxStoredChars) {
            out.append(s.substr(0, n));
        }
        s.remove_prefix(n);
    }
    return out;
}

// Authorise checks the policy the form's fields carry for upload `id`.
Result<outputs::UploadPolicy> Authorise(const App& app, const std::string& id,
                                        const std::map<std::string, std::string>& fields) {
    const auto policy = fields.find("policy");
    const auto signature = fields.find("signature");
    if (policy == fields.end() || signature == fields.end()) {
        return Forbidden(
            "The form carries no upload policy: send the fields POST /v1/uploads returned, "
            "before the file");
    }
    outputs::UploadPolicy granted;
    switch (app.uploads.signer->Verify(id, policy->second, signature->second, &granted)) {
        case outputs::UploadPolicySigner::Check::kValid:
            return granted;
        case outputs::UploadPolicySigner::Check::kExpired:
            return Forbidden("This upload URL has expired; create a new upload");
        case outputs::UploadPolicySigner::Check::kInvalid:
            break;
    }
    return Forbidden("Invalid upload policy signature");
}

// Receipt is what a POST /uploads/{id} has taken so far, for the clean-up of a failed one.
struct Receipt {
    std::string id;
    bool claimed = false;
    bool completed = false;
    std::unique_ptr<outputs::UploadWriter> writer;
};

asio::awaitable<http::Response> Receive(App& app, http::Request& req, http::BodyReader& body,
                                        Receipt& r) {
    const auto& cfg = app.uploads;
    const auto fail = [&](const ApiError& e) { return http::Response::Error(e, app.doc_url); };
    r.id = req.params["id"];
    if (!IsUuid(r.id)) co_return fail(ApiError::NotFound("Upload not found"));
    std::optional<std::string> boundary;
    if (const auto content_type = req.Header("content-type")) {
        boundary = http::MultipartBoundary(*content_type);
    }
    if (!boundary) {
        co_return fail(ApiError::InvalidRequest(
            "The upload must be a multipart/form-data body with a boundary"));
    }

    http::MultipartParser parser(*boundary);
    std::vector<http::MultipartParser::Event> events;
    std::vector<char> chunk(kChunkBytes);
    std::map<std::string, std::string> fields;
    std::string* field = nullptr;  // the form field being read, if any
    std::size_t form_bytes = 0;
    enum class Phase { kFields, kFile, kAfterFile } phase = Phase::kFields;
    std::uint64_t max_bytes = 0;
    std::string file_type;
    std::string file_name;
    for (;;) {
        const auto n = co_await body.Read(chunk);
        if (!n) co_return fail(n.error());
        if (*n == 0) {
            if (auto error = parser.Finish()) co_return fail(ApiError::InvalidRequest(*error));
            break;
        }
        if (auto error = parser.Feed(std::string_view(chunk.data(), *n), events)) {
            co_return fail(ApiError::InvalidRequest(*error));
        }
        for (const auto& event : events) {
            switch (event.kind) {
                case http::MultipartParser::Event::Kind::kPartBegin: {
                    field = nullptr;
                    if (event.part.name == "file") {
                        if (phase != Phase::kFields) {
                            co_return fail(
                                ApiError::InvalidRequest("The form has more than one file part"));
                        }
                        // Authorise before reading a byte of the file.
                        auto granted = Authorise(app, r.id, fields);
                        if (!granted) co_return fail(granted.error());
                        const auto claim = co_await cfg.repo->Claim(r.id);
                        switch (claim.kind) {
                            case store::ClaimResult::Kind::kClaimed:
                                break;
                            case store::ClaimResult::Kind::kNotFound:
                                co_return fail(ApiError::NotFound("Upload not found"));
                            case store::ClaimResult::Kind::kExpired:
                                co_return fail(
                                    Forbidden("This upload URL has expired; create a new upload"));
                            case store::ClaimResult::Kind::kAlreadyReceived:
                                co_return fail(
                                    ApiError::Conflict("This upload has already been received"));
                        }
                        r.claimed = true;
                        max_bytes = std::min(granted->max_bytes, claim.max_bytes);
                        file_type = Storable(event.part.content_type);
                        if (file_type.empty()) file_type = "application/octet-stream";
                        file_name = Storable(event.part.filename.value_or(""));
                        co_await OnBlocking(app, [&] { r.writer = cfg.folder->Begin(r.id); });
                        phase = Phase::kFile;
                    } else if (phase == Phase::kFields) {
                        if (fields.count(event.part.name) > 0) {
                            co_return fail(
                                ApiError::InvalidRequest("A form field appears more than once"));
                        }
                        field = &fields[event.part.name];
                    }
                    // Parts after the file are read and ignored.
                    break;
                }
                case http::MultipartParser::Event::Kind::kData:
                    if (phase == Phase::kFile) {
                        if (r.writer->Size() + event.data.size() > max_bytes) {
                            co_return fail(
                                TooLarge("The file is larger than this upload's limit "
                                         "of " +
                                         std::to_string(max_bytes) + " bytes"));
                        }
                        co_await OnBlocking(app, [&] { r.writer->Write(event.data); });
                    } else if (field != nullptr) {
                        form_bytes += event.data.size();
                        if (field->size() + event.data.size() > kMaxFieldBytes ||
                            form_bytes > kMaxFormBytes) {
                            co_return fail(
                                ApiError::InvalidRequest("The form's fields are too large"));
                        }
                        field->append(event.data);
                    }
                    break;
                case http::MultipartParser::Event::Kind::kPartEnd:
                    if (phase == Phase::kFile) phase = Phase::kAfterFile;
                    field = nullptr;
                    break;
                case http::MultipartParser::Event::Kind::kEnd:
                    break;
            }
        }
    }
    if (phase != Phase::kAfterFile) {
        co_return fail(ApiError::InvalidRequest("The form has no file part"));
    }
    const std::uint64_t size = r.writer->Size();
    if (size == 0) co_return fail(ApiError::InvalidRequest("The file is empty"));
    co_await OnBlocking(app, [&] { r.writer->Commit(); });
    const bool recorded = co_await cfg.repo->Complete(r.id, size, file_type, file_name);
    if (!recorded) {
        // Swept while it streamed in (it expired): nothing may keep its file.
        co_await OnBlocking(app, [&] { cfg.folder->Remove(r.id); });
        co_return fail(ApiError::NotFound("Upload not found"));
    }
    r.completed = true;
    spdlog::debug("upload {} complete: {} bytes of {}", r.id, size, file_type);
    co_return http::Response::NoContent();
}

std::size_t UploadRouteBodyLimit(const App& app) {
    return static_cast<std::size_t>(app.uploads.max_bytes) + kMaxFormBytes + kFramingBytes;
}

asio::awaitable<http::Response> CreateUpload(App& app, http::Request& req,
                                             const auth::Principal& who) {
    auto body = co_await CheckedBody(app, req.body, "uploads", /*defaults=*/false);
    if (!body) co_return http::Response::Error(body.error(), app.doc_url);
    const auto& cfg = app.uploads;
    store::NewUpload upload;
    upload.id = NewUuid();
    upload.org_id = who.org_id;
    upload.filename = body->at("filename").get<std::string>();
    upload.max_bytes = cfg.max_bytes;
    const std::int64_t expires =
        UnixSeconds(cfg.clock->Now()) + static_cast<std::int64_t>(std::ceil(cfg.ttl_seconds));
    upload.expires_at = SysTime(std::chrono::seconds(expires));
    co_await cfg.repo->Create(upload);

    const std::string uri = std::string(kUriScheme) + upload.id;
    const auto fields = cfg.signer->Fields({upload.id, cfg.max_bytes, expires});
    // `runwayUri` is the key the official Node client's uploads.createEphemeral reads
    // (CLIENTS.md 0.1); `uri` is the neutral name of the same value.
    co_return http::Response::Json(200, {{"runwayUri", uri},
                                         {"uri", uri},
                                         {"uploadUrl", cfg.signer->UploadUrl(upload.id)},
                                         {"fields", fields},
                                         {"expiresAt", FormatTimestamp(upload.expires_at)}});
}

asio::awaitable<http::Response> ReceiveUpload(App& app, http::Request& req,
                                              http::BodyReader& body) {
    Receipt receipt;
    http::Response response;
    std::exception_ptr failure;
    try {
        response = co_await Receive(app, req, body, receipt);
    } catch (...) {
        failure = std::current_exception();  // rethrown below, after the clean-up
    }
    if (receipt.claimed && !receipt.completed) {
        // A failed POST gives the upload back (the policy may be used again) and leaves no file.
        try {
            co_await OnBlocking(app, [&] {
                if (receipt.writer) receipt.writer->Discard();
            });
            co_await app.uploads.repo->Release(receipt.id);
        } catch (const std::exception& e) {
            spdlog::warn("upload {}: clean-up after a failed POST failed: {}", receipt.id,
                         e.what());
        }
    }
    if (failure) std::rethrow_exception(failure);
    co_return response;
}

}  // namespace

void RegisterUploadRoutes(Bindings& b) {
    App& app = b.app();
    b.Authed("createUpload", CreateUpload);
    b.Streaming("receiveUpload", UploadRouteBodyLimit(app),
                [&app](http::Request& req, http::BodyReader& body) {
                    return ReceiveUpload(app, req, body);
                });
}

}  // namespace genhost::api
