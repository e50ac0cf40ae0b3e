#include "genhost/net/tls.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/ip/address.hpp>

#include <stdexcept>

namespace genhost::net {

namespace ssl = boost::asio::ssl;

std::unique_ptr<ssl::context> ClientTlsContext(const TlsOptions& options) {
    auto tls = std::make_unique<ssl::context>(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(tls->native_handle(), TLS1_2_VERSION);
    tls->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
    tls->set_verify_mode(ssl::verify_peer);
    boost::system::error_code ec;
    if (options.system_cas) {
        tls->set_default_verify_paths(ec);
        if (ec)
            throw std::runtime_error("cannot load the system's trusted certificates: " +
                                     ec.message());
    }
    if (!options.ca_file.empty()) {
        tls->load_verify_file(options.ca_file, ec);
        if (ec) {
            throw std::runtime_error("cannot load the trusted certificates " + options.ca_file +
                                     ": " + ec.message());
        }
    }
    return tls;
}

void VerifyHost(SSL* ssl, const std::string& host) {
    boost::system::error_code not_an_address;
    boost::asio::ip::make_address(host, not_an_address);
    if (not_an_address) {
        if (SSL_set_tlsext_host_name(ssl, host.c_str()) != 1 ||
            SSL_set1_host(ssl, host.c_str()) != 1) {
            throw std::runtime_error("cannot set the TLS host name " + host);
        }
        return;
    }
    // An IP address: no SNI; the certificate must name the address.
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    if (X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) != 1) {
        throw std::runtime_error("cannot set the TLS peer address " + host);
    }
}

}  // namespace genhost::net
