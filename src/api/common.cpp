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

http::Handler Authed(App& app, AuthedHandler handler) {
    return [&app,
            handler = std::move(handler)](http::Request& req) -> asio::awaitable<http::Response> {
        http::Handler inner = [&app,
                               &handler](http::Request& r) -> asio::awaitable<http::Response> {
            const auto authorization = r.Header("authorization");
            // Named first: GCC 12 destroys temporaries of a ?: inside a co_await twice. A view of
            // the request's own header, which outlives the call.
            const std::string_view header = authorization.value_or(std::string_view());
            auto principal = co_await app.authenticator.Authenticate(header);
            if (!principal) co_return Fail(app, principal.error());
            r.org_id = principal->org_id;
            const auto version = r.Header("x-service-version");
            if (!version || *version != kServiceVersion) {
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
            co_return co_await handler(r, *principal);
        };
        co_return co_await Guard(app, req, inner);
    };
}

asio::awaitable<Result<nlohmann::json>> CheckedBody(App& app, std::string_view body,
                                                    std::string schema, bool defaults) {
    std::optional<Result<nlohmann::json>> out;
    auto check = [&] {
        auto parsed = validate::ParseRequestJson(body, app.max_json_depth);
        if (!parsed) {
            out.emplace(boost::system::in_place_error, parsed.error());
            return;
        }
        auto issues = app.schemas->Validate(schema, *parsed);
        if (!issues.empty()) {
            out.emplace(boost::system::in_place_error,
                        ApiError::InvalidRequest("Invalid request body", std::move(issues)));
            return;
        }
        out.emplace(boost::system::in_place_value,
                    defaults ? app.schemas->ApplyDefaults(schema, *parsed) : std::move(*parsed));
    };
    if (body.size() > kParseOnPoolBytes) {
        co_await OnBlocking(app, check);
    } else {
        check();
    }
    co_return std::move(*out);
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
    return TierLimits{limits.max_concurrent_generations, limits.max_daily_generations};
}

}  // namespace genhost::api
