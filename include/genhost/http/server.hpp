// genhost/http/server.hpp
//
// Provides Server: the Boost.Beast HTTP/1.1 front end. One io_context per I/O thread, and
// connections dealt to them in turn: a connection's coroutine and socket stay on its thread, with
// no strand and no waking of another thread for its own I/O (docs/performance.md).
// Keep-alive; limits on header size, body size (413 when
// the announced or received body is larger, before reading it) and the time to read a request.
// Streaming routes (Router::AddStreaming) get the header only and read their body through a
// BodyReader, under their own body limit and with a read timeout per chunk.
//
// The order of checks: the request's framing and Host (RFC 9112: a transfer coding other than
// one final `chunked`, Transfer-Encoding in HTTP/1.0, or a missing or repeated Host is a 400, and
// the connection closes), the route (404, 405), the route's gate (an API key, say), the announced
// body size (413), the memory for the body (503), and only then the body (and `100 Continue`).
// A request answered before its announced body was read closes its connection, after a short
// linger so the client reads the answer.
//
// Two caps keep a node's memory bounded whatever its clients do: open connections
// (max_connections; past it a new connection is answered 503 with Retry-After and closed) and
// the request bodies held in memory by all connections together (max_body_memory; a body that
// would pass it is answered 503 with Retry-After instead of read).
// Every response carries X-Request-Id (the client's, when it sent a sane one); every request is
// counted in Metrics and written as one JSON access-log line.
//
// Handlers run on the I/O threads and must not block, nor compute for long, since the other
// connections of their thread wait meanwhile: they co_await the database and blocking pools. An
// exception escaping a handler becomes a 500 whose body reveals nothing; the log line carries the
// details and the request id.
//
// WebSocket routes (Router::AddUpgrade): the server checks the opening handshake (426 without
// the upgrade), runs the route's accept, answers 101 and hands the connection to the route's
// `run` (websocket.hpp). An upgraded connection leaves the request machinery: no read timeout
// (Beast's WebSocket timeouts ping it and close it when idle), no request in flight; it still
// counts among the open connections (and against max_connections) until it closes.
//
// Shutdown(): stop accepting, close idle keep-alive connections, let in-flight requests finish
// (their responses say Connection: close) and send open WebSockets a close frame with code 1001
// (going away), up to a deadline, then stop the I/O threads.
#pragma once

#include "genhost/core/deadline.hpp"
#include "genhost/core/memory.hpp"
#include "genhost/http/forwarded.hpp"
#include "genhost/http/metrics.hpp"
#include "genhost/http/router.hpp"

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace genhost::http {

struct ServerOptions {
    std::string host = "127.0.0.1";
    unsigned short port = 8080;
    // When set, the server listens on this unix-domain socket instead of host and port (a socket
    // file already there is replaced; it is removed at Shutdown).
    std::string unix_path;
    int io_threads = 2;
    std::size_t max_body_bytes = 24 * 1024 * 1024;
    std::size_t max_header_bytes = 16 * 1024;
    std::chrono::milliseconds read_timeout{30000};
    std::string doc_url;
    // Open connections at most (0: no cap); a connection past it is answered 503 and closed.
    std::size_t max_connections = 4096;
    // Bytes of request bodies (ordinary routes; streaming routes keep only a chunk) held in memory
    // by all connections together, from before a body is read until its response is written (0:
    // no cap). A body announced past it, or growing past it, is answered 503 with Retry-After.
    std::size_t max_body_memory = 256 * 1024 * 1024;
    // Peers whose X-Forwarded-For names the client (GENHOST_TRUSTED_PROXIES); empty: none.
    TrustedProxies trusted_proxies;
};

class Server {
  public:
    Server(ServerOptions options, const Router& router, Metrics& metrics);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Listen binds and listens (port 0 picks a free port); throws on failure.
    void Listen();

    // Port returns the bound port (after Listen; 0 on a unix-domain socket).
    unsigned short Port() const { return port_; }

    // SetDocUrl sets the docUrl of the server's own error bodies; call it before Start (the
    // public URL may depend on the port Listen picked).
    void SetDocUrl(std::string doc_url) { options_.doc_url = std::move(doc_url); }

    // Start runs the accept loop and the I/O threads; returns at once.
    void Start();

    // Shutdown drains as described above and joins the I/O threads; safe to call twice.
    void Shutdown(std::chrono::milliseconds timeout);
    // The same, waiting for in-flight requests until `deadline` (which another thread may cut).
    void Shutdown(const core::Deadline& deadline);

    // InFlight returns the number of requests being handled now.
    int InFlight() const { return in_flight_.load(); }

    // Connections returns the number of open connections (those refused at the cap excluded),
    // WebSockets included.
    int Connections() const { return sessions_.load(); }

    // WebSockets returns the number of open WebSocket connections (upgraded, not yet closed).
    int WebSockets() const { return websockets_.load(); }

    // BodyMemory returns the bytes of request bodies held now, as counted against
    // max_body_memory.
    std::size_t BodyMemory() const { return body_memory_.load(); }

    // Refusals counts the connections answered 503 at the connection cap since Start.
    std::uint64_t Refusals() const { return refusals_.load(); }

    // A connection (defined in server.cpp).
    struct Session;

  private:
    ServerOptions options_;
    const Router& router_;
    Metrics& metrics_;
    // One per I/O thread; the first also runs the accept loop.
    std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
    unsigned next_context_ = 0;  // the accept loop's alone
    boost::asio::basic_socket_acceptor<boost::asio::generic::stream_protocol> acceptor_;
    unsigned short port_ = 0;
    bool unix_bound_ = false;  // Listen bound options_.unix_path: Shutdown removes it
    std::vector<std::thread> threads_;
    std::atomic<bool> stopping_{false};
    std::atomic<int> in_flight_{0};
    std::atomic<int> sessions_{0};
    std::atomic<int> websockets_{0};
    std::atomic<int> refusing_{0};  // connections being answered 503 at the cap
    std::atomic<std::uint64_t> refusals_{0};
    std::atomic<std::size_t> body_memory_{0};
    // Trims the allocator after a request whose body was large: what it freed would otherwise
    // stay resident (docs/performance.md, "Request bodies and memory").
    MemoryTrimmer trimmer_;
    std::mutex sessions_mu_;
    std::set<std::shared_ptr<Session>> live_;  // for Shutdown and each thread's Sweep
    bool shut_down_ = false;

  public:
    // Internal, used by the connection coroutine.
    boost::asio::awaitable<void> RunSession(std::shared_ptr<Session> session);
    boost::asio::awaitable<void> AcceptLoop();
    // Sweep closes, every quarter of the read timeout, the connections of I/O thread `context`
    // whose read or write has outlasted it.
    boost::asio::awaitable<void> Sweep(std::size_t context);
    boost::asio::awaitable<Response> Dispatch(Request& request, Router::Match& match,
                                              BodyReader* body);
    // RefuseConnection answers a connection accepted past max_connections with a 503 and
    // closes it.
    boost::asio::awaitable<void> RefuseConnection(std::shared_ptr<Session> session);
    // Send logs `response` (access log and metrics) and writes it; false when the write failed.
    boost::asio::awaitable<bool> Send(Session& session, const Request& request,
                                      const Response& response, unsigned version, bool keep_alive,
                                      std::chrono::steady_clock::time_point started);
    // Log counts a request in the metrics and writes its access-log line.
    void Log(const Request& request, int status, std::chrono::steady_clock::time_point started,
             std::string_view task_id = {});
    // Upgrade completes the WebSocket handshake of a request its route accepted and runs the
    // route's session; the connection ends with it.
    boost::asio::awaitable<void> Upgrade(Session& session, Request& request,
                                         const UpgradeRoute& route,
                                         std::chrono::steady_clock::time_point started);
    // PassGate runs a route's gate; what it throws becomes the response.
    boost::asio::awaitable<std::optional<Response>> PassGate(Request& request, const Gate& gate);
    // Close ends the connection.
    boost::asio::awaitable<void> Close(Session& session);
    // TakeBodyMemory counts `bytes` more against max_body_memory; false (and nothing counted)
    // when that would pass it. GiveBodyMemory gives them back.
    bool TakeBodyMemory(std::size_t bytes);
    void GiveBodyMemory(std::size_t bytes);
};

}  // namespace genhost::http
