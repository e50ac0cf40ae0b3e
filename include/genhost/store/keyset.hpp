// genhost/store/keyset.hpp
//
// Provides Keyset: where the next page of a list starts. Every list of the API is ordered by a
// time and then by id, and a page continues after the row with this time and id (keyset
// pagination: no OFFSET, so a page costs the same however deep it is, and rows added meanwhile
// never shift it). The API turns a Keyset into an opaque cursor (src/api/page.hpp).
#pragma once

#include "genhost/core/clock.hpp"

#include <string>

namespace genhost::store {

struct Keyset {
    SysTime at;      // the ordering time of the last row of the page (microseconds)
    std::string id;  // its id (a uuid): breaks ties between rows of the same time
};

}  // namespace genhost::store
