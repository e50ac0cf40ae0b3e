#include "common.hpp"

#include "genhost/store/database.hpp"
#include "genhost/validate/json_body.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>

namespace genhost::api {

namespace asio = boost::asio;

namespace {

http::Response Fail(const App& app, const ApiError& e) {
    return http::Response::Error(e, app.doc_url);
}

// Guard turns the expected exceptions of the layers below into responses.
asio::awaitable<http::Response> Guard(App& app, http::Request& req, const http::Handler& handler) {
    try {
        co_return co_await handler(req);
    } catch (const store::DatabaseUnavailable&) {
        co_return Fail(app, ApiError::Unavailable());
    }
}

}  // namespace

http::Handler Public(App& app, http::Handler handler) {
    return [&app,
            handler = std::move(handler)](http::Request& req) -> asio::awaitable<http::Response> {
        co_return co_await Guard(app, req, handler);
    };
}

http::StreamingHandler PublicStreaming(App& app, http::StreamingHandler handler) {
    return [&app, handler = std::move(handler)](
               http::Request& req, http::BodyReader& body) -> asio::awaitable<http::Response> {
        try {
            co_return co_await handler(req, body);
        } catch (const store::DatabaseUnavailable&) {
            co_return Fail(app, ApiError::Unavailable());
        }
    };
}

http::GatedHandler Authed(App& app, AuthedHandler handler, bool require_version) {
    http::GatedHandler route;
    // The gate: the key, then the version header, from the header alone (the body is read only
    // for a caller that passes both).
    route.gate = [&app, require_version](
                     http::Request& r) -> asio::awaitable<std::optional<http::Response>> {
        try {
            std::size_t authorizations = 0;
            for (const auto& [name, value] : r.headers) authorizations += name == "authorization";
            if (authorizations > 1) {
                co_return Fail(app, ApiError::Unauthorized(
                                        "More than one Authorization header: send exactly one"));
            }
            const auto authorization = r.Header("authorization");
            // Named first: GCC 12 destroys temporaries of a ?: inside a co_await twice. A view of
            // the request's own header, which outlives the call.
            const std::string_view header = authorization.value_or(std::string_view());
            auto principal = co_await app.authenticator.Authenticate(header);
            if (!principal) co_return Fail(app, principal.error());
            r.org_id = principal->org_id;
            const auto version = r.Header("x-service-version");
            if ((version || require_version) && (!version || *version != kServiceVersion)) {
                const std::string message =
                    version
                        ? "Unsupported X-Service-Version header value '" + std::string(*version) +
                              "': the accepted value is " + std::string(kServiceVersion)
                        : "Missing X-Service-Version header: send X-Service-Version: " +
                              std::string(kServiceVersion);
                co_return Fail(app,
                               ApiError::InvalidRequest(
                                   message, {Issue{version ? "invalid_enum_value" : "invalid_type",
                                                   {"headers", "X-Service-Version"},
                                                   version ? "Invalid enum value. Expected '" +
                                                                 std::string(kServiceVersion) + "'"
                                                           : "Required"}}));
            }
            r.auth = std::move(*principal);
            co_return std::nullopt;
        } catch (const store::DatabaseUnavailable&) {
            co_return Fail(app, ApiError::Unavailable());
        }
    };
    route.handler = [&app, handler = std::move(handler)](
                        http::Request& req) -> asio::awaitable<http::Response> {
        http::Handler inner = [&handler](http::Request& r) -> asio::awaitable<http::Response> {
            // Set by the gate, which every request of this route has passed.
            const auto& who = std::any_cast<const auth::Principal&>(r.auth);
            co_return co_await handler(r, who);
        };
        co_return co_await Guard(app, req, inner);
    };
    return route;
}

namespace {

// Check parses `body` and validates it against `schema`; `owned`, when set, is the string `body`
// views, freed as soon as it is parsed. The parsed value is kept even when it fails the schema.
CheckedRequest Check(const App& app, std::string_view body, std::string* owned,
                     const std::string& schema, bool defaults) {
    CheckedRequest out;
    auto parsed = validate::ParseRequestJson(body, app.max_json_depth);
    if (owned != nullptr) std::string().swap(*owned);
    if (!parsed) {
        out.error = parsed.error();
        return out;
    }
    auto issues = app.schemas->Validate(schema, *parsed);
    if (!issues.empty()) {
        out.error = ApiError::InvalidRequest("Invalid request body", std::move(issues));
    } else if (defaults) {
        app.schemas->FillDefaults(schema, *parsed);
    }
    out.body = std::move(*parsed);
    return out;
}

// CheckSomewhere runs Check here, or on the blocking pool for a body over kParseOnPoolBytes.
asio::awaitable<CheckedRequest> CheckSomewhere(App& app, std::string_view body, std::string* owned,
                                               const std::string& schema, bool defaults) {
    if (body.size() <= kParseOnPoolBytes) co_return Check(app, body, owned, schema, defaults);
    CheckedRequest out;
    co_await OnBlocking(app, [&] { out = Check(app, body, owned, schema, defaults); });
    co_return out;
}

Result<nlohmann::json> ToResult(CheckedRequest&& checked) {
    if (checked.error) return Result<nlohmann::json>(boost::system::in_place_error, *checked.error);
    return Result<nlohmann::json>(boost::system::in_place_value, std::move(*checked.body));
}

}  // namespace

asio::awaitable<Result<nlohmann::json>> CheckedBody(App& app, std::string_view body,
                                                    std::string schema, bool defaults) {
    co_return ToResult(co_await CheckSomewhere(app, body, nullptr, schema, defaults));
}

asio::awaitable<Result<nlohmann::json>> CheckedBody(App& app, std::string&& body,
                                                    std::string schema, bool defaults) {
    // Taken from the caller, so its bytes go as soon as they are parsed: a large body (data URIs)
    // is then held once, as the parsed value, not twice.
    std::string owned = std::move(body);
    co_return ToResult(co_await CheckSomewhere(app, owned, &owned, schema, defaults));
}

asio::awaitable<CheckedRequest> CheckedBodyKeepingInvalid(App& app, std::string&& body,
                                                          std::string schema, bool defaults) {
    std::string owned = std::move(body);
    co_return co_await CheckSomewhere(app, owned, &owned, schema, defaults);
}

namespace {
// WholeCredits is `credits` as an integer when it is a whole number CreditsJson writes as one.
std::optional<std::int64_t> WholeCredits(double credits) {
    if (std::isfinite(credits) && std::floor(credits) == credits && std::fabs(credits) < 1e15) {
        return static_cast<std::int64_t>(credits);
    }
    return std::nullopt;
}
}  // namespace

ApiError CreditRefusal(store::CreateResult::Kind kind, std::int64_t credits) {
    ApiError e;
    e.code = ErrorCode::kInvalidRequest;
    if (kind == store::CreateResult::Kind::kSpendLimited) {
        e.message = "Your monthly credit spend limit has been reached.";
        e.issues.push_back({"monthly_spend_limit",
                            {},
                            "This request needs " + std::to_string(credits) +
                                " credits, which would take the organization past its tier's "
                                "spend limit for the last 30 days"});
    } else {
        e.message = "You do not have enough credits to run this task.";
        e.issues.push_back({"insufficient_credits",
                            {},
                            "This request needs " + std::to_string(credits) +
                                " credits, more than the organization's balance"});
    }
    return e;
}

std::vector<std::string> JsonPointerTokens(std::string_view pointer) {
    std::vector<std::string> tokens;
    if (pointer.empty()) return tokens;
    std::size_t start = 1;
    while (true) {
        const auto slash = pointer.find('/', start);
        std::string raw(
            pointer.substr(start, slash == std::string_view::npos ? slash : slash - start));
        std::string token;
        for (std::size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '~' && i + 1 < raw.size()) {
                token += raw[i + 1] == '1' ? '/' : '~';
                ++i;
            } else {
                token += raw[i];
            }
        }
        tokens.push_back(std::move(token));
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return tokens;
}

http::Response FinalConflict(const App& app, std::string message) {
    http::Response r = http::Response::Error(ApiError::Conflict(std::move(message)), app.doc_url);
    r.SetHeader("x-should-retry", "false");
    return r;
}

nlohmann::json CreditsJson(double credits) {
    if (const auto whole = WholeCredits(credits)) return *whole;
    return credits;
}

void AppendCreditsJson(std::string& out, double credits) {
    if (const auto whole = WholeCredits(credits)) {
        char digits[24];
        const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, *whole);
        out.append(digits, end);
        return;
    }
    out += nlohmann::json(credits).dump();
}

TierLimits LimitsFor(const catalog::Catalog& catalog, int tier, const std::string& model) {
    const catalog::Tier* best = nullptr;
    for (const auto& t : catalog.Tiers()) {
        if (t.tier <= tier && (best == nullptr || t.tier > best->tier)) best = &t;
    }
    if (best == nullptr && !catalog.Tiers().empty()) best = &catalog.Tiers().front();
    if (best == nullptr) return {};
    const auto limits = best->LimitsFor(model);
    // maxMonthlyCreditSpend is in USD in the tier table; 1 credit = USD 0.01.
    return TierLimits{limits.max_concurrent_generations, limits.max_daily_generations,
                      best->max_monthly_spend_usd * 100};
}

asio::awaitable<Result<store::VoiceRecord>> UsableVoice(App& app, const std::string& org_id,
                                                        const std::string& voice_id) {
    std::optional<store::VoiceRecord> voice;
    if (app.voices.repo != nullptr) voice = co_await app.voices.repo->Get(org_id, voice_id);
    if (!voice) co_return ApiError::InvalidRequest("Voice not found");
    if (voice->status != store::ProcessingStatus::kReady) {
        co_return ApiError::InvalidRequest("The voice is " +
                                           std::string(store::ProcessingStatusName(voice->status)) +
                                           "; only a READY voice can be used");
    }
    co_return std::move(*voice);
}

}  // namespace genhost::api
