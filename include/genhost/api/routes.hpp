// genhost/api/routes.hpp
//
// Provides RouteSet and RegisterRoutes. A route set is one feature's handlers: a function that
// binds them by operationId into a Bindings (src/api/handlers.hpp), possibly with what the
// feature built for them (the credits feature gives its route set its repository). Each feature
// names its route sets (genhost/api/*_routes.hpp) to its node (genhost/features/node.hpp);
// RegisterRoutes binds all of them to the operation table (genhost/api/operations.hpp) and refuses
// to start when an operation has no handler, a handler no operation, or a dependency of App is
// missing.
#pragma once

#include "genhost/api/app.hpp"
#include "genhost/http/router.hpp"

#include <functional>
#include <vector>

namespace genhost::api {

class Bindings;
// A route set may carry what its feature gives it (a repository): a closure.
using RouteSet = std::function<void(Bindings& b)>;

// RegisterRoutes adds every operation of the operation table to `router`, bound to the handler
// that one of `route_sets` registered under its operationId, and the media plane's WebSocket.
// Throws std::runtime_error when a dependency is missing (MissingDependencies), an operation has
// no handler, a handler no operation, or a handler does not fit its operation's auth: the server
// then refuses to start, instead of failing on the first request that needs it.
void RegisterRoutes(http::Router& router, App& app, const std::vector<RouteSet>& route_sets);

}  // namespace genhost::api
