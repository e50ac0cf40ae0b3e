// KeysetList and ReadKeysetPage: keyset pages of an organization's rows (private to src/store).
// A list is two prepared statements: the first page, and the page after a cursor, whose
// (time, id) bound the index scan starts from. (One statement with "no cursor OR after the
// cursor" lets a generic plan read every row before the cursor: deep pages then cost more the
// deeper they are.)
#pragma once

#include "genhost/store/database.hpp"
#include "genhost/store/keyset.hpp"

#include <pqxx/pqxx>

#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

struct KeysetList {
    std::string name;         // the statements are name_first and name_after
    std::string select;       // "SELECT ... FROM t WHERE org_id = $1" (more conditions may follow)
    std::string time_column;  // the ordering time, e.g. "created_at"
    std::string id_column;    // the tie-breaking uuid, e.g. "id"
    bool ascending = false;

    // Prepare registers both statements with `db`.
    void Prepare(Database& db) const {
        const std::string dir = ascending ? " ASC" : " DESC";
        const std::string order = " ORDER BY " + time_column + dir + ", " + id_column + dir;
        db.Prepare(name + "_first", select + order + " LIMIT $2");
        db.Prepare(name + "_after", select + " AND (" + time_column + ", " + id_column + ") " +
                                        (ascending ? ">" : "<") +
                                        " (to_timestamp($2::bigint / 1000000.0), $3::uuid)" +
                                        order + " LIMIT $4");
    }
};

// ReadKeysetPage appends up to `limit` rows of `list` (after `after`, if given), read by `read`,
// to `out`; returns whether more follow.
template <class Record, class Read>
bool ReadKeysetPage(pqxx::transaction_base& tx, const KeysetList& list, const std::string& org_id,
                    int limit, const std::optional<Keyset>& after, Read read,
                    std::vector<Record>& out) {
    const pqxx::result rows =
        after ? tx.exec_prepared(list.name + "_after", org_id,
                                 static_cast<long long>(after->at.time_since_epoch().count()),
                                 after->id, limit + 1)
              : tx.exec_prepared(list.name + "_first", org_id, limit + 1);
    for (const auto& row : rows) {
        if (static_cast<int>(out.size()) == limit) return true;
        out.push_back(read(row));
    }
    return false;
}

}  // namespace genhost::store
