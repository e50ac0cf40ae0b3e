#include "genhost/outputs/sigv4.hpp"

#include "genhost/core/crypto.hpp"

#include <algorithm>
#include <ctime>
#include <map>
#include <stdexcept>

namespace genhost::outputs::sigv4 {

namespace {

std::string Lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

// Trims the value and collapses runs of spaces into one, as canonical headers want.
std::string CanonicalValue(std::string_view v) {
    std::string out;
    bool space = false;
    for (const char c : v) {
        if (c == ' ' || c == '\t') {
            space = !out.empty();
            continue;
        }
        if (space) out.push_back(' ');
        space = false;
        out.push_back(c);
    }
    return out;
}

// Lowercase name → canonical value; repeated headers are joined with commas.
std::map<std::string, std::string> HeaderMap(const Pairs& headers) {
    std::map<std::string, std::string> out;
    for (const auto& [name, value] : headers) {
        auto& slot = out[Lower(CanonicalValue(name))];
        if (!slot.empty()) slot.push_back(',');
        slot += CanonicalValue(value);
    }
    return out;
}

std::string Raw(const Sha256Digest& d) {
    return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

}  // namespace

std::string UriEncode(std::string_view s, bool encode_slash) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                                (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                                c == '~';
        if (unreserved || (c == '/' && !encode_slash)) {
            out.push_back(ch);
        } else {
            out.push_back('%');
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 15]);
        }
    }
    return out;
}

std::string AmzDate(std::chrono::system_clock::time_point t) {
    const std::time_t secs = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

std::string CanonicalQuery(const Pairs& query) {
    std::vector<std::pair<std::string, std::string>> encoded;
    encoded.reserve(query.size());
    for (const auto& [name, value] : query) {
        encoded.emplace_back(UriEncode(name, true), UriEncode(value, true));
    }
    std::sort(encoded.begin(), encoded.end());
    std::string out;
    for (const auto& [name, value] : encoded) {
        if (!out.empty()) out.push_back('&');
        out += name;
        out.push_back('=');
        out += value;
    }
    return out;
}

std::string SignedHeaders(const Pairs& headers) {
    std::string out;
    for (const auto& [name, value] : HeaderMap(headers)) {
        if (!out.empty()) out.push_back(';');
        out += name;
    }
    return out;
}

std::string CanonicalRequest(const Request& request) {
    std::string out = request.method;
    out.push_back('\n');
    out += request.canonical_uri.empty() ? "/" : request.canonical_uri;
    out.push_back('\n');
    out += CanonicalQuery(request.query);
    out.push_back('\n');
    for (const auto& [name, value] : HeaderMap(request.headers)) {
        out += name;
        out.push_back(':');
        out += value;
        out.push_back('\n');
    }
    out.push_back('\n');
    out += SignedHeaders(request.headers);
    out.push_back('\n');
    out += request.payload_hash;
    return out;
}

std::string Scope(std::string_view amz_date, std::string_view region, std::string_view service) {
    if (amz_date.size() < 8) throw std::invalid_argument("malformed x-amz-date");
    std::string out(amz_date.substr(0, 8));
    out.append("/").append(region).append("/").append(service).append("/aws4_request");
    return out;
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
    std::string out = "AWS4-HMAC-SHA256\n";
    out.append(amz_date).append("\n").append(scope).append("\n");
    out += HexEncode(Sha256(canonical_request));
    return out;
}

std::string SigningKey(std::string_view secret_access_key, std::string_view date,
                       std::string_view region, std::string_view service) {
    const std::string k_date = Raw(HmacSha256("AWS4" + std::string(secret_access_key), date));
    const std::string k_region = Raw(HmacSha256(k_date, region));
    const std::string k_service = Raw(HmacSha256(k_region, service));
    return Raw(HmacSha256(k_service, "aws4_request"));
}

std::string Signature(const Credentials& credentials, std::string_view amz_date,
                      const Request& request) {
    const std::string scope = Scope(amz_date, credentials.region, credentials.service);
    const std::string key = SigningKey(credentials.secret_access_key, amz_date.substr(0, 8),
                                       credentials.region, credentials.service);
    return HexEncode(HmacSha256(key, StringToSign(amz_date, scope, CanonicalRequest(request))));
}

std::string Authorization(const Credentials& credentials, std::string_view amz_date,
                          const Request& request) {
    return "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" +
           Scope(amz_date, credentials.region, credentials.service) +
           ", SignedHeaders=" + SignedHeaders(request.headers) +
           ", Signature=" + Signature(credentials, amz_date, request);
}

}  // namespace genhost::outputs::sigv4
