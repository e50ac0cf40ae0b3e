// Store-only ZIP archives (APPNOTE.TXT 6.3): the writer for image-sequence outputs and the
// checking reader the tests use.

#include <array>
#include <cerrno>
#include <cstring>
#include <limits>

#include "video_internal.hpp"

namespace genhost::media {
namespace {

constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::uint32_t kCentralHeader = 0x02014b50;
constexpr std::uint32_t kEndOfCentral = 0x06054b50;
// MS-DOS date of 1980-01-01 (the earliest a ZIP can say), time 00:00: fixed, for reproducible
// archives.
constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr std::uint16_t kDosTime = 0;
constexpr std::uint16_t kVersion = 20;  // 2.0: the baseline every unzip reads

const std::array<std::uint32_t, 256>& CrcTable() {
    static const std::array<std::uint32_t, 256> table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t n = 0; n < 256; ++n) {
            std::uint32_t c = n;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            t[n] = c;
        }
        return t;
    }();
    return table;
}

void Put16(std::string& out, std::uint32_t v) {
    out.push_back(static_cast<char>(v & 0xff));
    out.push_back(static_cast<char>((v >> 8) & 0xff));
}
void Put32(std::string& out, std::uint32_t v) {
    Put16(out, v & 0xffff);
    Put16(out, v >> 16);
}

std::uint32_t Get16(std::string_view b, std::size_t at) {
    if (at + 2 > b.size()) throw MediaError("ZIP: truncated");
    return static_cast<std::uint8_t>(b[at]) | (static_cast<std::uint8_t>(b[at + 1]) << 8);
}
std::uint32_t Get32(std::string_view b, std::size_t at) {
    return Get16(b, at) | (Get16(b, at + 2) << 16);
}

}  // namespace

std::uint32_t Crc32(std::string_view bytes, std::uint32_t crc) {
    const auto& table = CrcTable();
    crc = ~crc;
    for (const char ch : bytes)
        crc = table[(crc ^ static_cast<std::uint8_t>(ch)) & 0xff] ^ (crc >> 8);
    return ~crc;
}

ZipWriter::ZipWriter(const std::string& path) {
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr) throw MediaError("cannot create " + path + ": " + std::strerror(errno));
}

ZipWriter::~ZipWriter() {
    if (file_ != nullptr) std::fclose(file_);
}

void ZipWriter::Write(std::string_view bytes) {
    if (file_ == nullptr) throw MediaError("ZIP: written after Close");
    if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
        throw MediaError(std::string("ZIP: write failed: ") + std::strerror(errno));
    }
    offset_ += bytes.size();
}

void ZipWriter::Add(std::string_view name, std::string_view data) {
    constexpr auto kMax = std::numeric_limits<std::uint32_t>::max();
    if (entries_.size() >= 0xffff || data.size() >= kMax || offset_ + data.size() + 512 >= kMax) {
        throw MediaError("the image sequence is too large for a ZIP without ZIP64 (4 GiB)");
    }
    Entry entry{std::string(name), Crc32(data), static_cast<std::uint32_t>(data.size()),
                static_cast<std::uint32_t>(offset_)};
    std::string header;
    Put32(header, kLocalHeader);
    Put16(header, kVersion);
    Put16(header, 0);  // flags
    Put16(header, 0);  // method: stored
    Put16(header, kDosTime);
    Put16(header, kDosDate);
    Put32(header, entry.crc);
    Put32(header, entry.size);  // compressed size
    Put32(header, entry.size);
    Put16(header, static_cast<std::uint32_t>(name.size()));
    Put16(header, 0);  // extra field length
    header.append(name);
    Write(header);
    Write(data);
    entries_.push_back(std::move(entry));
}

void ZipWriter::Close() {
    const auto directory_offset = static_cast<std::uint32_t>(offset_);
    std::string directory;
    for (const Entry& e : entries_) {
        Put32(directory, kCentralHeader);
        Put16(directory, kVersion);  // made by: MS-DOS, 2.0
        Put16(directory, kVersion);  // needed to extract
        Put16(directory, 0);
        Put16(directory, 0);
        Put16(directory, kDosTime);
        Put16(directory, kDosDate);
        Put32(directory, e.crc);
        Put32(directory, e.size);
        Put32(directory, e.size);
        Put16(directory, static_cast<std::uint32_t>(e.name.size()));
        Put16(directory, 0);  // extra
        Put16(directory, 0);  // comment
        Put16(directory, 0);  // disk number
        Put16(directory, 0);  // internal attributes
        Put32(directory, 0);  // external attributes
        Put32(directory, e.offset);
        directory.append(e.name);
    }
    std::string end;
    Put32(end, kEndOfCentral);
    Put16(end, 0);
    Put16(end, 0);
    Put16(end, static_cast<std::uint32_t>(entries_.size()));
    Put16(end, static_cast<std::uint32_t>(entries_.size()));
    Put32(end, static_cast<std::uint32_t>(directory.size()));
    Put32(end, directory_offset);
    Put16(end, 0);  // comment length
    Write(directory);
    Write(end);
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) throw MediaError(std::string("ZIP: close failed: ") + std::strerror(errno));
}

std::vector<ZipEntry> ReadStoredZip(std::string_view bytes) {
    if (bytes.size() < 22) throw MediaError("ZIP: too short");
    const std::size_t end = bytes.size() - 22;  // no archive comment
    if (Get32(bytes, end) != kEndOfCentral) throw MediaError("ZIP: no end of central directory");
    const std::uint32_t count = Get16(bytes, end + 10);
    const std::uint32_t dir_size = Get32(bytes, end + 12);
    std::size_t at = Get32(bytes, end + 16);
    if (std::size_t{at} + dir_size != end) throw MediaError("ZIP: central directory misplaced");
    std::vector<ZipEntry> entries;
    for (std::uint32_t i = 0; i < count; ++i) {
        if (Get32(bytes, at) != kCentralHeader) throw MediaError("ZIP: bad central header");
        const std::uint32_t method = Get16(bytes, at + 10);
        const std::uint32_t crc = Get32(bytes, at + 16);
        const std::uint32_t csize = Get32(bytes, at + 20);
        const std::uint32_t size = Get32(bytes, at + 24);
        const std::uint32_t name_len = Get16(bytes, at + 28);
        const std::uint32_t extra_len = Get16(bytes, at + 30);
        const std::uint32_t comment_len = Get16(bytes, at + 32);
        const std::uint32_t local = Get32(bytes, at + 42);
        if (at + 46 + name_len > bytes.size()) throw MediaError("ZIP: truncated name");
        std::string name(bytes.substr(at + 46, name_len));
        if (method != 0 || csize != size) throw MediaError("ZIP: entry " + name + " not stored");
        if (Get32(bytes, local) != kLocalHeader || Get32(bytes, local + 14) != crc ||
            Get32(bytes, local + 22) != size || Get16(bytes, local + 26) != name_len ||
            bytes.substr(local + 30, name_len) != name) {
            throw MediaError("ZIP: local header of " + name + " disagrees");
        }
        const std::size_t data_at = local + 30 + name_len + Get16(bytes, local + 28);
        if (data_at + size > bytes.size()) throw MediaError("ZIP: truncated data of " + name);
        std::string data(bytes.substr(data_at, size));
        if (Crc32(data) != crc) throw MediaError("ZIP: CRC mismatch in " + name);
        entries.push_back(ZipEntry{std::move(name), std::move(data)});
        at += 46 + name_len + extra_len + comment_len;
    }
    return entries;
}

}  // namespace genhost::media
