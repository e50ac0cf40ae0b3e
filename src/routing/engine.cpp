// The selection engine: map the routed input onto each model's request, filter, rank, and apply
// the capacity fallback (genhost/routing/engine.hpp, docs/routers.md).
#include "genhost/routing/engine.hpp"

#include "profiles.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace genhost::routing {

using nlohmann::json;

std::string_view ModalityName(Modality m) {
    switch (m) {
        case Modality::kVideo:
            return "video";
        case Modality::kImage:
            return "image";
        case Modality::kAudio:
            return "audio";
    }
    return "video";
}

std::string_view OptimizeForName(OptimizeFor o) {
    switch (o) {
        case OptimizeFor::kCost:
            return "cost";
        case OptimizeFor::kLatency:
            return "latency";
        case OptimizeFor::kQuality:
            return "quality";
    }
    return "cost";
}

std::string_view FilterName(Filter f) {
    switch (f) {
        case Filter::kCapability:
            return "capability";
        case Filter::kPromptLength:
            return "prompt_length";
        case Filter::kInputSupport:
            return "input_support";
        case Filter::kAllowDeny:
            return "allow_deny";
        case Filter::kPrice:
            return "price";
    }
    return "capability";
}

Settings Settings::FromJson(const json& s) {
    Settings out;
    if (!s.is_object()) throw std::runtime_error("router settings are not an object");
    const std::string optimize = s.value("optimizeFor", "cost");
    if (optimize == "cost") {
        out.optimize_for = OptimizeFor::kCost;
    } else if (optimize == "latency") {
        out.optimize_for = OptimizeFor::kLatency;
    } else if (optimize == "quality") {
        out.optimize_for = OptimizeFor::kQuality;
    } else {
        throw std::runtime_error("router settings: unknown optimizeFor " + optimize);
    }
    if (s.contains("models")) {
        const auto& models = s.at("models");
        out.allowlist_only = models.value("mode", "allow_new_except") == "allowlist_only";
        if (models.contains("ids")) {
            for (const auto& id : models.at("ids")) out.ids.insert(id.get<std::string>());
        }
    }
    if (s.contains("maxCreditsPerGeneration")) {
        const auto& caps = s.at("maxCreditsPerGeneration");
        for (Modality m : {Modality::kVideo, Modality::kImage, Modality::kAudio}) {
            const std::string key(ModalityName(m));
            if (caps.contains(key)) out.caps[m] = caps.at(key).get<double>();
        }
    }
    if (s.contains("fallback")) out.on_capacity = s.at("fallback").value("onCapacity", false);
    return out;
}

std::optional<double> Settings::CapFor(Modality m) const {
    auto it = caps.find(m);
    if (it == caps.end()) return std::nullopt;
    return it->second;
}

double BlendedLatency(double prior_seconds, const LatencySample* measured) {
    if (measured == nullptr || measured->samples <= 0) return prior_seconds;
    const double n = static_cast<double>(std::min<long long>(measured->samples, 20));
    return (prior_seconds * 3.0 + measured->ewma_seconds * n) / (3.0 + n);
}

namespace {

// ---- ratios and resolution classes ----

struct Ratio {
    int w = 0;
    int h = 0;
};

std::optional<Ratio> ParseRatio(std::string_view text) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    Ratio r;
    auto a = std::from_chars(text.data(), text.data() + colon, r.w);
    auto b = std::from_chars(text.data() + colon + 1, text.data() + text.size(), r.h);
    if (a.ec != std::errc() || a.ptr != text.data() + colon || b.ec != std::errc() ||
        b.ptr != text.data() + text.size() || r.w <= 0 || r.h <= 0) {
        return std::nullopt;
    }
    return r;
}

// A concrete ratio is pixels ("1280:720"); an aspect ratio is small numbers ("16:9").
bool IsConcrete(const Ratio& r) { return r.w > 64 && r.h > 64; }

bool SameAspect(const Ratio& a, const Ratio& b) {
    const double x = static_cast<double>(a.w) / a.h;
    const double y = static_cast<double>(b.w) / b.h;
    return std::abs(x - y) / y <= 0.03;
}

double AspectError(const Ratio& a, const Ratio& b) {
    const double x = static_cast<double>(a.w) / a.h;
    const double y = static_cast<double>(b.w) / b.h;
    return std::abs(x - y) / y;
}

// VideoClass is the resolution class of a frame size, by area.
std::string VideoClass(const Ratio& r) {
    const double mp = static_cast<double>(r.w) * r.h / 1e6;
    if (mp <= 0.3) return "360p";
    if (mp <= 0.5) return "480p";
    if (mp <= 1.2) return "720p";
    if (mp <= 2.5) return "1080p";
    return "4k";
}

// LabelClass is the class of a resolution label: "768p" is of the 720p class, "2K" of 1080p.
std::string LabelClass(std::string label) {
    for (auto& c : label) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (label.size() < 2) return label;
    int n = 0;
    const char unit = label.back();
    auto res = std::from_chars(label.data(), label.data() + label.size() - 1, n);
    if (res.ec != std::errc() || res.ptr != label.data() + label.size() - 1) return label;
    if (unit == 'p') {
        if (n <= 400) return "360p";
        if (n <= 600) return "480p";
        if (n <= 900) return "720p";
        if (n <= 1300) return "1080p";
        return "4k";
    }
    if (unit == 'k') {
        if (n <= 1) return "720p";
        if (n <= 2) return "1080p";
        return "4k";
    }
    return label;
}

// ImageTier is the megapixel tier of an image size.
std::string ImageTier(const Ratio& r) {
    const double mp = static_cast<double>(r.w) * r.h / 1e6;
    if (mp <= 0.5) return "0.5k";
    if (mp <= 1.7) return "1k";
    if (mp <= 5.0) return "2k";
    return "4k";
}

int ClassPreference(const std::string& cls, bool image) {
    static const std::vector<std::string> video = {"720p", "1080p", "480p", "360p", "4k"};
    static const std::vector<std::string> images = {"1k", "2k", "4k", "0.5k"};
    const auto& order = image ? images : video;
    auto it = std::find(order.begin(), order.end(), cls);
    return it == order.end() ? 99 : static_cast<int>(it - order.begin());
}

std::string Join(const json& values) {
    std::string out;
    for (const auto& v : values) {
        if (!out.empty()) out += ", ";
        out += v.is_string() ? v.get<std::string>() : v.dump();
    }
    return out;
}

std::string Number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

// ---- mapping ----

struct Mapped {
    const EndpointView* view = nullptr;
    json body = json::object();
    json resolved = json::object();
    double outputs = 1;
    std::optional<Exclusion> excluded;
};

void Exclude(Mapped& m, const std::string& model, Filter f, std::string why) {
    if (!m.excluded) m.excluded = Exclusion{model, f, std::move(why)};
}

const json* InputCaps(const EndpointView& v, std::string_view field) {
    if (!v.caps.contains("inputs")) return nullptr;
    const auto& inputs = v.caps.at("inputs");
    auto it = inputs.find(std::string(field));
    return it == inputs.end() ? nullptr : &*it;
}

// MaxItems is the most items `field` takes: the catalog's and the schema's limits, the lower.
std::optional<std::size_t> MaxItems(const EndpointView& v, std::string_view field) {
    std::optional<std::size_t> max;
    if (const json* in = InputCaps(v, field); in != nullptr && in->contains("max_items")) {
        max = in->at("max_items").get<std::size_t>();
    }
    auto it = v.fields.find(field);
    if (it != v.fields.end() && it->second.max_items) {
        max = max ? std::min(*max, *it->second.max_items) : *it->second.max_items;
    }
    return max;
}

// PutMedia sets `field` to the uris as the model's items: media strings, or {uri} objects with
// the constants its item schema fixes ({type: video, uri}).
void PutMedia(const EndpointView& v, json& body, const std::string& field,
              const std::vector<std::string>& uris) {
    const auto& shape = v.fields.at(field);
    json items = json::array();
    for (const auto& uri : uris) {
        if (shape.string_items) {
            items.push_back(uri);
        } else {
            json item = shape.item_consts;
            item["uri"] = uri;
            items.push_back(std::move(item));
        }
    }
    body[field] = std::move(items);
}

// CheckMedia excludes the model unless `field` takes `count` items.
bool CheckMedia(Mapped& m, const std::string& model, const EndpointView& v,
                const std::string& field, std::size_t count, const std::string& what) {
    if (count == 0) return true;
    if (!v.Has(field)) {
        Exclude(m, model, Filter::kCapability, what + ": not supported");
        return false;
    }
    const auto max = MaxItems(v, field);
    if (max && count > *max) {
        Exclude(m, model, Filter::kCapability,
                what + ": " + std::to_string(count) + " given, at most " + std::to_string(*max));
        return false;
    }
    return true;
}

std::vector<std::string> Uris(const json& input, std::string_view field, std::string_view role) {
    std::vector<std::string> out;
    auto it = input.find(std::string(field));
    if (it == input.end()) return out;
    for (const auto& item : *it) {
        if (role.empty() || item.value("role", "") == role) out.push_back(item.at("uri"));
    }
    return out;
}

// Duration resolves the output seconds; false (excluded) when the model cannot make them.
bool Duration(Mapped& m, const std::string& model, const EndpointView& v, const json& input,
              double& seconds, bool& controllable) {
    controllable = v.caps.contains("durations");
    const bool asked = input.contains("duration");
    if (!controllable) {
        if (asked) {
            Exclude(m, model, Filter::kCapability,
                    "duration " + Number(input.at("duration").get<double>()) +
                        " s: the output is as long as the input");
            return false;
        }
        return true;
    }
    const auto& d = v.caps.at("durations");
    if (asked) {
        const double want = input.at("duration").get<double>();
        if (d.contains("values")) {
            bool found = false;
            for (const auto& value : d.at("values")) found = found || value.get<double>() == want;
            if (!found) {
                Exclude(m, model, Filter::kCapability,
                        "duration " + Number(want) + " s is not one of " + Join(d.at("values")));
                return false;
            }
        } else if (want < d.at("min").get<double>() || want > d.at("max").get<double>()) {
            Exclude(m, model, Filter::kCapability,
                    "duration " + Number(want) + " s is outside " +
                        Number(d.at("min").get<double>()) + "-" +
                        Number(d.at("max").get<double>()) + " s");
            return false;
        }
        seconds = want;
    } else if (d.contains("default")) {
        seconds = d.at("default").get<double>();
    } else if (d.contains("values")) {
        seconds = d.at("values").at(0).get<double>();
    } else {
        seconds = d.at("min").get<double>();
    }
    return true;
}

// RatioChoice is the ratio and resolution a model is asked for.
struct RatioChoice {
    std::optional<std::string> ratio;       // the `ratio` value, if the model takes one
    std::optional<std::string> resolution;  // the `resolution` value, if the model takes one
    std::string resolved_ratio;             // for resolvedInput
    std::string resolved_class;
};

// ChooseRatio maps aspectRatio and resolution onto the model's ratios and resolutions. `image`:
// megapixel tiers instead of video classes.
bool ChooseRatio(Mapped& m, const std::string& model, const EndpointView& v, const json& input,
                 bool image, const std::string& default_aspect, RatioChoice& out) {
    const bool aspect_asked = input.contains("aspectRatio");
    const std::string aspect_text = input.value("aspectRatio", default_aspect);
    const Ratio aspect = *ParseRatio(aspect_text);
    const std::optional<std::string> want = input.contains("resolution")
                                                ? std::optional<std::string>(input.at("resolution"))
                                                : std::nullopt;
    const json* res_values = nullptr;
    std::optional<std::string> res_default;
    if (v.caps.contains("resolutions") && v.Has("resolution")) {
        res_values = &v.caps.at("resolutions").at("values");
        if (v.caps.at("resolutions").contains("default")) {
            res_default = v.caps.at("resolutions").at("default").get<std::string>();
        }
    }
    // The model's `resolution` value for a class (or its default), if it takes one.
    auto pick_resolution = [&](std::optional<std::string> cls) -> std::optional<std::string> {
        if (res_values == nullptr) return std::nullopt;
        if (!cls) return res_default ? res_default : std::optional<std::string>(res_values->at(0));
        for (const auto& value : *res_values) {
            if (LabelClass(value.get<std::string>()) == *cls) return value.get<std::string>();
        }
        return std::nullopt;
    };
    std::vector<const RatioEntry*> concrete;
    std::vector<const RatioEntry*> aspects;
    if (v.Has("ratio")) {
        for (const auto& r : v.ratios) (r.concrete ? concrete : aspects).push_back(&r);
    }
    if (!concrete.empty()) {
        // The matching concrete ratio of the wanted class, else of the preferred class.
        const RatioEntry* best = nullptr;
        std::tuple<int, double> best_key;
        for (const RatioEntry* r : concrete) {
            const Ratio parsed{r->w, r->h};
            if (!SameAspect(parsed, aspect)) continue;
            const std::string& cls = image ? r->image_tier : r->video_class;
            if (want && cls != *want) continue;
            const auto key =
                std::make_tuple(ClassPreference(cls, image), AspectError(parsed, aspect));
            if (best == nullptr || key < best_key) {
                best = r;
                best_key = key;
            }
        }
        if (best == nullptr) {
            Exclude(m, model, Filter::kCapability,
                    want ? "aspect ratio " + aspect_text + " at " + *want + ": no such size"
                         : "aspect ratio " + aspect_text + ": no such size");
            return false;
        }
        out.ratio = best->text;
        out.resolved_ratio = best->text;
        out.resolved_class = image ? best->image_tier : best->video_class;
        out.resolution = pick_resolution(std::nullopt);
        return true;
    }
    if (!aspects.empty()) {
        const bool found = std::any_of(aspects.begin(), aspects.end(),
                                       [&](const RatioEntry* r) { return r->text == aspect_text; });
        if (!found) {
            json names = json::array();
            for (const RatioEntry* r : aspects) names.push_back(r->text);
            Exclude(m, model, Filter::kCapability,
                    "aspect ratio " + aspect_text + " is not one of " + Join(names));
            return false;
        }
        out.ratio = aspect_text;
        out.resolved_ratio = aspect_text;
    } else {
        if (aspect_asked) {
            Exclude(m, model, Filter::kCapability,
                    "aspect ratio " + aspect_text + ": the model has no ratio setting");
            return false;
        }
        out.resolved_ratio = "auto";
    }
    if (res_values != nullptr) {
        out.resolution = pick_resolution(want);
        if (!out.resolution) {
            Exclude(m, model, Filter::kCapability,
                    "resolution " + *want + " is not one of " + Join(*res_values));
            return false;
        }
        out.resolved_class = LabelClass(*out.resolution);
        return true;
    }
    if (want) {
        Exclude(m, model, Filter::kCapability,
                "resolution " + *want + ": the model has no resolution setting");
        return false;
    }
    out.resolved_class = "auto";
    return true;
}

// CommonOptions checks and copies seed, negativePrompt and contentModeration.
bool CommonOptions(Mapped& m, const std::string& model, const EndpointView& v, const json& input) {
    if (input.contains("seed")) {
        if (!v.caps.value("seed", false) || !v.Has("seed")) {
            Exclude(m, model, Filter::kCapability, "seed: not supported");
            return false;
        }
        m.body["seed"] = input.at("seed");
    }
    if (input.contains("negativePrompt")) {
        if (!v.caps.value("negative_prompt", false) || !v.Has("negativePrompt")) {
            Exclude(m, model, Filter::kCapability, "negativePrompt: not supported");
            return false;
        }
        m.body["negativePrompt"] = input.at("negativePrompt");
    }
    if (input.contains("contentModeration")) {
        if (!v.Has("contentModeration")) {
            Exclude(m, model, Filter::kCapability, "contentModeration: not supported");
            return false;
        }
        m.body["contentModeration"] = input.at("contentModeration");
    }
    return true;
}

Mapped MapVideo(const Engine::Profile& p, const json& input) {
    Mapped m;
    const std::string& model = p.model->id;
    const auto sources = Uris(input, "referenceVideos", "source");
    const auto ref_videos = Uris(input, "referenceVideos", "reference");
    const auto firsts = Uris(input, "referenceImages", "first");
    const auto lasts = Uris(input, "referenceImages", "last");
    const auto ref_images = Uris(input, "referenceImages", "reference");
    const auto audios = Uris(input, "referenceAudio", "");
    const std::size_t keyframes = input.contains("keyframes") ? input.at("keyframes").size() : 0;
    const bool framed = !firsts.empty() || !lasts.empty();
    const std::string endpoint = !sources.empty() ? "video_to_video"
                                 : framed         ? "image_to_video"
                                                  : "text_to_video";
    m.view = p.Find(endpoint);
    if (m.view == nullptr) {
        if (!sources.empty()) {
            Exclude(m, model, Filter::kCapability, "a source video: not supported");
        } else if (framed && p.Find("text_to_video") != nullptr) {
            Exclude(m, model, Filter::kCapability, "first or last frame images: not supported");
        } else if (p.Find("image_to_video") != nullptr) {
            Exclude(m, model, Filter::kInputSupport,
                    "needs a first-frame image (referenceImages role first)");
        } else {
            Exclude(m, model, Filter::kInputSupport,
                    "needs a source video (referenceVideos role source)");
        }
        return m;
    }
    const EndpointView& v = *m.view;
    // Reference media.
    if (framed) {
        const json* prompt_image = InputCaps(v, "promptImage");
        const json positions = prompt_image != nullptr && prompt_image->contains("positions")
                                   ? prompt_image->at("positions")
                                   : json::array({"first"});
        for (const auto& [uris, role] : {std::pair{&firsts, "first"}, std::pair{&lasts, "last"}}) {
            if (!uris->empty() &&
                std::find(positions.begin(), positions.end(), role) == positions.end()) {
                Exclude(m, model, Filter::kCapability,
                        std::string("referenceImages role ") + role + ": not supported");
                return m;
            }
        }
        json images = json::array();
        for (const auto& uri : firsts) images.push_back({{"uri", uri}, {"position", "first"}});
        for (const auto& uri : lasts) images.push_back({{"uri", uri}, {"position", "last"}});
        m.body["promptImage"] = std::move(images);
    }
    if (!CheckMedia(m, model, v, "references", ref_images.size(), "referenceImages role reference"))
        return m;
    if (!CheckMedia(m, model, v, "referenceVideos", ref_videos.size(),
                    "referenceVideos role reference"))
        return m;
    if (!CheckMedia(m, model, v, "referenceAudio", audios.size(), "referenceAudio")) return m;
    if (keyframes > 0 && !CheckMedia(m, model, v, "keyframes", keyframes, "keyframes")) {
        return m;
    }
    if (!sources.empty()) {
        const std::string field = v.Has("videoUri") ? "videoUri" : "promptVideo";
        m.body[field] = sources.front();
    }
    if (!ref_images.empty()) PutMedia(v, m.body, "references", ref_images);
    if (!ref_videos.empty()) PutMedia(v, m.body, "referenceVideos", ref_videos);
    if (!audios.empty()) PutMedia(v, m.body, "referenceAudio", audios);
    if (keyframes > 0) m.body["keyframes"] = input.at("keyframes");
    // Duration, ratio and resolution.
    double seconds = 0;
    bool timed = false;
    if (!Duration(m, model, v, input, seconds, timed)) return m;
    if (timed && v.Has("duration")) {
        m.body["duration"] = seconds;
    } else if (!timed) {
        // The output is as long as the source: the estimate bills its longest.
        for (const char* field : {"videoUri", "promptVideo"}) {
            if (const json* in = InputCaps(v, field);
                in != nullptr && in->contains("max_seconds")) {
                seconds = in->at("max_seconds").get<double>();
            }
        }
    }
    RatioChoice ratio;
    if (!ChooseRatio(m, model, v, input, /*image=*/false, "16:9", ratio)) return m;
    if (ratio.ratio) m.body["ratio"] = *ratio.ratio;
    if (ratio.resolution) m.body["resolution"] = *ratio.resolution;
    // Sound.
    if (input.contains("audio")) {
        const bool want = input.at("audio").get<bool>();
        static const json kNone = json::object();
        const auto found = v.caps.find("audio");
        const json& audio = found == v.caps.end() ? kNone : *found;
        const bool output = audio.value("output", false);
        const bool toggle = audio.value("toggle", false);
        if (want && !output) {
            Exclude(m, model, Filter::kCapability, "audio: the output has no sound");
            return m;
        }
        if (!want && output && !toggle) {
            Exclude(m, model, Filter::kCapability, "audio false: the output always has sound");
            return m;
        }
        if (toggle && v.Has("audio")) m.body["audio"] = want;
    }
    if (!CommonOptions(m, model, v, input)) return m;
    if (input.contains("promptText")) m.body["promptText"] = input.at("promptText");
    // A whole number of seconds is written as an integer (6, not 6.0).
    const json duration = std::floor(seconds) == seconds && std::abs(seconds) < 1e9
                              ? json(static_cast<long long>(seconds))
                              : json(seconds);
    m.resolved = {{"duration", duration},
                  {"ratio", ratio.resolved_ratio},
                  {"resolution", ratio.resolved_class}};
    return m;
}

Mapped MapImage(const Engine::Profile& p, const json& input) {
    Mapped m;
    const std::string& model = p.model->id;
    m.view = p.Find("text_to_image");
    const EndpointView& v = *m.view;
    const auto refs = Uris(input, "referenceImages", "");
    if (!CheckMedia(m, model, v, "referenceImages", refs.size(), "referenceImages")) return m;
    if (!refs.empty()) PutMedia(v, m.body, "referenceImages", refs);
    RatioChoice ratio;
    if (!ChooseRatio(m, model, v, input, /*image=*/true, "1:1", ratio)) return m;
    if (ratio.ratio) m.body["ratio"] = *ratio.ratio;
    const int count = input.value("outputCount", 1);
    if (count > 1) {
        const json oc = v.caps.value("output_count", json());
        bool ok = false;
        if (oc.is_object() && oc.contains("max")) ok = count <= oc.at("max").get<int>();
        if (oc.is_object() && oc.contains("values")) {
            for (const auto& value : oc.at("values")) ok = ok || value.get<int>() == count;
        }
        if (!ok || !v.Has("outputCount")) {
            Exclude(
                m, model, Filter::kCapability,
                "outputCount " + std::to_string(count) + ": " +
                    (oc.is_object() && oc.contains("values") ? "not one of " + Join(oc.at("values"))
                     : oc.is_object() && oc.contains("max")  ? "at most " + oc.at("max").dump()
                                                             : std::string("one image per task")));
            return m;
        }
    }
    if (input.contains("outputCount") && v.Has("outputCount")) m.body["outputCount"] = count;
    m.outputs = count;
    if (!CommonOptions(m, model, v, input)) return m;
    m.body["promptText"] = input.at("promptText");
    m.resolved = {{"aspectRatio", input.value("aspectRatio", "1:1")},
                  {"ratio", ratio.resolved_ratio},
                  {"resolution", ratio.resolved_class}};
    return m;
}

Mapped MapAudio(const Engine::Profile& p, const json& input) {
    Mapped m;
    const std::string& model = p.model->id;
    const bool speech = input.at("type") == "speech";
    m.view = p.Find(speech ? "text_to_speech" : "sound_effect");
    if (m.view == nullptr) {
        Exclude(m, model, Filter::kCapability,
                speech ? "type speech: the model makes sound effects only"
                       : "type audio: the model speaks only");
        return m;
    }
    const EndpointView& v = *m.view;
    const auto refs = Uris(input, "referenceAudios", "");
    if (!CheckMedia(m, model, v, "referenceAudios", refs.size(), "referenceAudios")) return m;
    if (!refs.empty()) PutMedia(v, m.body, "referenceAudios", refs);
    std::string voice = "none";
    if (speech) {
        const json voices = v.caps.value("voices", json::object());
        if (input.contains("voice")) {
            const auto& asked = input.at("voice");
            if (asked.at("type") == "preset") {
                if (!voices.value("preset", false)) {
                    Exclude(m, model, Filter::kCapability, "voice preset: no preset voices");
                    return m;
                }
                m.body["voice"] = {{"type", "service-preset"}, {"presetId", asked.at("presetId")}};
                voice = "preset";
            } else {
                if (!voices.value("clone", false)) {
                    Exclude(m, model, Filter::kCapability,
                            "voice reference-audio: the model cannot clone a voice");
                    return m;
                }
                m.body["voice"] = {{"type", "reference-audio"}, {"audioUri", asked.at("audioUri")}};
                voice = "reference-audio";
            }
        } else {
            voice = "default";
            if (v.required.contains("voice") && voices.contains("default_preset")) {
                m.body["voice"] = {{"type", "service-preset"},
                                   {"presetId", voices.at("default_preset")}};
            }
        }
    } else {
        double seconds = 0;
        bool timed = false;
        if (!Duration(m, model, v, input, seconds, timed)) return m;
        if (input.contains("duration")) m.body["duration"] = input.at("duration");
        if (input.contains("loop")) {
            if (!v.Has("loop")) {
                Exclude(m, model, Filter::kCapability, "loop: not supported");
                return m;
            }
            m.body["loop"] = input.at("loop");
        }
    }
    m.body["promptText"] = input.at("promptText");
    m.resolved = {{"type", speech ? "speech" : "audio"}, {"voice", voice}};
    return m;
}

std::string Credits(double c) { return Number(std::round(c * 1000) / 1000); }

}  // namespace

Engine::Engine(std::shared_ptr<const catalog::Catalog> catalog,
               std::shared_ptr<const validate::SchemaSet> schemas)
    : catalog_(std::move(catalog)), schemas_(std::move(schemas)) {
    for (const auto& model : catalog_->Models()) {
        auto profile = BuildProfile(model, *schemas_);
        if (!profile) continue;
        // Ratios parsed and classed once.
        for (auto& [name, view] : profile->endpoints) {
            if (!view.caps.contains("ratios")) continue;
            const json* classes = view.caps.contains("ratio_resolutions")
                                      ? &view.caps.at("ratio_resolutions")
                                      : nullptr;
            for (const auto& r : view.caps.at("ratios")) {
                const std::string text = r.get<std::string>();
                const auto parsed = ParseRatio(text);
                if (!parsed) continue;
                RatioEntry e{text, parsed->w, parsed->h, IsConcrete(*parsed), "", ""};
                if (e.concrete) {
                    e.video_class = classes != nullptr
                                        ? LabelClass(classes->at(text).get<std::string>())
                                        : VideoClass(*parsed);
                    e.image_tier = ImageTier(*parsed);
                }
                view.ratios.push_back(std::move(e));
            }
        }
        models_[static_cast<int>(profile->modality)].push_back(model.id);
        profiles_.push_back(std::move(*profile));
    }
}

Engine::~Engine() = default;

const std::vector<std::string>& Engine::Models(Modality modality) const {
    return models_[static_cast<int>(modality)];
}

Decision Engine::Route(Modality modality, const Settings& settings, const json& input,
                       const Snapshot& snapshot) const {
    Decision d;
    d.modality = modality;
    d.optimize_for = settings.optimize_for;
    d.price_ceiling = settings.CapFor(modality);
    std::vector<std::string> pool;
    for (const auto& p : profiles_) {
        if (p.modality != modality) continue;
        const std::string& model = p.model->id;
        pool.push_back(model);
        Mapped m = modality == Modality::kVideo   ? MapVideo(p, input)
                   : modality == Modality::kImage ? MapImage(p, input)
                                                  : MapAudio(p, input);
        if (!m.excluded && input.contains("promptText") && m.view->prompt_max > 0) {
            const auto length = validate::Utf16Length(input.at("promptText").get<std::string>());
            if (length > m.view->prompt_max) {
                Exclude(m, model, Filter::kPromptLength,
                        "promptText of " + std::to_string(length) + " characters, at most " +
                            std::to_string(m.view->prompt_max));
            }
        }
        if (!m.excluded) {
            m.body["model"] = model;
            const auto issues = schemas_->Validate(m.view->endpoint, m.body);
            if (!issues.empty()) {
                const std::string where = issues.front().PathText();
                Exclude(m, model, Filter::kInputSupport,
                        (where.empty() ? "" : where + ": ") + issues.front().message);
            }
        }
        const bool listed = settings.ids.contains(model);
        if (!m.excluded && listed != settings.allowlist_only) {
            Exclude(m, model, Filter::kAllowDeny,
                    settings.allowlist_only ? "not in the allowlist" : "in the deny list");
        }
        Candidate c;
        if (!m.excluded) {
            schemas_->FillDefaults(m.view->endpoint, m.body);
            c.credits = catalog_->EstimateCredits(m.view->endpoint, m.body);
            c.per_output = c.credits / std::max(1.0, m.outputs);
            if (d.price_ceiling && c.per_output > *d.price_ceiling) {
                Exclude(m, model, Filter::kPrice,
                        Credits(c.per_output) + " credits per output, above the cap of " +
                            Credits(*d.price_ceiling));
            }
        }
        if (m.excluded) {
            d.excluded.push_back(std::move(*m.excluded));
            continue;
        }
        c.model = model;
        c.provider = p.model->provider;
        c.endpoint = m.view->endpoint;
        c.body = std::move(m.body);
        c.quality = p.model->quality;
        auto measured = snapshot.latency.find(model);
        c.latency =
            BlendedLatency(p.model->typical_latency_seconds,
                           measured == snapshot.latency.end() ? nullptr : &measured->second);
        c.resolved = std::move(m.resolved);
        d.ranked.push_back(std::move(c));
    }
    // The pipeline: survivors after each filter, in order (each model's exclusion, by its place
    // in the pool, read once).
    std::vector<int> left_at(pool.size(), 5);  // the filter a model left at; 5: it stayed
    for (std::size_t i = 0, e = 0; i < pool.size() && e < d.excluded.size(); ++i) {
        if (d.excluded[e].model == pool[i]) left_at[i] = static_cast<int>(d.excluded[e++].filter);
    }
    d.pipeline = json::array();
    for (Filter f : {Filter::kCapability, Filter::kPromptLength, Filter::kInputSupport,
                     Filter::kAllowDeny, Filter::kPrice}) {
        json models = json::array();
        for (std::size_t i = 0; i < pool.size(); ++i) {
            if (left_at[i] > static_cast<int>(f)) models.push_back(pool[i]);
        }
        if (models.empty() && !d.emptied_by) d.emptied_by = f;
        d.pipeline.push_back(
            {{"type", "filter"}, {"filter", FilterName(f)}, {"models", std::move(models)}});
    }
    // Rank.
    auto key = [&](const Candidate& c) {
        switch (settings.optimize_for) {
            case OptimizeFor::kCost:
                return std::make_tuple(c.per_output, static_cast<double>(-c.quality), c.latency,
                                       std::cref(c.model));
            case OptimizeFor::kLatency:
                return std::make_tuple(c.latency, c.per_output, static_cast<double>(-c.quality),
                                       std::cref(c.model));
            case OptimizeFor::kQuality:
                break;
        }
        return std::make_tuple(static_cast<double>(-c.quality), c.per_output, c.latency,
                               std::cref(c.model));
    };
    std::sort(d.ranked.begin(), d.ranked.end(),
              [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
    std::string excluded_prose;
    for (const auto& e : d.excluded) {
        excluded_prose += excluded_prose.empty() ? " Excluded: " : "; ";
        excluded_prose += e.model + " (" + std::string(FilterName(e.filter)) + ": " + e.why + ")";
    }
    if (!excluded_prose.empty()) excluded_prose += ".";
    if (d.ranked.empty()) {
        d.reason = "No eligible model: the " +
                   std::string(FilterName(d.emptied_by.value_or(Filter::kCapability))) +
                   " filter left none." + excluded_prose;
        return d;
    }
    // Capacity.
    std::size_t pick = 0;
    if (settings.on_capacity) {
        while (pick < d.ranked.size() && snapshot.at_limit.contains(d.ranked[pick].model)) {
            d.skipped.push_back(d.ranked[pick].model);
            ++pick;
        }
        if (pick == d.ranked.size()) {
            d.all_exhausted = true;
            d.skipped.clear();
            pick = 0;
        }
        d.capacity_mattered = !d.skipped.empty() || d.all_exhausted;
    }
    d.chosen = pick;
    d.pipeline.push_back(
        {{"type", "capacity"}, {"skipped", d.skipped}, {"allExhausted", d.all_exhausted}});
    const Candidate& chosen = d.ranked[pick];
    std::string why;
    if (d.ranked.size() == 1) {
        d.reason_code = "only_eligible_model";
        d.rank_outcome = "single_candidate";
        why = "the only eligible model";
    } else if (pick > 0) {
        d.reason_code = "filter_order_fallback";
        d.rank_outcome = "fallback";
        why = "the best-ranked model not at the concurrency limit (skipped: ";
        for (std::size_t i = 0; i < d.skipped.size(); ++i) {
            why += (i ? ", " : "") + d.skipped[i];
        }
        why += ")";
    } else {
        switch (settings.optimize_for) {
            case OptimizeFor::kCost:
                d.reason_code = "lowest_cost";
                d.rank_outcome = "cost";
                why =
                    "lowest estimated cost (" + Credits(chosen.per_output) + " credits per output)";
                break;
            case OptimizeFor::kLatency:
                d.reason_code = "best_latency";
                d.rank_outcome = "selected";
                why = "lowest expected latency (" + Credits(chosen.latency) + " s)";
                break;
            case OptimizeFor::kQuality:
                d.reason_code = "best_quality";
                d.rank_outcome = "selected";
                why = "highest quality score (" + std::to_string(chosen.quality) + ")";
                break;
        }
    }
    d.pipeline.push_back({{"type", "rank"}, {"outcome", d.rank_outcome}});
    d.reason =
        "Chose " + chosen.model + ": " + why +
        (d.ranked.size() == 1 ? std::string(".")
                              : ", of " + std::to_string(d.ranked.size()) + " eligible models.") +
        excluded_prose;
    if (d.all_exhausted) {
        d.reason +=
            " Every eligible model is at the concurrency limit: the best-ranked is used "
            "and the task queues.";
    }
    return d;
}

}  // namespace genhost::routing
