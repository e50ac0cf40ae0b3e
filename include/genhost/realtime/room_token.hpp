// genhost/realtime/room_token.hpp
//
// Provides the media-plane access tokens of realtime sessions (issue 23, docs/realtime.md when it
// exists): HS256 JSON Web Tokens in LiveKit's claim layout, so the same minting serves
// genhost's embedded media plane and, later, an operator's LiveKit server:
//
//   header  {"alg": "HS256", "typ": "JWT"}
//   payload {"iss": API key, "sub": identity, "nbf": seconds, "exp": seconds,
//            "name"?: display name, "metadata"?: text,
//            "video": {"room": room, "roomJoin": true, "canPublish", "canSubscribe",
//                      "canPublishData"}}
//
// VerifyRoomToken checks what a media plane must before admitting a participant: the shape, the
// algorithm (HS256 only: "none" and every other algorithm are refused), the signature (constant
// time), the issuer, and nbf <= now < exp. Pure functions; thread-safe.
#pragma once

#include "genhost/core/clock.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace genhost::realtime {

// RoomTokenClaims is what a token grants.
struct RoomTokenClaims {
    std::string identity;  // sub: the participant ("user", "worker:<session>", ...)
    std::string room;      // video.room
    std::string name;      // empty: no "name" claim
    std::string metadata;  // empty: no "metadata" claim
    bool can_publish = true;
    bool can_subscribe = true;
    bool can_publish_data = true;
    SysTime not_before;  // nbf (whole seconds)
    SysTime expires;     // exp (whole seconds)
};

// MintRoomToken signs `claims` with `api_secret`, naming `api_key` as the issuer. Times are
// written in whole seconds (rounded down).
std::string MintRoomToken(std::string_view api_key, std::string_view api_secret,
                          const RoomTokenClaims& claims);

// VerifyRoomToken returns the claims of `token` when it is a well-formed HS256 token signed with
// `api_secret`, issued by `api_key`, with video.roomJoin true, and valid at `now`; nullopt
// otherwise (`why`, when given, says which check failed).
std::optional<RoomTokenClaims> VerifyRoomToken(std::string_view token, std::string_view api_key,
                                               std::string_view api_secret, SysTime now,
                                               std::string* why = nullptr);

}  // namespace genhost::realtime
