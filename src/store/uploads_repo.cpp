#include "genhost/store/uploads_repo.hpp"

#include "genhost/core/ids.hpp"

#include <pqxx/pqxx>

namespace genhost::store {

namespace {
// Statements, prepared on every connection of the pool. Times travel as microseconds since the
// epoch.
constexpr const char* kColumns =
    "id::text, org_id::text, filename, max_bytes, (extract(epoch FROM created_at) * "
    "1000000)::bigint,"
    " (extract(epoch FROM expires_at) * 1000000)::bigint, receiving_since IS NOT NULL,"
    " (extract(epoch FROM completed_at) * 1000000)::bigint, size, content_type, file_name";

constexpr const char* kInsert = "uploads_insert";
constexpr const char* kInsertSql =
    "INSERT INTO uploads (id, org_id, filename, max_bytes, expires_at)"
    " VALUES ($1, $2, $3, $4, to_timestamp($5::bigint / 1000000.0))";
// The CTE's update is invisible to the outer query, which sees the row as it was: claimed when
// the update returned it, else the reason it did not.
constexpr const char* kClaim = "uploads_claim";
constexpr const char* kClaimSql =
    "WITH claimed AS ("
    " UPDATE uploads SET receiving_since = now()"
    " WHERE id = $1 AND receiving_since IS NULL AND completed_at IS NULL AND expires_at > now()"
    " RETURNING id)"
    " SELECT u.org_id::text, u.max_bytes, claimed.id IS NOT NULL,"
    " u.completed_at IS NOT NULL OR u.receiving_since IS NOT NULL, u.expires_at <= now()"
    " FROM uploads u LEFT JOIN claimed ON claimed.id = u.id WHERE u.id = $1";
constexpr const char* kRelease = "uploads_release";
constexpr const char* kReleaseSql =
    "UPDATE uploads SET receiving_since = NULL WHERE id = $1 AND completed_at IS NULL";
constexpr const char* kComplete = "uploads_complete";
constexpr const char* kCompleteSql =
    "UPDATE uploads SET completed_at = now(), receiving_since = NULL, size = $2,"
    " content_type = $3, file_name = $4"
    " WHERE id = $1 AND completed_at IS NULL AND receiving_since IS NOT NULL RETURNING id";
constexpr const char* kFindComplete = "uploads_find_complete";
const std::string kFindCompleteSql =
    std::string("SELECT ") + kColumns +
    " FROM uploads WHERE id = $1 AND org_id = $2 AND completed_at IS NOT NULL"
    " AND expires_at > now()";
constexpr const char* kGet = "uploads_get";
const std::string kGetSql = std::string("SELECT ") + kColumns + " FROM uploads WHERE id = $1";
constexpr const char* kDeleteExpired = "uploads_delete_expired";
constexpr const char* kDeleteExpiredSql =
    "DELETE FROM uploads WHERE id IN ("
    " SELECT id FROM uploads WHERE expires_at <= now()"
    " AND (receiving_since IS NULL OR receiving_since < now() - interval '1 hour')"
    " ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)"
    " RETURNING id::text";
constexpr const char* kExisting = "uploads_existing";
constexpr const char* kExistingSql = "SELECT id::text FROM uploads WHERE id = ANY($1::uuid[])";

UploadRecord ReadUpload(const pqxx::row& r) {
    UploadRecord u;
    u.id = r[0].as<std::string>();
    u.org_id = r[1].as<std::string>();
    u.filename = r[2].as<std::string>();
    u.max_bytes = r[3].as<std::uint64_t>();
    u.created_at = FromEpochMicros(r[4].as<long long>());
    u.expires_at = FromEpochMicros(r[5].as<long long>());
    u.receiving = r[6].as<bool>();
    if (!r[7].is_null()) u.completed_at = FromEpochMicros(r[7].as<long long>());
    if (!r[8].is_null()) u.size = r[8].as<std::uint64_t>();
    if (!r[9].is_null()) u.content_type = r[9].as<std::string>();
    if (!r[10].is_null()) u.file_name = r[10].as<std::string>();
    return u;
}
}  // namespace

void UploadRepo::Prepare(Database& db) {
    db.Prepare(kInsert, kInsertSql);
    db.Prepare(kClaim, kClaimSql);
    db.Prepare(kRelease, kReleaseSql);
    db.Prepare(kComplete, kCompleteSql);
    db.Prepare(kFindComplete, kFindCompleteSql);
    db.Prepare(kGet, kGetSql);
    db.Prepare(kDeleteExpired, kDeleteExpiredSql);
    db.Prepare(kExisting, kExistingSql);
}

boost::asio::awaitable<void> UploadRepo::Create(NewUpload upload) {
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        n.exec_prepared(kInsert, upload.id, upload.org_id, upload.filename,
                        static_cast<long long>(upload.max_bytes), EpochMicros(upload.expires_at));
    });
}

boost::asio::awaitable<ClaimResult> UploadRepo::Claim(std::string id) {
    ClaimResult out;
    if (!IsUuid(id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(kClaim, id);
        w.commit();
        if (r.empty()) return;
        if (r[0][2].as<bool>()) {
            out.kind = ClaimResult::Kind::kClaimed;
            out.org_id = r[0][0].as<std::string>();
            out.max_bytes = r[0][1].as<std::uint64_t>();
        } else if (r[0][3].as<bool>()) {
            out.kind = ClaimResult::Kind::kAlreadyReceived;
        } else if (r[0][4].as<bool>()) {
            out.kind = ClaimResult::Kind::kExpired;
        } else {
            // Claimable a moment ago but taken by a concurrent claim: someone else receives it.
            out.kind = ClaimResult::Kind::kAlreadyReceived;
        }
    });
    co_return out;
}

boost::asio::awaitable<void> UploadRepo::Release(std::string id) {
    if (!IsUuid(id)) co_return;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        n.exec_prepared(kRelease, id);
    });
}

boost::asio::awaitable<bool> UploadRepo::Complete(std::string id, std::uint64_t size,
                                                  std::string content_type, std::string file_name) {
    bool done = false;
    if (!IsUuid(id)) co_return done;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done =
            !n.exec_prepared(kComplete, id, static_cast<long long>(size), content_type, file_name)
                 .empty();
    });
    co_return done;
}

boost::asio::awaitable<std::optional<UploadRecord>> UploadRepo::FindComplete(std::string org_id,
                                                                             std::string id) {
    std::optional<UploadRecord> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kFindComplete, id, org_id);
        if (!r.empty()) out = ReadUpload(r[0]);
    });
    co_return out;
}

std::optional<UploadRecord> UploadRepo::FindCompleteSync(const std::string& org_id,
                                                         const std::string& id) {
    std::optional<UploadRecord> out;
    if (!IsUuid(id) || !IsUuid(org_id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kFindComplete, id, org_id);
        if (!r.empty()) out = ReadUpload(r[0]);
    });
    return out;
}

std::optional<UploadRecord> UploadRepo::GetSync(const std::string& id) {
    std::optional<UploadRecord> out;
    if (!IsUuid(id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kGet, id);
        if (!r.empty()) out = ReadUpload(r[0]);
    });
    return out;
}

std::vector<std::string> UploadRepo::DeleteExpiredSync(int limit) {
    std::vector<std::string> ids;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(kDeleteExpired, limit);
        w.commit();
        for (const auto& row : r) ids.push_back(row[0].as<std::string>());
    });
    return ids;
}

std::vector<std::string> UploadRepo::ExistingSync(const std::vector<std::string>& ids) {
    std::vector<std::string> out;
    const std::string array = UuidArray(ids);
    if (array == "{}") return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec_prepared(kExisting, array)) {
            out.push_back(row[0].as<std::string>());
        }
    });
    return out;
}

}  // namespace genhost::store
