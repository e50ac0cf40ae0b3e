// Shared pieces of the API handlers: the authenticated-route wrapper, JSON body parsing under
// limits, and small response helpers. Private to src/api.
#pragma once

#include "genhost/api/app.hpp"
#include "genhost/http/message.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace genhost::api {

using AuthedHandler =
    std::function<boost::asio::awaitable<http::Response>(http::Request&, const auth::Principal&)>;

// Authed puts a handler that needs an authenticated caller and the version header behind a gate
// that checks both from the request's header, before its body is read: one Authorization header
// with a valid key (401 otherwise, and for two or more), then X-Service-Version (400).
// With `require_version` false (auth apiKeyUnversioned) a request without X-Service-Version
// passes; one that sends it must still send the accepted value.
http::GatedHandler Authed(App& app, AuthedHandler handler, bool require_version = true);

// Public wraps a handler that needs neither (health, metrics, documents, output files).
http::Handler Public(App& app, http::Handler handler);

// PublicStreaming is Public for a streaming route (Router::AddStreaming).
http::StreamingHandler PublicStreaming(App& app, http::StreamingHandler handler);

// OnBlocking runs `f` (file I/O) on the blocking pool and resumes on the caller's executor;
// what `f` throws is rethrown here.
template <class F>
boost::asio::awaitable<void> OnBlocking(App& app, F f) {
    co_await boost::asio::co_spawn(
        app.blocking,
        [&f]() -> boost::asio::awaitable<void> {
            f();
            co_return;
        },
        boost::asio::use_awaitable);
}

// CheckedBody parses a request body as one JSON value (a 400 for nesting deeper than
// app.max_json_depth, invalid UTF-8 or trailing garbage) and validates it against the schema
// `schema` (schemas/),
// with the schema's defaults applied when `defaults`: the request's input, or the 400 to answer.
// A body over kParseOnPoolBytes (data URIs of up to 16 MB take tens of milliseconds) is handled
// on the blocking pool, since the other connections of an I/O thread wait while it computes.
inline constexpr std::size_t kParseOnPoolBytes = 64 * 1024;
boost::asio::awaitable<Result<nlohmann::json>> CheckedBody(App& app, std::string_view body,
                                                           std::string schema, bool defaults);
// CheckedBody takes the body for a request that needs it no more: its bytes are freed as soon as
// they are parsed, so a large body is never held twice.
boost::asio::awaitable<Result<nlohmann::json>> CheckedBody(App& app, std::string&& body,
                                                           std::string schema, bool defaults);

// CheckedRequest is a body parsed and checked: `body` holds the parsed value whenever it is JSON
// (also when it fails the schema); `error` the 400 to answer, if any.
struct CheckedRequest {
    std::optional<nlohmann::json> body;
    std::optional<ApiError> error;
};
// CheckedBodyKeepingInvalid is CheckedBody for a handler that reads a body that failed its schema
// (routed generation logs an invalid request on the router the body names).
boost::asio::awaitable<CheckedRequest> CheckedBodyKeepingInvalid(App& app, std::string&& body,
                                                                 std::string schema, bool defaults);

// UsableVoice looks up custom voice `voice_id` of `org_id`: the voice when it is READY, else why
// it cannot be used ("Voice not found", or that it is not READY).
boost::asio::awaitable<Result<store::VoiceRecord>> UsableVoice(App& app, const std::string& org_id,
                                                               const std::string& voice_id);

// DecodedBody is CheckedBody, then the validated input decoded into `T` by its nlohmann
// `from_json` (the resource's file defines it beside the struct). The schema has checked every
// field, so decoding cannot fail on shape; it only moves values into typed members.
template <class T>
boost::asio::awaitable<Result<T>> DecodedBody(App& app, std::string&& body, std::string schema,
                                              bool defaults) {
    auto checked = co_await CheckedBody(app, std::move(body), std::move(schema), defaults);
    if (!checked) co_return checked.error();
    co_return checked->template get<T>();
}

// OptionalField reads member `name` of `j` into `out` when present (a null leaves it empty).
template <class V>
void OptionalField(const nlohmann::json& j, const char* name, std::optional<V>& out) {
    if (const auto it = j.find(name); it != j.end() && !it->is_null()) out = it->template get<V>();
}

// CreditRefusal is the 400 for a request the credit ledger refused (docs/credits.md): not
// enough credits, or past the tier's 30-day spend cap; one issue (path: the whole request) with
// the credits the request needs.
ApiError CreditRefusal(store::CreateResult::Kind kind, std::int64_t credits);

// JsonPointerTokens splits the JSON pointer `pointer` (RFC 6901) into its unescaped tokens;
// "" gives none, "/" one empty token.
std::vector<std::string> JsonPointerTokens(std::string_view pointer);

// FinalConflict is a 409 that retrying cannot fix: `x-should-retry: false` (LIMITS_AND_PRICES.md).
http::Response FinalConflict(const App& app, std::string message);

// CreditsJson renders a credit amount: an integer when whole, else a number.
nlohmann::json CreditsJson(double credits);
// AppendCreditsJson appends CreditsJson(credits) as JSON text to `out` (a whole amount without
// building a json value: it is written for every task record and creation).
void AppendCreditsJson(std::string& out, double credits);

}  // namespace genhost::api
