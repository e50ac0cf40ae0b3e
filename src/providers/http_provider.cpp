#include "genhost/providers/http_provider.hpp"

#include "genhost/core/crypto.hpp"
#include "provider_http.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace genhost::providers {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr std::size_t kMaxMessageBytes = 1 << 20;  // one protocol answer
constexpr std::size_t kMaxFailureText = 500;       // characters of a provider's reason we keep
constexpr auto kSlice = std::chrono::milliseconds(20);
constexpr auto kMaxBackoff = std::chrono::milliseconds(10000);
constexpr auto kDeleteTimeout = std::chrono::milliseconds(2000);
// A cancelled submission keeps going this long, so a job the provider just created gets its
// DELETE instead of running unseen.
constexpr auto kSubmitGrace = std::chrono::milliseconds(500);
// Progress: the provider's own 0..1 maps to [kSubmitted, kDownloading]; downloads take the rest.
constexpr double kSubmitted = 0.02;
constexpr double kDownloading = 0.9;

constexpr const char* kUnavailable = "The model provider is unavailable; try again later.";
constexpr const char* kProviderFault = "The model provider failed while generating.";
constexpr const char* kProtocolFault = "The model provider answered in a way genhost cannot use.";

// Sanitize keeps a provider's human text safe to show: no control characters, at most
// kMaxFailureText bytes cut on a UTF-8 boundary. (The text came through the JSON parser, so it
// is valid UTF-8.)
std::string Sanitize(std::string_view text) {
    std::string out;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        const bool space = u < 0x20 || u == 0x7f;
        if (space && (out.empty() || out.back() == ' ')) continue;
        out.push_back(space ? ' ' : c);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (out.size() > kMaxFailureText) {
        std::size_t cut = kMaxFailureText;
        while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
        out.resize(cut);
    }
    return out;
}

bool IsCodeSegment(std::string_view s) {
    return !s.empty() && s.size() <= 32 && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
}

// KnownFailureCode: the failure codes of LIMITS_AND_PRICES.md (the SAFETY.INPUT/OUTPUT and
// INTERNAL.BAD_OUTPUT families with any last segment).
bool KnownFailureCode(std::string_view code) {
    static constexpr std::array<std::string_view, 7> kExact = {
        "INTERNAL",
        "ASSET.INVALID",
        "THIRD_PARTY.UNAVAILABLE",
        "THIRD_PARTY.INPUT_VALIDATION",
        "INPUT_PREPROCESSING.SAFETY.TEXT",
        "INPUT_PREPROCESSING.SAFETY.THIRD_PARTY",
        "INPUT_PREPROCESSING.INTERNAL"};
    if (std::find(kExact.begin(), kExact.end(), code) != kExact.end()) return true;
    for (const std::string_view family :
         {"SAFETY.INPUT.", "SAFETY.OUTPUT.", "INTERNAL.BAD_OUTPUT."}) {
        if (code.substr(0, family.size()) == family && IsCodeSegment(code.substr(family.size()))) {
            return true;
        }
    }
    return false;
}

// ShowsProviderText: failures whose message is about the user's input, so the provider's reason
// helps; the others (faults on the provider's side) get genhost's generic text.
bool ShowsProviderText(std::string_view code) {
    return code.rfind("SAFETY.", 0) == 0 || code == "ASSET.INVALID" ||
           code == "THIRD_PARTY.INPUT_VALIDATION" ||
           code.rfind("INPUT_PREPROCESSING.SAFETY.", 0) == 0;
}

std::string DefaultMessage(std::string_view code) {
    if (code.rfind("SAFETY.", 0) == 0 || code.rfind("INPUT_PREPROCESSING.SAFETY.", 0) == 0) {
        return "The model provider's content moderation refused this task.";
    }
    if (code == "ASSET.INVALID") return "The model provider could not read a media input.";
    if (code == "THIRD_PARTY.INPUT_VALIDATION") return "The model provider refused the input.";
    if (code == "THIRD_PARTY.UNAVAILABLE") return kUnavailable;
    return kProviderFault;
}

bool ValidExtension(std::string_view ext) {
    return !ext.empty() && ext.size() <= 10 && std::all_of(ext.begin(), ext.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    });
}

// ExtensionOfPath returns the extension of the last segment of a URL target ("" if none).
std::string ExtensionOfPath(std::string_view target) {
    target = target.substr(0, target.find('?'));
    const auto slash = target.rfind('/');
    const auto last = slash == std::string_view::npos ? target : target.substr(slash + 1);
    const auto dot = last.rfind('.');
    if (dot == std::string_view::npos) return {};
    std::string ext(last.substr(dot + 1));
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ValidExtension(ext) ? ext : std::string();
}

std::string ExtensionOfContentType(std::string_view content_type) {
    std::string type(content_type.substr(0, content_type.find(';')));
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    while (!type.empty() && type.back() == ' ') type.pop_back();
    static const std::map<std::string, std::string, std::less<>> kTypes = {
        {"image/png", "png"},   {"image/jpeg", "jpg"},      {"image/webp", "webp"},
        {"image/x-exr", "exr"}, {"video/mp4", "mp4"},       {"video/quicktime", "mov"},
        {"video/webm", "webm"}, {"audio/wav", "wav"},       {"audio/x-wav", "wav"},
        {"audio/wave", "wav"},  {"audio/mpeg", "mp3"},      {"audio/ogg", "ogg"},
        {"audio/opus", "opus"}, {"audio/flac", "flac"},     {"audio/aac", "aac"},
        {"audio/mp4", "m4a"},   {"application/zip", "zip"}, {"application/json", "json"}};
    const auto it = kTypes.find(type);
    return it == kTypes.end() ? std::string() : it->second;
}

// SniffMediaType names the type of a stored input from its first bytes, for a data URI.
std::string SniffMediaType(std::string_view b, const std::string& kind) {
    auto at = [&](std::size_t pos, std::string_view magic) {
        return b.size() >= pos + magic.size() && b.substr(pos, magic.size()) == magic;
    };
    if (at(0, "\x89PNG\r\n\x1a\n")) return "image/png";
    if (at(0, "\xff\xd8\xff")) return "image/jpeg";
    if (at(0, "RIFF") && at(8, "WEBP")) return "image/webp";
    if (at(0, "RIFF") && at(8, "WAVE")) return "audio/wav";
    if (at(4, "ftypqt")) return "video/quicktime";
    if (at(4, "ftyp")) return kind == "audio" ? "audio/mp4" : "video/mp4";
    if (at(0, "\x1a\x45\xdf\xa3")) return kind == "audio" ? "audio/webm" : "video/webm";
    if (at(0, "OggS")) return "audio/ogg";
    if (at(0, "fLaC")) return "audio/flac";
    if (at(0, "ID3")) return "audio/mpeg";
    if (b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0xff) {
        const auto second = static_cast<unsigned char>(b[1]);
        if ((second & 0xf6) == 0xf0) return "audio/aac";  // ADTS
        if ((second & 0xe0) == 0xe0) return "audio/mpeg";
    }
    return "application/octet-stream";
}

bool IsPassThrough(const std::string& media) {
    return media.rfind("https://", 0) == 0 || media.rfind("http://", 0) == 0 ||
           media.rfind("data:", 0) == 0;
}

std::string EscapePointer(std::string_view key) {
    std::string out;
    for (const char c : key) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out.push_back(c);
        }
    }
    return out;
}

bool ValidJobId(std::string_view id) {
    return !id.empty() && id.size() <= 200 && std::all_of(id.begin(), id.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
               c == '~' || c == ':';
    });
}

std::string Excerpt(const std::string& body) {
    return body.size() <= 200 ? body : body.substr(0, 200) + "...";
}

}  // namespace

std::vector<MediaInput> MediaInputsOf(const catalog::Catalog& catalog, const std::string& endpoint,
                                      const json& input) {
    std::vector<MediaInput> out;
    if (!input.is_object()) return out;
    const auto model_id = input.find("model");
    if (model_id == input.end() || !model_id->is_string()) return out;
    const auto* model = catalog.FindModel(model_id->get<std::string>());
    if (model == nullptr) return out;
    const json caps = model->CapabilitiesFor(endpoint);
    const auto inputs = caps.find("inputs");
    if (inputs == caps.end() || !inputs->is_object()) return out;
    for (const auto& [path, spec] : inputs->items()) {
        const auto kind_spec = spec.find("kind");
        const std::string kind =
            kind_spec != spec.end() && kind_spec->is_string() ? kind_spec->get<std::string>() : "";
        // Where several kinds are allowed, the item's own "type" says which.
        auto kind_from = [&](const json& holder) {
            if (!kind.empty() || !holder.is_object()) return kind;
            const auto type = holder.find("type");
            if (type != holder.end() && type->is_string()) {
                const auto t = type->get<std::string>();
                if (t == "image" || t == "video" || t == "audio") return t;
            }
            return std::string();
        };
        const json* parent = nullptr;
        const json* node = &input;
        std::string pointer;
        bool found = true;
        std::string_view rest = path;
        while (found && !rest.empty()) {
            const auto dot = rest.find('.');
            const std::string key(rest.substr(0, dot));
            rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
            const auto child = node->is_object() ? node->find(key) : node->end();
            if (!node->is_object() || child == node->end()) {
                found = false;
                break;
            }
            parent = node;
            node = &*child;
            pointer += "/" + EscapePointer(key);
        }
        if (!found) continue;
        if (node->is_string()) {
            out.push_back({pointer, parent ? kind_from(*parent) : kind});
        } else if (node->is_array()) {
            for (std::size_t i = 0; i < node->size(); ++i) {
                const json& item = (*node)[i];
                const std::string at = pointer + "/" + std::to_string(i);
                if (item.is_string()) {
                    out.push_back({at, kind});
                } else if (item.is_object() && item.contains("uri") && item["uri"].is_string()) {
                    out.push_back({at + "/uri", kind_from(item)});
                }
            }
        } else if (node->is_object() && node->contains("uri") && (*node)["uri"].is_string()) {
            out.push_back({pointer + "/uri", kind_from(*node)});
        }
    }
    return out;
}

HttpProvider::HttpProvider(HttpProviderOptions options, const catalog::Catalog& catalog,
                           InputUrlFn input_url)
    : options_(std::move(options)), catalog_(catalog), input_url_(std::move(input_url)) {
    auto base = detail::ParseUrl(options_.url);
    if (!base || base->has_query) {
        throw std::invalid_argument(
            "provider " + options_.name +
            ": url must be an http:// or https:// URL without a query: " + options_.url);
    }
    while (!base->path.empty() && base->path.back() == '/') base->path.pop_back();
    base_ = std::make_unique<detail::Url>(std::move(*base));
    for (const auto& [name, value] : options_.headers) {
        const bool name_ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
        });
        const bool value_ok = std::none_of(
            value.begin(), value.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
        if (!name_ok || !value_ok) {
            throw std::invalid_argument("provider " + options_.name + ": invalid header " + name);
        }
    }
    http_ = std::make_unique<detail::OutboundHttp>(options_.ca_file);
}

HttpProvider::~HttpProvider() = default;

// Session is one run of one task against the provider.
class HttpProvider::Session {
  public:
    Session(const HttpProvider& provider, TaskContext& ctx)
        : p_(provider),
          o_(provider.options_),
          ctx_(ctx),
          deadline_(Clock::now() + o_.task_timeout),
          run_key_(ctx.task_id() + "." + HexEncode(RandomBytes(6))) {}

    std::vector<Output> Run() {
        Progress(0);
        const json submission = Submission();
        Submit(submission);
        try {
            if (ctx_.IsCancelled()) throw Cancelled();
            const json outputs = PollUntilDone();
            auto files = Download(outputs);
            // The outputs are ours now: the provider may forget the job.
            DeleteJob();
            Progress(1.0);
            return files;
        } catch (...) {
            DeleteJob();
            throw;
        }
    }

  private:
    enum class Abort { kNow, kAfterGrace };

    detail::Url JobUrl() const {
        detail::Url url = *p_.base_;
        url.path += "/v1/tasks/" + job_;
        return url;
    }

    void Progress(double fraction) {
        shown_ = std::max(shown_, std::clamp(fraction, 0.0, 1.0));
        ctx_.Progress(shown_);
    }

    std::string Where() const {
        return "task " + ctx_.task_id() + ": provider " + o_.name +
               (job_.empty() ? std::string() : " job " + job_);
    }

    [[noreturn]] void Unavailable(const std::string& detail) {
        spdlog::warn("{}: unavailable: {}", Where(), detail);
        throw TaskFailure("THIRD_PARTY.UNAVAILABLE", kUnavailable);
    }

    [[noreturn]] void Violation(const std::string& detail) {
        spdlog::error("{}: protocol violation: {}", Where(), detail);
        throw TaskFailure("INTERNAL", kProtocolFault);
    }

    [[noreturn]] void TimedOut() {
        spdlog::warn("{}: did not finish within {} s", Where(),
                     std::chrono::duration_cast<std::chrono::seconds>(o_.task_timeout).count());
        throw TaskFailure("THIRD_PARTY.UNAVAILABLE",
                          "The model provider did not finish in time; try again later.");
    }

    std::chrono::milliseconds Remaining() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    }

    // Wait sleeps `d` in slices, honouring cancellation and the task's deadline.
    void Wait(std::chrono::milliseconds d) {
        const auto until = Clock::now() + d;
        for (;;) {
            ctx_.CheckCancelled();
            const auto now = Clock::now();
            if (now >= deadline_) TimedOut();
            if (now >= until) return;
            std::this_thread::sleep_for(std::min<Clock::duration>({kSlice, until - now}));
        }
    }

    std::function<bool()> CancelPredicate(Abort mode) {
        if (mode == Abort::kNow) return [this] { return ctx_.IsCancelled(); };
        return [this, seen = std::optional<Clock::time_point>()]() mutable {
            if (!ctx_.IsCancelled()) return false;
            if (!seen) seen = Clock::now();
            return Clock::now() - *seen > kSubmitGrace;
        };
    }

    static bool Transient(int status) { return status >= 500 || status == 408 || status == 429; }

    // Call sends one protocol request, retrying transport failures and transient statuses with
    // exponential backoff; gives up with THIRD_PARTY.UNAVAILABLE.
    detail::Response Call(const std::string& what, const std::string& method,
                          const detail::Url& url, const std::string& body, Abort mode,
                          const detail::Headers& extra = {}) {
        detail::Headers headers = o_.headers;
        headers.insert(headers.end(), extra.begin(), extra.end());
        auto delay = o_.backoff;
        for (int attempt = 0;; ++attempt) {
            if (mode == Abort::kNow) ctx_.CheckCancelled();
            const auto remaining = Remaining();
            if (remaining.count() <= 0) TimedOut();
            std::string failure;
            try {
                auto r = p_.http_->Request(method, url, headers, body,
                                           std::min(o_.request_timeout, remaining),
                                           kMaxMessageBytes, CancelPredicate(mode));
                if (!Transient(r.status)) return r;
                failure = "HTTP " + std::to_string(r.status) + " " + Excerpt(r.body);
            } catch (const detail::Aborted&) {
                throw Cancelled();
            } catch (const detail::TransportError& e) {
                failure = e.what();
            }
            if (attempt >= o_.retries) {
                Unavailable(what + " failed " + std::to_string(attempt + 1) +
                            " time(s), last: " + failure);
            }
            spdlog::info("{}: {} failed ({}), retrying in {} ms", Where(), what, failure,
                         delay.count());
            Wait(delay);
            delay = std::min(delay * 2, kMaxBackoff);
        }
    }

    // Submission is the task as the provider sees it (docs/providers.md).
    json Submission() {
        json input = ctx_.input();
        json inputs = json::array();
        for (const auto& media : MediaInputsOf(p_.catalog_, ctx_.endpoint(), input)) {
            const json::json_pointer at(media.pointer);
            const std::string original = input.at(at).get<std::string>();
            const std::string url = InputUrl(original, media.kind);
            input[at] = url;
            inputs.push_back({{"pointer", media.pointer}, {"kind", media.kind}, {"url", url}});
        }
        return {{"taskId", ctx_.task_id()},
                {"endpoint", ctx_.endpoint()},
                {"model", ctx_.model()},
                {"input", std::move(input)},
                {"inputs", std::move(inputs)}};
    }

    // InputUrl is where the provider fetches one media input.
    std::string InputUrl(const std::string& media, const std::string& kind) {
        if (IsPassThrough(media)) return media;
        // A stored input (or an upload): the worker's resolver names its file.
        const std::string path =
            ctx_.Input(media, MediaKindByName(kind).value_or(MediaKind::kImage));
        if (p_.input_url_) return p_.input_url_(ctx_.task_id(), path);
        std::error_code ec;
        const auto size = std::filesystem::file_size(path, ec);
        if (ec) throw std::runtime_error("cannot stat input " + path + ": " + ec.message());
        if (size > o_.max_inline_input_bytes) {
            spdlog::warn("{}: input {} is {} bytes, over the inline limit of {}", Where(), media,
                         size, o_.max_inline_input_bytes);
            throw TaskFailure("INTERNAL",
                              "A media input is too large to hand to the model provider.");
        }
        std::ifstream in(path, std::ios::binary);
        std::ostringstream bytes;
        bytes << in.rdbuf();
        if (!in) throw std::runtime_error("cannot read input " + path);
        const std::string data = bytes.str();
        return "data:" + SniffMediaType(data, kind) + ";base64," + Base64Encode(data);
    }

    void Submit(const json& submission) {
        detail::Url url = *p_.base_;
        url.path += "/v1/tasks";
        const auto r = Call("submission", "POST", url, submission.dump(), Abort::kAfterGrace,
                            {{"Idempotency-Key", run_key_}});
        if (r.status >= 400 && r.status < 500) {
            if (r.status == 401 || r.status == 403 || r.status == 404 || r.status == 405) {
                spdlog::error(
                    "{}: submission answered HTTP {} (check the provider's url and "
                    "headers): {}",
                    Where(), r.status, Excerpt(r.body));
                throw TaskFailure("INTERNAL", kProtocolFault);
            }
            std::string reason;
            const json body = json::parse(r.body, nullptr, false);
            if (body.is_object() && body.contains("error") && body["error"].is_string()) {
                reason = Sanitize(body["error"].get<std::string>());
            }
            spdlog::info("{}: input refused with HTTP {}: {}", Where(), r.status, Excerpt(r.body));
            throw TaskFailure("THIRD_PARTY.INPUT_VALIDATION",
                              reason.empty() ? "The model provider refused the input." : reason);
        }
        if (r.status < 200 || r.status > 299) {
            Violation("submission answered HTTP " + std::to_string(r.status));
        }
        const json body = json::parse(r.body, nullptr, false);
        if (!body.is_object() || !body.contains("id") || !body["id"].is_string() ||
            !ValidJobId(body["id"].get_ref<const std::string&>())) {
            Violation("submission answer has no valid job id: " + Excerpt(r.body));
        }
        job_ = body["id"].get<std::string>();
        job_open_ = true;
        spdlog::info("{}: submitted ({} {})", Where(), ctx_.endpoint(), ctx_.model());
        Progress(kSubmitted);
    }

    json PollUntilDone() {
        for (;;) {
            const auto r = Call("poll", "GET", JobUrl(), "", Abort::kNow);
            if (r.status != 200) {
                Violation("poll answered HTTP " + std::to_string(r.status) + " " + Excerpt(r.body));
            }
            json job = json::parse(r.body, nullptr, false);
            if (!job.is_object() || !job.contains("status") || !job["status"].is_string()) {
                Violation("poll answer is not a job: " + Excerpt(r.body));
            }
            if (job.contains("progress") && job["progress"].is_number()) {
                Progress(kSubmitted + (kDownloading - kSubmitted) *
                                          std::clamp(job["progress"].get<double>(), 0.0, 1.0));
            }
            const std::string status = job["status"].get<std::string>();
            if (status == "PENDING" || status == "RUNNING") {
                Wait(o_.poll_interval);
                continue;
            }
            finished_ = status == "SUCCEEDED" || status == "FAILED" || status == "CANCELLED";
            if (status == "SUCCEEDED") {
                return job.contains("outputs") ? job["outputs"] : json();
            }
            if (status == "FAILED") Failed(job);
            if (status == "CANCELLED") {
                Unavailable("the provider cancelled the job");
            }
            Violation("unknown job status " + Excerpt(status));
        }
    }

    [[noreturn]] void Failed(const json& job) {
        const std::string code = job.contains("failureCode") && job["failureCode"].is_string()
                                     ? job["failureCode"].get<std::string>()
                                     : std::string();
        const std::string text = job.contains("failure") && job["failure"].is_string()
                                     ? Sanitize(job["failure"].get<std::string>())
                                     : std::string();
        spdlog::info("{}: job failed: {} {}", Where(), code.empty() ? "(no code)" : code, text);
        if (!KnownFailureCode(code)) throw TaskFailure("INTERNAL", kProviderFault);
        if (ShowsProviderText(code) && !text.empty()) throw TaskFailure(code, text);
        throw TaskFailure(code, DefaultMessage(code));
    }

    std::vector<Output> Download(const json& outputs) {
        if (!outputs.is_array() || outputs.empty() ||
            outputs.size() > static_cast<std::size_t>(o_.max_outputs)) {
            Violation("a succeeded job needs 1 to " + std::to_string(o_.max_outputs) +
                      " outputs: " + Excerpt(outputs.dump()));
        }
        if (ctx_.scratch_dir().empty()) {
            throw std::logic_error("the HTTP provider needs a scratch folder");
        }
        std::vector<Output> files;
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            const json& item = outputs[i];
            std::string ref;
            std::string ext;
            if (item.is_string()) {
                ref = item.get<std::string>();
            } else if (item.is_object() && item.contains("url") && item["url"].is_string()) {
                ref = item["url"].get<std::string>();
                if (item.contains("extension")) {
                    if (!item["extension"].is_string() ||
                        !ValidExtension(item["extension"].get_ref<const std::string&>())) {
                        Violation("output " + std::to_string(i) + " has an invalid extension");
                    }
                    ext = item["extension"].get<std::string>();
                }
            } else {
                Violation("output " + std::to_string(i) + " is not a URL or {url}");
            }
            const auto url = detail::Resolve(*p_.base_, ref);
            if (!url) Violation("output " + std::to_string(i) + " has an invalid URL");
            if (ext.empty()) ext = ExtensionOfPath(url->Target());
            const std::string stem = ctx_.scratch_dir() + "/provider_output_" + std::to_string(i);
            const std::string content_type = DownloadOne(i, *url, stem + ".part");
            if (ext.empty()) ext = ExtensionOfContentType(content_type);
            if (ext.empty()) {
                Violation("output " + std::to_string(i) +
                          " has no extension and an unknown "
                          "Content-Type " +
                          Excerpt(content_type));
            }
            const std::string file = stem + "." + ext;
            std::filesystem::rename(stem + ".part", file);
            files.push_back({std::to_string(i) + "." + ext, std::string(), file});
            Progress(kDownloading + (1.0 - kDownloading) * static_cast<double>(i + 1) /
                                        static_cast<double>(outputs.size() + 1));
        }
        return files;
    }

    // DownloadOne streams output `index` into `path`; returns its Content-Type.
    std::string DownloadOne(std::size_t index, const detail::Url& url, const std::string& path) {
        const std::string what = "download of output " + std::to_string(index);
        auto delay = o_.backoff;
        for (int attempt = 0;; ++attempt) {
            ctx_.CheckCancelled();
            const auto remaining = Remaining();
            if (remaining.count() <= 0) TimedOut();
            std::string failure;
            bool too_large = false;
            try {
                // Credentials go to the provider's own host only, never to a CDN it names.
                const bool own = url.host == p_.base_->host && url.port == p_.base_->port &&
                                 url.tls == p_.base_->tls;
                const auto r = p_.http_->Download(
                    url, own ? o_.headers : detail::Headers{}, path,
                    std::min(o_.download_timeout, remaining), o_.max_output_bytes,
                    [this] { return ctx_.IsCancelled(); }, &too_large);
                if (r.status >= 200 && r.status <= 299) return r.content_type;
                if (!Transient(r.status)) {
                    Violation(what + " answered HTTP " + std::to_string(r.status));
                }
                failure = "HTTP " + std::to_string(r.status);
            } catch (const detail::Aborted&) {
                throw Cancelled();
            } catch (const detail::TransportError& e) {
                if (too_large) {
                    spdlog::warn("{}: output {} is larger than {} bytes", Where(), index,
                                 o_.max_output_bytes);
                    throw TaskFailure("INTERNAL.BAD_OUTPUT.CODE01",
                                      "The model provider's output was larger than allowed.");
                }
                failure = e.what();
            }
            if (attempt >= o_.retries) {
                Unavailable(what + " failed " + std::to_string(attempt + 1) +
                            " time(s), last: " + failure);
            }
            spdlog::info("{}: {} failed ({}), retrying in {} ms", Where(), what, failure,
                         delay.count());
            Wait(delay);
            delay = std::min(delay * 2, kMaxBackoff);
        }
    }

    // DeleteJob cancels the provider's job, or releases it once it has finished; once per job,
    // failures are only logged.
    void DeleteJob() noexcept {
        if (!job_open_ || job_.empty()) return;
        job_open_ = false;
        const char* why = finished_ ? "release" : "cancel";
        try {
            const auto r = p_.http_->Request("DELETE", JobUrl(), o_.headers, "",
                                             std::min(o_.request_timeout, kDeleteTimeout),
                                             kMaxMessageBytes, {});
            if ((r.status < 200 || r.status > 299) && r.status != 404) {
                spdlog::warn("{}: DELETE ({}) answered HTTP {}", Where(), why, r.status);
            } else {
                spdlog::debug("{}: deleted ({})", Where(), why);
            }
        } catch (const std::exception& e) {
            spdlog::warn("{}: DELETE ({}) failed: {}", Where(), why, e.what());
        }
    }

    const HttpProvider& p_;
    const HttpProviderOptions& o_;
    TaskContext& ctx_;
    const Clock::time_point deadline_;
    const std::string run_key_;
    std::string job_;
    bool job_open_ = false;  // submitted and not deleted yet
    bool finished_ = false;  // the provider reported the job ended
    double shown_ = 0;
};

std::vector<Output> HttpProvider::Run(TaskContext& ctx) { return Session(*this, ctx).Run(); }

}  // namespace genhost::providers
