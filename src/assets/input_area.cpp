#include "genhost/assets/input_area.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

namespace genhost::assets {
namespace fs = std::filesystem;

namespace {

bool IsTaskId(std::string_view s) {
    if (s.empty() || s.size() > 64) return false;
    for (char c : s) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return false;
    }
    return true;
}

bool IsFileName(std::string_view s) {
    if (s.empty() || s.size() > 128 || s.front() == '.') return false;
    for (char c : s) {
        const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                        (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '-';
        if (!ok) return false;
    }
    return true;
}

}  // namespace

std::optional<std::string> NullUploadSource::PathFor(const std::string& /*org_id*/,
                                                     const std::string& /*upload_id*/) {
    return std::nullopt;
}

InputArea::InputArea(std::string root) : root_(std::move(root)) {}

std::string InputArea::DirFor(const std::string& task_id) const { return root_ + "/" + task_id; }

std::string InputArea::Reference(const std::string& task_id, const std::string& name) {
    return std::string(kInputReferenceScheme) + task_id + "/" + name;
}

bool InputArea::IsReference(std::string_view media) {
    return media.substr(0, kInputReferenceScheme.size()) == kInputReferenceScheme;
}

std::optional<std::string> InputArea::PathOf(std::string_view reference) const {
    if (!IsReference(reference)) return std::nullopt;
    reference.remove_prefix(kInputReferenceScheme.size());
    const std::size_t slash = reference.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    const std::string_view task = reference.substr(0, slash);
    const std::string_view name = reference.substr(slash + 1);
    if (!IsTaskId(task) || !IsFileName(name)) return std::nullopt;
    return root_ + "/" + std::string(task) + "/" + std::string(name);
}

void InputArea::Remove(const std::string& task_id) const {
    if (!IsTaskId(task_id)) return;
    std::error_code ec;
    fs::remove_all(DirFor(task_id), ec);
}

std::size_t InputArea::SweepOlderThan(std::chrono::seconds age) const {
    std::error_code ec;
    fs::directory_iterator it(root_, ec);
    if (ec) return 0;
    const auto cutoff = fs::file_time_type::clock::now() - age;
    std::size_t removed = 0;
    for (const fs::directory_entry& entry : it) {
        const std::string name = entry.path().filename().string();
        if (!IsTaskId(name) || !entry.is_directory(ec)) continue;
        const auto modified = entry.last_write_time(ec);
        if (ec || modified > cutoff) continue;
        fs::remove_all(entry.path(), ec);
        if (!ec) ++removed;
    }
    return removed;
}

}  // namespace genhost::assets
