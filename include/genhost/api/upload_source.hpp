// genhost/api/upload_source.hpp
//
// Provides StoredUploads, the assets::UploadSource of genhost: an upload URI resolves to
// `<data_dir>/inputs/uploads/<id>` when the upload (migrations/0003_uploads.sql) belongs to the
// organization, is complete and has not expired, and its file is there. Unknown, foreign,
// incomplete and expired uploads give nullopt alike, so nobody learns whether another
// organization's upload id exists. Blocks (database, disk): call it on the asset pool.
#pragma once

#include "genhost/assets/input_area.hpp"
#include "genhost/outputs/upload_folder.hpp"
#include "genhost/store/uploads_repo.hpp"

namespace genhost::api {

class StoredUploads final : public assets::UploadSource {
  public:
    StoredUploads(store::UploadRepo& repo, const outputs::UploadFolder& folder)
        : repo_(repo), folder_(folder) {}

    // PathFor: see assets::UploadSource. Throws DatabaseUnavailable when the database is away.
    std::optional<std::string> PathFor(const std::string& org_id,
                                       const std::string& upload_id) override;

  private:
    store::UploadRepo& repo_;
    const outputs::UploadFolder& folder_;
};

}  // namespace genhost::api
