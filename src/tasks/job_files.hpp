// Files of background jobs (private to src/tasks): a job's private scratch folder, and whole-file
// reads and writes.
#pragma once

#include "genhost/core/ids.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace genhost::tasks {

inline std::string ReadWholeFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteWholeFile(const std::filesystem::path& path, const std::string& data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

// JobScratch is a private folder `<root>/<prefix>-<uuid>`, removed when it goes out of scope.
struct JobScratch {
    std::filesystem::path path;
    JobScratch(const std::string& root, const std::string& prefix)
        : path(std::filesystem::path(root) / (prefix + "-" + NewUuid())) {
        std::filesystem::create_directories(path);
    }
    ~JobScratch() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    JobScratch(const JobScratch&) = delete;
    JobScratch& operator=(const JobScratch&) = delete;
};

}  // namespace genhost::tasks
