#include "genhost/outputs/upload_folder.hpp"

#include "genhost/core/ids.hpp"

#include <cerrno>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace genhost::outputs {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view kPartSuffix = ".part";

std::system_error Errno(const std::string& what) {
    return std::system_error(errno, std::generic_category(), what);
}
}  // namespace

UploadWriter::UploadWriter(fs::path part_path, fs::path final_path, int fd)
    : part_path_(std::move(part_path)), final_path_(std::move(final_path)), fd_(fd) {}

UploadWriter::~UploadWriter() {
    if (!done_) Discard();
}

void UploadWriter::Close() {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
}

void UploadWriter::Write(std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd_, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Errno("write " + part_path_.string());
        }
        data.remove_prefix(static_cast<std::size_t>(n));
        size_ += static_cast<std::uint64_t>(n);
    }
}

void UploadWriter::Commit() {
    // No fsync: uploads are ephemeral inputs, and a file cut short by a machine crash is refused
    // by the media probe like any other broken input (docs/uploads.md).
    if (::close(fd_) != 0) {
        fd_ = -1;
        throw Errno("close " + part_path_.string());
    }
    fd_ = -1;
    fs::rename(part_path_, final_path_);
    done_ = true;
}

void UploadWriter::Discard() {
    Close();
    std::error_code ec;
    fs::remove(part_path_, ec);
    done_ = true;
}

UploadFolder::UploadFolder(fs::path root) : root_(std::move(root)) {
    fs::create_directories(root_);
}

fs::path UploadFolder::PathOf(std::string_view upload_id) const {
    if (!IsUuid(upload_id)) throw std::invalid_argument("upload id is not a UUID");
    return root_ / std::string(upload_id);
}

std::unique_ptr<UploadWriter> UploadFolder::Begin(std::string_view upload_id) const {
    const fs::path final_path = PathOf(upload_id);
    fs::path part_path = final_path;
    part_path += kPartSuffix;
    const int fd = ::open(part_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) throw Errno("open " + part_path.string());
    return std::make_unique<UploadWriter>(std::move(part_path), final_path, fd);
}

void UploadFolder::Remove(std::string_view upload_id) const {
    const fs::path final_path = PathOf(upload_id);
    fs::path part_path = final_path;
    part_path += kPartSuffix;
    std::error_code ec;
    fs::remove(final_path, ec);
    fs::remove(part_path, ec);
}

std::vector<UploadFileInfo> UploadFolder::List() const {
    std::vector<UploadFileInfo> out;
    std::error_code ec;
    for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        UploadFileInfo info;
        if (name.size() > kPartSuffix.size() &&
            name.compare(name.size() - kPartSuffix.size(), kPartSuffix.size(), kPartSuffix) == 0) {
            name.resize(name.size() - kPartSuffix.size());
            info.partial = true;
        }
        if (!IsUuid(name)) continue;
        std::error_code tec;
        info.modified = it->last_write_time(tec);
        if (tec) continue;  // deleted meanwhile
        info.upload_id = std::move(name);
        out.push_back(std::move(info));
    }
    return out;
}

}  // namespace genhost::outputs
