// genhost/api/realtime_routes.hpp
//
// Provides the route set of the realtime feature: its handlers, bound by operationId
// (api/routes.hpp).
#pragma once

#include "genhost/api/routes.hpp"

namespace genhost::api {

// realtime_sessions.cpp: /v1/realtime_sessions
void RegisterRealtimeRoutes(Bindings& b);
// conversations.cpp: conversations and avatar usage
void RegisterConversationRoutes(Bindings& b);

}  // namespace genhost::api
