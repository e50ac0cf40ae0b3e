// Tests for RenderImage: exact sizes, valid PNG and JPEG files, determinism, and the effect of
// the seed, the prompt and reference pictures.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../../src/media/av_handles.hpp"
#include "../../src/media/decode.hpp"
#include "../../src/media/memory_io.hpp"
#include "genhost/media/image.hpp"

namespace genhost::media {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

ImageSpec Spec(int width, int height, ImageFormat format = ImageFormat::kPng) {
    ImageSpec spec;
    spec.width = width;
    spec.height = height;
    spec.seed = 42;
    spec.prompt = "a quiet harbour at dawn, boats and gulls";
    spec.format = format;
    return spec;
}

// MeanColour decodes `bytes` (any picture) and returns its mean R, G, B in 0..255.
struct Mean {
    double r = 0;
    double g = 0;
    double b = 0;
};
Mean MeanColour(const std::string& bytes) {
    MemoryInput input(bytes);
    const FramePtr frame = DecodeFirstVideoFrame(input.Format(), FindVideoStream(input.Format()));
    FramePtr rgb = MakeVideoFrame(AV_PIX_FMT_RGB24, frame->width, frame->height);
    bool full_range = false;
    const AVPixelFormat source = SwsFormat(static_cast<AVPixelFormat>(frame->format), full_range);
    SwsContextPtr scaler =
        MakeScaler(frame->width, frame->height, source, frame->width, frame->height,
                   AV_PIX_FMT_RGB24, SWS_POINT | SWS_ACCURATE_RND | SWS_BITEXACT);
    if (full_range) {
        const int* bt601 = sws_getCoefficients(SWS_CS_ITU601);
        CheckAv(sws_setColorspaceDetails(scaler.get(), bt601, 1, bt601, 1, 0, 1 << 16, 1 << 16),
                "sws_setColorspaceDetails");
    }
    sws_scale(scaler.get(), frame->data, frame->linesize, 0, frame->height, rgb->data,
              rgb->linesize);
    Mean mean;
    for (int y = 0; y < rgb->height; ++y) {
        const std::uint8_t* p = rgb->data[0] + static_cast<std::ptrdiff_t>(y) * rgb->linesize[0];
        for (int x = 0; x < rgb->width; ++x, p += 3) {
            mean.r += p[0];
            mean.g += p[1];
            mean.b += p[2];
        }
    }
    const double n = static_cast<double>(rgb->width) * rgb->height;
    return {mean.r / n, mean.g / n, mean.b / n};
}

// SolidPng is a width x height PNG of one colour, encoded directly with libavcodec.
std::string SolidPng(int width, int height, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    FramePtr frame = MakeVideoFrame(AV_PIX_FMT_RGB24, width, height);
    for (int y = 0; y < height; ++y) {
        std::uint8_t* p = frame->data[0] + static_cast<std::ptrdiff_t>(y) * frame->linesize[0];
        for (int x = 0; x < width; ++x, p += 3) {
            p[0] = r;
            p[1] = g;
            p[2] = b;
        }
    }
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    CodecContextPtr encoder = MakeCodecContext(codec);
    encoder->width = width;
    encoder->height = height;
    encoder->pix_fmt = AV_PIX_FMT_RGB24;
    encoder->time_base = AVRational{1, 25};
    CheckAv(avcodec_open2(encoder.get(), codec, nullptr), "open");
    CheckAv(avcodec_send_frame(encoder.get(), frame.get()), "send");
    PacketPtr packet = MakePacket();
    CheckAv(avcodec_receive_packet(encoder.get(), packet.get()), "receive");
    return {reinterpret_cast<const char*>(packet->data), static_cast<std::size_t>(packet->size)};
}

struct Size {
    int width;
    int height;
};

class RenderImageSizeTest : public ::testing::TestWithParam<Size> {};

TEST_P(RenderImageSizeTest, PngHasExactSize) {
    const Size size = GetParam();
    const std::string png = RenderImage(Spec(size.width, size.height));
    const MediaInfo info = ProbeMedia(png);
    EXPECT_EQ(info.container, "png_pipe");
    EXPECT_EQ(info.video_codec, "png");
    EXPECT_EQ(info.width, size.width);
    EXPECT_EQ(info.height, size.height);
    EXPECT_EQ(info.pixel_format, "rgb24");
    EXPECT_EQ(info.duration_seconds, 0);
    EXPECT_EQ(info.frame_rate, 0);
    EXPECT_TRUE(info.audio_codec.empty());
}

TEST_P(RenderImageSizeTest, JpegHasExactSize) {
    const Size size = GetParam();
    const std::string jpeg = RenderImage(Spec(size.width, size.height, ImageFormat::kJpeg));
    const MediaInfo info = ProbeMedia(jpeg);
    EXPECT_EQ(info.container, "jpeg_pipe");
    EXPECT_EQ(info.video_codec, "mjpeg");
    EXPECT_EQ(info.width, size.width);
    EXPECT_EQ(info.height, size.height);
    EXPECT_EQ(info.pixel_format, "yuvj420p");
}

INSTANTIATE_TEST_SUITE_P(Ratios, RenderImageSizeTest,
                         ::testing::Values(Size{1024, 1024}, Size{1920, 1080}, Size{720, 1280},
                                           Size{1, 1}, Size{1, 7}, Size{333, 77}, Size{4000, 3000}),
                         [](const ::testing::TestParamInfo<Size>& info) {
                             return std::to_string(info.param.width) + "x" +
                                    std::to_string(info.param.height);
                         });

TEST(RenderImageTest, PngStartsWithSignatureAndEndsWithIend) {
    const std::string png = RenderImage(Spec(64, 48));
    ASSERT_GT(png.size(), 8u + 12u);
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(png.substr(12, 4), "IHDR");
    EXPECT_EQ(png.substr(png.size() - 8, 4), "IEND");
    // Tagged sRGB, square pixels (pHYs 1:1, unit unknown).
    EXPECT_NE(png.find("sRGB"), std::string::npos);
    const std::size_t phys = png.find("pHYs");
    ASSERT_NE(phys, std::string::npos);
    EXPECT_EQ(png.substr(phys + 4, 9), std::string("\0\0\0\1\0\0\0\1\0", 9));
}

TEST(RenderImageTest, JpegIsJfifWithoutEncoderComment) {
    const std::string jpeg = RenderImage(Spec(64, 48, ImageFormat::kJpeg));
    ASSERT_GT(jpeg.size(), 16u);
    EXPECT_EQ(jpeg.substr(0, 4), std::string("\xff\xd8\xff\xe0", 4));
    EXPECT_EQ(jpeg.substr(6, 5), std::string("JFIF\0", 5));
    EXPECT_EQ(jpeg.substr(jpeg.size() - 2), std::string("\xff\xd9", 2));
    // Bit-exact mode: no "Lavc" version comment that would change with the library.
    EXPECT_EQ(jpeg.find("Lavc"), std::string::npos);
}

TEST(RenderImageTest, JpegColoursMatchPng) {
    // Full-range BT.601 end to end: the JPEG decodes to the PNG's colours, give or take the
    // compression.
    const Mean png = MeanColour(RenderImage(Spec(256, 144)));
    const Mean jpeg = MeanColour(RenderImage(Spec(256, 144, ImageFormat::kJpeg)));
    EXPECT_NEAR(jpeg.r, png.r, 2.0);
    EXPECT_NEAR(jpeg.g, png.g, 2.0);
    EXPECT_NEAR(jpeg.b, png.b, 2.0);
}

TEST(RenderImageTest, SameSpecGivesIdenticalBytes) {
    for (const ImageFormat format : {ImageFormat::kPng, ImageFormat::kJpeg}) {
        const ImageSpec spec = Spec(320, 200, format);
        EXPECT_EQ(RenderImage(spec), RenderImage(spec));
    }
}

TEST(RenderImageTest, SeedChangesTheBytes) {
    ImageSpec a = Spec(160, 90);
    ImageSpec b = a;
    b.seed = 43;
    EXPECT_NE(RenderImage(a), RenderImage(b));
}

TEST(RenderImageTest, PromptChangesTheBytes) {
    ImageSpec a = Spec(160, 90);
    ImageSpec b = a;
    b.prompt = "a red fox in the snow";
    EXPECT_NE(RenderImage(a), RenderImage(b));
}

TEST(RenderImageTest, PromptCaseAndPunctuationDoNotMatter) {
    ImageSpec a = Spec(160, 90);
    a.prompt = "Red fox, in the SNOW!";
    ImageSpec b = a;
    b.prompt = "red fox in the snow";
    EXPECT_EQ(RenderImage(a), RenderImage(b));
}

TEST(RenderImageTest, ColourWordsSteerThePalette) {
    ImageSpec red = Spec(128, 128);
    red.prompt = "crimson red fire";
    ImageSpec blue = red;
    blue.prompt = "blue ocean sapphire";
    const Mean r = MeanColour(RenderImage(red));
    const Mean b = MeanColour(RenderImage(blue));
    EXPECT_GT(r.r - r.b, 20) << r.r << " " << r.g << " " << r.b;
    EXPECT_GT(b.b - b.r, 20) << b.r << " " << b.g << " " << b.b;
}

TEST(RenderImageTest, EmptyAndNonAsciiPromptsWork) {
    ImageSpec spec = Spec(32, 32);
    spec.prompt = "";
    EXPECT_EQ(ProbeMedia(RenderImage(spec)).width, 32);
    spec.prompt = "東京の夜景、ネオン";
    EXPECT_EQ(ProbeMedia(RenderImage(spec)).width, 32);
}

TEST(RenderImageTest, ReferencesPullColoursTowardsThem) {
    const ImageSpec plain = Spec(128, 96);
    ImageSpec green = plain;
    green.references = {SolidPng(16, 16, 0, 220, 0)};
    ImageSpec magenta = plain;
    magenta.references = {SolidPng(16, 16, 230, 0, 230)};

    const std::string plain_png = RenderImage(plain);
    const std::string green_png = RenderImage(green);
    EXPECT_NE(plain_png, green_png);
    EXPECT_EQ(green_png, RenderImage(green));

    const Mean base = MeanColour(plain_png);
    const Mean g = MeanColour(green_png);
    const Mean m = MeanColour(RenderImage(magenta));
    EXPECT_GT(g.g - (g.r + g.b) / 2, base.g - (base.r + base.b) / 2 + 20);
    EXPECT_GT((m.r + m.b) / 2 - m.g, (base.r + base.b) / 2 - base.g + 20);
}

TEST(RenderImageTest, JpegAndPngReferencesAreAccepted) {
    ImageSpec spec = Spec(64, 64);
    spec.references = {RenderImage(Spec(40, 30, ImageFormat::kJpeg)), RenderImage(Spec(30, 40))};
    const std::string out = RenderImage(spec);
    EXPECT_EQ(ProbeMedia(out).width, 64);
    EXPECT_NE(out, RenderImage(Spec(64, 64)));
}

TEST(RenderImageTest, UndecodableReferenceThrows) {
    ImageSpec spec = Spec(64, 64);
    spec.references = {SolidPng(8, 8, 1, 2, 3), "this is not a picture at all"};
    try {
        RenderImage(spec);
        FAIL() << "expected MediaError";
    } catch (const MediaError& e) {
        EXPECT_THAT(e.what(), StartsWith("reference image 2 "));
    }
    spec.references = {""};
    EXPECT_THROW(RenderImage(spec), MediaError);
}

TEST(RenderImageTest, SizeOutsideLimitsThrows) {
    for (const Size size :
         {Size{0, 10}, Size{10, 0}, Size{-1, 10}, Size{8001, 10}, Size{10, 8001}}) {
        try {
            RenderImage(Spec(size.width, size.height));
            ADD_FAILURE() << size.width << "x" << size.height << " did not throw";
        } catch (const MediaError& e) {
            EXPECT_THAT(e.what(), HasSubstr("outside 1..8000"));
        }
    }
}

}  // namespace
}  // namespace genhost::media
