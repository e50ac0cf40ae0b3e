// genhost/providers/http_provider.hpp
//
// Provides HttpProvider: a Provider that hands a task to an external inference server over the
// JSON protocol of docs/providers.md. It submits the task (POST {url}/v1/tasks), polls the
// provider's job (GET {url}/v1/tasks/{job}) until it ends, reports the job's progress, downloads
// the outputs into the task's scratch folder and returns them as file outputs. Cancelling the
// task deletes the provider's job (DELETE {url}/v1/tasks/{job}) within a second.
//
// Failures end the task with the codes of LIMITS_AND_PRICES.md (TaskFailure):
// - THIRD_PARTY.UNAVAILABLE: no answer (connection, TLS, timeouts), 5xx, 408 or 429 after the
//   retries, the job running past `task_timeout`, or the provider cancelling the job itself;
// - THIRD_PARTY.INPUT_VALIDATION: the provider refusing the submission with another 4xx;
// - the job's own failureCode when it is one of LIMITS_AND_PRICES.md (e.g. SAFETY.INPUT.TEXT);
// - INTERNAL.BAD_OUTPUT.CODE01: an output larger than `max_output_bytes`;
// - INTERNAL: protocol violations (a body that is not the documented JSON, an unknown status,
//   401/403/404/405, which mean genhost is misconfigured) and failed jobs without a known code.
// Clients see a safe message; the log line carries the provider's details.
//
// Runs on a worker thread and blocks; every wait is bounded and cancellation is checked at least
// every 20 ms. Thread-safe: one instance serves every worker.
#pragma once

#include "genhost/catalog/catalog.hpp"
#include "genhost/providers/provider.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace genhost::net {
struct HttpUrl;
}  // namespace genhost::net

namespace genhost::providers {

namespace detail {
class OutboundHttp;
}  // namespace detail

// HttpProviderOptions configure one provider (docs/configuration.md, "Providers").
struct HttpProviderOptions {
    std::string name;  // as models name it in the catalog's `provider`
    std::string url;   // base URL, http:// or https://, optionally with a path prefix
    std::chrono::milliseconds poll_interval{1000};
    std::chrono::milliseconds request_timeout{10000};        // one protocol request
    std::chrono::milliseconds task_timeout{3600 * 1000};     // submission to the last output
    std::chrono::milliseconds download_timeout{600 * 1000};  // one output
    int retries = 4;  // further attempts of a request that failed transiently
    std::chrono::milliseconds backoff{500};  // first retry delay, doubled each time up to 10 s
    std::uint64_t max_output_bytes = std::uint64_t{2} << 30;
    int max_outputs = 16;
    std::uint64_t max_inline_input_bytes = std::uint64_t{64} << 20;
    std::string ca_file;  // PEM bundle trusted for https; empty: the system's trust store
    std::vector<std::pair<std::string, std::string>> headers;  // sent with every request
};

// InputUrlFn returns the URL a provider fetches a stored media input from, given the task and
// the local file the worker resolved the input to (TaskContext::Input). Without one (today),
// such inputs travel inline as data URIs of at most `max_inline_input_bytes`; HTTPS URLs and
// data URIs of the request are always passed through as given.
using InputUrlFn = std::function<std::string(const std::string& task_id, const std::string& path)>;

class HttpProvider final : public Provider {
  public:
    // Throws std::invalid_argument for a malformed URL or header, std::runtime_error when the
    // CA file cannot be read. `catalog` says where each model's media inputs are.
    HttpProvider(HttpProviderOptions options, const catalog::Catalog& catalog,
                 InputUrlFn input_url = {});
    ~HttpProvider() override;

    const std::string& name() const { return options_.name; }
    const HttpProviderOptions& options() const { return options_; }

    std::vector<Output> Run(TaskContext& ctx) override;

  private:
    class Session;  // the state of one run (http_provider.cpp)
    HttpProviderOptions options_;
    const catalog::Catalog& catalog_;
    InputUrlFn input_url_;
    std::unique_ptr<net::HttpUrl> base_;
    std::unique_ptr<detail::OutboundHttp> http_;
};

// MediaInput is one media string of a request: where it is (a JSON pointer into the input) and
// what it must be ("image", "video" or "audio"; "" when the catalog allows several).
struct MediaInput {
    std::string pointer;
    std::string kind;
};

// MediaInputsOf lists the media strings of `input` (validated, for `endpoint` and its model) at
// the paths the catalog's capabilities name: bare strings, arrays of strings, and `uri` fields
// of arrays of objects. Unknown models list nothing.
std::vector<MediaInput> MediaInputsOf(const catalog::Catalog& catalog, const std::string& endpoint,
                                      const nlohmann::json& input);

}  // namespace genhost::providers
