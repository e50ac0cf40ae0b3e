// genhost/store/realtime_repo.hpp
//
// Provides RealtimeRepo: the realtime sessions and their conversations of
// migrations/0013_realtime.sql (docs/realtime.md). The API creates, reads, cancels, consumes
// and lists them (awaitable methods, scoped to an organization: a foreign id is not found); the
// session's runtime on the node that holds its job moves it through its states (*Sync methods,
// each a compare-and-set on the status and the owner, so a node that lost a session changes
// nothing) and writes the transcript.
//
// Errors: DatabaseUnavailable when the database is unreachable; std::runtime_error for
// unexpected SQL failures. Ids that are not UUIDs are reported as not found, never sent to SQL.
#pragma once

#include "genhost/core/clock.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/keyset.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

enum class SessionStatus { kNotReady, kReady, kRunning, kCompleted, kFailed, kCancelled };
std::string_view SessionStatusName(SessionStatus s);   // "NOT_READY", ...
SessionStatus ParseSessionStatus(std::string_view s);  // throws std::invalid_argument
inline bool IsTerminal(SessionStatus s) {
    return s == SessionStatus::kCompleted || s == SessionStatus::kFailed ||
           s == SessionStatus::kCancelled;
}

// RealtimeSession is a session row as the API and the runtime read it.
struct RealtimeSession {
    std::string id;
    std::string org_id;
    SysTime created_at;
    SessionStatus status = SessionStatus::kNotReady;
    bool queued = false;
    std::string model;
    std::string avatar_type;  // service-preset or custom
    std::string preset_id;    // service-preset
    std::string avatar_id;    // custom
    std::string avatar_name;  // at creation
    std::string name;         // the conversation's
    int max_duration = 300;
    std::optional<std::string> personality;
    std::optional<std::string> start_script;
    std::string tools_json = "[]";
    std::string integration_json;  // "" without one
    std::string owner;
    std::string session_key;
    std::optional<SysTime> expires_at;
    std::string media_url;
    std::optional<SysTime> consumed_at;
    bool backend_connected = false;
    std::optional<SysTime> started_at;
    std::optional<SysTime> ended_at;
    std::optional<int> duration;
    std::string failure;
    std::string failure_code;
    std::string recording_name;
    // The custom avatar as it is now: nullopt once deleted.
    struct AvatarNow {
        std::string id;
        std::string name;
        bool has_previews = false;
    };
    std::optional<AvatarNow> avatar_now;
    SysTime now;       // the database's clock when read (elapsed durations)
    int org_tier = 1;  // the organization's usage tier
};

// NewRealtimeSession is what POST /v1/realtime_sessions stores (NOT_READY).
struct NewRealtimeSession {
    std::string id;
    std::string org_id;
    std::string model;
    std::string avatar_type;
    std::string preset_id;
    std::string avatar_id;
    std::string avatar_name;
    std::string name;
    int max_duration = 300;
    std::optional<std::string> personality;
    std::optional<std::string> start_script;
    std::string tools_json = "[]";
    std::string integration_json;
    // The credit ledger (docs/credits.md): reserved when stored, settled when the session ends.
    std::int64_t reserve_credits = 0;     // maxDuration at the per-minute price
    std::int64_t credits_per_minute = 0;  // what a minute of the session costs
    std::int64_t max_spend_credits = -1;  // the tier's 30-day spend cap (-1: none)
};

// RealtimeCreated is what storing a session gave: the session, or the ledger's refusal
// ("insufficient_credits", "spend_limited"), when nothing was stored.
struct RealtimeCreated {
    std::optional<RealtimeSession> session;
    std::string refused;
};

// TranscriptEntry is one entry of a conversation's transcript.
struct TranscriptEntry {
    std::string role;  // user or assistant
    std::optional<std::string> content;
    std::optional<SysTime> at;
    std::string tool_calls_json;    // "" when none (assistant entries only)
    std::string tool_results_json;  // "" when none
};

// ConversationFilter is the query of GET /v1/avatar_conversations.
struct ConversationFilter {
    std::optional<std::string> avatar_id;
    std::optional<SysTime> start;  // created at or after
    std::optional<SysTime> end;    // created before
};

struct ConversationPage {
    std::vector<RealtimeSession> sessions;
    bool more = false;
};

// UsageDay is one UTC day of GET /v1/avatar_usage.
struct UsageDay {
    std::string date;  // YYYY-MM-DD
    int sessions = 0;
    std::int64_t seconds = 0;
};
struct UsageSummary {
    std::vector<UsageDay> days;  // only days with sessions
    std::int64_t total_seconds = 0;
    int total_sessions = 0;
    int measured = 0;  // sessions with a measured duration
};

// SessionAvatar is what a session's runtime needs of its custom avatar.
struct SessionAvatar {
    std::string name;
    std::string personality;
    std::string start_script;
    std::string portrait;    // the processed picture (JPEG bytes)
    std::string voice_json;  // {type, presetId} or {type: custom, id, profile?}: a custom voice's
                             // profile is added while the voice exists and is READY
    std::vector<std::string> document_ids;
};

enum class ConsumeOutcome { kConsumed, kUnknown, kNotReady, kAlreadyConsumed, kEnded };
enum class DeleteOutcome { kDeleted, kNotFound, kActive };

class RealtimeRepo {
  public:
    static void Prepare(Database& db);
    explicit RealtimeRepo(Database& db) : db_(db) { Prepare(db); }

    // The API's calls.
    boost::asio::awaitable<RealtimeCreated> Create(NewRealtimeSession s);
    boost::asio::awaitable<std::optional<RealtimeSession>> Get(std::string org_id, std::string id);
    // Cancel ends an active session CANCELLED; nullopt when not found, else the session after.
    boost::asio::awaitable<std::optional<RealtimeSession>> Cancel(std::string org_id,
                                                                  std::string id);
    // Consume marks a READY session's key used once (the key compared in constant time by the
    // caller first: `key` must equal the stored one, else kUnknown).
    struct Consumed {
        ConsumeOutcome outcome = ConsumeOutcome::kUnknown;
        std::optional<RealtimeSession> session;
    };
    boost::asio::awaitable<Consumed> Consume(std::string id, std::string key);
    boost::asio::awaitable<ConversationPage> ListConversations(std::string org_id,
                                                               ConversationFilter filter, int limit,
                                                               std::optional<Keyset> after);
    boost::asio::awaitable<std::vector<TranscriptEntry>> Transcript(std::string id);
    // DeleteConversation removes a finished session's row and transcript; the recording's name
    // (to delete from the output store) comes back through `recording`.
    boost::asio::awaitable<DeleteOutcome> DeleteConversation(std::string org_id, std::string id,
                                                             std::string& recording);
    boost::asio::awaitable<UsageSummary> Usage(std::string org_id, SysTime start, SysTime end);

    // The runtime's calls (blocking).
    // AdmitSync: genhost_admit_realtime_session's answer (admitted, queued, taken, ended, gone).
    std::string AdmitSync(const std::string& id, const std::string& owner, int limit);
    std::optional<RealtimeSession> LoadSync(const std::string& id);
    // AvatarSync reads custom avatar `avatar_id` of `org_id` (nullopt once it is deleted).
    std::optional<SessionAvatar> AvatarSync(const std::string& org_id,
                                            const std::string& avatar_id);
    bool MarkReadySync(const std::string& id, const std::string& owner, const std::string& key,
                       double ready_seconds, const std::string& media_url);
    bool MarkRunningSync(const std::string& id, const std::string& owner);
    // EndSync ends the owner's active session with `status` (COMPLETED, FAILED or CANCELLED is
    // not the runtime's to choose: only COMPLETED and FAILED); the duration is measured from
    // started_at. false when the session had already ended or is not the owner's.
    bool EndSync(const std::string& id, const std::string& owner, SessionStatus status,
                 const std::string& failure, const std::string& failure_code);
    // FailLostSync ends an active session whose owner is not `by` FAILED (its node died).
    bool FailLostSync(const std::string& id, const std::string& by, const std::string& failure,
                      const std::string& failure_code);
    // AppendEntrySync adds an entry at the end of the transcript; false once it holds 1000.
    bool AppendEntrySync(const std::string& id, const TranscriptEntry& entry);
    // SetBackendSync records that a backend handler joined (true: refused, false, when one is
    // already in, or the session is not READY or RUNNING) or left the owner's session.
    bool SetBackendSync(const std::string& id, const std::string& owner, bool connected);
    void SetRecordingSync(const std::string& id, const std::string& name);

  private:
    Database& db_;
};

}  // namespace genhost::store
