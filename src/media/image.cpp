// RenderImage: a Scene painted into an RGB24 frame and encoded with libavcodec's PNG encoder, or
// converted to full-range 4:2:0 by libswscale and encoded with the MJPEG encoder.

#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "av_handles.hpp"
#include "decode.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/video.hpp"
#include "memory_io.hpp"
#include "scene.hpp"

namespace genhost::media {
namespace {

constexpr int kMaxDimension = 8000;
// MJPEG quantiser scale: 2 is the finest, 31 the coarsest; 3 is roughly libjpeg quality 90.
constexpr int kJpegQscale = 3;
// Reference pictures are reduced to this many pixels square before their colours are measured.
constexpr int kToneSize = 32;
// swscale flags for everything here: exact integer paths, so output does not depend on the CPU's
// SIMD features, and rounding that is accurate rather than fast.
constexpr int kSwsExact = SWS_ACCURATE_RND | SWS_BITEXACT;

// EncodeStill sends one frame to an opened encoder, drains it and returns the concatenated
// packets (a still-image encoder makes exactly one).
std::string EncodeStill(AVCodecContext* encoder, AVFrame* frame) {
    CheckAv(avcodec_send_frame(encoder, frame), "encoding the picture");
    CheckAv(avcodec_send_frame(encoder, nullptr), "flushing the encoder");
    std::string bytes;
    PacketPtr packet = MakePacket();
    for (;;) {
        const int rc = avcodec_receive_packet(encoder, packet.get());
        if (rc == AVERROR_EOF) {
            break;
        }
        CheckAv(rc, "receiving the encoded picture");
        bytes.append(reinterpret_cast<const char*>(packet->data),
                     static_cast<std::size_t>(packet->size));
        av_packet_unref(packet.get());
    }
    if (bytes.empty()) {
        throw MediaError("the encoder produced no data");
    }
    return bytes;
}

// ConfigureEncoder sets what every still encoder here shares: size, no threads (one frame; keeps
// the output independent of the machine), bit-exact mode (no encoder version string in the
// file), square pixels.
void ConfigureEncoder(AVCodecContext* encoder, const AVFrame& frame, AVPixelFormat format) {
    encoder->width = frame.width;
    encoder->height = frame.height;
    encoder->pix_fmt = format;
    encoder->time_base = AVRational{1, 25};
    encoder->thread_count = 1;
    encoder->flags |= AV_CODEC_FLAG_BITEXACT;
    // Square pixels: PNG's pHYs chunk and JPEG's JFIF segment carry this (the MJPEG encoder omits
    // JFIF without it, and the PNG encoder would write a 0:1 aspect).
    encoder->sample_aspect_ratio = AVRational{1, 1};
}

std::string EncodePng(AVFrame* rgb) {
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    if (codec == nullptr) {
        throw MediaError("libavcodec has no PNG encoder");
    }
    CodecContextPtr encoder = MakeCodecContext(codec);
    ConfigureEncoder(encoder.get(), *rgb, AV_PIX_FMT_RGB24);
    // Tagging the picture sRGB makes the encoder write an sRGB chunk.
    encoder->color_primaries = AVCOL_PRI_BT709;
    encoder->color_trc = AVCOL_TRC_IEC61966_2_1;
    encoder->colorspace = AVCOL_SPC_RGB;
    encoder->color_range = AVCOL_RANGE_JPEG;
    rgb->color_primaries = encoder->color_primaries;
    rgb->color_trc = encoder->color_trc;
    rgb->colorspace = encoder->colorspace;
    rgb->color_range = encoder->color_range;
    // The encoder's defaults: no prediction, zlib's default level. Measured on five 1920x1080
    // scenes (docs/performance.md): "up" prediction made three files 4-14% smaller and two 2% and
    // 11% larger, but zlib took 2.5-3.5x as long on its output (132-211 ms against
    // 41-67 ms), because the smooth gradients turn into long runs that make its match search
    // slow; zlib level 5 with "up" is still slower than level 6 without.
    CheckAv(avcodec_open2(encoder.get(), codec, nullptr), "opening the PNG encoder");
    rgb->pts = 0;
    return EncodeStill(encoder.get(), rgb);
}

std::string EncodeJpeg(FramePtr rgb) {
    const int width = rgb->width;
    const int height = rgb->height;
    // JFIF is BT.601 full range. swscale is asked for plain yuv420p with a full-range output
    // (its yuvj formats are deprecated); the buffer is then labelled yuvj420p, which has the same
    // layout, because that is the format the MJPEG encoder takes for full range.
    FramePtr yuv = MakeVideoFrame(AV_PIX_FMT_YUV420P, width, height);
    {
        SwsContextPtr scaler = MakeScaler(width, height, AV_PIX_FMT_RGB24, width, height,
                                          AV_PIX_FMT_YUV420P, SWS_BICUBIC | kSwsExact);
        const int* bt601 = sws_getCoefficients(SWS_CS_ITU601);
        CheckAv(sws_setColorspaceDetails(scaler.get(), bt601, 1, bt601, 1, 0, 1 << 16, 1 << 16),
                "sws_setColorspaceDetails");
        const int rows =
            sws_scale(scaler.get(), rgb->data, rgb->linesize, 0, height, yuv->data, yuv->linesize);
        if (rows != height) {
            throw MediaError("swscale converted " + std::to_string(rows) + " of " +
                             std::to_string(height) + " rows");
        }
    }
    rgb.reset();  // the RGB picture is no longer needed; keep peak memory to one frame or so
    yuv->format = AV_PIX_FMT_YUVJ420P;
    yuv->color_range = AVCOL_RANGE_JPEG;
    yuv->colorspace = AVCOL_SPC_BT470BG;

    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
    if (codec == nullptr) {
        throw MediaError("libavcodec has no MJPEG encoder");
    }
    CodecContextPtr encoder = MakeCodecContext(codec);
    ConfigureEncoder(encoder.get(), *yuv, AV_PIX_FMT_YUVJ420P);
    encoder->color_range = AVCOL_RANGE_JPEG;
    encoder->colorspace = AVCOL_SPC_BT470BG;
    encoder->flags |= AV_CODEC_FLAG_QSCALE;
    // The portable integer DCT rather than whichever SIMD one the CPU offers, so the bytes do not
    // depend on the machine.
    encoder->dct_algo = FF_DCT_INT;
    encoder->global_quality = kJpegQscale * FF_QP2LAMBDA;
    CheckAv(avcodec_open2(encoder.get(), codec, nullptr), "opening the MJPEG encoder");
    yuv->quality = encoder->global_quality;
    yuv->pts = 0;
    return EncodeStill(encoder.get(), yuv.get());
}

// ReferenceTones decodes one reference picture and measures its colours: the two most common
// colour regions (a 3-bit-per-channel histogram over a 32x32 reduction) and the average.
std::vector<Rgb> ReferenceTones(const std::string& bytes) {
    MemoryInput input(bytes);
    const int video = FindVideoStream(input.Format());
    if (video < 0) {
        throw MediaError("it has no picture");
    }
    const FramePtr frame = DecodeFirstVideoFrame(input.Format(), video);

    bool full_range = false;
    const AVPixelFormat source = SwsFormat(static_cast<AVPixelFormat>(frame->format), full_range);
    full_range = full_range || frame->color_range == AVCOL_RANGE_JPEG;
    SwsContextPtr scaler = MakeScaler(frame->width, frame->height, source, kToneSize, kToneSize,
                                      AV_PIX_FMT_RGB24, SWS_AREA | kSwsExact);
    const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(source);
    if (desc != nullptr && (desc->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL)) == 0) {
        // YUV and grey sources: say which matrix and range they use (RGB ones have neither).
        const int* matrix = sws_getCoefficients(
            frame->colorspace == AVCOL_SPC_BT709 ? SWS_CS_ITU709 : SWS_CS_ITU601);
        const int* rgb_matrix = sws_getCoefficients(SWS_CS_ITU601);
        CheckAv(sws_setColorspaceDetails(scaler.get(), matrix, full_range ? 1 : 0, rgb_matrix, 1, 0,
                                         1 << 16, 1 << 16),
                "sws_setColorspaceDetails");
    }
    const FramePtr small = MakeVideoFrame(AV_PIX_FMT_RGB24, kToneSize, kToneSize);
    if (sws_scale(scaler.get(), frame->data, frame->linesize, 0, frame->height, small->data,
                  small->linesize) != kToneSize) {
        throw MediaError("swscale could not reduce the picture");
    }

    constexpr std::size_t kBins = std::size_t{8} * 8 * 8;
    std::vector<int> count(kBins, 0);
    std::vector<Rgb> sum(kBins);
    Rgb total;
    for (int y = 0; y < kToneSize; ++y) {
        const std::uint8_t* p =
            small->data[0] + static_cast<std::ptrdiff_t>(y) * small->linesize[0];
        for (int x = 0; x < kToneSize; ++x, p += 3) {
            const auto bin =
                static_cast<std::size_t>(((p[0] >> 5) << 6) | ((p[1] >> 5) << 3) | (p[2] >> 5));
            ++count[bin];
            sum[bin].r += p[0];
            sum[bin].g += p[1];
            sum[bin].b += p[2];
            total.r += p[0];
            total.g += p[1];
            total.b += p[2];
        }
    }
    // The two fullest bins; ties go to the lower bin, so the choice is deterministic.
    std::size_t first = 0;
    std::size_t second = kBins;  // none yet
    for (std::size_t bin = 1; bin < kBins; ++bin) {
        if (count[bin] > count[first]) {
            second = first;
            first = bin;
        } else if (count[bin] > 0 && (second == kBins || count[bin] > count[second])) {
            second = bin;
        }
    }
    const auto bin_mean = [&](std::size_t bin) {
        const double n = count[bin] * 255.0;
        return Rgb{sum[bin].r / n, sum[bin].g / n, sum[bin].b / n};
    };
    const double pixels = static_cast<double>(kToneSize) * kToneSize * 255.0;
    const Rgb average{total.r / pixels, total.g / pixels, total.b / pixels};
    const Rgb dominant = bin_mean(first);
    return {dominant, average, second != kBins && count[second] > 0 ? bin_mean(second) : dominant};
}

}  // namespace

std::string RenderImage(const ImageSpec& spec) {
    if (spec.width < 1 || spec.width > kMaxDimension || spec.height < 1 ||
        spec.height > kMaxDimension) {
        throw MediaError("image size " + std::to_string(spec.width) + "x" +
                         std::to_string(spec.height) + " is outside 1..8000 per side");
    }
    std::vector<Rgb> tones;
    for (std::size_t i = 0; i < spec.references.size(); ++i) {
        try {
            const std::vector<Rgb> t = ReferenceTones(spec.references[i]);
            tones.insert(tones.end(), t.begin(), t.end());
        } catch (const MediaError& e) {
            throw MediaError("reference image " + std::to_string(i + 1) +
                             " is not a decodable picture: " + e.what());
        }
    }

    const Scene scene = ComposeScene(spec.seed, spec.prompt, tones);
    FramePtr rgb = MakeVideoFrame(AV_PIX_FMT_RGB24, spec.width, spec.height);
    PaintScene(scene, 0.0, spec.width, spec.height, rgb->data[0], rgb->linesize[0]);
    switch (spec.format) {
        case ImageFormat::kJpeg:
            return EncodeJpeg(std::move(rgb));
        case ImageFormat::kPng:
            break;
    }
    return EncodePng(rgb.get());
}

std::string EncodePicture(const RgbImage& image, ImageFormat format) {
    if (image.width < 1 || image.width > kMaxDimension || image.height < 1 ||
        image.height > kMaxDimension) {
        throw MediaError("image size " + std::to_string(image.width) + "x" +
                         std::to_string(image.height) + " is outside 1..8000 per side");
    }
    FramePtr rgb = MakeVideoFrame(AV_PIX_FMT_RGB24, image.width, image.height);
    const std::size_t row_bytes = std::size_t(3) * image.width;
    for (int y = 0; y < image.height; ++y) {
        std::memcpy(rgb->data[0] + std::ptrdiff_t{rgb->linesize[0]} * y, image.Row(y), row_bytes);
    }
    if (format == ImageFormat::kJpeg) return EncodeJpeg(std::move(rgb));
    return EncodePng(rgb.get());
}

}  // namespace genhost::media
