// /v1/voices: custom voices (docs/voices.md, CLIENTS.md 3.5).
//
// POST validates the body (schemas/voices.json). A sample to clone is read and probed as a
// generation input is read and kept in the output store (`voice-<id>/sample-<n>`); the voice is
// stored PROCESSING and its job (tasks/voice_processor.hpp) makes it READY or FAILED. The answer
// is `{id}`. GET reads one or lists them (newest first, keyset pages); PATCH changes the name or
// description (an empty body changes nothing) and answers the voice; DELETE removes it, its
// sample and its preview. POST /v1/voices/preview speaks a short text in the voice a description
// designs, keeps the MP3 for 24 hours and answers its signed URL.
#include "genhost/api/page.hpp"
#include "genhost/api/voices_routes.hpp"
#include "handlers.hpp"
#include "stored_media.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/tasks/voice_processor.hpp"

namespace genhost::api {

namespace asio = boost::asio;

namespace {

constexpr double kPreviewSeconds = 86400;  // a preview's URL and object live 24 hours

// The request bodies (schemas/voices_update.json, voices_preview.json), decoded.
struct VoiceChangeBody {
    std::optional<std::string> name;
    bool has_description = false;  // given, maybe as null (which clears it)
    std::optional<std::string> description;
};
void from_json(const nlohmann::json& j, VoiceChangeBody& b) {
    OptionalField(j, "name", b.name);
    b.has_description = j.contains("description");
    OptionalField(j, "description", b.description);
}
struct PreviewBody {
    std::string model;
    std::string prompt;
};
void from_json(const nlohmann::json& j, PreviewBody& b) {
    j.at("model").get_to(b.model);
    j.at("prompt").get_to(b.prompt);
}

nlohmann::json VoiceJson(const App& app, const store::VoiceRecord& v) {
    nlohmann::json out = {
        {"id", v.id},
        {"createdAt", FormatTimestamp(v.created_at)},
        {"name", v.name},
        {"description", v.description ? nlohmann::json(*v.description) : nlohmann::json()},
        {"status", store::ProcessingStatusName(v.status)},
    };
    if (v.status == store::ProcessingStatus::kReady) {
        out["previewUrl"] = app.signer.Url(tasks::VoiceFolder(v.id), "preview.mp3",
                                           std::min(app.output_url_ttl_seconds, kPreviewSeconds));
    } else if (v.status == store::ProcessingStatus::kFailed) {
        out["failureReason"] = v.failure_reason;
    }
    return out;
}

http::Response NotFound(const App& app) {
    return http::Response::Error(ApiError::NotFound("Voice not found"), app.doc_url);
}

asio::awaitable<http::Response> CreateVoice(App& app, http::Request& req,
                                            const auth::Principal& who) {
    auto checked = co_await CheckedBody(app, std::move(req.body), "voices", /*defaults=*/true);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    nlohmann::json input = std::move(*checked);
    const auto& from = input.at("from");
    store::NewVoice voice;
    voice.id = NewUuid();
    voice.org_id = who.org_id;
    voice.name = input.at("name").get<std::string>();
    if (input.contains("description") && !input.at("description").is_null()) {
        voice.description = input.at("description").get<std::string>();
    }
    voice.source = from.at("type").get<std::string>();
    const std::string folder = tasks::VoiceFolder(voice.id);
    if (voice.source == "audio") {
        const std::vector<std::string> path = {"from", "audio"};
        auto sample =
            co_await StoreMedia(app, who.org_id, folder, from.at("audio").get<std::string>(),
                                MediaKind::kAudio, path, "sample");
        if (!sample) co_return http::Response::Error(sample.error(), app.doc_url);
        voice.sample_name = sample->name;
        voice.sample_uri = sample->uri;
    } else {
        voice.model = from.at("model").get<std::string>();
        voice.prompt = from.at("prompt").get<std::string>();
    }
    std::optional<store::VoiceRecord> created;
    std::exception_ptr failure;
    try {
        created = co_await app.voices.repo->Create(std::move(voice));
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure) {
        co_await RemoveStored(app, folder, kWholeFolder);  // no voice owns the stored sample
        std::rethrow_exception(failure);
    }
    if (app.voices.kick) app.voices.kick();
    co_return http::Response::Json(200, {{"id", created->id}});
}

asio::awaitable<http::Response> GetVoice(App& app, http::Request& req, const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    const auto voice = co_await app.voices.repo->Get(who.org_id, id);
    if (!voice) co_return NotFound(app);
    co_return http::Response::Json(200, VoiceJson(app, *voice));
}

asio::awaitable<http::Response> ListVoices(App& app, http::Request& req,
                                           const auth::Principal& who) {
    const auto query = ParsePageQuery(req);
    if (!query) co_return http::Response::Error(query.error(), app.doc_url);
    const auto page = co_await app.voices.repo->List(who.org_id, query->limit, query->after);
    nlohmann::json data = nlohmann::json::array();
    for (const auto& v : page.voices) data.push_back(VoiceJson(app, v));
    std::optional<store::Keyset> next;
    if (page.more && !page.voices.empty()) {
        next = store::Keyset{page.voices.back().created_at, page.voices.back().id};
    }
    co_return http::Response::Json(200, PageJson(std::move(data), next));
}

asio::awaitable<http::Response> UpdateVoice(App& app, http::Request& req,
                                            const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    auto body =
        co_await DecodedBody<VoiceChangeBody>(app, std::move(req.body), "voices_update", false);
    if (!body) co_return http::Response::Error(body.error(), app.doc_url);
    store::VoiceChange change;
    change.name = std::move(body->name);
    change.set_description = body->has_description;
    change.description = std::move(body->description);
    const auto updated = co_await app.voices.repo->Update(who.org_id, id, std::move(change));
    if (!updated) co_return NotFound(app);
    co_return http::Response::Json(200, VoiceJson(app, *updated));
}

asio::awaitable<http::Response> DeleteVoice(App& app, http::Request& req,
                                            const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    const bool found = co_await app.voices.repo->Delete(who.org_id, id);
    if (!found) co_return NotFound(app);
    co_await RemoveStored(app, tasks::VoiceFolder(id), kWholeFolder);
    co_return http::Response::NoContent();
}

asio::awaitable<http::Response> PreviewVoice(App& app, http::Request& req, const auth::Principal&) {
    auto body = co_await DecodedBody<PreviewBody>(app, std::move(req.body), "voices_preview", true);
    if (!body) co_return http::Response::Error(body.error(), app.doc_url);
    // The same model and description always design the same voice, and say the same text: the
    // preview is kept under their digest, and asking again only moves its expiry.
    const std::string folder =
        "voice-preview-" + HexEncode(Sha256(body->model + "\n" + body->prompt)).substr(0, 32);
    double seconds = 0;
    co_await OnBlocking(app, [&] {
        const auto stored = app.outputs.Stat(folder, "preview.mp3");
        if (stored) {
            // The length is kept beside it (the MP3's own header would need decoding).
            const auto length = app.outputs.Stat(folder, "seconds");
            if (length) {
                seconds = std::stod(app.outputs.Read(folder, "seconds", 0, length->size));
                return;
            }
        }
        const media::VoiceProfile profile = media::DesignVoiceProfile(body->prompt);
        const std::string mp3 = tasks::VoicePreviewMp3(profile, seconds);
        app.outputs.Put(folder, "preview.mp3", mp3);
        app.outputs.Put(folder, "seconds", std::to_string(seconds));
    });
    co_await app.voices.repo->ExpireOutput(folder, kPreviewSeconds);
    co_return http::Response::Json(200,
                                   {{"url", app.signer.Url(folder, "preview.mp3", kPreviewSeconds)},
                                    {"durationSecs", std::round(seconds * 1000) / 1000}});
}

}  // namespace

void RegisterVoiceRoutes(Bindings& b) {
    b.Authed("listVoices", ListVoices);
    b.Authed("createVoice", CreateVoice);
    b.Authed("previewVoice", PreviewVoice);
    b.Authed("getVoice", GetVoice);
    b.Authed("updateVoice", UpdateVoice);
    b.Authed("deleteVoice", DeleteVoice);
}

}  // namespace genhost::api
