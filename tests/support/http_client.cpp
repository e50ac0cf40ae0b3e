#include "support/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cctype>

namespace genhost::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

struct HttpClient::Impl {
    std::string host;
    unsigned short port;
    asio::io_context io;
    std::optional<beast::tcp_stream> stream;
    beast::flat_buffer buffer;

    void Connect() {
        stream.emplace(io);
        stream->connect(tcp::endpoint(asio::ip::make_address(host), port));
        buffer.clear();
    }

    HttpResponse Read() {
        bhttp::response_parser<bhttp::string_body> parser;
        parser.body_limit(1024ull * 1024 * 1024);
        parser.skip(false);
        bhttp::read(*stream, buffer, parser);
        auto& res = parser.get();
        HttpResponse out;
        out.status = static_cast<int>(res.result_int());
        for (const auto& f : res) {
            std::string name(f.name_string());
            for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            out.headers[name] = std::string(f.value());
        }
        out.body = res.body();
        if (!res.keep_alive()) stream.reset();
        return out;
    }
};

HttpClient::HttpClient(std::string host, unsigned short port)
    : impl_(new Impl{std::move(host), port, {}, {}, {}}) {}
HttpClient::~HttpClient() { delete impl_; }

HttpResponse HttpClient::Send(const std::string& method, const std::string& target,
                              const Headers& headers, const std::string& body) {
    for (int attempt = 0;; ++attempt) {
        try {
            if (!impl_->stream) impl_->Connect();
            bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
            req.set(bhttp::field::host, impl_->host);
            req.keep_alive(true);
            for (const auto& [k, v] : headers) req.set(k, v);
            if (!body.empty() || method == "POST" || method == "PATCH" || method == "PUT") {
                req.body() = body;
                req.prepare_payload();
            }
            bhttp::write(*impl_->stream, req);
            if (method == "HEAD") {
                bhttp::response_parser<bhttp::empty_body> parser;
                parser.skip(true);
                bhttp::read(*impl_->stream, impl_->buffer, parser);
                HttpResponse out;
                out.status = static_cast<int>(parser.get().result_int());
                for (const auto& f : parser.get()) {
                    std::string name(f.name_string());
                    for (auto& c : name)
                        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                    out.headers[name] = std::string(f.value());
                }
                if (!parser.get().keep_alive()) impl_->stream.reset();
                return out;
            }
            return impl_->Read();
        } catch (const std::exception&) {
            impl_->stream.reset();
            if (attempt >= 1) throw;
        }
    }
}

HttpResponse HttpClient::SendRaw(const std::string& bytes) {
    impl_->Connect();
    boost::system::error_code ec;
    asio::write(impl_->stream->socket(), asio::buffer(bytes), ec);
    try {
        auto r = impl_->Read();
        impl_->stream.reset();
        return r;
    } catch (const std::exception&) {
        impl_->stream.reset();
        return HttpResponse{};
    }
}

}  // namespace genhost::testing
