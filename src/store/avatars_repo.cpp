#include "genhost/store/avatars_repo.hpp"

#include "keyset_page.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace genhost::store {

namespace {
// A custom voice's name and description, as JSON [name, description], while the voice exists
// (NULL otherwise, and for preset voices).
#define AVATAR_CUSTOM_VOICE(a)                                            \
    "(SELECT json_build_array(v.name, v.description)::text FROM voices v" \
    " WHERE " a "voice->>'type' = 'custom' AND v.org_id = " a             \
    "org_id"                                                              \
    " AND v.id::text = " a "voice->>'id')"

// Times travel as microseconds since the epoch; the document ids as a comma-separated list;
// the portrait as base64 (a few hundred kB at most).
constexpr const char* kColumns =
    "id::text, org_id::text, name, personality, start_script, voice::text,"
    " array_to_string(document_ids, ','), image_processing, status, failure_reason,"
    " has_previews, revision, (extract(epoch FROM created_at) * 1000000)::bigint,"
    " (extract(epoch FROM updated_at) * 1000000)::bigint, " AVATAR_CUSTOM_VOICE("");

constexpr const char* kInsert = "avatars_insert";
// The documents it attaches are held (FOR KEY SHARE) until it commits, and must all exist: a
// document deleted meanwhile leaves the insert without rows (documents_repo.cpp deletes the
// document before it detaches it from avatars, so one of the two sees the other).
constexpr const char* kDocsLocked =
    "WITH docs AS (SELECT id FROM documents WHERE id = ANY ($%1%::uuid[]) AND org_id = $2"
    " FOR KEY SHARE) ";
std::string WithDocs(const char* param) {
    std::string sql = kDocsLocked;
    sql.replace(sql.find("%1%"), 3, param);
    return sql;
}
const std::string kInsertSql =
    WithDocs("8") +
    "INSERT INTO avatars (id, org_id, name, personality, start_script, voice, document_ids,"
    " image_processing, status, source_name, source_uri)"
    " SELECT $1, $2, $3, $4, CASE WHEN $5 THEN $6 END, $7::jsonb, $8::uuid[], $9,"
    " 'PROCESSING', NULLIF($10, ''), NULLIF($11, '')"
    " WHERE (SELECT count(*) FROM docs) = cardinality($8::uuid[]) RETURNING " +
    kColumns;
constexpr const char* kGet = "avatars_get";
const std::string kGetSql =
    std::string("SELECT ") + kColumns + " FROM avatars WHERE id = $1 AND org_id = $2";
// GET /v1/avatars: newest first.
const KeysetList kList{"avatars_list",
                       std::string("SELECT ") + kColumns + " FROM avatars WHERE org_id = $1",
                       "created_at", "id", false};
// An update starts a new revision in PROCESSING. A PROCESSING avatar is not changed (the caller
// learns why from kStatus).
constexpr const char* kUpdate = "avatars_update";
const std::string kUpdateSql =
    std::string(
        "WITH docs AS (SELECT id FROM documents WHERE $12 AND id = ANY ($13::uuid[])"
        " AND org_id = $2 FOR KEY SHARE),"
        " old AS (SELECT id, source_name FROM avatars WHERE id = $1 AND org_id = $2"
        " AND status <> 'PROCESSING'"
        " AND (NOT $12 OR (SELECT count(*) FROM docs) = cardinality($13::uuid[])) FOR UPDATE)"
        " UPDATE avatars a SET"
        " name = CASE WHEN $3 THEN $4 ELSE a.name END,"
        " personality = CASE WHEN $5 THEN $6 ELSE a.personality END,"
        " start_script = CASE WHEN $7 THEN (CASE WHEN $8 THEN $9 END) ELSE a.start_script END,"
        " voice = CASE WHEN $10 THEN $11::jsonb ELSE a.voice END,"
        " document_ids = CASE WHEN $12 THEN $13::uuid[] ELSE a.document_ids END,"
        " image_processing = CASE WHEN $14 THEN $15 ELSE a.image_processing END,"
        " source_name = CASE WHEN $16 THEN NULLIF($17, '') ELSE a.source_name END,"
        " source_uri = CASE WHEN $16 THEN NULLIF($18, '') ELSE a.source_uri END,"
        " has_previews = CASE WHEN $16 THEN false ELSE a.has_previews END,"
        " status = 'PROCESSING', failure_reason = NULL, revision = a.revision + 1,"
        " lease_owner = NULL, lease_expires_at = NULL, updated_at = clock_timestamp()"
        " FROM old WHERE a.id = old.id RETURNING ") +
    "a.id::text, a.org_id::text, a.name, a.personality, a.start_script, a.voice::text,"
    " array_to_string(a.document_ids, ','), a.image_processing, a.status, a.failure_reason,"
    " a.has_previews, a.revision, (extract(epoch FROM a.created_at) * 1000000)::bigint,"
    " (extract(epoch FROM a.updated_at) * 1000000)::bigint, " AVATAR_CUSTOM_VOICE(
        "a.") ", coalesce(old.source_name, '')";
constexpr const char* kStatus = "avatars_status";
constexpr const char* kStatusSql = "SELECT status FROM avatars WHERE id = $1 AND org_id = $2";
constexpr const char* kDelete = "avatars_delete";
constexpr const char* kDeleteSql = "DELETE FROM avatars WHERE id = $1 AND org_id = $2 RETURNING id";
constexpr const char* kPortrait = "avatars_portrait";
constexpr const char* kPortraitSql =
    "SELECT status, coalesce(encode(portrait, 'base64'), ''), voice::text FROM avatars"
    " WHERE id = $1 AND org_id = $2";
// What the job engine's avatar job (tasks/avatar_processor) needs of the revision it works on.
constexpr const char* kLoadClaim = "avatars_load_claim";
constexpr const char* kLoadClaimSql =
    "SELECT id::text, org_id::text, revision, image_processing, coalesce(source_name, ''),"
    " coalesce(source_uri, '') FROM avatars"
    " WHERE id = $1 AND revision = $2 AND status = 'PROCESSING'";
// Completing or failing is a compare-and-set on the revision: an update or delete meanwhile
// wins (and an update queued the new revision's job).
constexpr const char* kComplete = "avatars_complete";
constexpr const char* kCompleteSql =
    "UPDATE avatars SET status = 'READY', portrait = decode($3, 'base64'), has_previews = true,"
    " updated_at = clock_timestamp()"
    " WHERE id = $1 AND revision = $2 AND status = 'PROCESSING' RETURNING id";
constexpr const char* kFail = "avatars_fail";
constexpr const char* kFailSql =
    "UPDATE avatars SET status = 'FAILED', failure_reason = $3, portrait = NULL,"
    " updated_at = clock_timestamp()"
    " WHERE id = $1 AND revision = $2 AND status = 'PROCESSING' RETURNING id";
constexpr const char* kSourceStored = "avatars_source_stored";
constexpr const char* kSourceStoredSql =
    "UPDATE avatars SET source_name = $3, source_uri = NULL"
    " WHERE id = $1 AND revision = $2 AND status = 'PROCESSING' RETURNING id";
constexpr const char* kExists = "avatars_exists";
constexpr const char* kExistsSql = "SELECT 1 FROM avatars WHERE id = $1";

std::vector<std::string> SplitIds(const std::string& list) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < list.size()) {
        const std::size_t end = std::min(list.find(',', start), list.size());
        out.push_back(list.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

AvatarRecord ReadAvatar(const pqxx::row& r) {
    AvatarRecord a;
    a.id = r[0].as<std::string>();
    a.org_id = r[1].as<std::string>();
    a.name = r[2].as<std::string>();
    a.personality = r[3].as<std::string>();
    if (!r[4].is_null()) a.start_script = r[4].as<std::string>();
    a.voice_json = r[5].as<std::string>();
    a.document_ids = SplitIds(r[6].is_null() ? std::string() : r[6].as<std::string>());
    a.image_processing = r[7].as<std::string>();
    a.status = ParseProcessingStatus(r[8].as<std::string>());
    if (!r[9].is_null()) a.failure_reason = r[9].as<std::string>();
    a.has_previews = r[10].as<bool>();
    a.revision = r[11].as<int>();
    a.created_at = FromEpochMicros(r[12].as<long long>());
    a.updated_at = FromEpochMicros(r[13].as<long long>());
    if (!r[14].is_null()) {
        const auto v = nlohmann::json::parse(r[14].as<std::string>());
        CustomVoiceInfo info;
        info.name = v.at(0).get<std::string>();
        if (!v.at(1).is_null()) info.description = v.at(1).get<std::string>();
        a.custom_voice = std::move(info);
    }
    return a;
}

}  // namespace

void AvatarRepo::Prepare(Database& db) {
    db.Prepare(kInsert, kInsertSql);
    db.Prepare(kGet, kGetSql);
    kList.Prepare(db);
    db.Prepare(kUpdate, kUpdateSql);
    db.Prepare(kStatus, kStatusSql);
    db.Prepare(kDelete, kDeleteSql);
    db.Prepare(kPortrait, kPortraitSql);
    db.Prepare(kLoadClaim, kLoadClaimSql);
    db.Prepare(kComplete, kCompleteSql);
    db.Prepare(kFail, kFailSql);
    db.Prepare(kSourceStored, kSourceStoredSql);
    db.Prepare(kExists, kExistsSql);
}

boost::asio::awaitable<std::optional<AvatarRecord>> AvatarRepo::Create(NewAvatar avatar) {
    std::optional<AvatarRecord> out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r =
            w.exec_prepared(kInsert, avatar.id, avatar.org_id, avatar.name, avatar.personality,
                            avatar.start_script.has_value(), avatar.start_script.value_or(""),
                            avatar.voice_json, UuidArray(avatar.document_ids),
                            avatar.image_processing, avatar.source_name, avatar.source_uri);
        w.commit();
        if (!r.empty()) out = ReadAvatar(r[0]);
    });
    co_return out;
}

boost::asio::awaitable<std::optional<AvatarRecord>> AvatarRepo::Get(std::string org_id,
                                                                    std::string id) {
    std::optional<AvatarRecord> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kGet, id, org_id);
        if (!r.empty()) out = ReadAvatar(r[0]);
    });
    co_return out;
}

boost::asio::awaitable<AvatarPage> AvatarRepo::List(std::string org_id, int limit,
                                                    std::optional<Keyset> after) {
    AvatarPage page;
    if (!IsUuid(org_id) || limit < 1) co_return page;
    if (after && !IsUuid(after->id)) co_return page;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        page.more = ReadKeysetPage(n, kList, org_id, limit, after, ReadAvatar, page.avatars);
    });
    co_return page;
}

boost::asio::awaitable<AvatarUpdate> AvatarRepo::Update(std::string org_id, std::string id,
                                                        AvatarChange ch) {
    AvatarUpdate out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(
            kUpdate, id, org_id, ch.name.has_value(), ch.name.value_or(""),
            ch.personality.has_value(), ch.personality.value_or(""), ch.set_start_script,
            ch.start_script.has_value(), ch.start_script.value_or(""), ch.voice_json.has_value(),
            ch.voice_json.value_or("{}"), ch.document_ids.has_value(),
            UuidArray(ch.document_ids.value_or(std::vector<std::string>{})),
            ch.image_processing.has_value(), ch.image_processing.value_or("optimize"),
            ch.new_source, ch.source_name, ch.source_uri);
        if (!r.empty()) {
            out.kind = AvatarUpdate::Kind::kUpdated;
            out.avatar = ReadAvatar(r[0]);
            if (ch.new_source) out.previous_source = r[0][15].as<std::string>();
        } else {
            const auto s = w.exec_prepared(kStatus, id, org_id);
            if (!s.empty()) {
                out.status = ParseProcessingStatus(s[0][0].as<std::string>());
                out.kind = out.status == ProcessingStatus::kProcessing
                               ? AvatarUpdate::Kind::kConflict
                               : AvatarUpdate::Kind::kMissingDocuments;
            }
        }
        w.commit();
    });
    co_return out;
}

boost::asio::awaitable<bool> AvatarRepo::Delete(std::string org_id, std::string id) {
    bool found = false;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return found;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        found = !n.exec_prepared(kDelete, id, org_id).empty();
    });
    co_return found;
}

boost::asio::awaitable<PortraitLookup> AvatarRepo::Portrait(std::string org_id, std::string id) {
    PortraitLookup out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    std::string encoded;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kPortrait, id, org_id);
        if (r.empty()) return;
        out.found = true;
        out.status = ParseProcessingStatus(r[0][0].as<std::string>());
        encoded = r[0][1].as<std::string>();
        out.voice_json = r[0][2].as<std::string>();
    });
    if (!encoded.empty()) {
        // encode(..., 'base64') breaks lines every 76 characters.
        std::erase(encoded, '\n');
        out.portrait = Base64Decode(encoded).value_or("");
    }
    co_return out;
}

std::optional<AvatarClaim> AvatarRepo::LoadClaimSync(const std::string& id, std::int64_t revision) {
    std::optional<AvatarClaim> out;
    if (!IsUuid(id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kLoadClaim, id, revision);
        if (r.empty()) return;
        AvatarClaim claim;
        claim.id = r[0][0].as<std::string>();
        claim.org_id = r[0][1].as<std::string>();
        claim.revision = r[0][2].as<int>();
        claim.image_processing = r[0][3].as<std::string>();
        claim.source_name = r[0][4].as<std::string>();
        claim.source_uri = r[0][5].as<std::string>();
        out = std::move(claim);
    });
    return out;
}

bool AvatarRepo::CompleteSync(const AvatarClaim& claim, const std::string& portrait) {
    bool done = false;
    const std::string encoded = Base64Encode(portrait);
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kComplete, claim.id, claim.revision, encoded).empty();
    });
    return done;
}

bool AvatarRepo::FailSync(const AvatarClaim& claim, const std::string& reason) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kFail, claim.id, claim.revision, reason).empty();
    });
    return done;
}

bool AvatarRepo::SourceStoredSync(const AvatarClaim& claim, const std::string& name) {
    bool done = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = !n.exec_prepared(kSourceStored, claim.id, claim.revision, name).empty();
    });
    return done;
}

bool AvatarRepo::ExistsSync(const std::string& id) {
    bool found = false;
    if (!IsUuid(id)) return found;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        found = !n.exec_prepared(kExists, id).empty();
    });
    return found;
}

}  // namespace genhost::store
