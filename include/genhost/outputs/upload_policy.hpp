// genhost/outputs/upload_policy.hpp
//
// Provides UploadPolicySigner, which makes and checks the signed, expiring policies that
// authorise one unauthenticated multipart POST of a file to `/uploads/<upload id>`
// (POST /v1/uploads hands them out as form `fields`; docs/uploads.md describes the format).
//
// A policy is standard base64 of a small JSON object {"v":1,"id":<upload id>,"maxBytes":<size
// cap>,"expires":<unix seconds>}; its signature is lowercase hex of HMAC-SHA-256 under a
// cluster-wide secret of "genhost-upload-policy\n" + the base64 text. The signature is checked
// before the policy is decoded. Thread-safe; no I/O.
#pragma once

#include "genhost/core/clock.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace genhost::outputs {

// UploadPolicy is what a signed policy grants: one file for `upload_id`, at most `max_bytes`
// bytes, until `expires` (unix seconds).
struct UploadPolicy {
    std::string upload_id;
    std::uint64_t max_bytes = 0;
    std::int64_t expires = 0;
};

class UploadPolicySigner {
  public:
    enum class Check { kValid, kExpired, kInvalid };

    // UploadPolicySigner signs with `secret`; upload URLs start with `public_url`.
    UploadPolicySigner(std::string secret, std::string public_url, const Clock& clock);

    // Fields returns the form fields that carry `policy`: {"policy": ..., "signature": ...}.
    std::map<std::string, std::string> Fields(const UploadPolicy& policy) const;

    // UploadUrl returns the absolute URL the multipart POST for `upload_id` goes to.
    std::string UploadUrl(std::string_view upload_id) const;

    // Verify checks the `policy` and `signature` fields sent to `/uploads/<upload_id>`: kInvalid
    // when the signature is wrong, the policy is malformed or names another upload; kExpired
    // when it is past its expiry. On kValid (and kExpired) `out` receives the policy.
    Check Verify(std::string_view upload_id, std::string_view policy, std::string_view signature,
                 UploadPolicy* out) const;

  private:
    std::string Sign(std::string_view encoded_policy) const;
    std::string secret_;
    std::string public_url_;
    const Clock& clock_;
};

}  // namespace genhost::outputs
