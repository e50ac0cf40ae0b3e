// genhost/assets/input_area.hpp
//
// Provides where media inputs live on disk and how a stored task refers to them:
//
// - UploadSource: the seam to the uploads module. An upload URI `genhost://<upload id>` names an
//   upload whose bytes are a file (`<data_dir>/inputs/uploads/<id>`); the uploads module says
//   whether it exists, belongs to the organization and has not expired. NullUploadSource knows
//   no uploads (every upload URI is refused with SPEC.md's message).
// - InputArea: `<data_dir>/inputs`. Each task's resolved inputs are files in
//   `<data_dir>/inputs/<task id>/`; the stored task input names them by reference,
//   `genhost-input:<task id>/<file>`, instead of holding the bytes (a 7 MB data URI does not go
//   into the task row) or the URL (the worker uses exactly the bytes that were probed, and never
//   fetches twice). Clients cannot send references: the request schemas accept only https:,
//   genhost:// and data: media strings. Every node that runs API or workers must see the same
//   data folder (as for the local output store).
// InputArea::SweepOlderThan removes task input folders older than a maximum age (their tasks are
// long finished); the runtime's schedule runs it (tasks/runtime.hpp).
//
// Thread-safety: InputArea is immutable and may be shared; its file operations block (call
// them from a pool or worker thread).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace genhost::assets {

inline constexpr std::string_view kUploadScheme = "genhost://";
inline constexpr std::string_view kInputReferenceScheme = "genhost-input:";

class UploadSource {
  public:
    virtual ~UploadSource() = default;

    // PathFor returns the file holding the bytes of upload `upload_id` when it exists, belongs
    // to organization `org_id` and has not expired; nullopt otherwise. May block (database, disk);
    // called on the asset pool, never on an I/O thread.
    virtual std::optional<std::string> PathFor(const std::string& org_id,
                                               const std::string& upload_id) = 0;
};

// NullUploadSource is the UploadSource of a server without uploads: it knows none.
class NullUploadSource : public UploadSource {
  public:
    std::optional<std::string> PathFor(const std::string& org_id,
                                       const std::string& upload_id) override;
};

class InputArea {
  public:
    // `root` is `<data_dir>/inputs`; created on first use.
    explicit InputArea(std::string root);

    const std::string& root() const { return root_; }

    // DirFor is the folder of task `task_id`'s inputs (not created).
    std::string DirFor(const std::string& task_id) const;

    // Reference is the media string a stored task input holds for file `name` of task
    // `task_id`'s folder.
    static std::string Reference(const std::string& task_id, const std::string& name);

    // IsReference reports whether `media` is a reference (by its scheme).
    static bool IsReference(std::string_view media);

    // PathOf returns the file a reference names, or nullopt if `reference` is not a well-formed
    // reference (a task id of [0-9a-f-], a file name of [A-Za-z0-9_.-] not starting with a dot).
    // Does not look at the disk.
    std::optional<std::string> PathOf(std::string_view reference) const;

    // Remove deletes task `task_id`'s folder and everything in it; errors are ignored.
    void Remove(const std::string& task_id) const;

    // SweepOlderThan removes every task folder last modified more than `age` ago (the uploads
    // folder is not touched); returns how many were removed.
    std::size_t SweepOlderThan(std::chrono::seconds age) const;

  private:
    std::string root_;
};

}  // namespace genhost::assets
