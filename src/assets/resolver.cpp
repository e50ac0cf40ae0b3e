#include "genhost/assets/resolver.hpp"

#include "genhost/assets/content_types.hpp"
#include "genhost/assets/url.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/providers/inputs.hpp"

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

// DecodeDataUri is providers::DecodeDataUri, also taking what the request schemas accept beyond
// it: `;BASE64` in any case and unpadded base64.
std::optional<providers::DataUri> DecodeDataUri(const std::string& uri) {
    if (auto decoded = providers::DecodeDataUri(uri)) return decoded;
    const std::size_t comma = uri.find(',');
    if (comma == std::string::npos || comma < 12) return std::nullopt;
    std::string header = uri.substr(0, comma);
    std::string_view marker = std::string_view(header).substr(header.size() - 7);
    std::string lower(marker);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower != ";base64") return std::nullopt;
    header.replace(header.size() - 7, 7, ";base64");
    std::string_view data = std::string_view(uri).substr(comma + 1);
    std::string normalized = header + ",";
    normalized.reserve(header.size() + data.size() + 4);
    normalized.append(data);
    while ((normalized.size() - header.size() - 1) % 4 != 0) normalized.push_back('=');
    return providers::DecodeDataUri(normalized);
}

void WriteFile(const std::string& path, const std::string& bytes) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"),
                                                         &std::fclose);
    if (!file || std::fwrite(bytes.data(), 1, bytes.size(), file.get()) != bytes.size() ||
        std::fflush(file.get()) != 0) {
        throw std::runtime_error("cannot write " + path);
    }
}

}  // namespace

AssetReader::AssetReader(const Fetcher& fetcher, UploadSource& uploads, AssetLimits limits)
    : fetcher_(fetcher), uploads_(uploads), limits_(limits) {}

Result<ReadAsset> AssetReader::Read(const std::string& media, MediaKind kind,
                                    const std::string& org_id,
                                    const std::string& destination) const {
    std::string media_type;
    if (StartsWith(media, "data:")) {
        const auto decoded = DecodeDataUri(media);
        if (!decoded) return Fail(FailureKind::kInvalidDataUri, messages::kInvalidDataUri);
        media_type = NormalizeMediaType(decoded->media_type);
        if (!IsApprovedMediaType(media_type, kind)) {
            return Fail(FailureKind::kUnsupportedType, messages::kUnsupportedType,
                        "data URI of type " + media_type);
        }
        if (decoded->bytes.empty()) {
            return Fail(FailureKind::kInvalidDataUri, messages::kInvalidDataUri, "no data");
        }
        if (decoded->bytes.size() > limits_.DataUriBytes(kind)) {
            return Fail(FailureKind::kTooLarge, messages::kTooLarge,
                        std::to_string(decoded->bytes.size()) + " bytes in a data URI");
        }
        WriteFile(destination, decoded->bytes);
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
    if (read) {
        item.asset = std::move(*read);
    } else {
        item.failure = read.error();
        spdlog::info("task {}: input {} refused: {} ({})", request.task_id, item.media->pointer,
                     item.failure->message, item.failure->detail);
    }
}

Prepared RequestInputs::Finish(const PrepareRequest& request, std::vector<Item>& items) const {
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
    out.input = request.input;
    for (const Item& item : items) {
        if (!item.asset) continue;
        out.input[nlohmann::json::json_pointer(item.media->pointer)] =
            InputArea::Reference(request.task_id, item.file_name);
    }
    out.facts = FactsOf(probed);
    return out;
}

std::vector<RequestInputs::Item> RequestInputs::MakeItems(const PrepareRequest& request) {
    std::vector<Item> items(request.media.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        const MediaInput& media = request.media[i];
        items[i].media = &media;
        items[i].value =
            request.input.at(nlohmann::json::json_pointer(media.pointer)).get<std::string>();
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

Prepared RequestInputs::PrepareSync(const PrepareRequest& request) {
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
