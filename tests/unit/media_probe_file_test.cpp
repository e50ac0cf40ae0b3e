// ProbeMediaFile: the bounded probe of untrusted files (pictures, audio, a decompression bomb,
// garbage, a deadline).
#include "genhost/media/image.hpp"

extern "C" {
#include <libavutil/crc.h>
}

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace genhost::media {
namespace {

class TempFile {
  public:
    explicit TempFile(const std::string& bytes) {
        char path[] = "/tmp/genhost-probe-XXXXXX";
        const int fd = mkstemp(path);
        if (fd >= 0) close(fd);
        path_ = path;
        std::ofstream(path_, std::ios::binary) << bytes;
    }
    ~TempFile() { std::filesystem::remove(path_); }
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

void Put32(std::string& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

void Chunk(std::string& out, const char* type, const std::string& data) {
    Put32(out, static_cast<std::uint32_t>(data.size()));
    const std::string body = std::string(type, 4) + data;
    out += body;
    Put32(out, av_crc(av_crc_get_table(AV_CRC_32_IEEE_LE), 0xFFFFFFFFu,
                      reinterpret_cast<const std::uint8_t*>(body.data()), body.size()) ^
                   0xFFFFFFFFu);
}

std::string PngHeaderOnly(std::uint32_t width, std::uint32_t height) {
    std::string out = "\x89PNG\r\n\x1a\n";
    std::string ihdr;
    Put32(ihdr, width);
    Put32(ihdr, height);
    ihdr += std::string("\x08\x02\x00\x00\x00", 5);
    Chunk(out, "IHDR", ihdr);
    Chunk(out, "IDAT", std::string("\x78\x9c\x63\x60\x00\x00\x00\x02\x00\x01", 10));
    Chunk(out, "IEND", "");
    return out;
}

std::string Wav(double seconds) {
    const int rate = 8000;
    const auto n = static_cast<std::uint32_t>(seconds * rate);
    auto le = [](std::string& s, std::uint32_t v, int bytes) {
        for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
    };
    std::string out = "RIFF";
    le(out, 36 + n * 2, 4);
    out += "WAVEfmt ";
    le(out, 16, 4);
    le(out, 1, 2);
    le(out, 1, 2);
    le(out, rate, 4);
    le(out, rate * 2, 4);
    le(out, 2, 2);
    le(out, 16, 2);
    out += "data";
    le(out, n * 2, 4);
    out.append(n * 2, '\0');
    return out;
}

TEST(ProbeMediaFile, ReadsAPicture) {
    const TempFile png(RenderImage({640, 360, 1, "a probe", ImageFormat::kPng, {}}));
    const MediaInfo info = ProbeMediaFile(png.path());
    EXPECT_EQ(info.container, "png_pipe");
    EXPECT_EQ(info.video_codec, "png");
    EXPECT_EQ(info.width, 640);
    EXPECT_EQ(info.height, 360);
    EXPECT_EQ(info.duration_seconds, 0);
}

TEST(ProbeMediaFile, ReadsAudioAndDecodesItsFirstFrame) {
    const TempFile wav(Wav(5.5));
    const MediaInfo info = ProbeMediaFile(wav.path());
    EXPECT_EQ(info.container, "wav");
    EXPECT_EQ(info.audio_codec, "pcm_s16le");
    EXPECT_NEAR(info.duration_seconds, 5.5, 0.01);
    EXPECT_TRUE(info.video_codec.empty());
}

TEST(ProbeMediaFile, ReportsAnOversizedPictureWithoutDecodingIt) {
    const TempFile png(PngHeaderOnly(8001, 16));
    // Either the header size comes back (and the caller refuses it) or the file is refused as
    // undecodable; both without decoding a picture.
    try {
        const MediaInfo info = ProbeMediaFile(png.path());
        EXPECT_GT(std::max(info.width, info.height), 8000);
    } catch (const MediaError&) {
    }
}

TEST(ProbeMediaFile, RefusesADecompressionBombQuickly) {
    const TempFile bomb(PngHeaderOnly(100000, 100000));
    const auto start = std::chrono::steady_clock::now();
    try {
        const MediaInfo info = ProbeMediaFile(bomb.path());
        EXPECT_GT(info.width, 8000);  // reported, not decoded
    } catch (const MediaError&) {
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(ProbeMediaFile, RefusesGarbageAndEmptyFiles) {
    const TempFile garbage(std::string(4096, '\x5a'));
    EXPECT_THROW(ProbeMediaFile(garbage.path()), MediaError);
    const TempFile empty("");
    EXPECT_THROW(ProbeMediaFile(empty.path()), MediaError);
    EXPECT_THROW(ProbeMediaFile("/nonexistent/file"), MediaError);
}

TEST(ProbeMediaFile, StopsAtTheDeadline) {
    const TempFile wav(Wav(2));
    EXPECT_THROW(ProbeMediaFile(wav.path(), ProbeLimits{std::chrono::milliseconds(-1), 8000}),
                 MediaError);
}

}  // namespace
}  // namespace genhost::media
