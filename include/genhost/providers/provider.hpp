// genhost/providers/provider.hpp
//
// Provides Provider, the seam between a claimed task and whatever makes its media, and the
// context a provider works in: the validated input, progress reporting and cancellation.
// Providers run on worker threads and may block. Which provider serves a model is catalog data
// (ModelInfo::provider).
//
// A provider reports an expected failure (bad input media, a refusal by a back end) by throwing
// TaskFailure with a failure code of LIMITS_AND_PRICES.md; any other exception becomes
// `INTERNAL`. When cancelled it throws Cancelled (or returns; its outputs are discarded).
#pragma once

#include "genhost/core/media_kind.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace genhost::providers {

// TaskFailure ends the task FAILED with `code` (e.g. "ASSET.INVALID") and a human message.
class TaskFailure : public std::runtime_error {
  public:
    TaskFailure(std::string code, const std::string& message)
        : std::runtime_error(message), code_(std::move(code)) {}
    const std::string& code() const { return code_; }

  private:
    std::string code_;
};

// Cancelled is thrown by TaskContext::CheckCancelled when the task was cancelled.
class Cancelled : public std::runtime_error {
  public:
    Cancelled() : std::runtime_error("task cancelled") {}
};

// Output is one generated file: its extension-bearing suffix (e.g. "0.png") and either its
// bytes (`data`) or, for large media, a file in the task's scratch folder (`file`), which the
// worker moves into the output store.
struct Output {
    std::string suffix;
    std::string data;
    std::string file;
};

// InputResolver turns a media string of a validated request (an HTTPS URL, an upload URI or a
// data URI) into a local file a pipeline can open. It blocks (downloads, disk I/O) and runs on
// the worker thread. An input that cannot be read throws TaskFailure("ASSET.INVALID", ...).
class InputResolver {
  public:
    virtual ~InputResolver() = default;

    // Resolve returns the path of a file holding the bytes of `media`, written under
    // `scratch_dir` when it has to be materialised.
    virtual std::string Resolve(const std::string& media, MediaKind kind,
                                const std::string& scratch_dir) const = 0;
};

class TaskContext {
  public:
    // `scratch_dir` is the run's private folder (removed by the worker afterwards) and `inputs`
    // resolves media strings; without them (unit tests) Input() fails with INTERNAL.
    TaskContext(std::string task_id, std::string endpoint, std::string model, nlohmann::json input,
                const std::atomic<bool>& cancelled, std::function<void(double)> progress,
                std::string scratch_dir = {}, const InputResolver* inputs = nullptr)
        : task_id_(std::move(task_id)),
          endpoint_(std::move(endpoint)),
          model_(std::move(model)),
          input_(std::move(input)),
          cancelled_(cancelled),
          progress_(std::move(progress)),
          scratch_dir_(std::move(scratch_dir)),
          inputs_(inputs) {}

    const std::string& task_id() const { return task_id_; }
    const std::string& endpoint() const { return endpoint_; }
    const std::string& model() const { return model_; }
    const nlohmann::json& input() const { return input_; }

    // Cancelled reports whether the task was cancelled or its lease was lost.
    bool IsCancelled() const { return cancelled_.load(); }

    // CheckCancelled throws Cancelled if the task was cancelled.
    void CheckCancelled() const {
        if (cancelled_.load()) throw Cancelled();
    }

    // Progress reports how far the work is (0..1); cheap to call often.
    void Progress(double fraction) const { progress_(fraction); }

    // scratch_dir is the run's private folder for inputs and file outputs (Output::file).
    const std::string& scratch_dir() const { return scratch_dir_; }

    // Input resolves the media string `media` to a local file (see InputResolver); throws
    // TaskFailure("ASSET.INVALID") for unreadable media, INTERNAL without a resolver.
    std::string Input(const std::string& media, MediaKind kind) const {
        if (inputs_ == nullptr || scratch_dir_.empty()) {
            throw TaskFailure("INTERNAL", "media inputs cannot be read in this context");
        }
        return inputs_->Resolve(media, kind, scratch_dir_);
    }

  private:
    std::string task_id_;
    std::string endpoint_;
    std::string model_;
    nlohmann::json input_;
    const std::atomic<bool>& cancelled_;
    std::function<void(double)> progress_;
    std::string scratch_dir_;
    const InputResolver* inputs_ = nullptr;
};

class Provider {
  public:
    virtual ~Provider() = default;

    // Run produces the outputs of the task in `ctx`.
    virtual std::vector<Output> Run(TaskContext& ctx) = 0;
};

}  // namespace genhost::providers
