// Video processing pipelines of the builtin provider: video_upscale, video_to_hdr,
// character_performance, avatar_videos. The filters they share are in edit_filters.cpp, the
// avatar portrait and lip sync in edit_avatar.cpp; docs/pipelines.md ("Editing and upscaling")
// describes what each does.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "edit_avatar.hpp"
#include "edit_filters.hpp"
#include "genhost/media/audio.hpp"
#include "genhost/media/video.hpp"
#include "genhost/media/voice_profile.hpp"
#include "pipelines.hpp"
#include "video_frame_pipeline.hpp"

namespace genhost::providers {
namespace {

using media::RgbImage;

// kMaxInputSeconds bounds the video inputs (SPEC.md: at most 30 s), with a little slack for
// containers that round up.
constexpr double kMaxInputSeconds = 31;

// OutputFps is the integer output rate for an input's frame rate (24 when unknown).
int OutputFps(double rate) {
    if (!(rate > 0)) return 24;
    return std::clamp(static_cast<int>(std::lround(rate)), 1, 60);
}

// Timing is the output timing of a constant-rate copy of an input video.
struct Timing {
    int fps = 24;
    int frames = 1;
    double seconds = 0;
};

// InputTiming reads the input's duration; when the container does not say it, the video is
// decoded once (small) to measure it.
Timing InputTiming(const std::string& path, std::string_view field, const media::VideoInfo& info,
                   const TaskContext& ctx) {
    Timing t;
    t.fps = OutputFps(info.frame_rate);
    t.seconds = info.duration_seconds;
    if (!(t.seconds > 0)) {
        media::VideoReader::Limits limits;
        limits.max_width = 64;
        limits.max_height = 64;
        limits.max_seconds = kMaxInputSeconds;
        auto reader = edit::OpenVideo(path, field, limits);
        RgbImage frame;
        double time = 0;
        double last = -1;
        int count = 0;
        while (edit::NextFrame(*reader, frame, time, field)) {
            ctx.CheckCancelled();
            last = std::max(last, time);
            ++count;
        }
        if (count == 0) {
            throw TaskFailure("ASSET.INVALID",
                              "The video of `" + std::string(field) + "` has no decodable picture");
        }
        t.seconds = last + 1.0 / t.fps;
    }
    if (t.seconds > kMaxInputSeconds) {
        throw TaskFailure("ASSET.INVALID",
                          "The video of `" + std::string(field) + "` is longer than 30 seconds");
    }
    t.frames = media::FrameCount(t.seconds, t.fps);
    return t;
}

// ReadTrack decodes the audio track of `path` at 48 kHz stereo for a VideoWriter; nullopt when
// there is none or it does not decode (the video is still converted).
std::optional<media::AudioBuffer> ReadTrack(const std::string& path, const TaskContext& ctx) {
    try {
        media::AudioReadOptions options;
        options.sample_rate = media::kAudioSampleRate;
        options.channels = 2;
        options.max_seconds = kMaxInputSeconds + 1;
        return media::ReadAudio(path, options, [&] { return !ctx.IsCancelled(); });
    } catch (const media::MediaError&) {
        ctx.CheckCancelled();
        return std::nullopt;
    }
}

// TrackSource plays `audio` (48 kHz, mono or stereo) into a VideoWriter, silence past its end.
media::AudioSource TrackSource(const media::AudioBuffer& audio) {
    return [&audio](std::int64_t first, int count, float* left, float* right) {
        const std::int64_t frames = audio.frames();
        const int channels = audio.channels;
        for (int i = 0; i < count; ++i) {
            const std::int64_t at = first + i;
            if (at < 0 || at >= frames) {
                left[i] = right[i] = 0.0f;
                continue;
            }
            left[i] = audio.samples[channels * at];
            right[i] = audio.samples[channels * at + channels - 1];
        }
    };
}

// ResolutionLongSide is the long side of video_upscale's resolution classes.
int ResolutionLongSide(std::string_view resolution) {
    if (resolution == "720p") return 1280;
    if (resolution == "1k") return 1920;
    if (resolution == "4k") return 3840;
    return 2560;  // 2k, the default
}

Output VideoOutput(const std::string& path, media::VideoFormat format) {
    return Output{"0." + std::string(media::VideoFormatExtension(format)), {}, path};
}

}  // namespace

// video_upscale: every input frame enhanced at its own size (creativity as detail, flavor as a
// look, sharpen as an unsharp mask), scaled with Lanczos so the long side matches the
// resolution class, grained at the output size; fpsBoost inserts a frame between each pair of
// neighbours (edit::MotionBlend: global-motion-compensated blend), doubling the rate. H.264 MP4
// without audio (the model has no audio output).
std::vector<Output> VideoUpscale(const PipelineEnv& env, TaskContext& ctx) {
    const auto& input = ctx.input();
    const std::string path = ctx.Input(input.value("videoUri", ""), MediaKind::kVideo);
    media::VideoReader::Limits limits;
    limits.max_width = 3840;
    limits.max_height = 3840;
    limits.max_seconds = kMaxInputSeconds;
    auto reader = edit::OpenVideo(path, "videoUri", limits);
    const Timing timing = InputTiming(path, "videoUri", reader->info(), ctx);
    SimulateLatency(env, ctx, 0.0, 0.3);

    edit::FrameSampler sampler(*reader, "videoUri");
    const RgbImage& first = sampler.Get(0.5 / timing.fps);
    const int long_side = ResolutionLongSide(input.value("resolution", "2k"));
    const double scale = static_cast<double>(long_side) / std::max(first.width, first.height);
    int out_w = edit::Even(static_cast<int>(std::lround(first.width * scale)));
    int out_h = edit::Even(static_cast<int>(std::lround(first.height * scale)));
    // Inputs within 1% of 16:9 (854x480 is 1.779) get the standard frame of the class
    // (1280x720, not 1280x718).
    const int standard_short = long_side * 9 / 16;
    int& short_side = first.width >= first.height ? out_h : out_w;
    if (std::abs(short_side - standard_short) <= standard_short / 100) short_side = standard_short;

    const bool boost = input.value("fpsBoost", false);
    media::VideoSpec spec;
    spec.width = out_w;
    spec.height = out_h;
    spec.fps = boost ? 2 * timing.fps : timing.fps;
    spec.frame_count = boost ? 2 * timing.frames : timing.frames;
    spec.format = media::VideoFormat::kMp4;
    const std::string out_path = edit::OutputPath(ctx, "video_upscale.mp4");
    media::VideoWriter writer(spec, out_path);

    const double creativity = input.value("creativity", 0) / 100.0;
    const double sharpen = input.value("sharpen", 0) / 100.0;
    const double grain_strength = input.value("smartGrain", 0) / 100.0;
    const bool vivid = input.value("flavor", "") == "vivid";
    const edit::Grain grain(SeedFor(ctx));
    const bool filtered = vivid || creativity > 0 || sharpen > 0;
    // Frames are decoded and enhanced on a producer thread a few frames ahead of the encoder
    // (as in text_to_video); only that thread touches the sampler, `scaler` and `image`.
    edit::LanczosScaler scaler(first.width, first.height, out_w, out_h);
    RgbImage image;
    auto enhanced = [&](int i, RgbImage& out) {
        const RgbImage& source = sampler.Get((i + 0.5) / timing.fps);
        if (!filtered) {
            scaler.Scale(source, out);
            return;
        }
        image = source;
        if (vivid) edit::Look(image, 1.12, 1.05);
        edit::DetailBoost(image, 0.6 * creativity, 0.4 * creativity);
        edit::UnsharpMask(image, 1, 1.5 * sharpen);
        scaler.Scale(image, out);
    };
    if (!boost) {
        // Frame i is the i-th written, so its grain is added on the producer thread too.
        EncodeAhead(
            ctx, writer, timing.frames, out_w, out_h,
            [&](int i, RgbImage& out) {
                enhanced(i, out);
                grain.Apply(out, grain_strength, static_cast<std::uint64_t>(i));
            },
            0.3, 0.68);
    } else {
        // fpsBoost: a blended frame between each pair; the last frame has no successor to
        // blend with, so it is held. The pipeline is stopped and joined before Finish.
        std::uint64_t written = 0;
        auto emit = [&](RgbImage frame) {
            grain.Apply(frame, grain_strength, written);
            writer.WriteFrame(frame);
            ++written;
        };
        FramePipeline pipeline(timing.frames, out_w, out_h, kFramesAhead, enhanced);
        RgbImage previous;
        for (int i = 0; i < timing.frames; ++i) {
            ctx.CheckCancelled();
            RgbImage current = pipeline.Next();
            pipeline.Release();
            if (i > 0) {
                RgbImage middle = edit::MotionBlend(previous, current);
                emit(previous);
                emit(std::move(middle));
            }
            previous = std::move(current);
            ctx.Progress(0.3 + 0.68 * (i + 1) / timing.frames);
        }
        emit(previous);
        emit(previous);
    }
    writer.Finish();
    ctx.Progress(1.0);
    return {VideoOutput(out_path, spec.format)};
}

// video_to_hdr: the input frames at their own size (cropped to even sides) and rate, written
// in the HDR format asked for; the writer converts the SDR BT.709 pictures to BT.2020 light
// with a highlight expansion toward 1000 cd/m2 and codes them with PQ (hdr10, hdr_prores),
// HLG (hlg) or as scene-linear half floats (the EXR sequences). The input's audio is kept in
// the .mp4 and .mov formats.
std::vector<Output> VideoToHdr(const PipelineEnv& env, TaskContext& ctx) {
    const auto& input = ctx.input();
    const std::string path = ctx.Input(input.value("videoUri", ""), MediaKind::kVideo);
    const std::string format_name = input.value("outputFormat", "hdr10");
    const auto format = media::ParseVideoFormat(format_name);
    if (!format) {
        throw TaskFailure("INTERNAL", "video_to_hdr cannot write outputFormat " + format_name);
    }
    media::VideoReader::Limits limits;
    limits.max_width = 4096;
    limits.max_height = 4096;
    limits.max_seconds = kMaxInputSeconds;
    auto reader = edit::OpenVideo(path, "videoUri", limits);
    const Timing timing = InputTiming(path, "videoUri", reader->info(), ctx);
    SimulateLatency(env, ctx, 0.0, 0.3);

    edit::FrameSampler sampler(*reader, "videoUri");
    const RgbImage& first = sampler.Get(0.5 / timing.fps);
    media::VideoSpec spec;
    spec.width = edit::Even(first.width);
    spec.height = edit::Even(first.height);
    spec.fps = timing.fps;
    spec.frame_count = timing.frames;
    spec.format = *format;
    if (*format == media::VideoFormat::kHdrProres) {
        const auto profile = media::ParseProresProfile(input.value("proresProfile", "422 HQ"));
        spec.prores_profile = profile.value_or(media::ProresProfile::kHq);
    }
    std::optional<media::AudioBuffer> track;
    if (reader->info().has_audio && !media::IsImageSequence(*format)) {
        track = ReadTrack(path, ctx);
    }
    spec.audio = track.has_value();
    const std::string out_path =
        edit::OutputPath(ctx, "video_to_hdr." + std::string(media::VideoFormatExtension(*format)));
    media::VideoWriter writer(spec, out_path, track ? TrackSource(*track) : media::AudioSource{});
    // Decoding runs on a producer thread a few frames ahead of the HDR conversion and the
    // encoder (see video_upscale).
    EncodeAhead(
        ctx, writer, timing.frames, spec.width, spec.height,
        [&](int i, RgbImage& out) {
            const RgbImage& frame = sampler.Get((i + 0.5) / timing.fps);
            if (frame.width == spec.width && frame.height == spec.height) {
                std::copy(frame.pixels.begin(), frame.pixels.end(), out.pixels.begin());
            } else {
                out = edit::EvenSize(frame);
            }
        },
        0.3, 0.68);
    writer.Finish();
    ctx.Progress(1.0);
    return {VideoOutput(out_path, spec.format)};
}

namespace {

// Motion is the reference performance at one instant: how much moved (0..1, relative to the
// clip's most active moment) and where (the centroid of the change, 0..1 coordinates).
struct Motion {
    double time = 0;
    double energy = 0;
    double x = 0.5;
    double y = 0.5;
};

// AnalyseMotion decodes the reference small and measures frame-to-frame change.
std::vector<Motion> AnalyseMotion(media::VideoReader& reader, const TaskContext& ctx) {
    std::vector<Motion> track;
    RgbImage frame;
    std::vector<int> previous;
    double time = 0;
    while (edit::NextFrame(reader, frame, time, "reference")) {
        ctx.CheckCancelled();
        std::vector<int> luma(std::size_t(frame.width) * frame.height);
        for (std::size_t i = 0; i < luma.size(); ++i) {
            const std::uint8_t* px = frame.pixels.data() + 3 * i;
            luma[i] = (54 * px[0] + 183 * px[1] + 19 * px[2] + 128) >> 8;
        }
        Motion m;
        m.time = time;
        if (!track.empty()) {
            m.x = track.back().x;
            m.y = track.back().y;
        }
        if (previous.size() == luma.size()) {
            double sum = 0, sx = 0, sy = 0;
            for (int y = 0; y < frame.height; ++y) {
                for (int x = 0; x < frame.width; ++x) {
                    const std::size_t i = std::size_t(y) * frame.width + x;
                    const int d = std::abs(luma[i] - previous[i]);
                    if (d < 6) continue;  // compression noise
                    sum += d;
                    sx += d * (x + 0.5);
                    sy += d * (y + 0.5);
                }
            }
            m.energy = sum / (255.0 * static_cast<double>(luma.size()));
            if (sum > 0) {
                m.x = sx / sum / frame.width;
                m.y = sy / sum / frame.height;
            }
        }
        previous = std::move(luma);
        track.push_back(m);
    }
    if (track.empty()) {
        throw TaskFailure("ASSET.INVALID", "The video of `reference` has no decodable picture");
    }
    // Normalise the energy to the clip's busiest moment and smooth everything.
    double peak = 0.01;
    for (const auto& m : track) peak = std::max(peak, m.energy);
    Motion smooth = track.front();
    smooth.energy = 0;
    for (auto& m : track) {
        smooth.energy += 0.35 * (std::min(1.0, m.energy / peak) - smooth.energy);
        smooth.x += 0.25 * (m.x - smooth.x);
        smooth.y += 0.25 * (m.y - smooth.y);
        m.energy = smooth.energy;
        m.x = smooth.x;
        m.y = smooth.y;
    }
    return track;
}

// MotionAt is the track's state at `t` (the last measurement at or before it).
const Motion& MotionAt(const std::vector<Motion>& track, double t, std::size_t& cursor) {
    while (cursor + 1 < track.size() && track[cursor + 1].time <= t + 1e-6) ++cursor;
    return track[cursor];
}

}  // namespace

// character_performance: the reference video is measured (motion energy and the centroid of
// motion per frame, smoothed); a camera over the character picture follows it: the view pans
// toward where the reference moves (further with bodyControl), zooms in with its energy, scaled
// by expressionIntensity, and the contrast lifts with it, plus a small seed-dependent idle
// sway. A character video plays underneath (its last frame held). Output: the ratio's size,
// 24 fps, as long as the reference, H.264 MP4 without audio.
std::vector<Output> CharacterPerformance(const PipelineEnv& env, TaskContext& ctx) {
    const auto& input = ctx.input();
    int width = 0;
    int height = 0;
    if (!ParseRatio(input.value("ratio", "1280:720"), width, height)) {
        throw TaskFailure("INTERNAL", "character_performance got an invalid ratio");
    }
    const auto& character = input.at("character");
    const bool character_video = character.value("type", "image") == "video";
    const std::string character_path = ctx.Input(
        character.value("uri", ""), character_video ? MediaKind::kVideo : MediaKind::kImage);
    const std::string reference_path =
        ctx.Input(input.at("reference").value("uri", ""), MediaKind::kVideo);

    media::VideoReader::Limits small;
    small.max_width = 96;
    small.max_height = 96;
    small.max_seconds = kMaxInputSeconds;
    auto reference = edit::OpenVideo(reference_path, "reference", small);
    const Timing reference_timing =
        InputTiming(reference_path, "reference", reference->info(), ctx);
    const std::vector<Motion> track = AnalyseMotion(*reference, ctx);
    reference.reset();
    ctx.Progress(0.1);

    // The character, at most about twice the output size (CameraView samples bilinearly).
    std::unique_ptr<media::VideoReader> character_reader;
    std::optional<edit::FrameSampler> character_frames;
    RgbImage still;
    if (character_video) {
        media::VideoReader::Limits limits;
        limits.max_width = 2 * width;
        limits.max_height = 2 * height;
        limits.max_seconds = kMaxInputSeconds;
        character_reader = edit::OpenVideo(character_path, "character", limits);
        character_frames.emplace(*character_reader, "character");
    } else {
        still = edit::LoadImage(character_path, "character", 2 * width, 2 * height);
    }
    SimulateLatency(env, ctx, 0.1, 0.3);

    constexpr int kFps = 24;
    media::VideoSpec spec;
    spec.width = width;
    spec.height = height;
    spec.fps = kFps;
    spec.frame_count = media::FrameCount(reference_timing.seconds, kFps);
    spec.format = media::VideoFormat::kMp4;
    const std::string out_path = edit::OutputPath(ctx, "character_performance.mp4");
    media::VideoWriter writer(spec, out_path);

    const double intensity = std::clamp(input.value("expressionIntensity", 3), 1, 5) / 3.0;
    const double body = input.value("bodyControl", false) ? 1.0 : 0.45;
    const std::uint64_t seed = SeedFor(ctx);
    const double phase = static_cast<double>(edit::Mix64(seed) % 6283) / 1000.0;
    const double period = 3.0 + static_cast<double>(edit::Mix64(seed + 1) % 2000) / 1000.0;
    std::size_t cursor = 0;
    // Frames are drawn on a producer thread a few frames ahead of the encoder (see
    // video_upscale); `cursor` and the character's sampler belong to that thread.
    EncodeAhead(
        ctx, writer, spec.frame_count, width, height,
        [&](int i, RgbImage& out) {
            const double t = (i + 0.5) / kFps;
            const Motion& m = MotionAt(track, t, cursor);
            const double sway = 0.012 * std::sin(2 * M_PI * t / period + phase);
            const double bob = 0.008 * std::sin(4 * M_PI * t / period + 2 * phase);
            const double zoom = 1.12 + 0.14 * intensity * m.energy;
            const double cx = 0.5 + body * 0.35 * (m.x - 0.5) + sway;
            const double cy = 0.5 + body * 0.25 * (m.y - 0.5) + bob - 0.02 * intensity * m.energy;
            const RgbImage& source = character_frames ? character_frames->Get(t) : still;
            media::Grade grade;
            grade.contrast = 1.0 + 0.12 * intensity * m.energy;
            grade.brightness = 0.03 * intensity * m.energy;
            media::CameraView(source, zoom, std::clamp(cx, 0.0, 1.0), std::clamp(cy, 0.0, 1.0), out,
                              &grade);
        },
        0.3, 0.68);
    writer.Finish();
    ctx.Progress(1.0);
    return {VideoOutput(out_path, spec.format)};
}

// avatar_videos: the avatar's portrait (procedural, from the preset id or the custom avatar's
// id) with its mouth opened by the loudness envelope of the speech and the eyes blinking now
// and then; the speech is the audio input, or the text spoken by espeak-ng with the avatar
// voice (speech.voice, else the avatar's own). 1280x720, 24 fps, as long as the speech (rounded
// up to whole frames), H.264 MP4 with a 48 kHz stereo AAC track (the speech, mixed to mono, on
// both channels).
std::vector<Output> AvatarVideos(const PipelineEnv& env, TaskContext& ctx) {
    constexpr int kWidth = 1280;
    constexpr int kHeight = 720;
    constexpr int kFps = 24;
    const auto& input = ctx.input();
    const auto& avatar = input.at("avatar");
    const bool custom = avatar.value("type", "") == "custom";
    const std::string avatar_id =
        custom ? avatar.value("avatarId", "custom") : avatar.value("presetId", "influencer");
    const auto& speech = input.at("speech");
    // A custom avatar's processed picture and voice, copied into the input when the task was
    // created (src/api/generation.cpp); a task stored without them gets the procedural portrait.
    std::optional<RgbImage> picture;
    if (custom && avatar.contains("portrait")) {
        const std::string path = ctx.Input(avatar.value("portrait", ""), MediaKind::kImage);
        picture = edit::LoadImage(path, "avatar", 2048, 2048);
    }

    media::AudioBuffer audio;
    if (speech.value("type", "") == "audio") {
        const std::string path = ctx.Input(speech.value("audio", ""), MediaKind::kAudio);
        try {
            media::AudioReadOptions options;
            options.sample_rate = media::kAudioSampleRate;
            options.channels = 1;  // speech: played on both channels of the output
            options.max_seconds = 600;
            audio = media::ReadAudio(path, options, [&] { return !ctx.IsCancelled(); });
        } catch (const media::MediaError& e) {
            ctx.CheckCancelled();
            throw edit::InputFailure("speech.audio", e);
        }
        if (audio.frames() == 0) {
            throw TaskFailure("ASSET.INVALID", "The audio of `speech.audio` is empty");
        }
    } else {
        // The voice: speech.voice, else the custom avatar's own, else the avatar's default. A
        // custom voice carries its profile (copied in when the task was created); one without
        // (deleted before) leaves the default.
        std::string voice_id = edit::DefaultAvatarVoice(avatar_id);
        const nlohmann::json* profile = nullptr;
        const auto choose = [&](const nlohmann::json& voice) {
            if (!voice.is_object()) return;
            if (voice.value("type", "") == "custom") {
                if (voice.contains("profile")) profile = &voice.at("profile");
            } else {
                voice_id = voice.value("presetId", voice_id);
                profile = nullptr;
            }
        };
        if (custom && avatar.contains("voice")) choose(avatar.at("voice"));
        if (speech.contains("voice")) choose(speech.at("voice"));
        const auto keep_going = [&] { return !ctx.IsCancelled(); };
        media::AudioBuffer spoken;
        if (profile != nullptr) {
            spoken = media::SpeakWithProfile(media::ProfileFromJson(*profile),
                                             speech.value("text", ""), keep_going);
        } else {
            media::SpeechParams params = edit::AvatarVoice(voice_id);
            params.text = speech.value("text", "");
            spoken = media::SynthesizeSpeech(params, keep_going);
        }
        ctx.CheckCancelled();
        audio = media::Resample(spoken, media::kAudioSampleRate, 1);
        if (audio.frames() == 0) {
            throw TaskFailure("INTERNAL", "speech synthesis returned no audio");
        }
    }
    ctx.Progress(0.15);
    SimulateLatency(env, ctx, 0.15, 0.3);

    const int frames = std::max(1, static_cast<int>(std::ceil(audio.seconds() * kFps - 1e-9)));
    const std::vector<double> openness = edit::MouthOpenness(audio, kFps, frames);
    const edit::Portrait portrait = picture ? edit::PortraitFromPicture(*picture, kWidth, kHeight)
                                            : edit::RenderPortrait(avatar_id, kWidth, kHeight);
    const std::uint64_t seed = SeedFor(ctx) ^ edit::HashString(avatar_id);

    media::VideoSpec spec;
    spec.width = kWidth;
    spec.height = kHeight;
    spec.fps = kFps;
    spec.frame_count = frames;
    spec.format = media::VideoFormat::kMp4;
    spec.audio = true;
    const std::string out_path = edit::OutputPath(ctx, "avatar_videos.mp4");
    media::VideoWriter writer(spec, out_path, TrackSource(audio));
    // Frames are drawn on a producer thread a few frames ahead of the encoder (see
    // video_upscale).
    EncodeAhead(
        ctx, writer, frames, kWidth, kHeight,
        [&](int i, RgbImage& out) {
            edit::DrawFrame(portrait, openness[i], edit::BlinkAt(seed, i, kFps), out);
        },
        0.3, 0.68);
    writer.Finish();
    ctx.Progress(1.0);
    return {VideoOutput(out_path, spec.format)};
}

}  // namespace genhost::providers
