// genhost/assets/resolver.hpp
//
// Provides the three ways genhost reads media inputs, built on one core (AssetReader):
//
// - AssetReader::Read turns one media string into a probed file: a data URI is decoded (strict
//   parsing, an approved media type of the field's kind, the data-URI cap of CLIENTS.md 3.2), an
//   HTTPS URL is fetched (fetcher.hpp), an upload URI is looked up (UploadSource) and linked into
//   place; the file is then probed with libav (media::ProbeMediaFile, bounded in time and
//   memory) and checked against the per-asset limits (limits.hpp). Blocks.
// - RequestInputs, at request time (POST /v1/<generation>): reads every media string of a
//   validated request on the asset pool (never on an I/O thread), in parallel, into
//   `<data_dir>/inputs/<task id>/`; checks the per-field limits of the model; returns the 400
//   issues, or the input with each media string replaced by a reference to its file and the
//   probed facts for pricing. In offline mode HTTPS URLs are only parsed (the worker fetches
//   them) and stay in the input as they are.
// - Resolver, the providers::InputResolver of the workers: a reference resolves to its file; a
//   URL (offline mode) or a data URI (tasks stored before references existed) is read into the
//   run's scratch folder. Failures end the task FAILED with ASSET.INVALID and the same message a
//   400 would carry.
#pragma once

#include "genhost/assets/failure.hpp"
#include "genhost/assets/fetcher.hpp"
#include "genhost/assets/input_area.hpp"
#include "genhost/assets/limits.hpp"
#include "genhost/catalog/catalog.hpp"
#include "genhost/core/error.hpp"
#include "genhost/providers/provider.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace genhost::assets {

// ReadAsset is a media input on disk, probed and within the per-asset limits.
struct ReadAsset {
    std::string path;
    std::string media_type;  // declared type (Content-Type or data-URI type); empty for uploads
    media::MediaInfo info;
};

class AssetReader {
  public:
    AssetReader(const Fetcher& fetcher, UploadSource& uploads, AssetLimits limits);

    // Read materialises `media` (a field of `kind`) as `destination` and probes it. `org_id`
    // owns upload URIs. Failures: every FailureKind of fetcher.hpp, kInvalidDataUri,
    // kUnsupportedType (wrong or unapproved type, bytes libav cannot decode as the kind),
    // kTooLarge, kDimensions, kAspectRatio, kUnknownUpload. Throws only for faults of this server
    // (disk errors). Blocks.
    Result<ReadAsset> Read(const std::string& media, MediaKind kind, const std::string& org_id,
                           const std::string& destination) const;

    // Probe probes a file already on disk and checks the per-asset limits.
    Result<ReadAsset> Probe(const std::string& path, MediaKind kind,
                            const std::string& media_type) const;

    const AssetLimits& limits() const { return limits_; }
    const Fetcher& fetcher() const { return fetcher_; }

  private:
    const Fetcher& fetcher_;
    UploadSource& uploads_;
    AssetLimits limits_;
};

// MediaInput is one media string of a request (from validate::SchemaSet::MediaFields).
struct MediaInput {
    std::vector<std::string> path;  // issue path, e.g. {"promptImage", "0", "uri"}
    std::string pointer;            // JSON pointer, e.g. "/promptImage/0/uri"
    MediaKind kind = MediaKind::kImage;
};

struct PrepareRequest {
    std::string task_id;  // the inputs go to InputArea::DirFor(task_id)
    std::string org_id;
    nlohmann::json input;  // validated, defaults applied
    std::vector<MediaInput> media;
    nlohmann::json field_limits;  // the model's CapabilitiesFor(endpoint)["inputs"], or null
};

struct Prepared {
    std::vector<Issue> issues;  // not empty: answer 400 (nothing is kept on disk)
    nlohmann::json input;       // the input to store: media strings replaced by references
    catalog::InputFacts facts;  // probed facts for pricing, keyed by JSON pointer
    bool all_probed = true;     // false when some media were left for the worker (offline)
};

struct RequestInputsOptions {
    bool offline = false;  // GENHOST_FETCH_OFFLINE: URLs are fetched by the worker
    int threads = 4;       // the asset pool: concurrent fetch + probe jobs of this process
};

class RequestInputs {
  public:
    RequestInputs(const AssetReader& reader, const InputArea& area, RequestInputsOptions options);
    ~RequestInputs();  // waits for running jobs
    RequestInputs(const RequestInputs&) = delete;
    RequestInputs& operator=(const RequestInputs&) = delete;

    // Prepare reads every media string of `request` on the asset pool; the awaiting coroutine
    // resumes on its own executor. Faults of this server (disk) are rethrown.
    boost::asio::awaitable<Prepared> Prepare(PrepareRequest request);

    // PrepareSync is Prepare for a thread that may block (tests, benchmarks).
    Prepared PrepareSync(const PrepareRequest& request);

    // Discard removes task `task_id`'s inputs later, on the asset pool (the task was not
    // created after all).
    void Discard(const std::string& task_id);

    bool offline() const { return options_.offline; }

  private:
    struct Item;
    // MakeItems moves each media string out of `request.input` into its item.
    static std::vector<Item> MakeItems(PrepareRequest& request);
    void ReadItem(const PrepareRequest& request, Item& item) const;
    // Finish moves `request.input` into the result, each media string replaced by its reference.
    Prepared Finish(PrepareRequest& request, std::vector<Item>& items) const;

    const AssetReader& reader_;
    const InputArea& area_;
    RequestInputsOptions options_;
    boost::asio::thread_pool pool_;
};

class Resolver : public providers::InputResolver {
  public:
    Resolver(const AssetReader& reader, const InputArea& area);

    // Resolve (see providers::InputResolver). References must name an existing file
    // (kInputUnavailable otherwise); other media strings are read into `scratch_dir`. Upload
    // URIs never reach a worker (they are replaced at request time) and are refused.
    std::string Resolve(const std::string& media, MediaKind kind,
                        const std::string& scratch_dir) const override;

  private:
    const AssetReader& reader_;
    const InputArea& area_;
};

}  // namespace genhost::assets
