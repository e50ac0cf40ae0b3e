// ReadKeysetPage: one keyset page of an organization's rows (private to src/store). Every list
// statement takes the same parameters: $1 the organization, $2 whether a cursor is given, $3 and
// $4 the cursor (the ordering time in microseconds, the id), $5 the page size plus one (to know
// whether another page follows).
#pragma once

#include "genhost/store/keyset.hpp"

#include <pqxx/pqxx>

#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

// ReadKeysetPage appends up to `limit` rows of `statement`, read by `read`, to `out`; returns
// whether more follow.
template <class Record, class Read>
bool ReadKeysetPage(pqxx::transaction_base& tx, const std::string& statement,
                    const std::string& org_id, int limit, const std::optional<Keyset>& after,
                    Read read, std::vector<Record>& out) {
    const auto rows = tx.exec_prepared(
        statement, org_id, after.has_value(),
        after ? static_cast<long long>(after->at.time_since_epoch().count()) : 0LL,
        after ? after->id : std::string("00000000-0000-0000-0000-000000000000"), limit + 1);
    for (const auto& row : rows) {
        if (static_cast<int>(out.size()) == limit) return true;
        out.push_back(read(row));
    }
    return false;
}

}  // namespace genhost::store
