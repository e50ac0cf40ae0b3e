#include "genhost/api/upload_source.hpp"

#include <filesystem>

namespace genhost::api {

std::optional<std::string> StoredUploads::PathFor(const std::string& org_id,
                                                  const std::string& upload_id) {
    // FindCompleteSync checks both ids are UUIDs before any SQL.
    if (!repo_.FindCompleteSync(org_id, upload_id)) return std::nullopt;
    const auto path = folder_.PathOf(upload_id);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    return path.string();
}

}  // namespace genhost::api
