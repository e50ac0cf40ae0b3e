// genhost/net/tls.hpp
//
// Provides the one TLS client set-up of genhost's outbound connections (the asset fetcher, the
// HTTP providers, the chat-completions engine, S3): ClientTlsContext makes the context (TLS 1.2
// or newer, no compression, peers verified), and VerifyHost readies one connection for its host
// (SNI for a DNS name, never for an IP literal, and the name or address the peer's certificate
// must carry, checked by OpenSSL during the handshake).
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>

namespace genhost::net {

struct TlsOptions {
    bool system_cas = true;  // trust the system's store
    std::string ca_file;     // and this PEM bundle, when set
};

// ClientTlsContext throws std::runtime_error naming the trust store or file it cannot load.
std::unique_ptr<boost::asio::ssl::context> ClientTlsContext(const TlsOptions& options);

// VerifyHost sets up `ssl` (a connection's SSL object, before its handshake) for `host` (a DNS
// name, or an IP address without brackets). Throws std::runtime_error when OpenSSL refuses.
void VerifyHost(SSL* ssl, const std::string& host);

}  // namespace genhost::net
