#include "genhost/tasks/realtime_sessions.hpp"

#include "genhost/core/crypto.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <thread>

namespace genhost::tasks {

std::string ConversationFolder(std::string_view id) { return "conversation-" + std::string(id); }

bool LiveSession::Attach(const std::string& identity, std::shared_ptr<Participant> p,
                         std::string* why, const std::string& welcome) {
    {
        std::lock_guard lock(mu_);
        if (closed_) {
            if (why) *why = "the session has ended";
            return false;
        }
        if (participants_.count(identity) != 0) {
            if (why) *why = "a participant '" + identity + "' is already connected";
            return false;
        }
        if (!welcome.empty()) p->Send(welcome, false);
        participants_.emplace(identity, std::move(p));
        events_.push_back({RoomEvent::Kind::kJoined, identity, {}});
    }
    cv_.notify_all();
    return true;
}

void LiveSession::Detach(const std::string& identity, const Participant* p) {
    {
        std::lock_guard lock(mu_);
        const auto it = participants_.find(identity);
        if (it == participants_.end() || it->second.get() != p) return;
        participants_.erase(it);
        if (closed_) return;
        events_.push_back({RoomEvent::Kind::kLeft, identity, {}});
    }
    cv_.notify_all();
}

bool LiveSession::Post(RoomEvent e) {
    {
        std::lock_guard lock(mu_);
        if (closed_) return true;  // nothing is read any more: not the sender's fault
        std::size_t& queued = queued_bytes_[e.identity];
        const std::size_t bytes = e.data.size() + kEventOverhead;
        if (queued + bytes > kMaxQueuedBytes) return false;
        queued += bytes;
        e.arrived = std::chrono::steady_clock::now();
        events_.push_back(std::move(e));
    }
    cv_.notify_all();
    return true;
}

std::optional<RoomEvent> LiveSession::Next(std::chrono::milliseconds wait) {
    std::optional<RoomEvent> out;
    {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, wait, [&] { return !events_.empty() || closed_; });
        if (events_.empty()) return out;
        out = std::move(events_.front());
        events_.pop_front();
        if (out->kind == RoomEvent::Kind::kText || out->kind == RoomEvent::Kind::kBinary) {
            queued_bytes_[out->identity] -= out->data.size() + kEventOverhead;
        }
    }
    if (observe) observe(*out);
    return out;
}

bool LiveSession::SendTo(const std::string& identity, std::string data, bool binary) {
    std::shared_ptr<Participant> p;
    {
        std::lock_guard lock(mu_);
        const auto it = participants_.find(identity);
        if (it == participants_.end()) return false;
        p = it->second;
    }
    return p->Send(std::move(data), binary);
}

void LiveSession::Broadcast(const std::string& data, bool binary) {
    std::vector<std::shared_ptr<Participant>> all;
    {
        std::lock_guard lock(mu_);
        for (const auto& [identity, p] : participants_) all.push_back(p);
    }
    for (const auto& p : all) p->Send(data, binary);
}

void LiveSession::Disconnect(const std::string& identity, std::uint16_t code,
                             const std::string& reason) {
    std::shared_ptr<Participant> p;
    {
        std::lock_guard lock(mu_);
        const auto it = participants_.find(identity);
        if (it == participants_.end()) return;
        p = it->second;
    }
    p->Send(nlohmann::json{{"type", "error"}, {"message", reason}}.dump(), false);
    p->Close(code, reason);
}

bool LiveSession::Present(const std::string& identity) const {
    std::lock_guard lock(mu_);
    return participants_.count(identity) != 0;
}

void LiveSession::Close(std::uint16_t code, const std::string& reason) {
    std::map<std::string, std::shared_ptr<Participant>> all;
    {
        std::lock_guard lock(mu_);
        closed_ = true;
        all.swap(participants_);
        events_.clear();
        queued_bytes_.clear();
    }
    cv_.notify_all();
    for (const auto& [identity, p] : all) p->Close(code, reason);
}

std::shared_ptr<LiveSession> LiveSessions::Open(const std::string& id) {
    std::lock_guard lock(mu_);
    auto& slot = sessions_[id];
    slot = std::make_shared<LiveSession>(id);
    return slot;
}

std::shared_ptr<LiveSession> LiveSessions::Find(const std::string& id) const {
    std::lock_guard lock(mu_);
    const auto it = sessions_.find(id);
    return it == sessions_.end() ? nullptr : it->second;
}

void LiveSessions::Remove(const std::string& id) {
    std::lock_guard lock(mu_);
    sessions_.erase(id);
}

std::size_t LiveSessions::size() const {
    std::lock_guard lock(mu_);
    return sessions_.size();
}

RealtimeRunner::RealtimeRunner(RealtimeOptions options, store::RealtimeRepo& repo,
                               LiveSessions& live, std::function<int(int tier)> limit_of,
                               SessionTurns turns)
    : options_(std::move(options)),
      repo_(repo),
      live_(live),
      limit_of_(std::move(limit_of)),
      turns_(std::move(turns)) {
    if (options_.metrics != nullptr) {
        ended_ = &options_.metrics->Counter(
            "genhost_realtime_sessions_ended_total",
            "Realtime sessions ended by this process, by status and failureCode (empty when "
            "COMPLETED). Cancellations through the API end a session where they are made.",
            {"status", "code"});
    }
}

void RealtimeRunner::End(const std::string& id, store::SessionStatus status,
                         const std::string& failure, const std::string& code) {
    if (repo_.EndSync(id, options_.owner, status, failure, code) && ended_ != nullptr) {
        ended_->Inc({store::SessionStatusName(status), code});
    }
}

void RealtimeRunner::FailLost(const std::string& id, const std::string& by,
                              const std::string& failure, const std::string& code) {
    if (repo_.FailLostSync(id, by, failure, code) && ended_ != nullptr) {
        ended_->Inc({"FAILED", code});
    }
}

JobKind RealtimeRunner::Kind() {
    JobKind kind;
    kind.run = [this](const store::JobClaim& job, const std::atomic<bool>& lost) {
        return RunSync(job, lost);
    };
    // Its runs kept dying: whatever state the session was left in, it ends.
    kind.failed = [this](const store::JobClaim& job, const std::string& reason) {
        FailLost(job.subject, "", "The session could not be run: " + reason, "INTERNAL");
    };
    return kind;
}

namespace {

constexpr const char* kNodeLost = "INTERNAL.NODE_LOST";

// LiveGuard removes the live session and disconnects its participants however the run ends.
struct LiveGuard {
    LiveSessions& all;
    std::shared_ptr<LiveSession> live;
    std::uint16_t code = 1000;
    std::string reason = "the session ended";
    ~LiveGuard() {
        live->Close(code, reason);
        all.Remove(live->id());
    }
};

}  // namespace

std::shared_ptr<std::atomic<bool>> RealtimeRunner::WakeFlag(const std::string& id) {
    std::lock_guard lock(wake_mu_);
    auto& flag = wake_flags_[id];
    if (!flag) flag = std::make_shared<std::atomic<bool>>(false);
    return flag;
}

void RealtimeRunner::DropWakeFlag(const std::string& id) {
    std::lock_guard lock(wake_mu_);
    wake_flags_.erase(id);
}

void RealtimeRunner::Wake(const std::string& id) {
    std::lock_guard lock(wake_mu_);
    for (auto& [session, flag] : wake_flags_) {
        if (id.empty() || session == id) *flag = true;
    }
}

JobResult RealtimeRunner::RunSync(const store::JobClaim& job, const std::atomic<bool>& lease_lost) {
    const std::string& id = job.subject;
    // Set by Wake: the row is read at the next look instead of at the next reread.
    const auto woken = WakeFlag(id);
    struct DropFlag {
        RealtimeRunner* runner;
        const std::string& id;
        ~DropFlag() { runner->DropWakeFlag(id); }
    } drop_flag{this, id};
    auto session = repo_.LoadSync(id);
    if (!session || store::IsTerminal(session->status)) return JobResult::Done();
    const std::string verdict = repo_.AdmitSync(id, options_.owner, limit_of_(session->org_tier));
    if (verdict == "queued") return JobResult::Wait(options_.queued_recheck_seconds);
    if (verdict == "taken") {
        // Admitted by a node whose lease expired: that node died with the session.
        FailLost(id, options_.owner, "The node running the session stopped", kNodeLost);
        return JobResult::Done();
    }
    if (verdict != "admitted") {
        // Already past NOT_READY under this very name (a run of this node that lost its job):
        // it cannot be resumed.
        End(id, store::SessionStatus::kFailed, "The node running the session stopped", kNodeLost);
        return JobResult::Done();
    }
    if (!session->integration_json.empty()) {
        const auto type = nlohmann::json::parse(session->integration_json).value("type", "");
        End(id, store::SessionStatus::kFailed,
            "genhost does not connect to " +
                std::string(type == "voice_provider" ? "external voice providers"
                                                     : "external rooms") +
                " (integration " + type +
                "): create the session without it to use genhost's own media plane",
            "THIRD_PARTY.UNSUPPORTED");
        return JobResult::Done();
    }
    LiveGuard guard{live_, live_.Open(id)};
    auto& live = *guard.live;
    live.observe = [this, &id](const RoomEvent& e) {
        if (e.identity != "backend") return;
        if (e.kind == RoomEvent::Kind::kJoined) repo_.SetBackendSync(id, options_.owner, true);
        if (e.kind == RoomEvent::Kind::kLeft) repo_.SetBackendSync(id, options_.owner, false);
    };
    const std::string key = Base64UrlEncode(RandomBytes(32));
    if (!repo_.MarkReadySync(id, options_.owner, key, options_.ready_seconds, options_.media_url)) {
        return JobResult::Done();  // cancelled meanwhile
    }
    // READY: wait for the user, the key's expiry, a cancel, or the lease's loss.
    auto next_read = std::chrono::steady_clock::now();
    // The key's expiry, known here without reading the row (the row decides: it is read from
    // then on at every look).
    const auto ready_until =
        next_read + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(options_.ready_seconds));
    for (;;) {
        if (lease_lost) {
            guard.code = 1001;
            guard.reason = "the node stopped running the session";
            return JobResult::Done();
        }
        const auto event = live.Next(options_.poll);
        if (event && event->kind == RoomEvent::Kind::kJoined && event->identity == "user") {
            if (!repo_.MarkRunningSync(id, options_.owner)) return JobResult::Done();
            break;
        }
        const auto now = std::chrono::steady_clock::now();
        if (!woken->exchange(false) && now < next_read && now < ready_until) continue;
        next_read = std::chrono::steady_clock::now() + options_.reread;
        session = repo_.LoadSync(id);
        if (!session || session->status != store::SessionStatus::kReady) {
            guard.reason = "the session was cancelled";
            return JobResult::Done();
        }
        if (session->expires_at && session->now >= *session->expires_at) {
            End(id, store::SessionStatus::kFailed,
                "Nobody joined the session before its key expired", "SESSION.NOT_JOINED");
            return JobResult::Done();
        }
    }
    // RUNNING: the conversation, watched for cancellation, maxDuration and the lease.
    session = repo_.LoadSync(id);
    if (!session) return JobResult::Done();
    std::atomic<bool> stop{false};
    enum class Why { kNone, kCancelled, kMaxDuration, kLeaseLost } why = Why::kNone;
    std::mutex why_mu;
    std::condition_variable done_cv;
    bool done = false;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(session->max_duration);
    std::thread watcher([&] {
        auto watcher_read = std::chrono::steady_clock::now() + options_.reread;
        for (;;) {
            {
                std::unique_lock lock(why_mu);
                if (done_cv.wait_for(lock, options_.poll, [&] { return done; })) return;
            }
            Why found = Why::kNone;
            if (lease_lost) {
                found = Why::kLeaseLost;
            } else if (std::chrono::steady_clock::now() >= deadline) {
                found = Why::kMaxDuration;
            } else if (woken->exchange(false) || std::chrono::steady_clock::now() >= watcher_read) {
                watcher_read = std::chrono::steady_clock::now() + options_.reread;
                try {
                    const auto now = repo_.LoadSync(id);
                    if (!now || now->status != store::SessionStatus::kRunning) {
                        found = Why::kCancelled;
                    }
                } catch (const std::exception& e) {
                    spdlog::warn("realtime session {}: reading its state: {}", id, e.what());
                }
            }
            if (found != Why::kNone) {
                std::lock_guard lock(why_mu);
                why = found;
                stop = true;
                return;
            }
        }
    });
    TurnsOutcome outcome;
    try {
        outcome = turns_(*session, live, stop);
    } catch (const std::exception& e) {
        spdlog::error("realtime session {}: {}", id, e.what());
        outcome.end = SessionEnd{"The session failed: internal error", "INTERNAL"};
    }
    {
        std::lock_guard lock(why_mu);
        done = true;
    }
    done_cv.notify_all();
    watcher.join();
    // Once its end is recorded: the participants go, then what the turns left (the recording).
    const auto finish = [&] {
        live.Close(guard.code, guard.reason);
        if (!outcome.finish) return;
        try {
            outcome.finish();
        } catch (const std::exception& e) {
            spdlog::warn("realtime session {}: finishing: {}", id, e.what());
        }
    };
    switch (why) {
        case Why::kCancelled:
            guard.reason = "the session was cancelled";
            finish();
            return JobResult::Done();
        case Why::kLeaseLost:
            guard.code = 1001;
            guard.reason = "the node stopped running the session";
            finish();
            return JobResult::Done();
        case Why::kMaxDuration:
            guard.reason = "the session reached its maxDuration";
            outcome.end.reset();
            break;
        case Why::kNone:
            break;
    }
    if (outcome.end) {
        End(id, store::SessionStatus::kFailed, outcome.end->failure, outcome.end->failure_code);
    } else {
        End(id, store::SessionStatus::kCompleted, "", "");
    }
    finish();
    return JobResult::Done();
}

}  // namespace genhost::tasks
