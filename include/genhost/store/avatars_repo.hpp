// genhost/store/avatars_repo.hpp
//
// Provides AvatarRepo: the custom avatars of migrations/0005_avatars.sql. The API creates,
// reads, lists, updates and deletes them (awaitable methods); every write that leaves an avatar
// PROCESSING queues a job of kind `avatar` for its revision in the same transaction
// (migrations/0007_jobs.sql), which any node's job engine runs, completing or failing that
// revision (*Sync methods); avatar_videos reads
// a READY avatar's portrait (Portrait). Every read and change is scoped to an organization: a
// foreign id is not found. The reference image's bytes live in the output store
// (`avatar-<id>/<source name>`); this repository keeps its name and the processed portrait.
//
// Errors: DatabaseUnavailable when the database is unreachable; std::runtime_error for
// unexpected SQL failures. Ids that are not UUIDs are reported as not found, never sent to SQL.
#pragma once

#include "genhost/core/clock.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/keyset.hpp"
#include "genhost/store/processing_status.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

// CustomVoiceInfo is what an avatar shows of the custom voice it uses.
struct CustomVoiceInfo {
    std::string name;
    std::optional<std::string> description;
};

// AvatarRecord is an avatar as the API shows it.
struct AvatarRecord {
    std::string id;
    std::string org_id;
    std::string name;
    std::string personality;
    std::optional<std::string> start_script;
    std::string voice_json;  // the request form: {"type":..., "presetId"|"id": ...}
    // A custom voice that still exists (nullopt for a preset voice, or one deleted since).
    std::optional<CustomVoiceInfo> custom_voice;
    std::vector<std::string> document_ids;
    std::string image_processing;  // "optimize" or "none"
    ProcessingStatus status = ProcessingStatus::kProcessing;
    std::string failure_reason;  // FAILED only
    bool has_previews = false;   // the output store holds reference.jpg and processed.jpg
    int revision = 1;
    SysTime created_at;
    SysTime updated_at;
};

// NewAvatar is what POST /v1/avatars stores (PROCESSING).
struct NewAvatar {
    std::string id;
    std::string org_id;
    std::string name;
    std::string personality;
    std::optional<std::string> start_script;
    std::string voice_json;
    std::vector<std::string> document_ids;
    std::string image_processing = "optimize";
    // The stored reference image (its object name), or else a URL the processor has to fetch.
    std::string source_name;
    std::string source_uri;
};

// AvatarChange is what PATCH /v1/avatars/{id} changes; unset members stay as they are.
struct AvatarChange {
    std::optional<std::string> name;
    std::optional<std::string> personality;
    bool set_start_script = false;
    std::optional<std::string> start_script;  // with set_start_script: nullopt clears it
    std::optional<std::string> voice_json;
    std::optional<std::vector<std::string>> document_ids;
    std::optional<std::string> image_processing;
    bool new_source = false;  // a new reference image: `source_name`, or `source_uri` to fetch
    std::string source_name;
    std::string source_uri;
};

// AvatarUpdate is the outcome of Update.
struct AvatarUpdate {
    // kMissingDocuments: a document of the new documentIds is not (or no longer) one of the
    // organization's.
    enum class Kind { kUpdated, kNotFound, kConflict, kMissingDocuments } kind = Kind::kNotFound;
    AvatarRecord avatar;  // kUpdated: the avatar, PROCESSING again
    ProcessingStatus status = ProcessingStatus::kProcessing;  // kConflict: what refused it
    std::string previous_source;  // kUpdated with a new source: the replaced object, if any
};

// AvatarPage is one page of List.
struct AvatarPage {
    std::vector<AvatarRecord> avatars;
    bool more = false;  // another page follows the last avatar
};

// PortraitLookup is what avatar_videos needs of a custom avatar.
struct PortraitLookup {
    bool found = false;
    ProcessingStatus status = ProcessingStatus::kProcessing;
    std::string portrait;  // READY: the processed picture's bytes (JPEG)
    std::string voice_json;
};

// AvatarClaim is what processing one revision of a PROCESSING avatar needs.
struct AvatarClaim {
    std::string id;
    std::string org_id;
    int revision = 0;
    std::string image_processing;
    std::string source_name;  // the stored reference image, when `source_uri` is empty
    std::string source_uri;   // a URL to fetch first
};

class AvatarRepo {
  public:
    // Registers the repository's statements with `db` (Prepare), at any time.
    explicit AvatarRepo(Database& db) : db_(db) { Prepare(db); }

    // Prepare registers this repository's statements with `db` (before db.Start()).
    static void Prepare(Database& db);

    // Create stores `avatar` PROCESSING (committed before it returns) and returns it; nullopt,
    // storing nothing, when one of its documents is not (or no longer) one of the
    // organization's. The documents stay until it commits (a concurrent delete waits).
    boost::asio::awaitable<std::optional<AvatarRecord>> Create(NewAvatar avatar);

    // Get returns avatar `id` of `org_id`, or nullopt.
    boost::asio::awaitable<std::optional<AvatarRecord>> Get(std::string org_id, std::string id);

    // List returns up to `limit` avatars of `org_id`, newest first, after `after` if given.
    boost::asio::awaitable<AvatarPage> List(std::string org_id, int limit,
                                            std::optional<Keyset> after);

    // Update applies `change` to avatar `id` of `org_id` and makes it PROCESSING again (a new
    // revision), unless it is unknown (kNotFound) or still PROCESSING (kConflict).
    boost::asio::awaitable<AvatarUpdate> Update(std::string org_id, std::string id,
                                                AvatarChange change);

    // Delete removes avatar `id` of `org_id`; false if there was none.
    boost::asio::awaitable<bool> Delete(std::string org_id, std::string id);

    // Portrait returns the status, portrait and voice of avatar `id` of `org_id`.
    boost::asio::awaitable<PortraitLookup> Portrait(std::string org_id, std::string id);

    // LoadClaimSync returns what processing revision `revision` of avatar `id` needs, or nullopt
    // when the avatar is gone, changed since (another revision) or no longer PROCESSING. The job
    // engine's lease (tasks/avatar_processor.hpp) makes one node work on a revision at a time.
    std::optional<AvatarClaim> LoadClaimSync(const std::string& id, std::int64_t revision);

    // CompleteSync ends the revision READY with `portrait`; FailSync ends it FAILED with
    // `reason`. Both return false, changing nothing, when the avatar was deleted or updated
    // meanwhile (compare-and-set on the revision).
    bool CompleteSync(const AvatarClaim& claim, const std::string& portrait);
    bool FailSync(const AvatarClaim& claim, const std::string& reason);

    // SourceStoredSync records that the revision's source is now the output store's object
    // `name`; false when the avatar changed meanwhile.
    bool SourceStoredSync(const AvatarClaim& claim, const std::string& name);

    // ExistsSync reports whether avatar `id` still exists (any organization).
    bool ExistsSync(const std::string& id);

  private:
    Database& db_;
};

}  // namespace genhost::store
