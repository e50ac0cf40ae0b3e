// genhost_realtime_flood: N realtime sessions flooding one genhost at once, as issue 31's probe
// did (bench/realtime/flood.sh; docs/performance.md, "Realtime flooding").
//
// Each session (a thread): POST /v1/realtime_sessions (a preset avatar with one backend_rpc
// tool), poll to READY, consume, join the media plane as the user, connect_backend and join as
// the backend, wait for the greeting; then at once the user sends FRAMES binary audio messages
// of 262,143 bytes and the backend ANSWERS unsolicited rpc_response messages of 200 KB, each as
// fast as its socket takes them, until all are sent or the server closes the socket. Meanwhile
// the main thread reads the server's resident memory (/proc/PID/status VmRSS) every 20 ms and
// times GET /healthz on its own connection every 10 ms.
//
// Usage: genhost_realtime_flood --port P --key KEY --pid PID [--sessions N] [--frames F]
//          [--answers A]
// Prints one JSON object: resident memory before, at its peak and after (MB), the /healthz
// latencies (ms: p50, p99, max, failures), and per session what was sent before the server
// closed each socket, and the close codes seen.
#include "client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using Clock = std::chrono::steady_clock;
using genhost::bench::ReadySession;
using genhost::bench::Request;
using nlohmann::json;

namespace {

struct Options {
    unsigned short port = 0;
    std::string key;
    int pid = 0;
    int sessions = 10;
    int frames = 1200;
    int answers = 500;
};

double ResidentMb(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    }
    return 0;
}

using Socket = websocket::stream<asio::ip::tcp::socket>;

// Join opens the media plane at `credentials` on `ws`.
void Join(Socket& ws, unsigned short port, const json& credentials) {
    const std::string url = credentials.value("url", "");
    const std::string path = url.substr(url.find('/', url.find("//") + 2));
    ws.next_layer().connect({asio::ip::make_address("127.0.0.1"), port});
    ws.handshake("127.0.0.1", path + "?access_token=" + credentials["token"].get<std::string>());
}

struct Outcome {
    int frames_sent = 0;
    int answers_sent = 0;
    int user_close = 0;
    int backend_close = 0;
    std::string error;
};

// Drain reads `ws` until it closes; the close code (0 when the connection just failed).
int Drain(Socket& ws) {
    beast::flat_buffer buffer;
    for (;;) {
        beast::error_code ec;
        buffer.clear();
        ws.read(buffer, ec);
        if (ec == websocket::error::closed) return ws.reason().code;
        if (ec) return 0;
    }
}

Outcome Flood(const Options& o) {
    Outcome out;
    try {
        const json session =
            ReadySession(o.port, o.key,
                         {{"model", "gwm1_avatars"},
                          {"avatar", {{"type", "service-preset"}, {"presetId", "human-resource"}}},
                          {"startScript", "Hello."},
                          {"maxDuration", 300},
                          {"tools",
                           {{{"type", "backend_rpc"},
                             {"name", "book_table"},
                             {"description", "Books a table"},
                             {"timeoutSeconds", 5}}}}});
        const std::string id = session["id"];
        asio::io_context io;
        Socket user(io);
        Join(user, o.port,
             Request(o.port, session["sessionKey"].get<std::string>(), http::verb::post,
                     "/v1/realtime_sessions/" + id + "/consume"));
        Socket backend(io);
        Join(backend, o.port,
             Request(o.port, o.key, http::verb::post,
                     "/v1/realtime_sessions/" + id + "/connect_backend"));
        std::this_thread::sleep_for(std::chrono::seconds(1));  // the greeting begins
        std::thread user_side([&] {
            std::string frame(262143, '\0');
            frame[0] = 0x01;
            user.binary(true);
            for (; out.frames_sent < o.frames; ++out.frames_sent) {
                beast::error_code ec;
                user.write(asio::buffer(frame), ec);
                if (ec) break;
            }
            out.user_close = Drain(user);
        });
        std::thread backend_side([&] {
            const std::string filler(200 * 1024, 'x');
            backend.binary(false);
            for (; out.answers_sent < o.answers; ++out.answers_sent) {
                const std::string m = json{
                    {"type", "rpc_response"},
                    {"id", "unasked-" + std::to_string(out.answers_sent)},
                    {"payload", filler}}.dump();
                beast::error_code ec;
                backend.write(asio::buffer(m), ec);
                if (ec) break;
            }
            // The backend stays until the session ends (the user's socket closing ends it).
            out.backend_close = Drain(backend);
        });
        user_side.join();
        backend_side.join();
    } catch (const std::exception& e) {
        out.error = e.what();
    }
    return out;
}

double Percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const std::string v = argv[i + 1];
        if (a == "--port") o.port = static_cast<unsigned short>(std::stoi(v));
        if (a == "--key") o.key = v;
        if (a == "--pid") o.pid = std::stoi(v);
        if (a == "--sessions") o.sessions = std::stoi(v);
        if (a == "--frames") o.frames = std::stoi(v);
        if (a == "--answers") o.answers = std::stoi(v);
    }
    if (o.port == 0 || o.key.empty() || o.pid == 0) {
        std::cerr << "usage: genhost_realtime_flood --port P --key KEY --pid PID [--sessions N]"
                     " [--frames F] [--answers A]\n";
        return 2;
    }
    const double before = ResidentMb(o.pid);
    std::atomic<bool> done{false};
    std::mutex mu;
    double peak = before;
    std::vector<double> health;
    int health_failures = 0;
    std::thread memory([&] {
        while (!done) {
            const double now = ResidentMb(o.pid);
            {
                std::lock_guard lock(mu);
                peak = std::max(peak, now);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    std::thread healthz([&] {
        asio::io_context io;
        asio::ip::tcp::socket socket(io);
        socket.connect({asio::ip::make_address("127.0.0.1"), o.port});
        beast::flat_buffer buffer;
        while (!done) {
            http::request<http::empty_body> req{http::verb::get, "/healthz", 11};
            req.set(http::field::host, "127.0.0.1");
            const auto begun = Clock::now();
            http::response<http::string_body> res;
            beast::error_code ec;
            http::write(socket, req, ec);
            if (!ec) http::read(socket, buffer, res, ec);
            const double ms =
                std::chrono::duration<double, std::milli>(Clock::now() - begun).count();
            {
                std::lock_guard lock(mu);
                if (ec || res.result_int() != 200) {
                    ++health_failures;
                    break;
                }
                health.push_back(ms);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    });
    std::vector<Outcome> outcomes(o.sessions);
    {
        std::vector<std::thread> threads;
        for (int i = 0; i < o.sessions; ++i) {
            threads.emplace_back([&, i] { outcomes[i] = Flood(o); });
        }
        for (auto& t : threads) t.join();
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));  // the sessions end, their memory goes
    done = true;
    memory.join();
    healthz.join();
    json sessions = json::array();
    for (const auto& r : outcomes) {
        sessions.push_back({{"framesSent", r.frames_sent},
                            {"answersSent", r.answers_sent},
                            {"userClose", r.user_close},
                            {"backendClose", r.backend_close},
                            {"error", r.error}});
    }
    std::lock_guard lock(mu);
    std::cout << json{{"sessions", o.sessions},
                      {"residentMb",
                       {{"before", before}, {"peak", peak}, {"after", ResidentMb(o.pid)}}},
                      {"healthzMs",
                       {{"polls", health.size()},
                        {"p50", Percentile(health, 0.5)},
                        {"p99", Percentile(health, 0.99)},
                        {"max", Percentile(health, 1.0)},
                        {"failures", health_failures}}},
                      {"perSession", sessions}}
                     .dump()
              << "\n";
    return 0;
}
