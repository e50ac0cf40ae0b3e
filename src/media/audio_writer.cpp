// AudioWriter: float PCM → WAV (s16le), MP3 (libmp3lame) or Ogg Opus (libopus) with an exact
// sample count.

extern "C" {
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
}

#include <algorithm>
#include <cmath>
#include <string>

#include "av_handles.hpp"
#include "genhost/media/audio.hpp"
#include "memory_io.hpp"

namespace genhost::media {
namespace {

// Frames per encoded block for PCM (whose encoder takes any size).
constexpr int kPcmBlock = 1024;

struct SwrSettings {
    int in_rate;
    int out_rate;
    int channels;
};

SwrContextPtr MakeResampler(const SwrSettings& s) {
    AVChannelLayout layout{};
    av_channel_layout_default(&layout, s.channels);
    SwrContext* raw = nullptr;
    CheckAv(swr_alloc_set_opts2(&raw, &layout, AV_SAMPLE_FMT_FLT, s.out_rate, &layout,
                                AV_SAMPLE_FMT_FLT, s.in_rate, 0, nullptr),
            "swr_alloc_set_opts2");
    SwrContextPtr swr(raw);
    CheckAv(swr_init(swr.get()), "swr_init");
    return swr;
}

}  // namespace

AudioFormat ParseAudioFormat(std::string_view name) {
    if (name == "wav") return AudioFormat::kWav;
    if (name == "mp3") return AudioFormat::kMp3;
    if (name == "ogg_opus") return AudioFormat::kOggOpus;
    throw MediaError("unknown audio format " + std::string(name));
}

std::string_view AudioFormatExtension(AudioFormat format) {
    switch (format) {
        case AudioFormat::kWav:
            return "wav";
        case AudioFormat::kMp3:
            return "mp3";
        case AudioFormat::kOggOpus:
            return "ogg";
    }
    return "bin";
}

struct AudioWriter::Impl {
    AudioEncoding encoding;
    int input_rate = 0;
    int codec_rate = 0;  // the rate the encoder runs at
    int channels = 1;
    std::int64_t frames_in = 0;
    std::int64_t frames_staged_total = 0;  // frames that reached `staged` (after resampling)
    std::int64_t frames_sent = 0;          // frames given to the encoder
    bool finished = false;

    // Declaration order matters for destruction: the muxer goes before the I/O it writes to.
    std::unique_ptr<MemoryOutput> memory;
    AVIOContext* file_io = nullptr;
    OutputFormatPtr muxer;
    CodecContextPtr encoder;
    SwrContextPtr swr;
    AVStream* stream = nullptr;
    FramePtr frame;
    PacketPtr packet;
    std::vector<float> staged;  // interleaved, at codec_rate
    std::vector<float> scratch;

    ~Impl() {
        muxer.reset();
        if (file_io != nullptr) avio_closep(&file_io);
    }

    void Open(const std::string& path);
    void Stage(const float* samples, std::int64_t frames);
    int Convert(const std::uint8_t** in, int frames);
    void FlushResampler();
    void EncodeStaged(bool final);
    void SendFrame(const float* samples, int frames);
    void Drain();
};

void AudioWriter::Impl::Open(const std::string& path) {
    channels = encoding.channels;
    if (channels < 1 || channels > 2) throw MediaError("audio writer: 1 or 2 channels");
    if (input_rate < 1000 || input_rate > 384000) throw MediaError("audio writer: bad input rate");

    const char* muxer_name = "wav";
    const AVCodec* codec = nullptr;
    AVSampleFormat sample_format = AV_SAMPLE_FMT_S16;
    codec_rate = encoding.sample_rate;
    switch (encoding.format) {
        case AudioFormat::kWav:
            codec = avcodec_find_encoder(AV_CODEC_ID_PCM_S16LE);
            break;
        case AudioFormat::kMp3:
            muxer_name = "mp3";
            codec = avcodec_find_encoder_by_name("libmp3lame");
            sample_format = AV_SAMPLE_FMT_FLTP;
            break;
        case AudioFormat::kOggOpus:
            muxer_name = "ogg";
            codec = avcodec_find_encoder_by_name("libopus");
            sample_format = AV_SAMPLE_FMT_FLT;
            codec_rate = 48000;
            break;
    }
    if (codec == nullptr) throw MediaError(std::string("no encoder for ") + muxer_name);
    if (codec_rate < 8000 || codec_rate > 192000) throw MediaError("audio writer: bad rate");

    AVFormatContext* raw = nullptr;
    CheckAv(avformat_alloc_output_context2(&raw, nullptr, muxer_name, nullptr),
            "avformat_alloc_output_context2");
    muxer.reset(raw);
    // Bit-exact: no library version strings, and a fixed Ogg stream serial number.
    muxer->flags |= AVFMT_FLAG_BITEXACT;

    encoder = MakeCodecContext(codec);
    encoder->sample_rate = codec_rate;
    encoder->sample_fmt = sample_format;
    av_channel_layout_default(&encoder->ch_layout, channels);
    encoder->time_base = AVRational{1, codec_rate};
    encoder->flags |= AV_CODEC_FLAG_BITEXACT;
    encoder->thread_count = 1;
    if (encoding.format == AudioFormat::kMp3) {
        encoder->bit_rate = encoding.bitrate > 0 ? encoding.bitrate : 128000;
    } else if (encoding.format == AudioFormat::kOggOpus) {
        encoder->bit_rate = encoding.bitrate > 0 ? encoding.bitrate : 48000 * channels;
    }
    if (muxer->oformat->flags & AVFMT_GLOBALHEADER) {
        encoder->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    }
    CheckAv(avcodec_open2(encoder.get(), codec, nullptr), "opening the audio encoder");

    stream = avformat_new_stream(muxer.get(), nullptr);
    if (stream == nullptr) throw MediaError("avformat_new_stream failed");
    stream->time_base = encoder->time_base;
    CheckAv(avcodec_parameters_from_context(stream->codecpar, encoder.get()),
            "avcodec_parameters_from_context");
    if (encoding.format == AudioFormat::kOggOpus && stream->codecpar->extradata_size >= 16) {
        // OpusHead bytes 12-15: the input sample rate (little endian), informational only.
        const auto rate = static_cast<std::uint32_t>(encoding.sample_rate);
        std::uint8_t* head = stream->codecpar->extradata;
        head[12] = rate & 0xff;
        head[13] = (rate >> 8) & 0xff;
        head[14] = (rate >> 16) & 0xff;
        head[15] = (rate >> 24) & 0xff;
    }

    if (path.empty()) {
        memory = std::make_unique<MemoryOutput>();
        muxer->pb = memory->Avio();
        muxer->flags |= AVFMT_FLAG_CUSTOM_IO;
    } else {
        // "file:" keeps a path with a colon from being taken for another protocol.
        CheckAv(avio_open2(&file_io, ("file:" + path).c_str(), AVIO_FLAG_WRITE, nullptr, nullptr),
                "opening the output file");
        muxer->pb = file_io;
    }
    for (const auto& [key, value] : encoding.metadata) {
        CheckAv(av_dict_set(&muxer->metadata, key.c_str(), value.c_str(), 0), "av_dict_set");
    }
    CheckAv(avformat_write_header(muxer.get(), nullptr), "writing the audio header");

    if (input_rate != codec_rate) swr = MakeResampler({input_rate, codec_rate, channels});
    frame = MakeFrame();
    packet = MakePacket();
}

void AudioWriter::Impl::Stage(const float* samples, std::int64_t frames) {
    if (!swr) {
        staged.insert(staged.end(), samples, samples + frames * channels);
        frames_staged_total += frames;
        return;
    }
    constexpr std::int64_t kChunk = 8192;
    for (std::int64_t done = 0; done < frames; done += kChunk) {
        const int n = static_cast<int>(std::min(kChunk, frames - done));
        const auto* in = reinterpret_cast<const std::uint8_t*>(samples + done * channels);
        Convert(&in, n);
    }
}

int AudioWriter::Impl::Convert(const std::uint8_t** in, int frames) {
    const int capacity = swr_get_out_samples(swr.get(), frames) + 16;
    scratch.resize(static_cast<std::size_t>(capacity) * channels);
    auto* out = reinterpret_cast<std::uint8_t*>(scratch.data());
    const int got = CheckAv(swr_convert(swr.get(), &out, capacity, in, frames), "swr_convert");
    staged.insert(staged.end(), scratch.begin(), scratch.begin() + got * channels);
    frames_staged_total += got;
    return got;
}

void AudioWriter::Impl::FlushResampler() {
    while (Convert(nullptr, 0) > 0) {
    }
}

void AudioWriter::Impl::SendFrame(const float* samples, int frames) {
    frame->nb_samples = frames;
    frame->format = encoder->sample_fmt;
    frame->sample_rate = codec_rate;
    CheckAv(av_channel_layout_copy(&frame->ch_layout, &encoder->ch_layout),
            "av_channel_layout_copy");
    CheckAv(av_frame_get_buffer(frame.get(), 0), "av_frame_get_buffer");
    switch (encoder->sample_fmt) {
        case AV_SAMPLE_FMT_S16: {
            auto* out = reinterpret_cast<std::int16_t*>(frame->data[0]);
            for (int i = 0; i < frames * channels; ++i) {
                const float v = std::clamp(samples[i], -1.0f, 1.0f) * 32767.0f;
                out[i] = static_cast<std::int16_t>(std::lrintf(v));
            }
            break;
        }
        case AV_SAMPLE_FMT_FLTP:
            for (int c = 0; c < channels; ++c) {
                auto* out = reinterpret_cast<float*>(frame->data[c]);
                for (int i = 0; i < frames; ++i) out[i] = samples[i * channels + c];
            }
            break;
        default: {
            auto* out = reinterpret_cast<float*>(frame->data[0]);
            std::copy(samples, samples + frames * channels, out);
            break;
        }
    }
    frame->pts = frames_sent;
    frames_sent += frames;
    CheckAv(avcodec_send_frame(encoder.get(), frame.get()), "encoding audio");
    av_frame_unref(frame.get());
    Drain();
}

void AudioWriter::Impl::EncodeStaged(bool final) {
    const int block = encoder->frame_size > 0 ? encoder->frame_size : kPcmBlock;
    std::size_t offset = 0;
    const std::size_t per = static_cast<std::size_t>(block) * channels;
    while (staged.size() - offset >= per) {
        SendFrame(staged.data() + offset, block);
        offset += per;
    }
    if (final && staged.size() > offset) {
        SendFrame(staged.data() + offset, static_cast<int>((staged.size() - offset) / channels));
        offset = staged.size();
    }
    staged.erase(staged.begin(), staged.begin() + static_cast<std::ptrdiff_t>(offset));
}

void AudioWriter::Impl::Drain() {
    for (;;) {
        const int rc = avcodec_receive_packet(encoder.get(), packet.get());
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
        CheckAv(rc, "receiving an audio packet");
        av_packet_rescale_ts(packet.get(), encoder->time_base, stream->time_base);
        packet->stream_index = stream->index;
        CheckAv(av_interleaved_write_frame(muxer.get(), packet.get()), "writing audio");
    }
}

AudioWriter::AudioWriter(const std::string& path, const AudioEncoding& encoding, int input_rate)
    : impl_(std::make_unique<Impl>()) {
    impl_->encoding = encoding;
    impl_->input_rate = input_rate;
    impl_->Open(path);
}

AudioWriter::~AudioWriter() = default;

void AudioWriter::Write(const float* samples, std::int64_t frames) {
    if (impl_->finished) throw MediaError("audio writer: write after Finish");
    if (frames <= 0) return;
    impl_->frames_in += frames;
    impl_->Stage(samples, frames);
    impl_->EncodeStaged(false);
}

void AudioWriter::Finish() {
    Impl& w = *impl_;
    if (w.finished) return;
    w.finished = true;
    if (w.swr) w.FlushResampler();
    // The exact length: rounding the rate conversion, whatever the resampler's tail added.
    const std::int64_t wanted =
        w.swr ? (w.frames_in * w.codec_rate + w.input_rate / 2) / w.input_rate : w.frames_in;
    const std::int64_t have =
        w.frames_sent + static_cast<std::int64_t>(w.staged.size()) / w.channels;
    if (have > wanted) {
        const std::int64_t drop = std::min<std::int64_t>(
            have - wanted, static_cast<std::int64_t>(w.staged.size()) / w.channels);
        w.staged.resize(w.staged.size() - static_cast<std::size_t>(drop * w.channels));
    } else if (have < wanted) {
        w.staged.resize(w.staged.size() + static_cast<std::size_t>((wanted - have) * w.channels),
                        0.0f);
    }
    w.EncodeStaged(true);
    CheckAv(avcodec_send_frame(w.encoder.get(), nullptr), "flushing the audio encoder");
    w.Drain();
    CheckAv(av_write_trailer(w.muxer.get()), "writing the audio trailer");
    if (w.file_io != nullptr) {
        w.muxer.reset();
        CheckAv(avio_closep(&w.file_io), "closing the output file");
    }
}

std::string AudioWriter::TakeBytes() {
    if (!impl_->memory) throw MediaError("audio writer: not an in-memory writer");
    if (!impl_->finished) Finish();
    return impl_->memory->Take();
}

std::string WriteAudio(const AudioBuffer& audio, const AudioEncoding& encoding,
                       const std::string& path) {
    if (audio.channels != encoding.channels) {
        throw MediaError("audio writer: channel count differs from the encoding");
    }
    AudioWriter writer(path, encoding, audio.sample_rate);
    constexpr std::int64_t kChunk = 65536;
    for (std::int64_t done = 0; done < audio.frames(); done += kChunk) {
        writer.Write(audio.samples.data() + done * audio.channels,
                     std::min(kChunk, audio.frames() - done));
    }
    writer.Finish();
    return path.empty() ? writer.TakeBytes() : std::string();
}

}  // namespace genhost::media
