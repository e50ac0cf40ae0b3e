#include "support/tls_server.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <stdexcept>

namespace genhost::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

struct PkeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct X509Free {
    void operator()(X509* x) const { X509_free(x); }
};
struct BioFree {
    void operator()(BIO* b) const { BIO_free(b); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using BioPtr = std::unique_ptr<BIO, BioFree>;

void Check(bool ok, const char* what) {
    if (!ok) throw std::runtime_error(std::string("OpenSSL: ") + what);
}

PkeyPtr NewKey() {
    PkeyPtr key(EVP_EC_gen("P-256"));
    Check(key != nullptr, "EVP_EC_gen");
    return key;
}

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    Check(ext != nullptr, "X509V3_EXT_conf_nid");
    const int rc = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    Check(rc == 1, "X509_add_ext");
}

X509Ptr NewCert(EVP_PKEY* key, const std::string& cn, long serial) {
    X509Ptr cert(X509_new());
    Check(cert != nullptr, "X509_new");
    Check(X509_set_version(cert.get(), 2) == 1, "X509_set_version");
    Check(ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial) == 1, "serial");
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
    Check(X509_set_pubkey(cert.get(), key) == 1, "X509_set_pubkey");
    X509_NAME* name = X509_get_subject_name(cert.get());
    Check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                     reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                     0) == 1,
          "subject");
    return cert;
}

std::string Pem(const std::function<int(BIO*)>& write) {
    BioPtr bio(BIO_new(BIO_s_mem()));
    Check(bio != nullptr && write(bio.get()) == 1, "PEM write");
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(n));
}

const char* Reason(int status) {
    switch (status) {
        case 200:
            return "OK";
        case 302:
            return "Found";
        case 404:
            return "Not Found";
        case 500:
            return "Internal Server Error";
        default:
            return "Status";
    }
}

}  // namespace

TestCertificates MakeTestCertificates(const std::vector<std::string>& dns_names) {
    const PkeyPtr ca_key = NewKey();
    const X509Ptr ca = NewCert(ca_key.get(), "genhost test CA", 1);
    X509_set_issuer_name(ca.get(), X509_get_subject_name(ca.get()));
    AddExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE");
    AddExtension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
    AddExtension(ca.get(), ca.get(), NID_subject_key_identifier, "hash");
    Check(X509_sign(ca.get(), ca_key.get(), EVP_sha256()) > 0, "sign CA");

    const PkeyPtr key = NewKey();
    const X509Ptr cert = NewCert(key.get(), dns_names.empty() ? "localhost" : dns_names[0], 2);
    X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
    std::string san;
    for (const auto& name : dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + name;
    AddExtension(cert.get(), ca.get(), NID_basic_constraints, "CA:FALSE");
    AddExtension(cert.get(), ca.get(), NID_key_usage, "critical,digitalSignature");
    AddExtension(cert.get(), ca.get(), NID_ext_key_usage, "serverAuth");
    AddExtension(cert.get(), ca.get(), NID_subject_alt_name, san.c_str());
    AddExtension(cert.get(), ca.get(), NID_authority_key_identifier, "keyid:always");
    Check(X509_sign(cert.get(), ca_key.get(), EVP_sha256()) > 0, "sign certificate");

    TestCertificates out;
    out.ca_pem = Pem([&](BIO* b) { return PEM_write_bio_X509(b, ca.get()); });
    out.cert_pem = Pem([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); });
    out.key_pem = Pem([&](BIO* b) {
        return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    });
    return out;
}

TlsReply Reply(int status, const std::string& content_type, std::string body) {
    TlsReply r;
    r.head = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\n";
    if (!content_type.empty()) r.head += "Content-Type: " + content_type + "\r\n";
    r.head += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
    r.body = std::move(body);
    return r;
}

std::string ReceivedRequest::Header(const std::string& name) const {
    for (const auto& [k, v] : headers) {
        if (k == name) return v;
    }
    return {};
}

struct TlsTestServer::Impl {
    asio::io_context io;
    ssl::context tls{ssl::context::tls_server};
    tcp::acceptor acceptor{io};
};

TlsTestServer::TlsTestServer(const TestCertificates& certs, Handler handler)
    : impl_(std::make_unique<Impl>()), handler_(std::move(handler)) {
    impl_->tls.use_certificate_chain(asio::buffer(certs.cert_pem));
    impl_->tls.use_private_key(asio::buffer(certs.key_pem), ssl::context::pem);
    const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    impl_->acceptor.open(endpoint.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(endpoint);
    impl_->acceptor.listen();
    port_ = impl_->acceptor.local_endpoint().port();
    acceptor_ = std::thread([this] { AcceptLoop(); });
}

TlsTestServer::~TlsTestServer() {
    stop_ = true;
    {
        // Wake the blocking accept.
        asio::io_context io;
        tcp::socket s(io);
        boost::system::error_code ec;
        s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
    }
    acceptor_.join();
    for (auto& t : threads_) t.join();
}

std::vector<ReceivedRequest> TlsTestServer::Requests() const {
    std::lock_guard lock(mu_);
    return requests_;
}

void TlsTestServer::AcceptLoop() {
    while (!stop_) {
        tcp::socket socket(impl_->io);
        boost::system::error_code ec;
        impl_->acceptor.accept(socket, ec);
        if (stop_) break;
        if (ec) continue;
        threads_.emplace_back([this, socket = std::move(socket)]() mutable {
            // A client that stalls cannot hold the thread (and the destructor) for long.
            timeval tv{5, 0};
            setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
            ssl::stream<tcp::socket> stream(std::move(socket), impl_->tls);
            boost::system::error_code ec;
            stream.handshake(ssl::stream_base::server, ec);
            if (ec) return;
            beast::flat_buffer buffer;
            http::request<http::empty_body> request;
            http::read(stream, buffer, request, ec);
            if (ec) return;
            ReceivedRequest received;
            received.method = std::string(request.method_string());
            received.target = std::string(request.target());
            for (const auto& field : request) {
                std::string name(field.name_string());
                for (char& c : name)
                    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                received.headers.emplace_back(name, std::string(field.value()));
            }
            {
                std::lock_guard lock(mu_);
                requests_.push_back(received);
            }
            const TlsReply reply = handler_(received);
            asio::write(stream, asio::buffer(reply.head), ec);
            std::size_t sent = 0;
            while (!ec && sent < reply.body.size() && !stop_) {
                const std::size_t n = reply.chunk_bytes == 0
                                          ? reply.body.size() - sent
                                          : std::min(reply.chunk_bytes, reply.body.size() - sent);
                asio::write(stream, asio::buffer(reply.body.data() + sent, n), ec);
                sent += n;
                for (auto waited = std::chrono::milliseconds(0); waited < reply.pause && !stop_;
                     waited += std::chrono::milliseconds(10)) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                }
            }
            stream.lowest_layer().shutdown(tcp::socket::shutdown_both, ec);
            stream.lowest_layer().close(ec);
        });
    }
}

}  // namespace genhost::testing
