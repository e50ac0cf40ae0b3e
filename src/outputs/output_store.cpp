#include "genhost/outputs/output_store.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"

#include <fstream>
#include <stdexcept>
#include <system_error>

namespace genhost::outputs {

namespace fs = std::filesystem;

bool IsSafeObjectName(std::string_view name) {
    if (name.empty() || name.size() > 128 || name.front() == '.') return false;
    for (const char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

std::string ContentTypeFor(std::string_view name) {
    const auto dot = name.rfind('.');
    const std::string_view ext = dot == std::string_view::npos ? "" : name.substr(dot + 1);
    if (ext == "png") return "image/png";
    if (ext == "jpg" || ext == "jpeg") return "image/jpeg";
    if (ext == "webp") return "image/webp";
    if (ext == "mp4") return "video/mp4";
    if (ext == "mov") return "video/quicktime";
    if (ext == "zip") return "application/zip";
    if (ext == "wav") return "audio/wav";
    if (ext == "mp3") return "audio/mpeg";
    if (ext == "ogg" || ext == "opus") return "audio/ogg";
    if (ext == "json") return "application/json";
    return "application/octet-stream";
}

LocalOutputStore::LocalOutputStore(fs::path root) : root_(std::move(root)) {
    fs::create_directories(root_);
}

fs::path LocalOutputStore::PathOf(std::string_view task_id, std::string_view name) const {
    if (!IsSafeObjectName(task_id) || !IsSafeObjectName(name)) {
        throw std::invalid_argument("unsafe object name");
    }
    return root_ / std::string(task_id) / std::string(name);
}

void LocalOutputStore::Put(std::string_view task_id, std::string_view name, std::string_view data) {
    const fs::path target = PathOf(task_id, name);
    fs::create_directories(target.parent_path());
    const fs::path temp = target.parent_path() / ("." + std::string(name) + "." + NewUuid());
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        out.flush();
        if (!out) throw std::runtime_error("cannot write output object");
    }
    fs::rename(temp, target);
}

void LocalOutputStore::PutFile(std::string_view task_id, std::string_view name,
                               const std::string& path) {
    const fs::path target = PathOf(task_id, name);
    fs::create_directories(target.parent_path());
    std::error_code ec;
    fs::rename(path, target, ec);  // same file system: atomic
    if (!ec) return;
    const fs::path temp = target.parent_path() / ("." + std::string(name) + "." + NewUuid());
    fs::copy_file(path, temp, fs::copy_options::overwrite_existing);
    fs::rename(temp, target);
    fs::remove(path);
}

std::optional<ObjectInfo> LocalOutputStore::Stat(std::string_view task_id, std::string_view name) {
    if (!IsSafeObjectName(task_id) || !IsSafeObjectName(name)) return std::nullopt;
    std::error_code ec;
    const fs::path p = PathOf(task_id, name);
    const auto size = fs::file_size(p, ec);
    if (ec || !fs::is_regular_file(p)) return std::nullopt;
    return ObjectInfo{size, ContentTypeFor(name)};
}

std::string LocalOutputStore::Read(std::string_view task_id, std::string_view name,
                                   std::uint64_t offset, std::uint64_t length) {
    std::ifstream in(PathOf(task_id, name), std::ios::binary);
    if (!in) throw std::runtime_error("cannot open output object");
    in.seekg(static_cast<std::streamoff>(offset));
    std::string out(length, '\0');
    in.read(out.data(), static_cast<std::streamsize>(length));
    out.resize(static_cast<std::size_t>(in.gcount()));
    return out;
}

void LocalOutputStore::DeleteObject(std::string_view task_id, std::string_view name) {
    if (!IsSafeObjectName(task_id) || !IsSafeObjectName(name)) return;
    std::error_code ec;
    fs::remove(PathOf(task_id, name), ec);
    fs::remove(root_ / std::string(task_id), ec);  // only succeeds once the folder is empty
}

void LocalOutputStore::DeleteTask(std::string_view task_id) {
    if (!IsSafeObjectName(task_id)) return;
    std::error_code ec;
    fs::remove_all(root_ / std::string(task_id), ec);
}

UrlSigner::UrlSigner(std::string secret, std::string public_url, const Clock& clock)
    : secret_(std::move(secret)), public_url_(std::move(public_url)), clock_(clock) {
    while (!public_url_.empty() && public_url_.back() == '/') public_url_.pop_back();
}

std::string UrlSigner::Sign(std::string_view path, std::int64_t expires) const {
    std::string message = "GET\n";
    message.append(path).append("\n").append(std::to_string(expires));
    return HexEncode(HmacSha256(secret_, message));
}

std::string UrlSigner::Url(std::string_view task_id, std::string_view name,
                           double ttl_seconds) const {
    std::string path = "/outputs/";
    path.append(task_id).append("/").append(name);
    const std::int64_t expires = UnixSeconds(clock_.Now()) + static_cast<std::int64_t>(ttl_seconds);
    return public_url_ + path + "?expires=" + std::to_string(expires) +
           "&signature=" + Sign(path, expires);
}

UrlSigner::Check UrlSigner::Verify(std::string_view path, std::string_view expires,
                                   std::string_view signature) const {
    if (expires.empty() || expires.size() > 12 || signature.size() != 64) return Check::kInvalid;
    std::int64_t value = 0;
    for (const char c : expires) {
        if (c < '0' || c > '9') return Check::kInvalid;
        value = value * 10 + (c - '0');
    }
    if (!ConstantTimeEqual(Sign(path, value), signature)) return Check::kInvalid;
    if (value < UnixSeconds(clock_.Now())) return Check::kExpired;
    return Check::kValid;
}

}  // namespace genhost::outputs
