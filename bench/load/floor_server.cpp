// genhost_floor_server: the least a server can do for the two requests of bench/load/run.sh, to
// measure what is left for genhost on this machine (bench/load/floor_db.sh, docs/performance.md).
//
// It answers only POST /v1/text_to_image and GET /v1/tasks/{id}, over keep-alive HTTP/1.1, and
// stores and reads tasks with genhost's own statements against genhost's own tables: a creation
// is a row of genhost_create_tasks (migration 0004/0006) in a batch, a poll a row of the batched
// id lookup. Concurrent calls are batched as genhost does: each thread has one connection for
// each kind, and what arrives while that connection is busy goes in its next batch.
//
// Everything else genhost does is left out on purpose: no authentication (every task belongs to
// --org), no version header, no validation (the body is stored as the task's input as it came),
// no routing beyond the two paths, no access log, no metrics, no request ids, no error bodies.
// It is not a server to use; it is a yardstick. Each thread runs its own epoll loop on its own
// SO_REUSEPORT listening socket, with non-blocking libpq.
//
//   genhost_floor_server --port P --dsn DSN --org ORG_ID [--threads 2] [--insert-only]
//
// --insert-only stores a creation with a bare INSERT of the task rows, without the limits'
// bookkeeping: the least PostgreSQL can be asked to do for it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "loadgen_core.hpp"

namespace {

constexpr const char* kCreateSql =
    "SELECT result, retry_after, (extract(epoch FROM created_at) * 1000000)::bigint"
    " FROM genhost_create_tasks($1::jsonb)";
// With --insert-only: the task rows alone, as THROTTLED tasks of the open tier's flood, without
// the limits' bookkeeping (the daily count, the concurrency slots, the waiting-task check). No
// server that keeps those limits can spend less in PostgreSQL on a creation. Its rows come back
// in no promised order; Created only looks for "rate_limited", which it never returns.
constexpr const char* kInsertOnlySql =
    "INSERT INTO tasks (id, org_id, endpoint, model, limit_key, status, input, estimated_credits)"
    " SELECT (e->>'id')::uuid, (e->>'org_id')::uuid, e->>'endpoint', e->>'model',"
    " e->>'limit_key', 'THROTTLED', e->'input', (e->>'credits')::double precision"
    " FROM jsonb_array_elements($1::jsonb) e"
    " RETURNING 'THROTTLED', 0, (extract(epoch FROM created_at) * 1000000)::bigint";
constexpr const char* kGetSql =
    "SELECT id, endpoint, model, status, (extract(epoch FROM created_at) * 1000000)::bigint,"
    " estimated_credits, progress, outputs, failure, failure_code, org_id"
    " FROM tasks WHERE id = ANY((SELECT $1::uuid[])::uuid[]) AND NOT deleted";
constexpr std::size_t kMaxBatch = 64;

[[noreturn]] void Die(const std::string& what) {
    std::fprintf(stderr, "genhost_floor_server: %s\n", what.c_str());
    std::exit(1);
}

struct Options {
    int port = 0;
    std::string dsn;
    std::string org;
    int threads = 2;
    bool insert_only = false;
};

// "2026-11-23T23:37:25.621Z" from microseconds since the epoch, as genhost writes createdAt.
std::string IsoTime(std::int64_t us) {
    const std::time_t s = static_cast<std::time_t>(us / 1000000);
    std::tm tm{};
    gmtime_r(&s, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>((us / 1000) % 1000));
    return buf;
}

class Loop;

struct Client {
    int fd = -1;
    std::string in;
    std::string out;           // bytes not yet written
    bool busy = false;         // a request is being answered; later bytes wait
    bool want_out = false;     // EPOLLOUT is being watched for
    std::uint64_t serial = 0;  // tells a reused slot from the client a batch answers
};

struct Pending {
    Client* client;
    std::uint64_t serial;
    std::string key;   // create: the new task's id; poll: the task id asked for
    std::string body;  // create: the input JSON
};

// One libpq connection and its batching: calls wait in `waiting` while a batch runs.
struct Lane {
    PGconn* conn = nullptr;
    const char* name = nullptr;
    bool running = false;
    std::deque<Pending> waiting;
    std::vector<Pending> batch;
};

class Loop {
  public:
    Loop(const Options& o, std::uint64_t seed) : o_(o), rng_(seed) {
        ep_ = epoll_create1(0);
        if (ep_ < 0) Die("epoll_create1");
        listen_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        int one = 1;
        setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        setsockopt(listen_, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(o.port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            listen(listen_, 1024) != 0)
            Die("cannot listen on 127.0.0.1:" + std::to_string(o.port));
        Watch(listen_, EPOLLIN, &listen_);
        Connect(create_, "floor_create", o_.insert_only ? kInsertOnlySql : kCreateSql);
        Connect(get_, "floor_get", kGetSql);
    }

    void Run() {
        epoll_event events[64];
        for (;;) {
            const int n = epoll_wait(ep_, events, 64, -1);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) Die("epoll_wait");
            for (int i = 0; i < n; ++i) {
                void* p = events[i].data.ptr;
                if (p == &listen_) {
                    Accept();
                } else if (p == &create_) {
                    Results(create_);
                } else if (p == &get_) {
                    Results(get_);
                } else {
                    auto* c = static_cast<Client*>(p);
                    if (events[i].events & EPOLLOUT) Flush(*c);
                    if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) Read(*c);
                }
            }
        }
    }

  private:
    void Watch(int fd, std::uint32_t events, void* ptr, int op = EPOLL_CTL_ADD) {
        epoll_event ev{};
        ev.events = events;
        ev.data.ptr = ptr;
        if (epoll_ctl(ep_, op, fd, &ev) != 0) Die("epoll_ctl");
    }

    void Connect(Lane& lane, const char* name, const char* sql) {
        lane.conn = PQconnectdb(o_.dsn.c_str());
        if (PQstatus(lane.conn) != CONNECTION_OK) Die(PQerrorMessage(lane.conn));
        PGresult* r = PQprepare(lane.conn, name, sql, 0, nullptr);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) Die(PQresultErrorMessage(r));
        PQclear(r);
        PQsetnonblocking(lane.conn, 1);
        lane.name = name;
        Watch(PQsocket(lane.conn), EPOLLIN, &lane);
    }

    void Accept() {
        for (;;) {
            const int fd = accept4(listen_, nullptr, nullptr, SOCK_NONBLOCK);
            if (fd < 0) return;
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            auto c = std::make_unique<Client>();
            c->fd = fd;
            c->serial = ++serials_;
            Watch(fd, EPOLLIN | EPOLLRDHUP, c.get());
            clients_.emplace(c.get(), std::move(c));
        }
    }

    void Close(Client& c) {
        epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
        close(c.fd);
        c.serial = 0;  // answers still in a batch find no client
        closed_.push_back(std::move(clients_[&c]));
        clients_.erase(&c);
    }

    void Read(Client& c) {
        char buf[16384];
        for (;;) {
            const ssize_t n = recv(c.fd, buf, sizeof buf, 0);
            if (n > 0) {
                c.in.append(buf, static_cast<std::size_t>(n));
                if (static_cast<std::size_t>(n) < sizeof buf) break;
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                Close(c);
                return;
            } else {
                break;
            }
        }
        Parse(c);
    }

    // Parse takes the next whole request from c.in, when no answer is outstanding.
    void Parse(Client& c) {
        if (c.busy) return;
        const auto end = c.in.find("\r\n\r\n");
        if (end == std::string::npos) return;
        const std::string_view head(c.in.data(), end + 2);
        std::size_t length = 0;
        for (std::size_t pos = head.find("\r\n"); pos + 2 < head.size();) {
            const std::size_t next = head.find("\r\n", pos + 2);
            const std::string_view line = head.substr(pos + 2, next - pos - 2);
            constexpr std::string_view kName = "content-length:";
            if (line.size() > kName.size() &&
                genhost::loadgen::iequals(line.substr(0, kName.size()), kName))
                length = std::strtoul(std::string(line.substr(kName.size())).c_str(), nullptr, 10);
            pos = next;
        }
        if (c.in.size() < end + 4 + length) return;
        const std::string line(head.substr(0, head.find("\r\n")));
        std::string body = c.in.substr(end + 4, length);
        c.in.erase(0, end + 4 + length);
        c.busy = true;
        constexpr std::string_view kPost = "POST /v1/text_to_image ";
        constexpr std::string_view kGet = "GET /v1/tasks/";
        if (line.compare(0, kPost.size(), kPost) == 0) {
            Submit(create_, Pending{&c, c.serial, NewId(), std::move(body)});
        } else if (line.compare(0, kGet.size(), kGet) == 0) {
            const std::string_view rest = std::string_view(line).substr(kGet.size());
            Submit(get_, Pending{&c, c.serial, std::string(rest.substr(0, rest.find(' '))), {}});
        } else {
            Answer(c, "404 Not Found", R"({"error":"Not found"})");
        }
    }

    // The shape of genhost's task ids (NewOrderedUuid): the milliseconds since 1970 in the first
    // 48 bits, the version 4 nibble, the RFC 4122 variant, and random bits.
    std::string NewId() {
        const auto ms =
            static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
        std::uint64_t a = (ms << 16) | (rng_() & 0x0fffULL) | 0x4000ULL, b = rng_();
        b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
        char buf[37];
        std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx",
                      static_cast<unsigned>(a >> 32), static_cast<unsigned>((a >> 16) & 0xffff),
                      static_cast<unsigned>(a & 0xffff), static_cast<unsigned>(b >> 48),
                      static_cast<unsigned long long>(b & 0xffffffffffffULL));
        return buf;
    }

    void Submit(Lane& lane, Pending p) {
        lane.waiting.push_back(std::move(p));
        if (!lane.running) Start(lane);
    }

    void Start(Lane& lane) {
        lane.batch.clear();
        while (!lane.waiting.empty() && lane.batch.size() < kMaxBatch) {
            lane.batch.push_back(std::move(lane.waiting.front()));
            lane.waiting.pop_front();
        }
        if (lane.batch.empty()) return;
        std::string param;
        if (&lane == &get_) {
            param = "{";
            for (const auto& p : lane.batch) {
                if (param.size() > 1) param += ',';
                param += p.key;
            }
            param += '}';
        } else {
            // The argument genhost's CreateBatchJson writes, for tier 1 of bench/load/run.sh.
            param = "[";
            for (const auto& p : lane.batch) {
                if (param.size() > 1) param += ',';
                param +=
                    R"({"id":")" + p.key + R"(","org_id":")" + o_.org +
                    R"(","endpoint":"text_to_image","model":"gen4_image","limit_key":"gen4_image",)"
                    R"("credits":5,"max_concurrent":20,"max_daily":100000000,"input":)" +
                    p.body + "}";
            }
            param += ']';
        }
        const char* values[1] = {param.c_str()};
        if (PQsendQueryPrepared(lane.conn, lane.name, 1, values, nullptr, nullptr, 0) != 1)
            Die(PQerrorMessage(lane.conn));
        while (PQflush(lane.conn) == 1) {
        }
        lane.running = true;
    }

    void Results(Lane& lane) {
        if (PQconsumeInput(lane.conn) == 0) Die(PQerrorMessage(lane.conn));
        while (PQisBusy(lane.conn) == 0) {
            PGresult* r = PQgetResult(lane.conn);
            if (r == nullptr) {
                lane.running = false;
                Start(lane);
                return;
            }
            if (PQresultStatus(r) != PGRES_TUPLES_OK) Die(PQresultErrorMessage(r));
            if (&lane == &get_) {
                Polled(lane, r);
            } else {
                Created(lane, r);
            }
            PQclear(r);
        }
    }

    void Created(Lane& lane, PGresult* r) {
        for (std::size_t i = 0; i < lane.batch.size(); ++i) {
            Pending& p = lane.batch[i];
            if (p.client->serial != p.serial) continue;
            if (static_cast<int>(i) >= PQntuples(r) ||
                std::string_view(PQgetvalue(r, static_cast<int>(i), 0)) == "rate_limited") {
                Answer(*p.client, "429 Too Many Requests", R"({"error":"rate limited"})");
                continue;
            }
            Answer(*p.client, "200 OK", R"({"estimatedCost":{"credits":5},"id":")" + p.key + "\"}");
        }
    }

    void Polled(Lane& lane, PGresult* r) {
        for (const Pending& p : lane.batch) {
            if (p.client->serial != p.serial) continue;
            int row = -1;
            for (int j = 0; j < PQntuples(r); ++j)
                if (p.key == PQgetvalue(r, j, 0)) row = j;
            if (row < 0) {
                Answer(*p.client, "404 Not Found", R"({"error":"Task not found"})");
                continue;
            }
            // The fields genhost gives a task that has not started; the floor does not look at
            // outputs or failures.
            std::string body =
                R"({"createdAt":")" + IsoTime(std::strtoll(PQgetvalue(r, row, 4), nullptr, 10)) +
                R"(","estimatedCost":{"credits":)" + std::string(PQgetvalue(r, row, 5)) +
                R"(},"id":")" + p.key + R"(","status":")" + PQgetvalue(r, row, 3) + "\"}";
            Answer(*p.client, "200 OK", body);
        }
    }

    void Answer(Client& c, const char* status, const std::string& body) {
        c.out += "HTTP/1.1 ";
        c.out += status;
        c.out += "\r\nContent-Type: application/json\r\nContent-Length: ";
        c.out += std::to_string(body.size());
        c.out += "\r\n\r\n";
        c.out += body;
        c.busy = false;
        Flush(c);
        if (c.serial != 0) Parse(c);
    }

    void Flush(Client& c) {
        while (!c.out.empty()) {
            const ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
            if (n > 0) {
                c.out.erase(0, static_cast<std::size_t>(n));
            } else if (n < 0 && errno == EAGAIN) {
                if (!c.want_out) Watch(c.fd, EPOLLIN | EPOLLRDHUP | EPOLLOUT, &c, EPOLL_CTL_MOD);
                c.want_out = true;
                return;
            } else {
                Close(c);
                return;
            }
        }
        if (c.want_out) Watch(c.fd, EPOLLIN | EPOLLRDHUP, &c, EPOLL_CTL_MOD);
        c.want_out = false;
    }

    const Options& o_;
    std::mt19937_64 rng_;
    int ep_ = -1;
    int listen_ = -1;
    Lane create_;
    Lane get_;
    std::uint64_t serials_ = 0;
    std::unordered_map<Client*, std::unique_ptr<Client>> clients_;
    std::vector<std::unique_ptr<Client>> closed_;  // kept: a running batch may point at them
};

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; i += 2) {
        const std::string arg = argv[i];
        if (arg == "--insert-only") {
            o.insert_only = true;
            --i;
            continue;
        }
        if (i + 1 >= argc) Die("missing value for " + arg);
        const std::string value = argv[i + 1];
        if (arg == "--port") {
            o.port = std::atoi(value.c_str());
        } else if (arg == "--dsn") {
            o.dsn = value;
        } else if (arg == "--org") {
            o.org = value;
        } else if (arg == "--threads") {
            o.threads = std::atoi(value.c_str());
        } else {
            Die("unknown argument " + arg);
        }
    }
    if (o.port <= 0 || o.dsn.empty() || o.org.empty() || o.threads < 1)
        Die("usage: genhost_floor_server --port P --dsn DSN --org ORG_ID [--threads N]"
            " [--insert-only]");
    std::random_device seed;
    std::vector<std::unique_ptr<Loop>> loops;
    for (int t = 0; t < o.threads; ++t)
        loops.push_back(std::make_unique<Loop>(o, (std::uint64_t{seed()} << 32) | seed()));
    std::printf("listening on 127.0.0.1:%d with %d threads\n", o.port, o.threads);
    std::fflush(stdout);
    std::vector<std::thread> threads;
    for (auto& l : loops) threads.emplace_back([&l] { l->Run(); });
    for (auto& t : threads) t.join();
}
