// genhost/outputs/sigv4.hpp
//
// Provides AWS Signature Version 4 (header-based authentication, AWS4-HMAC-SHA256) on OpenSSL,
// as the S3 output store (genhost/outputs/s3_store.hpp) signs its requests: the canonical request
// (URI-encoded path, sorted and URI-encoded query, lowercase sorted signed headers, payload
// hash), the string to sign, the derived signing key and the Authorization header.
//
// Pure functions without I/O; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace genhost::outputs::sigv4 {

// The payload hash of a body that is not hashed (sent as x-amz-content-sha256).
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";

// UriEncode percent-encodes every byte except the unreserved characters A-Z a-z 0-9 - . _ ~
// (uppercase hex), as SigV4 wants; '/' stays as it is unless `encode_slash` (object keys in a
// path keep their slashes, query names and values encode them).
std::string UriEncode(std::string_view s, bool encode_slash);

// AmzDate formats a time as ISO 8601 basic UTC, "20130524T000000Z".
std::string AmzDate(std::chrono::system_clock::time_point t);

using Pairs = std::vector<std::pair<std::string, std::string>>;

struct Request {
    std::string method;         // "GET", "PUT", ...
    std::string canonical_uri;  // already URI-encoded path, "/bucket/key" (at least "/")
    Pairs query;                // raw (not encoded) names and values
    Pairs headers;              // the headers to sign, any case; values are trimmed
    std::string payload_hash;   // hex SHA-256 of the body, or kUnsignedPayload
};

// CanonicalQuery encodes names and values and sorts them by encoded name, then value.
std::string CanonicalQuery(const Pairs& query);

// SignedHeaders returns the lowercase, sorted, ';'-separated header names.
std::string SignedHeaders(const Pairs& headers);

// CanonicalRequest returns the canonical request of `request`.
std::string CanonicalRequest(const Request& request);

// Scope returns "<yyyymmdd>/<region>/<service>/aws4_request" for `amz_date` (AmzDate's form).
std::string Scope(std::string_view amz_date, std::string_view region, std::string_view service);

// StringToSign returns the string to sign of a canonical request.
std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);

// SigningKey derives the raw (binary) signing key from the secret access key.
std::string SigningKey(std::string_view secret_access_key, std::string_view date,
                       std::string_view region, std::string_view service);

struct Credentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string region = "us-east-1";
    std::string service = "s3";
};

// Signature returns the lowercase hex signature of `request` made at `amz_date`.
std::string Signature(const Credentials& credentials, std::string_view amz_date,
                      const Request& request);

// Authorization returns the value of the Authorization header for `request` made at
// `amz_date`; the request's headers must include x-amz-date with that value.
std::string Authorization(const Credentials& credentials, std::string_view amz_date,
                          const Request& request);

}  // namespace genhost::outputs::sigv4
