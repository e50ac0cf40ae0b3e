// genhost/outputs/s3_store.hpp
//
// Provides S3OutputStore, an OutputStore on an S3-compatible object store (AWS S3, MinIO, Ceph,
// R2, s3rver, ...), so several nodes share outputs without a shared mount. Object `name` of task
// `task_id` is the key <prefix><task_id>/<name> of one bucket.
//
// Requests are signed with AWS Signature Version 4 (genhost/outputs/sigv4.hpp) and sent over
// HTTP/1.1 with Boost.Beast, one connection per request: plain TCP for http:// endpoints, TLS with
// SNI and certificate and host name verification for https://. Every call blocks (it runs its own
// io_context on the calling thread): call them from worker threads or the blocking pool. Safe to
// use from several threads at once. Failures throw std::runtime_error; S3 error responses carry
// the S3 error code (for example "S3 PUT out/t/0.png: 403 SignatureDoesNotMatch: ...").
#pragma once

#include "genhost/core/metrics.hpp"
#include "genhost/outputs/output_store.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace genhost::outputs {

struct S3Options {
    std::string endpoint;  // http(s)://host[:port], no path: "https://s3.us-east-1.amazonaws.com"
    std::string region = "us-east-1";
    std::string bucket;
    std::string access_key_id;
    std::string secret_access_key;
    std::string prefix;      // prepended to "<task>/<name>" as it is, e.g. "genhost/outputs/"
    bool path_style = true;  // endpoint/bucket/key; false: bucket.endpoint/key (virtual host)
    std::chrono::milliseconds timeout{30000};  // bound of each stage: connect, send, receive
    std::string ca_file;       // PEM bundle trusted for https (empty: the system's trust store)
    int list_max_keys = 1000;  // max-keys of each ListObjectsV2 page (DeleteTask)
    // A request that gets no answer (refused, reset, timed out) or a 5xx is sent again, up to
    // `attempts` in all, after `retry_base`, then twice that, and so on. Every S3 request genhost
    // makes is idempotent (PUT of a whole object, GET, HEAD, DELETE, list).
    int attempts = 3;
    std::chrono::milliseconds retry_base{200};
    // Where requests are counted (genhost_s3_requests_total{method,status}, status a class such
    // as 2xx or `error` for a transport failure, and genhost_s3_request_duration_seconds{method});
    // none when null.
    metrics::Registry* metrics = nullptr;
};

class S3OutputStore final : public OutputStore {
  public:
    // Checks the options (throws std::invalid_argument for a bad endpoint or a missing bucket
    // or credentials); does not contact the server.
    explicit S3OutputStore(S3Options options);
    ~S3OutputStore() override;
    S3OutputStore(const S3OutputStore&) = delete;
    S3OutputStore& operator=(const S3OutputStore&) = delete;

    void Put(std::string_view task_id, std::string_view name, std::string_view data) override;
    // PutFile streams the file (UNSIGNED-PAYLOAD, known Content-Length), then removes it.
    void PutFile(std::string_view task_id, std::string_view name, const std::string& path) override;
    std::optional<ObjectInfo> Stat(std::string_view task_id, std::string_view name) override;
    std::string Read(std::string_view task_id, std::string_view name, std::uint64_t offset,
                     std::uint64_t length) override;
    void DeleteObject(std::string_view task_id, std::string_view name) override;
    // DeleteTask lists <prefix><task_id>/ (ListObjectsV2, following continuation tokens) and
    // deletes every key found.
    void DeleteTask(std::string_view task_id) override;

    // ListTask returns the keys (without the prefix and task folder: object names) of a task.
    std::vector<std::string> ListTask(std::string_view task_id);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// ParseListObjectsV2 reads the keys, IsTruncated and NextContinuationToken of a ListObjectsV2
// response body (exposed for tests). XML entities in values are decoded.
struct ListPage {
    std::vector<std::string> keys;
    bool truncated = false;
    std::string next_token;
};
ListPage ParseListObjectsV2(std::string_view xml);

}  // namespace genhost::outputs
