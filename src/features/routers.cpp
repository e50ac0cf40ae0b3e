// The routers feature (docs/routers.md): model routers, routed generation (/v1/generate/*) and
// its decision log, written in batches on the blocking pool and flushed at stop.
#include "genhost/api/routers_routes.hpp"
#include "genhost/features/node.hpp"
#include "genhost/routing/engine.hpp"
#include "genhost/store/router_log.hpp"
#include "genhost/store/routers_repo.hpp"
#include "genhost/store/routing_snapshot.hpp"

namespace genhost::features {

void WireRouters(Node& node) {
    auto& routers = node.app().routers;
    routers.repo = &node.Own<store::RouterRepo>(node.db());
    routers.engine = &node.Own<routing::Engine>(node.catalog(), node.schemas());
    routers.snapshot = &node.Own<store::RoutingSnapshotRepo>(node.db());
    auto& log = node.Own<store::RouterLog>(node.db());
    log.Start(node.blocking().get_executor());
    node.AtStop([&log] { log.Stop(); });  // writes the decisions still queued
    routers.log = &log;
    auto& cache = node.Own<store::RouterCache>();
    routers.cache = &cache;
    node.Subscribe("genhost_routers", [&cache](const std::string&) { cache.Clear(); });
    node.Routes(api::RegisterRouterRoutes);
    node.Routes(api::RegisterGenerateRoutes);
}

}  // namespace genhost::features
