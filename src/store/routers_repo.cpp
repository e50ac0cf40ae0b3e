#include "genhost/store/routers_repo.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/core/logging.hpp"
#include "keyset_page.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace genhost::store {

namespace {

constexpr const char* kColumns =
    "id::text, org_id::text, slug, name, description, version, settings::text,"
    " (extract(epoch FROM created_at) * 1000000)::bigint,"
    " (extract(epoch FROM updated_at) * 1000000)::bigint, deleted_at IS NOT NULL";

constexpr const char* kInsert = "routers_insert";
const std::string kInsertSql =
    std::string(
        "INSERT INTO routers (id, org_id, slug, name, description, settings)"
        " VALUES ($1, $2, $3, $4, CASE WHEN $5 THEN $6 END, $7::jsonb)"
        " ON CONFLICT (org_id, slug) WHERE deleted_at IS NULL DO NOTHING RETURNING ") +
    kColumns;
constexpr const char* kGet = "routers_get";
const std::string kGetSql = std::string("SELECT ") + kColumns +
                            " FROM routers WHERE id = $1 AND org_id = $2 AND deleted_at IS NULL";
constexpr const char* kGetAny = "routers_get_any";
const std::string kGetAnySql =
    std::string("SELECT ") + kColumns + " FROM routers WHERE id = $1 AND org_id = $2";
constexpr const char* kLock = "routers_lock";
const std::string kLockSql = kGetSql + " FOR UPDATE";
const KeysetList kList{
    "routers_list",
    std::string("SELECT ") + kColumns + " FROM routers WHERE org_id = $1 AND deleted_at IS NULL",
    "created_at", "id", false};
// The version grows when the effective settings differ (jsonb compares them as values).
constexpr const char* kUpdate = "routers_update";
const std::string kUpdateSql =
    std::string(
        "UPDATE routers SET name = CASE WHEN $3 THEN $4 ELSE name END,"
        " description = CASE WHEN $5 THEN (CASE WHEN $6 THEN $7 END) ELSE description END,"
        " version = CASE WHEN $8 AND settings <> $9::jsonb THEN version + 1 ELSE version END,"
        " settings = CASE WHEN $8 THEN $9::jsonb ELSE settings END,"
        " updated_at = clock_timestamp()"
        " WHERE id = $1 AND org_id = $2 AND deleted_at IS NULL RETURNING ") +
    kColumns;
constexpr const char* kDelete = "routers_delete";
constexpr const char* kDeleteSql =
    "UPDATE routers SET deleted_at = clock_timestamp(), updated_at = clock_timestamp()"
    " WHERE id = $1 AND org_id = $2 AND deleted_at IS NULL RETURNING id";
constexpr const char* kVersion = "routers_version";
constexpr const char* kVersionSql =
    "SELECT settings::text FROM router_versions WHERE router_id = $1 AND version = $2";

// A generate request's router (live, else the most recently deleted with the slug: the two
// partial indexes, the second only probed when the first finds nothing) and its organization's
// slots, for a batch of (organization, slug) pairs: $1 is a JSON array of [org, slug].
constexpr const char* kGenerate = "routers_for_generate";
const std::string kGenerateSql =
    std::string(
        "SELECT k.i, r.*, (SELECT coalesce(json_agg(json_build_array(s.limit_key,"
        " s.active, EXISTS (SELECT 1 FROM tasks t WHERE t.status = 'THROTTLED'"
        " AND t.org_id = s.org_id AND t.limit_key = s.limit_key))), '[]')"
        " FROM concurrency_slots s WHERE s.org_id = (k.v->>0)::uuid)::text"
        " FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS k(v, i)"
        " LEFT JOIN LATERAL (("
        "SELECT ") +
    kColumns +
    " FROM routers WHERE org_id = (k.v->>0)::uuid AND slug = k.v->>1 AND deleted_at IS NULL"
    " LIMIT 1) UNION ALL (SELECT " +
    kColumns +
    " FROM routers WHERE org_id = (k.v->>0)::uuid AND slug = k.v->>1 AND deleted_at IS NOT NULL"
    " ORDER BY deleted_at DESC LIMIT 1) LIMIT 1) r ON true";
constexpr std::size_t kMaxGenerateBatch = 64;
constexpr std::size_t kGenerateSpill = 8;

// ReadRouterColumns reads kColumns in their order; `text(i)` is column i as text, nullopt when
// NULL (the same reader for libpqxx rows and the request path's PgResult).
template <class Text>
RouterRecord ReadRouterColumns(Text text) {
    auto number = [&](int col) { return std::stoll(std::string(*text(col))); };
    RouterRecord out;
    out.id = std::string(*text(0));
    out.org_id = std::string(*text(1));
    out.slug = std::string(*text(2));
    out.name = std::string(*text(3));
    if (const auto d = text(4)) out.description = std::string(*d);
    out.version = static_cast<int>(number(5));
    out.settings_json = std::string(*text(6));
    out.created_at = FromEpochMicros(number(7));
    out.updated_at = FromEpochMicros(number(8));
    out.deleted = *text(9) == "t";
    return out;
}

// ReadGenerate reads the rows of kGenerate (one per pair, in order of `i`).
std::vector<GenerateContext> ReadGenerate(const PgResult& r, std::size_t count) {
    std::vector<GenerateContext> out(count);
    for (int row = 0; row < r.rows(); ++row) {
        const auto i = static_cast<std::size_t>(r.Int64(row, 0)) - 1;
        if (i >= count) continue;
        auto& ctx = out[i];
        if (!r.IsNull(row, 1)) {
            ctx.router = ReadRouterColumns([&](int col) -> std::optional<std::string_view> {
                if (r.IsNull(row, col + 1)) return std::nullopt;
                return r.Text(row, col + 1);
            });
        }
        for (const auto& slot : nlohmann::json::parse(r.Text(row, 11))) {
            const std::string key = slot.at(0).get<std::string>();
            ctx.active[key] = slot.at(1).get<int>();
            if (slot.at(2).get<bool>()) ctx.waiting.insert(key);
        }
    }
    return out;
}

RouterRecord ReadRouter(const pqxx::row& r) {
    return ReadRouterColumns([&](int col) -> std::optional<std::string_view> {
        if (r[col].is_null()) return std::nullopt;
        return std::string_view(r[col].c_str(), r[col].size());
    });
}

}  // namespace

std::optional<RouterRecord> RouterCache::Find(const std::string& org_id, const std::string& slug) {
    std::lock_guard lock(mu_);
    const auto it = entries_.find({org_id, slug});
    if (it == entries_.end()) return std::nullopt;
    if (std::chrono::steady_clock::now() - it->second.at > max_age_) {
        entries_.erase(it);
        return std::nullopt;
    }
    return it->second.router;
}

std::uint64_t RouterCache::Epoch() {
    std::lock_guard lock(mu_);
    return epoch_;
}

void RouterCache::Put(const RouterRecord& router, std::uint64_t epoch) {
    if (router.deleted) return;
    std::lock_guard lock(mu_);
    if (epoch != epoch_) return;
    if (entries_.size() >= 10000) entries_.clear();  // a bound, never reached in practice
    entries_[{router.org_id, router.slug}] = {router, std::chrono::steady_clock::now()};
}

void RouterCache::Clear() {
    std::lock_guard lock(mu_);
    ++epoch_;
    entries_.clear();
}

RouterRepo::RouterRepo(Database& db)
    : db_(db),
      generate_batch_(
          db, kGenerate, kGenerateSql, /*idempotent=*/true, kMaxGenerateBatch, 1, kGenerateSpill,
          [](const std::vector<SlugKey>& keys) {
              std::string json = "[";
              for (const auto& k : keys) {
                  if (json.size() > 1) json += ',';
                  json += "[\"" + JsonEscape(k.org_id) + "\",\"" + JsonEscape(k.slug) + "\"]";
              }
              json += ']';
              return std::vector<std::string>{std::move(json)};
          },
          [](const PgResult& r, const std::vector<SlugKey>& keys) {
              return ReadGenerate(r, keys.size());
          },
          LaneSharing::kPerContext) {
    Prepare(db);
}

RouterRepo::~RouterRepo() = default;

boost::asio::awaitable<GenerateContext> RouterRepo::ForGenerate(std::string org_id,
                                                                std::string slug) {
    if (!IsUuid(org_id)) co_return GenerateContext{};
    // Named first: GCC 12 mishandles a temporary inside a co_await expression.
    SlugKey key{std::move(org_id), std::move(slug)};
    auto context = co_await generate_batch_.Submit(std::move(key));
    co_return context;
}

void RouterRepo::Prepare(Database& db) {
    db.Prepare(kInsert, kInsertSql);
    db.Prepare(kGet, kGetSql);
    db.Prepare(kLock, kLockSql);
    db.Prepare(kGetAny, kGetAnySql);
    kList.Prepare(db);
    db.Prepare(kUpdate, kUpdateSql);
    db.Prepare(kDelete, kDeleteSql);
    db.Prepare(kVersion, kVersionSql);
}

boost::asio::awaitable<std::optional<RouterRecord>> RouterRepo::Create(NewRouter r) {
    std::optional<RouterRecord> out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto rows =
            w.exec_prepared(kInsert, r.id, r.org_id, r.slug, r.name, r.description.has_value(),
                            r.description.value_or(""), r.settings_json);
        w.commit();
        if (!rows.empty()) out = ReadRouter(rows[0]);
    });
    co_return out;
}

boost::asio::awaitable<std::optional<RouterRecord>> RouterRepo::Get(std::string org_id,
                                                                    std::string id) {
    co_return co_await GetBy(kGet, std::move(org_id), std::move(id));
}

boost::asio::awaitable<std::optional<RouterRecord>> RouterRepo::GetAny(std::string org_id,
                                                                       std::string id) {
    co_return co_await GetBy(kGetAny, std::move(org_id), std::move(id));
}

boost::asio::awaitable<std::optional<RouterRecord>> RouterRepo::GetBy(const char* statement,
                                                                      std::string org_id,
                                                                      std::string id) {
    std::optional<RouterRecord> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto rows = n.exec_prepared(statement, id, org_id);
        if (!rows.empty()) out = ReadRouter(rows[0]);
    });
    co_return out;
}

boost::asio::awaitable<RouterPage> RouterRepo::List(std::string org_id, int limit,
                                                    std::optional<Keyset> after) {
    RouterPage page;
    if (!IsUuid(org_id) || limit < 1) co_return page;
    if (after && !IsUuid(after->id)) co_return page;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        page.more = ReadKeysetPage(n, kList, org_id, limit, after, ReadRouter, page.routers);
    });
    co_return page;
}

boost::asio::awaitable<std::optional<RouterRecord>> RouterRepo::Update(
    std::string org_id, std::string id, RouterChange ch,
    std::function<std::string(const std::string&)> merge) {
    std::optional<RouterRecord> out;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto locked = w.exec_prepared(kLock, id, org_id);
        if (locked.empty()) return;
        std::optional<std::string> settings;
        if (ch.change_settings) settings = merge(ReadRouter(locked[0]).settings_json);
        const auto rows = w.exec_prepared(kUpdate, id, org_id, ch.name.has_value(),
                                          ch.name.value_or(""), ch.set_description,
                                          ch.description.has_value(), ch.description.value_or(""),
                                          settings.has_value(), settings.value_or("{}"));
        w.commit();
        out = ReadRouter(rows[0]);
    });
    co_return out;
}

boost::asio::awaitable<bool> RouterRepo::Delete(std::string org_id, std::string id) {
    bool found = false;
    if (!IsUuid(id) || !IsUuid(org_id)) co_return found;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        found = !n.exec_prepared(kDelete, id, org_id).empty();
    });
    co_return found;
}

std::optional<std::string> RouterRepo::VersionSettingsSync(const std::string& id, int version) {
    std::optional<std::string> out;
    if (!IsUuid(id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto rows = n.exec_prepared(kVersion, id, version);
        if (!rows.empty()) out = rows[0][0].as<std::string>();
    });
    return out;
}

}  // namespace genhost::store
