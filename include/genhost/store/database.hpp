// genhost/store/database.hpp
//
// Provides Database: a pool of K threads, each owning one libpqxx connection (a connection and
// everything made from it belong to one thread, as libpqxx requires). Coroutines on I/O threads
// `co_await Run(job)` to hop onto a database thread and back; worker threads call RunSync. No
// libpqxx call ever runs on an I/O thread.
//
// Statements are named and prepared on every connection when it opens, or before its next job for
// one registered later (Prepare registers them
// before Start). A lost connection is reopened lazily, with backoff, on the next job (one the
// server closed while idle is noticed before the job, ClosedWhileIdle); while the server is
// unreachable, jobs fail fast with DatabaseUnavailable, which the HTTP layer maps to 503.
#pragma once

#include "genhost/core/ids.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace pqxx {
class connection_base;
}

namespace genhost::store {

// DatabaseUnavailable is thrown into a job's caller when no connection could be made or the
// connection broke during the job.
class DatabaseUnavailable : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// ClosedWhileIdle reports whether an idle connection's socket has something to read: on a
// connection with no statement under way that is the server's goodbye (a FATAL message such as
// 57P01 from a shutdown or pg_terminate_backend, then end of file), so the connection is reopened
// before use instead of failing the statement sent next. One poll(2) with no wait; when it says
// yes it logs that `connection` is being reopened.
bool ClosedWhileIdle(int socket, std::string_view connection);

// ResumeWith turns an Asio completion handler into a copyable callback that any thread may call
// once: the arguments reach the handler on the handler's own executor, whose work stays counted
// until then. How a database thread or a connection's completion resumes a waiting coroutine.
// The callback dispatches (runs the handler at once when called on its executor), or with kPost
// always posts: for callers that may call it back inside the initiation that made it.
template <bool kPost = false, class Handler>
auto ResumeWith(Handler handler) {
    namespace asio = boost::asio;
    auto work = asio::make_work_guard(asio::get_associated_executor(handler));
    auto shared = std::make_shared<Handler>(std::move(handler));
    return [shared = std::move(shared), work = std::move(work)](auto... args) mutable {
        auto ex = work.get_executor();
        auto resume = [shared, ... args = std::move(args)]() mutable {
            (*shared)(std::move(args)...);
        };
        if constexpr (kPost) {
            asio::post(ex, std::move(resume));
        } else {
            asio::dispatch(ex, std::move(resume));
        }
        work.reset();
    };
}

// PoolStats is a snapshot for /metrics.
struct PoolStats {
    int size = 0;
    int busy = 0;
    std::size_t queued = 0;
    std::uint64_t jobs = 0;
    std::uint64_t failures = 0;
};

class Database {
  public:
    using Job = std::function<void(pqxx::connection_base&)>;

    // Database prepares a pool of `threads` connections to `dsn`; nothing connects until Start.
    Database(std::string dsn, int threads);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    // Prepare registers a named statement prepared on every connection: those open now before
    // their next job, the others when they open. May be called at any time (a repository
    // registers its statements when it is made); registering a name again with the same SQL
    // changes nothing, with other SQL throws std::logic_error.
    void Prepare(std::string name, std::string sql);

    // Start launches the threads. Connections open lazily on first use.
    void Start();

    // Stop finishes queued jobs and joins the threads.
    void Stop();

    // Run executes `job` on a database thread; the awaiting coroutine resumes on its own executor.
    // Exceptions thrown by the job are rethrown to the caller; connection failures arrive as
    // DatabaseUnavailable.
    boost::asio::awaitable<void> Run(Job job);

    // Ping checks that a connection answers (a prepared `SELECT 1`); throws DatabaseUnavailable.
    boost::asio::awaitable<void> Ping();

    // RunSync executes `job` on a database thread and blocks the calling (non-I/O) thread.
    void RunSync(Job job);

    // Submit queues `job` for a database thread and calls `done` on that thread afterwards, with
    // the job's exception if it threw (DatabaseUnavailable for a lost or unreachable server).
    // When no connection can be opened, `done` is called without running `job`; when the pool is
    // stopped, that happens at once on the calling thread. The building block of Run and RunSync.
    void Submit(Job job, std::function<void(std::exception_ptr)> done);

    // Offload runs a blocking `job` that does not use the pool's connection (e.g. opening a
    // connection of its own) on a database thread, then `done` there, as Submit does; it runs
    // even while the pool's own connections are down.
    void Offload(std::function<void()> job, std::function<void(std::exception_ptr)> done);

    // Stats returns pool usage counters.
    PoolStats Stats() const;

    const std::string& dsn() const { return dsn_; }

    // Connected counts the successful connects to the server (ConnectBackoff::Succeeded).
    std::uint64_t Connected() const { return connected_.load(std::memory_order_acquire); }

  private:
    friend class ConnectBackoff;
    void ThreadMain(int index);

    std::string dsn_;
    int threads_count_;
    // Statements only ever grow: a connection that has prepared the first n has the first n.
    mutable std::mutex statements_mu_;
    std::vector<std::pair<std::string, std::string>> statements_;
    // Statements returns the registered statements from index `from` on.
    std::vector<std::pair<std::string, std::string>> StatementsFrom(std::size_t from) const;
    std::vector<std::thread> threads_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    struct Pending {
        Job job;                      // needs the thread's connection
        std::function<void()> plain;  // or does not (Offload)
        std::function<void(std::exception_ptr)> done;
    };
    void Enqueue(Pending item);
    std::deque<Pending> queue_;
    bool stopping_ = false;
    std::atomic<int> busy_{0};
    std::atomic<std::uint64_t> jobs_{0};
    std::atomic<std::uint64_t> failures_{0};
    std::atomic<std::uint64_t> connected_{0};
};

// ConnectBackoff paces one connection's attempts to connect, for the pool's threads and the
// request path's connections alike. After a failed attempt, calls fail at once for a while (100
// ms, doubling up to 2 s) instead of each making an attempt; the first successful connect by any
// connection of the Database ends every such wait, since the server is back (so once /readyz
// answers 200, the next request tries too). One object per connection, used by one thread at a
// time.
class ConnectBackoff {
  public:
    explicit ConnectBackoff(Database& db) : db_(db) {}
    // MayTry reports whether an attempt may be made now; Begin is called just before it.
    bool MayTry() const {
        return std::chrono::steady_clock::now() >= retry_at_ || db_.Connected() != failed_at_;
    }
    void Begin() { begun_at_ = db_.Connected(); }
    void Failed() {
        failed_at_ = begun_at_;
        retry_at_ = std::chrono::steady_clock::now() + delay_;
        delay_ = std::min(delay_ * 2, std::chrono::milliseconds(2000));
    }
    void Succeeded() {
        delay_ = std::chrono::milliseconds(100);
        db_.connected_.fetch_add(1, std::memory_order_acq_rel);
    }

  private:
    Database& db_;
    std::chrono::steady_clock::time_point retry_at_{};
    std::chrono::milliseconds delay_{100};
    std::uint64_t begun_at_ = 0;   // Connected() when the current attempt began
    std::uint64_t failed_at_ = 0;  // Connected() when the last failed attempt began
};

// UuidArray returns a PostgreSQL array literal of the canonical UUIDs among `proj(item)` for the
// items of `items` (others are skipped), e.g. "{a,b}": the value of a `$n::uuid[]` parameter,
// never spliced into SQL. Empty input gives "{}".
template <class Range, class Proj = std::identity>
std::string UuidArray(const Range& items, Proj proj = {}) {
    std::string out = "{";
    for (const auto& item : items) {
        const std::string& id = proj(item);
        if (!IsUuid(id)) continue;
        if (out.size() > 1) out += ',';
        out += id;
    }
    out += '}';
    return out;
}

// IsConnectionError reports whether `e` means the database is unreachable rather than a query
// error (used by code that talks to libpqxx outside the pool, e.g. the notification listener).
bool IsConnectionError(const std::exception& e);

}  // namespace genhost::store
