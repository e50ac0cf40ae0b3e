#include "genhost/http/wire.hpp"

#include <boost/beast/http/status.hpp>

#include <charconv>

namespace genhost::http {

namespace {

bool Splits(std::string_view s) { return s.find_first_of(std::string_view("\r\n\0", 3)) != s.npos; }

// These headers come from ResponseHead's arguments only.
bool FromArguments(std::string_view name) {
    return IEquals(name, "connection") || IEquals(name, "content-length") ||
           IEquals(name, "transfer-encoding") || IEquals(name, "x-request-id");
}

bool Bodiless(int status) {
    return (status >= 100 && status < 200) || status == 204 || status == 304;
}

void AppendNumber(std::string& out, std::uint64_t n) {
    char buf[24];
    const auto end = std::to_chars(buf, buf + sizeof buf, n).ptr;
    out.append(buf, end);
}

void AppendField(std::string& out, std::string_view name, std::string_view value) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
}

}  // namespace

bool BodySent(const Response& response, bool head) { return !head && !Bodiless(response.status); }

std::string ResponseHead(const Response& response, unsigned version, bool keep_alive, bool head,
                         std::string_view request_id) {
    namespace bhttp = boost::beast::http;
    std::string out;
    std::size_t size = 96 + request_id.size();
    for (const auto& [name, value] : response.headers) size += name.size() + value.size() + 4;
    out.reserve(size);

    out += "HTTP/";
    out += static_cast<char>('0' + version / 10 % 10);
    out += '.';
    out += static_cast<char>('0' + version % 10);
    out += ' ';
    AppendNumber(out, static_cast<std::uint64_t>(response.status));
    out += ' ';
    const auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(response.status));
    out.append(reason.data(), reason.size());
    out += "\r\n";

    const auto& headers = response.headers;
    for (std::size_t i = 0; i < headers.size(); ++i) {
        const auto& [name, value] = headers[i];
        if (FromArguments(name) || Splits(name) || Splits(value)) continue;
        bool later = false;
        for (std::size_t j = i + 1; j < headers.size() && !later; ++j) {
            later = IEquals(name, headers[j].first) && !Splits(headers[j].second);
        }
        if (!later) AppendField(out, name, value);
    }
    if (!Splits(request_id)) AppendField(out, "X-Request-Id", request_id);
    if (version >= 11 && !keep_alive) AppendField(out, "Connection", "close");
    if (version < 11 && keep_alive) AppendField(out, "Connection", "keep-alive");
    out += "Content-Length: ";
    if (head) {
        AppendNumber(out, response.head_length.value_or(response.body.size()));
    } else {
        AppendNumber(out, Bodiless(response.status) ? 0 : response.body.size());
    }
    out += "\r\n\r\n";
    return out;
}

}  // namespace genhost::http
