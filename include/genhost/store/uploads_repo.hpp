// genhost/store/uploads_repo.hpp
//
// Provides UploadRepo: the ephemeral uploads of migrations/0003_uploads.sql. An upload is
// created by POST /v1/uploads, claimed by the one multipart POST its policy authorises
// (Claim; a failed POST gives the claim back with Release), completed with what was received
// (Complete), read by input resolution (FindComplete*) and deleted by the sweeper once expired
// (DeleteExpiredSync). The file bytes live on disk (DATA_DIR/inputs/uploads/<id>); this
// repository never touches them.
//
// Awaitable methods run their SQL on the database pool and are for I/O-thread coroutines; the
// *Sync methods block and are for worker, sweeper and blocking-pool threads. Errors:
// DatabaseUnavailable when the database is unreachable; std::runtime_error for unexpected SQL
// failures. Ids that are not UUIDs are reported as not found, never sent to SQL.
#pragma once

#include "genhost/core/clock.hpp"
#include "genhost/store/database.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

// NewUpload is what POST /v1/uploads stores.
struct NewUpload {
    std::string id;
    std::string org_id;
    std::string filename;
    std::uint64_t max_bytes = 0;
    SysTime expires_at;
};

// UploadRecord is a stored upload.
struct UploadRecord {
    std::string id;
    std::string org_id;
    std::string filename;
    std::uint64_t max_bytes = 0;
    SysTime created_at;
    SysTime expires_at;
    bool receiving = false;
    std::optional<SysTime> completed_at;
    std::uint64_t size = 0;    // completed uploads only
    std::string content_type;  // of the received file part (completed uploads only)
    std::string file_name;     // of the received file part (completed uploads only)
};

// ClaimResult is the outcome of Claim.
struct ClaimResult {
    enum class Kind {
        kClaimed,          // the caller may now receive the file
        kNotFound,         // no such upload (never created, or swept)
        kExpired,          // past its expiry
        kAlreadyReceived,  // complete, or another POST is receiving it now
    } kind = Kind::kNotFound;
    std::string org_id;           // kClaimed
    std::uint64_t max_bytes = 0;  // kClaimed
};

class UploadRepo {
  public:
    // Registers the repository's statements with `db` (Prepare), at any time.
    explicit UploadRepo(Database& db) : db_(db) { Prepare(db); }

    // Prepare registers this repository's statements with `db` (before db.Start()).
    static void Prepare(Database& db);

    // Create stores `upload` (committed before it returns).
    boost::asio::awaitable<void> Create(NewUpload upload);

    // Claim marks upload `id` as receiving its file, unless it is unknown, expired, complete or
    // being received by another request (one round trip, atomic).
    boost::asio::awaitable<ClaimResult> Claim(std::string id);

    // Release gives back the claim of a POST that failed, so the policy may be used again.
    boost::asio::awaitable<void> Release(std::string id);

    // Complete records the received file of a claimed upload; false if the upload is no longer
    // claimed (it was swept meanwhile).
    boost::asio::awaitable<bool> Complete(std::string id, std::uint64_t size,
                                          std::string content_type, std::string file_name);

    // FindComplete returns upload `id` if it belongs to `org_id`, is complete and has not
    // expired; nullopt for an unknown, foreign, incomplete or expired upload.
    boost::asio::awaitable<std::optional<UploadRecord>> FindComplete(std::string org_id,
                                                                     std::string id);
    std::optional<UploadRecord> FindCompleteSync(const std::string& org_id, const std::string& id);

    // GetSync returns upload `id` in any state (operators and tests).
    std::optional<UploadRecord> GetSync(const std::string& id);

    // DeleteExpiredSync deletes up to `limit` expired uploads and returns their ids, so the
    // caller can delete their files. Several nodes may sweep at once: each row goes to one of
    // them. An upload still being received is left alone for an hour past its claim.
    std::vector<std::string> DeleteExpiredSync(int limit);

    // ExistingSync returns those of `ids` (UUIDs) that still have a row.
    std::vector<std::string> ExistingSync(const std::vector<std::string>& ids);

  private:
    Database& db_;
};

}  // namespace genhost::store
