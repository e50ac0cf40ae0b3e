// VideoWriter: RGB frames to MP4 / MOV (libx264, libx265, prores_ks, native AAC) or to zipped
// PNG and OpenEXR sequences.

#include <cstdint>

extern "C" {
#include <libavutil/channel_layout.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <optional>

#include "av_handles.hpp"
#include "genhost/core/cpu.hpp"
#include "genhost/media/video.hpp"
#include "video_internal.hpp"

namespace genhost::media {
namespace {

constexpr int kMaxSide = 8192;
// x264 / x265 settings; bench/video_pipeline_bench.sh runs the ffmpeg command line with the same.
constexpr const char* kX264Preset = "veryfast";
constexpr const char* kX264Crf = "20";
constexpr const char* kX265Preset = "superfast";
constexpr const char* kX265Crf = "20";
// HDR10 static metadata: a BT.2020 / D65 mastering display of 1000 cd/m2 peak and 0.0001
// minimum (x265 units: chromaticity 0.00002, luminance 0.0001 cd/m2), and the content light
// levels the highlight expansion of HdrConverter can reach (MaxCLL 1000; MaxFALL nominal).
constexpr const char* kMasterDisplay =
    "G(8500,39850)B(6550,2300)R(35400,14600)WP(15635,16450)L(10000000,1)";
constexpr const char* kMaxCll = "1000,400";

// How a format is made.
struct Plan {
    bool sequence = false;       // zipped frames rather than a container
    const char* container = "";  // "mp4" or "mov"
    const char* encoder = "";    // libavcodec encoder name
    AVPixelFormat pixel_format = AV_PIX_FMT_NONE;
    const char* profile = nullptr;  // x264 / x265 profile name
    std::optional<HdrTarget> hdr;   // HDR conversion before encoding
    HdrPrimaries primaries = HdrPrimaries::kBt2020;
    AVColorPrimaries color_primaries = AVCOL_PRI_BT709;
    AVColorTransferCharacteristic color_trc = AVCOL_TRC_BT709;
    AVColorSpace colorspace = AVCOL_SPC_BT709;
    bool exr = false;
};

Plan PlanFor(const VideoSpec& spec) {
    Plan p;
    const bool prores_444 = spec.prores_profile == ProresProfile::k4444 ||
                            spec.prores_profile == ProresProfile::k4444Xq;
    switch (spec.format) {
        case VideoFormat::kMp4:
            p.container = "mp4";
            p.encoder = "libx264";
            p.pixel_format = AV_PIX_FMT_YUV420P;
            p.profile = "high";
            break;
        case VideoFormat::kSdrRec709_10bit:
            p.container = "mp4";
            p.encoder = "libx264";
            p.pixel_format = AV_PIX_FMT_YUV420P10LE;
            p.profile = "high10";
            break;
        case VideoFormat::kProres:
        case VideoFormat::kHdrProres:
            p.container = "mov";
            p.encoder = "prores_ks";
            p.pixel_format = prores_444 ? AV_PIX_FMT_YUVA444P10LE : AV_PIX_FMT_YUV422P10LE;
            if (spec.format == VideoFormat::kHdrProres) {
                p.hdr = HdrTarget::kPq;
                p.color_primaries = AVCOL_PRI_BT2020;
                p.color_trc = AVCOL_TRC_SMPTE2084;
                p.colorspace = AVCOL_SPC_BT2020_NCL;
            }
            break;
        case VideoFormat::kHdr10:
        case VideoFormat::kHlg:
        case VideoFormat::kHdrPq12bitMaster: {
            const bool master = spec.format == VideoFormat::kHdrPq12bitMaster;
            p.container = master ? "mov" : "mp4";
            p.encoder = "libx265";
            p.pixel_format = master ? AV_PIX_FMT_YUV444P12LE : AV_PIX_FMT_YUV420P10LE;
            p.profile = master ? "main444-12" : "main10";
            p.hdr = spec.format == VideoFormat::kHlg ? HdrTarget::kHlg : HdrTarget::kPq;
            p.color_primaries = AVCOL_PRI_BT2020;
            p.color_trc =
                spec.format == VideoFormat::kHlg ? AVCOL_TRC_ARIB_STD_B67 : AVCOL_TRC_SMPTE2084;
            p.colorspace = AVCOL_SPC_BT2020_NCL;
            break;
        }
        case VideoFormat::kPngSequence:
            p.sequence = true;
            break;
        case VideoFormat::kHdrPngSequence:
            p.sequence = true;
            p.hdr = HdrTarget::kPq;
            break;
        case VideoFormat::kHdrExrSequence:
            p.sequence = true;
            p.exr = true;
            p.hdr = HdrTarget::kLinear;
            break;
        case VideoFormat::kHdrExrAcescgSequence1_3:
        case VideoFormat::kHdrExrAcescgSequence2_0:
            p.sequence = true;
            p.exr = true;
            p.hdr = HdrTarget::kLinear;
            p.primaries = HdrPrimaries::kAp1;
            break;
    }
    return p;
}

// YuvMatrix holds a Y'CbCr matrix in 16.16 fixed point: luma weights summing to 65536 and the
// chroma divisors 2 (1 - Kb) and 2 (1 - Kr) as reciprocals.
struct YuvMatrix {
    std::int64_t kr, kg, kb;
    std::int64_t cb_scale, cr_scale;  // 65536 / (2 (1 - K))
};
constexpr YuvMatrix MakeMatrix(double kr, double kb) {
    const auto r = static_cast<std::int64_t>(kr * 65536 + 0.5);
    const auto b = static_cast<std::int64_t>(kb * 65536 + 0.5);
    return {r, static_cast<std::int64_t>(65536) - r - b, b,
            static_cast<std::int64_t>(65536 / (2 * (1 - kb)) + 0.5),
            static_cast<std::int64_t>(65536 / (2 * (1 - kr)) + 0.5)};
}
constexpr YuvMatrix kBt709Matrix = MakeMatrix(0.2126, 0.0722);
constexpr YuvMatrix kBt2020Matrix = MakeMatrix(0.2627, 0.0593);

struct YuvLayout {
    int depth = 8;     // bits per sample
    int chroma_w = 0;  // log2 horizontal chroma subsampling
    int chroma_h = 0;  // log2 vertical chroma subsampling
    bool alpha = false;
};

// ConvertRows turns one or two rows of full-range 16-bit R'G'B' (lines[0], lines[1]) into
// limited-range Y'CbCr of out's depth and subsampling (studio swing: Y 16..235, C 16..240 at
// 8 bits, scaled by 2^(depth-8)), chroma as the average of each 2x2 (or 2x1) block. Integer
// arithmetic only: the same input gives the same samples on every machine.
struct LumaWeights {
    std::uint32_t kr, kg, kb, scale, offset;
};

// LumaRow writes one row of luma codes. Integer arithmetic only, so the vector variants the
// compiler makes for newer CPUs give the same samples as the baseline one.
template <typename Sample>
inline void LumaRowAs(const LumaWeights& w, const std::uint16_t* p, int width, Sample* out) {
    for (int x = 0; x < width; ++x) {
        const std::uint32_t e =
            (w.kr * p[3 * x] + w.kg * p[3 * x + 1] + w.kb * p[3 * x + 2] + 32768) >> 16;
        out[x] = static_cast<Sample>(w.offset + ((e * w.scale + 32768) >> 16));
    }
}
GENHOST_CPU_CLONES void LumaRow(const LumaWeights& w, const std::uint16_t* p, int width,
                                std::uint8_t* out) {
    LumaRowAs(w, p, width, out);
}
GENHOST_CPU_CLONES void LumaRow(const LumaWeights& w, const std::uint16_t* p, int width,
                                std::uint16_t* out) {
    LumaRowAs(w, p, width, out);
}

// ChromaW / ChromaH are layout.chroma_w / chroma_h as constants (-1: read from the layout), so
// the common layouts get their block sizes and divisors folded in at compile time.
template <typename Sample, int ChromaW = -1, int ChromaH = -1>
void ConvertRowsAs(const YuvMatrix& m, const YuvLayout& layout, std::uint16_t* const lines[2],
                   int width, int rows, int y, AVFrame* out) {
    const int shift = layout.depth - 8;
    // Code scales with 16 fractional bits: at most half a code of error at 12 bits.
    const std::uint32_t y_scale = ((219u << shift << 16) + 32767) / 65535;
    const std::int64_t c_scale = ((std::int64_t{224} << shift << 16) + 32767) / 65535;
    const std::uint32_t y_offset = 16u << shift;
    const int c_offset = 128 << shift;
    const int max = (1 << layout.depth) - 1;
    const auto kr = static_cast<std::uint32_t>(m.kr);
    const auto kg = static_cast<std::uint32_t>(m.kg);
    const auto kb = static_cast<std::uint32_t>(m.kb);
    const LumaWeights weights{kr, kg, kb, y_scale, y_offset};
    for (int r = 0; r < rows; ++r) {
        auto* luma_row =
            reinterpret_cast<Sample*>(out->data[0] + std::ptrdiff_t(y + r) * out->linesize[0]);
        LumaRow(weights, lines[r], width, luma_row);
        if (layout.alpha) {
            auto* alpha_row =
                reinterpret_cast<Sample*>(out->data[3] + std::ptrdiff_t(y + r) * out->linesize[3]);
            std::fill(alpha_row, alpha_row + width, static_cast<Sample>(max));
        }
    }
    const int chroma_w = ChromaW >= 0 ? ChromaW : layout.chroma_w;
    const int chroma_h = ChromaH >= 0 ? ChromaH : layout.chroma_h;
    const int step_x = 1 << chroma_w;
    const int step_y = 1 << chroma_h;
    const int cy = y >> chroma_h;
    auto* cb_row = reinterpret_cast<Sample*>(out->data[1] + std::ptrdiff_t(cy) * out->linesize[1]);
    auto* cr_row = reinterpret_cast<Sample*>(out->data[2] + std::ptrdiff_t(cy) * out->linesize[2]);
    const auto code = [&](std::int64_t e) {
        const std::int64_t scaled = e * c_scale;
        const std::int64_t rounded =
            scaled >= 0 ? (scaled + 32768) >> 16 : -((-scaled + 32768) >> 16);
        return static_cast<Sample>(std::clamp<std::int64_t>(c_offset + rounded, 0, max));
    };
    for (int x = 0, cx = 0; x < width; x += step_x, ++cx) {
        std::int64_t sum[3] = {0, 0, 0};
        for (int r = 0; r < step_y; ++r) {
            for (int dx = 0; dx < step_x; ++dx) {
                const std::uint16_t* p = lines[r] + 3 * std::min(x + dx, width - 1);
                sum[0] += p[0];
                sum[1] += p[1];
                sum[2] += p[2];
            }
        }
        const int count = step_x * step_y;
        const std::int64_t pr = (sum[0] + count / 2) / count;
        const std::int64_t pg = (sum[1] + count / 2) / count;
        const std::int64_t pb = (sum[2] + count / 2) / count;
        const std::int64_t ey = (m.kr * pr + m.kg * pg + m.kb * pb + 32768) >> 16;
        // (B - Y) / (2 (1 - Kb)) and (R - Y) / (2 (1 - Kr)), in [-32768, 32767].
        cb_row[cx] = code(((pb - ey) * m.cb_scale) / 65536);
        cr_row[cx] = code(((pr - ey) * m.cr_scale) / 65536);
    }
}

template <typename Sample>
void ConvertRowsFor(const YuvMatrix& m, const YuvLayout& layout, std::uint16_t* const lines[2],
                    int width, int rows, int y, AVFrame* out) {
    if (layout.chroma_w == 1 && layout.chroma_h == 1) {
        ConvertRowsAs<Sample, 1, 1>(m, layout, lines, width, rows, y, out);
    } else if (layout.chroma_w == 1 && layout.chroma_h == 0) {
        ConvertRowsAs<Sample, 1, 0>(m, layout, lines, width, rows, y, out);
    } else if (layout.chroma_w == 0 && layout.chroma_h == 0) {
        ConvertRowsAs<Sample, 0, 0>(m, layout, lines, width, rows, y, out);
    } else {
        ConvertRowsAs<Sample>(m, layout, lines, width, rows, y, out);
    }
}

void ConvertRows(const YuvMatrix& m, const YuvLayout& layout, std::uint16_t* const lines[2],
                 int width, int rows, int y, AVFrame* out) {
    if (layout.depth == 8) {
        ConvertRowsFor<std::uint8_t>(m, layout, lines, width, rows, y, out);
    } else {
        ConvertRowsFor<std::uint16_t>(m, layout, lines, width, rows, y, out);
    }
}

// Yuv8Weights are the 8-bit BT.709 case of ConvertRows with the 8 -> 16 bit expansion
// (v * 257) folded in: the same integer arithmetic in 32 bits, which holds every intermediate
// value of this matrix (at most 2^31 - 2400 for (B' - Y') * cb_scale), so the same samples.
struct Yuv8Weights {
    std::uint32_t kr, kg, kb;  // 16.16 luma weights
    std::int32_t cb_scale, cr_scale;
    std::uint32_t y_scale, y_offset;
    std::int32_t c_scale;
};

// Luma8Row is LumaRow of an 8-bit RGB24 row.
GENHOST_CPU_CLONES void Luma8Row(const Yuv8Weights& w, const std::uint8_t* __restrict rgb,
                                 int width, std::uint8_t* __restrict out) {
    for (int x = 0; x < width; ++x) {
        const std::uint32_t e = (w.kr * (rgb[3 * x] * 257u) + w.kg * (rgb[3 * x + 1] * 257u) +
                                 w.kb * (rgb[3 * x + 2] * 257u) + 32768u) >>
                                16;
        out[x] = static_cast<std::uint8_t>(w.y_offset + ((e * w.y_scale + 32768u) >> 16));
    }
}

// Chroma420Row8 is the chroma of ConvertRowsAs for 8-bit 4:2:0 from two RGB24 rows (the same
// row twice for a last odd row) of an even width: each sample from its 2x2 block. `sums` holds
// 3 * width values: the two rows added per component, so both loops have strides the
// vectoriser takes.
GENHOST_CPU_CLONES void Chroma420Row8(const Yuv8Weights& w, const std::uint8_t* __restrict r0,
                                      const std::uint8_t* __restrict r1, int width,
                                      std::uint16_t* __restrict sums, std::uint8_t* __restrict cb,
                                      std::uint8_t* __restrict cr) {
    std::uint16_t* __restrict sr = sums;
    std::uint16_t* __restrict sg = sums + width;
    std::uint16_t* __restrict sb = sums + 2 * width;
    for (int x = 0; x < width; ++x) {
        sr[x] = static_cast<std::uint16_t>(r0[3 * x] + r1[3 * x]);
        sg[x] = static_cast<std::uint16_t>(r0[3 * x + 1] + r1[3 * x + 1]);
        sb[x] = static_cast<std::uint16_t>(r0[3 * x + 2] + r1[3 * x + 2]);
    }
    const auto code = [&](std::int32_t e) {
        const std::int32_t scaled = e * w.c_scale;
        const std::int32_t rounded =
            scaled >= 0 ? (scaled + 32768) >> 16 : -((-scaled + 32768) >> 16);
        return static_cast<std::uint8_t>(std::clamp(128 + rounded, 0, 255));
    };
    for (int cx = 0; cx < width / 2; ++cx) {
        const std::uint32_t pr = (257u * (sr[2 * cx] + sr[2 * cx + 1]) + 2) / 4;
        const std::uint32_t pg = (257u * (sg[2 * cx] + sg[2 * cx + 1]) + 2) / 4;
        const std::uint32_t pb = (257u * (sb[2 * cx] + sb[2 * cx + 1]) + 2) / 4;
        const std::uint32_t ey = (w.kr * pr + w.kg * pg + w.kb * pb + 32768u) >> 16;
        const auto y = static_cast<std::int32_t>(ey);
        cb[cx] = code((static_cast<std::int32_t>(pb) - y) * w.cb_scale / 65536);
        cr[cx] = code((static_cast<std::int32_t>(pr) - y) * w.cr_scale / 65536);
    }
}

const AVCodec* FindEncoder(const char* name) {
    const AVCodec* codec = avcodec_find_encoder_by_name(name);
    if (codec == nullptr) throw MediaError(std::string("this build has no ") + name + " encoder");
    return codec;
}

}  // namespace

struct VideoWriter::Impl {
    VideoSpec spec;
    Plan plan;
    std::string path;
    AudioSource audio;
    int frames = 0;
    bool finished = false;

    // Container formats.
    OutputFormatPtr muxer;
    CodecContextPtr video;
    AVStream* video_stream = nullptr;
    CodecContextPtr aac;
    AVStream* audio_stream = nullptr;
    FramePtr audio_frame;
    std::int64_t audio_next = 0;  // next sample to encode
    FramePtr picture;             // the encoder's input frame
    PacketPtr packet = MakePacket();

    // Conversion: frames smaller than the output are scaled up into `full`; HDR formats go
    // through `hdr` (16-bit PQ / HLG codes, or half floats) before the Y'CbCr conversion.
    std::optional<HdrConverter> hdr;
    std::vector<std::uint16_t> rgb48;
    std::vector<std::uint16_t> sums;  // 8-bit 4:2:0 chroma: two rows added
    RgbImage full;

    // Sequences.
    std::optional<ZipWriter> zip;
    CodecContextPtr png;

    ~Impl() {
        if (muxer && muxer->pb != nullptr) avio_closep(&muxer->pb);
        if (!finished) {
            zip.reset();
            std::error_code ec;
            std::filesystem::remove(path, ec);
        }
    }

    void OpenContainer();
    void OpenAudio();
    void OpenSequence();
    void Drain(AVCodecContext* encoder, AVStream* stream, bool video_packets);
    void EncodeAudioUntil(std::int64_t sample, bool last);
    void ConvertInto(const RgbImage& frame, AVFrame* out);
    void WriteSequenceFrame(const RgbImage& frame);
};

void VideoWriter::Impl::OpenContainer() {
    AVFormatContext* raw = nullptr;
    CheckAv(avformat_alloc_output_context2(&raw, nullptr, plan.container, path.c_str()),
            "creating the muxer");
    muxer.reset(raw);
    muxer->flags |= AVFMT_FLAG_BITEXACT;  // no version strings or times that vary between runs

    const AVCodec* codec = FindEncoder(plan.encoder);
    video = MakeCodecContext(codec);
    AVCodecContext* v = video.get();
    v->width = spec.width;
    v->height = spec.height;
    v->pix_fmt = plan.pixel_format;
    v->time_base = AVRational{1, spec.fps};
    v->framerate = AVRational{spec.fps, 1};
    v->sample_aspect_ratio = AVRational{1, 1};
    v->color_primaries = plan.color_primaries;
    v->color_trc = plan.color_trc;
    v->colorspace = plan.colorspace;
    v->color_range = AVCOL_RANGE_MPEG;
    v->thread_count = spec.threads;
    v->flags |= AV_CODEC_FLAG_BITEXACT;
    if (muxer->oformat->flags & AVFMT_GLOBALHEADER) v->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    AvDictionary options;
    const std::string name = plan.encoder;
    if (name == "libx264") {
        options.Set("preset", kX264Preset);
        options.Set("crf", kX264Crf);
        options.Set("profile", plan.profile);
        // The lookahead on the encoding thread: with its own thread (x264's default) the frame
        // decisions depend on timing, and the same frames gave different bytes from run to run
        // (5 different files in 8 runs of the ffmpeg command line with `-threads 2` on an 854x480
        // clip; with this, 8 identical ones, for 10-20 % more encoding time; docs/performance.md).
        options.Set("x264-params", "sync-lookahead=0");
        v->gop_size = spec.fps * 2;
    } else if (name == "libx265") {
        options.Set("preset", kX265Preset);
        options.Set("crf", kX265Crf);
        options.Set("profile", plan.profile);
        std::string params = "log-level=error:pools=" + std::to_string(spec.threads);
        if (plan.color_trc == AVCOL_TRC_SMPTE2084) {
            params += ":hdr10=1:hdr10-opt=0:master-display=";
            params += kMasterDisplay;
            params += ":max-cll=";
            params += kMaxCll;
        }
        options.Set("x265-params", params.c_str());
        v->gop_size = spec.fps * 2;
    } else {  // prores_ks
        options.Set("profile", static_cast<std::int64_t>(spec.prores_profile));
        options.Set("vendor", "apl0");
    }
    CheckAv(avcodec_open2(v, codec, options.Address()), std::string("opening ") + plan.encoder);

    video_stream = avformat_new_stream(muxer.get(), nullptr);
    if (video_stream == nullptr) throw MediaError("avformat_new_stream: out of memory");
    CheckAv(avcodec_parameters_from_context(video_stream->codecpar, v), "stream parameters");
    video_stream->time_base = v->time_base;
    video_stream->avg_frame_rate = v->framerate;
    if (name == "libx265") video_stream->codecpar->codec_tag = MKTAG('h', 'v', 'c', '1');
    if (plan.color_trc == AVCOL_TRC_SMPTE2084) {
        auto* mdm = reinterpret_cast<AVMasteringDisplayMetadata*>(
            av_stream_new_side_data(video_stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA,
                                    sizeof(AVMasteringDisplayMetadata)));
        if (mdm == nullptr) throw MediaError("av_stream_new_side_data: out of memory");
        *mdm = AVMasteringDisplayMetadata{};
        const int xy[4][2] = {{35400, 14600}, {8500, 39850}, {6550, 2300}, {15635, 16450}};
        for (int i = 0; i < 3; ++i) {
            mdm->display_primaries[i][0] = AVRational{xy[i][0], 50000};
            mdm->display_primaries[i][1] = AVRational{xy[i][1], 50000};
        }
        mdm->white_point[0] = AVRational{xy[3][0], 50000};
        mdm->white_point[1] = AVRational{xy[3][1], 50000};
        mdm->max_luminance = AVRational{1000, 1};
        mdm->min_luminance = AVRational{1, 10000};
        mdm->has_primaries = 1;
        mdm->has_luminance = 1;
        auto* cll = reinterpret_cast<AVContentLightMetadata*>(av_stream_new_side_data(
            video_stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, sizeof(AVContentLightMetadata)));
        if (cll == nullptr) throw MediaError("av_stream_new_side_data: out of memory");
        cll->MaxCLL = 1000;
        cll->MaxFALL = 400;
    }

    if (spec.audio) OpenAudio();

    CheckAv(avio_open(&muxer->pb, path.c_str(), AVIO_FLAG_WRITE), "opening " + path);
    AvDictionary mux_options;
    mux_options.Set("movflags", "+faststart");
    CheckAv(avformat_write_header(muxer.get(), mux_options.Address()), "writing the header");

    picture = MakeVideoFrame(plan.pixel_format, spec.width, spec.height);
    picture->color_primaries = plan.color_primaries;
    picture->color_trc = plan.color_trc;
    picture->colorspace = plan.colorspace;
    picture->color_range = AVCOL_RANGE_MPEG;
}

void VideoWriter::Impl::OpenAudio() {
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_AAC);
    if (codec == nullptr) throw MediaError("this build has no AAC encoder");
    aac = MakeCodecContext(codec);
    AVCodecContext* a = aac.get();
    a->sample_fmt = AV_SAMPLE_FMT_FLTP;
    a->sample_rate = kAudioSampleRate;
    a->bit_rate = 128000;
    av_channel_layout_default(&a->ch_layout, 2);
    a->time_base = AVRational{1, kAudioSampleRate};
    a->flags |= AV_CODEC_FLAG_BITEXACT;
    a->thread_count = 1;
    if (muxer->oformat->flags & AVFMT_GLOBALHEADER) a->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    CheckAv(avcodec_open2(a, codec, nullptr), "opening the AAC encoder");
    audio_stream = avformat_new_stream(muxer.get(), nullptr);
    if (audio_stream == nullptr) throw MediaError("avformat_new_stream: out of memory");
    CheckAv(avcodec_parameters_from_context(audio_stream->codecpar, a), "audio parameters");
    audio_stream->time_base = a->time_base;
    audio_frame = MakeFrame();
    audio_frame->format = AV_SAMPLE_FMT_FLTP;
    audio_frame->sample_rate = kAudioSampleRate;
    CheckAv(av_channel_layout_copy(&audio_frame->ch_layout, &a->ch_layout), "channel layout");
    audio_frame->nb_samples = a->frame_size;
    CheckAv(av_frame_get_buffer(audio_frame.get(), 0), "audio frame buffer");
}

void VideoWriter::Impl::OpenSequence() {
    zip.emplace(path);
    if (plan.exr) {
        hdr.emplace(HdrTarget::kLinear, plan.primaries);
        return;
    }
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    if (codec == nullptr) throw MediaError("this build has no PNG encoder");
    png = MakeCodecContext(codec);
    png->width = spec.width;
    png->height = spec.height;
    png->pix_fmt = plan.hdr ? AV_PIX_FMT_RGB48BE : AV_PIX_FMT_RGB24;
    png->time_base = AVRational{1, spec.fps};
    png->thread_count = 1;
    png->flags |= AV_CODEC_FLAG_BITEXACT;
    png->sample_aspect_ratio = AVRational{1, 1};
    png->compression_level = 3;  // zlib level: 3 is about twice as fast as 6 and 10 % larger
    if (plan.hdr) {
        png->color_primaries = AVCOL_PRI_BT2020;
        png->color_trc = AVCOL_TRC_SMPTE2084;
        hdr.emplace(HdrTarget::kPq, HdrPrimaries::kBt2020);
    } else {
        png->color_primaries = AVCOL_PRI_BT709;
        png->color_trc = AVCOL_TRC_IEC61966_2_1;
    }
    png->colorspace = AVCOL_SPC_RGB;
    png->color_range = AVCOL_RANGE_JPEG;
    AvDictionary options;
    options.Set("pred", "up");
    CheckAv(avcodec_open2(png.get(), codec, options.Address()), "opening the PNG encoder");
    picture = MakeVideoFrame(png->pix_fmt, spec.width, spec.height);
    picture->color_primaries = png->color_primaries;
    picture->color_trc = png->color_trc;
    picture->colorspace = AVCOL_SPC_RGB;
    picture->color_range = AVCOL_RANGE_JPEG;
}

void VideoWriter::Impl::Drain(AVCodecContext* encoder, AVStream* stream, bool video_packets) {
    for (;;) {
        const int rc = avcodec_receive_packet(encoder, packet.get());
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
        CheckAv(rc, "encoding");
        // Containers take their durations from the packets: a missing duration shortens the
        // last frame to nothing and the file by one frame.
        if (video_packets && packet->duration <= 0) packet->duration = 1;
        av_packet_rescale_ts(packet.get(), encoder->time_base, stream->time_base);
        packet->stream_index = stream->index;
        CheckAv(av_interleaved_write_frame(muxer.get(), packet.get()), "muxing");
    }
}

void VideoWriter::Impl::EncodeAudioUntil(std::int64_t sample, bool last) {
    if (!aac) return;
    const int frame_size = aac->frame_size;
    while (audio_next < sample) {
        const auto count =
            static_cast<int>(std::min<std::int64_t>(frame_size, sample - audio_next));
        if (count < frame_size && !last) return;  // wait for a whole frame
        CheckAv(av_frame_make_writable(audio_frame.get()), "audio frame");
        audio_frame->nb_samples = count;
        auto* left = reinterpret_cast<float*>(audio_frame->data[0]);
        auto* right = reinterpret_cast<float*>(audio_frame->data[1]);
        if (audio) {
            audio(audio_next, count, left, right);
        } else {
            std::fill(left, left + count, 0.0f);
            std::fill(right, right + count, 0.0f);
        }
        audio_frame->pts = audio_next;
        audio_next += count;
        CheckAv(avcodec_send_frame(aac.get(), audio_frame.get()), "encoding audio");
        Drain(aac.get(), audio_stream, false);
    }
}

void VideoWriter::Impl::ConvertInto(const RgbImage& frame, AVFrame* out) {
    const RgbImage* source = &frame;
    if (frame.width != spec.width || frame.height != spec.height) {
        if (full.width != spec.width || full.height != spec.height) {
            full = RgbImage(spec.width, spec.height);
        }
        CameraView(frame, 1.0, 0.5, 0.5, full);
        source = &full;
    }
    CheckAv(av_frame_make_writable(out), "frame");
    const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(out->format));
    YuvLayout layout;
    layout.depth = desc->comp[0].depth;
    layout.chroma_w = desc->log2_chroma_w;
    layout.chroma_h = desc->log2_chroma_h;
    layout.alpha = (desc->flags & AV_PIX_FMT_FLAG_ALPHA) != 0;
    const YuvMatrix& matrix =
        plan.colorspace == AVCOL_SPC_BT2020_NCL ? kBt2020Matrix : kBt709Matrix;
    const int width = spec.width;
    if (!hdr && layout.depth == 8 && layout.chroma_w == 1 && layout.chroma_h == 1 &&
        !layout.alpha && &matrix == &kBt709Matrix && width % 2 == 0) {
        // H.264 MP4, the common case: straight from the 8-bit rows, the same samples.
        sums.resize(std::size_t(3) * width);
        const Yuv8Weights w{static_cast<std::uint32_t>(matrix.kr),
                            static_cast<std::uint32_t>(matrix.kg),
                            static_cast<std::uint32_t>(matrix.kb),
                            static_cast<std::int32_t>(matrix.cb_scale),
                            static_cast<std::int32_t>(matrix.cr_scale),
                            ((219u << 16) + 32767) / 65535,
                            16,
                            static_cast<std::int32_t>(((224 << 16) + 32767) / 65535)};
        for (int y = 0; y < spec.height; y += 2) {
            const std::uint8_t* r0 = source->Row(y);
            const std::uint8_t* r1 = y + 1 < spec.height ? source->Row(y + 1) : r0;
            Luma8Row(w, r0, width, out->data[0] + std::ptrdiff_t(y) * out->linesize[0]);
            if (y + 1 < spec.height) {
                Luma8Row(w, r1, width, out->data[0] + std::ptrdiff_t(y + 1) * out->linesize[0]);
            }
            const std::ptrdiff_t cy = y / 2;
            Chroma420Row8(w, r0, r1, width, sums.data(), out->data[1] + cy * out->linesize[1],
                          out->data[2] + cy * out->linesize[2]);
        }
        return;
    }
    rgb48.resize(std::size_t(6) * width);  // two rows of 16-bit RGB
    for (int y = 0; y < spec.height; y += 1 << layout.chroma_h) {
        const int rows = std::min(1 << layout.chroma_h, spec.height - y);
        std::uint16_t* lines[2] = {rgb48.data(), rgb48.data() + std::size_t(3) * width};
        for (int r = 0; r < rows; ++r) {
            if (hdr) {
                hdr->ToRgb48(source->Row(y + r), width, lines[r], false);
            } else {
                const std::uint8_t* in = source->Row(y + r);
                for (int i = 0; i < 3 * width; ++i)
                    lines[r][i] = static_cast<std::uint16_t>(in[i] * 257);
            }
        }
        if (rows == 1) lines[1] = lines[0];
        ConvertRows(matrix, layout, lines, width, rows, y, out);
    }
}

void VideoWriter::Impl::WriteSequenceFrame(const RgbImage& frame) {
    const RgbImage* source = &frame;
    if (frame.width != spec.width || frame.height != spec.height) {
        if (full.width != spec.width || full.height != spec.height) {
            full = RgbImage(spec.width, spec.height);
        }
        CameraView(frame, 1.0, 0.5, 0.5, full);
        source = &full;
    }
    char name[32];
    std::string bytes;
    if (plan.exr) {
        std::vector<std::uint16_t> halves(std::size_t(3) * spec.width * spec.height);
        for (int y = 0; y < spec.height; ++y) {
            hdr->ToHalfPlanar(source->Row(y), spec.width,
                              halves.data() + std::size_t(3) * spec.width * y);
        }
        ExrAttributes attributes;
        if (plan.primaries == HdrPrimaries::kAp1) {
            const bool v2 = spec.format == VideoFormat::kHdrExrAcescgSequence2_0;
            attributes.primaries = kAp1Primaries;
            attributes.adopted_neutral = true;
            attributes.strings = {
                {"acesVersion", v2 ? "2.0" : "1.3"},
                {"colorInteropID", "lin_ap1_scene"},
                {"comments", std::string("ACEScg (AP1 primaries, scene-linear), ACES ") +
                                 (v2 ? "2.0" : "1.3") + "; 1.0 = SDR reference white"}};
        } else {
            attributes.primaries = kBt2020Primaries;
            attributes.white_luminance = static_cast<float>(HdrConverter::kWhiteNits);
            attributes.strings = {
                {"colorInteropID", "lin_rec2020_scene"},
                {"comments", "scene-linear BT.2020; 1.0 = SDR reference white (203 cd/m2)"}};
        }
        bytes = EncodeExr(spec.width, spec.height, halves, attributes);
        std::snprintf(name, sizeof name, "frame_%05d.exr", frames + 1);
    } else {
        CheckAv(av_frame_make_writable(picture.get()), "frame");
        for (int y = 0; y < spec.height; ++y) {
            std::uint8_t* row = picture->data[0] + std::ptrdiff_t(y) * picture->linesize[0];
            if (hdr) {
                hdr->ToRgb48(source->Row(y), spec.width, reinterpret_cast<std::uint16_t*>(row),
                             true);
            } else {
                std::copy_n(source->Row(y), std::size_t(3) * spec.width, row);
            }
        }
        picture->pts = frames;
        CheckAv(avcodec_send_frame(png.get(), picture.get()), "encoding a PNG frame");
        for (;;) {
            const int rc = avcodec_receive_packet(png.get(), packet.get());
            if (rc == AVERROR(EAGAIN)) break;
            CheckAv(rc, "encoding a PNG frame");
            bytes.append(reinterpret_cast<const char*>(packet->data), packet->size);
            av_packet_unref(packet.get());
        }
        // cICP: BT.2020 primaries (9), PQ transfer (16).
        if (hdr) bytes = AddPngCicp(bytes, 9, 16);
        std::snprintf(name, sizeof name, "frame_%05d.png", frames + 1);
    }
    zip->Add(name, bytes);
}

std::optional<VideoFormat> ParseVideoFormat(std::string_view name) {
    static constexpr std::pair<std::string_view, VideoFormat> kNames[] = {
        {"mp4", VideoFormat::kMp4},
        {"prores", VideoFormat::kProres},
        {"png_sequence", VideoFormat::kPngSequence},
        {"sdr_rec709_10bit", VideoFormat::kSdrRec709_10bit},
        {"hdr10", VideoFormat::kHdr10},
        {"hlg", VideoFormat::kHlg},
        {"hdr_pq_12bit_master", VideoFormat::kHdrPq12bitMaster},
        {"hdr_prores", VideoFormat::kHdrProres},
        {"hdr_png_sequence", VideoFormat::kHdrPngSequence},
        {"hdr_exr_sequence", VideoFormat::kHdrExrSequence},
        {"hdr_exr_acescg_sequence_1_3", VideoFormat::kHdrExrAcescgSequence1_3},
        {"hdr_exr_acescg_sequence_2_0", VideoFormat::kHdrExrAcescgSequence2_0},
    };
    for (const auto& [n, f] : kNames) {
        if (n == name) return f;
    }
    return std::nullopt;
}

bool IsImageSequence(VideoFormat format) {
    switch (format) {
        case VideoFormat::kPngSequence:
        case VideoFormat::kHdrPngSequence:
        case VideoFormat::kHdrExrSequence:
        case VideoFormat::kHdrExrAcescgSequence1_3:
        case VideoFormat::kHdrExrAcescgSequence2_0:
            return true;
        default:
            return false;
    }
}

std::string_view VideoFormatExtension(VideoFormat format) {
    if (IsImageSequence(format)) return "zip";
    switch (format) {
        case VideoFormat::kProres:
        case VideoFormat::kHdrProres:
        case VideoFormat::kHdrPq12bitMaster:
            return "mov";
        default:
            return "mp4";
    }
}

std::optional<ProresProfile> ParseProresProfile(std::string_view name) {
    if (name == "422 Proxy") return ProresProfile::kProxy;
    if (name == "422 LT") return ProresProfile::kLt;
    if (name == "422") return ProresProfile::kStandard;
    if (name == "422 HQ") return ProresProfile::kHq;
    if (name == "4444") return ProresProfile::k4444;
    if (name == "4444 XQ") return ProresProfile::k4444Xq;
    return std::nullopt;
}

int FrameCount(double duration_seconds, int fps) {
    return std::max(1, static_cast<int>(std::lround(duration_seconds * fps)));
}

VideoWriter::VideoWriter(const VideoSpec& spec, std::string path, AudioSource audio)
    : impl_(std::make_unique<Impl>()) {
    // Encoders report per-file statistics at info level on stderr, outside genhost's log: keep
    // libav to warnings and errors (process-wide, set once).
    static std::once_flag quiet;
    std::call_once(quiet, [] {
        if (av_log_get_level() > AV_LOG_WARNING) av_log_set_level(AV_LOG_WARNING);
    });
    if (spec.width < 2 || spec.height < 2 || spec.width > kMaxSide || spec.height > kMaxSide ||
        spec.width % 2 != 0 || spec.height % 2 != 0) {
        throw MediaError("video size " + std::to_string(spec.width) + "x" +
                         std::to_string(spec.height) + " must be even and within 2..8192");
    }
    if (spec.fps < 1 || spec.fps > 120 || spec.frame_count < 1) {
        throw MediaError("video needs 1..120 fps and at least one frame");
    }
    impl_->spec = spec;
    impl_->plan = PlanFor(spec);
    impl_->path = std::move(path);
    impl_->audio = std::move(audio);
    if (impl_->plan.sequence) {
        impl_->spec.audio = false;
        impl_->OpenSequence();
    } else {
        if (impl_->plan.hdr) impl_->hdr.emplace(*impl_->plan.hdr, impl_->plan.primaries);
        impl_->OpenContainer();
    }
}

VideoWriter::~VideoWriter() = default;

int VideoWriter::FramesWritten() const { return impl_->frames; }

void VideoWriter::WriteFrame(const RgbImage& frame) {
    Impl& w = *impl_;
    if (w.finished) throw MediaError("frame written after Finish");
    if (w.frames >= w.spec.frame_count) throw MediaError("more frames than the spec says");
    if (frame.width < 1 || frame.height < 1 ||
        frame.pixels.size() != std::size_t(3) * frame.width * frame.height) {
        throw MediaError("frame has no pixels");
    }
    if (w.plan.sequence) {
        w.WriteSequenceFrame(frame);
        ++w.frames;
        return;
    }
    w.ConvertInto(frame, w.picture.get());
    w.picture->pts = w.frames;
    CheckAv(avcodec_send_frame(w.video.get(), w.picture.get()), "encoding a frame");
    ++w.frames;
    w.Drain(w.video.get(), w.video_stream, true);
    w.EncodeAudioUntil(std::int64_t{w.frames} * kAudioSampleRate / w.spec.fps, false);
}

void VideoWriter::Finish() {
    Impl& w = *impl_;
    if (w.finished) return;
    if (w.frames != w.spec.frame_count) {
        throw MediaError("wrote " + std::to_string(w.frames) + " of " +
                         std::to_string(w.spec.frame_count) + " frames");
    }
    if (w.plan.sequence) {
        w.zip->Close();
        w.finished = true;
        return;
    }
    CheckAv(avcodec_send_frame(w.video.get(), nullptr), "flushing the video encoder");
    w.Drain(w.video.get(), w.video_stream, true);
    if (w.aac) {
        w.EncodeAudioUntil(std::int64_t{w.frames} * kAudioSampleRate / w.spec.fps, true);
        CheckAv(avcodec_send_frame(w.aac.get(), nullptr), "flushing the audio encoder");
        w.Drain(w.aac.get(), w.audio_stream, false);
    }
    CheckAv(av_write_trailer(w.muxer.get()), "writing the trailer");
    CheckAv(avio_closep(&w.muxer->pb), "closing the file");
    w.finished = true;
}

}  // namespace genhost::media
