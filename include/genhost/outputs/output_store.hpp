// genhost/outputs/output_store.hpp
//
// Provides OutputStore, the seam where generated files are kept (one folder of objects per
// task), LocalOutputStore (a folder on disk; several nodes share it through a shared mount), and
// UrlSigner, which makes and checks the temporary, self-authenticating output URLs that genhost
// hands out and serves itself.
//
// All methods block (file I/O): call them from worker threads or the blocking pool, never from
// an I/O thread. Failures throw std::runtime_error (std::filesystem_error for I/O).
#pragma once

#include "genhost/core/clock.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace genhost::outputs {

struct ObjectInfo {
    std::uint64_t size = 0;
    std::string content_type;
};

class OutputStore {
  public:
    virtual ~OutputStore() = default;

    // Put stores `data` as object `name` of task `task_id`, atomically (readers never see a
    // partial object).
    virtual void Put(std::string_view task_id, std::string_view name, std::string_view data) = 0;

    // PutFile moves (or copies) the file at `path` into the store as object `name` of task
    // `task_id`, atomically; the file is gone afterwards.
    virtual void PutFile(std::string_view task_id, std::string_view name,
                         const std::string& path) = 0;

    // Stat returns the object's size and content type, or nullopt if it does not exist.
    virtual std::optional<ObjectInfo> Stat(std::string_view task_id, std::string_view name) = 0;

    // Read returns `length` bytes of the object starting at `offset` (fewer at its end).
    virtual std::string Read(std::string_view task_id, std::string_view name, std::uint64_t offset,
                             std::uint64_t length) = 0;

    // DeleteObject removes one object (no error if it does not exist).
    virtual void DeleteObject(std::string_view task_id, std::string_view name) = 0;

    // DeleteTask removes every object of task `task_id` (no error if there are none).
    virtual void DeleteTask(std::string_view task_id) = 0;
};

// IsSafeObjectName reports whether `name` may be used as an object or task name: 1–128
// characters of [A-Za-z0-9._-], not starting with a dot.
bool IsSafeObjectName(std::string_view name);

// ContentTypeFor returns the media type for an object name's extension
// (application/octet-stream when unknown).
std::string ContentTypeFor(std::string_view name);

class LocalOutputStore final : public OutputStore {
  public:
    // LocalOutputStore keeps objects under `root`/<task id>/<name>; creates `root` if needed.
    explicit LocalOutputStore(std::filesystem::path root);

    void Put(std::string_view task_id, std::string_view name, std::string_view data) override;
    void PutFile(std::string_view task_id, std::string_view name, const std::string& path) override;
    std::optional<ObjectInfo> Stat(std::string_view task_id, std::string_view name) override;
    std::string Read(std::string_view task_id, std::string_view name, std::uint64_t offset,
                     std::uint64_t length) override;
    void DeleteObject(std::string_view task_id, std::string_view name) override;
    void DeleteTask(std::string_view task_id) override;

  private:
    std::filesystem::path PathOf(std::string_view task_id, std::string_view name) const;
    std::filesystem::path root_;
};

// UrlSigner signs output paths with HMAC-SHA-256 under a cluster-wide secret.
class UrlSigner {
  public:
    enum class Check { kValid, kExpired, kInvalid };

    UrlSigner(std::string secret, std::string public_url, const Clock& clock);

    // Url returns the absolute URL of object `name` of task `task_id`, valid for `ttl_seconds`.
    std::string Url(std::string_view task_id, std::string_view name, double ttl_seconds) const;

    // Verify checks the `expires` and `signature` query values of a request for `path`
    // (`/outputs/<task>/<name>`).
    Check Verify(std::string_view path, std::string_view expires, std::string_view signature) const;

  private:
    std::string Sign(std::string_view path, std::int64_t expires) const;
    std::string secret_;
    std::string public_url_;
    const Clock& clock_;
};

}  // namespace genhost::outputs
