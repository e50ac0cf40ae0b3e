#include "genhost/store/tasks_repo.hpp"

#include <cmath>

#include "genhost/core/ids.hpp"
#include "genhost/core/logging.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace genhost::store {

std::string_view TaskStatusName(TaskStatus status) {
    switch (status) {
        case TaskStatus::kPending:
            return "PENDING";
        case TaskStatus::kThrottled:
            return "THROTTLED";
        case TaskStatus::kRunning:
            return "RUNNING";
        case TaskStatus::kSucceeded:
            return "SUCCEEDED";
        case TaskStatus::kFailed:
            return "FAILED";
        case TaskStatus::kCancelled:
            return "CANCELLED";
    }
    return "PENDING";
}

TaskStatus ParseTaskStatus(std::string_view text) {
    for (const auto s : {TaskStatus::kPending, TaskStatus::kThrottled, TaskStatus::kRunning,
                         TaskStatus::kSucceeded, TaskStatus::kFailed, TaskStatus::kCancelled}) {
        if (TaskStatusName(s) == text) return s;
    }
    throw std::runtime_error("tasks: unknown status " + std::string(text));
}

std::int64_t ReservedCredits(double estimated_credits) {
    if (!(estimated_credits > 0)) return 0;
    return static_cast<std::int64_t>(std::ceil(estimated_credits - 1e-6));
}

namespace {

constexpr const char* kCreate = "tasks_create";
constexpr const char* kCreateSql =
    "SELECT result, retry_after, (extract(epoch FROM created_at) * 1000000)::bigint"
    " FROM genhost_create_tasks($1::jsonb)";
// At most this many creations per transaction; migration 0004's k_margin depends on it.
constexpr std::size_t kMaxCreateBatch = 64;

constexpr const char* kGet = "tasks_get";
// Many polls in one statement: an index scan of the primary key for every id of the batch; the
// organization is compared by the caller, per poll. The array is read through a sub-select so
// that the cached generic plan is used: with the array as a plan-time constant, PostgreSQL plans
// every execution anew and tests each element against every partial index's predicate (0.30 ms
// against 0.20 ms per batch of 5, measured with pgbench).
constexpr const char* kGetSql =
    "SELECT id, endpoint, model, status, (extract(epoch FROM created_at) * 1000000)::bigint,"
    " estimated_credits, progress, outputs, failure, failure_code, org_id, cost_credits"
    " FROM tasks WHERE id = ANY((SELECT $1::uuid[])::uuid[]) AND NOT deleted";
constexpr std::size_t kMaxGetBatch = 64;
// Polls: each I/O thread has one lane of its own (LaneSharing::kPerContext), so a batch is sent
// and answered on the thread its calls came from and no answer wakes the other thread: 15-20 %
// more polls per second than lanes shared by all threads (docs/performance.md, "Runs of
// 2026-11-24"). Creations share their lanes: shared lanes make batches twice as large, which
// costs PostgreSQL a third less per creation. While a lane is busy, this many waiting calls start
// another lane at once (AsyncBatcher); with 16 connections, creations waiting for 16 make batches
// of 7.5 tasks instead of 5.8 (docs/performance.md, 2026-11-23 19:13).
constexpr int kGetLanesPerThread = 1;
constexpr std::size_t kGetSpill = 8;
constexpr std::size_t kCreateSpill = 16;

constexpr const char* kCancel = "tasks_cancel";
constexpr const char* kCancelSql = "SELECT result, outputs FROM genhost_cancel_task($1, $2, $3)";

constexpr const char* kClaim = "tasks_claim";
constexpr const char* kClaimSql =
    "UPDATE tasks t SET status = 'RUNNING', lease_owner = $1,"
    " lease_expires_at = now() + make_interval(secs => $2),"
    " started_at = coalesce(t.started_at, now()), attempts = t.attempts + 1, progress = 0"
    " WHERE t.id = (SELECT id FROM tasks WHERE status = 'PENDING'"
    "               ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)"
    " RETURNING t.id, t.org_id, t.endpoint, t.model, t.input, t.attempts";

constexpr const char* kHeartbeat = "tasks_heartbeat";
constexpr const char* kHeartbeatSql =
    "UPDATE tasks SET lease_expires_at = now() + make_interval(secs => $2)"
    " WHERE lease_owner = $1 AND status = 'RUNNING' RETURNING id";

constexpr const char* kProgress = "tasks_progress";
constexpr const char* kProgressSql =
    "UPDATE tasks SET progress = $3 WHERE id = $1 AND lease_owner = $2 AND status = 'RUNNING'"
    " RETURNING 1";

constexpr const char* kFinish = "tasks_finish";
// With the final cost (migration 0014; NULL: the reservation).
constexpr const char* kFinishSql =
    "SELECT genhost_finish_task($1, $2, $3, $4::jsonb, $5, $6, $7::bigint)";

constexpr const char* kRelease = "tasks_release_owned";
constexpr const char* kReleaseSql =
    "UPDATE tasks SET status = 'PENDING', lease_owner = NULL, lease_expires_at = NULL,"
    " progress = NULL, attempts = greatest(attempts - 1, 0)"
    " WHERE lease_owner = $1 AND status = 'RUNNING' RETURNING id";

constexpr const char* kNotifyTasks = "tasks_notify";
constexpr const char* kNotifyTasksSql = "SELECT pg_notify('genhost_tasks', '')";

constexpr const char* kRequeue = "tasks_requeue_expired";
constexpr const char* kRequeueSql = "SELECT genhost_requeue_expired($1)";

constexpr const char* kThrottledGroups = "tasks_throttled_groups";
// A loose index scan over tasks_throttled: one index probe per (organization, limit key) group
// instead of reading every THROTTLED task (0.3 ms against 340 ms with 250k waiting tasks).
constexpr const char* kThrottledGroupsSql =
    "WITH RECURSIVE groups AS ("
    " (SELECT t.org_id, t.limit_key FROM tasks t WHERE t.status = 'THROTTLED'"
    "  ORDER BY t.org_id, t.limit_key LIMIT 1)"
    " UNION ALL"
    " SELECT n.org_id, n.limit_key FROM groups g CROSS JOIN LATERAL ("
    "  SELECT t.org_id, t.limit_key FROM tasks t"
    "  WHERE t.status = 'THROTTLED' AND (t.org_id, t.limit_key) > (g.org_id, g.limit_key)"
    "  ORDER BY t.org_id, t.limit_key LIMIT 1) n)"
    " SELECT g.org_id, g.limit_key,"
    " (SELECT t.model FROM tasks t WHERE t.status = 'THROTTLED' AND t.org_id = g.org_id"
    "  AND t.limit_key = g.limit_key ORDER BY t.org_id, t.limit_key, t.created_at LIMIT 1),"
    " o.tier FROM groups g JOIN organizations o ON o.id = g.org_id";

constexpr const char* kPromote = "tasks_promote";
constexpr const char* kPromoteSql = "SELECT genhost_promote_throttled($1, $2, $3)";

// Only finished tasks have finished_at (index tasks_finished).
constexpr const char* kRetired = "tasks_retired";
constexpr const char* kRetiredSql =
    "SELECT id FROM tasks WHERE finished_at < now() - make_interval(secs => $1)"
    " ORDER BY finished_at LIMIT $2";

constexpr const char* kDeleteRetired = "tasks_delete_retired";
constexpr const char* kDeleteRetiredSql =
    "DELETE FROM tasks WHERE id = ANY($1::uuid[])"
    " AND finished_at < now() - make_interval(secs => $2)";

// Each count reads only its status's partial index (tasks_pending, tasks_throttled,
// tasks_running): its cost follows the unfinished tasks, never the whole table. An unfinished
// task is never `deleted` (DELETE cancels it first).
constexpr const char* kActiveCounts = "tasks_active_counts";
constexpr const char* kActiveCountsSql =
    "SELECT (SELECT count(*) FROM tasks WHERE status = 'PENDING'),"
    " (SELECT count(*) FROM tasks WHERE status = 'THROTTLED'),"
    " (SELECT count(*) FROM tasks WHERE status = 'RUNNING')";

CancelResult ReadCancel(const pqxx::result& r) {
    CancelResult out;
    const std::string kind = r[0][0].as<std::string>();
    if (kind == "cancelled") {
        out.kind = CancelResult::Kind::kCancelled;
    } else if (kind == "deleted") {
        out.kind = CancelResult::Kind::kDeleted;
        if (!r[0][1].is_null()) {
            for (const auto& name : nlohmann::json::parse(r[0][1].as<std::string>())) {
                out.outputs.push_back(name.get<std::string>());
            }
        }
    } else if (kind == "finished") {
        out.kind = CancelResult::Kind::kAlreadyFinished;
    }
    return out;
}

TaskRecord ReadTask(const PgResult& r, int row) {
    TaskRecord t;
    t.id = r.String(row, 0);
    t.endpoint = r.String(row, 1);
    t.model = r.String(row, 2);
    t.status = ParseTaskStatus(r.Text(row, 3));
    t.created_at = FromEpochMicros(r.Int64(row, 4));
    t.estimated_credits = r.Double(row, 5);
    if (!r.IsNull(row, 6)) t.progress = r.Double(row, 6);
    if (!r.IsNull(row, 7)) {
        for (const auto& name : nlohmann::json::parse(r.Text(row, 7))) {
            t.outputs.push_back(name.get<std::string>());
        }
    }
    if (!r.IsNull(row, 8)) t.failure = r.String(row, 8);
    if (!r.IsNull(row, 9)) t.failure_code = r.String(row, 9);
    if (!r.IsNull(row, 11)) t.cost_credits = r.Int64(row, 11);
    return t;
}

// CreateBatchJson is the argument of genhost_create_tasks: one object per task, with the
// validated input spliced in as it is (it is JSON text already).
std::string CreateBatchJson(const std::vector<NewTask>& tasks) {
    std::string out = "[";
    // Written directly (no JSON tree: 7 % of a creation's CPU, docs/performance.md). The strings
    // are ids and catalog names; JsonEscape keeps any of them valid JSON anyway.
    const auto field = [&out](std::string_view name, std::string_view value) {
        out += '"';
        out += name;
        out += "\":\"";
        out += JsonEscape(value);
        out += "\",";
    };
    for (const auto& t : tasks) {
        if (out.size() > 1) out += ',';
        out += '{';
        field("id", t.id);
        field("org_id", t.org_id);
        field("endpoint", t.endpoint);
        field("model", t.model);
        field("limit_key", t.limit_key);
        out += "\"credits\":";
        out += nlohmann::json(t.estimated_credits).dump();
        out += ",\"max_concurrent\":";
        out += std::to_string(t.max_concurrent);
        out += ",\"max_daily\":";
        out += std::to_string(t.max_daily);
        out += ",\"reserve\":";
        out += std::to_string(ReservedCredits(t.estimated_credits));
        out += ",\"max_spend\":";
        out += std::to_string(t.max_spend_credits);
        if (!t.billing_model.empty()) {
            out += ",\"billing_model\":\"";
            out += JsonEscape(t.billing_model);
            out += '"';
        }
        out += ",\"input\":";
        out += t.input_json;
        out += '}';
    }
    out += ']';
    return out;
}

// ReadCreatedRow is one row of genhost_create_tasks (result, retry_after, created_at in epoch
// microseconds) for `task`.
CreateResult ReadCreatedRow(std::string_view result, std::int64_t retry_after,
                            std::int64_t created_us, const NewTask& task) {
    CreateResult out;
    if (result == "rate_limited") {
        out.kind = CreateResult::Kind::kRateLimited;
        out.retry_after_seconds = static_cast<int>(retry_after);
    } else if (result == "insufficient_credits") {
        out.kind = CreateResult::Kind::kInsufficientCredits;
    } else if (result == "spend_limited") {
        out.kind = CreateResult::Kind::kSpendLimited;
    } else {
        out.status = ParseTaskStatus(result);
        out.created_at = FromEpochMicros(created_us);
        out.reserved_credits = ReservedCredits(task.estimated_credits);
    }
    return out;
}

std::vector<CreateResult> ReadCreated(const PgResult& r, const std::vector<NewTask>& tasks) {
    std::vector<CreateResult> out;
    out.reserve(r.rows());
    for (int i = 0; i < r.rows(); ++i) {
        out.push_back(ReadCreatedRow(r.Text(i, 0), r.Int64(i, 1),
                                     r.IsNull(i, 2) ? 0 : r.Int64(i, 2), tasks[i]));
    }
    return out;
}

}  // namespace

TaskRepo::TaskRepo(Database& db, int lanes)
    : db_(db),
      get_batch_(
          db, kGet, kGetSql, /*idempotent=*/true, kMaxGetBatch, kGetLanesPerThread, kGetSpill,
          [](const std::vector<GetKey>& keys) {
              return std::vector<std::string>{
                  UuidArray(keys, [](const GetKey& k) -> const std::string& { return k.id; })};
          },
          [](const PgResult& r, const std::vector<GetKey>& keys) {
              std::vector<std::optional<TaskRecord>> out(keys.size());
              for (int row = 0; row < r.rows(); ++row) {
                  const std::string_view id = r.Text(row, 0);
                  const std::string_view org = r.Text(row, 10);
                  for (std::size_t i = 0; i < keys.size(); ++i) {
                      if (keys[i].id == id && keys[i].org_id == org) {
                          out[i] = ReadTask(r, row);
                      }
                  }
              }
              return out;
          },
          LaneSharing::kPerContext),
      create_batch_(
          db, kCreate, kCreateSql, /*idempotent=*/false, kMaxCreateBatch, lanes, kCreateSpill,
          [](const std::vector<NewTask>& tasks) {
              return std::vector<std::string>{CreateBatchJson(tasks)};
          },
          ReadCreated) {
    Prepare(db);
}

TaskRepo::~TaskRepo() = default;

void TaskRepo::Prepare(Database& db) {
    db.Prepare(kCreate, kCreateSql);
    db.Prepare(kCancel, kCancelSql);
    db.Prepare(kClaim, kClaimSql);
    db.Prepare(kHeartbeat, kHeartbeatSql);
    db.Prepare(kProgress, kProgressSql);
    db.Prepare(kFinish, kFinishSql);
    db.Prepare(kRelease, kReleaseSql);
    db.Prepare(kNotifyTasks, kNotifyTasksSql);
    db.Prepare(kRequeue, kRequeueSql);
    db.Prepare(kThrottledGroups, kThrottledGroupsSql);
    db.Prepare(kPromote, kPromoteSql);
    db.Prepare(kRetired, kRetiredSql);
    db.Prepare(kDeleteRetired, kDeleteRetiredSql);
    db.Prepare(kActiveCounts, kActiveCountsSql);
}

boost::asio::awaitable<CreateResult> TaskRepo::Create(NewTask task) {
    co_return co_await create_batch_.Submit(std::move(task));
}

CreateResult TaskRepo::CreateSync(const NewTask& task) {
    CreateResult out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        const auto r = w.exec_prepared(kCreate, CreateBatchJson({task}));
        w.commit();
        out = ReadCreatedRow(r[0][0].as<std::string>(), r[0][1].as<std::int64_t>(),
                             r[0][2].is_null() ? 0 : r[0][2].as<std::int64_t>(), task);
    });
    return out;
}

boost::asio::awaitable<std::optional<TaskRecord>> TaskRepo::Get(std::string org_id,
                                                                std::string id) {
    // Postgres prints uuids in lower case; compare in that form.
    if (!IsUuid(id)) co_return std::nullopt;
    GetKey key{std::move(org_id), LowerUuid(id)};  // named: GCC 12 mishandles temporaries here
    co_return co_await get_batch_.Submit(std::move(key));
}

boost::asio::awaitable<CancelResult> TaskRepo::Cancel(std::string org_id, std::string id,
                                                      bool remove) {
    CancelResult out;
    if (!IsUuid(id)) co_return out;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const std::optional<std::string> org =
            org_id.empty() ? std::nullopt : std::optional<std::string>(org_id);
        out = ReadCancel(n.exec_prepared(kCancel, id, org, remove));
    });
    co_return out;
}

CancelResult TaskRepo::CancelSync(const std::string& org_id, const std::string& id, bool remove) {
    CancelResult out;
    if (!IsUuid(id)) return out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const std::optional<std::string> org =
            org_id.empty() ? std::nullopt : std::optional<std::string>(org_id);
        out = ReadCancel(n.exec_prepared(kCancel, id, org, remove));
    });
    return out;
}

std::optional<ClaimedTask> TaskRepo::ClaimSync(const std::string& owner, double lease_seconds) {
    std::optional<ClaimedTask> out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto r = n.exec_prepared(kClaim, owner, lease_seconds);
        if (r.empty()) return;
        ClaimedTask t;
        t.id = r[0][0].as<std::string>();
        t.org_id = r[0][1].as<std::string>();
        t.endpoint = r[0][2].as<std::string>();
        t.model = r[0][3].as<std::string>();
        t.input_json = r[0][4].as<std::string>();
        t.attempts = r[0][5].as<int>();
        out = std::move(t);
    });
    return out;
}

std::vector<std::string> TaskRepo::HeartbeatSync(const std::string& owner, double lease_seconds) {
    std::vector<std::string> ids;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec_prepared(kHeartbeat, owner, lease_seconds)) {
            ids.push_back(row[0].as<std::string>());
        }
    });
    return ids;
}

bool TaskRepo::SetProgressSync(const std::string& id, const std::string& owner, double progress) {
    bool held = false;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        held = !n.exec_prepared(kProgress, id, owner, progress).empty();
    });
    return held;
}

bool TaskRepo::FinishSync(const std::string& id, const std::string& owner, TaskStatus status,
                          const std::vector<std::string>& outputs, const std::string& failure,
                          const std::string& failure_code, std::optional<std::int64_t> cost) {
    bool done = false;
    const std::optional<std::string> outputs_json =
        status == TaskStatus::kSucceeded
            ? std::optional<std::string>(nlohmann::json(outputs).dump())
            : std::nullopt;
    const std::optional<std::string> failure_opt =
        failure.empty() ? std::nullopt : std::optional<std::string>(failure);
    const std::optional<std::string> code_opt =
        failure_code.empty() ? std::nullopt : std::optional<std::string>(failure_code);
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        done = n.exec_prepared(kFinish, id, owner, std::string(TaskStatusName(status)),
                               outputs_json, failure_opt, code_opt, cost)[0][0]
                   .as<bool>();
    });
    return done;
}

int TaskRepo::ReleaseOwnedSync(const std::string& owner) {
    int count = 0;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::work w(c);
        count = static_cast<int>(w.exec_prepared(kRelease, owner).size());
        if (count > 0) w.exec_prepared(kNotifyTasks);
        w.commit();
    });
    return count;
}

int TaskRepo::RequeueExpiredSync(int max_attempts) {
    int count = 0;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        count = n.exec_prepared(kRequeue, max_attempts)[0][0].as<int>();
    });
    return count;
}

std::vector<ThrottledGroup> TaskRepo::ThrottledGroupsSync() {
    std::vector<ThrottledGroup> groups;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec_prepared(kThrottledGroups)) {
            groups.push_back(ThrottledGroup{row[0].as<std::string>(), row[1].as<std::string>(),
                                            row[2].as<std::string>(), row[3].as<int>()});
        }
    });
    return groups;
}

int TaskRepo::PromoteSync(const std::string& org_id, const std::string& limit_key, int limit) {
    int count = 0;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        count = n.exec_prepared(kPromote, org_id, limit_key, limit)[0][0].as<int>();
    });
    return count;
}

std::vector<std::string> TaskRepo::RetiredSync(double retention_seconds, int limit) {
    std::vector<std::string> out;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        for (const auto& row : n.exec_prepared(kRetired, retention_seconds, limit)) {
            out.push_back(row[0].as<std::string>());
        }
    });
    return out;
}

int TaskRepo::DeleteRetiredSync(const std::vector<std::string>& ids, double retention_seconds) {
    const std::string array = UuidArray(ids);
    if (array == "{}") return 0;
    int deleted = 0;
    db_.RunSync([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        deleted = static_cast<int>(
            n.exec_prepared(kDeleteRetired, array, retention_seconds).affected_rows());
    });
    return deleted;
}

boost::asio::awaitable<std::map<std::string, long long>> TaskRepo::ActiveCounts() {
    std::map<std::string, long long> counts;
    co_await db_.Run([&](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        const auto row = n.exec_prepared1(kActiveCounts);
        counts["PENDING"] = row[0].as<long long>();
        counts["THROTTLED"] = row[1].as<long long>();
        counts["RUNNING"] = row[2].as<long long>();
    });
    co_return counts;
}

}  // namespace genhost::store
