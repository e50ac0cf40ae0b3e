// genhost/core/ids.hpp
//
// Provides UUID v4 generation and checking. Ids are random (OpenSSL's CSPRNG), so they are not
// guessable; organisation scoping still guards every lookup.
#pragma once

#include <string>
#include <string_view>

namespace genhost {

// NewUuid returns a fresh random UUID v4 in lowercase canonical form.
std::string NewUuid();

// NewOrderedUuid returns a fresh UUID of the version 4 pattern whose first 48 bits are the
// current time in milliseconds and whose other 74 bits are random: ids made later sort later.
// For records whose primary key takes many inserts (tasks).
std::string NewOrderedUuid();

// NewRequestId returns a fresh UUID v4 for labelling a request (X-Request-Id, log lines): unique,
// but from a per-thread generator seeded once from OpenSSL, not from OpenSSL on every call (which
// costs a system call and a lock per request). Not for anything that must be unguessable.
std::string NewRequestId();

// IsUuid reports whether `s` is a canonical UUID (8-4-4-4-12 hex digits, either case).
bool IsUuid(std::string_view s);

// LowerUuid returns `s` with its ASCII letters in lower case: the form PostgreSQL prints a uuid in,
// and the form the output store names a task's folder by. A client may send either case.
std::string LowerUuid(std::string_view s);

// IsUuidV4 reports whether `s` is a canonical UUID whose version nibble is 4 and whose variant
// is RFC 4122 (8, 9, a or b), the "uuid" format of SPEC.md.
bool IsUuidV4(std::string_view s);

}  // namespace genhost
