// genhost/store/async_pg.hpp
//
// Provides the request path's way to PostgreSQL: libpq connections in non-blocking mode, driven
// by the I/O threads' event loop, so a task poll or creation never leaves the I/O threads (no
// hand-off to a database thread and back: docs/architecture.md, "Database access").
//
// - PgResult: one result, owned; text-format values.
// - AsyncStatement: one connection running one prepared statement, one execution at a time.
//   Connecting (a blocking libpq call) and preparing run on a Database pool thread; everything
//   after that is non-blocking and waits on the socket with Asio.
// - AsyncBatcher<In, Out>: concurrent calls of one kind gathered into one execution of the
//   statement (group commit), on a few such connections ("lanes"). A call goes out at once when
//   no lane is busy. While one is, calls wait, and the next lane to finish takes all of them (up
//   to `max_batch`) into its next execution; only when `spill` calls are waiting does an idle
//   lane take them at once. So under load the batches grow (a batch costs the database much less
//   per call than a statement each: docs/performance.md), and an idle server sends batches of
//   one, with no added wait. The lanes and the waiting list are either shared by all callers or
//   kept per I/O thread (LaneSharing).
//
// Errors: a lost or unreachable server arrives as DatabaseUnavailable (the HTTP layer's 503);
// other SQL errors as std::runtime_error. Both fail every call of the batch.
#pragma once

#include "genhost/store/database.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

struct pg_conn;
struct pg_result;

namespace genhost::store {

class PgResult {
  public:
    PgResult() = default;
    explicit PgResult(pg_result* r) : r_(r, &Clear) {}

    int rows() const;
    bool IsNull(int row, int col) const;
    std::string_view Text(int row, int col) const;
    std::string String(int row, int col) const { return std::string(Text(row, col)); }
    long long Int64(int row, int col) const;
    double Double(int row, int col) const;
    pg_result* get() const { return r_.get(); }

  private:
    static void Clear(pg_result* r);
    std::shared_ptr<pg_result> r_;
};

class AsyncStatement {
  public:
    using Done = std::function<void(PgResult, std::exception_ptr)>;

    // `idempotent`: the statement may be sent again after a connection that had been idle turns
    // out to be broken (a read; never for statements that write).
    AsyncStatement(Database& db, std::string name, std::string sql, bool idempotent);
    ~AsyncStatement();
    AsyncStatement(const AsyncStatement&) = delete;
    AsyncStatement& operator=(const AsyncStatement&) = delete;

    // Exec runs the statement with `params` (text values) and calls `done` exactly once: later,
    // on an I/O thread of `ex`'s context or on a database pool thread, never inside Exec. One
    // execution at a time; `done` may start the next one.
    void Exec(boost::asio::any_io_executor ex, std::vector<std::string> params, Done done);

  private:
    struct Socket;
    void Connect();
    void Send();
    void Flush();
    void Read();
    void Completed();
    void Lost(const std::string& message);
    void Finish(PgResult result, std::exception_ptr ep);
    void Drop();

    Database& db_;
    const std::string name_;
    const std::string sql_;
    const bool idempotent_;
    pg_conn* conn_ = nullptr;
    std::unique_ptr<Socket> socket_;
    boost::asio::any_io_executor ex_;
    std::vector<std::string> params_;
    Done done_;
    PgResult result_;
    bool has_result_ = false;
    bool used_ = false;     // the connection has run a statement
    bool reused_ = false;   // ... before this execution
    bool retried_ = false;  // this execution was sent again on a new connection
    // Exec has not returned yet: answers are posted, never given inside Exec.
    std::atomic<bool> in_exec_{false};
    ConnectBackoff backoff_{db_};
};

// Whose lanes a call may use. kShared: `lanes` lanes and one waiting list for every caller.
// kPerContext: each execution context (an I/O thread's event loop) gets `lanes` lanes and a
// waiting list of its own, made on its first call; a batch then holds only that thread's calls,
// is sent and answered on that thread, and no answer has to wake another thread. An idle lane
// sends once the handlers already queued on the thread have run, so the calls of one turn of the
// event loop share a statement (no timer, no added wait beyond that turn). A context keeps
// its lanes (and their connections) for the batcher's life, so kPerContext is for calls made on
// long-lived event loops: the I/O threads'.
enum class LaneSharing { kShared, kPerContext };

template <class In, class Out>
class AsyncBatcher {
  public:
    using ParamsFn = std::function<std::vector<std::string>(const std::vector<In>&)>;
    using ReadFn = std::function<std::vector<Out>(const PgResult&, const std::vector<In>&)>;

    AsyncBatcher(Database& db, const std::string& name, const std::string& sql, bool idempotent,
                 std::size_t max_batch, int lanes, std::size_t spill, ParamsFn params, ReadFn read,
                 LaneSharing sharing = LaneSharing::kShared)
        : max_batch_(max_batch == 0 ? 1 : max_batch),
          spill_(spill == 0 ? 1 : spill),
          params_(std::move(params)),
          read_(std::move(read)),
          db_(db),
          name_(name),
          sql_(sql),
          idempotent_(idempotent),
          lanes_per_group_(lanes < 1 ? 1 : lanes),
          sharing_(sharing) {}
    AsyncBatcher(const AsyncBatcher&) = delete;
    AsyncBatcher& operator=(const AsyncBatcher&) = delete;

    // Submit adds `in` to the waiting calls and resumes with its output.
    boost::asio::awaitable<Out> Submit(In in) {
        namespace asio = boost::asio;
        co_return co_await asio::async_initiate<decltype(asio::use_awaitable),
                                                void(std::exception_ptr, Out)>(
            [this, &in](auto handler) {
                auto executor = asio::get_associated_executor(handler);
                Call call{std::move(in), ResumeWith(std::move(handler))};
                Lane* lane = nullptr;
                std::vector<Call> batch;
                {
                    std::lock_guard lock(mu_);
                    Group& group = GroupFor(executor);
                    group.waiting.push_back(std::move(call));
                    Lane* idle = nullptr;
                    bool any_busy = false;
                    for (auto& l : group.lanes) {
                        if (l->busy) {
                            any_busy = true;
                        } else if (idle == nullptr) {
                            idle = l.get();
                        }
                    }
                    if (idle != nullptr && (!any_busy || group.waiting.size() >= spill_)) {
                        lane = idle;
                        lane->busy = true;
                        if (sharing_ == LaneSharing::kShared) batch = Take(group);
                    }
                }
                if (lane == nullptr) return;
                if (sharing_ == LaneSharing::kShared) {
                    Start(*lane, std::move(batch), executor);
                    return;
                }
                // Per context, the lane is taken now and its batch sent once the handlers already
                // queued on this thread have run: requests read after the same wake-up go in one
                // statement instead of the first alone and the rest after it.
                asio::post(executor, [this, lane, executor] {
                    std::vector<Call> calls;
                    {
                        std::lock_guard lock(mu_);
                        calls = Take(lane->group);
                        // Another lane of the group, sent first, took them all.
                        if (calls.empty()) lane->busy = false;
                    }
                    if (!calls.empty()) Start(*lane, std::move(calls), executor);
                });
            },
            asio::use_awaitable);
    }

  private:
    struct Call {
        In in;
        std::function<void(std::exception_ptr, Out)> done;
    };
    struct Group;
    struct Lane {
        Lane(Group& g, Database& db, const std::string& name, const std::string& sql,
             bool idempotent)
            : group(g), statement(db, name, sql, idempotent) {}
        Group& group;
        bool busy = false;  // (mu_) an execution is under way; its end starts the next one
        AsyncStatement statement;
    };
    // The lanes of one execution context (one I/O thread's event loop) and the calls made on it.
    struct Group {
        const void* context = nullptr;
        std::vector<std::unique_ptr<Lane>> lanes;
        std::vector<Call> waiting;  // calls no lane has taken yet
    };
    struct Running {
        std::vector<Call> calls;
        std::vector<In> ins;
    };

    // GroupFor (mu_ held) is the group of `ex`'s execution context (kPerContext) or the one
    // group (kShared), made on first use.
    Group& GroupFor(const boost::asio::any_io_executor& ex) {
        const void* context = sharing_ == LaneSharing::kShared
                                  ? nullptr
                                  : &boost::asio::query(ex, boost::asio::execution::context);
        for (auto& g : groups_) {
            if (g->context == context) return *g;
        }
        auto g = std::make_unique<Group>();
        g->context = context;
        for (int i = 0; i < lanes_per_group_; ++i) {
            g->lanes.push_back(std::make_unique<Lane>(*g, db_, name_, sql_, idempotent_));
        }
        groups_.push_back(std::move(g));
        return *groups_.back();
    }

    // Take (mu_ held) removes up to max_batch_ of the group's waiting calls.
    std::vector<Call> Take(Group& group) {
        std::vector<Call> calls;
        auto& waiting = group.waiting;
        if (waiting.size() <= max_batch_) {
            calls.swap(waiting);
        } else {
            calls.assign(std::make_move_iterator(waiting.begin()),
                         std::make_move_iterator(waiting.begin() + max_batch_));
            waiting.erase(waiting.begin(), waiting.begin() + max_batch_);
        }
        return calls;
    }

    void Start(Lane& lane, std::vector<Call> calls, boost::asio::any_io_executor ex) {
        auto run = std::make_shared<Running>();
        run->calls = std::move(calls);
        run->ins.reserve(run->calls.size());
        for (auto& call : run->calls) run->ins.push_back(std::move(call.in));
        std::vector<std::string> params;
        try {
            params = params_(run->ins);
        } catch (...) {
            // Never answer inside Submit's initiation: the answer goes through the executor.
            boost::asio::post(ex, [this, &lane, run, ep = std::current_exception(), ex] {
                Complete(lane, run, {}, ep, ex);
            });
            return;
        }
        lane.statement.Exec(ex, std::move(params),
                            [this, &lane, run, ex](PgResult result, std::exception_ptr ep) {
                                Complete(lane, run, std::move(result), ep, ex);
                            });
    }

    // Complete starts the lane's next batch, then answers the calls of `run`.
    void Complete(Lane& lane, const std::shared_ptr<Running>& run, const PgResult& result,
                  std::exception_ptr ep, const boost::asio::any_io_executor& ex) {
        std::vector<Out> outs;
        if (!ep) {
            try {
                outs = read_(result, run->ins);
                if (outs.size() != run->ins.size()) {
                    throw std::logic_error("batch returned a different number of rows");
                }
            } catch (...) {
                ep = std::current_exception();
            }
        }
        std::vector<Call> next;
        {
            std::lock_guard lock(mu_);
            if (lane.group.waiting.empty()) {
                lane.busy = false;
            } else {
                next = Take(lane.group);
            }
        }
        if (!next.empty()) Start(lane, std::move(next), ex);
        for (std::size_t i = 0; i < run->calls.size(); ++i) {
            run->calls[i].done(ep, ep ? Out{} : std::move(outs[i]));
        }
    }

    const std::size_t max_batch_;
    const std::size_t spill_;
    ParamsFn params_;
    ReadFn read_;
    Database& db_;
    const std::string name_;
    const std::string sql_;
    const bool idempotent_;
    const int lanes_per_group_;
    const LaneSharing sharing_;
    std::mutex mu_;
    std::vector<std::unique_ptr<Group>> groups_;
};

}  // namespace genhost::store
