#include "genhost/store/router_log.hpp"

#include "genhost/core/ids.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <deque>
#include <iterator>
#include <mutex>
#include <utility>

namespace genhost::store {

namespace asio = boost::asio;

namespace {

// A batch is one JSON array of records; ids make a batch sent again harmless.
constexpr const char* kInsert = "router_requests_insert";
constexpr const char* kInsertSql =
    "INSERT INTO router_requests (id, org_id, router_id, router_version, request_id, dry_run,"
    " status, task_id, model, provider, estimated_credits, reason_code, reason, emptied_by,"
    " pipeline, created_at)"
    " SELECT x.id, x.org_id, x.router_id, x.router_version, x.request_id, x.dry_run, x.status,"
    " x.task_id, x.model, x.provider, x.estimated_credits, x.reason_code, x.reason,"
    " coalesce(x.emptied_by, '[]'), coalesce(x.pipeline, '[]'),"
    " timestamptz 'epoch' + x.at * interval '1 microsecond'"
    " FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id uuid, router_id uuid,"
    " router_version integer, request_id text, dry_run boolean, status text, task_id uuid,"
    " model text, provider text, estimated_credits double precision, reason_code text,"
    " reason text, emptied_by jsonb, pipeline jsonb, at bigint)"
    " ON CONFLICT (id) DO NOTHING";

constexpr const char* kColumns =
    "id::text, org_id::text, router_id::text, router_version, request_id, dry_run, status,"
    " task_id::text, model, provider, estimated_credits, reason_code, reason, emptied_by::text,"
    " pipeline::text, (extract(epoch FROM created_at) * 1000000)::bigint";
// Newest first (index router_requests_page). Two statements, as KeysetList (keyset_page.hpp):
// the page after a cursor starts the index scan at it. The cursor's time is converted exactly.
constexpr const char* kListFirst = "router_requests_first";
const std::string kListFirstSql = std::string("SELECT ") + kColumns +
                                  " FROM router_requests WHERE router_id = $1 AND org_id = $2"
                                  " ORDER BY created_at DESC, id DESC LIMIT $3";
constexpr const char* kListAfter = "router_requests_after";
const std::string kListAfterSql =
    std::string("SELECT ") + kColumns +
    " FROM router_requests WHERE router_id = $1 AND org_id = $2"
    " AND (created_at, id) < (timestamptz 'epoch' + $3::bigint * interval '1 microsecond',"
    " $4::uuid) ORDER BY created_at DESC, id DESC LIMIT $5";

std::optional<std::string> OptionalText(const pqxx::field& f) {
    if (f.is_null()) return std::nullopt;
    return f.as<std::string>();
}

RouterDecision ReadDecision(const pqxx::row& r) {
    RouterDecision d;
    d.id = r[0].as<std::string>();
    d.org_id = r[1].as<std::string>();
    d.router_id = r[2].as<std::string>();
    d.router_version = r[3].as<int>();
    d.request_id = r[4].as<std::string>();
    d.dry_run = r[5].as<bool>();
    d.status = r[6].as<std::string>();
    d.task_id = OptionalText(r[7]);
    d.model = OptionalText(r[8]);
    d.provider = OptionalText(r[9]);
    if (!r[10].is_null()) d.estimated_credits = r[10].as<double>();
    d.reason_code = OptionalText(r[11]);
    d.reason = OptionalText(r[12]);
    d.emptied_by_json = r[13].as<std::string>();
    d.pipeline_json = r[14].as<std::string>();
    d.created_at = FromEpochMicros(r[15].as<long long>());
    return d;
}

nlohmann::json OptionalJson(const std::optional<std::string>& s) {
    return s ? nlohmann::json(*s) : nlohmann::json(nullptr);
}

// CheckJson replaces `text` by "[]" (logged) when it is not JSON: a malformed value must not
// cost the decision, nor its batch.
void CheckJson(std::string& text, const RouterDecision& d, const char* what) {
    if (nlohmann::json::accept(text)) return;
    spdlog::warn("router log: decision {} has malformed {} JSON; stored as []", d.id, what);
    text = "[]";
}

// AppendRecord appends `d` as one object of the batch's JSON array to `out`; its JSON columns
// are spliced in as they are (CheckJson has seen them).
void AppendRecord(std::string& out, const RouterDecision& d) {
    nlohmann::json o = {
        {"id", d.id},
        {"org_id", d.org_id},
        {"router_id", d.router_id},
        {"router_version", d.router_version},
        {"request_id", d.request_id},
        {"dry_run", d.dry_run},
        {"status", d.status},
        {"task_id", OptionalJson(d.task_id)},
        {"model", OptionalJson(d.model)},
        {"provider", OptionalJson(d.provider)},
        {"estimated_credits",
         d.estimated_credits ? nlohmann::json(*d.estimated_credits) : nlohmann::json(nullptr)},
        {"reason_code", OptionalJson(d.reason_code)},
        {"reason", OptionalJson(d.reason)},
        {"at", static_cast<long long>(d.created_at.time_since_epoch().count())}};
    std::string text = o.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text.pop_back();  // the closing brace
    out += text;
    out += ",\"emptied_by\":";
    out += d.emptied_by_json;
    out += ",\"pipeline\":";
    out += d.pipeline_json;
    out += '}';
}

bool LostConnection(const std::exception& e, pqxx::connection_base& c) {
    return IsConnectionError(e) || !c.is_open();
}

}  // namespace

struct RouterLog::State {
    explicit State(Database& d) : db(d) {}

    struct Queued {
        std::uint64_t seq = 0;
        RouterDecision decision;
    };

    Database& db;

    mutable std::mutex mu;       // everything below but `write_mu`
    std::deque<Queued> queue;    // in order of seq
    std::uint64_t appended = 0;  // seq of the last decision appended
    bool inflight = false;       // a batch is being sent
    std::uint64_t dropped = 0;
    std::uint64_t overflow_unlogged = 0;  // dropped from a full queue, not yet logged
    bool stopping = false;
    bool wake_posted = false;
    std::optional<asio::strand<asio::any_io_executor>> strand;  // the writer's, once started
    asio::steady_timer* timer = nullptr;  // the writer's timer: used only on the strand

    std::mutex write_mu;  // held by the one sender of batches

    // Cap drops the oldest decisions beyond kMaxQueued. Under `mu`.
    void Cap() {
        while (queue.size() > kMaxQueued) {
            queue.pop_front();
            ++dropped;
            ++overflow_unlogged;
        }
    }

    // PutBack returns unsent decisions to the front of the queue. Under `mu`.
    void PutBack(std::vector<Queued>& batch, std::size_t from) {
        queue.insert(queue.begin(), std::make_move_iterator(batch.begin() + from),
                     std::make_move_iterator(batch.end()));
        Cap();
    }

    // Pending reports whether decisions up to `target` are queued or being sent. Under `mu`.
    bool Pending(std::uint64_t target) const {
        return inflight || (!queue.empty() && queue.front().seq <= target);
    }

    // Wake makes the writer send now instead of at its next tick (no-op before Start).
    void Wake(const std::shared_ptr<State>& self) {
        if (!strand) return;
        asio::post(*strand, [self] {
            if (self->timer != nullptr) self->timer->cancel();
        });
    }

    void Insert(pqxx::connection_base& c, const std::vector<Queued>& batch, std::size_t from,
                std::size_t to) {
        std::string json = "[";
        for (std::size_t i = from; i < to; ++i) {
            if (i > from) json += ',';
            AppendRecord(json, batch[i].decision);
        }
        json += ']';
        pqxx::nontransaction n(c);
        n.exec_prepared(kInsert, json);
    }

    // WriteThrough sends every decision appended up to `target` (on a database thread), in
    // batches of kBatch, one sender at a time. A lost connection puts the batch back and throws;
    // a batch refused otherwise is sent one decision at a time, dropping the refused ones.
    void WriteThrough(pqxx::connection_base& c, std::uint64_t target) {
        std::lock_guard sending(write_mu);
        for (;;) {
            std::vector<Queued> batch;
            {
                std::lock_guard lock(mu);
                while (!queue.empty() && queue.front().seq <= target && batch.size() < kBatch) {
                    batch.push_back(std::move(queue.front()));
                    queue.pop_front();
                }
                if (batch.empty()) return;
                inflight = true;
            }
            for (auto& q : batch) {
                CheckJson(q.decision.emptied_by_json, q.decision, "emptied_by");
                CheckJson(q.decision.pipeline_json, q.decision, "pipeline");
            }
            std::size_t sent = 0;
            try {
                try {
                    Insert(c, batch, 0, batch.size());
                    sent = batch.size();
                } catch (const std::exception& e) {
                    if (LostConnection(e, c)) throw;
                    spdlog::warn(
                        "router log: a batch of {} decisions was refused ({}); sending "
                        "them one by one",
                        batch.size(), e.what());
                    for (; sent < batch.size(); ++sent) {
                        try {
                            Insert(c, batch, sent, sent + 1);
                        } catch (const std::exception& one) {
                            if (LostConnection(one, c)) throw;
                            const auto& d = batch[sent].decision;
                            spdlog::error("router log: decision {} of router {} dropped: {}", d.id,
                                          d.router_id, one.what());
                            std::lock_guard lock(mu);
                            ++dropped;
                        }
                    }
                }
            } catch (...) {
                std::lock_guard lock(mu);
                PutBack(batch, sent);
                inflight = false;
                throw;
            }
            std::lock_guard lock(mu);
            inflight = false;
        }
    }

    // Writer sends the queue every `interval`, or at once when a batch is full, until Stop.
    static asio::awaitable<void> Writer(std::shared_ptr<State> s,
                                        std::chrono::milliseconds interval) {
        asio::steady_timer timer(co_await asio::this_coro::executor);
        struct Unregister {
            State& s;
            ~Unregister() { s.timer = nullptr; }
        } unregister{*s};
        s->timer = &timer;
        bool failing = false;
        for (;;) {
            bool full = false;
            {
                std::lock_guard lock(s->mu);
                if (s->stopping) break;
                // While the database is away, only the tick: a full queue must not spin.
                full = !failing && s->queue.size() >= kBatch;
                s->wake_posted = false;
            }
            if (!full) {
                timer.expires_after(interval);
                co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
            }
            std::uint64_t target = 0;
            bool pending = false;
            {
                std::lock_guard lock(s->mu);
                if (s->stopping) break;
                s->wake_posted = false;
                target = s->appended;
                pending = s->Pending(target);
            }
            s->LogOverflow();
            if (!pending) continue;
            try {
                co_await s->db.Run([&](pqxx::connection_base& c) { s->WriteThrough(c, target); });
                if (failing) spdlog::info("router log: writing decisions again");
                failing = false;
            } catch (const DatabaseUnavailable& e) {
                if (!failing) {
                    spdlog::warn("router log: database unavailable, decisions stay queued: {}",
                                 e.what());
                }
                failing = true;
            } catch (const std::exception& e) {
                spdlog::error("router log: writing decisions failed: {}", e.what());
            }
        }
    }

    void LogOverflow() {
        std::uint64_t n = 0;
        {
            std::lock_guard lock(mu);
            n = std::exchange(overflow_unlogged, 0);
        }
        if (n != 0) {
            spdlog::warn("router log: queue full ({} decisions): dropped the {} oldest", kMaxQueued,
                         n);
        }
    }
};

RouterLog::RouterLog(Database& db) : db_(db), state_(std::make_shared<State>(db)) { Prepare(db); }

// The writer notices at its next tick (no wake: the executor's context may be gone by now).
RouterLog::~RouterLog() {
    std::lock_guard lock(state_->mu);
    state_->stopping = true;
}

void RouterLog::Prepare(Database& db) {
    db.Prepare(kInsert, kInsertSql);
    db.Prepare(kListFirst, kListFirstSql);
    db.Prepare(kListAfter, kListAfterSql);
}

void RouterLog::Start(asio::any_io_executor ex, std::chrono::milliseconds interval) {
    auto strand = asio::make_strand(std::move(ex));
    {
        std::lock_guard lock(state_->mu);
        if (state_->strand || state_->stopping) return;
        state_->strand = strand;
    }
    asio::co_spawn(strand, State::Writer(state_, interval), [](std::exception_ptr ep) {
        if (!ep) return;
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            spdlog::error("router log: writer ended: {}", e.what());
        }
    });
}

void RouterLog::Append(RouterDecision d) {
    bool wake = false;
    {
        std::lock_guard lock(state_->mu);
        state_->queue.push_back({++state_->appended, std::move(d)});
        state_->Cap();
        if (state_->queue.size() >= kBatch && !state_->wake_posted && state_->strand) {
            state_->wake_posted = true;
            wake = true;
        }
    }
    if (wake) state_->Wake(state_);
}

asio::awaitable<void> RouterLog::Flush() {
    std::uint64_t target = 0;
    {
        std::lock_guard lock(state_->mu);
        target = state_->appended;
        if (!state_->Pending(target)) co_return;
    }
    // Captures by reference only: GCC 12 may destroy a co_await's temporaries twice.
    co_await db_.Run([&](pqxx::connection_base& c) { state_->WriteThrough(c, target); });
}

void RouterLog::Stop() {
    std::uint64_t target = 0;
    {
        std::lock_guard lock(state_->mu);
        state_->stopping = true;
        target = state_->appended;
    }
    state_->Wake(state_);
    // A raw pointer: the database thread destroys the job after RunSync returns, and the last
    // reference to the state must not be dropped there (its strand belongs to the writer's
    // execution context, which may be gone by then). state_ keeps it alive meanwhile.
    State* s = state_.get();
    try {
        db_.RunSync([s, target](pqxx::connection_base& c) { s->WriteThrough(c, target); });
    } catch (const std::exception& e) {
        std::size_t lost = 0;
        {
            std::lock_guard lock(s->mu);
            while (!s->queue.empty() && s->queue.front().seq <= target) {
                s->queue.pop_front();
                ++lost;
            }
            s->dropped += lost;
        }
        spdlog::warn("router log: {} decisions not written at stop: {}", lost, e.what());
    }
    s->LogOverflow();
}

asio::awaitable<RouterDecisionPage> RouterLog::List(std::string org_id, std::string router_id,
                                                    int limit, std::optional<Keyset> after) {
    RouterDecisionPage page;
    if (!IsUuid(org_id) || !IsUuid(router_id) || limit < 1) co_return page;
    if (after && !IsUuid(after->id)) co_return page;
    std::uint64_t target = 0;
    bool pending = false;
    {
        std::lock_guard lock(state_->mu);
        target = state_->appended;
        pending = state_->Pending(target);
    }
    co_await db_.Run([&](pqxx::connection_base& c) {
        if (pending) state_->WriteThrough(c, target);
        pqxx::nontransaction n(c);
        const pqxx::result rows =
            after ? n.exec_prepared(kListAfter, router_id, org_id,
                                    static_cast<long long>(after->at.time_since_epoch().count()),
                                    after->id, limit + 1)
                  : n.exec_prepared(kListFirst, router_id, org_id, limit + 1);
        for (const auto& row : rows) {
            if (static_cast<int>(page.decisions.size()) == limit) {
                page.more = true;
                break;
            }
            page.decisions.push_back(ReadDecision(row));
        }
    });
    co_return page;
}

std::uint64_t RouterLog::dropped() const {
    std::lock_guard lock(state_->mu);
    return state_->dropped;
}

std::size_t RouterLog::queued() const {
    std::lock_guard lock(state_->mu);
    return state_->queue.size();
}

}  // namespace genhost::store
