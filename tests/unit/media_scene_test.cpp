// Tests for the media module's building blocks: the deterministic random generator, the
// procedural Scene and its painter, and the in-memory AVIOContexts.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../../src/media/av_handles.hpp"
#include "../../src/media/memory_io.hpp"
#include "../../src/media/prng.hpp"
#include "../../src/media/scene.hpp"

namespace genhost::media {
namespace {

std::vector<std::uint8_t> Paint(const Scene& scene, int width, int height, double t = 0) {
    std::vector<std::uint8_t> rgb(3 * static_cast<std::size_t>(width) * height);
    PaintScene(scene, t, width, height, rgb.data(), 3 * width);
    return rgb;
}

std::uint64_t Checksum(const std::vector<std::uint8_t>& bytes) {
    return Fnv1a64(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

TEST(PrngTest, KnownValues) {
    EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
    EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
    // First output of splitmix64 seeded with 0.
    EXPECT_EQ(Mix64(0x9e3779b97f4a7c15ULL), 0xe220a8397b1dcdafULL);
}

TEST(PrngTest, SameSeedSameSequence) {
    Xoshiro256 a(123);
    Xoshiro256 b(123);
    Xoshiro256 c(124);
    bool differs = false;
    for (int i = 0; i < 100; ++i) {
        const std::uint64_t x = a.Next();
        EXPECT_EQ(x, b.Next());
        differs = differs || x != c.Next();
    }
    EXPECT_TRUE(differs);
}

TEST(PrngTest, HelpersStayInRange) {
    Xoshiro256 rng(1);
    for (int i = 0; i < 10000; ++i) {
        const double u = rng.Uniform();
        EXPECT_GE(u, 0.0);
        EXPECT_LT(u, 1.0);
        const double v = rng.Uniform(-2.0, 3.0);
        EXPECT_GE(v, -2.0);
        EXPECT_LT(v, 3.0);
        EXPECT_LT(rng.Below(7), 7u);
    }
}

TEST(SceneTest, ComposeIsDeterministicAndWellFormed) {
    const Scene a = ComposeScene(5, "misty mountains at dawn");
    const Scene b = ComposeScene(5, "misty mountains at dawn");
    EXPECT_EQ(Checksum(Paint(a, 40, 30)), Checksum(Paint(b, 40, 30)));
    ASSERT_GE(a.stops.size(), 2u);
    EXPECT_EQ(a.stops.front().position, 0);
    EXPECT_EQ(a.stops.back().position, 1);
    for (std::size_t i = 1; i < a.stops.size(); ++i) {
        EXPECT_LE(a.stops[i - 1].position, a.stops[i].position);
    }
    EXPECT_EQ(a.palette.size(), 5u);
    for (const Rgb& c : a.palette) {
        for (const double v : {c.r, c.g, c.b}) {
            EXPECT_GE(v, 0.0);
            EXPECT_LE(v, 1.0);
        }
    }
    EXPECT_FALSE(a.orbs.empty());
    EXPECT_FALSE(a.bands.empty());
}

// A change detector for the look of generated media: if this fails after an intended change to
// the painter or the composition, update the constant.
TEST(SceneTest, PixelsArePinned) {
    const Scene scene = ComposeScene(2024, "golden hour over a calm sea");
    EXPECT_EQ(Checksum(Paint(scene, 64, 48)), 0x57de0ca6e350cec6ULL);
}

TEST(SceneTest, ReferenceTonesChangeThePalette) {
    const std::vector<Rgb> tones = {{0, 1, 0}};
    const Scene plain = ComposeScene(1, "anything");
    const Scene steered = ComposeScene(1, "anything", tones);
    for (std::size_t i = 0; i < plain.palette.size(); ++i) {
        EXPECT_GT(steered.palette[i].g - (steered.palette[i].r + steered.palette[i].b) / 2,
                  plain.palette[i].g - (plain.palette[i].r + plain.palette[i].b) / 2);
    }
}

TEST(SceneTest, TimeAnimatesTheScene) {
    const Scene scene = ComposeScene(3, "drifting lights");
    EXPECT_NE(Checksum(Paint(scene, 64, 36, 0)), Checksum(Paint(scene, 64, 36, 2.0)));
    EXPECT_EQ(Checksum(Paint(scene, 64, 36, 2.0)), Checksum(Paint(scene, 64, 36, 2.0)));
}

TEST(SceneTest, PaintWritesOnlyThePicture) {
    const Scene scene = ComposeScene(9, "edges");
    for (const auto& [width, height] : std::vector<std::pair<int, int>>{{1, 1}, {3, 2}, {17, 5}}) {
        const int linesize = 3 * width + 13;
        std::vector<std::uint8_t> buffer(static_cast<std::size_t>(linesize) * height + 7, 0xa5);
        PaintScene(scene, 0, width, height, buffer.data(), linesize);
        for (int y = 0; y < height; ++y) {
            for (int x = 3 * width; x < linesize; ++x) {
                EXPECT_EQ(buffer[static_cast<std::size_t>(y) * linesize + x], 0xa5);
            }
        }
        for (std::size_t i = static_cast<std::size_t>(linesize) * height; i < buffer.size(); ++i) {
            EXPECT_EQ(buffer[i], 0xa5);
        }
    }
}

TEST(SceneTest, ExtremeAspectRatiosAreFilled) {
    // A strip must still show the gradient end to end (first and last pixels differ).
    const Scene scene = ComposeScene(11, "a long thin strip");
    const std::vector<std::uint8_t> wide = Paint(scene, 2000, 1);
    const std::vector<std::uint8_t> tall = Paint(scene, 1, 2000);
    EXPECT_NE(std::vector<std::uint8_t>(wide.begin(), wide.begin() + 3),
              std::vector<std::uint8_t>(wide.end() - 3, wide.end()));
    EXPECT_NE(std::vector<std::uint8_t>(tall.begin(), tall.begin() + 3),
              std::vector<std::uint8_t>(tall.end() - 3, tall.end()));
}

TEST(MemoryOutputTest, WritesSeeksAndOverwrites) {
    MemoryOutput output;
    AVIOContext* avio = output.Avio();
    avio_write(avio, reinterpret_cast<const unsigned char*>("hello world"), 11);
    EXPECT_EQ(avio_seek(avio, 6, SEEK_SET), 6);
    avio_write(avio, reinterpret_cast<const unsigned char*>("W"), 1);
    EXPECT_EQ(avio_seek(avio, 11, SEEK_SET), 11);  // avio_seek itself has no SEEK_END
    avio_write(avio, reinterpret_cast<const unsigned char*>("!"), 1);
    avio_flush(avio);  // like a file, the size seen excludes what is still buffered
    EXPECT_EQ(avio_size(avio), 12);
    EXPECT_LT(avio_seek(avio, 100, SEEK_SET), 0);  // no seeking past the end
    EXPECT_EQ(avio_tell(avio), 12);
    EXPECT_EQ(output.Take(), "hello World!");
}

TEST(MemoryOutputTest, LargeWritesGoThroughTheBuffer) {
    MemoryOutput output;
    std::string expected;
    for (int i = 0; i < 100000; ++i) {
        const auto byte = static_cast<unsigned char>(i * 7);
        avio_w8(output.Avio(), byte);
        expected.push_back(static_cast<char>(byte));
    }
    avio_seek(output.Avio(), 0, SEEK_SET);
    avio_w8(output.Avio(), 'X');
    expected[0] = 'X';
    EXPECT_EQ(output.Take(), expected);
}

TEST(MemoryInputTest, EmptyAndUnknownDataThrow) {
    EXPECT_THROW(MemoryInput(""), MediaError);
    EXPECT_THROW(MemoryInput("\x01\x02\x03"), MediaError);
}

TEST(AvHandlesTest, CheckAvAndErrorText) {
    EXPECT_EQ(CheckAv(3, "x"), 3);
    try {
        CheckAv(AVERROR(ENOMEM), "allocating");
        FAIL() << "expected MediaError";
    } catch (const MediaError& e) {
        EXPECT_THAT(e.what(), ::testing::StartsWith("allocating: "));
    }
    EXPECT_FALSE(AvErrorText(AVERROR_EOF).empty());
}

TEST(AvHandlesTest, SwsFormatMapsDeprecatedFullRangeFormats) {
    bool full = false;
    EXPECT_EQ(SwsFormat(AV_PIX_FMT_YUVJ420P, full), AV_PIX_FMT_YUV420P);
    EXPECT_TRUE(full);
    EXPECT_EQ(SwsFormat(AV_PIX_FMT_RGB24, full), AV_PIX_FMT_RGB24);
    EXPECT_FALSE(full);
}

TEST(AvHandlesTest, DictionaryCountsLeftovers) {
    AvDictionary options;
    options.Set("pred", "paeth");
    options.Set("no_such_option", std::int64_t{1});
    EXPECT_EQ(options.Count(), 2);
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    CodecContextPtr encoder = MakeCodecContext(codec);
    encoder->width = 4;
    encoder->height = 4;
    encoder->pix_fmt = AV_PIX_FMT_RGB24;
    encoder->time_base = AVRational{1, 25};
    CheckAv(avcodec_open2(encoder.get(), codec, options.Address()), "open");
    EXPECT_EQ(options.Count(), 1);
    EXPECT_NE(av_dict_get(options.Get(), "no_such_option", nullptr, 0), nullptr);
}

}  // namespace
}  // namespace genhost::media
