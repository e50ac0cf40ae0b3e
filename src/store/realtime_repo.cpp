#include "genhost/store/realtime_repo.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"

#include <pqxx/pqxx>

#include <array>
#include <stdexcept>

namespace genhost::store {

namespace {

constexpr std::array<std::string_view, 6> kStatusNames = {"NOT_READY", "READY",  "RUNNING",
                                                          "COMPLETED", "FAILED", "CANCELLED"};

// The columns of a session, its custom avatar as it is now (a.*), and the database's clock.
constexpr const char* kColumns =
    "s.id::text, s.org_id::text, (extract(epoch FROM s.created_at) * 1000000)::bigint, s.status,"
    " s.queued, s.model, s.avatar_type, coalesce(s.preset_id, ''), coalesce(s.avatar_id::text, ''),"
    " s.avatar_name, s.name, s.max_duration, s.personality, s.start_script, s.tools::text,"
    " coalesce(s.integration::text, ''), coalesce(s.owner, ''), coalesce(s.session_key, ''),"
    " (extract(epoch FROM s.expires_at) * 1000000)::bigint, coalesce(s.media_url, ''),"
    " (extract(epoch FROM s.consumed_at) * 1000000)::bigint,"
    " (extract(epoch FROM s.started_at) * 1000000)::bigint,"
    " (extract(epoch FROM s.ended_at) * 1000000)::bigint, s.duration, coalesce(s.failure, ''),"
    " coalesce(s.failure_code, ''), coalesce(s.recording_name, ''), a.id::text, a.name,"
    " coalesce(a.has_previews, false),"
    " (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, s.backend_connected,"
    " (SELECT tier FROM organizations o WHERE o.id = s.org_id)";
constexpr const char* kFrom =
    " FROM realtime_sessions s LEFT JOIN avatars a ON a.id = s.avatar_id AND a.org_id = s.org_id";

const std::string kSelect = std::string("SELECT ") + kColumns + kFrom;

constexpr const char* kInsert = "realtime_insert";
const std::string kInsertSql =
    "WITH s AS (INSERT INTO realtime_sessions (id, org_id, model, avatar_type, preset_id,"
    " avatar_id, avatar_name, name, max_duration, personality, start_script, tools, integration,"
    " reserved_credits, credits_per_minute)"
    " VALUES ($1, $2, $3, $4, NULLIF($5, ''), NULLIF($6, '')::uuid, $7, $8, $9,"
    " CASE WHEN $10 THEN $11 END, CASE WHEN $12 THEN $13 END, $14::jsonb,"
    " NULLIF($15, '')::jsonb, $16, $17) RETURNING *) SELECT " +
    std::string(kColumns) +
    " FROM s LEFT JOIN avatars a ON a.id = s.avatar_id AND a.org_id = s.org_id";
constexpr const char* kReserve = "realtime_reserve";
constexpr const char* kReserveSql =
    "SELECT genhost_credit_reserve($1, $2, 'realtime_session:' || $3, $4, $5)";
constexpr const char* kGet = "realtime_get";
const std::string kGetSql = kSelect + " WHERE s.id = $1 AND s.org_id = $2";
constexpr const char* kLoad = "realtime_load";
const std::string kLoadSql = kSelect + " WHERE s.id = $1";
constexpr const char* kCancel = "realtime_cancel";
constexpr const char* kCancelSql =
    "UPDATE realtime_sessions SET status = 'CANCELLED', ended_at = clock_timestamp(),"
    " duration = CASE WHEN started_at IS NOT NULL THEN"
    "   greatest(0, round(extract(epoch FROM clock_timestamp() - started_at)))::integer END"
    " WHERE id = $1 AND org_id = $2 AND status IN ('NOT_READY', 'READY', 'RUNNING')";
constexpr const char* kConsume = "realtime_consume";
constexpr const char* kConsumeSql =
    "UPDATE realtime_sessions SET consumed_at = clock_timestamp()"
    " WHERE id = $1 AND session_key = $2 AND status = 'READY' AND consumed_at IS NULL"
    " AND expires_at > clock_timestamp() RETURNING id";
constexpr const char* kKeyed = "realtime_keyed";
const std::string kKeyedSql = kSelect + " WHERE s.id = $1 AND s.session_key = $2";

// Conversations: newest first, optionally of one avatar and within [start, end). $1 org, $2
// avatar ('' for any), $3 and $4 the range in microseconds (NULL for open), then the limit (first
// page) or the keyset and the limit.
const std::string kListWhere =
    kSelect +
    " WHERE s.org_id = $1 AND ($2 = '' OR s.avatar_id = NULLIF($2, '')::uuid)"
    " AND ($3::bigint IS NULL OR s.created_at >= to_timestamp($3::bigint / 1000000.0))"
    " AND ($4::bigint IS NULL OR s.created_at < to_timestamp($4::bigint / 1000000.0))";
constexpr const char* kListOrder = " ORDER BY s.created_at DESC, s.id DESC";
constexpr const char* kListFirst = "realtime_list_first";
const std::string kListFirstSql = kListWhere + kListOrder + " LIMIT $5";
constexpr const char* kListAfter = "realtime_list_after";
const std::string kListAfterSql =
    kListWhere + " AND (s.created_at, s.id) < (to_timestamp($5::bigint / 1000000.0), $6::uuid)" +
    kListOrder + " LIMIT $7";

constexpr const char* kTranscript = "realtime_transcript";
constexpr const char* kTranscriptSql =
    "SELECT role, content, (extract(epoch FROM at) * 1000000)::bigint,"
    " coalesce(tool_calls::text, ''), coalesce(tool_results::text, '')"
    " FROM conversation_entries WHERE session_id = $1 ORDER BY seq";
constexpr const char* kDelete = "realtime_delete";
constexpr const char* kDeleteSql =
    "WITH target AS (SELECT id, status, coalesce(recording_name, '') AS recording"
    "   FROM realtime_sessions WHERE id = $1 AND org_id = $2 FOR UPDATE),"
    " gone AS (DELETE FROM realtime_sessions s USING target"
    "   WHERE s.id = target.id AND target.status IN ('COMPLETED', 'FAILED', 'CANCELLED')"
    "   RETURNING s.id)"
    " SELECT target.status, target.recording, EXISTS (SELECT 1 FROM gone) FROM target";
// Sessions started in [$2, $3) by UTC day; durations of the measured ones.
constexpr const char* kUsage = "realtime_usage";
constexpr const char* kUsageSql =
    "SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::integer,"
    " coalesce(sum(duration), 0)::bigint, count(duration)::integer FROM realtime_sessions"
    " WHERE org_id = $1 AND created_at >= to_timestamp($2::bigint / 1000000.0)"
    " AND created_at < to_timestamp($3::bigint / 1000000.0) GROUP BY day ORDER BY day";

constexpr const char* kAvatar = "realtime_avatar";
constexpr const char* kAvatarSql =
    "SELECT a.name, a.personality, coalesce(a.start_script, ''),"
    " coalesce(encode(a.portrait, 'base64'), ''),"
    " CASE WHEN v.profile IS NOT NULL THEN (a.voice || jsonb_build_object('profile', v.profile))"
    "   ELSE a.voice END::text, array_to_string(a.document_ids, ',')"
    " FROM avatars a LEFT JOIN voices v ON a.voice->>'type' = 'custom' AND v.org_id = a.org_id"
    "   AND v.id::text = a.voice->>'id' AND v.status = 'READY'"
    " WHERE a.id = $1 AND a.org_id = $2";
constexpr const char* kAdmit = "realtime_admit";
constexpr const char* kAdmitSql = "SELECT genhost_admit_realtime_session($1, $2, $3)";
constexpr const char* kReady = "realtime_ready";
constexpr const char* kReadySql =
    "UPDATE realtime_sessions SET status = 'READY', session_key = $3,"
    " expires_at = clock_timestamp() + make_interval(secs => $4), media_url = $5"
    " WHERE id = $1 AND owner = $2 AND status = 'NOT_READY' RETURNING id";
constexpr const char* kRunning = "realtime_running";
constexpr const char* kRunningSql =
    "UPDATE realtime_sessions SET status = 'RUNNING', started_at = clock_timestamp()"
    " WHERE id = $1 AND owner = $2 AND status = 'READY' RETURNING id";
constexpr const char* kEnd = "realtime_end";
constexpr const char* kEndSql =
    "UPDATE realtime_sessions SET status = $3, ended_at = clock_timestamp(),"
    " duration = CASE WHEN started_at IS NOT NULL THEN"
    "   greatest(0, round(extract(epoch FROM clock_timestamp() - started_at)))::integer END,"
    " failure = NULLIF($4, ''), failure_code = NULLIF($5, '')"
    " WHERE id = $1 AND owner = $2 AND status IN ('NOT_READY', 'READY', 'RUNNING') RETURNING id";
constexpr const char* kFailLost = "realtime_fail_lost";
constexpr const char* kFailLostSql =
    "UPDATE realtime_sessions SET status = 'FAILED', ended_at = clock_timestamp(),"
    " duration = CASE WHEN started_at IS NOT NULL THEN"
    "   greatest(0, round(extract(epoch FROM clock_timestamp() - started_at)))::integer END,"
    " failure = $3, failure_code = $4"
    " WHERE id = $1 AND owner IS DISTINCT FROM $2 AND status IN ('NOT_READY', 'READY', 'RUNNING')"
    " RETURNING id";
constexpr const char* kAppend = "realtime_append";
constexpr const char* kAppendSql =
    "INSERT INTO conversation_entries (session_id, seq, role, content, at, tool_calls,"
    " tool_results) SELECT $1, n, $2, CASE WHEN $3 THEN $4 END,"
    " CASE WHEN $5 THEN to_timestamp($6::bigint / 1000000.0) END, NULLIF($7, '')::jsonb,"
    " NULLIF($8, '')::jsonb FROM (SELECT count(*)::integer AS n FROM conversation_entries"
    "   WHERE session_id = $1) c WHERE n < 1000 RETURNING seq";
constexpr const char* kBackend = "realtime_backend";
constexpr const char* kBackendSql =
    "UPDATE realtime_sessions SET backend_connected = $3 WHERE id = $1 AND owner = $2"
    " AND (NOT $3 OR status IN ('READY', 'RUNNING')) AND backend_connected <> $3 RETURNING id";
constexpr const char* kRecording = "realtime_recording";
constexpr const char* kRecordingSql =
    "UPDATE realtime_sessions SET recording_name = $2 WHERE id = $1";

std::optional<SysTime> OptionalTime(const pqxx::field& f) {
    if (f.is_null()) return std::nullopt;
    return FromEpochMicros(f.as<long long>());
}

RealtimeSession ReadSession(const pqxx::row& r) {
    RealtimeSession s;
    s.id = r[0].as<std::string>();
    s.org_id = r[1].as<std::string>();
    s.created_at = FromEpochMicros(r[2].as<long long>());
    s.status = ParseSessionStatus(r[3].as<std::string>());
    s.queued = r[4].as<bool>();
    s.model = r[5].as<std::string>();
    s.avatar_type = r[6].as<std::string>();
    s.preset_id = r[7].as<std::string>();
    s.avatar_id = r[8].as<std::string>();
    s.avatar_name = r[9].as<std::string>();
    s.name = r[10].as<std::string>();
    s.max_duration = r[11].as<int>();
    if (!r[12].is_null()) s.personality = r[12].as<std::string>();
    if (!r[13].is_null()) s.start_script = r[13].as<std::string>();
    s.tools_json = r[14].as<std::string>();
    s.integration_json = r[15].as<std::string>();
    s.owner = r[16].as<std::string>();
    s.session_key = r[17].as<std::string>();
    s.expires_at = OptionalTime(r[18]);
    s.media_url = r[19].as<std::string>();
    s.consumed_at = OptionalTime(r[20]);
    s.started_at = OptionalTime(r[21]);
    s.ended_at = OptionalTime(r[22]);
    if (!r[23].is_null()) s.duration = r[23].as<int>();
    s.failure = r[24].as<std::string>();
    s.failure_code = r[25].as<std::string>();
    s.recording_name = r[26].as<std::string>();
    if (!r[27].is_null()) {
        s.avatar_now = RealtimeSession::AvatarNow{r[27].as<std::string>(), r[28].as<std::string>(),
                                                  r[29].as<bool>()};
    }
    s.now = FromEpochMicros(r[30].as<long long>());
    s.backend_connected = r[31].as<bool>();
    s.org_tier = r[32].is_null() ? 1 : r[32].as<int>();
    return s;
}

}  // namespace

std::string_view SessionStatusName(SessionStatus s) {
    return kStatusNames[static_cast<std::size_t>(s)];
}

SessionStatus ParseSessionStatus(std::string_view s) {
    for (std::size_t i = 0; i < kStatusNames.size(); ++i) {
        if (kStatusNames[i] == s) return static_cast<SessionStatus>(i);
    }
    throw std::invalid_argument("unknown session status " + std::string(s));
}

void RealtimeRepo::Prepare(Database& db) {
    db.Prepare(kInsert, kInsertSql);
    db.Prepare(kGet, kGetSql);
    db.Prepare(kLoad, kLoadSql);
    db.Prepare(kCancel, kCancelSql);
    db.Prepare(kConsume, kConsumeSql);
    db.Prepare(kKeyed, kKeyedSql);
    db.Prepare(kListFirst, kListFirstSql);
    db.Prepare(kListAfter, kListAfterSql);
    db.Prepare(kTranscript, kTranscriptSql);
    db.Prepare(kDelete, kDeleteSql);
    db.Prepare(kUsage, kUsageSql);
    db.Prepare(kAdmit, kAdmitSql);
    db.Prepare(kAvatar, kAvatarSql);
    db.Prepare(kReady, kReadySql);
    db.Prepare(kRunning, kRunningSql);
    db.Prepare(kEnd, kEndSql);
    db.Prepare(kFailLost, kFailLostSql);
    db.Prepare(kAppend, kAppendSql);
    db.Prepare(kReserve, kReserveSql);
    db.Prepare(kBackend, kBackendSql);
    db.Prepare(kRecording, kRecordingSql);
}

boost::asio::awaitable<RealtimeCreated> RealtimeRepo::Create(NewRealtimeSession s) {
    RealtimeCreated out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        // The reservation and the session in one transaction: refused, nothing is stored.
        const std::string reserved = w.exec_prepared(kReserve, s.org_id, s.model, s.id,
                                                     s.reserve_credits, s.max_spend_credits)[0][0]
                                         .as<std::string>();
        if (reserved != "ok") {
            out.refused = reserved;
            return;  // rolled back
        }
        const auto r = w.exec_prepared(
            kInsert, s.id, s.org_id, s.model, s.avatar_type, s.preset_id, s.avatar_id,
            s.avatar_name, s.name, s.max_duration, s.personality.has_value(),
            s.personality.value_or(""), s.start_script.has_value(), s.start_script.value_or(""),
            s.tools_json, s.integration_json, s.reserve_credits, s.credits_per_minute);
        w.commit();
        out.session = ReadSession(r[0]);
    });
    co_return out;
}

boost::asio::awaitable<std::optional<RealtimeSession>> RealtimeRepo::Get(std::string org_id,
                                                                         std::string id) {
    std::optional<RealtimeSession> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kGet, id, org_id);
        if (!r.empty()) out = ReadSession(r[0]);
    });
    co_return out;
}

boost::asio::awaitable<std::optional<RealtimeSession>> RealtimeRepo::Cancel(std::string org_id,
                                                                            std::string id) {
    std::optional<RealtimeSession> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        w.exec_prepared(kCancel, id, org_id);
        const auto r = w.exec_prepared(kGet, id, org_id);
        w.commit();
        if (!r.empty()) out = ReadSession(r[0]);
    });
    co_return out;
}

boost::asio::awaitable<RealtimeRepo::Consumed> RealtimeRepo::Consume(std::string id,
                                                                     std::string key) {
    Consumed out;
    if (!IsUuid(id) || key.empty()) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const bool consumed = !w.exec_prepared(kConsume, id, key).empty();
        const auto r = w.exec_prepared(kKeyed, id, key);
        w.commit();
        if (r.empty()) return;  // unknown id or wrong key
        out.session = ReadSession(r[0]);
        const auto& s = *out.session;
        if (consumed) {
            out.outcome = ConsumeOutcome::kConsumed;
        } else if (IsTerminal(s.status) || s.status == SessionStatus::kRunning ||
                   (s.expires_at && *s.expires_at <= s.now)) {
            out.outcome = ConsumeOutcome::kEnded;
        } else if (s.consumed_at) {
            out.outcome = ConsumeOutcome::kAlreadyConsumed;
        } else {
            out.outcome = ConsumeOutcome::kNotReady;
        }
    });
    co_return out;
}

boost::asio::awaitable<ConversationPage> RealtimeRepo::ListConversations(
    std::string org_id, ConversationFilter filter, int limit, std::optional<Keyset> after) {
    ConversationPage page;
    if (!IsUuid(org_id) || limit < 1) co_return page;
    if (after && !IsUuid(after->id)) co_return page;
    if (filter.avatar_id && !IsUuid(*filter.avatar_id)) co_return page;
    const std::string avatar = filter.avatar_id.value_or("");
    const std::optional<long long> start =
        filter.start ? std::optional<long long>(EpochMicros(*filter.start)) : std::nullopt;
    const std::optional<long long> end =
        filter.end ? std::optional<long long>(EpochMicros(*filter.end)) : std::nullopt;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const pqxx::result rows =
            after ? n.exec_prepared(kListAfter, org_id, avatar, start, end, EpochMicros(after->at),
                                    after->id, limit + 1)
                  : n.exec_prepared(kListFirst, org_id, avatar, start, end, limit + 1);
        for (const auto& row : rows) {
            if (static_cast<int>(page.sessions.size()) == limit) {
                page.more = true;
                break;
            }
            page.sessions.push_back(ReadSession(row));
        }
    });
    co_return page;
}

boost::asio::awaitable<std::vector<TranscriptEntry>> RealtimeRepo::Transcript(std::string id) {
    std::vector<TranscriptEntry> out;
    if (!IsUuid(id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& r : n.exec_prepared(kTranscript, id)) {
            TranscriptEntry e;
            e.role = r[0].as<std::string>();
            if (!r[1].is_null()) e.content = r[1].as<std::string>();
            e.at = OptionalTime(r[2]);
            e.tool_calls_json = r[3].as<std::string>();
            e.tool_results_json = r[4].as<std::string>();
            out.push_back(std::move(e));
        }
    });
    co_return out;
}

boost::asio::awaitable<DeleteOutcome> RealtimeRepo::DeleteConversation(std::string org_id,
                                                                       std::string id,
                                                                       std::string& recording) {
    DeleteOutcome out = DeleteOutcome::kNotFound;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(kDelete, id, org_id);
        w.commit();
        if (r.empty()) return;
        if (r[0][2].as<bool>()) {
            out = DeleteOutcome::kDeleted;
            recording = r[0][1].as<std::string>();
        } else {
            out = DeleteOutcome::kActive;
        }
    });
    co_return out;
}

boost::asio::awaitable<UsageSummary> RealtimeRepo::Usage(std::string org_id, SysTime start,
                                                         SysTime end) {
    UsageSummary out;
    if (!IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& r :
             n.exec_prepared(kUsage, org_id, EpochMicros(start), EpochMicros(end))) {
            UsageDay d{r[0].as<std::string>(), r[1].as<int>(), r[2].as<std::int64_t>()};
            out.total_sessions += d.sessions;
            out.total_seconds += d.seconds;
            out.measured += r[3].as<int>();
            out.days.push_back(std::move(d));
        }
    });
    co_return out;
}

std::string RealtimeRepo::AdmitSync(const std::string& id, const std::string& owner, int limit) {
    std::string out = "gone";
    if (!IsUuid(id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        out = w.exec_prepared1(kAdmit, id, owner, limit)[0].as<std::string>();
        w.commit();
    });
    return out;
}

std::optional<RealtimeSession> RealtimeRepo::LoadSync(const std::string& id) {
    std::optional<RealtimeSession> out;
    if (!IsUuid(id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kLoad, id);
        if (!r.empty()) out = ReadSession(r[0]);
    });
    return out;
}

std::optional<SessionAvatar> RealtimeRepo::AvatarSync(const std::string& org_id,
                                                      const std::string& avatar_id) {
    std::optional<SessionAvatar> out;
    if (!IsUuid(org_id) || !IsUuid(avatar_id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kAvatar, avatar_id, org_id);
        if (r.empty()) return;
        SessionAvatar a;
        a.name = r[0][0].as<std::string>();
        a.personality = r[0][1].as<std::string>();
        a.start_script = r[0][2].as<std::string>();
        std::string encoded = r[0][3].as<std::string>();
        std::erase(encoded, '\n');  // encode(..., 'base64') breaks lines every 76 characters
        a.portrait = Base64Decode(encoded).value_or("");
        a.voice_json = r[0][4].as<std::string>();
        const std::string ids = r[0][5].is_null() ? std::string() : r[0][5].as<std::string>();
        std::size_t start = 0;
        while (start < ids.size()) {
            const std::size_t comma = std::min(ids.find(',', start), ids.size());
            if (comma > start) a.document_ids.push_back(ids.substr(start, comma - start));
            start = comma + 1;
        }
        out = std::move(a);
    });
    return out;
}

namespace {
template <class... Args>
bool Changed(Database& db, const char* statement, const Args&... args) {
    bool done = false;
    db.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        done = !w.exec_prepared(statement, args...).empty();
        w.commit();
    });
    return done;
}
}  // namespace

bool RealtimeRepo::MarkReadySync(const std::string& id, const std::string& owner,
                                 const std::string& key, double ready_seconds,
                                 const std::string& media_url) {
    return Changed(db_, kReady, id, owner, key, ready_seconds, media_url);
}

bool RealtimeRepo::MarkRunningSync(const std::string& id, const std::string& owner) {
    return Changed(db_, kRunning, id, owner);
}

bool RealtimeRepo::EndSync(const std::string& id, const std::string& owner, SessionStatus status,
                           const std::string& failure, const std::string& failure_code) {
    const std::string name(SessionStatusName(status));
    return Changed(db_, kEnd, id, owner, name, failure, failure_code);
}

bool RealtimeRepo::FailLostSync(const std::string& id, const std::string& by,
                                const std::string& failure, const std::string& failure_code) {
    return Changed(db_, kFailLost, id, by, failure, failure_code);
}

bool RealtimeRepo::AppendEntrySync(const std::string& id, const TranscriptEntry& e) {
    const long long at = e.at ? EpochMicros(*e.at) : 0;
    return Changed(db_, kAppend, id, e.role, e.content.has_value(), e.content.value_or(""),
                   e.at.has_value(), at, e.tool_calls_json, e.tool_results_json);
}

bool RealtimeRepo::SetBackendSync(const std::string& id, const std::string& owner, bool connected) {
    return Changed(db_, kBackend, id, owner, connected);
}

void RealtimeRepo::SetRecordingSync(const std::string& id, const std::string& name) {
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        n.exec_prepared(kRecording, id, name);
    });
}

}  // namespace genhost::store
