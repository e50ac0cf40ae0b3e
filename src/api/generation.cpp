// POST /v1/<generation endpoint>: validate, read and probe the media inputs, price, store the
// task, answer {id, estimatedCost}.
#include "handlers.hpp"

#include "genhost/assets/resolver.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"

namespace genhost::api {

namespace asio = boost::asio;

namespace {

// BillingModel is the usage model a task's credits are booked under when it is not the model
// itself: avatar videos bill as gwm1_avatar_async_text_to_video or _audio_to_video (CLIENTS.md
// 3.3). Empty: the model.
std::string BillingModel(const std::string& endpoint, const nlohmann::json& input) {
    if (endpoint != "avatar_videos") return {};
    const auto speech = input.find("speech");
    const bool text =
        speech != input.end() && speech->is_object() && speech->value("type", "") == "text";
    return text ? "gwm1_avatar_async_text_to_video" : "gwm1_avatar_async_audio_to_video";
}

}  // namespace

asio::awaitable<http::Response> CreateGeneration(App& app, const std::string& endpoint,
                                                 http::Request& req, const auth::Principal& who) {
    auto checked = co_await CheckedBody(app, std::move(req.body), endpoint, /*defaults=*/true);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    const auto created = co_await CreateTask(app, endpoint, std::move(*checked), who);
    if (!created) co_return http::Response::Error(created.error(), app.doc_url);
    co_return CreatedTaskResponse(*created);
}

http::Response CreatedTaskResponse(const CreatedTask& created) {
    // {id, estimatedCost}, written directly (the id is ours: a canonical uuid); the bytes
    // nlohmann's dump gave, keys in its order.
    std::string body = "{\"estimatedCost\":{\"credits\":";
    AppendCreditsJson(body, created.credits);
    body += "},\"id\":\"";
    body += created.id;
    body += "\"}";
    auto response = http::Response::JsonText(200, std::move(body));
    response.task_id = created.id;
    return response;
}

asio::awaitable<Result<CreatedTask>> CreateTask(App& app, const std::string& endpoint,
                                                nlohmann::json input, const auth::Principal& who) {
    const std::string model = input.at("model").get<std::string>();
    const auto* info = app.catalog->FindModel(model);
    if (info == nullptr) {
        // The schema knows a model the catalog does not: a data error of this server.
        throw std::logic_error("model " + model + " is in schemas/ but not in the catalog");
    }
    if (endpoint == "avatar_videos" && input.at("avatar").value("type", "") == "custom") {
        // A custom avatar must be READY and this organization's; its processed picture and voice
        // go into the stored input, so the task keeps them whatever happens to the avatar later
        // (docs/avatars.md).
        const std::string avatar_id = input.at("avatar").value("avatarId", "");
        store::PortraitLookup found;
        if (app.avatars.repo != nullptr) {
            found = co_await app.avatars.repo->Portrait(who.org_id, avatar_id);
        }
        std::string problem;
        if (!found.found) {
            problem = "Avatar not found";
        } else if (found.status != store::ProcessingStatus::kReady) {
            problem = "The avatar is " + std::string(store::ProcessingStatusName(found.status)) +
                      "; only a READY avatar can be used";
        } else if (found.portrait.empty()) {
            throw std::logic_error("READY avatar " + avatar_id + " has no portrait");
        }
        if (!problem.empty()) {
            std::vector<Issue> issues = {{"custom", {"avatar", "avatarId"}, problem}};
            co_return ApiError::InvalidRequest("Invalid request body", std::move(issues));
        }
        auto& avatar = input["avatar"];
        avatar["portrait"] = "data:image/jpeg;base64," + Base64Encode(found.portrait);
        avatar["voice"] = nlohmann::json::parse(found.voice_json);
        // The avatar's own custom voice, while it exists (a deleted one leaves the avatar's
        // default voice, docs/voices.md).
        if (avatar["voice"].value("type", "") == "custom") {
            const std::string voice_id = LowerUuid(avatar["voice"].value("id", ""));
            const auto voice = co_await UsableVoice(app, who.org_id, voice_id);
            if (voice) avatar["voice"]["profile"] = nlohmann::json::parse(voice->profile_json);
        }
    }
    if (endpoint == "avatar_videos" && input.at("speech").contains("voice") &&
        input.at("speech").at("voice").value("type", "") == "custom") {
        // A custom voice must be READY and this organization's; its profile goes into the stored
        // input, so the task speaks with it whatever happens to the voice later.
        auto& voice = input["speech"]["voice"];
        const std::string voice_id = LowerUuid(voice.value("id", ""));
        const auto found = co_await UsableVoice(app, who.org_id, voice_id);
        if (!found) {
            std::vector<Issue> issues = {
                {"custom", {"speech", "voice", "id"}, found.error().message}};
            co_return ApiError::InvalidRequest("Invalid request body", std::move(issues));
        }
        voice["profile"] = nlohmann::json::parse(found->profile_json);
    }
    const std::string id = NewOrderedUuid();
    std::string billing_model = BillingModel(endpoint, input);

    // Media inputs: fetched, decoded or looked up, probed and checked on the asset pool; the
    // stored input then names the files instead of holding the bytes (src/assets, docs/assets.md).
    std::string stored_input;
    double credits = 0;
    bool inputs_kept = false;
    const auto media = app.schemas->MediaFields(endpoint, input);
    if (app.inputs != nullptr && !media.empty()) {
        assets::PrepareRequest prepare;
        prepare.task_id = id;
        prepare.org_id = who.org_id;
        prepare.input = std::move(input);  // not copied: data URIs can be megabytes
        prepare.field_limits = info->CapabilitiesFor(endpoint).value("inputs", nlohmann::json());
        for (const auto& field : media) {
            prepare.media.push_back({field.path, field.pointer,
                                     MediaKindByName(field.kind).value_or(MediaKind::kImage)});
        }
        assets::Prepared prepared = co_await app.inputs->Prepare(std::move(prepare));
        if (!prepared.issues.empty()) {
            co_return ApiError::InvalidRequest("Invalid asset", std::move(prepared.issues));
        }
        // Billed by the probed lengths when every medium was probed, else at the maxima.
        credits = prepared.all_probed
                      ? app.catalog->EstimateCredits(endpoint, prepared.input, prepared.facts)
                      : app.catalog->EstimateCredits(endpoint, prepared.input);
        stored_input = prepared.input.dump();
        inputs_kept = true;
    } else {
        credits = app.catalog->EstimateCredits(endpoint, input);
        stored_input = input.dump();
    }
    // The inputs on disk belong to the task only once it exists.
    struct DiscardUnlessCreated {
        assets::RequestInputs* inputs;
        const std::string& id;
        bool created = false;
        ~DiscardUnlessCreated() {
            if (inputs != nullptr && !created) inputs->Discard(id);
        }
    } discard{inputs_kept ? app.inputs : nullptr, id};
    const TierLimits limits = LimitsFor(*app.catalog, who.tier, model);

    store::NewTask task;
    task.id = id;
    task.org_id = who.org_id;
    task.endpoint = endpoint;
    task.model = model;
    task.limit_key = info->concurrency_group;
    task.input_json = std::move(stored_input);
    task.estimated_credits = credits;
    task.max_concurrent = limits.max_concurrent;
    task.max_daily = limits.max_daily;
    task.max_spend_credits = limits.max_spend_credits;
    task.billing_model = std::move(billing_model);
    const auto created = co_await app.tasks.Create(std::move(task));
    discard.created = created.kind == store::CreateResult::Kind::kCreated;
    if (created.kind == store::CreateResult::Kind::kInsufficientCredits ||
        created.kind == store::CreateResult::Kind::kSpendLimited) {
        co_return CreditRefusal(created.kind, store::ReservedCredits(credits));
    }
    if (created.kind == store::CreateResult::Kind::kRateLimited) {
        ApiError e;
        e.code = ErrorCode::kRateLimited;
        e.message = "Your daily task limit has been reached.";
        e.retry_after_seconds = created.retry_after_seconds;
        co_return e;
    }
    co_return CreatedTask{id, credits, created.status};
}

}  // namespace genhost::api
