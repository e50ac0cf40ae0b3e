// Video generation pipelines of the builtin provider: text_to_video, image_to_video,
// video_to_video.
//
// Every pipeline makes one output file in ctx.scratch_dir(): the size of the request's ratio or
// resolution (an aspect such as 16:9 at a resolution class, or the input's aspect for
// `adaptive` / `auto_*` / absent ratios), `duration` seconds (`auto` or absent: the catalog's
// default) at 24 fps, in the requested outputFormat (MP4/H.264 by default), with a synthesised
// stereo AAC track when the model's audio option is on. Generated pictures are composed at half
// the output size for outputs wider than 640 pixels and scaled up (CameraView); video_to_video's
// footage is composed at the output size. Frames are drawn on a thread that runs a few frames
// ahead of the encoder (video_frame_pipeline.hpp).
//
// - text_to_video paints the procedural scene of the prompt; reference pictures (and the first
//   frames of reference videos) steer its palette.
// - image_to_video moves a camera over the prompt image (the prompt picks the move: zoom in /
//   out, pan, tilt, static); with a last keyframe the two images cross over; the prompt's grade
//   (and the references' colours) rise over the clip.
// - video_to_video grades the source video by the prompt and references, crops it to the output
//   size (aleph2's targetAspectRatio letterboxes it), blends aleph2's keyframes in at their times,
//   loops it to the requested duration in reference mode, keeps its duration in edit mode (and
//   for aleph2 and omni_flash, whose output is 720p in the input's orientation), and in extend
//   mode keeps the input and appends `duration` seconds continuing from its last frame.
//
// An input that cannot be decoded ends the task with ASSET.INVALID.
#include "pipelines.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "genhost/media/audio.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/video.hpp"
#include "video_frame_pipeline.hpp"

namespace genhost::providers {
namespace {

using json = nlohmann::json;

constexpr int kFps = 24;
constexpr int kMaxReferences = 10;   // reference pictures read per task
constexpr int kReferenceSide = 256;  // their decode size: only their colours matter

std::string Lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool Contains(const std::string& haystack, std::string_view needle) {
    return haystack.find(needle) != std::string::npos;
}

[[noreturn]] void Undecodable(const std::string& what, const std::exception& e) {
    throw TaskFailure("ASSET.INVALID", "The " + what + " could not be decoded: " + e.what());
}

int Even(double v) { return std::max(2, static_cast<int>(std::lround(v / 2.0)) * 2); }

// ShortSide is the short side in pixels of a resolution class ("720p", "2k", "4k"); 0 if unknown.
int ShortSide(const std::string& resolution) {
    const std::string r = Lower(resolution);
    if (r == "360p") return 360;
    if (r == "480p") return 480;
    if (r == "720p") return 720;
    if (r == "768p") return 768;
    if (r == "1080p" || r == "1k") return 1080;
    if (r == "2k") return 1440;
    if (r == "4k") return 2160;
    return 0;
}

std::pair<int, int> SizeForAspect(double aspect, int short_side) {
    if (aspect >= 1.0) return {Even(short_side * aspect), Even(short_side)};
    return {Even(short_side), Even(short_side / aspect)};
}

std::string StringField(const json& input, const char* name) {
    const auto it = input.find(name);
    return it != input.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Plan is what one pipeline run writes.
struct Plan {
    int width = 0;
    int height = 0;
    int work_width = 0;  // the size frames are composed at
    int work_height = 0;
    int frames = 0;
    media::VideoFormat format = media::VideoFormat::kMp4;
    media::ProresProfile prores = media::ProresProfile::k4444;
    bool audio = false;
    std::uint64_t seed = 0;
    std::string prompt;
};

// Job is the task's model capabilities and input.
struct Job {
    json caps;
    const json& input;
    std::uint64_t seed;
    std::string prompt;
};

Job MakeJob(const PipelineEnv& env, const TaskContext& ctx) {
    const auto* model = env.catalog.FindModel(ctx.model());
    if (model == nullptr) throw TaskFailure("INTERNAL", "Unknown model " + ctx.model());
    return Job{model->CapabilitiesFor(ctx.endpoint()), ctx.input(), SeedFor(ctx),
               StringField(ctx.input(), "promptText")};
}

// OutputSize is the output's size from `ratio` and `resolution`, following `input_aspect` (the
// input picture's width / height) where the ratio leaves the aspect open.
std::pair<int, int> OutputSize(const Job& job, std::optional<double> input_aspect) {
    const std::string ratio = StringField(job.input, "ratio");
    std::string resolution = StringField(job.input, "resolution");
    if (resolution.empty()) {
        resolution = job.caps.value("resolutions", json::object()).value("default", "");
    }
    int w = 0;
    int h = 0;
    if (ParseRatio(ratio, w, h)) {
        if (w >= 64 && h >= 64) return {w + (w & 1), h + (h & 1)};  // a pixel size
        const int side = ShortSide(resolution);                     // an aspect such as 16:9
        return SizeForAspect(static_cast<double>(w) / h, side > 0 ? side : 720);
    }
    // Absent, "adaptive" or "auto_<class>": the input decides the aspect.
    const double aspect = input_aspect.value_or(16.0 / 9.0);
    std::string size_class = ratio.rfind("auto_", 0) == 0 ? ratio.substr(5) : std::string();
    const json ratios = job.caps.value("ratios", json::array());
    const json classes = job.caps.value("ratio_resolutions", json::object());
    std::vector<std::pair<int, int>> all;
    std::vector<std::pair<int, int>> in_class;
    const std::string wanted = size_class.empty() ? "720p" : size_class;
    for (const auto& r : ratios) {
        if (!r.is_string() || !ParseRatio(r.get<std::string>(), w, h) || w < 64 || h < 64) continue;
        all.emplace_back(w, h);
        if (classes.value(r.get<std::string>(), "") == wanted) in_class.emplace_back(w, h);
    }
    const auto& candidates = in_class.empty() ? all : in_class;
    if (!candidates.empty()) {
        auto best = candidates.front();
        double best_error = 1e9;
        for (const auto& c : candidates) {
            const double error =
                std::abs(std::log(static_cast<double>(c.first) / c.second) - std::log(aspect));
            if (error < best_error - 1e-9) {
                best_error = error;
                best = c;
            }
        }
        return best;
    }
    int side = ShortSide(size_class.empty() ? resolution : size_class);
    return SizeForAspect(aspect, side > 0 ? side : 720);
}

// RequestedSeconds is `duration` when it is a number, else the catalog's default.
double RequestedSeconds(const Job& job) {
    const auto it = job.input.find("duration");
    if (it != job.input.end() && it->is_number()) return std::max(0.0, it->get<double>());
    const json durations = job.caps.value("durations", json::object());
    if (durations.contains("default") && durations["default"].is_number()) {
        return durations["default"].get<double>();
    }
    if (durations.contains("min") && durations["min"].is_number()) {
        return durations["min"].get<double>();
    }
    return 5.0;
}

bool HasDuration(const Job& job) {
    const auto it = job.input.find("duration");
    return it != job.input.end() && it->is_number();
}

// FinishPlan fills in format, audio and work size for an output of `size` and `seconds`.
Plan MakePlan(const Job& job, std::pair<int, int> size, double seconds) {
    Plan plan;
    plan.width = size.first;
    plan.height = size.second;
    plan.frames = media::FrameCount(seconds, kFps);
    plan.seed = job.seed;
    plan.prompt = job.prompt;
    const std::string format = job.input.value("outputFormat", "mp4");
    const auto parsed = media::ParseVideoFormat(format);
    if (!parsed) throw TaskFailure("INTERNAL", "Unknown outputFormat " + format);
    plan.format = *parsed;
    const std::string profile = StringField(job.input, "proresProfile");
    if (const auto p = media::ParseProresProfile(profile)) {
        plan.prores = *p;
    } else {
        plan.prores = plan.format == media::VideoFormat::kHdrProres ? media::ProresProfile::kHq
                                                                    : media::ProresProfile::k4444;
    }
    const json audio = job.caps.value("audio", json::object());
    if (audio.value("output", false) && !media::IsImageSequence(plan.format)) {
        plan.audio = true;
        if (audio.value("toggle", false)) {
            const auto it = job.input.find("audio");
            plan.audio = it != job.input.end() && it->is_boolean() ? it->get<bool>()
                                                                   : audio.value("default", false);
        }
    }
    // Compose at half size above 640 pixels: the writer scales up in its conversion pass.
    const double scale = std::max(plan.width, plan.height) > 640 ? 0.5 : 1.0;
    plan.work_width = std::max(2, static_cast<int>(std::lround(plan.width * scale)));
    plan.work_height = std::max(2, static_cast<int>(std::lround(plan.height * scale)));
    return plan;
}

// --- inputs ------------------------------------------------------------------------------

std::string MediaUri(const json& item) {
    if (item.is_string()) return item.get<std::string>();
    if (item.is_object()) return StringField(item, "uri");
    return {};
}

media::RgbImage LoadPicture(const TaskContext& ctx, const std::string& uri, MediaKind kind,
                            const std::string& what, int max_side) {
    const std::string path = ctx.Input(uri, kind);
    try {
        return media::LoadImageRgb(path, max_side, max_side);
    } catch (const media::MediaError& e) {
        Undecodable(what, e);
    }
}

// ReferencePictures reads `references` (images) and the first frames of `referenceVideos`.
std::vector<media::RgbImage> ReferencePictures(const TaskContext& ctx,
                                               std::vector<std::string> image_uris = {}) {
    std::vector<media::RgbImage> out;
    const auto& input = ctx.input();
    if (const auto it = input.find("references"); it != input.end() && it->is_array()) {
        for (const auto& r : *it) image_uris.push_back(MediaUri(r));
    }
    for (const auto& uri : image_uris) {
        if (out.size() >= kMaxReferences) break;
        if (uri.empty()) continue;
        ctx.CheckCancelled();
        out.push_back(LoadPicture(ctx, uri, MediaKind::kImage, "reference image", kReferenceSide));
    }
    if (const auto it = input.find("referenceVideos"); it != input.end() && it->is_array()) {
        for (const auto& r : *it) {
            if (out.size() >= kMaxReferences) break;
            const std::string uri = MediaUri(r);
            if (uri.empty()) continue;
            ctx.CheckCancelled();
            out.push_back(
                LoadPicture(ctx, uri, MediaKind::kVideo, "reference video", kReferenceSide));
        }
    }
    return out;
}

// GradeFor is the prompt's grade, tinted toward the references' average colour.
media::Grade GradeFor(const Plan& plan, const std::vector<media::RgbImage>& references) {
    media::Grade grade = media::PromptGrade(plan.seed, plan.prompt);
    if (references.empty()) return grade;
    std::array<double, 3> mean{0, 0, 0};
    for (const auto& r : references) {
        const auto m = media::MeanColour(r);
        for (int c = 0; c < 3; ++c) mean[c] += m[c] / static_cast<double>(references.size());
    }
    const double grey = std::max(0.05, (mean[0] + mean[1] + mean[2]) / 3.0);
    auto gain = [&](int c) { return std::clamp(1.0 + 0.3 * (mean[c] - grey) / grey, 0.8, 1.25); };
    grade.tint_r *= gain(0);
    grade.tint_g *= gain(1);
    grade.tint_b *= gain(2);
    return grade;
}

// Motion is a camera move over a picture: zoom and window centre from start to end.
struct Motion {
    double zoom0 = 1.0, zoom1 = 1.15;
    double cx0 = 0.5, cx1 = 0.5;
    double cy0 = 0.5, cy1 = 0.5;

    void At(double u, double& zoom, double& cx, double& cy) const {
        const double s = u * u * (3 - 2 * u);  // smoothstep: eases in and out
        zoom = zoom0 + (zoom1 - zoom0) * s;
        cx = cx0 + (cx1 - cx0) * s;
        cy = cy0 + (cy1 - cy0) * s;
    }
};

// MotionFor picks the camera move the prompt asks for, else one from the seed.
Motion MotionFor(std::uint64_t seed, const std::string& prompt) {
    const std::string p = Lower(prompt);
    Motion m;
    if (Contains(p, "static") || Contains(p, "still camera") || Contains(p, "locked")) {
        m.zoom0 = m.zoom1 = 1.04;
    } else if (Contains(p, "zoom out") || Contains(p, "pull back") || Contains(p, "dolly out")) {
        m.zoom0 = 1.25;
        m.zoom1 = 1.0;
    } else if (Contains(p, "pan left")) {
        m.zoom0 = m.zoom1 = 1.2;
        m.cx0 = 0.7;
        m.cx1 = 0.3;
    } else if (Contains(p, "pan right")) {
        m.zoom0 = m.zoom1 = 1.2;
        m.cx0 = 0.3;
        m.cx1 = 0.7;
    } else if (Contains(p, "tilt up")) {
        m.zoom0 = m.zoom1 = 1.2;
        m.cy0 = 0.7;
        m.cy1 = 0.3;
    } else if (Contains(p, "tilt down")) {
        m.zoom0 = m.zoom1 = 1.2;
        m.cy0 = 0.3;
        m.cy1 = 0.7;
    } else if (Contains(p, "zoom in") || Contains(p, "push in") || Contains(p, "dolly in")) {
        m.zoom0 = 1.0;
        m.zoom1 = 1.3;
    } else {
        // A slow push-in drifting in a direction chosen by the seed.
        const double angle = static_cast<double>(seed % 360) * 3.14159265358979 / 180.0;
        m.zoom0 = 1.0;
        m.zoom1 = 1.18;
        m.cx1 = 0.5 + 0.12 * std::cos(angle);
        m.cy1 = 0.5 + 0.12 * std::sin(angle);
    }
    return m;
}

// --- encoding -------------------------------------------------------------------------------

// Render composes frame `index` (time `seconds`) into `frame`, which has the work size.
using Render = std::function<void(int index, double seconds, media::RgbImage& frame)>;

std::vector<Output> Encode(const PipelineEnv& env, TaskContext& ctx, const Plan& plan,
                           const Render& render) {
    if (ctx.scratch_dir().empty()) {
        throw TaskFailure("INTERNAL", "video outputs need a scratch folder");
    }
    SimulateLatency(env, ctx, 0.0, 0.3);
    media::VideoSpec spec;
    spec.width = plan.width;
    spec.height = plan.height;
    spec.fps = kFps;
    spec.frame_count = plan.frames;
    spec.format = plan.format;
    spec.prores_profile = plan.prores;
    spec.audio = plan.audio;

    media::AudioSource audio;
    std::shared_ptr<media::AudioBuffer> sound;
    if (plan.audio) {
        media::EffectSpec effect;
        effect.prompt = plan.prompt;
        effect.seconds = static_cast<double>(plan.frames) / kFps;
        effect.seed = plan.seed;
        effect.sample_rate = media::kAudioSampleRate;
        effect.channels = 2;
        sound = std::make_shared<media::AudioBuffer>(media::SynthesizeEffect(effect));
        ctx.CheckCancelled();
        audio = [sound](std::int64_t first, int count, float* left, float* right) {
            const std::int64_t frames = sound->frames();
            for (int i = 0; i < count; ++i) {
                const std::int64_t at = first + i;
                if (at >= 0 && at < frames) {
                    left[i] = sound->samples[static_cast<std::size_t>(2 * at)];
                    right[i] = sound->samples[static_cast<std::size_t>(2 * at + 1)];
                } else {
                    left[i] = right[i] = 0.0f;
                }
            }
        };
    }

    std::filesystem::create_directories(ctx.scratch_dir());
    const std::string extension(media::VideoFormatExtension(plan.format));
    const std::string path = ctx.scratch_dir() + "/video_0." + extension;
    media::VideoWriter writer(spec, path, std::move(audio));
    {
        // Frames are drawn (and scaled up to the output size, as the writer would) on a
        // producer thread a few frames ahead of the encoder; `frame` is the one work picture
        // `render` sees when the work size is smaller, else it draws straight into the slot
        // (every render writes every pixel). The pipeline is destroyed (its thread stopped and
        // joined) before the writer on every path.
        const bool scaled = plan.work_width != plan.width || plan.work_height != plan.height;
        media::RgbImage frame(scaled ? plan.work_width : 0, scaled ? plan.work_height : 0);
        EncodeAhead(
            ctx, writer, plan.frames, plan.width, plan.height,
            [&](int i, media::RgbImage& out) {
                const double t = static_cast<double>(i) / kFps;
                if (scaled) {
                    render(i, t, frame);
                    media::CameraView(frame, 1.0, 0.5, 0.5, out);
                } else {
                    render(i, t, out);  // composed at the output size: drawn in place
                }
            },
            0.3, 0.69);
    }
    ctx.CheckCancelled();
    writer.Finish();
    ctx.Progress(1.0);
    return {Output{"0." + extension, {}, path}};
}

// --- the source video of video_to_video -----------------------------------------------------

// SourceClip streams an input video's frames by time, reopening it to loop.
class SourceClip {
  public:
    SourceClip(std::string path, int max_side) : path_(std::move(path)) {
        limits_.max_width = max_side;
        limits_.max_height = max_side;
        Open();
        info_ = reader_->info();
        if (info_.duration_seconds <= 0) info_.duration_seconds = MeasureDuration();
    }

    const media::VideoInfo& info() const { return info_; }
    double seconds() const { return std::max(info_.duration_seconds, 1.0 / kFps); }

    // At returns the picture shown at `t` seconds of the input (a time before the current one
    // restarts the input: looping).
    const media::RgbImage& At(double t) {
        try {
            if (t + 1e-9 < current_time_) Open();
            while (has_pending_ && pending_time_ <= t + 1e-6) {
                std::swap(current_, pending_);
                current_time_ = pending_time_;
                has_pending_ = reader_->Next(pending_, pending_time_);
            }
        } catch (const media::MediaError& e) {
            Undecodable("input video", e);
        }
        return current_;
    }

  private:
    void Open() {
        try {
            reader_ = std::make_unique<media::VideoReader>(path_, limits_);
            if (!reader_->Next(current_, current_time_)) {
                throw media::MediaError("the video has no pictures");
            }
            current_time_ = std::min(current_time_, 0.0);  // the first picture shows from 0
            has_pending_ = reader_->Next(pending_, pending_time_);
        } catch (const media::MediaError& e) {
            Undecodable("input video", e);
        }
    }

    double MeasureDuration() {
        double last = current_time_;
        while (has_pending_) {
            last = pending_time_;
            At(pending_time_);
        }
        const double rate = info_.frame_rate > 0 ? info_.frame_rate : kFps;
        Open();
        return last + 1.0 / rate;
    }

    std::string path_;
    media::VideoReader::Limits limits_;
    std::unique_ptr<media::VideoReader> reader_;
    media::VideoInfo info_;
    media::RgbImage current_;
    media::RgbImage pending_;
    double current_time_ = 0;
    double pending_time_ = 0;
    bool has_pending_ = false;
};

// Keyframe is an aleph2 keyframe: a picture blended in around a time or over a range.
struct Keyframe {
    media::RgbImage view;  // at the work size
    double seconds = 0;
    std::optional<std::pair<double, double>> range;

    double WeightAt(double t) const {
        if (range) {
            if (t >= range->first && t < range->second) return 0.5;
            const double d = t < range->first ? range->first - t : t - range->second;
            return std::max(0.0, 0.5 * (1.0 - d / 0.5));
        }
        return std::max(0.0, 0.7 * (1.0 - std::abs(t - seconds) / 0.75));
    }
};

std::optional<double> ParseAspect(const std::string& aspect) {
    int w = 0;
    int h = 0;
    if (!ParseRatio(aspect, w, h)) return std::nullopt;
    return static_cast<double>(w) / h;
}

}  // namespace

std::vector<Output> TextToVideo(const PipelineEnv& env, TaskContext& ctx) {
    const Job job = MakeJob(env, ctx);
    const Plan plan = MakePlan(job, OutputSize(job, std::nullopt), RequestedSeconds(job));
    const auto references = ReferencePictures(ctx);
    const media::SceneAnimator scene(plan.seed, plan.prompt, references);
    return Encode(env, ctx, plan,
                  [&](int, double t, media::RgbImage& frame) { scene.Paint(t, frame); });
}

std::vector<Output> ImageToVideo(const PipelineEnv& env, TaskContext& ctx) {
    const Job job = MakeJob(env, ctx);
    // promptImage: a media string, or items {uri, position?}; items without a position are
    // reference images (the first of them is animated when no keyframe is given).
    std::string first_uri;
    std::string last_uri;
    std::vector<std::string> reference_uris;
    const auto& prompt_image =
        job.input.contains("promptImage") ? job.input["promptImage"] : json();
    if (prompt_image.is_string()) {
        first_uri = prompt_image.get<std::string>();
    } else if (prompt_image.is_array()) {
        for (const auto& item : prompt_image) {
            const std::string position = item.is_object() ? StringField(item, "position") : "";
            if (position == "first" && first_uri.empty()) {
                first_uri = MediaUri(item);
            } else if (position == "last" && last_uri.empty()) {
                last_uri = MediaUri(item);
            } else if (position.empty()) {
                reference_uris.push_back(MediaUri(item));
            }
        }
    }
    if (first_uri.empty() && !reference_uris.empty()) first_uri = reference_uris.front();
    if (first_uri.empty())
        throw TaskFailure("INTERNAL",
                          ctx.endpoint() + " (" + ctx.model() + ") needs a promptImage");

    // The image's aspect decides open ratios; decode it once at a bounded size to learn it.
    media::RgbImage first = LoadPicture(ctx, first_uri, MediaKind::kImage, "prompt image", 4096);
    const double aspect = static_cast<double>(first.width) / first.height;
    const Plan plan = MakePlan(job, OutputSize(job, aspect), RequestedSeconds(job));
    const int max_side = 2 * std::max(plan.work_width, plan.work_height);
    if (std::max(first.width, first.height) > max_side) {
        const double s = static_cast<double>(max_side) / std::max(first.width, first.height);
        first = media::Resize(first, std::max(1, static_cast<int>(std::lround(first.width * s))),
                              std::max(1, static_cast<int>(std::lround(first.height * s))));
    }
    std::optional<media::RgbImage> last;
    if (!last_uri.empty()) {
        last = LoadPicture(ctx, last_uri, MediaKind::kImage, "last frame image", max_side);
    }
    const auto references = ReferencePictures(ctx, reference_uris);
    const media::Grade grade = GradeFor(plan, references);
    const Motion motion = MotionFor(plan.seed, plan.prompt);
    // The last keyframe is reached by the reverse move, so the camera settles on it.
    Motion toward_last = motion;
    std::swap(toward_last.zoom0, toward_last.zoom1);
    std::swap(toward_last.cx0, toward_last.cx1);
    std::swap(toward_last.cy0, toward_last.cy1);
    toward_last.zoom1 = 1.0;
    toward_last.cx1 = toward_last.cy1 = 0.5;
    Motion from_first = motion;
    if (last) {
        from_first.zoom0 = 1.0;
        from_first.cx0 = from_first.cy0 = 0.5;
    }

    media::RgbImage a(plan.work_width, plan.work_height);
    media::RgbImage b(plan.work_width, plan.work_height);
    const int frames = plan.frames;
    return Encode(env, ctx, plan, [&](int i, double, media::RgbImage& frame) {
        const double u = frames > 1 ? static_cast<double>(i) / (frames - 1) : 0.0;
        double zoom = 1;
        double cx = 0.5;
        double cy = 0.5;
        if (!last) {
            motion.At(u, zoom, cx, cy);
            media::CameraView(first, zoom, cx, cy, frame, &grade, 0.45 * u);
            return;
        }
        from_first.At(u, zoom, cx, cy);
        media::CameraView(first, zoom, cx, cy, a);
        toward_last.At(u, zoom, cx, cy);
        media::CameraView(*last, zoom, cx, cy, b);
        media::CrossFade(a, b, u * u * (3 - 2 * u), frame);
        media::ApplyGrade(grade, 0.4 * std::sin(3.14159265358979 * u), frame);
    });
}

std::vector<Output> VideoToVideo(const PipelineEnv& env, TaskContext& ctx) {
    const Job job = MakeJob(env, ctx);
    const std::string model = ctx.model();
    std::string video_uri = StringField(job.input, "videoUri");
    if (video_uri.empty()) video_uri = StringField(job.input, "promptVideo");
    if (video_uri.empty())
        throw TaskFailure("INTERNAL",
                          ctx.endpoint() + " (" + ctx.model() + ") needs an input video");
    const std::string mode = job.input.value("mode", "reference");

    // Open once at a generous size to learn the input's size and duration.
    const std::string path = ctx.Input(video_uri, MediaKind::kVideo);
    media::VideoInfo info;
    try {
        media::VideoReader probe(path);
        info = probe.info();
    } catch (const media::MediaError& e) {
        Undecodable("input video", e);
    }
    if (info.width < 1 || info.height < 1) {
        throw TaskFailure("ASSET.INVALID", "The input video has no picture size");
    }
    const double input_aspect = static_cast<double>(info.width) / info.height;
    const auto target_aspect = ParseAspect(StringField(job.input, "targetAspectRatio"));

    // Size.
    std::pair<int, int> size;
    if (model == "omni_flash") {
        size = info.width > info.height   ? std::pair{1280, 720}
               : info.width < info.height ? std::pair{720, 1280}
                                          : std::pair{720, 720};
    } else if (model == "aleph2") {
        int w = 0;
        int h = 0;
        const std::string ratio = StringField(job.input, "ratio");
        if (ParseRatio(ratio, w, h) && w >= 64 && h >= 64 && w <= 4096 && h <= 4096) {
            size = {w + (w & 1), h + (h & 1)};
        } else {
            // The input's size (at most 1920 on the long side), widened or heightened to the
            // target aspect when outpainting.
            double ow = info.width;
            double oh = info.height;
            if (target_aspect) {
                if (*target_aspect > input_aspect) {
                    ow = oh * *target_aspect;
                } else {
                    oh = ow / *target_aspect;
                }
            }
            const double s = std::min(1.0, 1920.0 / std::max(ow, oh));
            size = {Even(ow * s), Even(oh * s)};
        }
    } else {
        size = OutputSize(job, input_aspect);
    }

    // Duration: aleph2 and omni_flash keep the input's; edit keeps it unless a duration is
    // given; extend appends `duration` (or the default) to it; reference makes `duration`.
    Plan plan = MakePlan(job, size, 1.0);
    // The source is footage, not a procedural scene: it is composed at the output size, so it
    // is sampled once (not scaled down to half size and back up).
    plan.work_width = plan.width;
    plan.work_height = plan.height;
    SourceClip clip(path, 2 * std::max(plan.work_width, plan.work_height));
    const double input_seconds = clip.seconds();
    double seconds = RequestedSeconds(job);
    const bool extend = mode == "extend";
    if (model == "aleph2" || model == "omni_flash") {
        seconds = input_seconds;
    } else if (mode == "edit") {
        seconds = HasDuration(job) ? RequestedSeconds(job) : input_seconds;
    } else if (extend) {
        seconds = input_seconds + RequestedSeconds(job);
    }
    plan.frames = media::FrameCount(seconds, kFps);
    const int input_frames = media::FrameCount(input_seconds, kFps);

    // Keyframes (aleph2).
    std::vector<Keyframe> keyframes;
    if (const auto it = job.input.find("keyframes"); it != job.input.end() && it->is_array()) {
        for (const auto& k : *it) {
            ctx.CheckCancelled();
            Keyframe kf;
            const auto picture = LoadPicture(ctx, MediaUri(k), MediaKind::kImage, "keyframe image",
                                             2 * std::max(plan.work_width, plan.work_height));
            kf.view = media::RgbImage(plan.work_width, plan.work_height);
            media::CameraView(picture, 1.0, 0.5, 0.5, kf.view);
            if (k.contains("seconds") && k["seconds"].is_number()) {
                kf.seconds = k["seconds"].get<double>();
            } else if (k.contains("at") && k["at"].is_number()) {
                kf.seconds = k["at"].get<double>() * input_seconds;
            }
            if (k.contains("range") && k["range"].is_object()) {
                kf.range = std::pair{k["range"].value("start_seconds", 0.0),
                                     k["range"].value("end_seconds", 0.0)};
            }
            keyframes.push_back(std::move(kf));
        }
    }

    const auto references = ReferencePictures(ctx);
    const media::Grade grade = GradeFor(plan, references);
    const Motion motion = MotionFor(plan.seed, plan.prompt);
    const double strength = mode == "edit" ? 0.55 : 0.7;
    const bool letterbox = target_aspect.has_value();
    media::RgbImage held;  // extend: the input's last picture
    media::RgbImage blended(plan.work_width, plan.work_height);
    const double extension_seconds = std::max(1.0 / kFps, seconds - input_seconds);

    return Encode(env, ctx, plan, [&](int i, double t, media::RgbImage& frame) {
        if (extend && i >= input_frames) {
            // New footage continuing from the last picture: a slow camera move whose grade
            // rises toward the prompt's.
            if (held.pixels.empty()) held = clip.At(input_seconds);
            const double u = std::min(1.0, (t - input_seconds) / extension_seconds);
            double zoom = 1;
            double cx = 0.5;
            double cy = 0.5;
            motion.At(u, zoom, cx, cy);
            media::CameraView(held, zoom, cx, cy, frame, &grade, 0.5 * u);
            return;
        }
        const double source_time = extend ? t : std::fmod(t, input_seconds);
        const media::RgbImage& source = clip.At(source_time);
        if (letterbox) {
            media::Letterbox(source, frame);
        } else {
            media::CameraView(source, 1.0, 0.5, 0.5, frame);
        }
        if (extend) return;  // the input part is kept as it is
        media::ApplyGrade(grade, strength, frame);
        for (const auto& kf : keyframes) {
            const double w = kf.WeightAt(t);
            if (w <= 0) continue;
            media::CrossFade(frame, kf.view, w, blended);
            std::swap(frame.pixels, blended.pixels);
        }
    });
}

}  // namespace genhost::providers
