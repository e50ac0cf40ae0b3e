// genhost/tasks/realtime_sessions.hpp
//
// Provides the runtime side of realtime sessions (docs/realtime.md):
//
// - LiveSession / LiveSessions: the meeting point, inside one process, between the media plane
//   (the WebSocket endpoint of src/api, which attaches participants and posts what they send)
//   and the thread that runs the session. Participants are seen through the Participant
//   interface, so this module knows nothing of HTTP.
// - RealtimeRunner: the `realtime_session` job kind. A runner thread of the node's realtime
//   engine claims a session's job and keeps it, under the job's lease, for the session's whole
//   life: it admits the session against the organization's concurrent-session limit (waiting,
//   `queued`, while there is no place), makes it READY with a fresh session key, waits for a
//   participant (RUNNING) until the key expires, runs the conversation, and ends it COMPLETED
//   (END_CALL, the last participant gone, maxDuration reached) or FAILED. A claim that finds the
//   session admitted by another node (which died: its lease expired) ends it FAILED with
//   INTERNAL.NODE_LOST. A cancelled session (DELETE) is noticed within `poll` and its
//   participants are disconnected.
//
// Failure codes (stable): SESSION.NOT_JOINED (nobody joined before expiresAt),
// INTERNAL.NODE_LOST (the node running it died or stopped), THIRD_PARTY.UNSUPPORTED (an
// integration or rtcroom session: external rooms and voice vendors are not connected by
// genhost), INTERNAL (anything else).
#pragma once

#include "genhost/core/metrics.hpp"
#include "genhost/store/realtime_repo.hpp"
#include "genhost/tasks/job_engine.hpp"
#include "genhost/tasks/job_kinds.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace genhost::tasks {

// ConversationFolder is the output-store folder of conversation `id`: its recording.
std::string ConversationFolder(std::string_view id);

// Participant is one connection to a session's room, as the runtime sees it. Thread-safe.
class Participant {
  public:
    virtual ~Participant() = default;
    // Send queues a message (a text frame: JSON; binary: media). false when it was dropped
    // (closed, or the connection is too far behind).
    virtual bool Send(std::string data, bool binary) = 0;
    virtual void Close(std::uint16_t code, std::string reason) = 0;
};

// RoomEvent is what the media plane tells the runtime.
struct RoomEvent {
    enum class Kind { kJoined, kLeft, kText, kBinary } kind = Kind::kText;
    std::string identity;  // "user" or "backend"
    std::string data;      // kText: a JSON message; kBinary: a media frame
    // When the media plane posted it (Post sets it): the runtime paces a participant's audio by
    // arrival, however late it reads the event.
    std::chrono::steady_clock::time_point arrived{};
};

class LiveSession {
  public:
    explicit LiveSession(std::string id) : id_(std::move(id)) {}
    const std::string& id() const { return id_; }

    // The media plane's side. Attach admits `p` as `identity` (false, and `why`, when the
    // session is closed or the identity is present already) and posts kJoined; Detach removes
    // it (only if it is still `p`) and posts kLeft; Post queues what a participant sent.
    // `welcome`, when not empty, is sent to `p` first, before anything the runtime sends it.
    bool Attach(const std::string& identity, std::shared_ptr<Participant> p, std::string* why,
                const std::string& welcome = {});
    void Detach(const std::string& identity, const Participant* p);
    // Post returns false, and drops the event, when what `e.identity` has queued and the runtime
    // has not read yet would pass kMaxQueuedBytes: the participant sends faster than the session
    // can take (the media plane then closes its socket). Each event counts its bytes and
    // kEventOverhead, so a flood of empty messages is bounded too.
    bool Post(RoomEvent e);
    static constexpr std::size_t kMaxQueuedBytes = 1 << 20;
    static constexpr std::size_t kEventOverhead = 64;

    // The runtime's side. Next waits up to `wait` for the next event; `observe`, when set, sees
    // each event first, on the caller's thread (the runner keeps the backend's presence in the
    // database with it).
    std::optional<RoomEvent> Next(std::chrono::milliseconds wait);
    std::function<void(const RoomEvent&)> observe;
    // SendTo / Broadcast queue a message for one participant / all of them.
    bool SendTo(const std::string& identity, std::string data, bool binary);
    void Broadcast(const std::string& data, bool binary);
    bool Present(const std::string& identity) const;
    // Disconnect sends `identity` {"type": "error", "message": reason} and closes its
    // connection with `code` (its Detach follows, as when it leaves).
    void Disconnect(const std::string& identity, std::uint16_t code, const std::string& reason);
    // Close disconnects everyone with `code` and refuses later Attach calls.
    void Close(std::uint16_t code, const std::string& reason);

  private:
    const std::string id_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool closed_ = false;
    std::map<std::string, std::shared_ptr<Participant>> participants_;
    std::deque<RoomEvent> events_;
    std::map<std::string, std::size_t> queued_bytes_;  // by identity: posted, not yet read
};

// LiveSessions are the sessions this process runs, by id.
class LiveSessions {
  public:
    std::shared_ptr<LiveSession> Open(const std::string& id);
    std::shared_ptr<LiveSession> Find(const std::string& id) const;
    void Remove(const std::string& id);
    std::size_t size() const;

  private:
    mutable std::mutex mu_;
    std::map<std::string, std::shared_ptr<LiveSession>> sessions_;
};

struct RealtimeOptions {
    std::string owner;           // this node's name (the job engine's lease owner)
    std::string media_url;       // this node's media plane, as consume answers it
    double ready_seconds = 120;  // how long a READY session waits for its first participant
    // How often the wait for the user and the watcher look at their flags (in memory), and how
    // often they read the session's row anyway: a cancel arrives as Wake (the genhost_sessions
    // notification), and the reread is only the safety net for a lost notification.
    std::chrono::milliseconds poll{250};
    std::chrono::milliseconds reread{30000};
    double queued_recheck_seconds = 1;  // a queued session asks for a place again after this
    // Where the sessions this node ends are counted (genhost_realtime_sessions_ended_total{status,
    // code}); null: nowhere.
    metrics::Registry* metrics = nullptr;
};

// SessionTurns is what runs a session once a participant joined: it gets the events and answers
// through the LiveSession until the session should end. Returns how it ended (`end`: nullopt for
// a normal end, COMPLETED, else {failure, failureCode}) and what is left to do once that end is
// recorded and the participants are gone (`finish`: the recording), so that neither the
// session's duration nor its charge counts that work. `stop` turns true when the session must
// stop now (cancelled, lease lost, maxDuration reached): it returns promptly then.
struct SessionEnd {
    std::string failure;
    std::string failure_code;
};
struct TurnsOutcome {
    std::optional<SessionEnd> end;
    std::function<void()> finish;  // may be empty; run on the runner's thread, before it returns
};
using SessionTurns = std::function<TurnsOutcome(const store::RealtimeSession& session,
                                                LiveSession& live, const std::atomic<bool>& stop)>;

class RealtimeRunner {
  public:
    // `limit_of` answers the concurrent-session limit of an organization of usage tier `tier`.
    RealtimeRunner(RealtimeOptions options, store::RealtimeRepo& repo, LiveSessions& live,
                   std::function<int(int tier)> limit_of, SessionTurns turns);

    JobKind Kind();

    // RunSync runs one claimed job (the Kind's `run`).
    JobResult RunSync(const store::JobClaim& job, const std::atomic<bool>& lease_lost);

    // Wake makes the run of session `id` read its row now (a cancel through the API, told by
    // the genhost_sessions notification); an empty id wakes every session run here.
    void Wake(const std::string& id);

  private:
    // End and FailLost end session `id` as repo_'s EndSync and FailLostSync do, and count the
    // end when it was this call's.
    void End(const std::string& id, store::SessionStatus status, const std::string& failure,
             const std::string& code);
    void FailLost(const std::string& id, const std::string& by, const std::string& failure,
                  const std::string& code);
    // WakeFlag registers session `id`'s flag for Wake while the run lasts.
    std::shared_ptr<std::atomic<bool>> WakeFlag(const std::string& id);
    void DropWakeFlag(const std::string& id);
    std::mutex wake_mu_;
    std::map<std::string, std::shared_ptr<std::atomic<bool>>> wake_flags_;

    RealtimeOptions options_;
    store::RealtimeRepo& repo_;
    LiveSessions& live_;
    std::function<int(int)> limit_of_;
    SessionTurns turns_;
    metrics::Family* ended_ = nullptr;  // genhost_realtime_sessions_ended_total, when counted
};

}  // namespace genhost::tasks
