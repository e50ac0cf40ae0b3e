// genhost/outputs/upload_folder.hpp
//
// Provides UploadFolder, where the bytes of ephemeral uploads live: `<root>/<upload id>` once an
// upload is complete, `<root>/<upload id>.part` while it streams in (renamed into place when it
// is whole, so readers never see a partial file). `root` is DATA_DIR/inputs/uploads, the
// output store's input area; several nodes share it like the outputs folder.
//
// All methods block (file I/O): call them from worker threads, the sweeper or the blocking pool,
// never from an I/O thread. Failures throw std::system_error / std::filesystem::filesystem_error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::outputs {

// UploadWriter is one upload being written: an open `.part` file. It owns the file: destroying
// a writer that was not committed closes and deletes the `.part` file.
class UploadWriter {
  public:
    UploadWriter(std::filesystem::path part_path, std::filesystem::path final_path, int fd);
    ~UploadWriter();
    UploadWriter(const UploadWriter&) = delete;
    UploadWriter& operator=(const UploadWriter&) = delete;

    // Write appends `data`.
    void Write(std::string_view data);

    // Commit closes the file and renames it to its final name.
    void Commit();

    // Discard closes and deletes the `.part` file (no error if it is already gone).
    void Discard();

    std::uint64_t Size() const { return size_; }

  private:
    void Close();
    std::filesystem::path part_path_;
    std::filesystem::path final_path_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
    bool done_ = false;
};

// UploadFileInfo is one file of the folder, for the sweeper's scan.
struct UploadFileInfo {
    std::string upload_id;  // the file name without ".part"
    bool partial = false;
    std::filesystem::file_time_type modified;
};

class UploadFolder {
  public:
    // UploadFolder keeps uploads under `root`; creates it if needed.
    explicit UploadFolder(std::filesystem::path root);

    // PathOf returns where the bytes of complete upload `upload_id` live.
    std::filesystem::path PathOf(std::string_view upload_id) const;

    // Begin opens `<id>.part` for writing, truncating a stale one left by a crashed process.
    std::unique_ptr<UploadWriter> Begin(std::string_view upload_id) const;

    // Remove deletes both files of `upload_id` (no error if they do not exist).
    void Remove(std::string_view upload_id) const;

    // List returns the folder's upload files (other names are skipped).
    std::vector<UploadFileInfo> List() const;

    const std::filesystem::path& root() const { return root_; }

  private:
    std::filesystem::path root_;
};

}  // namespace genhost::outputs
