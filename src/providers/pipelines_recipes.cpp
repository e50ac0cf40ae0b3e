// The recipes of the builtin provider (CLIENTS.md 3.4, docs/recipes.md): each one a multi-step
// pipeline over the other builtin pipelines, run as one task.
//
// A step that is another endpoint's work (a shot from image_to_video, a soundtrack from
// sound_effect, a voiceover from text_to_speech, backgrounds from text_to_image) runs that
// endpoint's builtin pipeline on a sub-input, in a sub-context sharing the task's cancellation
// and progress (scaled into the step's range), its resolver and a folder of the task's scratch
// space; the recipe's own latency is spent once, the steps spend none. The other steps (cut-outs,
// compositing, joining) run here, on the media module's reader and writer.
//
// Every step is visible in the result: the task's outputs are the final media first, then every
// step's media in step order, then `steps.json`, the manifest of the steps (each: its name, the
// endpoint and model or the operation it ran, a summary of its inputs, its output files and
// their durations). Everything is deterministic for a given input and seed (SeedFor).
#include "pipelines.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "edit_filters.hpp"
#include "genhost/media/audio.hpp"
#include "genhost/media/caption.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/video.hpp"
#include "recipe_plan.hpp"

namespace genhost::providers {
namespace {

using json = nlohmann::json;
using media::RgbImage;
using recipes::Matte;

constexpr int kFps = 24;
// kStepScheme names a file an earlier step made, as a media string of a later step's input.
constexpr std::string_view kStepScheme = "genhost-step:";
// The builtin models the steps run as (docs/recipes.md).
constexpr const char* kShotModel = "gen4.5";
constexpr const char* kSoundModel = "voice_text_to_sound_v2";
constexpr const char* kVoiceModel = "voice_v3";
constexpr const char* kVoicePreset = "Maya";
constexpr const char* kRestyleModel = "seedance2";
constexpr const char* kImageModel = "gen4_image";
constexpr const char* kStockImageModel = "image_gen_2";

using Pipeline = std::vector<Output> (*)(const PipelineEnv&, TaskContext&);

// StepResolver resolves a step's media: files of earlier steps by path, everything else (the
// request's own media) through the task's resolver.
class StepResolver final : public InputResolver {
  public:
    explicit StepResolver(const TaskContext& task) : task_(task) {}
    std::string Resolve(const std::string& media, MediaKind kind,
                        const std::string& /*scratch_dir*/) const override {
        if (media.rfind(kStepScheme, 0) == 0) return media.substr(kStepScheme.size());
        return task_.Input(media, kind);
    }

  private:
    const TaskContext& task_;
};

// StepFile is one file a step made.
struct StepFile {
    std::string path;    // in the task's scratch folder
    std::string suffix;  // the output's name suffix, e.g. "2_shot_1.mp4"
};

std::string StepUri(const StepFile& f) { return std::string(kStepScheme) + f.path; }

std::string Extension(const std::string& name) {
    const auto dot = name.rfind('.');
    return dot == std::string::npos ? std::string() : name.substr(dot + 1);
}

// Seconds is the duration of a media file (0 for pictures and unreadable files).
double Seconds(const std::string& path) {
    try {
        return media::ProbeMediaFile(path).duration_seconds;
    } catch (const media::MediaError&) {
        return 0;
    }
}

// RecipeRun holds a recipe's steps and makes its outputs.
class RecipeRun {
  public:
    RecipeRun(const PipelineEnv& env, TaskContext& ctx)
        : env_(env), steps_env_{env.catalog, 0.0}, ctx_(ctx), resolver_(ctx), seed_(SeedFor(ctx)) {
        CollectRequestMedia(ctx.input(), "");
        SimulateLatency(env_, ctx_, 0.0, 0.1);
    }

    TaskContext& ctx() { return ctx_; }
    const json& input() const { return ctx_.input(); }
    std::uint64_t seed() const { return seed_; }

    // Run runs `pipeline` (endpoint `endpoint`, model `model`) on `input` as the next step,
    // moving progress from `from` to `to`; returns the files it made.
    std::vector<StepFile> Run(const std::string& name, const std::string& endpoint,
                              const std::string& model, json input, Pipeline pipeline, double from,
                              double to) {
        ctx_.CheckCancelled();
        const int number = NextNumber();
        input["model"] = model;
        if (!input.contains("seed")) input["seed"] = (seed_ + 7919ull * number) & 0xFFFFFFFFull;
        const std::string dir = StepDir(number);
        std::atomic<bool> cancelled{false};
        const TaskContext& task = ctx_;
        TaskContext sub(
            ctx_.task_id(), endpoint, model, input, cancelled,
            [&task, &cancelled, from, to](double f) {
                if (task.IsCancelled()) cancelled = true;
                task.Progress(from + (to - from) * std::clamp(f, 0.0, 1.0));
            },
            dir, &resolver_);
        std::vector<Output> outputs;
        try {
            outputs = pipeline(steps_env_, sub);
        } catch (const Cancelled&) {
            ctx_.CheckCancelled();
            throw;
        } catch (const TaskFailure& e) {
            throw TaskFailure(e.code(), "Step " + name + ": " + e.what());
        }
        ctx_.CheckCancelled();
        std::vector<StepFile> files;
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            StepFile f;
            f.suffix = std::to_string(number) + "_" + name +
                       (outputs.size() > 1 ? "_" + std::to_string(i + 1) : std::string()) + "." +
                       Extension(outputs[i].suffix);
            f.path = dir + "/" + f.suffix;
            if (!outputs[i].file.empty()) {
                std::filesystem::rename(outputs[i].file, f.path);
            } else {
                edit::WriteFile(f.path, outputs[i].data);
            }
            files.push_back(std::move(f));
        }
        Record(number, name, {{"endpoint", endpoint}, {"model", model}}, Summary(input), files);
        return files;
    }

    // Local begins a step done in this file: the path and suffix of its `index`-th file.
    StepFile LocalFile(const std::string& name, const std::string& extension, int index = 0) {
        const int number = NextNumber();
        StepFile f;
        f.suffix = std::to_string(number) + "_" + name +
                   (index > 0 ? "_" + std::to_string(index) : std::string()) + "." + extension;
        f.path = StepDir(number) + "/" + f.suffix;
        return f;
    }

    // RecordLocal records a step done in this file (`operation` says what it did).
    void RecordLocal(const std::string& name, const std::string& operation, json inputs,
                     const std::vector<StepFile>& files) {
        Record(NextNumber(), name, {{"operation", operation}}, std::move(inputs), files);
    }

    // Finish returns the task's outputs: `finals`, every other step file in step order, and
    // steps.json.
    std::vector<Output> Finish(const std::vector<StepFile>& finals) {
        ctx_.CheckCancelled();
        std::vector<Output> outputs;
        json order = json::array();
        json final_names = json::array();
        std::vector<std::string> taken;
        for (const auto& f : finals) {
            outputs.push_back(Output{f.suffix, {}, f.path});
            order.push_back(f.suffix);
            final_names.push_back(f.suffix);
            taken.push_back(f.suffix);
        }
        for (const auto& [suffix, path] : files_) {
            if (std::find(taken.begin(), taken.end(), suffix) != taken.end()) continue;
            outputs.push_back(Output{suffix, {}, path});
            order.push_back(suffix);
        }
        order.push_back("steps.json");
        const json manifest = {{"recipe", ctx_.model()},
                               {"version", input().value("version", "")},
                               {"final", final_names},
                               {"outputs", order},
                               {"steps", steps_}};
        outputs.push_back(Output{"steps.json", manifest.dump(2) + "\n", {}});
        ctx_.Progress(1.0);
        return outputs;
    }

  private:
    int NextNumber() const { return static_cast<int>(steps_.size()) + 1; }

    std::string StepDir(int number) const {
        const std::string dir = ctx_.scratch_dir() + "/step" + std::to_string(number);
        std::filesystem::create_directories(dir);
        return dir;
    }

    void Record(int number, const std::string& name, json runs, json inputs,
                const std::vector<StepFile>& files) {
        json outs = json::array();
        for (const auto& f : files) {
            json o = {{"file", f.suffix}};
            const double seconds = Seconds(f.path);
            if (seconds > 0) o["durationSeconds"] = std::round(seconds * 1000) / 1000;
            outs.push_back(std::move(o));
            files_.emplace_back(f.suffix, f.path);
            step_names_[f.path] = f.suffix;
        }
        json step = {{"step", number}, {"name", name}};
        for (auto& [k, v] : runs.items()) step[k] = v;
        step["inputs"] = std::move(inputs);
        step["outputs"] = std::move(outs);
        steps_.push_back(std::move(step));
    }

    // CollectRequestMedia remembers where each media string of the request is, so summaries
    // name the field instead of repeating the (stored) reference.
    void CollectRequestMedia(const json& node, const std::string& pointer) {
        if (node.is_object()) {
            for (const auto& [k, v] : node.items()) CollectRequestMedia(v, pointer + "/" + k);
        } else if (node.is_array()) {
            for (std::size_t i = 0; i < node.size(); ++i) {
                CollectRequestMedia(node[i], pointer + "/" + std::to_string(i));
            }
        } else if (node.is_string() && pointer.size() > 4 &&
                   pointer.compare(pointer.size() - 4, 4, "/uri") == 0) {
            request_media_[node.get<std::string>()] = "request " + pointer;
        }
    }

    // Summary is a step's input for the manifest: step files by name, request media by field,
    // long strings cut.
    json Summary(const json& node) const {
        if (node.is_object()) {
            json out = json::object();
            for (const auto& [k, v] : node.items()) out[k] = Summary(v);
            return out;
        }
        if (node.is_array()) {
            json out = json::array();
            for (const auto& v : node) out.push_back(Summary(v));
            return out;
        }
        if (!node.is_string()) return node;
        const std::string& s = node.get_ref<const std::string&>();
        if (s.rfind(kStepScheme, 0) == 0) {
            const auto it = step_names_.find(s.substr(kStepScheme.size()));
            return "step output " + (it != step_names_.end() ? it->second : std::string("?"));
        }
        if (const auto it = request_media_.find(s); it != request_media_.end()) return it->second;
        if (s.size() > 300) return s.substr(0, 300) + "...";
        return s;
    }

    const PipelineEnv& env_;
    PipelineEnv steps_env_;
    TaskContext& ctx_;
    StepResolver resolver_;
    std::uint64_t seed_;
    json steps_ = json::array();
    std::vector<std::pair<std::string, std::string>> files_;  // suffix, path, in step order
    std::map<std::string, std::string> step_names_;           // path -> suffix
    std::map<std::string, std::string> request_media_;        // media string -> "request /p"
};

// --- media helpers --------------------------------------------------------------------------

std::pair<int, int> RatioSize(const std::string& ratio) {
    int w = 0;
    int h = 0;
    if (!ParseRatio(ratio, w, h)) throw TaskFailure("INTERNAL", "bad ratio " + ratio);
    return {w + (w & 1), h + (h & 1)};
}

std::string PixelRatio(int w, int h) { return std::to_string(w) + ":" + std::to_string(h); }

std::string RequestUri(const json& item) {
    return item.is_object() ? item.value("uri", "") : std::string();
}

RgbImage LoadRequestImage(RecipeRun& run, const std::string& uri, const std::string& field,
                          int max_side = 2048) {
    const std::string path = run.ctx().Input(uri, MediaKind::kImage);
    return edit::LoadImage(path, field, max_side, max_side);
}

// Soundtrack reads a step's audio as 48 kHz stereo, exactly `frames` video frames long, with a
// short fade-out so the cut at the end does not click.
media::AudioBuffer Soundtrack(const StepFile& file, int frames) {
    media::AudioReadOptions options;
    options.sample_rate = media::kAudioSampleRate;
    options.channels = 2;
    media::AudioBuffer audio;
    try {
        audio = media::ReadAudio(file.path, options);
    } catch (const media::MediaError& e) {
        throw TaskFailure("INTERNAL", "a step's audio could not be read: " + std::string(e.what()));
    }
    const std::int64_t samples = static_cast<std::int64_t>(frames) * media::kAudioSampleRate / kFps;
    media::FitFrames(audio, samples);
    const std::int64_t fade = std::min<std::int64_t>(samples, media::kAudioSampleRate * 3 / 10);
    for (std::int64_t i = 0; i < fade; ++i) {
        const float g = static_cast<float>(i) / static_cast<float>(fade);
        const std::int64_t at = samples - 1 - i;
        audio.samples[static_cast<std::size_t>(2 * at)] *= g;
        audio.samples[static_cast<std::size_t>(2 * at + 1)] *= g;
    }
    return audio;
}

// Frames decodes a video step's pictures in order, holding the last one past its end.
class Frames {
  public:
    Frames(const StepFile& file, int max_width, int max_height) {
        media::VideoReader::Limits limits;
        limits.max_width = std::max(2, max_width);
        limits.max_height = std::max(2, max_height);
        reader_ = edit::OpenVideo(file.path, file.suffix, limits);
        field_ = file.suffix;
    }
    const RgbImage& Next() {
        double t = 0;
        if (!ended_ && !edit::NextFrame(*reader_, next_, t, field_)) ended_ = true;
        if (!ended_) std::swap(current_, next_);
        if (current_.pixels.empty()) throw TaskFailure("INTERNAL", field_ + " has no pictures");
        return current_;
    }

  private:
    std::unique_ptr<media::VideoReader> reader_;
    std::string field_;
    RgbImage current_;
    RgbImage next_;
    bool ended_ = false;
};

// WriteVideo writes `frames` pictures of width x height at 24 fps as an MP4 at `file`, each
// drawn by `render` into a picture of that size, with `audio` (48 kHz stereo) when given;
// progress from `from` to `to`, cancellation checked every frame.
void WriteVideo(TaskContext& ctx, const StepFile& file, int width, int height, int frames,
                const media::AudioBuffer* audio, const std::function<void(int, RgbImage&)>& render,
                double from, double to) {
    media::VideoSpec spec;
    spec.width = width;
    spec.height = height;
    spec.fps = kFps;
    spec.frame_count = frames;
    spec.audio = audio != nullptr;
    media::AudioSource source;
    if (audio != nullptr) {
        source = [audio](std::int64_t first, int count, float* left, float* right) {
            const std::int64_t total = audio->frames();
            for (int i = 0; i < count; ++i) {
                const std::int64_t at = first + i;
                const bool in = at >= 0 && at < total;
                left[i] = in ? audio->samples[static_cast<std::size_t>(2 * at)] : 0.0f;
                right[i] = in ? audio->samples[static_cast<std::size_t>(2 * at + 1)] : 0.0f;
            }
        };
    }
    try {
        media::VideoWriter writer(spec, file.path, std::move(source));
        RgbImage frame(width, height);
        for (int i = 0; i < frames; ++i) {
            ctx.CheckCancelled();
            render(i, frame);
            writer.WriteFrame(frame);
            ctx.Progress(from + (to - from) * (i + 1) / frames);
        }
        writer.Finish();
    } catch (const media::MediaError& e) {
        throw TaskFailure("INTERNAL", "encoding " + file.suffix + " failed: " + e.what());
    }
}

// FitInto scales a picture (or a matte) of w x h to fit a box of bw x bh, aspect kept.
std::pair<int, int> FitInto(int w, int h, int bw, int bh) {
    const double s = std::min(static_cast<double>(bw) / w, static_cast<double>(bh) / h);
    return {std::max(1, static_cast<int>(std::lround(w * s))),
            std::max(1, static_cast<int>(std::lround(h * s)))};
}

// Shadow darkens the matte's footprint under it, offset and softened, so a pasted product
// sits on the picture instead of floating.
void Shadow(const Matte& matte, int x, int y, RgbImage& frame) {
    Matte dark = matte;
    std::fill(dark.rgb.pixels.begin(), dark.rgb.pixels.end(), 0);
    const int offset = std::max(2, matte.rgb.height / 40);
    recipes::Composite(dark, x + offset, y + offset, 0.35, frame);
}

// PreviewMatte renders a matte over mid grey (the cut-out step's visible output).
std::string PreviewMatte(const Matte& matte) {
    RgbImage canvas(matte.rgb.width, matte.rgb.height);
    std::fill(canvas.pixels.begin(), canvas.pixels.end(), 128);
    recipes::Composite(matte, 0, 0, 1.0, canvas);
    return edit::EncodePng(edit::EvenSize(canvas));
}

// CutOut is a step: the product photo keyed out of its background.
Matte CutOut(RecipeRun& run, const std::string& name, const std::string& uri,
             const std::string& field) {
    Matte matte = recipes::KeyOutBackground(LoadRequestImage(run, uri, field, 1024));
    const StepFile file = run.LocalFile(name, "png");
    edit::WriteFile(file.path, PreviewMatte(matte));
    run.RecordLocal(name, "background keyed out by its border colour (shown over grey)",
                    {{"image", "request " + field}}, {file});
    return matte;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (const auto& p : parts) {
        if (p.empty()) continue;
        if (!out.empty()) out += sep;
        out += p;
    }
    return out;
}

// JoinShots is the join step: the shots' pictures one after another (each exactly its frame
// count), with the soundtrack when given, as the final MP4.
StepFile JoinShots(RecipeRun& run, const std::vector<StepFile>& shots,
                   const std::vector<int>& frames, int width, int height,
                   const std::optional<StepFile>& sound, double from, double to) {
    int total = 0;
    for (const int f : frames) total += f;
    std::optional<media::AudioBuffer> audio;
    if (sound) audio = Soundtrack(*sound, total);
    const StepFile out = run.LocalFile("join", "mp4");
    std::size_t shot = 0;
    int left = shots.empty() ? 0 : frames[0];
    auto reader = std::make_unique<Frames>(shots.at(0), width, height);
    WriteVideo(
        run.ctx(), out, width, height, total, audio ? &*audio : nullptr,
        [&](int, RgbImage& frame) {
            while (left == 0 && shot + 1 < shots.size()) {
                ++shot;
                left = frames[shot];
                reader = std::make_unique<Frames>(shots[shot], width, height);
            }
            const RgbImage& picture = reader->Next();
            if (picture.width == width && picture.height == height) {
                frame.pixels = picture.pixels;
            } else {
                media::CameraView(picture, 1.0, 0.5, 0.5, frame);
            }
            --left;
        },
        from, to);
    json inputs = json::array();
    for (std::size_t i = 0; i < shots.size(); ++i) {
        inputs.push_back({{"file", shots[i].suffix}, {"frames", frames[i]}});
    }
    json summary = {{"shots", inputs}, {"fps", kFps}};
    if (sound) summary["soundtrack"] = sound->suffix;
    run.RecordLocal("join",
                    "shots joined in order and re-encoded as one H.264 MP4" +
                        std::string(sound ? " with the soundtrack as AAC" : ""),
                    std::move(summary), {out});
    return out;
}

// SoundStep makes a soundtrack of `seconds` from `prompt` (sound_effect).
StepFile SoundStep(RecipeRun& run, const std::string& prompt, double seconds, double from,
                   double to) {
    json input = {{"promptText", prompt.substr(0, 450)},
                  {"duration", std::clamp(seconds, 0.5, 30.0)}};
    return run
        .Run("soundtrack", "sound_effect", kSoundModel, std::move(input), &SoundEffect, from, to)
        .at(0);
}

int CountFrames(const std::vector<int>& frames) {
    int total = 0;
    for (const int f : frames) total += f;
    return total;
}

// --- the recipes ------------------------------------------------------------------------------

std::vector<Output> MultiShotVideo(const PipelineEnv& env, TaskContext& ctx) {
    RecipeRun run(env, ctx);
    const json& input = run.input();
    const double total = input.value("duration", 10);
    const auto [width, height] = RatioSize(input.value("ratio", "1280:720"));
    std::vector<std::string> prompts;
    std::vector<double> seconds;
    if (input.value("mode", "auto") == "custom") {
        const auto& shots = input.at("shots");
        for (std::size_t i = 0; i < shots.size(); ++i) {
            prompts.push_back(
                recipes::ShotFraming(static_cast<int>(i), static_cast<int>(shots.size())) + ": " +
                shots[i].value("prompt", ""));
            seconds.push_back(shots[i].value("duration", 0.0));
        }
    } else {
        prompts = recipes::SplitStory(input.value("prompt", ""), 5);
        seconds = recipes::EqualShots(total, 5);
    }
    const std::vector<int> frames = recipes::AllocateFrames(seconds, kFps);
    const bool audio = input.value("audio", false);
    const double span = audio ? 0.65 : 0.75;
    std::vector<StepFile> shots;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        const double from = 0.1 + span * i / prompts.size();
        const double to = 0.1 + span * (i + 1) / prompts.size();
        json shot = {{"promptText", prompts[i]},
                     {"ratio", PixelRatio(width, height)},
                     {"duration", static_cast<double>(frames[i]) / kFps}};
        const std::string name = "shot_" + std::to_string(i + 1);
        if (i == 0 && input.contains("firstFrame")) {
            shot["promptImage"] = RequestUri(input["firstFrame"]);
            shots.push_back(
                run.Run(name, "image_to_video", kShotModel, shot, &ImageToVideo, from, to).at(0));
        } else {
            shots.push_back(
                run.Run(name, "text_to_video", kShotModel, shot, &TextToVideo, from, to).at(0));
        }
    }
    std::optional<StepFile> sound;
    if (audio) {
        const std::string story = input.value("mode", "auto") == "custom"
                                      ? Join(prompts, ". ")
                                      : input.value("prompt", "");
        sound = SoundStep(run, story, static_cast<double>(CountFrames(frames)) / kFps, 0.75, 0.85);
    }
    const StepFile joined = JoinShots(run, shots, frames, width, height, sound, 0.85, 0.99);
    return run.Finish({joined});
}

std::vector<Output> ProductAd(const PipelineEnv& env, TaskContext& ctx) {
    RecipeRun run(env, ctx);
    const json& input = run.input();
    const auto& products = input.at("productImages");
    const int duration = input.value("duration", 10);
    const auto [width, height] = RatioSize(input.value("ratio", "1280:720"));
    // A shot per product image (at least two, at most five), each at least two seconds.
    const int count = std::min({std::max(2, static_cast<int>(products.size())), 5, duration / 2});
    const std::vector<int> frames =
        recipes::AllocateFrames(recipes::EqualShots(duration, count), kFps);
    static constexpr std::array<const char*, 5> kMoves = {"push in", "pan left", "zoom out",
                                                          "pan right", "tilt up"};
    const std::string brief =
        Join({input.value("userConcept", ""), input.value("productInfo", "")}, ". ");
    const bool audio = input.value("audio", false);
    const double span = audio ? 0.65 : 0.75;
    std::vector<StepFile> shots;
    for (int i = 0; i < count; ++i) {
        // The primary image opens the ad; the others follow in order.
        json images = json::array(
            {{{"uri", RequestUri(products[static_cast<std::size_t>(i) % products.size()])},
              {"position", "first"}}});
        if (const auto it = input.find("styleImages"); it != input.end()) {
            for (const auto& style : *it) images.push_back({{"uri", RequestUri(style)}});
        }
        json shot = {
            {"promptText",
             Join({std::string("Product shot, ") + kMoves[i % kMoves.size()], brief}, ". ")},
            {"promptImage", std::move(images)},
            {"ratio", PixelRatio(width, height)},
            {"duration", static_cast<double>(frames[static_cast<std::size_t>(i)]) / kFps}};
        shots.push_back(run.Run("shot_" + std::to_string(i + 1), "image_to_video", kShotModel,
                                std::move(shot), &ImageToVideo, 0.1 + span * i / count,
                                0.1 + span * (i + 1) / count)
                            .at(0));
    }
    std::optional<StepFile> sound;
    if (audio) {
        sound = SoundStep(run, Join({"upbeat product commercial music", brief}, ", "),
                          static_cast<double>(CountFrames(frames)) / kFps, 0.75, 0.85);
    }
    const StepFile joined = JoinShots(run, shots, frames, width, height, sound, 0.85, 0.99);
    return run.Finish({joined});
}

std::vector<Output> ProductSwap(const PipelineEnv& env, TaskContext& ctx) {
    RecipeRun run(env, ctx);
    const json& input = run.input();
    const std::string reference_uri = RequestUri(input.at("referenceVideo"));
    const std::string reference_path = ctx.Input(reference_uri, MediaKind::kVideo);
    media::VideoInfo info;
    RgbImage first_frame;
    {
        media::VideoReader::Limits limits;
        auto reader = edit::OpenVideo(reference_path, "referenceVideo", limits);
        info = reader->info();
        double t = 0;
        if (!edit::NextFrame(*reader, first_frame, t, "referenceVideo")) {
            throw TaskFailure("ASSET.INVALID", "The referenceVideo has no pictures");
        }
    }
    if (info.duration_seconds <= 0 || info.width < 2 || info.height < 2) {
        throw TaskFailure("ASSET.INVALID", "The referenceVideo has no duration or picture size");
    }
    // Its length up to `duration`; its aspect at the requested resolution.
    const double seconds = std::min<double>(info.duration_seconds, input.value("duration", 10));
    const int frames = media::FrameCount(seconds, kFps);
    const int short_side = input.value("resolution", "720p") == "1080p" ? 1080 : 720;
    const double aspect = static_cast<double>(info.width) / info.height;
    const int width =
        edit::Even(static_cast<int>(std::lround(aspect >= 1 ? short_side * aspect : short_side)));
    const int height =
        edit::Even(static_cast<int>(std::lround(aspect >= 1 ? short_side : short_side / aspect)));

    // 1. The reference restyled toward the new product's colours, at the output size and length.
    json references = json::array();
    for (const auto& item : input.at("newProductImages")) {
        references.push_back({{"uri", RequestUri(item)}});
    }
    json restyle = {{"promptText", "the same scene and motion, colours matched to the product"},
                    {"promptVideo", reference_uri},
                    {"references", references},
                    {"ratio", PixelRatio(width, height)},
                    {"duration", static_cast<double>(frames) / kFps},
                    {"audio", false}};
    const StepFile restyled = run.Run("restyle", "video_to_video", kRestyleModel,
                                      std::move(restyle), &VideoToVideo, 0.1, 0.45)
                                  .at(0);

    // 2. Where the original product is: the best match of its picture in the first frame.
    const RgbImage original = LoadRequestImage(run, RequestUri(input.at("originalProductImage")),
                                               "originalProductImage", 1024);
    const recipes::Box found = recipes::LocateProduct(first_frame, original);
    const double sx = static_cast<double>(width) / first_frame.width;
    const double sy = static_cast<double>(height) / first_frame.height;
    recipes::Box box{static_cast<int>(std::lround(found.x * sx)),
                     static_cast<int>(std::lround(found.y * sy)),
                     std::max(2, static_cast<int>(std::lround(found.width * sx))),
                     std::max(2, static_cast<int>(std::lround(found.height * sy)))};
    box.width = std::min(box.width, width - box.x);
    box.height = std::min(box.height, height - box.y);
    {
        RgbImage marked = first_frame;
        const auto draw = [&](int x, int y) {
            if (x < 0 || y < 0 || x >= marked.width || y >= marked.height) return;
            std::uint8_t* p = marked.Row(y) + 3 * x;
            p[0] = 255;
            p[1] = 0;
            p[2] = 255;
        };
        for (int k = 0; k < 3; ++k) {
            for (int x = found.x; x < found.x + found.width; ++x) {
                draw(x, found.y + k);
                draw(x, found.y + found.height - 1 - k);
            }
            for (int y = found.y; y < found.y + found.height; ++y) {
                draw(found.x + k, y);
                draw(found.x + found.width - 1 - k, y);
            }
        }
        const StepFile file = run.LocalFile("locate", "png");
        edit::WriteFile(file.path, edit::EncodePng(edit::EvenSize(marked)));
        run.RecordLocal(
            "locate", "the original product's picture matched against the reference's first frame",
            {{"originalProductImage", "request /originalProductImage/uri"},
             {"box", {{"x", box.x}, {"y", box.y}, {"width", box.width}, {"height", box.height}}}},
            {file});
    }

    // 3. The new product cut out: the front view when one is marked, else the first image.
    std::size_t chosen = 0;
    const auto& news = input.at("newProductImages");
    for (std::size_t i = 0; i < news.size(); ++i) {
        if (news[i].value("view", "") == "front") {
            chosen = i;
            break;
        }
    }
    const Matte product = CutOut(run, "cutout", RequestUri(news[chosen]),
                                 "/newProductImages/" + std::to_string(chosen) + "/uri");

    // 4. A soundtrack when asked.
    std::optional<StepFile> sound;
    if (input.value("audio", false)) {
        sound = SoundStep(run, "product commercial music", static_cast<double>(frames) / kFps, 0.5,
                          0.6);
    }
    std::optional<media::AudioBuffer> audio;
    if (sound) audio = Soundtrack(*sound, frames);

    // 5. The swap: the original product's box blurred away, the new product pasted in it.
    const auto [pw, ph] = FitInto(product.rgb.width, product.rgb.height, box.width, box.height);
    const Matte pasted = recipes::ResizeMatte(product, pw, ph);
    const int px = box.x + (box.width - pw) / 2;
    const int py = box.y + (box.height - ph) / 2;
    Frames source(restyled, width, height);
    const StepFile out = run.LocalFile("swap", "mp4");
    WriteVideo(
        ctx, out, width, height, frames, audio ? &*audio : nullptr,
        [&](int, RgbImage& frame) {
            const RgbImage& picture = source.Next();
            frame.pixels = picture.pixels;
            RgbImage region(box.width, box.height);
            for (int y = 0; y < box.height; ++y) {
                std::copy_n(frame.Row(box.y + y) + 3 * box.x, 3 * box.width, region.Row(y));
            }
            const RgbImage blurred =
                edit::BoxBlur(region, std::max(2, std::min(box.width, box.height) / 6));
            for (int y = 0; y < box.height; ++y) {
                std::copy_n(blurred.Row(y), 3 * box.width, frame.Row(box.y + y) + 3 * box.x);
            }
            Shadow(pasted, px, py, frame);
            recipes::Composite(pasted, px, py, 1.0, frame);
        },
        0.6, 0.99);
    json summary = {
        {"video", restyled.suffix},
        {"product", "step output cutout"},
        {"box", {{"x", box.x}, {"y", box.y}, {"width", box.width}, {"height", box.height}}}};
    if (sound) summary["soundtrack"] = sound->suffix;
    run.RecordLocal("swap",
                    "the original product's box blurred away in every frame and the new product "
                    "pasted into it; encoded as H.264 MP4",
                    std::move(summary), {out});
    return run.Finish({out});
}

std::vector<Output> ProductUgc(const PipelineEnv& env, TaskContext& ctx) {
    RecipeRun run(env, ctx);
    const json& input = run.input();
    const int duration = input.value("duration", 15);
    const auto [width, height] = RatioSize(input.value("ratio", "720:1280"));
    const int frames = media::FrameCount(duration, kFps);
    for (const char* field : {"characterImage", "productImage"}) {
        const RgbImage picture = LoadRequestImage(run, RequestUri(input.at(field)), field, 1024);
        const double aspect = static_cast<double>(picture.width) / picture.height;
        if (aspect < 0.4 || aspect > 4.0) {
            throw TaskFailure("ASSET.INVALID", std::string("The ") + field +
                                                   "'s aspect ratio (width / height) must be "
                                                   "between 0.4 and 4");
        }
    }
    const std::string brief = input.value("userConcept", "");
    const std::string info = input.value("productInfo", "");

    // 1. The character talking to the camera.
    json character = {
        {"promptText", Join({"static, handheld selfie video talking to the camera", brief}, ". ")},
        {"promptImage", RequestUri(input.at("characterImage"))},
        {"ratio", PixelRatio(width, height)},
        {"duration", duration}};
    const StepFile talking = run.Run("character", "image_to_video", kShotModel,
                                     std::move(character), &ImageToVideo, 0.1, 0.5)
                                 .at(0);
    // 2. The product cut out.
    const Matte product =
        CutOut(run, "cutout", RequestUri(input.at("productImage")), "/productImage/uri");
    // 3. The voiceover: the brief when it is a script (twelve words or more), else a line
    // about the product.
    std::optional<StepFile> voice;
    if (input.value("audio", false)) {
        const auto words = std::count(brief.begin(), brief.end(), ' ') + 1;
        const std::string script =
            !brief.empty() && words >= 12
                ? brief
                : "I have been using this " + (info.empty() ? std::string("product") : info) +
                      " every day, and honestly, I love it. You have to try it.";
        json speech = {{"promptText", script.substr(0, 5000)},
                       {"voice", {{"type", "service-preset"}, {"presetId", kVoicePreset}}}};
        voice = run.Run("voiceover", "text_to_speech", kVoiceModel, std::move(speech),
                        &TextToSpeech, 0.5, 0.6)
                    .at(0);
    }
    std::optional<media::AudioBuffer> audio;
    if (voice) audio = Soundtrack(*voice, frames);
    // 4. The product held up in the lower third, bobbing gently.
    const auto [pw, ph] =
        FitInto(product.rgb.width, product.rgb.height, width * 45 / 100, height * 30 / 100);
    const Matte held = recipes::ResizeMatte(product, pw, ph);
    Frames source(talking, width, height);
    const StepFile out = run.LocalFile("present", "mp4");
    WriteVideo(
        ctx, out, width, height, frames, audio ? &*audio : nullptr,
        [&](int i, RgbImage& frame) {
            const RgbImage& picture = source.Next();
            if (picture.width == width && picture.height == height) {
                frame.pixels = picture.pixels;
            } else {
                media::CameraView(picture, 1.0, 0.5, 0.5, frame);
            }
            const double t = static_cast<double>(i) / kFps;
            const int bob = static_cast<int>(std::lround(height * 0.01 * std::sin(t * 2.2)));
            const int x = width - pw - width / 12;
            const int y = height - ph - height / 10 + bob;
            Shadow(held, x, y, frame);
            recipes::Composite(held, x, y, 1.0, frame);
        },
        0.6, 0.99);
    json summary = {{"video", talking.suffix}, {"product", "step output cutout"}};
    if (voice) summary["voiceover"] = voice->suffix;
    run.RecordLocal("present",
                    "the product pasted over the character video in the lower third, with the "
                    "voiceover as AAC; encoded as H.264 MP4",
                    std::move(summary), {out});
    return run.Finish({out});
}

std::vector<Output> MarketingStockImage(const PipelineEnv& env, TaskContext& ctx) {
    RecipeRun run(env, ctx);
    const json& input = run.input();
    const int count = input.value("outputCount", 4);
    const std::string quality = input.value("quality", "high");
    // The quality knob sets the size: low 1920x1088, medium 2560x1440, high 3840x2160.
    const std::string ratio = quality == "low"      ? "1920:1088"
                              : quality == "medium" ? "2560:1440"
                                                    : "3840:2160";
    json generate = {{"promptText", input.value("prompt", "").substr(0, 32000)},
                     {"ratio", ratio},
                     {"quality", quality},
                     {"outputCount", count}};
    const auto images = run.Run("generate", "text_to_image", kStockImageModel, std::move(generate),
                                &TextToImage, 0.1, 0.7);
    if (!input.contains("referenceImage")) return run.Finish(images);
    // The logo, keyed out, in the lower right corner of every image.
    const Matte logo =
        CutOut(run, "logo", RequestUri(input["referenceImage"]), "/referenceImage/uri");
    std::vector<StepFile> branded;
    for (std::size_t i = 0; i < images.size(); ++i) {
        ctx.CheckCancelled();
        RgbImage picture = edit::LoadImage(images[i].path, images[i].suffix, 8192, 8192);
        const auto [lw, lh] = FitInto(logo.rgb.width, logo.rgb.height, picture.width * 15 / 100,
                                      picture.height * 15 / 100);
        const Matte placed = recipes::ResizeMatte(logo, lw, lh);
        const int margin = picture.width / 40;
        recipes::Composite(placed, picture.width - lw - margin, picture.height - lh - margin, 0.92,
                           picture);
        StepFile f = run.LocalFile("brand", "png", static_cast<int>(i) + 1);
        edit::WriteFile(f.path, edit::EncodePng(picture));
        branded.push_back(std::move(f));
        ctx.Progress(0.75 + 0.24 * (i + 1) / images.size());
    }
    json sources = json::array();
    for (const auto& f : images) sources.push_back(f.suffix);
    run.RecordLocal("brand", "the logo placed in the lower right corner of each image",
                    {{"images", sources}, {"logo", "step output logo"}}, branded);
    return run.Finish(branded);
}

std::vector<Output> ProductCampaignImage(const PipelineEnv& env, TaskContext& ctx) {
    RecipeRun run(env, ctx);
    const json& input = run.input();
    const std::string brief = input.value("prompt", "").substr(0, 900);
    // Four campaign formats: square feed, portrait, landscape and wide banner.
    static constexpr std::array<const char*, 4> kRatios = {"1080:1080", "1080:1440", "1440:1080",
                                                           "1920:1080"};
    static constexpr std::array<const char*, 4> kScenes = {
        "studio backdrop, soft light", "lifestyle setting, natural light",
        "outdoor scene, golden hour", "minimal stage, bold colour"};
    std::vector<StepFile> backgrounds;
    for (std::size_t i = 0; i < kRatios.size(); ++i) {
        json generate = {
            {"promptText",
             Join({brief, std::string(kScenes[i]) + ", empty space in the centre"}, ", ")},
            {"ratio", kRatios[i]}};
        backgrounds.push_back(run.Run("background_" + std::to_string(i + 1), "text_to_image",
                                      kImageModel, std::move(generate), &TextToImage,
                                      0.1 + 0.12 * i, 0.1 + 0.12 * (i + 1))
                                  .at(0));
    }
    const Matte product = CutOut(run, "cutout", RequestUri(input.at("image")), "/image/uri");
    std::vector<StepFile> finals;
    for (std::size_t i = 0; i < backgrounds.size(); ++i) {
        ctx.CheckCancelled();
        RgbImage picture = edit::LoadImage(backgrounds[i].path, backgrounds[i].suffix, 8192, 8192);
        const auto [pw, ph] = FitInto(product.rgb.width, product.rgb.height,
                                      picture.width * 60 / 100, picture.height * 60 / 100);
        const Matte placed = recipes::ResizeMatte(product, pw, ph);
        const int x = (picture.width - pw) / 2;
        const int y = (picture.height - ph) * 11 / 20;
        Shadow(placed, x, y, picture);
        recipes::Composite(placed, x, y, 1.0, picture);
        StepFile f = run.LocalFile("campaign", "png", static_cast<int>(i) + 1);
        edit::WriteFile(f.path, edit::EncodePng(picture));
        finals.push_back(std::move(f));
        ctx.Progress(0.6 + 0.39 * (i + 1) / backgrounds.size());
    }
    json sources = json::array();
    for (const auto& f : backgrounds) sources.push_back(f.suffix);
    run.RecordLocal("campaign",
                    "the product's pixels pasted unchanged (scaled) at the centre of each "
                    "background, with a soft shadow",
                    {{"backgrounds", sources}, {"product", "step output cutout"}}, finals);
    return run.Finish(finals);
}

// kTaglines is the fixed line ad_localization writes, in each target language: the builtin
// provider cannot read or translate the ad's own words (docs/recipes.md).
const std::map<std::string, std::string>& Taglines() {
    static const std::map<std::string, std::string> kTaglines = {
        {"ar", "\u0627\u0643\u062A\u0634\u0641\u0647 \u0627\u0644\u0622\u0646"},
        {"zh", "\u7ACB\u5373\u63A2\u7D22"},
        {"zh-Hant", "\u7ACB\u5373\u63A2\u7D22"},
        {"nl", "Ontdek het nu"},
        {"en", "Discover it now"},
        {"fr", "D\u00E9couvrez-le maintenant"},
        {"de", "Jetzt entdecken"},
        {"hi", "\u0905\u092D\u0940 \u0916\u094B\u091C\u0947\u0902"},
        {"id", "Temukan sekarang"},
        {"it", "Scoprilo ora"},
        {"ja", "\u4ECA\u3059\u3050\u30C1\u30A7\u30C3\u30AF"},
        {"ko", "\uC9C0\uAE08 \uB9CC\uB098\uBCF4\uC138\uC694"},
        {"pl", "Odkryj to teraz"},
        {"pt", "Descubra agora"},
        {"ru",
         "\u041E\u0442\u043A\u0440\u043E\u0439\u0442\u0435 \u0441\u0435\u0439\u0447\u0430\u0441"},
        {"es", "Desc\u00FAbrelo ahora"},
        {"sv", "Uppt\u00E4ck det nu"},
        {"th", "\u0E04\u0E49\u0E19\u0E1E\u0E1A\u0E40\u0E25\u0E22"},
        {"tr", "Hemen ke\u015Ffedin"},
        {"uk",
         "\u0412\u0456\u0434\u043A\u0440\u0438\u0439\u0442\u0435 \u0437\u0430\u0440\u0430\u0437"},
        {"vi", "Kh\u00E1m ph\u00E1 ngay"},
        {"el",
         "\u0391\u03BD\u03B1\u03BA\u03B1\u03BB\u03CD\u03C8\u03C4\u03B5 \u03C4\u03BF "
         "\u03C4\u03CE\u03C1\u03B1"},
    };
    return kTaglines;
}

// TextBand finds the band of rows that looks most like a line of text: the most horizontal
// luminance edges per row, over at least 4 % of the height; nullopt on a picture without edges.
std::optional<recipes::Box> TextBand(const RgbImage& picture) {
    const int w = picture.width;
    const int h = picture.height;
    std::vector<double> density(static_cast<std::size_t>(h), 0.0);
    for (int y = 0; y < h; ++y) {
        const std::uint8_t* row = picture.Row(y);
        int edges = 0;
        for (int x = 1; x < w; ++x) {
            const int a = row[3 * x - 3] + 2 * row[3 * x - 2] + row[3 * x - 1];
            const int b = row[3 * x] + 2 * row[3 * x + 1] + row[3 * x + 2];
            if (std::abs(a - b) > 160) ++edges;
        }
        density[static_cast<std::size_t>(y)] = static_cast<double>(edges) / w;
    }
    const int band = std::max(2, h / 25);
    double best = 0;
    int best_y = -1;
    double window = 0;
    for (int y = 0; y < h; ++y) {
        window += density[static_cast<std::size_t>(y)];
        if (y >= band) window -= density[static_cast<std::size_t>(y - band)];
        if (y >= band - 1 && window > best + 1e-12) {
            best = window;
            best_y = y - band + 1;
        }
    }
    if (best_y < 0 || best <= 0) return std::nullopt;
    // Widen to the neighbouring rows that are still busy (a line of text taller than the band).
    const double threshold = 0.5 * best / band;
    int top = best_y;
    int bottom = best_y + band;
    while (top > 0 && density[static_cast<std::size_t>(top - 1)] >= threshold) --top;
    while (bottom < h && density[static_cast<std::size_t>(bottom)] >= threshold) ++bottom;
    top = std::max(0, top - band / 2);
    bottom = std::min(h, bottom + band / 2);
    return recipes::Box{0, top, w, bottom - top};
}

std::size_t Utf8Length(const std::string& s) {
    std::size_t n = 0;
    for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

std::vector<Output> AdLocalization(const PipelineEnv& env, TaskContext& ctx) {
    RecipeRun run(env, ctx);
    const json& input = run.input();
    const std::string language = input.value("targetLanguage", "en");
    const auto tagline = Taglines().find(language);
    if (tagline == Taglines().end()) throw TaskFailure("INTERNAL", "no tagline for " + language);
    RgbImage picture = edit::EvenSize(
        LoadRequestImage(run, RequestUri(input.at("referenceImage")), "referenceImage", 4096));
    ctx.Progress(0.3);

    // 1. The ad's most text-like band, softened so its words no longer read.
    const auto band = TextBand(picture);
    const StepFile cleared = run.LocalFile("clear_text", "png");
    json band_json = nullptr;
    if (band) {
        RgbImage region(band->width, band->height);
        for (int y = 0; y < band->height; ++y) {
            std::copy_n(picture.Row(band->y + y), 3 * band->width, region.Row(y));
        }
        const RgbImage blurred = edit::BoxBlur(region, std::max(3, band->height / 3));
        for (int y = 0; y < band->height; ++y) {
            std::copy_n(blurred.Row(y), 3 * band->width, picture.Row(band->y + y));
        }
        band_json = {
            {"x", band->x}, {"y", band->y}, {"width", band->width}, {"height", band->height}};
    }
    edit::WriteFile(cleared.path, edit::EncodePng(picture));
    run.RecordLocal("clear_text",
                    "the band of rows with the most horizontal edges (the likeliest line of text) "
                    "blurred; the words are not read",
                    {{"referenceImage", "request /referenceImage/uri"}, {"band", band_json}},
                    {cleared});
    ctx.Progress(0.6);
    ctx.CheckCancelled();

    // 2. The localized line drawn where the text was (at the bottom when none was found).
    media::CaptionSpec caption;
    caption.text = tagline->second;
    caption.language = language.substr(0, 2);
    const std::size_t chars = std::max<std::size_t>(1, Utf8Length(caption.text));
    caption.font_size = std::max(
        8, std::min(picture.height / 10,
                    static_cast<int>(picture.width * 0.8 / (0.62 * static_cast<double>(chars)))));
    if (band) {
        const int centre = band->y + band->height / 2;
        caption.bottom_fraction = std::clamp(
            static_cast<double>(picture.height - centre - caption.font_size / 2) / picture.height,
            0.02, 0.9);
    }
    try {
        media::DrawCaption(picture, caption);
    } catch (const media::MediaError& e) {
        throw TaskFailure("INTERNAL",
                          "The localized caption could not be drawn: " + std::string(e.what()));
    }
    const StepFile localized = run.LocalFile("caption", "png");
    edit::WriteFile(localized.path, edit::EncodePng(picture));
    run.RecordLocal("caption",
                    "a fixed tagline in the target language drawn with drawtext (FreeType, no "
                    "text shaping) over a dark band",
                    {{"image", "step output " + cleared.suffix},
                     {"targetLanguage", language},
                     {"text", tagline->second},
                     {"fontSize", caption.font_size}},
                    {localized});
    return run.Finish({localized});
}

}  // namespace

std::vector<Output> Recipe(const PipelineEnv& env, TaskContext& ctx) {
    const std::string& endpoint = ctx.endpoint();
    if (endpoint == "recipe_multi_shot_video") return MultiShotVideo(env, ctx);
    if (endpoint == "recipe_product_ad") return ProductAd(env, ctx);
    if (endpoint == "recipe_product_swap") return ProductSwap(env, ctx);
    if (endpoint == "recipe_product_ugc") return ProductUgc(env, ctx);
    if (endpoint == "recipe_marketing_stock_image") return MarketingStockImage(env, ctx);
    if (endpoint == "recipe_product_campaign_image") return ProductCampaignImage(env, ctx);
    if (endpoint == "recipe_ad_localization") return AdLocalization(env, ctx);
    NotImplemented(ctx);
}

}  // namespace genhost::providers
