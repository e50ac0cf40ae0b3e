// /v1/avatars: custom avatars (docs/avatars.md).
//
// POST validates the body (schemas/avatars.json), checks what it refers to (custom voices: none
// exist on this server yet, so any is unknown; knowledge documents of the organization), reads
// and probes the reference image as generation inputs are read (src/assets), keeps its bytes in
// the output store (`avatar-<id>/source-<n>`) and stores the avatar PROCESSING; the avatar
// processor (src/tasks/avatar_processor.cpp) then makes it READY or FAILED. PATCH does the same for
// the fields it names and makes the avatar PROCESSING again; an avatar still PROCESSING cannot be
// changed (409). GET lists (newest first, keyset cursor) or reads one; DELETE removes the avatar
// and its pictures.
#include "genhost/api/avatars_routes.hpp"
#include "genhost/api/page.hpp"
#include "handlers.hpp"
#include "stored_media.hpp"

#include "genhost/assets/resolver.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/tasks/avatar_processor.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <charconv>
#include <fstream>
#include <iterator>

namespace genhost::api {

namespace asio = boost::asio;

namespace {

constexpr std::string_view kPresetVoiceType = "service-live-preset";

struct PresetVoice {
    const char* id;
    const char* name;
    const char* description;
};

// The 30 avatar preset voices (common.json's avatarVoiceId) as the API describes them; each is
// the espeak-ng voice of src/providers/edit_avatar.cpp, described by its accent, pitch and pace.
constexpr std::array<PresetVoice, 30> kPresetVoices = {{
    {"victoria", "Victoria", "British English female voice, medium pitch, steady pace"},
    {"vincent", "Vincent", "British English male voice, low pitch, slow pace"},
    {"clara", "Clara", "American English female voice, medium pitch, steady pace"},
    {"drew", "Drew", "American English male voice, medium pitch, steady pace"},
    {"skye", "Skye", "American English female voice, high pitch, quick pace"},
    {"max", "Max", "American English male voice, medium pitch, quick pace"},
    {"morgan", "Morgan", "American English female voice, medium pitch, steady pace"},
    {"felix", "Felix", "British English male voice, medium pitch, steady pace"},
    {"mia", "Mia", "American English female voice, high pitch, steady pace"},
    {"marcus", "Marcus", "American English male voice, low pitch, slow pace"},
    {"summer", "Summer", "American English female voice, high pitch, quick pace"},
    {"ruby", "Ruby", "British English female voice, high pitch, steady pace"},
    {"aurora", "Aurora", "British English female voice, high pitch, slow pace"},
    {"jasper", "Jasper", "British English male voice, medium pitch, steady pace"},
    {"leo", "Leo", "American English male voice, medium pitch, quick pace"},
    {"adrian", "Adrian", "British English male voice, medium pitch, steady pace"},
    {"nina", "Nina", "American English female voice, medium pitch, steady pace"},
    {"emma", "Emma", "British English female voice, medium pitch, steady pace"},
    {"blake", "Blake", "American English male voice, low pitch, steady pace"},
    {"david", "David", "American English male voice, low pitch, steady pace"},
    {"maya", "Maya", "American English female voice, medium pitch, steady pace"},
    {"nathan", "Nathan", "American English male voice, medium pitch, steady pace"},
    {"sam", "Sam", "American English male voice, medium pitch, steady pace"},
    {"georgia", "Georgia", "British English female voice, medium pitch, slow pace"},
    {"petra", "Petra", "British English female voice, medium pitch, steady pace"},
    {"adam", "Adam", "American English male voice, low pitch, steady pace"},
    {"zach", "Zach", "American English male voice, medium pitch, quick pace"},
    {"violet", "Violet", "American English female voice, high pitch, steady pace"},
    {"roman", "Roman", "British English male voice, low pitch, slow pace"},
    {"luna", "Luna", "American English female voice, high pitch, steady pace"},
}};

// VoiceJson is the response form of an avatar's voice (SPEC.md "Voice", CLIENTS.md 3.9): a
// custom voice shows its name and description while it exists, and `deleted: true` without them
// once it is gone.
nlohmann::json VoiceJson(const store::AvatarRecord& a) {
    const auto voice = nlohmann::json::parse(a.voice_json, nullptr, false);
    if (voice.value("type", "") == "custom") {
        nlohmann::json out = {{"type", "custom"}, {"id", voice.value("id", "")}};
        if (!a.custom_voice) {
            out["deleted"] = true;
            return out;
        }
        out["deleted"] = false;
        out["name"] = a.custom_voice->name;
        out["description"] = a.custom_voice->description
                                 ? nlohmann::json(*a.custom_voice->description)
                                 : nlohmann::json();
        return out;
    }
    const std::string id = voice.value("presetId", "");
    for (const auto& v : kPresetVoices) {
        if (id == v.id) {
            return {{"type", kPresetVoiceType},
                    {"presetId", id},
                    {"name", v.name},
                    {"description", v.description}};
        }
    }
    return {{"type", kPresetVoiceType}, {"presetId", id}, {"name", id}, {"description", ""}};
}

nlohmann::json AvatarJson(const App& app, const store::AvatarRecord& a) {
    nlohmann::json out = {
        {"id", a.id},
        {"name", a.name},
        {"personality", a.personality},
        {"startScript", a.start_script ? nlohmann::json(*a.start_script) : nlohmann::json()},
        {"voice", VoiceJson(a)},
        {"referenceImageUri", nullptr},
        {"processedImageUri", nullptr},
        {"documentIds", a.document_ids},
        {"createdAt", FormatTimestamp(a.created_at)},
        {"updatedAt", FormatTimestamp(a.updated_at)},
        {"status", store::ProcessingStatusName(a.status)},
    };
    if (a.has_previews) {
        const std::string folder = tasks::AvatarFolder(a.id);
        out["referenceImageUri"] =
            app.signer.Url(folder, "reference.jpg", app.output_url_ttl_seconds);
        out["processedImageUri"] =
            app.signer.Url(folder, "processed.jpg", app.output_url_ttl_seconds);
    }
    if (a.status == store::ProcessingStatus::kFailed) out["failureReason"] = a.failure_reason;
    return out;
}

// ReferenceIssues are the 400 issues of what the body refers to: a custom voice, which must be
// a READY voice of the organization, and knowledge documents, which must be the organization's.
asio::awaitable<std::vector<Issue>> ReferenceIssues(App& app, const std::string& org_id,
                                                    const nlohmann::json& body) {
    std::vector<Issue> issues;
    if (body.contains("voice") && body.at("voice").value("type", "") == "custom") {
        const std::string voice_id = LowerUuid(body.at("voice").value("id", ""));
        const auto usable = co_await UsableVoice(app, org_id, voice_id);
        if (!usable) issues.push_back({"custom", {"voice", "id"}, usable.error().message});
    }
    if (body.contains("documentIds")) {
        std::vector<std::string> ids;
        for (const auto& v : body.at("documentIds")) ids.push_back(LowerUuid(v.get<std::string>()));
        std::vector<std::size_t> missing;
        if (app.documents.repo != nullptr) {
            missing = co_await app.documents.repo->Missing(org_id, ids);
        } else {
            for (std::size_t i = 0; i < ids.size(); ++i) missing.push_back(i);
        }
        for (const std::size_t i : missing) {
            issues.push_back({"custom", {"documentIds", std::to_string(i)}, "Document not found"});
        }
    }
    co_return issues;
}

// StoreSource keeps the reference image of a create or update request (stored_media.hpp).
asio::awaitable<Result<StoredMedia>> StoreSource(App& app, const std::string& org_id,
                                                 const std::string& avatar_id,
                                                 const std::string& media) {
    const std::vector<std::string> path = {"referenceImage"};
    co_return co_await StoreMedia(app, org_id, tasks::AvatarFolder(avatar_id), media,
                                  MediaKind::kImage, path, "source");
}

// RemoveObjects deletes objects of an avatar's folder (or the whole folder with no names).
asio::awaitable<void> RemoveObjects(App& app, const std::string& avatar_id,
                                    std::vector<std::string> names) {
    co_await RemoveStored(app, tasks::AvatarFolder(avatar_id), std::move(names));
}

// DocumentIds are the ids of a documentIds array, each once (the first time it is named).
std::vector<std::string> DocumentIds(const nlohmann::json& array) {
    std::vector<std::string> out;
    for (const auto& v : array) {
        std::string id = LowerUuid(v.get<std::string>());
        if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(std::move(id));
    }
    return out;
}

void Kick(App& app) {
    if (app.avatars.kick) app.avatars.kick();
}

http::Response Invalid(const App& app, std::vector<Issue> issues) {
    return http::Response::Error(ApiError::InvalidRequest("Invalid request", std::move(issues)),
                                 app.doc_url);
}

http::Response NotFound(const App& app) {
    return http::Response::Error(ApiError::NotFound("Avatar not found"), app.doc_url);
}

http::Response StillProcessing(const App& app) {
    return http::Response::Error(
        ApiError::Conflict("The avatar is still being processed; change it once it is READY or "
                           "FAILED"),
        app.doc_url);
}

asio::awaitable<http::Response> CreateAvatar(App& app, http::Request& req,
                                             const auth::Principal& who) {
    auto checked = co_await CheckedBody(app, std::move(req.body), "avatars", /*defaults=*/true);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    const nlohmann::json input = std::move(*checked);
    if (auto refs = co_await ReferenceIssues(app, who.org_id, input); !refs.empty()) {
        co_return Invalid(app, std::move(refs));
    }
    const std::string id = NewUuid();
    auto source =
        co_await StoreSource(app, who.org_id, id, input.at("referenceImage").get<std::string>());
    if (!source) co_return http::Response::Error(source.error(), app.doc_url);

    store::NewAvatar avatar;
    avatar.id = id;
    avatar.org_id = who.org_id;
    avatar.name = input.at("name").get<std::string>();
    avatar.personality = input.at("personality").get<std::string>();
    if (input.contains("startScript")) avatar.start_script = input.at("startScript");
    avatar.voice_json = input.at("voice").dump();
    avatar.document_ids = DocumentIds(input.value("documentIds", nlohmann::json::array()));
    avatar.image_processing = input.value("imageProcessing", "optimize");
    avatar.source_name = source->name;
    avatar.source_uri = source->uri;
    std::optional<store::AvatarRecord> created;
    std::exception_ptr failure;
    try {
        created = co_await app.avatars.repo->Create(std::move(avatar));
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure || !created) {
        co_await RemoveObjects(app, id, kWholeFolder);  // no avatar owns the stored source
        if (failure) std::rethrow_exception(failure);
        // A document was deleted meanwhile: answer as if it had been gone before.
        auto refs = co_await ReferenceIssues(app, who.org_id, input);
        if (refs.empty()) refs.push_back({"custom", {"documentIds"}, "Document not found"});
        co_return Invalid(app, std::move(refs));
    }
    Kick(app);
    co_return http::Response::Json(200, AvatarJson(app, *created));
}

asio::awaitable<http::Response> GetAvatar(App& app, http::Request& req,
                                          const auth::Principal& who) {
    const auto avatar = co_await app.avatars.repo->Get(who.org_id, req.params["id"]);
    if (!avatar) co_return NotFound(app);
    co_return http::Response::Json(200, AvatarJson(app, *avatar));
}

asio::awaitable<http::Response> ListAvatars(App& app, http::Request& req,
                                            const auth::Principal& who) {
    const auto query = ParsePageQuery(req);
    if (!query) co_return http::Response::Error(query.error(), app.doc_url);
    const auto page = co_await app.avatars.repo->List(who.org_id, query->limit, query->after);
    nlohmann::json data = nlohmann::json::array();
    for (const auto& a : page.avatars) data.push_back(AvatarJson(app, a));
    std::optional<store::Keyset> next;
    if (page.more && !page.avatars.empty()) {
        next = store::Keyset{page.avatars.back().created_at, page.avatars.back().id};
    }
    co_return http::Response::Json(200, PageJson(std::move(data), next));
}

asio::awaitable<http::Response> UpdateAvatar(App& app, http::Request& req,
                                             const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    auto checked =
        co_await CheckedBody(app, std::move(req.body), "avatars_update", /*defaults=*/false);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    const nlohmann::json input = std::move(*checked);
    if (auto refs = co_await ReferenceIssues(app, who.org_id, input); !refs.empty()) {
        co_return Invalid(app, std::move(refs));
    }
    // Known and not PROCESSING, before any image is read (Update checks both again, atomically).
    const auto current = co_await app.avatars.repo->Get(who.org_id, id);
    if (!current) co_return NotFound(app);
    if (current->status == store::ProcessingStatus::kProcessing) co_return StillProcessing(app);

    store::AvatarChange change;
    if (input.contains("name")) change.name = input.at("name").get<std::string>();
    if (input.contains("personality")) {
        change.personality = input.at("personality").get<std::string>();
    }
    if (input.contains("startScript")) {
        change.set_start_script = true;
        if (!input.at("startScript").is_null()) {
            change.start_script = input.at("startScript").get<std::string>();
        }
    }
    if (input.contains("voice")) change.voice_json = input.at("voice").dump();
    if (input.contains("documentIds")) change.document_ids = DocumentIds(input.at("documentIds"));
    if (input.contains("imageProcessing")) {
        change.image_processing = input.at("imageProcessing").get<std::string>();
    }
    if (input.contains("referenceImage")) {
        auto source = co_await StoreSource(app, who.org_id, id,
                                           input.at("referenceImage").get<std::string>());
        if (!source) co_return http::Response::Error(source.error(), app.doc_url);
        change.new_source = true;
        change.source_name = source->name;
        change.source_uri = source->uri;
    }
    const std::string new_source = change.source_name;
    store::AvatarUpdate updated;
    std::exception_ptr failure;
    try {
        updated = co_await app.avatars.repo->Update(who.org_id, id, std::move(change));
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure || updated.kind != store::AvatarUpdate::Kind::kUpdated) {
        if (!new_source.empty()) {
            const std::vector<std::string> names = {new_source};
            co_await RemoveObjects(app, id, names);
        }
        if (failure) std::rethrow_exception(failure);
        if (updated.kind == store::AvatarUpdate::Kind::kNotFound) co_return NotFound(app);
        if (updated.kind == store::AvatarUpdate::Kind::kMissingDocuments) {
            // A document was deleted meanwhile: answer as if it had been gone before.
            auto refs = co_await ReferenceIssues(app, who.org_id, input);
            if (refs.empty()) refs.push_back({"custom", {"documentIds"}, "Document not found"});
            co_return Invalid(app, std::move(refs));
        }
        co_return StillProcessing(app);
    }
    if (!updated.previous_source.empty() && updated.previous_source != new_source) {
        const std::vector<std::string> names = {updated.previous_source};
        co_await RemoveObjects(app, id, names);
    }
    Kick(app);
    co_return http::Response::Json(200, AvatarJson(app, updated.avatar));
}

asio::awaitable<http::Response> DeleteAvatar(App& app, http::Request& req,
                                             const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    if (!co_await app.avatars.repo->Delete(who.org_id, id)) co_return NotFound(app);
    co_await RemoveObjects(app, id, kWholeFolder);
    co_return http::Response::NoContent();
}

}  // namespace

void RegisterAvatarRoutes(Bindings& b) {
    b.Authed("listAvatars", ListAvatars);
    b.Authed("createAvatar", CreateAvatar);
    b.Authed("getAvatar", GetAvatar);
    b.Authed("updateAvatar", UpdateAvatar);
    b.Authed("deleteAvatar", DeleteAvatar);
}

}  // namespace genhost::api
