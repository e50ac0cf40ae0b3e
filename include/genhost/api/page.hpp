// genhost/api/page.hpp
//
// Provides the page kit every list endpoint uses (SPEC.md: `limit`, `cursor`; `{data, hasMore,
// nextCursor}`).
//
// - `limit`: an integer from 1 to 100, 50 when absent (a list may declare another default:
//   conversations 20).
// - `cursor`: 1 to 1000 characters (SPEC.md), opaque to clients: base64url of
//   "<time in microseconds>.<id>", a store::Keyset. A cursor that does not decode is a 400 at
//   ["cursor"].
// - The answer: `data`, `hasMore`, and `nextCursor`, the cursor after the last item when more
//   follow, else null (the official clients page while `nextCursor` is a non-empty string).
#pragma once

#include "genhost/core/error.hpp"
#include "genhost/http/message.hpp"
#include "genhost/store/keyset.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace genhost::api {

inline constexpr int kDefaultPageSize = 50;
inline constexpr int kMaxPageSize = 100;

// PageQuery is what a list request asked for.
struct PageQuery {
    int limit = kDefaultPageSize;
    std::optional<store::Keyset> after;  // absent: the first page
};

// ParsePageQuery reads `limit` and `cursor` from `req`'s query; every problem is an issue of the
// 400 (at ["limit"], ["cursor"]).
Result<PageQuery> ParsePageQuery(const http::Request& req, int default_limit = kDefaultPageSize);

// EncodeCursor is the opaque cursor of `keyset`.
std::string EncodeCursor(const store::Keyset& keyset);

// PageJson is the answer `{data, hasMore, nextCursor}`: `next` is the keyset of the last item of
// `data` when another page follows, nullopt on the last page.
nlohmann::json PageJson(nlohmann::json data, const std::optional<store::Keyset>& next);

}  // namespace genhost::api
