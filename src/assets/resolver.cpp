#include "genhost/assets/resolver.hpp"

#include "genhost/assets/content_types.hpp"
#include "genhost/assets/url.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <latch>
#include <optional>

namespace genhost::assets {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxUploadBytes = 200 * kMiB;  // CLIENTS.md 3.2: ephemeral uploads

bool StartsWith(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

// DataUri is a base64 data URI taken apart, its data still encoded.
struct DataUriParts {
    std::string_view media_type;  // as written, parameters left out
    std::string_view data;        // base64
};

// SplitDataUri takes `data:<type>/<subtype>[;params];base64,<data>` apart (`;base64` in any case,
// as the request schemas accept it); nullopt when it is not of that form.
std::optional<DataUriParts> SplitDataUri(std::string_view uri) {
    constexpr std::string_view kScheme = "data:";
    constexpr std::string_view kBase64 = ";base64";
    if (!StartsWith(uri, kScheme)) return std::nullopt;
    const std::size_t comma = uri.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    std::string_view header = uri.substr(kScheme.size(), comma - kScheme.size());
    if (header.size() < kBase64.size()) return std::nullopt;
    const std::string_view marker = header.substr(header.size() - kBase64.size());
    for (std::size_t i = 0; i < marker.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(marker[i])) != kBase64[i]) return std::nullopt;
    }
    header.remove_suffix(kBase64.size());
    const std::string_view type = header.substr(0, header.find(';'));
    if (type.find('/') == std::string_view::npos) return std::nullopt;
    return DataUriParts{type, uri.substr(comma + 1)};
}

// WriteBase64File decodes base64 `data` into a new file at `path`; false when `data` is not
// valid base64. Throws when the file cannot be written.
bool WriteBase64File(const std::string& path, std::string_view data) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"),
                                                         &std::fclose);
    if (!file) throw std::runtime_error("cannot write " + path);
    bool write_failed = false;
    const bool decoded = Base64DecodeInPieces(data, 64 * 1024, [&](std::string_view piece) {
        write_failed = std::fwrite(piece.data(), 1, piece.size(), file.get()) != piece.size();
        return !write_failed;
    });
    if (write_failed || std::fflush(file.get()) != 0)
        throw std::runtime_error("cannot write " + path);
    return decoded;
}

}  // namespace

AssetReader::AssetReader(const Fetcher& fetcher, UploadSource& uploads, AssetLimits limits)
    : fetcher_(fetcher), uploads_(uploads), limits_(limits) {}

Result<ReadAsset> AssetReader::Read(const std::string& media, MediaKind kind,
                                    const std::string& org_id,
                                    const std::string& destination) const {
    std::string media_type;
    if (StartsWith(media, "data:")) {
        const auto parts = SplitDataUri(media);
        if (!parts) return Fail(FailureKind::kInvalidDataUri, messages::kInvalidDataUri);
        media_type = NormalizeMediaType(std::string(parts->media_type));
        if (!IsApprovedMediaType(media_type, kind)) {
            return Fail(FailureKind::kUnsupportedType, messages::kUnsupportedType,
                        "data URI of type " + media_type);
        }
        const std::uint64_t size = Base64DecodedSize(parts->data).value_or(0);
        if (size == 0) {
            return Fail(FailureKind::kInvalidDataUri, messages::kInvalidDataUri, "no data");
        }
        if (size > limits_.DataUriBytes(kind)) {
            return Fail(FailureKind::kTooLarge, messages::kTooLarge,
                        std::to_string(size) + " bytes in a data URI");
        }
        // Decoded straight into the file, a piece at a time: no decoded copy in memory.
        if (!WriteBase64File(destination, parts->data)) {
            std::error_code ignored;
            fs::remove(destination, ignored);
            return Fail(FailureKind::kInvalidDataUri, messages::kInvalidDataUri);
        }
    } else if (StartsWith(media, kUploadScheme)) {
        const std::string id = media.substr(kUploadScheme.size());
        const auto source = id.empty() ? std::nullopt : uploads_.PathFor(org_id, id);
        if (!source) {
            return Fail(FailureKind::kUnknownUpload, messages::kUnknownUpload, "upload " + id);
        }
        std::error_code ec;
        const auto size = fs::file_size(*source, ec);
        if (ec) return Fail(FailureKind::kUnknownUpload, messages::kUnknownUpload, ec.message());
        if (size > kMaxUploadBytes) {
            return Fail(FailureKind::kTooLarge, messages::kTooLarge,
                        std::to_string(size) + " bytes in an upload");
        }
        // A hard link costs nothing and keeps the bytes even if the upload expires before the
        // task runs; another file system (or no link support) gets a copy.
        fs::create_hard_link(*source, destination, ec);
        if (ec) {
            std::error_code copy_ec;
            fs::copy_file(*source, destination, fs::copy_options::overwrite_existing, copy_ec);
            if (copy_ec) {
                if (!fs::exists(*source)) {
                    return Fail(FailureKind::kUnknownUpload, messages::kUnknownUpload,
                                "upload " + id + " vanished");
                }
                throw std::runtime_error("cannot copy upload " + id + ": " + copy_ec.message());
            }
        }
    } else {
        auto fetched = fetcher_.Fetch(media, kind, limits_.UrlBytes(kind), destination);
        if (!fetched) return fetched.error();
        media_type = fetched->media_type;
    }
    auto probed = Probe(destination, kind, media_type);
    if (!probed) {
        std::error_code ignored;
        fs::remove(destination, ignored);
    }
    return probed;
}

Result<ReadAsset> AssetReader::Probe(const std::string& path, MediaKind kind,
                                     const std::string& media_type) const {
    media::MediaInfo info;
    try {
        info = media::ProbeMediaFile(path,
                                     media::ProbeLimits{limits_.probe_timeout, limits_.max_side});
    } catch (const media::MediaError& e) {
        return Fail(FailureKind::kUnsupportedType, messages::kUnsupportedType, e.what());
    }
    if (auto failure = CheckProbed(info, kind, media_type, limits_)) return *failure;
    return ReadAsset{path, media_type, std::move(info)};
}

struct RequestInputs::Item {
    const MediaInput* media = nullptr;
    std::string value;
    std::string file_name;
    std::optional<ReadAsset> asset;
    std::optional<AssetFailure> failure;
    bool deferred = false;  // offline: a URL the worker will fetch
    std::exception_ptr fault;
};

RequestInputs::RequestInputs(const AssetReader& reader, const InputArea& area,
                             RequestInputsOptions options)
    : reader_(reader),
      area_(area),
      options_(options),
      pool_(static_cast<std::size_t>(std::max(1, options.threads))) {}

RequestInputs::~RequestInputs() { pool_.join(); }

void RequestInputs::ReadItem(const PrepareRequest& request, Item& item) const {
    const bool url = !StartsWith(item.value, "data:") && !StartsWith(item.value, kUploadScheme);
    if (url && options_.offline) {
        auto parsed = ParseAssetUrl(item.value);
        if (!parsed) {
            item.failure = parsed.error();
        } else {
            item.deferred = true;
        }
        return;
    }
    const std::string dir = area_.DirFor(request.task_id);
    fs::create_directories(dir);
    auto read =
        reader_.Read(item.value, item.media->kind, request.org_id, dir + "/" + item.file_name);
    std::string().swap(item.value);  // a data URI's megabytes are in the file now
    if (read) {
        item.asset = std::move(*read);
    } else {
        item.failure = read.error();
        spdlog::info("task {}: input {} refused: {} ({})", request.task_id, item.media->pointer,
                     item.failure->message, item.failure->detail);
    }
}

Prepared RequestInputs::Finish(PrepareRequest& request, std::vector<Item>& items) const {
    for (const Item& item : items) {
        if (item.fault) {
            area_.Remove(request.task_id);
            std::rethrow_exception(item.fault);
        }
    }
    Prepared out;
    std::vector<ProbedInput> probed;
    for (const Item& item : items) {
        if (item.failure) out.issues.push_back(ToIssue(*item.failure, item.media->path));
        if (item.asset) {
            probed.push_back(ProbedInput{item.media->path, item.media->pointer, item.media->kind,
                                         item.asset->info});
        }
        if (item.deferred) out.all_probed = false;
    }
    if (out.issues.empty()) {
        out.issues = CheckFieldLimits(request.field_limits, probed, reader_.limits());
    }
    if (!out.issues.empty()) {
        area_.Remove(request.task_id);
        return out;
    }
    out.input = std::move(request.input);
    for (Item& item : items) {
        auto& value = out.input[nlohmann::json::json_pointer(item.media->pointer)];
        if (item.asset) {
            value = InputArea::Reference(request.task_id, item.file_name);
        } else {
            value = std::move(item.value);  // MakeItems took it out; the worker reads it later
        }
    }
    out.facts = FactsOf(probed);
    return out;
}

std::vector<RequestInputs::Item> RequestInputs::MakeItems(PrepareRequest& request) {
    std::vector<Item> items(request.media.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        const MediaInput& media = request.media[i];
        items[i].media = &media;
        // Moved out, not copied (a data URI can be megabytes); Finish puts back what it keeps.
        items[i].value = std::move(
            request.input.at(nlohmann::json::json_pointer(media.pointer)).get_ref<std::string&>());
        items[i].file_name = "input_" + std::to_string(i);
    }
    return items;
}

asio::awaitable<Prepared> RequestInputs::Prepare(PrepareRequest request) {
    std::vector<Item> items = MakeItems(request);
    Prepared result;
    std::exception_ptr fault;
    co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
        [this, &request, &items, &result, &fault](auto handler) {
            using Handler = decltype(handler);
            auto work = asio::make_work_guard(asio::get_associated_executor(handler));
            struct State {
                std::atomic<std::size_t> remaining;
                Handler handler;
                decltype(work) guard;
            };
            std::shared_ptr<State> state(
                new State{{items.size() + 1}, std::move(handler), std::move(work)});
            // The last job to end builds the result (file removal included) on the pool, then
            // resumes the coroutine on its own executor.
            auto finish = [this, state, &request, &items, &result, &fault] {
                if (state->remaining.fetch_sub(1) != 1) return;
                try {
                    result = Finish(request, items);
                } catch (...) {
                    fault = std::current_exception();
                }
                auto executor = state->guard.get_executor();
                asio::post(executor, [state]() mutable { std::move(state->handler)(); });
                state->guard.reset();
            };
            for (Item& item : items) {
                asio::post(pool_, [this, &request, &item, finish] {
                    try {
                        ReadItem(request, item);
                    } catch (...) {
                        item.fault = std::current_exception();
                    }
                    finish();
                });
            }
            asio::post(pool_, finish);  // the "+ 1": correct also when there are no items
        },
        asio::use_awaitable);
    if (fault) std::rethrow_exception(fault);
    co_return result;
}

Prepared RequestInputs::PrepareSync(const PrepareRequest& original) {
    PrepareRequest request = original;
    std::vector<Item> items = MakeItems(request);
    std::latch done(static_cast<std::ptrdiff_t>(items.size()));
    for (Item& item : items) {
        asio::post(pool_, [this, &request, &item, &done] {
            try {
                ReadItem(request, item);
            } catch (...) {
                item.fault = std::current_exception();
            }
            done.count_down();
        });
    }
    done.wait();
    return Finish(request, items);
}

void RequestInputs::Discard(const std::string& task_id) {
    asio::post(pool_, [this, task_id] { area_.Remove(task_id); });
}

Resolver::Resolver(const AssetReader& reader, const InputArea& area)
    : reader_(reader), area_(area) {}

std::string Resolver::Resolve(const std::string& media, MediaKind kind,
                              const std::string& scratch_dir) const {
    if (InputArea::IsReference(media)) {
        const auto path = area_.PathOf(media);
        std::error_code ec;
        if (!path || !fs::is_regular_file(*path, ec)) {
            throw providers::TaskFailure("ASSET.INVALID", messages::kInputUnavailable);
        }
        return *path;
    }
    if (StartsWith(media, kUploadScheme)) {
        throw providers::TaskFailure("ASSET.INVALID", messages::kUnknownUpload);
    }
    fs::create_directories(scratch_dir);
    const std::string destination = scratch_dir + "/input_" + NewUuid().substr(0, 8);
    auto read = reader_.Read(media, kind, std::string(), destination);
    if (!read) {
        spdlog::info("task input refused: {} ({})", read.error().message, read.error().detail);
        throw providers::TaskFailure("ASSET.INVALID", read.error().message);
    }
    return read->path;
}

}  // namespace genhost::assets
