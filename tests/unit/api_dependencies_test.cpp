// Issue 32: a missing dependency of the routes fails at start, not at the first request that
// needs it. MissingDependencies names every unset one; RegisterRoutes refuses to register then.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/thread_pool.hpp>

#include <filesystem>

#include "genhost/api/app.hpp"
#include "genhost/api/routes.hpp"
#include "genhost/auth/auth.hpp"
#include "genhost/http/metrics.hpp"
#include "genhost/http/router.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/store/tasks_repo.hpp"

// The App below leaves its feature dependencies unset on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace genhost::api {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// Parts is what an App refers to, none of it connected: nothing here reaches a database.
struct Parts {
    store::Database db{"host=/nonexistent", 1};
    store::TaskRepo tasks{db};
    store::OrgRepo orgs{db};
    auth::Authenticator authenticator{orgs, std::chrono::seconds(1)};
    outputs::LocalOutputStore outputs{std::filesystem::temp_directory_path() / "genhost-deps-test"};
    outputs::UrlSigner signer{"secret", "http://127.0.0.1:1", SystemClock::Instance()};
    http::Metrics metrics;
    boost::asio::thread_pool blocking{1};
    App app{.db = db,
            .tasks = tasks,
            .authenticator = authenticator,
            .schemas = LoadEmbeddedSchemas(),
            .catalog = nullptr,
            .outputs = outputs,
            .signer = signer,
            .metrics = metrics,
            .blocking = blocking,
            .doc_url = "http://127.0.0.1:1/docs/errors"};
};

TEST(Dependencies, EveryUnsetDependencyIsNamed) {
    Parts p;
    const auto missing = MissingDependencies(p.app);
    for (const char* name : {"catalog",        "inputs",         "input_files",
                             "uploads.repo",   "uploads.signer", "uploads.folder",
                             "avatars.repo",   "avatars.kick",   "documents.repo",
                             "documents.kick", "voices.repo",    "voices.kick",
                             "routers.repo",   "routers.engine", "routers.snapshot",
                             "routers.log",    "realtime.repo",  "realtime.token_secret",
                             "realtime.kick",  "realtime.live",  "workflows.repo",
                             "workflows.kick"}) {
        EXPECT_THAT(missing, Contains(name));
    }
    EXPECT_THAT(missing, Not(Contains("schemas")));
    // The optional ones are never named.
    EXPECT_THAT(missing, Not(Contains("routers.cache")));
    EXPECT_THAT(missing, Not(Contains("metrics_router")));
    // Set, a dependency is no longer named.
    p.app.avatars.kick = [] {};
    p.app.realtime.token_secret = "s";
    EXPECT_THAT(MissingDependencies(p.app), Not(Contains("avatars.kick")));
    EXPECT_THAT(MissingDependencies(p.app), Not(Contains("realtime.token_secret")));
}

TEST(Dependencies, RegisterRoutesRefusesAnIncompleteApp) {
    Parts p;
    http::Router router;
    try {
        RegisterRoutes(router, p.app, {});
        ADD_FAILURE() << "registered without its dependencies";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("the routes' dependencies are not all set: catalog, "
                                        "inputs, input_files, uploads.repo"));
        EXPECT_THAT(e.what(), HasSubstr("workflows.kick"));
    }
}

}  // namespace
}  // namespace genhost::api
