// genhost/features/node.hpp
//
// Provides Node, what the features of one `genhost serve` process share, and Feature, what each
// feature is (docs/architecture.md "Features").
//
// A Node is built from the settings with the services every feature uses: the listeners (bound
// first, so the public URL carries the real port), the request schemas and the catalog (checked
// against each other), the migrated database and its pool, the organizations and the task
// repository, the output store and its URL signer, the authenticator, the blocking pool, the
// process's scratch folder, App (genhost/api/app.hpp) and the background Runtime
// (genhost/tasks/runtime.hpp) with its shared `jobs` lane.
//
// Each feature (src/features/<name>.cpp, listed once in src/features/feature_list.inc) is a
// function that wires its own parts into the node: it builds its repositories and engines with
// Own, fills its part of App, and declares its route sets, job kinds and lanes, schedules,
// notification channels, gauges and last steps. Nothing of it runs before Start.
//
// Start checks what the features declared (every job kind in the database served by one lane
// with a handler; every operation with a handler; every dependency of App set), registers the
// routes, starts the runtime, the listener and the servers. Serve then waits for a signal and
// calls Drain (docs/operations.md "Shutdown").
//
// Errors that stop the start are StartError, with the process's exit status.
#pragma once

#include "genhost/api/app.hpp"
#include "genhost/api/routes.hpp"
#include "genhost/config/settings.hpp"
#include "genhost/http/metrics.hpp"
#include "genhost/http/router.hpp"
#include "genhost/http/server.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/jobs_repo.hpp"
#include "genhost/store/listener.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/store/tasks_repo.hpp"
#include "genhost/tasks/runtime.hpp"
#include "genhost/tasks/scratch.hpp"

#include <boost/asio/thread_pool.hpp>

#include <csignal>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace genhost::providers {
class InputResolver;
}  // namespace genhost::providers

namespace genhost::features {

// StartError: the node cannot start; `status` is the process's exit status (2: a setting or the
// deployment is wrong; 1: the build's data disagree).
struct StartError : std::runtime_error {
    StartError(int status, const std::string& message)
        : std::runtime_error(message), status(status) {}
    int status;
};

// kJobsLane is the shared lane of short media jobs (avatars, documents, voices, output expiry):
// two runners, so a voice's analysis never holds up an avatar behind it; a 120 s lease.
inline constexpr const char* kJobsLane = "jobs";

class Node {
  public:
    // Builds the shared services (above); throws StartError.
    explicit Node(const config::Settings& settings);
    ~Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    // Own keeps a part a feature built for as long as the node lives (destroyed in the reverse
    // order of construction) and returns it.
    template <class T, class... Args>
    T& Own(Args&&... args) {
        auto part = std::make_shared<T>(std::forward<Args>(args)...);
        T& ref = *part;
        owned_.push_back(std::move(part));
        return ref;
    }

    // Keep keeps a part that is already shared.
    void Keep(std::shared_ptr<const void> part) { kept_.push_back(std::move(part)); }

    // What a feature declares while it is wired:
    void Routes(api::RouteSet route_set) { route_sets_.push_back(route_set); }
    void Subscribe(std::string channel, std::function<void(const std::string& payload)> notified) {
        channels_.push_back({std::move(channel), std::move(notified)});
    }
    void Gauges(std::function<std::vector<http::Sample>()> gauges) {
        gauges_.push_back(std::move(gauges));
    }
    // AtStop runs after the runtime drained, in the reverse order of declaration (a log that
    // writes what is still queued).
    void AtStop(std::function<void()> step) { at_stop_.push_back(std::move(step)); }
    // Need throws StartError naming `what` when `part` is null: a feature wired before one it
    // depends on.
    template <class T>
    T& Need(T* part, const std::string& what) {
        if (part == nullptr)
            throw StartError(2, "a feature needs " + what + ", which is not wired");
        return *part;
    }

    // The shared services.
    const config::Settings& settings() const { return settings_; }
    const std::string& public_url() const { return public_url_; }
    // media_url: the realtime media plane's URL that `consume` answers.
    std::string media_url() const;
    http::Metrics& metrics() { return metrics_; }
    http::Server* api_server() { return server_.get(); }
    store::Database& db() { return *db_; }
    store::TaskRepo& tasks() { return *tasks_; }
    store::JobRepo& jobs() { return *jobs_; }
    outputs::OutputStore& outputs() { return *outputs_; }
    const std::shared_ptr<const catalog::Catalog>& catalog() const { return catalog_; }
    const std::shared_ptr<const validate::SchemaSet>& schemas() const { return schemas_; }
    auth::Authenticator& authenticator() { return *authenticator_; }
    boost::asio::thread_pool& blocking() { return *blocking_; }
    tasks::Runtime& runtime() { return *runtime_; }
    const std::string& owner() const { return owner_; }
    std::string scratch_root() const { return scratch_->Path().string(); }
    api::App& app() { return *app_; }
    // SharedSecret reads a cluster-wide secret from the `settings` table, creating it once.
    std::string SharedSecret(const std::string& name);
    // The media inputs' resolver (the uploads feature sets it; avatars, voices and the task
    // queue need it).
    const providers::InputResolver* inputs = nullptr;

    // Start, then Drain after the first stop signal (`signal`); `signals` are the stop signals,
    // blocked in every thread: a second one ends the drain at once.
    void Start();
    void Drain(int signal, const sigset_t& signals);

  private:
    void RunStopSteps();

    config::Settings settings_;
    std::string public_url_;
    std::string owner_;
    http::Router router_;
    http::Router metrics_router_;
    http::Metrics metrics_;
    std::unique_ptr<http::Server> metrics_server_;
    std::unique_ptr<http::Server> server_;
    std::shared_ptr<const validate::SchemaSet> schemas_;
    std::shared_ptr<const catalog::Catalog> catalog_;
    std::unique_ptr<store::Database> db_;
    std::unique_ptr<store::OrgRepo> orgs_;
    std::unique_ptr<store::TaskRepo> tasks_;
    std::unique_ptr<store::JobRepo> jobs_;
    std::unique_ptr<outputs::OutputStore> outputs_;
    std::unique_ptr<outputs::UrlSigner> signer_;
    std::unique_ptr<auth::Authenticator> authenticator_;
    std::unique_ptr<boost::asio::thread_pool> blocking_;
    std::unique_ptr<tasks::ScratchSpace> scratch_;
    std::unique_ptr<api::App> app_;
    std::unique_ptr<tasks::Runtime> runtime_;
    std::unique_ptr<store::Listener> listener_;

    std::vector<std::shared_ptr<void>> owned_;
    std::vector<std::shared_ptr<const void>> kept_;
    std::vector<api::RouteSet> route_sets_;
    std::vector<store::Listener::Subscription> channels_;
    std::vector<std::function<std::vector<http::Sample>()>> gauges_;
    std::vector<std::function<void()>> at_stop_;
    bool stopped_ = false;  // the AtStop steps ran (Drain, or the destructor after a failed start)
};

// LoadCatalog loads the model catalog with the settings' tiers file and model routes (throws
// StartError for an unreadable tiers file).
std::shared_ptr<const catalog::Catalog> LoadCatalog(const config::Settings& settings);

// ReadSettingsFile reads a file a setting names (throws StartError naming it when it cannot).
std::string ReadSettingsFile(const std::string& path);

// EmbeddedResource returns a file compiled into the binary (schemas/moderation.json, ...).
std::string EmbeddedResource(const char* path);

// Feature: a name and the function that wires it into a node.
struct Feature {
    const char* name;
    void (*wire)(Node& node);
};

// Features lists every feature of genhost in wiring order (src/features/feature_list.inc).
const std::vector<Feature>& Features();

}  // namespace genhost::features
