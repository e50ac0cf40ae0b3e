#include "genhost/store/voices_repo.hpp"

#include "keyset_page.hpp"

#include "genhost/core/ids.hpp"

#include <pqxx/pqxx>

#include <stdexcept>

namespace genhost::store {

namespace {

constexpr const char* kColumns =
    "id::text, org_id::text, name, description, source, status, coalesce(failure_reason, ''),"
    " coalesce(profile::text, ''), revision, (extract(epoch FROM created_at) * 1000000)::bigint,"
    " (extract(epoch FROM updated_at) * 1000000)::bigint";

constexpr const char* kInsert = "voices_insert";
const std::string kInsertSql =
    std::string(
        "INSERT INTO voices (id, org_id, name, description, source, model, prompt,"
        " sample_name, sample_uri, status) VALUES ($1, $2, $3, CASE WHEN $4 THEN $5 END,"
        " $6, NULLIF($7, ''), NULLIF($8, ''), NULLIF($9, ''), NULLIF($10, ''),"
        " 'PROCESSING') RETURNING ") +
    kColumns;
constexpr const char* kGet = "voices_get";
const std::string kGetSql =
    std::string("SELECT ") + kColumns + " FROM voices WHERE id = $1 AND org_id = $2";
const KeysetList kList{"voices_list",
                       std::string("SELECT ") + kColumns + " FROM voices WHERE org_id = $1",
                       "created_at", "id", false};
constexpr const char* kUpdate = "voices_update";
const std::string kUpdateSql =
    std::string(
        "UPDATE voices SET name = CASE WHEN $3 THEN $4 ELSE name END,"
        " description = CASE WHEN $5 THEN (CASE WHEN $6 THEN $7 END) ELSE description END,"
        " updated_at = CASE WHEN $3 OR $5 THEN clock_timestamp() ELSE updated_at END"
        " WHERE id = $1 AND org_id = $2 RETURNING ") +
    kColumns;
constexpr const char* kDelete = "voices_delete";
constexpr const char* kDeleteSql = "DELETE FROM voices WHERE id = $1 AND org_id = $2 RETURNING id";
constexpr const char* kLoadWork = "voices_load_work";
constexpr const char* kLoadWorkSql =
    "SELECT id::text, org_id::text, revision, source, coalesce(model, ''), coalesce(prompt, ''),"
    " coalesce(sample_name, ''), coalesce(sample_uri, '') FROM voices"
    " WHERE id = $1 AND revision = $2 AND status = 'PROCESSING'";
constexpr const char* kComplete = "voices_complete";
constexpr const char* kCompleteSql =
    "UPDATE voices SET status = 'READY', profile = $3::jsonb, updated_at = clock_timestamp()"
    " WHERE id = $1 AND revision = $2 AND status = 'PROCESSING' RETURNING id";
constexpr const char* kFail = "voices_fail";
constexpr const char* kFailSql =
    "UPDATE voices SET status = 'FAILED', failure_reason = $3, updated_at = clock_timestamp()"
    " WHERE id = $1 AND revision = $2 AND status = 'PROCESSING' RETURNING id";
constexpr const char* kExpire = "voices_expire_output";
constexpr const char* kExpireSql =
    "SELECT genhost_expire_output($1, make_interval(secs => $2::double precision))";

VoiceRecord ReadVoice(const pqxx::row& r) {
    VoiceRecord v;
    v.id = r[0].as<std::string>();
    v.org_id = r[1].as<std::string>();
    v.name = r[2].as<std::string>();
    if (!r[3].is_null()) v.description = r[3].as<std::string>();
    v.source = r[4].as<std::string>();
    v.status = ParseProcessingStatus(r[5].as<std::string>());
    v.failure_reason = r[6].as<std::string>();
    v.profile_json = r[7].as<std::string>();
    v.revision = r[8].as<std::int64_t>();
    v.created_at = FromEpochMicros(r[9].as<long long>());
    v.updated_at = FromEpochMicros(r[10].as<long long>());
    return v;
}

}  // namespace

void VoiceRepo::Prepare(Database& db) {
    db.Prepare(kInsert, kInsertSql);
    db.Prepare(kGet, kGetSql);
    kList.Prepare(db);
    db.Prepare(kUpdate, kUpdateSql);
    db.Prepare(kDelete, kDeleteSql);
    db.Prepare(kLoadWork, kLoadWorkSql);
    db.Prepare(kComplete, kCompleteSql);
    db.Prepare(kFail, kFailSql);
    db.Prepare(kExpire, kExpireSql);
}

boost::asio::awaitable<VoiceRecord> VoiceRepo::Create(NewVoice v) {
    VoiceRecord out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(kInsert, v.id, v.org_id, v.name, v.description.has_value(),
                                       v.description.value_or(""), v.source, v.model, v.prompt,
                                       v.sample_name, v.sample_uri);
        w.commit();
        out = ReadVoice(r[0]);
    });
    co_return out;
}

boost::asio::awaitable<std::optional<VoiceRecord>> VoiceRepo::Get(std::string org_id,
                                                                  std::string id) {
    std::optional<VoiceRecord> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kGet, id, org_id);
        if (!r.empty()) out = ReadVoice(r[0]);
    });
    co_return out;
}

boost::asio::awaitable<VoicePage> VoiceRepo::List(std::string org_id, int limit,
                                                  std::optional<Keyset> after) {
    VoicePage page;
    if (!IsUuid(org_id) || limit < 1) co_return page;
    if (after && !IsUuid(after->id)) co_return page;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        page.more = ReadKeysetPage(n, kList, org_id, limit, after, ReadVoice, page.voices);
    });
    co_return page;
}

boost::asio::awaitable<std::optional<VoiceRecord>> VoiceRepo::Update(std::string org_id,
                                                                     std::string id,
                                                                     VoiceChange ch) {
    std::optional<VoiceRecord> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(kUpdate, id, org_id, ch.name.has_value(),
                                       ch.name.value_or(""), ch.set_description,
                                       ch.description.has_value(), ch.description.value_or(""));
        w.commit();
        if (!r.empty()) out = ReadVoice(r[0]);
    });
    co_return out;
}

boost::asio::awaitable<bool> VoiceRepo::Delete(std::string org_id, std::string id) {
    bool found = false;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return found;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        found = !n.exec_prepared(kDelete, id, org_id).empty();
    });
    co_return found;
}

std::optional<VoiceWork> VoiceRepo::LoadWorkSync(const std::string& id, std::int64_t revision) {
    std::optional<VoiceWork> out;
    if (!IsUuid(id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kLoadWork, id, revision);
        if (r.empty()) return;
        out = VoiceWork{r[0][0].as<std::string>(),  r[0][1].as<std::string>(),
                        r[0][2].as<std::int64_t>(), r[0][3].as<std::string>(),
                        r[0][4].as<std::string>(),  r[0][5].as<std::string>(),
                        r[0][6].as<std::string>(),  r[0][7].as<std::string>()};
    });
    return out;
}

bool VoiceRepo::CompleteSync(const VoiceWork& work, const std::string& profile_json) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kComplete, work.id, work.revision, profile_json).empty();
    });
    return done;
}

bool VoiceRepo::FailSync(const VoiceWork& work, const std::string& reason) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kFail, work.id, work.revision, reason).empty();
    });
    return done;
}

boost::asio::awaitable<void> VoiceRepo::ExpireOutput(std::string folder, double seconds) {
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        n.exec_prepared(kExpire, folder, seconds);
    });
}

}  // namespace genhost::store
