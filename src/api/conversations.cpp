// /v1/avatar_conversations and /v1/avatar_usage: the record of realtime sessions
// (docs/realtime.md, SPEC.md "Conversations and usage", CLIENTS.md 3.10).
//
// A conversation is its session's row seen another way: in_progress while the session is
// NOT_READY, READY or RUNNING; ended once COMPLETED or CANCELLED; failed once FAILED. GET lists
// them (newest first, keyset pages, by custom avatar and creation time) or answers one with its
// transcript, tools and a fresh signed URL of its recording; DELETE removes a finished one with
// its transcript and recording. Usage sums the conversations started in a range by UTC day.
#include "genhost/api/page.hpp"
#include "genhost/api/realtime_routes.hpp"
#include "handlers.hpp"
#include "stored_media.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/tasks/avatar_processor.hpp"
#include "genhost/tasks/realtime_sessions.hpp"

namespace genhost::api {

namespace asio = boost::asio;

namespace {

constexpr auto kMaxUsageRange = std::chrono::hours(24 * 90);

std::string_view ConversationStatus(store::SessionStatus s) {
    switch (s) {
        case store::SessionStatus::kCompleted:
        case store::SessionStatus::kCancelled:
            return "ended";
        case store::SessionStatus::kFailed:
            return "failed";
        default:
            return "in_progress";
    }
}

// Duration: the measured seconds of an ended session; the time since it started for one still
// running; null when it never started.
nlohmann::json Duration(const store::RealtimeSession& s) {
    if (!IsTerminal(s.status)) {
        if (!s.started_at) return nullptr;
        return std::max<std::int64_t>(
            0, std::chrono::duration_cast<std::chrono::seconds>(s.now - *s.started_at).count());
    }
    return s.duration ? nlohmann::json(*s.duration) : nlohmann::json();
}

nlohmann::json OptionalTime(const std::optional<SysTime>& t) {
    return t ? nlohmann::json(FormatTimestamp(*t)) : nlohmann::json();
}

nlohmann::json SummaryJson(const store::RealtimeSession& s) {
    nlohmann::json avatar;
    if (s.avatar_type == "custom") {
        avatar = {{"type", "custom"},
                  {"id", s.avatar_now ? nlohmann::json(s.avatar_now->id) : nlohmann::json()},
                  {"name", s.avatar_now ? nlohmann::json(s.avatar_now->name) : nlohmann::json()}};
    } else {
        avatar = {{"type", "service-preset"}, {"presetId", s.preset_id}, {"name", s.avatar_name}};
    }
    const bool has_tools = s.tools_json != "[]" && !s.tools_json.empty();
    return {{"id", s.id},
            {"name", s.name},
            {"status", ConversationStatus(s.status)},
            {"avatar", std::move(avatar)},
            {"createdAt", FormatTimestamp(s.created_at)},
            {"duration", Duration(s)},
            {"hasTools", has_tools}};
}

nlohmann::json DetailJson(const App& app, const store::RealtimeSession& s,
                          const std::vector<store::TranscriptEntry>& entries) {
    nlohmann::json avatar;
    if (s.avatar_type == "custom") {
        nlohmann::json image;
        if (s.avatar_now && s.avatar_now->has_previews) {
            image = app.signer.Url(tasks::AvatarFolder(s.avatar_now->id), "processed.jpg",
                                   app.output_url_ttl_seconds);
        }
        avatar = {{"type", "custom"},
                  {"id", s.avatar_now ? nlohmann::json(s.avatar_now->id) : nlohmann::json()},
                  {"name", s.avatar_now ? nlohmann::json(s.avatar_now->name) : nlohmann::json()},
                  {"imageUrl", std::move(image)}};
    } else {
        avatar = {{"type", "service-preset"}, {"presetId", s.preset_id}};
    }
    nlohmann::json tools = nlohmann::json::array();
    for (const auto& t : nlohmann::json::parse(s.tools_json)) {
        tools.push_back(
            {{"type", t.at("type")}, {"name", t.at("name")}, {"description", t.at("description")}});
    }
    nlohmann::json transcript = nlohmann::json::array();
    for (const auto& e : entries) {
        nlohmann::json entry = {
            {"role", e.role},
            {"content", e.content ? nlohmann::json(*e.content) : nlohmann::json()},
            {"timestamp", OptionalTime(e.at)}};
        if (e.role == "assistant") {
            entry["toolCalls"] = e.tool_calls_json.empty()
                                     ? nlohmann::json::array()
                                     : nlohmann::json::parse(e.tool_calls_json);
            entry["toolResults"] = e.tool_results_json.empty()
                                       ? nlohmann::json::array()
                                       : nlohmann::json::parse(e.tool_results_json);
        }
        transcript.push_back(std::move(entry));
    }
    nlohmann::json recording;
    if (!s.recording_name.empty()) {
        recording = app.signer.Url(tasks::ConversationFolder(s.id), s.recording_name,
                                   app.output_url_ttl_seconds);
    }
    nlohmann::json out = {{"id", s.id},
                          {"name", s.name},
                          {"status", ConversationStatus(s.status)},
                          {"avatar", std::move(avatar)},
                          {"createdAt", FormatTimestamp(s.created_at)},
                          {"duration", Duration(s)},
                          {"maxDuration", s.max_duration},
                          {"recordingUrl", std::move(recording)},
                          {"startedAt", OptionalTime(s.started_at)},
                          {"tools", std::move(tools)},
                          {"transcript", std::move(transcript)}};
    if (IsTerminal(s.status)) out["endedAt"] = OptionalTime(s.ended_at);
    if (s.status == store::SessionStatus::kFailed) {
        out["failure"] = s.failure;
        out["failureCode"] = s.failure_code;
    }
    return out;
}

http::Response NotFound(const App& app) {
    return http::Response::Error(ApiError::NotFound("Conversation not found"), app.doc_url);
}

// DateParam reads a date-time query parameter the operation declared (CheckQuery has checked
// its form).
std::optional<SysTime> DateParam(const http::Request& req, std::string_view name) {
    const auto text = req.QueryParam(name);
    if (!text) return std::nullopt;
    return ParseDateTime(*text);
}

asio::awaitable<http::Response> ListConversations(App& app, http::Request& req,
                                                  const auth::Principal& who) {
    const auto query = ParsePageQuery(req, 20);
    if (!query) co_return http::Response::Error(query.error(), app.doc_url);
    store::ConversationFilter filter;
    if (const auto avatar = req.QueryParam("avatar")) filter.avatar_id = LowerUuid(*avatar);
    filter.start = DateParam(req, "startDate");
    filter.end = DateParam(req, "endDate");
    const auto page = co_await app.realtime.repo->ListConversations(who.org_id, std::move(filter),
                                                                    query->limit, query->after);
    nlohmann::json data = nlohmann::json::array();
    for (const auto& s : page.sessions) data.push_back(SummaryJson(s));
    std::optional<store::Keyset> next;
    if (page.more && !page.sessions.empty()) {
        next = store::Keyset{page.sessions.back().created_at, page.sessions.back().id};
    }
    co_return http::Response::Json(200, PageJson(std::move(data), next));
}

asio::awaitable<http::Response> GetConversation(App& app, http::Request& req,
                                                const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    const auto s = co_await app.realtime.repo->Get(who.org_id, id);
    if (!s) co_return NotFound(app);
    const auto entries = co_await app.realtime.repo->Transcript(id);
    co_return http::Response::Json(200, DetailJson(app, *s, entries));
}

asio::awaitable<http::Response> DeleteConversation(App& app, http::Request& req,
                                                   const auth::Principal& who) {
    const std::string id = LowerUuid(req.params["id"]);
    std::string recording;
    const auto outcome = co_await app.realtime.repo->DeleteConversation(who.org_id, id, recording);
    if (outcome == store::DeleteOutcome::kNotFound) co_return NotFound(app);
    if (outcome == store::DeleteOutcome::kActive) {
        co_return FinalConflict(app,
                                "The conversation's session is still active: cancel it first "
                                "(DELETE /v1/realtime_sessions/{id})");
    }
    co_await RemoveStored(app, tasks::ConversationFolder(id), kWholeFolder);
    co_return http::Response::NoContent();
}

// DayOf is the UTC calendar day of `t`.
std::chrono::sys_days DayOf(SysTime t) { return std::chrono::floor<std::chrono::days>(t); }

std::string DayText(std::chrono::sys_days d) {
    const std::chrono::year_month_day ymd{d};
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
    return buf;
}

asio::awaitable<http::Response> GetUsage(App& app, http::Request& req, const auth::Principal& who) {
    // Both are required and well-formed (CheckQuery).
    const SysTime start = *DateParam(req, "startDate");
    const SysTime end = *DateParam(req, "endDate");
    std::vector<Issue> issues;
    if (end < start) {
        issues.push_back({"custom", {"endDate"}, "endDate must not be before startDate"});
    } else if (end - start > kMaxUsageRange) {
        issues.push_back({"custom", {"endDate"}, "The range must not exceed 90 days"});
    }
    if (!issues.empty()) {
        co_return http::Response::Error(ApiError::InvalidRequest("Invalid request", issues),
                                        app.doc_url);
    }
    const auto usage = co_await app.realtime.repo->Usage(who.org_id, start, end);
    nlohmann::json days = nlohmann::json::array();
    if (end > start) {
        // Every UTC day the range touches, zeros included.
        std::size_t next = 0;
        const auto last = DayOf(end - std::chrono::microseconds(1));
        for (auto d = DayOf(start); d <= last; d += std::chrono::days(1)) {
            const std::string text = DayText(d);
            nlohmann::json day = {{"date", text}, {"sessions", 0}, {"seconds", 0}};
            if (next < usage.days.size() && usage.days[next].date == text) {
                day["sessions"] = usage.days[next].sessions;
                day["seconds"] = usage.days[next].seconds;
                ++next;
            }
            days.push_back(std::move(day));
        }
    }
    const std::int64_t average =
        usage.measured == 0 ? 0
                            : static_cast<std::int64_t>(std::llround(
                                  static_cast<double>(usage.total_seconds) / usage.measured));
    co_return http::Response::Json(200, {{"totalSeconds", usage.total_seconds},
                                         {"totalSessions", usage.total_sessions},
                                         {"avgDurationSeconds", average},
                                         {"byDay", std::move(days)}});
}

}  // namespace

void RegisterConversationRoutes(Bindings& b) {
    b.Authed("listConversations", ListConversations);
    b.Authed("getConversation", GetConversation);
    b.Authed("deleteConversation", DeleteConversation);
    b.Authed("getAvatarUsage", GetUsage);
}

}  // namespace genhost::api
