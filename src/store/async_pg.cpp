#include "genhost/store/async_pg.hpp"

#include <libpq-fe.h>
#include <spdlog/spdlog.h>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

namespace genhost::store {

namespace asio = boost::asio;

// --- PgResult ----------------------------------------------------------------------------------

void PgResult::Clear(pg_result* r) { PQclear(r); }

int PgResult::rows() const { return r_ ? PQntuples(r_.get()) : 0; }

bool PgResult::IsNull(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }

std::string_view PgResult::Text(int row, int col) const {
    return {PQgetvalue(r_.get(), row, col),
            static_cast<std::size_t>(PQgetlength(r_.get(), row, col))};
}

long long PgResult::Int64(int row, int col) const {
    const std::string_view text = Text(row, col);
    long long v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) {
        throw std::runtime_error("not an integer: " + std::string(text));
    }
    return v;
}

double PgResult::Double(int row, int col) const {
    const char* text = PQgetvalue(r_.get(), row, col);  // NUL-terminated
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0') throw std::runtime_error(std::string("not a number: ") + text);
    return v;
}

// --- AsyncStatement ----------------------------------------------------------------------------

struct AsyncStatement::Socket {
    Socket(const asio::any_io_executor& ex, int fd) : descriptor(ex, fd) {}
    // The descriptor belongs to libpq: released, never closed, by Asio.
    ~Socket() {
        boost::system::error_code ignored;
        descriptor.cancel(ignored);
        descriptor.release();
    }
    asio::posix::stream_descriptor descriptor;
};

namespace {

// IsConnectionState: class 08 (connection exception) and 57P01..57P03 (shutting down, crashed,
// starting), as IsConnectionError in database.cpp.
bool IsConnectionState(const char* state) {
    if (state == nullptr) return false;
    const std::string_view s(state);
    return s.rfind("08", 0) == 0 || s == "57P01" || s == "57P02" || s == "57P03";
}

// Trimmed drops the line ends and spaces libpq leaves at the end of its messages.
std::string Trimmed(std::string message) {
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
        message.pop_back();
    }
    return message;
}

std::string ConnectionMessage(pg_conn* conn) {
    std::string message = Trimmed(conn != nullptr ? PQerrorMessage(conn) : "out of memory");
    return message.empty() ? "database connection lost" : message;
}

}  // namespace

AsyncStatement::AsyncStatement(Database& db, std::string name, std::string sql, bool idempotent)
    : db_(db), name_(std::move(name)), sql_(std::move(sql)), idempotent_(idempotent) {}

AsyncStatement::~AsyncStatement() { Drop(); }

void AsyncStatement::Drop() {
    socket_.reset();
    if (conn_ != nullptr) PQfinish(conn_);
    conn_ = nullptr;
    used_ = false;
}

void AsyncStatement::Exec(asio::any_io_executor ex, std::vector<std::string> params, Done done) {
    in_exec_ = true;
    ex_ = std::move(ex);
    params_ = std::move(params);
    done_ = std::move(done);
    retried_ = false;
    // A write must never be sent twice, so a connection the server closed while it sat idle is
    // found (one poll(2)) and replaced before the write goes out. A read skips that system call:
    // on such a connection it fails, and Lost sends it once more on a new connection.
    if (!idempotent_ && conn_ != nullptr && ClosedWhileIdle(PQsocket(conn_), name_)) {
        Drop();  // nothing has been sent on it yet: a new connection is safe, even for a write
    }
    reused_ = used_;
    if (conn_ == nullptr) {
        Connect();
    } else {
        Send();
    }
    in_exec_ = false;
}

void AsyncStatement::Connect() {
    // While the server is unreachable, calls fail at once (ConnectBackoff). A connection lost in
    // use is reopened at once.
    if (!backoff_.MayTry()) {
        Finish({}, std::make_exception_ptr(DatabaseUnavailable("database unreachable")));
        return;
    }
    // libpq's connect and prepare block: a pool thread does them.
    backoff_.Begin();
    db_.Offload(
        [this] {
            pg_conn* c = PQconnectdb(db_.dsn().c_str());
            if (c == nullptr || PQstatus(c) != CONNECTION_OK) {
                const std::string message = ConnectionMessage(c);
                if (c != nullptr) PQfinish(c);
                throw DatabaseUnavailable(message);
            }
            PQsetNoticeProcessor(
                c, [](void*, const char*) {}, nullptr);
            pg_result* r = PQprepare(c, name_.c_str(), sql_.c_str(), 0, nullptr);
            const bool prepared = r != nullptr && PQresultStatus(r) == PGRES_COMMAND_OK;
            const std::string error = r != nullptr ? PQresultErrorMessage(r) : "";
            if (r != nullptr) PQclear(r);
            if (!prepared || PQsetnonblocking(c, 1) != 0) {
                const bool lost = PQstatus(c) != CONNECTION_OK;
                const std::string message =
                    error.empty() ? ConnectionMessage(c) : "preparing " + name_ + ": " + error;
                PQfinish(c);
                if (lost) throw DatabaseUnavailable(message);
                throw std::runtime_error(message);
            }
            conn_ = c;
        },
        [this](std::exception_ptr ep) {
            if (ep) {
                backoff_.Failed();
                Finish({}, ep);
                return;
            }
            backoff_.Succeeded();
            try {
                socket_ = std::make_unique<Socket>(ex_, PQsocket(conn_));
            } catch (...) {
                Drop();
                Finish({}, std::current_exception());
                return;
            }
            Send();
        });
}

void AsyncStatement::Send() {
    std::vector<const char*> values;
    values.reserve(params_.size());
    for (const auto& p : params_) values.push_back(p.c_str());
    if (PQsendQueryPrepared(conn_, name_.c_str(), static_cast<int>(values.size()), values.data(),
                            nullptr, nullptr, 0) == 0) {
        // Nothing reached the server: sending again on a new connection is always safe.
        const std::string message = ConnectionMessage(conn_);
        Drop();
        if (!retried_) {
            retried_ = true;
            Connect();
            return;
        }
        Finish({}, std::make_exception_ptr(DatabaseUnavailable(message)));
        return;
    }
    Flush();
}

void AsyncStatement::Flush() {
    const int r = PQflush(conn_);
    if (r == 0) {
        Read();
        return;
    }
    if (r < 0) {
        Lost(ConnectionMessage(conn_));
        return;
    }
    socket_->descriptor.async_wait(asio::posix::descriptor_base::wait_write,
                                   [this](const boost::system::error_code& ec) {
                                       if (ec) {
                                           Lost(ec.message());
                                           return;
                                       }
                                       Flush();
                                   });
}

void AsyncStatement::Read() {
    socket_->descriptor.async_wait(asio::posix::descriptor_base::wait_read,
                                   [this](const boost::system::error_code& ec) {
                                       if (ec) {
                                           Lost(ec.message());
                                           return;
                                       }
                                       if (PQconsumeInput(conn_) == 0) {
                                           Lost(ConnectionMessage(conn_));
                                           return;
                                       }
                                       while (PQisBusy(conn_) == 0) {
                                           pg_result* r = PQgetResult(conn_);
                                           if (r == nullptr) {
                                               Completed();
                                               return;
                                           }
                                           // One statement gives one result; keep the first (an
                                           // error, if it failed).
                                           if (!has_result_) {
                                               result_ = PgResult(r);
                                               has_result_ = true;
                                           } else {
                                               PQclear(r);
                                           }
                                       }
                                       Read();  // the rest of the result is still on its way
                                   });
}

void AsyncStatement::Completed() {
    PgResult result = std::move(result_);
    result_ = {};
    const bool had = has_result_;
    has_result_ = false;
    const ExecStatusType status = had ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
        used_ = true;
        Finish(std::move(result), nullptr);
        return;
    }
    const char* state = had ? PQresultErrorField(result.get(), PG_DIAG_SQLSTATE) : nullptr;
    if (PQstatus(conn_) != CONNECTION_OK || IsConnectionState(state)) {
        Lost(had ? PQresultErrorMessage(result.get()) : ConnectionMessage(conn_));
        return;
    }
    const std::string message = Trimmed(PQresultErrorMessage(result.get()));
    used_ = true;
    Finish({}, std::make_exception_ptr(std::runtime_error(name_ + ": " + message)));
}

void AsyncStatement::Lost(const std::string& message) {
    spdlog::warn("database connection for {} lost: {}", name_, message);
    Drop();
    result_ = {};
    has_result_ = false;
    // A read sent on a connection that had sat idle may have met a server that restarted since:
    // it is sent once more on a new connection. A write is not: it may have been applied.
    if (idempotent_ && reused_ && !retried_) {
        retried_ = true;
        Connect();
        return;
    }
    Finish({}, std::make_exception_ptr(DatabaseUnavailable(message)));
}

void AsyncStatement::Finish(PgResult result, std::exception_ptr ep) {
    Done done = std::move(done_);
    done_ = nullptr;
    params_.clear();
    if (in_exec_) {
        // Never inside Exec: the caller may still hold its own state.
        asio::post(ex_, [done = std::move(done), result = std::move(result), ep]() mutable {
            done(std::move(result), ep);
        });
        return;
    }
    done(std::move(result), ep);
}

}  // namespace genhost::store
