// genhost/store/voices_repo.hpp
//
// Provides VoiceRepo: the custom voices of migrations/0009_voices.sql. The API creates, reads,
// lists, renames and deletes voices (awaitable methods); creating one queues a job of kind
// `voice` in the same transaction, which any node's job engine runs (tasks/voice_processor.hpp),
// ending it READY with its profile or FAILED (*Sync methods, compare-and-set on the revision).
// Every read and change is scoped to an organization: a foreign id is not found. Also queues the
// expiry of output-store folders (ExpireOutput), the `output_expiry` job kind.
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

// VoiceRecord is a voice as the API shows it, and what synthesis needs of it.
struct VoiceRecord {
    std::string id;
    std::string org_id;
    std::string name;
    std::optional<std::string> description;
    std::string source;  // "audio" or "text"
    ProcessingStatus status = ProcessingStatus::kProcessing;
    std::string failure_reason;  // kFailed
    std::string profile_json;    // kReady: media::ProfileToJson's text
    std::int64_t revision = 1;
    SysTime created_at;
    SysTime updated_at;
};

// NewVoice is what POST /v1/voices stores (PROCESSING).
struct NewVoice {
    std::string id;
    std::string org_id;
    std::string name;
    std::optional<std::string> description;
    std::string source;       // "audio" or "text"
    std::string model;        // text
    std::string prompt;       // text
    std::string sample_name;  // audio: the stored sample, or else
    std::string sample_uri;   // a URL to fetch first
};

// VoiceChange is what PATCH /v1/voices/{id} changes; unset members stay.
struct VoiceChange {
    std::optional<std::string> name;
    bool set_description = false;
    std::optional<std::string> description;  // with set_description: nullopt clears it
};

struct VoicePage {
    std::vector<VoiceRecord> voices;
    bool more = false;
};

// VoiceWork is what processing one revision needs.
struct VoiceWork {
    std::string id;
    std::string org_id;
    std::int64_t revision = 0;
    std::string source;
    std::string model;
    std::string prompt;
    std::string sample_name;
    std::string sample_uri;
};

class VoiceRepo {
  public:
    explicit VoiceRepo(Database& db) : db_(db) { Prepare(db); }
    static void Prepare(Database& db);

    boost::asio::awaitable<VoiceRecord> Create(NewVoice voice);
    boost::asio::awaitable<std::optional<VoiceRecord>> Get(std::string org_id, std::string id);
    // List: newest first, keyset pages.
    boost::asio::awaitable<VoicePage> List(std::string org_id, int limit,
                                           std::optional<Keyset> after);
    // Update renames or re-describes voice `id`; nullopt when there is none. An empty change
    // answers the voice as it is.
    boost::asio::awaitable<std::optional<VoiceRecord>> Update(std::string org_id, std::string id,
                                                              VoiceChange change);
    boost::asio::awaitable<bool> Delete(std::string org_id, std::string id);

    // LoadWorkSync returns what processing revision `revision` of voice `id` needs, or nullopt
    // when it is gone or no longer PROCESSING at that revision.
    std::optional<VoiceWork> LoadWorkSync(const std::string& id, std::int64_t revision);
    // CompleteSync ends the revision READY with `profile_json`; FailSync FAILED with `reason`.
    // False, changing nothing, when the voice was deleted or is no longer PROCESSING at it.
    bool CompleteSync(const VoiceWork& work, const std::string& profile_json);
    bool FailSync(const VoiceWork& work, const std::string& reason);

    // ExpireOutput has the output-store folder `folder` deleted after `seconds` (a job of kind
    // `output_expiry`); queuing it again moves the time.
    boost::asio::awaitable<void> ExpireOutput(std::string folder, double seconds);

  private:
    Database& db_;
};

}  // namespace genhost::store
