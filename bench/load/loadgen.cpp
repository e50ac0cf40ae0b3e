// genhost_loadgen: the HTTP load generator of bench/load/run.sh.
//
// Keep-alive HTTP/1.1 connections, one request in flight on each, spread over threads that each
// run their own event loop. Three scenarios: `create` (POST /v1/text_to_image with a new seed each
// time), `routed` (the same image through POST /v1/generate/image and the router `--router`)
// and `poll` (GET /v1/tasks/{id} over the ids of a file). Two ways of sending:
//   * closed loop (no --rate): each connection sends its next request as soon as the previous
//     response is in, like wrk; the rate is the server's capacity.
//   * open loop (--rate R): every connection has its own schedule of R/connections requests per
//     second, sent on the first 200 us tick at or after its due time (--tick-us; one wake-up a
//     tick instead of one a request), and a request's latency counts from when it was due, so a
//     server that falls behind is charged for the wait (wrk2's correction). wrk takes a
//     script's delay in whole milliseconds, which is why this program exists
//     (docs/performance.md).
// Prints wrk's "Requests/sec:" line, the count of responses with status >= 400, socket errors,
// latency percentiles and its own CPU per request.
//
//   genhost_loadgen --scenario create|routed|poll [--url http://127.0.0.1:8080] [--connections 16]
//                   [--threads 2] [--duration 15] [--rate R] [--tick-us 200] [--ids FILE]
//                   [--router SLUG] (routed: the router's slug, default "bench")
//                   [--unix PATH]   (a unix-domain socket instead of the URL's host and port;
//                                    the URL still names the Host header)
// Environment: GENHOST_API_KEY.
#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "loadgen_core.hpp"

namespace asio = boost::asio;
using asio::ip::tcp;
using Protocol = asio::generic::stream_protocol;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    std::string host = "127.0.0.1";
    std::string port = "8080";
    std::string scenario;
    std::string router = "bench";  // --router: the slug of the routed scenario
    std::string ids_file;
    std::string unix_path;  // --unix: connect to this unix-domain socket instead of host:port
    std::string key;
    int connections = 16;
    int threads = 2;
    double duration_s = 15;
    double rate = 0;  // requests per second in all; 0: closed loop
    std::chrono::nanoseconds tick{std::chrono::microseconds(200)};  // open loop: send_time
};

struct Stats {
    std::vector<std::int64_t> latencies_ns;
    std::uint64_t responses = 0;
    std::uint64_t status_400_plus = 0;
    std::uint64_t socket_errors = 0;
    int active = 0;  // connections of this thread that still have requests to send or await
};

struct Run {
    Options options;
    std::vector<std::string> ids;
    bool create = false;  // the create or routed scenario; otherwise poll
    bool routed = false;  // create through POST /v1/generate/image
    // The header lines every request carries (Host, Authorization, X-Service-Version), built once.
    std::string headers;
    Clock::time_point start;
    Clock::time_point deadline;
    Clock::time_point give_up;  // in-flight responses are waited for until then
};

class Connection {
  public:
    Connection(asio::io_context& io, const Run& run, Stats& stats, Protocol::endpoint ep,
               std::size_t index)
        : io_(io),
          run_(run),
          stats_(stats),
          endpoint_(std::move(ep)),
          socket_(io),
          timer_(io),
          index_(index),
          next_id_(index * 7919) {
        request_.reserve(1024);
        input_.reserve(8192);
    }

    void start() { connect(); }

  private:
    bool open_loop() const { return run_.options.rate > 0; }

    void connect() {
        socket_.async_connect(endpoint_, [this](boost::system::error_code ec) {
            if (ec) return fail();
            if (run_.options.unix_path.empty()) socket_.set_option(tcp::no_delay(true));
            next();
        });
    }

    // Waits for the next request's due time and sends it: in a closed loop at once (but not
    // before the run's start, so every counted response falls within the run), in an open loop
    // on the connection's schedule.
    void next() {
        const auto now = Clock::now();
        if (open_loop()) {
            const double per_connection = run_.options.rate / run_.options.connections;
            const auto due =
                genhost::loadgen::due_time(sent_, per_connection, index_, run_.options.connections);
            due_ = run_.start + std::chrono::duration_cast<Clock::duration>(due);
            send_at_ = run_.start + std::chrono::duration_cast<Clock::duration>(
                                        genhost::loadgen::send_time(due, run_.options.tick));
        } else {
            due_ = send_at_ = std::max(now, run_.start);
        }
        if (due_ >= run_.deadline) return finish();
        if (send_at_ <= now) return send();
        timer_.expires_at(send_at_);
        timer_.async_wait([this](boost::system::error_code ec) {
            if (!ec) send();
        });
    }

    void send() {
        ++sent_;
        build_request();
        asio::async_write(socket_, asio::buffer(request_),
                          [this](boost::system::error_code ec, std::size_t) {
                              if (ec) return fail();
                              read();
                          });
    }

    void read() {
        socket_.async_read_some(
            asio::buffer(chunk_), [this](boost::system::error_code ec, std::size_t n) {
                if (ec) return fail();
                input_.append(chunk_, n);
                const auto response = genhost::loadgen::ResponseFramer::feed(input_);
                if (!response) return read();
                if (response->length == 0) return fail();
                const auto now = Clock::now();
                if (now > run_.give_up) return finish();
                ++stats_.responses;
                if (response->status >= 400) ++stats_.status_400_plus;
                stats_.latencies_ns.push_back(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(now - due_).count());
                input_.erase(0, response->length);
                next();
            });
    }

    // A failed connection is counted, closed and opened again (after 10 ms, so a refusing
    // server is not spun on).
    void fail() {
        ++stats_.socket_errors;
        boost::system::error_code ignored;
        socket_.close(ignored);
        input_.clear();
        if (Clock::now() + std::chrono::milliseconds(10) >= run_.deadline) return finish();
        timer_.expires_after(std::chrono::milliseconds(10));
        timer_.async_wait([this](boost::system::error_code ec) {
            if (!ec) connect();
        });
    }

    // This connection is done; the thread's loop ends with its last connection.
    void finish() {
        if (--stats_.active == 0) io_.stop();
    }

    void build_request() {
        request_.clear();
        if (run_.create) {
            // Seeds stay within SPEC.md's 0..4294967295 and differ between connections.
            const std::uint64_t seed = (sent_ * run_.options.connections + index_) % 4294967296ULL;
            std::string body;
            if (run_.routed) {
                body = R"({"configId":")" + run_.options.router +
                       R"(","input":{"promptText":"a lighthouse at dusk","aspectRatio":"16:9",)"
                       R"("resolution":"1k","seed":)" +
                       std::to_string(seed) + "}}";
                request_ += "POST /v1/generate/image HTTP/1.1\r\n";
            } else {
                body = R"({"model":"gen4_image","promptText":"a lighthouse at dusk",)"
                       R"("ratio":"1280:720","seed":)" +
                       std::to_string(seed) + "}";
                request_ += "POST /v1/text_to_image HTTP/1.1\r\n";
            }
            request_ += run_.headers;
            request_ += "Content-Type: application/json\r\nContent-Length: ";
            request_ += std::to_string(body.size());
            request_ += "\r\n\r\n";
            request_ += body;
        } else {
            request_ += "GET /v1/tasks/";
            request_ += run_.ids[next_id_++ % run_.ids.size()];
            request_ += " HTTP/1.1\r\n";
            request_ += run_.headers;
            request_ += "\r\n";
        }
    }

    asio::io_context& io_;
    const Run& run_;
    Stats& stats_;
    Protocol::endpoint endpoint_;
    Protocol::socket socket_;
    asio::steady_timer timer_;
    std::size_t index_;
    std::uint64_t sent_ = 0;
    std::size_t next_id_;
    Clock::time_point due_;      // latency counts from here
    Clock::time_point send_at_;  // the request goes out here (open loop: due_ on a tick)
    std::string request_;
    std::string input_;
    char chunk_[16384];
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(
        stderr,
        "genhost_loadgen: %s\nusage: genhost_loadgen --scenario create|routed|poll [--url "
        "http://HOST:PORT] [--connections N] [--threads N] [--duration S] [--rate R] [--tick-us T] "
        "[--ids FILE] [--unix PATH]\n",
        why);
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) usage(("missing value for " + arg).c_str());
        const std::string value = argv[++i];
        try {
            if (arg == "--scenario") {
                o.scenario = value;
            } else if (arg == "--url") {
                const std::string prefix = "http://";
                if (value.rfind(prefix, 0) != 0) usage("--url must start with http://");
                std::string rest = value.substr(prefix.size());
                if (const auto slash = rest.find('/'); slash != std::string::npos)
                    rest.resize(slash);
                const auto colon = rest.rfind(':');
                if (colon == std::string::npos) usage("--url needs a port");
                o.host = rest.substr(0, colon);
                o.port = rest.substr(colon + 1);
            } else if (arg == "--unix") {
                o.unix_path = value;
            } else if (arg == "--connections") {
                o.connections = std::stoi(value);
            } else if (arg == "--threads") {
                o.threads = std::stoi(value);
            } else if (arg == "--duration") {
                o.duration_s = std::stod(value);
            } else if (arg == "--rate") {
                o.rate = std::stod(value);
            } else if (arg == "--tick-us") {
                o.tick = std::chrono::microseconds(std::stoll(value));
            } else if (arg == "--router") {
                o.router = value;
            } else if (arg == "--ids") {
                o.ids_file = value;
            } else {
                usage(("unknown option " + arg).c_str());
            }
        } catch (const std::logic_error&) {
            usage(("bad value for " + arg).c_str());
        }
    }
    if (o.scenario != "create" && o.scenario != "routed" && o.scenario != "poll")
        usage("--scenario must be create, routed or poll");
    if (o.connections < 1 || o.threads < 1 || o.duration_s <= 0 || o.rate < 0)
        usage("connections, threads and duration must be positive, rate not negative");
    if (o.scenario == "poll" && o.ids_file.empty()) usage("poll needs --ids FILE");
    const char* key = std::getenv("GENHOST_API_KEY");
    if (key == nullptr || *key == '\0') usage("GENHOST_API_KEY is not set");
    o.key = key;
    return o;
}

double cpu_seconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
    Run run;
    run.options = parse(argc, argv);
    const Options& o = run.options;
    if (o.scenario == "poll") {
        std::ifstream in(o.ids_file);
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) run.ids.push_back(line);
        if (run.ids.empty()) usage("the ids file has no ids");
    }
    run.create = o.scenario == "create" || o.scenario == "routed";
    run.routed = o.scenario == "routed";
    run.headers = "Host: " + o.host + ":" + o.port + "\r\nAuthorization: Bearer " + o.key +
                  "\r\nX-Service-Version: 2024-11-06\r\n";

    Protocol::endpoint endpoint;
    if (!o.unix_path.empty()) {
        endpoint = Protocol::endpoint(asio::local::stream_protocol::endpoint(o.unix_path));
    } else {
        asio::io_context io;
        tcp::resolver resolver(io);
        boost::system::error_code ec;
        const auto endpoints = resolver.resolve(o.host, o.port, ec);
        if (ec || endpoints.empty())
            usage(("cannot resolve " + o.host + ": " + ec.message()).c_str());
        endpoint = Protocol::endpoint(endpoints.begin()->endpoint());
    }

    const int threads = std::min(o.threads, o.connections);
    std::vector<Stats> stats(threads);
    std::vector<std::unique_ptr<asio::io_context>> loops;
    std::vector<std::unique_ptr<Connection>> connections;
    for (int t = 0; t < threads; ++t) loops.push_back(std::make_unique<asio::io_context>(1));

    std::printf(
        "%d connections, %d threads, %.0f s, %s, %s\n", o.connections, threads, o.duration_s,
        o.scenario.c_str(),
        o.rate > 0 ? ("open loop at " + std::to_string(static_cast<long>(o.rate)) + " req/s in all")
                         .c_str()
                   : "closed loop");
    const auto duration =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s));
    run.start = Clock::now() + std::chrono::milliseconds(50);  // after the connects
    run.deadline = run.start + duration;
    run.give_up = run.deadline + std::chrono::seconds(2);
    for (int c = 0; c < o.connections; ++c) {
        connections.push_back(std::make_unique<Connection>(*loops[c % threads], run,
                                                           stats[c % threads], endpoint, c));
    }
    for (int c = 0; c < o.connections; ++c) ++stats[c % threads].active;
    for (auto& c : connections) c->start();

    const double cpu0 = cpu_seconds();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&loop = *loops[t], &run] {
            // A loop ends when its connections have nothing left to do, or at give_up.
            asio::steady_timer stop(loop);
            stop.expires_at(run.give_up);
            stop.async_wait([&loop](boost::system::error_code) { loop.stop(); });
            loop.run();
        });
    }
    for (auto& w : workers) w.join();
    const double cpu = cpu_seconds() - cpu0;

    Stats all;
    for (auto& s : stats) {
        all.responses += s.responses;
        all.status_400_plus += s.status_400_plus;
        all.socket_errors += s.socket_errors;
        all.latencies_ns.insert(all.latencies_ns.end(), s.latencies_ns.begin(),
                                s.latencies_ns.end());
    }
    std::sort(all.latencies_ns.begin(), all.latencies_ns.end());
    std::printf("%llu responses in %.2f s\n", static_cast<unsigned long long>(all.responses),
                o.duration_s);
    std::printf("Requests/sec: %.2f\n", static_cast<double>(all.responses) / o.duration_s);
    std::printf("responses with status >= 400: %llu\n",
                static_cast<unsigned long long>(all.status_400_plus));
    std::printf("socket errors: %llu\n", static_cast<unsigned long long>(all.socket_errors));
    for (double p : {50.0, 90.0, 99.0, 99.9}) {
        std::printf("latency p%g: %.2f ms\n", p,
                    static_cast<double>(genhost::loadgen::percentile(all.latencies_ns, p)) / 1e6);
    }
    if (all.responses > 0) {
        std::printf("load generator CPU per request: %.1f us\n",
                    cpu * 1e6 / static_cast<double>(all.responses));
    }
    return all.responses > 0 && all.socket_errors == 0 ? 0 : 1;
}
