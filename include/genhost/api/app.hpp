// genhost/api/app.hpp
//
// Provides App: everything the HTTP handlers need (api/routes.hpp binds them). Each resource's
// handlers live in their own file (src/api/<resource>.cpp); each feature fills its part of App
// (genhost/features/).
//
// Every /v1 route except the public ones authenticates the caller (401), then checks the
// `X-Service-Version` header (400), then runs its handler. Expected failures come back as
// ApiError values; a lost database becomes 503 with Retry-After.
#pragma once

#include "genhost/auth/auth.hpp"
#include "genhost/catalog/catalog.hpp"
#include "genhost/core/clock.hpp"
#include "genhost/http/metrics.hpp"
#include "genhost/http/router.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/outputs/upload_folder.hpp"
#include "genhost/outputs/upload_policy.hpp"
#include "genhost/routing/engine.hpp"
#include "genhost/store/avatars_repo.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/documents_repo.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/store/realtime_repo.hpp"
#include "genhost/store/router_log.hpp"
#include "genhost/store/routers_repo.hpp"
#include "genhost/store/routing_snapshot.hpp"
#include "genhost/store/tasks_repo.hpp"
#include "genhost/store/uploads_repo.hpp"
#include "genhost/store/voices_repo.hpp"
#include "genhost/store/workflows_repo.hpp"
#include "genhost/tasks/realtime_sessions.hpp"
#include "genhost/validate/schema_set.hpp"

#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace genhost::assets {
class RequestInputs;
}  // namespace genhost::assets

namespace genhost::providers {
class InputResolver;
}  // namespace genhost::providers

namespace genhost::api {

inline constexpr std::string_view kServiceVersion = "2024-11-06";

// kMaxJsonDepth is how deeply a request body's arrays and objects may nest (a workflow file given
// to `genhost workflows publish` too).
inline constexpr std::size_t kMaxJsonDepth = 64;

struct App {
    store::Database& db;
    store::TaskRepo& tasks;
    auth::Authenticator& authenticator;
    std::shared_ptr<const validate::SchemaSet> schemas;
    std::shared_ptr<const catalog::Catalog> catalog;
    outputs::OutputStore& outputs;
    outputs::UrlSigner& signer;
    http::Metrics& metrics;
    boost::asio::thread_pool& blocking;  // file I/O and other blocking work
    std::string doc_url;
    double output_url_ttl_seconds = 86400;
    std::size_t max_json_depth = kMaxJsonDepth;
    // Set once the process was told to stop: /readyz answers 503 from then on, while requests
    // are still served for GENHOST_SHUTDOWN_DELAY.
    std::shared_ptr<std::atomic<bool>> draining = std::make_shared<std::atomic<bool>>(false);
    // Extra gauges for /metrics (workers running here, listener state, ...).
    std::function<std::vector<http::Sample>()> extra_gauges;
    // When set (GENHOST_METRICS_LISTEN), /metrics is served on this router's listener instead
    // of the API's.
    http::Router* metrics_router = nullptr;
    // Reads, probes and checks the media inputs of generation requests (src/assets); without
    // it media strings are stored as sent, unchecked.
    assets::RequestInputs* inputs = nullptr;
    // Turns a stored input reference into its file (the media a resource keeps: an avatar's
    // reference image, a voice's sample).
    const providers::InputResolver* input_files = nullptr;

    // UploadsConfig is what the upload routes need (src/api/uploads.cpp, docs/uploads.md).
    struct UploadsConfig {
        store::UploadRepo* repo = nullptr;
        const outputs::UploadPolicySigner* signer = nullptr;
        const outputs::UploadFolder* folder = nullptr;
        std::uint64_t max_bytes = 200ull * 1024 * 1024;  // per file
        double ttl_seconds = 86400;
        const Clock* clock = &SystemClock::Instance();
    };
    // Ephemeral uploads (POST /v1/uploads and POST /uploads/{id}) need `repo`, `signer` and
    // `folder`.
    UploadsConfig uploads;

    // AvatarsConfig is what the avatar routes need (src/api/avatars.cpp, docs/avatars.md).
    struct AvatarsConfig {
        store::AvatarRepo* repo = nullptr;
        // Wakes this node's avatar processor after a create or update.
        std::function<void()> kick;
    };
    // Custom avatars (/v1/avatars, and custom avatars in avatar_videos) need `repo`.
    AvatarsConfig avatars;

    // DocumentsConfig is what the document routes need (src/api/documents.cpp, docs/documents.md).
    struct DocumentsConfig {
        store::DocumentRepo* repo = nullptr;
        // Wakes this node's job engine after a change to index (other nodes hear NOTIFY).
        std::function<void()> kick;
    };
    // Knowledge documents (/v1/documents, documentIds of avatars, the search extra) need `repo`.
    DocumentsConfig documents;

    // VoicesConfig is what the voice routes need (src/api/voices.cpp, docs/voices.md).
    struct VoicesConfig {
        store::VoiceRepo* repo = nullptr;
        // Wakes this node's job engine after a create (other nodes hear NOTIFY).
        std::function<void()> kick;
    };
    // Custom voices (/v1/voices, custom voices of avatars and avatar_videos) need `repo`.
    VoicesConfig voices;

    // RoutersConfig is what the router routes need (src/api/routers.cpp, docs/routers.md).
    struct RoutersConfig {
        store::RouterRepo* repo = nullptr;
        // Routed generation (/v1/generate/*, src/api/generate.cpp) also needs the rest.
        const routing::Engine* engine = nullptr;
        store::RoutingSnapshotRepo* snapshot = nullptr;
        store::RouterLog* log = nullptr;      // the decision log (/v1/routers/{id}/requests)
        store::RouterCache* cache = nullptr;  // routers named by generate requests (optional)
    };
    // Model routers (/v1/routers) need `repo`.
    RoutersConfig routers;

    // RealtimeConfig is what the realtime routes need (src/api/realtime_sessions.cpp,
    // conversations.cpp, docs/realtime.md).
    struct RealtimeConfig {
        store::RealtimeRepo* repo = nullptr;
        // The media plane's token issuer and secret (shared by every node: the `settings`
        // table), and how long a participant token is valid.
        std::string token_issuer = "genhost";
        std::string token_secret;
        double token_seconds = 600;
        // Wakes this node's realtime engine after a create (other nodes hear NOTIFY).
        std::function<void()> kick;
        // The sessions this node runs: the media plane (GET /_genhost/realtime) attaches its
        // participants to them.
        tasks::LiveSessions* live = nullptr;
    };
    // Realtime sessions, conversations and avatar usage need `repo`.
    RealtimeConfig realtime;

    // WorkflowsConfig is what the workflow routes need (src/api/workflows.cpp,
    // docs/workflows.md).
    struct WorkflowsConfig {
        store::WorkflowRepo* repo = nullptr;
        // Wakes this node's workflow engine after an invocation is stored (other nodes hear
        // NOTIFY).
        std::function<void()> kick;
    };
    // Workflows and their invocations need `repo`.
    WorkflowsConfig workflows;
};

// MissingDependencies names every dependency of `app` that the routes need and that is not set
// (a null repository, an empty kick or secret), as "avatars.repo", ...; empty when complete.
// Optional: routers.cache, metrics_router and extra_gauges.
std::vector<std::string> MissingDependencies(const App& app);

// CheckContract compares the request schemas with the catalog: every model a generation schema
// accepts must be in the catalog and serve that endpoint. Returns one line per problem (empty
// when consistent); `genhost serve` refuses to start otherwise.
std::vector<std::string> CheckContract(const validate::SchemaSet& schemas,
                                       const catalog::Catalog& catalog);

// LoadEmbeddedSchemas compiles the request schemas compiled into the binary.
std::shared_ptr<const validate::SchemaSet> LoadEmbeddedSchemas();

// TierLimits is what an organization's tier allows for one model.
struct TierLimits {
    int max_concurrent = 0;
    int max_daily = 0;
    std::int64_t max_spend_credits = -1;  // the tier's 30-day spend cap in credits (-1: none)
};

// LimitsFor looks up `tier` in the catalog's tier table (an unknown tier gets the nearest lower
// one, or the lowest).
TierLimits LimitsFor(const catalog::Catalog& catalog, int tier, const std::string& model);

}  // namespace genhost::api
