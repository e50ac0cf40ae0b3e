// Tests for ProbeMedia: stills, audio and video made in memory with libav, and bad input that
// must fail with MediaError quickly instead of crashing or hanging.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

extern "C" {
#include <libavutil/channel_layout.h>
}

#include "../../src/media/av_handles.hpp"
#include "../../src/media/memory_io.hpp"
#include "../../src/media/prng.hpp"
#include "../../src/media/scene.hpp"
#include "genhost/media/image.hpp"

namespace genhost::media {
namespace {

using ::testing::HasSubstr;

std::string Png(int width, int height) {
    ImageSpec spec;
    spec.width = width;
    spec.height = height;
    spec.seed = 7;
    spec.prompt = "probe me";
    return RenderImage(spec);
}

// Wav is `seconds` of a 440 Hz square-ish tone, 16-bit, muxed by libavformat's wav muxer into a
// MemoryOutput (which it seeks back in to patch the RIFF sizes).
std::string Wav(int sample_rate, int channels, double seconds) {
    const AVOutputFormat* wav = av_guess_format("wav", nullptr, nullptr);
    AVFormatContext* raw = nullptr;
    CheckAv(avformat_alloc_output_context2(&raw, wav, nullptr, nullptr), "alloc output");
    OutputFormatPtr muxer(raw);
    MemoryOutput output;
    muxer->pb = output.Avio();
    muxer->flags |= AVFMT_FLAG_CUSTOM_IO;
    AVStream* stream = avformat_new_stream(muxer.get(), nullptr);
    stream->codecpar->codec_type = AVMEDIA_TYPE_AUDIO;
    stream->codecpar->codec_id = AV_CODEC_ID_PCM_S16LE;
    stream->codecpar->sample_rate = sample_rate;
    av_channel_layout_default(&stream->codecpar->ch_layout, channels);
    stream->codecpar->bits_per_coded_sample = 16;
    stream->codecpar->block_align = 2 * channels;
    stream->codecpar->bit_rate = 16LL * sample_rate * channels;
    stream->time_base = AVRational{1, sample_rate};
    CheckAv(avformat_write_header(muxer.get(), nullptr), "write header");

    const int samples = static_cast<int>(seconds * sample_rate);
    std::string pcm;
    for (int i = 0; i < samples; ++i) {
        const std::int16_t v = ((i * 440 / sample_rate) % 2 == 0) ? 8000 : -8000;
        for (int c = 0; c < channels; ++c) {
            pcm.push_back(static_cast<char>(v & 0xff));
            pcm.push_back(static_cast<char>((v >> 8) & 0xff));
        }
    }
    PacketPtr packet = MakePacket();
    CheckAv(av_new_packet(packet.get(), static_cast<int>(pcm.size())), "new packet");
    std::copy(pcm.begin(), pcm.end(), packet->data);
    packet->stream_index = 0;
    packet->pts = packet->dts = 0;
    packet->duration = samples;
    av_packet_rescale_ts(packet.get(), AVRational{1, sample_rate}, stream->time_base);
    CheckAv(av_interleaved_write_frame(muxer.get(), packet.get()), "write frame");
    CheckAv(av_write_trailer(muxer.get()), "write trailer");
    return output.Take();
}

// Mp4 is `frames` frames of an animated Scene at 24 fps, encoded with the native MPEG-4 Part 2
// encoder, tagged BT.2020 / PQ when `hdr_tags`, muxed into MP4 through a MemoryOutput (the muxer
// seeks back to fix the mdat size).
std::string Mp4(int width, int height, int frames, bool hdr_tags = false) {
    const AVOutputFormat* mp4 = av_guess_format("mp4", nullptr, nullptr);
    AVFormatContext* raw = nullptr;
    CheckAv(avformat_alloc_output_context2(&raw, mp4, nullptr, nullptr), "alloc output");
    OutputFormatPtr muxer(raw);
    MemoryOutput output;
    muxer->pb = output.Avio();
    muxer->flags |= AVFMT_FLAG_CUSTOM_IO;

    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    CodecContextPtr encoder = MakeCodecContext(codec);
    encoder->width = width;
    encoder->height = height;
    encoder->pix_fmt = AV_PIX_FMT_YUV420P;
    encoder->time_base = AVRational{1, 24};
    encoder->framerate = AVRational{24, 1};
    encoder->gop_size = 12;
    encoder->thread_count = 1;
    if (hdr_tags) {
        encoder->color_primaries = AVCOL_PRI_BT2020;
        encoder->color_trc = AVCOL_TRC_SMPTE2084;
        encoder->colorspace = AVCOL_SPC_BT2020_NCL;
    }
    if ((muxer->oformat->flags & AVFMT_GLOBALHEADER) != 0) {
        encoder->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    }
    CheckAv(avcodec_open2(encoder.get(), codec, nullptr), "open encoder");
    AVStream* stream = avformat_new_stream(muxer.get(), nullptr);
    CheckAv(avcodec_parameters_from_context(stream->codecpar, encoder.get()), "parameters");
    stream->time_base = encoder->time_base;
    stream->avg_frame_rate = encoder->framerate;
    CheckAv(avformat_write_header(muxer.get(), nullptr), "write header");

    const Scene scene = ComposeScene(1, "test pattern");
    FramePtr rgb = MakeVideoFrame(AV_PIX_FMT_RGB24, width, height);
    SwsContextPtr scaler =
        MakeScaler(width, height, AV_PIX_FMT_RGB24, width, height, AV_PIX_FMT_YUV420P, SWS_BICUBIC);
    PacketPtr packet = MakePacket();
    const auto drain = [&]() {
        for (;;) {
            const int rc = avcodec_receive_packet(encoder.get(), packet.get());
            if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) {
                return;
            }
            CheckAv(rc, "receive packet");
            packet->duration = 1;
            av_packet_rescale_ts(packet.get(), encoder->time_base, stream->time_base);
            packet->stream_index = stream->index;
            CheckAv(av_interleaved_write_frame(muxer.get(), packet.get()), "write frame");
        }
    };
    for (int i = 0; i < frames; ++i) {
        PaintScene(scene, i / 24.0, width, height, rgb->data[0], rgb->linesize[0]);
        FramePtr yuv = MakeVideoFrame(AV_PIX_FMT_YUV420P, width, height);
        sws_scale(scaler.get(), rgb->data, rgb->linesize, 0, height, yuv->data, yuv->linesize);
        yuv->pts = i;
        CheckAv(avcodec_send_frame(encoder.get(), yuv.get()), "send frame");
        drain();
    }
    CheckAv(avcodec_send_frame(encoder.get(), nullptr), "flush");
    drain();
    CheckAv(av_write_trailer(muxer.get()), "write trailer");
    return output.Take();
}

TEST(ProbeMediaTest, PngStill) {
    const MediaInfo info = ProbeMedia(Png(300, 200));
    EXPECT_EQ(info.container, "png_pipe");
    EXPECT_EQ(info.video_codec, "png");
    EXPECT_EQ(info.width, 300);
    EXPECT_EQ(info.height, 200);
    EXPECT_EQ(info.pixel_format, "rgb24");
    EXPECT_EQ(info.duration_seconds, 0);
    EXPECT_EQ(info.frame_rate, 0);
    EXPECT_TRUE(info.audio_codec.empty());
    EXPECT_EQ(info.sample_rate, 0);
    EXPECT_EQ(info.channels, 0);
}

TEST(ProbeMediaTest, WavAudio) {
    const std::string wav = Wav(22050, 2, 0.5);
    ASSERT_EQ(wav.substr(0, 4), "RIFF");
    // The muxer seeked back and patched the RIFF size: total size minus 8.
    const auto riff_size = static_cast<std::uint32_t>(
        static_cast<std::uint8_t>(wav[4]) | static_cast<std::uint8_t>(wav[5]) << 8 |
        static_cast<std::uint8_t>(wav[6]) << 16 | static_cast<std::uint8_t>(wav[7]) << 24);
    EXPECT_EQ(riff_size, wav.size() - 8);

    const MediaInfo info = ProbeMedia(wav);
    EXPECT_EQ(info.container, "wav");
    EXPECT_EQ(info.audio_codec, "pcm_s16le");
    EXPECT_EQ(info.sample_rate, 22050);
    EXPECT_EQ(info.channels, 2);
    EXPECT_NEAR(info.duration_seconds, 0.5, 0.01);
    EXPECT_TRUE(info.video_codec.empty());
    EXPECT_EQ(info.width, 0);
}

TEST(ProbeMediaTest, Mp4VideoWithColourTags) {
    const std::string mp4 = Mp4(160, 90, 48, true);
    const MediaInfo info = ProbeMedia(mp4);
    EXPECT_EQ(info.container, "mov,mp4,m4a,3gp,3g2,mj2");
    EXPECT_EQ(info.video_codec, "mpeg4");
    EXPECT_EQ(info.width, 160);
    EXPECT_EQ(info.height, 90);
    EXPECT_EQ(info.pixel_format, "yuv420p");
    EXPECT_NEAR(info.frame_rate, 24.0, 0.01);
    EXPECT_NEAR(info.duration_seconds, 2.0, 0.05);
    EXPECT_EQ(info.color_transfer, "smpte2084");
    EXPECT_EQ(info.color_primaries, "bt2020");
    EXPECT_TRUE(info.audio_codec.empty());
}

TEST(ProbeMediaTest, UntaggedColourIsEmpty) {
    const MediaInfo info = ProbeMedia(Mp4(64, 64, 2));
    EXPECT_EQ(info.color_transfer, "");
    EXPECT_EQ(info.color_primaries, "");
    const MediaInfo jpeg = ProbeMedia([] {
        ImageSpec spec;
        spec.width = 16;
        spec.height = 16;
        spec.format = ImageFormat::kJpeg;
        return RenderImage(spec);
    }());
    EXPECT_EQ(jpeg.color_transfer, "");
    EXPECT_EQ(jpeg.color_primaries, "");
}

TEST(ProbeMediaTest, EmptyInputThrows) { EXPECT_THROW(ProbeMedia(""), MediaError); }

TEST(ProbeMediaTest, TextThrows) {
    try {
        ProbeMedia("hello, this is plain text and not a media file at all\n");
        FAIL() << "expected MediaError";
    } catch (const MediaError& e) {
        EXPECT_THAT(e.what(), HasSubstr("not a readable media file"));
    }
}

TEST(ProbeMediaTest, RandomBytesThrow) {
    Xoshiro256 rng(99);
    for (const std::size_t size : {1u, 7u, 100u, 4096u, 300000u}) {
        std::string bytes(size, '\0');
        for (char& c : bytes) {
            c = static_cast<char>(rng.Next() & 0xff);
        }
        EXPECT_THROW(ProbeMedia(bytes), MediaError) << size << " bytes";
    }
}

TEST(ProbeMediaTest, TruncatedPngThrows) {
    const std::string png = Png(256, 256);
    // Cut inside the signature, inside IHDR, and at several points of the image data.
    for (const std::size_t keep : {std::size_t{4}, std::size_t{20}, std::size_t{60}, png.size() / 4,
                                   png.size() / 2, png.size() - 20}) {
        EXPECT_THROW(ProbeMedia(png.substr(0, keep)), MediaError) << "kept " << keep;
    }
}

TEST(ProbeMediaTest, PngWithoutIendStillDecodes) {
    // All image data is present; only the 12-byte IEND chunk is missing.
    const std::string png = Png(64, 64);
    EXPECT_EQ(ProbeMedia(png.substr(0, png.size() - 12)).width, 64);
}

TEST(ProbeMediaTest, CorruptedPngThrows) {
    std::string png = Png(128, 128);
    Xoshiro256 rng(5);
    for (std::size_t i = 60; i < png.size() - 12; i += 7) {
        png[i] = static_cast<char>(rng.Next() & 0xff);
    }
    EXPECT_THROW(ProbeMedia(png), MediaError);
}

TEST(ProbeMediaTest, PlaylistsCannotOpenOtherResources) {
    const std::string m3u8 =
        "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\n"
        "file:///etc/hostname\n#EXT-X-ENDLIST\n";
    EXPECT_THROW(ProbeMedia(m3u8), MediaError);
    const std::string concat = "ffconcat version 1.0\nfile /etc/hostname\n";
    EXPECT_THROW(ProbeMedia(concat), MediaError);
}

TEST(ProbeMediaTest, TruncatedMp4Throws) {
    const std::string mp4 = Mp4(64, 64, 24);
    // The moov atom is at the end, so every cut loses it.
    for (const std::size_t keep : {std::size_t{8}, std::size_t{100}, mp4.size() / 2}) {
        EXPECT_THROW(ProbeMedia(mp4.substr(0, keep)), MediaError) << "kept " << keep;
    }
}

}  // namespace
}  // namespace genhost::media
