#include "genhost/tasks/realtime_conversation.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/core/utf8.hpp"
#include "genhost/media/video.hpp"
#include "genhost/providers/live_avatar.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace genhost::tasks {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr int kRate = providers::LiveAvatar::kSampleRate;
constexpr std::uint8_t kAudioMessage = 0x01;
constexpr std::uint8_t kVideoMessage = 0x02;
constexpr int kPreRollMs = 200;  // audio before the detector's start given to the recognizer
constexpr const char* kInterrupted = " [interrupted]";
// What a participant's messages may be (docs/realtime.md, "Limits"): the nesting of a data
// message, the bytes of a typed turn, the audio a user may send ahead of real time, and the user
// turns that may wait for the avatar's answer.
constexpr std::size_t kMaxMessageDepth = 64;
constexpr std::size_t kMaxTypedBytes = 2000;
constexpr std::int64_t kAudioAheadMs = 1000;
constexpr std::uint64_t kFloodAudioMs = 10000;  // dropped past this, the user is disconnected
constexpr std::uint16_t kPolicyViolation = 1008;
constexpr std::size_t kMaxWaitingTurns = 4;
constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool HasNul(const json& value) {
    if (value.is_string())
        return value.get_ref<const std::string&>().find('\0') != std::string::npos;
    if (value.is_array()) return std::any_of(value.begin(), value.end(), HasNul);
    if (value.is_object()) {
        for (const auto& [key, item] : value.items()) {
            if (key.find('\0') != std::string::npos || HasNul(item)) return true;
        }
    }
    return false;
}

// ScrubNul replaces U+0000 in `text` (which PostgreSQL cannot store: text ends there, jsonb
// refuses it) with U+FFFD; what the engine says or a tool returns is kept, not refused.
std::string ScrubNul(std::string text) {
    for (std::size_t at; (at = text.find('\0')) != std::string::npos;) {
        text.replace(at, 1, kReplacement);
    }
    return text;
}

void ScrubNul(json& value) {
    if (value.is_string()) {
        auto& text = value.get_ref<std::string&>();
        if (text.find('\0') != std::string::npos) text = ScrubNul(std::move(text));
    } else if (value.is_array()) {
        for (auto& item : value) ScrubNul(item);
    } else if (value.is_object()) {
        json scrubbed = json::object();
        for (auto& [key, item] : value.items()) {
            ScrubNul(item);
            scrubbed[ScrubNul(key)] = std::move(item);
        }
        value = std::move(scrubbed);
    }
}

// ParseDataMessage reads a participant's text message: a JSON object, nested at most
// kMaxMessageDepth deep, whose "type" is a string, with no U+0000 anywhere. nullopt, and `why`,
// otherwise.
std::optional<json> ParseDataMessage(const std::string& data, std::string& why) {
    if (JsonNestingDepth(data) > kMaxMessageDepth) {
        why = "The message nests deeper than " + std::to_string(kMaxMessageDepth) + " levels";
        return std::nullopt;
    }
    json message = json::parse(data, nullptr, false);
    if (!message.is_object()) {
        why = "A data message is a JSON object";
        return std::nullopt;
    }
    const auto type = message.find("type");
    if (type == message.end() || !type->is_string()) {
        why = "A data message has a string \"type\"";
        return std::nullopt;
    }
    if (HasNul(message)) {
        why = "A data message must not contain U+0000";
        return std::nullopt;
    }
    return message;
}

// MediaMessage is a binary message of the media plane: kind, the time in ms since the session
// started (little-endian uint32), the payload.
std::string MediaMessage(std::uint8_t kind, std::uint32_t ms, const void* data, std::size_t size) {
    std::string out(5 + size, '\0');
    out[0] = static_cast<char>(kind);
    for (int i = 0; i < 4; ++i) out[1 + i] = static_cast<char>((ms >> (8 * i)) & 0xff);
    if (size > 0) std::memcpy(out.data() + 5, data, size);
    return out;
}

SysTime Now() { return SystemClock::Instance().Now(); }

std::string Spaced(std::string name) {
    std::replace(name.begin(), name.end(), '_', ' ');
    return name;
}

// SentenceEnd finds the end of the first whole sentence of `text` (after . ! ? followed by a
// space), or npos.
std::size_t SentenceEnd(const std::string& text) {
    for (std::size_t i = 0; i + 1 < text.size(); ++i) {
        if ((text[i] == '.' || text[i] == '!' || text[i] == '?') && text[i + 1] == ' ') {
            return i + 1;
        }
    }
    return std::string::npos;
}

class Conversation {
  public:
    Conversation(const ConversationOptions& options, const ConversationDeps& deps,
                 const store::RealtimeSession& row, LiveSession& live,
                 const std::atomic<bool>& stop)
        : options_(options), deps_(deps), row_(row), live_(live), stop_(stop) {}

    std::optional<SessionEnd> Run() {
        Prepare();
        started_ = Clock::now();
        std::thread player([this] { PlayerMain(); });
        std::thread thinker([this] { ThinkerMain(); });
        std::optional<SessionEnd> end;
        try {
            if (!context_.start_script.empty()) Enqueue({Job::Kind::kSay, context_.start_script});
            EventLoop();
        } catch (const std::exception& e) {
            // The library's text is for the log, not the session's failure.
            spdlog::error("realtime session {}: {}", row_.id, e.what());
            end = SessionEnd{"The session failed: internal error", "INTERNAL"};
        }
        LogDrops();
        {
            std::lock_guard lock(mu_);
            done_ = true;
            cancel_reply_ = true;
        }
        cv_.notify_all();
        thinker.join();
        player.join();
        return end;
    }

    // Finish writes the recording (once the session's end is recorded: it is not the user's
    // time).
    void Finish() {
        if (!options_.record) return;
        try {
            Record();
        } catch (const std::exception& e) {
            spdlog::warn("realtime session {}: the recording was not written: {}", row_.id,
                         e.what());
        }
    }

  private:
    struct Job {
        enum class Kind { kSay, kReply } kind = Kind::kReply;
        std::string text;
    };

    void Prepare() {
        providers::LiveAvatarSpec spec;
        spec.width = spec.height = options_.frame_size;
        context_.avatar_name = row_.avatar_name;
        std::vector<std::string> documents;
        if (row_.avatar_type == "custom") {
            const auto avatar = deps_.sessions->AvatarSync(row_.org_id, row_.avatar_id);
            if (!avatar) throw std::runtime_error("the session's avatar was deleted");
            spec.avatar_key = row_.avatar_id;
            spec.portrait_jpeg = avatar->portrait;
            spec.voice = json::parse(avatar->voice_json);
            context_.avatar_name = avatar->name;
            context_.personality = avatar->personality;
            context_.start_script = avatar->start_script;
            documents = avatar->document_ids;
        } else {
            spec.avatar_key = row_.preset_id;
        }
        if (row_.personality) context_.personality = *row_.personality;
        if (row_.start_script) context_.start_script = *row_.start_script;
        context_.tools = realtime::ToolSpecs(json::parse(row_.tools_json));
        if (!documents.empty() && deps_.documents != nullptr) {
            context_.search = [this, documents](const std::string& query, int limit) {
                std::vector<realtime::Knowledge> out;
                const auto found =
                    deps_.documents->SearchSync(row_.org_id, documents, query, limit);
                for (const auto& hit : found.hits) {
                    out.push_back({hit.document_name, hit.heading, hit.text});
                }
                return out;
            };
        }
        avatar_ = std::make_unique<providers::LiveAvatar>(spec);
        engine_ = deps_.make_engine ? deps_.make_engine() : realtime::MakeBuiltinEngine();
        recognizer_ = std::make_unique<media::SpeechRecognizer>(deps_.speech);
        media::VadOptions vad;
        vad.hangover_ms = options_.vad_hangover_ms;
        vad_ = std::make_unique<media::VoiceActivityDetector>(vad);
    }

    std::uint32_t ElapsedMs() const {
        return static_cast<std::uint32_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_).count());
    }

    void SendUser(const json& message) { live_.SendTo("user", message.dump(), false); }

    void Transcription(const std::string& role, int turn, const std::string& text) {
        SendUser({{"type", "transcription"}, {"role", role}, {"turn", turn}, {"text", text}});
    }

    // Append writes a transcript entry (one writer at a time: entries are numbered in order).
    void Append(store::TranscriptEntry entry) {
        if (entry.content) entry.content = ScrubNul(std::move(*entry.content));
        std::lock_guard lock(append_mu_);
        deps_.sessions->AppendEntrySync(row_.id, entry);
    }

    void Enqueue(Job job) {
        {
            std::lock_guard lock(mu_);
            jobs_.push_back(std::move(job));
        }
        cv_.notify_all();
    }

    // --- the event loop (the runner's thread) ---------------------------------------------

    void EventLoop() {
        std::deque<std::int16_t> preroll;
        const std::size_t preroll_samples = kRate * kPreRollMs / 1000;
        while (!stop_) {
            const auto event = live_.Next(std::chrono::milliseconds(20));
            if (!event) continue;
            if (event->kind == RoomEvent::Kind::kLeft && event->identity == "user") return;
            if (event->kind == RoomEvent::Kind::kText) {
                if (!DataMessage(*event)) return;
                continue;
            }
            if (event->kind != RoomEvent::Kind::kBinary || event->identity != "user") continue;
            const std::string& data = event->data;
            // [kind][ms, uint32][pcm16 little-endian...], as the server's own media messages.
            if (data.size() < 7 || static_cast<std::uint8_t>(data[0]) != kAudioMessage) continue;
            const std::size_t count = Admitted(*event, (data.size() - 5) / 2);
            if (count == 0) continue;
            std::vector<std::int16_t> pcm(count);
            std::memcpy(pcm.data(), data.data() + 5, count * 2);
            RecordUser(pcm);
            for (const auto& e : vad_->Feed(pcm)) {
                if (e.kind == media::VadEvent::Kind::kSpeechStarted) {
                    BargeIn();
                    recognizer_->StartUtterance();
                    const std::vector<std::int16_t> before(preroll.begin(), preroll.end());
                    recognizer_->Feed(before);
                } else if (recognizer_->in_utterance()) {
                    recognizer_->Feed(pcm);
                    const std::string text = recognizer_->EndUtterance();
                    if (!text.empty() && !TooManyWaiting("user")) Utterance(text);
                }
            }
            if (recognizer_->in_utterance() && vad_->speaking()) recognizer_->Feed(pcm);
            for (const auto s : pcm) {
                preroll.push_back(s);
                if (preroll.size() > preroll_samples) preroll.pop_front();
            }
        }
    }

    // Admitted says how many of the `count` samples of a user's audio message are taken: the
    // user's audio is paced by its arrival, at most kAudioAheadMs ahead of real time since its
    // first message; the rest is dropped (counted), so neither the recording nor the recognizer
    // ever holds more than real time.
    std::size_t Admitted(const RoomEvent& event, std::size_t count) {
        if (audio_samples_ == 0 && dropped_samples_ == 0) first_audio_ = event.arrived;
        const auto since =
            std::chrono::duration_cast<std::chrono::milliseconds>(event.arrived - first_audio_)
                .count();
        const auto allowed =
            static_cast<std::uint64_t>(std::max<std::int64_t>(since, 0) + kAudioAheadMs) * kRate /
            1000;
        const std::uint64_t room = allowed > audio_samples_ ? allowed - audio_samples_ : 0;
        const std::size_t taken = static_cast<std::size_t>(std::min<std::uint64_t>(count, room));
        audio_samples_ += taken;
        dropped_samples_ += count - taken;
        if (!flood_closed_ && dropped_samples_ > kFloodAudioMs * kRate / 1000) {
            // Far more than a microphone's backlog: a flood. The session keeps what it took.
            flood_closed_ = true;
            live_.Disconnect("user", kPolicyViolation,
                             "flooding: audio far faster than real time; send audio at real-time "
                             "pace");
        }
        return taken;
    }

    // Refuse answers a participant's message that was dropped, and counts it.
    void Refuse(const std::string& identity, const std::string& why) {
        ++refused_messages_;
        live_.SendTo(identity, json{{"type", "error"}, {"message", why}}.dump(), false);
    }

    // TooManyWaiting refuses a user turn while kMaxWaitingTurns wait for the avatar already.
    bool TooManyWaiting(const std::string& identity) {
        {
            std::lock_guard lock(mu_);
            if (jobs_.size() < kMaxWaitingTurns) return false;
        }
        Refuse(identity, "The avatar has " + std::to_string(kMaxWaitingTurns) +
                             " turns to answer already: wait for its reply");
        return true;
    }

    // DataMessage handles a participant's text message; false when the session should end.
    // A malformed one is dropped and answered with {"type": "error", "message"}; the session
    // goes on.
    bool DataMessage(const RoomEvent& event) {
        std::string why;
        const auto message = ParseDataMessage(event.data, why);
        if (!message) {
            Refuse(event.identity, why);
            return true;
        }
        const std::string& type = (*message)["type"].get_ref<const std::string&>();
        if (event.identity == "user" && type == "END_CALL") return false;
        if (event.identity == "user" && type == "user_text") {
            const auto text = message->find("text");
            if (text == message->end() || !text->is_string()) {
                Refuse(event.identity, "user_text has a string \"text\"");
                return true;
            }
            // At most kMaxTypedBytes, cut between two characters.
            const std::string typed(
                Utf8Prefix(text->get_ref<const std::string&>(), kMaxTypedBytes));
            if (!typed.empty() && !TooManyWaiting(event.identity)) Utterance(typed);
            return true;
        }
        if (event.identity == "backend" && type == "rpc_response") {
            const auto id = message->find("id");
            if (id == message->end() || !id->is_string()) {
                Refuse(event.identity, "rpc_response has the string \"id\" of its rpc_request");
                return true;
            }
            std::lock_guard lock(mu_);
            // Only an answer a call waits for is kept; a late or unsolicited one is dropped.
            if (waiting_rpc_.count(id->get_ref<const std::string&>()) == 0) {
                ++unmatched_answers_;
                return true;
            }
            rpc_answers_[id->get<std::string>()] = *message;
            cv_.notify_all();
            return true;
        }
        ++ignored_messages_;  // a type this side does not take: ignored, as before
        return true;
    }

    void Utterance(const std::string& text) {
        const int turn = ++user_turn_;
        Transcription("user", turn, text);
        store::TranscriptEntry entry;
        entry.role = "user";
        entry.content = text;
        entry.at = Now();
        Append(entry);
        Enqueue({Job::Kind::kReply, text});
    }

    // BargeIn stops the avatar when it is talking.
    void BargeIn() {
        std::lock_guard lock(mu_);
        if (speech_.empty() && !replying_) return;
        speech_.clear();
        cancel_reply_ = true;
        barged_ = true;
        cv_.notify_all();
    }

    // --- the thinker ------------------------------------------------------------------------

    void ThinkerMain() {
        for (;;) {
            Job job;
            {
                std::unique_lock lock(mu_);
                cv_.wait(lock, [&] { return done_ || !jobs_.empty(); });
                if (done_) return;
                job = std::move(jobs_.front());
                jobs_.pop_front();
                cancel_reply_ = false;
                barged_ = false;
                replying_ = true;
            }
            try {
                if (job.kind == Job::Kind::kSay) {
                    Say(job.text);
                } else {
                    Reply(job.text);
                }
            } catch (const std::exception& e) {
                spdlog::warn("realtime session {}: a reply failed: {}", row_.id, e.what());
            }
            std::lock_guard lock(mu_);
            replying_ = false;
        }
    }

    bool Cancelled() {
        std::lock_guard lock(mu_);
        return cancel_reply_ || done_;
    }

    // Speak synthesises `text` and queues it for the player.
    void Speak(const std::string& text) {
        if (text.find_first_not_of(" \n\t") == std::string::npos || Cancelled()) return;
        auto pcm = avatar_->Speak(text, [this] { return !Cancelled(); });
        std::lock_guard lock(mu_);
        if (cancel_reply_ || done_) return;
        speech_.insert(speech_.end(), pcm.begin(), pcm.end());
        cv_.notify_all();
    }

    // WaitSpoken waits until the queued speech was played; false when it was cut.
    bool WaitSpoken() {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return done_ || barged_ || speech_.empty(); });
        return !barged_ && !done_;
    }

    void Say(const std::string& text) {
        const int turn = ++assistant_turn_;
        Transcription("assistant", turn, text);
        for (std::string rest = text;;) {
            const std::size_t end = SentenceEnd(rest);
            Speak(rest.substr(0, end));
            if (end == std::string::npos) break;
            rest = rest.substr(end + 1);
        }
        const bool whole = WaitSpoken();
        store::TranscriptEntry entry;
        entry.role = "assistant";
        entry.content = whole ? text : text + kInterrupted;
        entry.at = Now();
        Append(entry);
        history_.push_back({realtime::Turn::Role::kAssistant, text, {}, {}});
        if (!whole) Transcription("assistant", turn, kInterrupted);
    }

    void Reply(const std::string& utterance) {
        history_.push_back({realtime::Turn::Role::kUser, utterance, {}, {}});
        for (int round = 0; round < 3; ++round) {
            const int turn = ++assistant_turn_;
            std::string pending;  // streamed text not yet spoken
            const auto on_text = [&](std::string_view delta) {
                Transcription("assistant", turn, std::string(delta));
                pending += delta;
                for (std::size_t end; (end = SentenceEnd(pending)) != std::string::npos;) {
                    Speak(pending.substr(0, end));
                    pending = pending.substr(end + 1);
                }
            };
            std::atomic<bool>& cancel = cancel_reply_;
            const realtime::Reply reply = engine_->Respond(context_, history_, on_text, cancel);
            if (!reply.error.empty()) {
                spdlog::warn("realtime session {}: the engine failed: {}", row_.id, reply.error);
            }
            Speak(pending);
            std::vector<realtime::ToolResult> results;
            if (!Cancelled()) {
                for (const auto& call : reply.tool_calls) results.push_back(RunTool(call));
            }
            const bool whole = WaitSpoken();
            store::TranscriptEntry entry;
            entry.role = "assistant";
            entry.content =
                reply.text.empty()
                    ? std::nullopt
                    : std::optional<std::string>(whole ? reply.text : reply.text + kInterrupted);
            entry.at = Now();
            if (!reply.tool_calls.empty()) {
                json calls = json::array();
                for (const auto& c : reply.tool_calls) {
                    calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
                }
                ScrubNul(calls);
                entry.tool_calls_json = calls.dump();
                json out = json::array();
                for (const auto& r : results) {
                    json item = {{"id", r.id},
                                 {"name", r.name},
                                 {"result", r.result},
                                 {"error", r.error ? json(*r.error) : json()},
                                 {"durationMs", r.duration_ms}};
                    out.push_back(std::move(item));
                }
                ScrubNul(out);
                entry.tool_results_json = out.dump();
            }
            Append(entry);
            if (!whole) {
                Transcription("assistant", turn, kInterrupted);
                return;
            }
            history_.push_back(
                {realtime::Turn::Role::kAssistant, reply.text, reply.tool_calls, {}});
            if (reply.tool_calls.empty() || results.empty()) return;
            history_.push_back({realtime::Turn::Role::kTool, "", {}, results});
        }
    }

    realtime::ToolResult RunTool(const realtime::ToolCall& call) {
        realtime::ToolResult result;
        result.id = call.id;
        result.name = call.name;
        const auto begun = Clock::now();
        const realtime::ToolSpec* spec = nullptr;
        for (const auto& t : context_.tools) {
            if (t.name == call.name) spec = &t;
        }
        if (spec == nullptr) {
            result.error = "no tool is called " + call.name;
        } else if (spec->type == "client_event") {
            SendUser({{"type", "client_event"}, {"tool", call.name}, {"args", call.arguments}});
            result.result = {{"status", "event_sent"}};
        } else if (!live_.Present("backend")) {
            result.error = "no backend handler is connected";
        } else {
            const std::string id = NewUuid();
            const auto timeout =
                std::chrono::milliseconds(static_cast<std::int64_t>(spec->timeout_seconds * 1000));
            {
                std::lock_guard lock(mu_);
                waiting_rpc_.insert(id);
            }
            live_.SendTo("backend",
                         json{{"type", "rpc_request"},
                              {"id", id},
                              {"method", call.name},
                              {"payload", json{{"args", call.arguments}}.dump()},
                              {"responseTimeoutMs", timeout.count()}}
                             .dump(),
                         false);
            std::unique_lock lock(mu_);
            const bool answered = cv_.wait_for(lock, timeout, [&] {
                return done_ || cancel_reply_ || rpc_answers_.count(id) != 0;
            });
            waiting_rpc_.erase(id);
            if (!answered || rpc_answers_.count(id) == 0) {
                result.error = done_ || cancel_reply_
                                   ? "the call was abandoned"
                                   : "the backend did not answer within " +
                                         std::to_string(static_cast<int>(spec->timeout_seconds)) +
                                         " s";
            } else {
                const json answer = std::move(rpc_answers_[id]);
                rpc_answers_.erase(id);
                if (answer.contains("error") && !answer["error"].is_null()) {
                    const auto& e = answer["error"];
                    result.error = e.is_object()
                                       ? e.value("message", e.dump())
                                       : (e.is_string() ? e.get<std::string>() : e.dump());
                } else if (answer.contains("payload") && answer["payload"].is_string()) {
                    // JSON text becomes its value, unless too deep or holding U+0000: then the
                    // text itself is the result.
                    const auto& text = answer["payload"].get_ref<const std::string&>();
                    json parsed = JsonNestingDepth(text) > kMaxMessageDepth
                                      ? json(json::value_t::discarded)
                                      : json::parse(text, nullptr, false);
                    if (!parsed.is_discarded() && HasNul(parsed)) parsed = json::value_t::discarded;
                    result.result = parsed.is_discarded() ? answer["payload"] : std::move(parsed);
                } else {
                    result.result = answer.value("payload", json());
                }
            }
        }
        result.duration_ms =
            std::round(std::chrono::duration<double, std::milli>(Clock::now() - begun).count() *
                       10) /
            10;
        return result;
    }

    // --- the player -------------------------------------------------------------------------

    void PlayerMain() {
        const int per_tick = kRate / options_.fps;
        const auto tick = std::chrono::microseconds(1000000 / options_.fps);
        providers::Mouth mouth(options_.fps);
        std::vector<std::int16_t> chunk;
        for (std::int64_t frame = 0;; ++frame) {
            {
                std::unique_lock lock(mu_);
                if (cv_.wait_until(lock, started_ + frame * tick, [&] { return done_; })) return;
                chunk.clear();
                const std::size_t n = std::min<std::size_t>(per_tick, speech_.size());
                chunk.assign(speech_.begin(), speech_.begin() + static_cast<std::ptrdiff_t>(n));
                speech_.erase(speech_.begin(), speech_.begin() + static_cast<std::ptrdiff_t>(n));
                if (speech_.empty()) cv_.notify_all();
            }
            const double openness = mouth.Next(chunk);
            const bool blink = avatar_->BlinkAt(frame, options_.fps);
            const std::uint32_t ms = static_cast<std::uint32_t>(frame * 1000 / options_.fps);
            if (!chunk.empty()) {
                live_.SendTo("user",
                             MediaMessage(kAudioMessage, ms, chunk.data(), chunk.size() * 2), true);
            }
            const std::string jpeg = avatar_->Frame(openness, blink);
            live_.SendTo("user", MediaMessage(kVideoMessage, ms, jpeg.data(), jpeg.size()), true);
            std::lock_guard lock(record_mu_);
            frames_.push_back({static_cast<float>(openness), blink});
            avatar_audio_.resize(static_cast<std::size_t>(frame) * per_tick, 0);
            avatar_audio_.insert(avatar_audio_.end(), chunk.begin(), chunk.end());
        }
    }

    // --- the recording ----------------------------------------------------------------------

    void RecordUser(const std::vector<std::int16_t>& pcm) {
        std::lock_guard lock(record_mu_);
        // Placed where it arrived (a late packet is appended where the user's track ends).
        const auto at = static_cast<std::size_t>(
            std::chrono::duration<double>(Clock::now() - started_).count() * kRate);
        const std::size_t from =
            std::max(user_audio_.size(), at > pcm.size() ? at - pcm.size() : 0);
        user_audio_.resize(from, 0);
        user_audio_.insert(user_audio_.end(), pcm.begin(), pcm.end());
    }

    void Record() {
        std::lock_guard lock(record_mu_);
        if (frames_.empty() || deps_.outputs == nullptr) return;
        const std::filesystem::path dir =
            std::filesystem::path(options_.scratch_root.empty() ? "/tmp" : options_.scratch_root) /
            ("recording-" + row_.id);
        std::filesystem::create_directories(dir);
        const std::string path = (dir / "recording.mp4").string();
        media::VideoSpec spec;
        spec.width = avatar_->width();
        spec.height = avatar_->height();
        spec.fps = options_.fps;
        spec.frame_count = static_cast<int>(frames_.size());
        spec.format = media::VideoFormat::kMp4;
        spec.audio = true;
        spec.threads = 1;
        const auto& a = avatar_audio_;
        const auto& u = user_audio_;
        // 16 kHz to 48 kHz by linear interpolation; both sides mixed, on both channels.
        const auto source = [&a, &u](std::int64_t first, int count, float* left, float* right) {
            const auto at = [](const std::vector<std::int16_t>& v, double pos) {
                const auto i = static_cast<std::size_t>(pos);
                if (i >= v.size()) return 0.0;
                const double f = pos - static_cast<double>(i);
                const double next = i + 1 < v.size() ? v[i + 1] : 0;
                return (v[i] * (1 - f) + next * f) / 32768.0;
            };
            for (int k = 0; k < count; ++k) {
                const double pos = static_cast<double>(first + k) / 3.0;
                const double mixed = std::clamp(0.8 * at(a, pos) + 0.8 * at(u, pos), -1.0, 1.0);
                left[k] = right[k] = static_cast<float>(mixed);
            }
        };
        {
            media::VideoWriter writer(spec, path, source);
            media::RgbImage rgb;
            for (const auto& f : frames_) {
                avatar_->FrameRgb(f.openness, f.blink, rgb);
                writer.WriteFrame(rgb);
            }
            writer.Finish();
        }
        deps_.outputs->PutFile(ConversationFolder(row_.id), "recording.mp4", path);
        deps_.sessions->SetRecordingSync(row_.id, "recording.mp4");
        std::filesystem::remove_all(dir);
    }

    const ConversationOptions& options_;
    const ConversationDeps& deps_;
    const store::RealtimeSession& row_;
    LiveSession& live_;
    const std::atomic<bool>& stop_;

    std::unique_ptr<providers::LiveAvatar> avatar_;
    std::unique_ptr<realtime::Engine> engine_;
    std::unique_ptr<media::SpeechRecognizer> recognizer_;
    std::unique_ptr<media::VoiceActivityDetector> vad_;
    realtime::EngineContext context_;
    Clock::time_point started_;

    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
    std::deque<Job> jobs_;
    std::deque<std::int16_t> speech_;  // the avatar's speech still to play
    std::atomic<bool> cancel_reply_{false};
    bool barged_ = false;
    bool replying_ = false;
    std::set<std::string> waiting_rpc_;        // ids of the rpc_requests a tool waits on
    std::map<std::string, json> rpc_answers_;  // answers to them, until the tool takes them
    std::vector<realtime::Turn> history_;      // the thinker's
    int user_turn_ = 0;
    int assistant_turn_ = 0;

    std::mutex append_mu_;
    std::mutex record_mu_;
    struct FrameState {
        float openness;
        bool blink;
    };
    std::vector<FrameState> frames_;
    std::vector<std::int16_t> avatar_audio_;
    std::vector<std::int16_t> user_audio_;

    // The event loop's: the user's audio pacing and what was dropped (logged at the end).
    Clock::time_point first_audio_{};
    std::uint64_t audio_samples_ = 0;
    std::uint64_t dropped_samples_ = 0;
    bool flood_closed_ = false;
    std::uint64_t refused_messages_ = 0;
    std::uint64_t ignored_messages_ = 0;
    std::uint64_t unmatched_answers_ = 0;

    void LogDrops() const {
        if (dropped_samples_ == 0 && refused_messages_ == 0 && unmatched_answers_ == 0) return;
        spdlog::warn(
            "realtime session {}: dropped {} ms of the user's audio past real time, {} malformed "
            "or refused messages, {} unmatched rpc answers",
            row_.id, dropped_samples_ * 1000 / kRate, refused_messages_, unmatched_answers_);
    }
};

}  // namespace

SessionTurns ConversationTurns(ConversationOptions options, ConversationDeps deps) {
    return [options = std::move(options), deps = std::move(deps)](
               const store::RealtimeSession& session, LiveSession& live,
               const std::atomic<bool>& stop) -> TurnsOutcome {
        // The runner calls finish before it returns, while everything referred to still lives.
        auto conversation = std::make_shared<Conversation>(options, deps, session, live, stop);
        TurnsOutcome outcome;
        outcome.end = conversation->Run();
        outcome.finish = [conversation] { conversation->Finish(); };
        return outcome;
    };
}

}  // namespace genhost::tasks
