#include "genhost/store/database.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <pqxx/pqxx>

#include <stdexcept>

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <future>

namespace genhost::store {

namespace asio = boost::asio;

Database::Database(std::string dsn, int threads) : dsn_(std::move(dsn)), threads_count_(threads) {}

Database::~Database() { Stop(); }

void Database::Prepare(std::string name, std::string sql) {
    std::lock_guard lock(statements_mu_);
    for (const auto& [known, text] : statements_) {
        if (known != name) continue;
        if (text == sql) return;
        throw std::logic_error("statement " + name + " registered twice with different SQL");
    }
    statements_.emplace_back(std::move(name), std::move(sql));
}

std::vector<std::pair<std::string, std::string>> Database::StatementsFrom(std::size_t from) const {
    std::lock_guard lock(statements_mu_);
    if (from >= statements_.size()) return {};
    return {statements_.begin() + static_cast<std::ptrdiff_t>(from), statements_.end()};
}

bool ClosedWhileIdle(int socket, std::string_view connection) {
    int n = 1;
    if (socket >= 0) {
        pollfd p{socket, POLLIN, 0};
        do {
            n = ::poll(&p, 1, 0);
        } while (n < 0 && errno == EINTR);
    }
    if (n <= 0) return false;  // nothing to read: still open
    spdlog::info("database connection {} was closed by the server while idle; reopening",
                 connection);
    return true;  // readable, hung up, an error, or no socket at all
}

namespace {
constexpr const char* kPing = "database_ping";
}  // namespace

asio::awaitable<void> Database::Ping() {
    co_await Run([](pqxx::connection_base& c) {
        pqxx::nontransaction n(c);
        n.exec_prepared(kPing);
    });
}

void Database::Start() {
    Prepare(kPing, "SELECT 1");
    for (int i = 0; i < threads_count_; ++i) {
        threads_.emplace_back([this, i] { ThreadMain(i); });
    }
}

void Database::Stop() {
    {
        std::lock_guard lock(mu_);
        if (stopping_ && threads_.empty()) return;
        stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    threads_.clear();
}

void Database::Submit(Job job, std::function<void(std::exception_ptr)> done) {
    Enqueue(Pending{std::move(job), nullptr, std::move(done)});
}

void Database::Offload(std::function<void()> job, std::function<void(std::exception_ptr)> done) {
    Enqueue(Pending{nullptr, std::move(job), std::move(done)});
}

void Database::Enqueue(Pending item) {
    {
        std::lock_guard lock(mu_);
        if (!stopping_) {
            queue_.push_back(std::move(item));
            cv_.notify_one();
            return;
        }
    }
    item.done(std::make_exception_ptr(DatabaseUnavailable("database pool is stopped")));
}

asio::awaitable<void> Database::Run(Job job) {
    co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::exception_ptr)>(
        [this, &job](auto handler) {
            // Posted: with the pool stopped, Submit calls back at once, inside this initiation.
            Submit(std::move(job), ResumeWith</*kPost=*/true>(std::move(handler)));
        },
        asio::use_awaitable);
}

void Database::RunSync(Job job) {
    std::promise<void> promise;
    auto future = promise.get_future();
    Submit(std::move(job), [&promise](std::exception_ptr ep) {
        if (ep) {
            promise.set_exception(ep);
        } else {
            promise.set_value();
        }
    });
    future.get();
}

PoolStats Database::Stats() const {
    PoolStats s;
    s.size = threads_count_;
    s.busy = busy_.load();
    {
        std::lock_guard lock(mu_);
        s.queued = queue_.size();
    }
    s.jobs = jobs_.load();
    s.failures = failures_.load();
    return s;
}

bool IsConnectionError(const std::exception& e) {
    if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) return true;
    if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) return true;
    if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
        // Class 08: connection exception; 57P01..57P03: admin shutdown, crash shutdown, cannot
        // connect now (the server is starting or stopping).
        const std::string& state = sql->sqlstate();
        return state.rfind("08", 0) == 0 || state == "57P01" || state == "57P02" ||
               state == "57P03";
    }
    return false;
}

void Database::ThreadMain(int index) {
    std::unique_ptr<pqxx::connection> conn;
    std::size_t prepared = 0;  // statements prepared on `conn`
    ConnectBackoff backoff(*this);
    const std::string name = std::to_string(index);  // for the log

    auto open = [&]() -> bool {
        if (conn && conn->is_open() && !ClosedWhileIdle(conn->sock(), name)) {
            return true;
        }
        conn.reset();
        if (!backoff.MayTry()) return false;
        backoff.Begin();
        try {
            auto c = std::make_unique<pqxx::connection>(dsn_);
            const auto statements = StatementsFrom(0);
            for (const auto& [name, sql] : statements) c->prepare(name, sql);
            conn = std::move(c);
            prepared = statements.size();
            backoff.Succeeded();
            return true;
        } catch (const std::exception& e) {
            spdlog::warn("database connection {} failed: {}", index, e.what());
            backoff.Failed();
            return false;
        }
    };

    for (;;) {
        Pending item;
        {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping and drained
            item = std::move(queue_.front());
            queue_.pop_front();
        }
        ++busy_;
        ++jobs_;
        std::exception_ptr ep;
        if (item.plain) {
            try {
                item.plain();
            } catch (...) {
                ep = std::current_exception();
            }
        } else if (!open()) {
            ep = std::make_exception_ptr(DatabaseUnavailable("database unreachable"));
        } else {
            try {
                // Statements registered since the connection opened.
                for (const auto& [name, sql] : StatementsFrom(prepared)) {
                    conn->prepare(name, sql);
                    ++prepared;
                }
                item.job(*conn);
            } catch (const std::exception& e) {
                if (IsConnectionError(e) || !conn->is_open()) {
                    spdlog::warn("database connection {} lost: {}", index, e.what());
                    conn.reset();
                    ep = std::make_exception_ptr(DatabaseUnavailable(e.what()));
                } else {
                    ep = std::current_exception();
                }
            } catch (...) {
                ep = std::current_exception();
            }
        }
        if (ep) ++failures_;
        --busy_;
        item.done(ep);
    }
}

}  // namespace genhost::store
