// Test helpers for the asset fetcher: a certificate authority and server certificates made at
// run time with OpenSSL's API (nothing checked in), and TlsTestServer, an HTTPS server on a
// free loopback port that answers each request with whatever bytes a test scripts (wrong
// headers, short or slow bodies included).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace genhost::testing {

// TestCertificates: a CA and one server certificate (with its key) for `dns_names`, signed by
// the CA, all PEM.
struct TestCertificates {
    std::string ca_pem;
    std::string cert_pem;
    std::string key_pem;
};

// MakeTestCertificates creates a fresh P-256 CA and a server certificate valid for `dns_names`
// (subjectAltName), both valid from an hour ago for a day.
TestCertificates MakeTestCertificates(const std::vector<std::string>& dns_names);

// TlsReply is what the server writes for one request: `head` (status line and headers, sent
// verbatim, so it may lie) then `body`, in `chunk_bytes` pieces (0: at once) with `pause` after
// each piece.
struct TlsReply {
    std::string head;
    std::string body;
    std::size_t chunk_bytes = 0;
    std::chrono::milliseconds pause{0};
};

// Reply builds an honest reply: status, optional Content-Type, Content-Length, body.
TlsReply Reply(int status, const std::string& content_type, std::string body);

// ReceivedRequest is what a client sent (request line and headers, lower-case names).
struct ReceivedRequest {
    std::string method;
    std::string target;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string Header(const std::string& name) const;
};

class TlsTestServer {
  public:
    using Handler = std::function<TlsReply(const ReceivedRequest&)>;

    // Listens on 127.0.0.1 (port 0) with `certs`; each connection is served on its own thread.
    TlsTestServer(const TestCertificates& certs, Handler handler);
    ~TlsTestServer();  // stops accepting, ends slow replies, joins every thread
    TlsTestServer(const TlsTestServer&) = delete;
    TlsTestServer& operator=(const TlsTestServer&) = delete;

    unsigned short port() const { return port_; }

    // Requests returns every request received so far.
    std::vector<ReceivedRequest> Requests() const;

  private:
    struct Impl;
    void AcceptLoop();

    std::unique_ptr<Impl> impl_;
    Handler handler_;
    unsigned short port_ = 0;
    std::atomic<bool> stop_{false};
    mutable std::mutex mu_;
    std::vector<ReceivedRequest> requests_;
    std::vector<std::thread> threads_;
    std::thread acceptor_;
};

}  // namespace genhost::testing
