// genhost/assets/fetcher.hpp
//
// Provides Fetcher: downloads one HTTPS asset into a file, under SPEC.md's rules.
//
// 1. The URL is parsed strictly (url.hpp): https only, a DNS name (no IP literal in any form).
// 2. The name is resolved once. Every address it resolves to must be public unicast
//    (address_policy.hpp); one refused address refuses the name. The connection goes to the
//    vetted addresses themselves, so a second lookup (DNS rebinding) never happens.
// 3. TLS is verified against the system CAs, with SNI and host-name verification.
// 4. One GET, no credentials, no cookies, `Accept-Encoding: identity`, an honest User-Agent
//    (`genhost/<version> API/<service version> (asset fetcher)`), `Connection: close`.
// 5. The answer must be 200 (a 3xx fails: redirects are not followed), carry an approved
//    Content-Type for the field's kind (content_types.hpp) and a Content-Length within the
//    kind's cap; the body is streamed to the destination file in 64 KiB pieces (never held
//    whole in memory) and must be exactly Content-Length bytes.
// 6. Everything from the lookup to the last byte is bounded by one deadline (10 s by default).
//    The lookup itself is the system resolver's blocking call: it cannot be interrupted, so a
//    lookup that outlives the deadline is reported as a timeout when it returns.
//
// Threading: Fetch blocks its calling thread. It runs on the asset pool (RequestInputs) or on a
// worker thread (Resolver), never on an I/O thread. Inside, the connection runs as a coroutine
// on a private single-threaded io_context driven by the calling thread: this gives Beast's
// per-operation deadlines, while the download streams to disk with plain blocking writes on a
// thread that may block. The pool bounds how many fetches run at once, and the same code serves
// the synchronous worker path (InputResolver::Resolve) without a second implementation.
//
// Test settings (off by default; set only from the environment, never through the API): an
// extra trusted CA file, and a map from named test hosts to loopback endpoints. A mapped host
// skips DNS and the address policy and connects to its endpoint (TLS still verifies its name);
// every other name is handled exactly as in production.
//
// Thread-safe: one Fetcher may serve many threads at once (the TLS context is immutable once
// built).
#pragma once

#include "genhost/assets/failure.hpp"
#include "genhost/providers/provider.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace genhost::assets {

struct TestEndpoint {
    std::string address;  // an IP address, e.g. "127.0.0.1"
    std::uint16_t port = 0;
};

struct FetcherOptions {
    std::chrono::milliseconds timeout{10000};
    std::string user_agent;  // default: genhost/<version> API/2024-11-06 (asset fetcher)
    bool system_cas = true;
    std::string test_ca_file;                        // test only: also trust this PEM file
    std::map<std::string, TestEndpoint> test_hosts;  // test only: host -> loopback endpoint
};

// ParseTestHosts reads "name=ip:port,name2=ip:port" (GENHOST_FETCH_TEST_HOSTS); the addresses
// must be loopback. Throws std::invalid_argument naming the bad entry.
std::map<std::string, TestEndpoint> ParseTestHosts(std::string_view spec);

// FetchedAsset is a downloaded asset.
struct FetchedAsset {
    std::string path;        // the destination file, complete
    std::string media_type;  // normalized Content-Type
    std::uint64_t size = 0;
};

class Fetcher {
  public:
    // Builds the TLS context: throws std::runtime_error if a configured CA file cannot be read.
    explicit Fetcher(FetcherOptions options);
    ~Fetcher();
    Fetcher(const Fetcher&) = delete;
    Fetcher& operator=(const Fetcher&) = delete;

    // Fetch downloads `url` for a field of `kind` into `destination` (created or truncated;
    // removed again on failure), refusing bodies over `max_bytes`. Failures: kInvalidUrl,
    // kHttpsOnly, kIpLiteral, kFetchFailed (DNS, refused address, connection, TLS, protocol),
    // kHttpStatus, kTimeout, kContentType, kNoContentLength, kTooLarge. Blocks (see above).
    Result<FetchedAsset> Fetch(std::string_view url, MediaKind kind, std::uint64_t max_bytes,
                               const std::string& destination) const;

    const FetcherOptions& options() const { return options_; }

  private:
    struct Impl;
    FetcherOptions options_;
    std::unique_ptr<Impl> impl_;
};

}  // namespace genhost::assets
