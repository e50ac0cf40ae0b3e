// genhost/http/message.hpp
//
// Provides Request and Response, genhost's own view of an HTTP exchange (handlers never see
// Beast types), and the helpers that render JSON bodies and the contract's error bodies.
#pragma once

#include "genhost/core/error.hpp"

#include <nlohmann/json_fwd.hpp>

#include <any>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace genhost::http {

struct Request {
    std::string method;                                        // upper case, e.g. "GET"
    std::string target;                                        // as received
    std::string path;                                          // target without the query
    std::string query;                                         // after '?', undecoded
    std::vector<std::pair<std::string, std::string>> headers;  // names lower case
    std::string body;
    std::string request_id;
    std::string_view route;  // pattern of the matched route (the router's own), for metrics
    std::map<std::string, std::string> params;  // path parameters, e.g. {"id": "..."}
    std::string org_id;                         // set once authenticated, for the access log
    // The client's address: the peer's, or the one a trusted proxy forwards for (forwarded.hpp).
    std::string remote_address;
    std::string peer_address;  // the socket's peer, when a trusted proxy forwards for another
    // What the route's gate learnt about the caller, for the handler (the api layer's
    // authenticated principal); empty for routes without a gate.
    std::any auth;

    // Header returns the first header called `name` (case-insensitive), if present.
    std::optional<std::string_view> Header(std::string_view name) const;

    // QueryParam returns the percent-decoded value of query parameter `name`, if present (the
    // first, when it is repeated; a value that does not decode comes back as sent).
    std::optional<std::string> QueryParam(std::string_view name) const;
    // QueryParams returns every value of query parameter `name` (repeated parameters), in order.
    std::vector<std::string> QueryParams(std::string_view name) const;
};

struct Response {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    // For HEAD: the Content-Length to announce while sending no body.
    std::optional<std::uint64_t> head_length;
    // The task this request created, named in its access-log line (never sent).
    std::string task_id;

    void SetHeader(std::string name, std::string value);

    // Json renders `value` with Content-Type application/json.
    static Response Json(int status, const nlohmann::json& value);
    // JsonText is Json for a body already rendered as JSON text.
    static Response JsonText(int status, std::string body);

    // NoContent is a 204.
    static Response NoContent();

    // Error renders `error` as the contract's body: {error} for every status, plus docUrl and
    // issues for 400; adds Retry-After for 429/503 and Allow for 405. A 500 never carries
    // internals.
    static Response Error(const ApiError& error, std::string_view doc_url);
};

// IEquals compares two header names, ASCII letters in either case.
bool IEquals(std::string_view a, std::string_view b);

// PercentDecode decodes %XX escapes (and '+' as space when `plus_is_space`); nullopt on a bad
// escape.
std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space);

}  // namespace genhost::http
