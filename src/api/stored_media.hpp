// Media a resource keeps (an avatar's reference image, a voice's sample): read and probed as a
// generation input is read (src/assets), then moved into the output store under the resource's
// folder. Private to src/api.
#pragma once

#include "common.hpp"

#include "genhost/core/media_kind.hpp"

#include <string>
#include <vector>

namespace genhost::api {

// StoredMedia is where a request's media went: an object of the resource's folder in the output
// store (`name`), or, when URLs are fetched by workers (offline fetching) or no asset reader is
// configured, the media string a job reads later (`uri`).
struct StoredMedia {
    std::string name;
    std::string uri;
};

// StoreMedia reads and probes `media`, the media string at `path` of the request body (its issues
// are reported there), as a `kind` input, then moves its bytes into the output store as
// `folder/<prefix>-<8 hex digits>`. On bad input it returns the 400.
boost::asio::awaitable<Result<StoredMedia>> StoreMedia(App& app, const std::string& org_id,
                                                       const std::string& folder,
                                                       const std::string& media, MediaKind kind,
                                                       std::vector<std::string> path,
                                                       const std::string& prefix);

// kWholeFolder names no object: RemoveStored then removes the whole folder. (A named vector:
// GCC 12 miscompiles braced temporaries in co_await arguments.)
inline const std::vector<std::string> kWholeFolder;

// RemoveStored deletes objects of `folder` (or the whole folder with no names), logging instead
// of failing: the answer no longer depends on it.
boost::asio::awaitable<void> RemoveStored(App& app, std::string folder,
                                          std::vector<std::string> names);

}  // namespace genhost::api
