// /v1/organization and /v1/organization/usage: the organization's credits, its usage tier and
// what it spent (CLIENTS.md 3.3, docs/credits.md).
#include "genhost/api/organization_routes.hpp"
#include "handlers.hpp"

#include <chrono>
#include <set>

namespace genhost::api {

namespace asio = boost::asio;

namespace {

constexpr int kDefaultUsageDays = 30;
constexpr int kMaxUsageDays = 90;

using std::chrono::days;
using std::chrono::sys_days;
using std::chrono::year_month_day;

// The days a usage range may cover: four-digit years from year 1 (there is no year 0: PostgreSQL
// refuses it, and a default range reaching before year 1 was a 500).
constexpr sys_days kFirstDay{std::chrono::year{1} / 1 / 1};
constexpr sys_days kLastDay{std::chrono::year{9999} / 12 / 31};
constexpr const char* kDateRangeMessage = "Dates run from 0001-01-01 to 9999-12-31";

// ParseDay reads a validated YYYY-MM-DD (format date) as a day.
std::optional<sys_days> ParseDay(const std::string& text) {
    int y = 0;
    unsigned m = 0;
    unsigned d = 0;
    if (std::sscanf(text.c_str(), "%4d-%2u-%2u", &y, &m, &d) != 3) return std::nullopt;
    const year_month_day ymd{std::chrono::year{y}, std::chrono::month{m}, std::chrono::day{d}};
    if (!ymd.ok()) return std::nullopt;
    return sys_days{ymd};
}

std::string FormatDay(sys_days day) {
    const year_month_day ymd{day};
    char out[16];
    std::snprintf(out, sizeof out, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
    return out;
}

// GET /v1/organization
asio::awaitable<http::Response> GetOrganization(App& app, store::CreditRepo& repo, http::Request&,
                                                const auth::Principal& who) {
    const auto credits = co_await repo.Organization(who.org_id);
    nlohmann::json limits = nlohmann::json::object();
    nlohmann::json usage = nlohmann::json::object();
    // Every model of the catalog (recipes included) with this tier's limits and its generations
    // in the rolling 24 hours of the daily limit.
    for (const auto& model : app.catalog->Models()) {
        const TierLimits tier = LimitsFor(*app.catalog, who.tier, model.id);
        limits[model.id] = {{"maxConcurrentGenerations", tier.max_concurrent},
                            {"maxDailyGenerations", tier.max_daily}};
        const auto used = credits.daily_generations.find(model.id);
        usage[model.id] = {
            {"dailyGenerations", used == credits.daily_generations.end() ? 0 : used->second}};
    }
    // The spend cap is the tier's own, the same for every model.
    const std::int64_t max_spend =
        LimitsFor(*app.catalog, who.tier, std::string()).max_spend_credits;
    nlohmann::json body = {{"creditBalance", credits.balance},
                           {"tier",
                            {{"maxMonthlyCreditSpend", std::max<std::int64_t>(max_spend, 0)},
                             {"models", std::move(limits)}}},
                           {"usage", {{"models", std::move(usage)}}}};
    co_return http::Response::Json(200, body);
}

// POST /v1/organization/usage
asio::awaitable<http::Response> GetUsage(App& app, store::CreditRepo& repo, http::Request& req,
                                         const auth::Principal& who) {
    auto checked = co_await CheckedBody(app, std::move(req.body), "organization_usage",
                                        /*defaults=*/true);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    const nlohmann::json& input = *checked;
    const sys_days today = std::chrono::floor<days>(std::chrono::system_clock::now());
    std::optional<sys_days> start;
    std::optional<sys_days> before;
    std::vector<Issue> issues;
    const auto read = [&](const char* name, std::optional<sys_days>& day) {
        if (!input.contains(name)) return;
        day = ParseDay(input.at(name).get<std::string>());
        if (!day) {
            issues.push_back({"invalid_date", {name}, "Not a calendar date"});
        } else if (*day < kFirstDay || *day > kLastDay) {
            issues.push_back({"invalid_date", {name}, kDateRangeMessage});
        }
    };
    read("startDate", start);
    read("beforeDate", before);
    if (!issues.empty()) {
        co_return http::Response::Error(ApiError::InvalidRequest("Invalid request body", issues),
                                        app.doc_url);
    }
    // Neither given: the last 30 days and today. One given: 30 days from or before it.
    if (!start && !before) {
        start = today - days{kDefaultUsageDays};
        before = today + days{1};
    } else if (!before) {
        before = std::min(*start + days{kDefaultUsageDays}, kLastDay + days{1});
    } else if (!start) {
        // Never before the first day PostgreSQL's dates and our 4-digit years both hold.
        start = std::max(*before - days{kDefaultUsageDays}, kFirstDay);
    }
    if (*before <= kFirstDay) {
        issues.push_back({"invalid_range", {"beforeDate"}, "beforeDate must be after 0001-01-01"});
    } else if (*before <= *start) {
        issues.push_back({"invalid_range", {"beforeDate"}, "beforeDate must be after startDate"});
    } else if (*before - *start > days{kMaxUsageDays}) {
        issues.push_back({"range_too_long",
                          {"beforeDate"},
                          "The range may cover at most 90 days (beforeDate <= startDate + 90)"});
    }
    if (!issues.empty()) {
        co_return http::Response::Error(ApiError::InvalidRequest("Invalid request body", issues),
                                        app.doc_url);
    }
    const std::string from = FormatDay(*start);
    const std::string to = FormatDay(*before);
    const auto rows = co_await repo.Usage(who.org_id, from, to);
    std::set<std::string> models;
    nlohmann::json results = nlohmann::json::array();
    for (const auto& row : rows) {
        models.insert(row.model);
        if (results.empty() || results.back()["date"] != row.day) {
            results.push_back({{"date", row.day}, {"usedCredits", nlohmann::json::array()}});
        }
        results.back()["usedCredits"].push_back({{"model", row.model}, {"amount", row.amount}});
    }
    nlohmann::json body = {{"models", nlohmann::json(models)}, {"results", std::move(results)}};
    co_return http::Response::Json(200, body);
}

}  // namespace

void RegisterOrganizationRoutes(Bindings& b, store::CreditRepo& repo) {
    b.Authed("getOrganization", &GetOrganization, repo);
    b.Authed("retrieveOrganizationUsage", &GetUsage, repo);
}

}  // namespace genhost::api
