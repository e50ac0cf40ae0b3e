// The route kit: each resource (one file each) registers its handlers by operationId into a
// Bindings, with a route set its feature names (genhost/api/*_routes.hpp); routes.cpp binds the
// handlers of every route set to the operation table (genhost/api/operations.hpp).
#pragma once

#include "common.hpp"

#include "genhost/api/routes.hpp"

#include <map>
#include <string>

namespace genhost::api {

// Binding is the handler of one operation, of the kind its auth asks for.
struct Binding {
    enum class Kind { kAuthed, kPublic, kStreaming } kind;
    AuthedHandler authed;
    http::Handler open;
    http::StreamingHandler streaming;
    std::size_t body_limit = 0;  // kStreaming: the route's body limit
};

using AuthedFn = boost::asio::awaitable<http::Response> (*)(App&, http::Request&,
                                                            const auth::Principal&);
using PublicFn = boost::asio::awaitable<http::Response> (*)(App&, http::Request&);

// Bindings is the table of handlers by operationId that the resources fill.
class Bindings {
  public:
    explicit Bindings(App& app) : app_(app) {}

    App& app() { return app_; }

    // Authed binds an operation whose auth is apiKey.
    void Authed(const std::string& operation_id, AuthedFn fn);
    // Authed with `deps`: the handler also gets what its feature gave the route set (a
    // repository), so a resource needs no field of App (docs/architecture.md "Features").
    template <class Deps>
    void Authed(const std::string& operation_id,
                boost::asio::awaitable<http::Response> (*fn)(App&, Deps&, http::Request&,
                                                             const auth::Principal&),
                Deps& deps) {
        App& app = app_;
        Add(operation_id, {Binding::Kind::kAuthed,
                           [&app, &deps, fn](http::Request& req, const auth::Principal& who) {
                               return fn(app, deps, req, who);
                           },
                           {},
                           {}});
    }
    // Public binds a public or signed-URL operation.
    void Public(const std::string& operation_id, PublicFn fn);
    // Streaming binds a public or signed-URL operation that reads its body as it arrives.
    void Streaming(const std::string& operation_id, std::size_t body_limit,
                   http::StreamingHandler handler);

    const std::map<std::string, Binding>& all() const { return bindings_; }

  private:
    void Add(const std::string& operation_id, Binding binding);

    App& app_;
    std::map<std::string, Binding> bindings_;
};

// AddMediaPlane adds the realtime media plane's WebSocket route (media_plane.cpp): it is no
// operation of the table (OpenAPI has no WebSockets); docs/realtime.md specifies it.
void AddMediaPlane(http::Router& router, App& app);

// CreatedTask is a task a generation request stored.
struct CreatedTask {
    std::string id;
    double credits = 0;                                      // estimatedCost.credits
    store::TaskStatus status = store::TaskStatus::kPending;  // PENDING or THROTTLED
};

// CreateTask stores a task of `endpoint` for the validated (defaults applied) request `input`:
// custom avatars and voices looked up, media inputs fetched and probed, priced, stored. The
// error is the 400 (asset, avatar, voice) or 429 (daily limit) to answer.
boost::asio::awaitable<Result<CreatedTask>> CreateTask(App& app, const std::string& endpoint,
                                                       nlohmann::json input,
                                                       const auth::Principal& who);

// CreatedTaskResponse is the 200 of a task-creating endpoint: {id, estimatedCost}.
http::Response CreatedTaskResponse(const CreatedTask& created);

// generation.cpp: every task-creating endpoint of schemas/ (endpoint name bound per route).
boost::asio::awaitable<http::Response> CreateGeneration(App& app, const std::string& endpoint,
                                                        http::Request& req,
                                                        const auth::Principal& who);

}  // namespace genhost::api
