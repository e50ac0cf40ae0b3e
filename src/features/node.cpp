// The node's shared services, Start and the drain (genhost/features/node.hpp).
#include "genhost/features/node.hpp"

#include "genhost/auth/auth.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/core/deadline.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/core/resources.hpp"
#include "genhost/outputs/s3_store.hpp"
#include "genhost/providers/provider_config.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/store/settings_repo.hpp"
#include "genhost/tasks/job_kinds.hpp"

#include <spdlog/spdlog.h>

#include <sys/resource.h>
#include <unistd.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace genhost::features {

namespace {

std::string PublicUrl(const config::Settings& s) {
    if (!s.public_url.empty()) return s.public_url;
    // Behind a unix-domain socket only the proxy in front knows the public address: set
    // GENHOST_PUBLIC_URL (docs/configuration.md).
    if (!s.listen_unix.empty()) return "http://localhost";
    const bool v6 = s.listen_host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + s.listen_host + "]" : s.listen_host) + ":" +
           std::to_string(s.listen_port);
}

// ConnectionCap raises the process's open-file limit to its hard limit and returns `wanted`, or
// less when that limit cannot hold it beside the files and database connections the rest of the
// server needs (kFilesBesideConnections).
std::size_t ConnectionCap(std::size_t wanted) {
    constexpr rlim_t kFilesBesideConnections = 256;
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return wanted;
    if (limit.rlim_cur < limit.rlim_max) {
        rlimit raised = limit;
        raised.rlim_cur = limit.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
    }
    if (limit.rlim_cur == RLIM_INFINITY) return wanted;
    const rlim_t room = limit.rlim_cur > 2 * kFilesBesideConnections
                            ? limit.rlim_cur - kFilesBesideConnections
                            : limit.rlim_cur / 2;
    if (wanted <= room) return wanted;
    spdlog::warn(
        "GENHOST_MAX_CONNECTIONS is {}, but the open-file limit is {}: at most {} connections",
        wanted, limit.rlim_cur, room);
    return static_cast<std::size_t>(room);
}

std::chrono::milliseconds Millis(double seconds) {
    return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

}  // namespace

std::string ReadSettingsFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw StartError(2, "cannot read " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string EmbeddedResource(const char* path) {
    const auto r = FindResource(path);
    if (!r) throw StartError(1, std::string("missing embedded resource ") + path);
    return std::string(*r);
}

std::shared_ptr<const catalog::Catalog> LoadCatalog(const config::Settings& s) {
    const std::string tiers = s.tiers_file.empty() ? EmbeddedResource("schemas/tiers.json")
                                                   : ReadSettingsFile(s.tiers_file);
    // GENHOST_MODEL_PROVIDERS routes models to providers without editing the catalog.
    const std::string models = providers::RouteModels(
        EmbeddedResource("schemas/models.json"), providers::ParseModelRoutes(s.model_providers));
    return catalog::Catalog::Load(models, tiers);
}

Node::Node(const config::Settings& settings) : settings_(settings) {
    config::Settings& s = settings_;
    std::string proxies_error;
    const auto trusted_proxies = http::TrustedProxies::Parse(s.trusted_proxies, &proxies_error);
    if (!trusted_proxies) throw StartError(2, "GENHOST_TRUSTED_PROXIES: " + proxies_error);
    // The listeners are bound first: with port 0 the port picked is part of the public URL that
    // signed output and upload URLs carry. Nothing is accepted before Start.
    if (!s.metrics_listen.empty()) {  // GENHOST_METRICS_LISTEN: /metrics on a listener of its own
        http::ServerOptions mopts;
        mopts.host = s.metrics_host;
        mopts.port = s.metrics_port;
        mopts.io_threads = 1;
        mopts.max_connections = 64;
        mopts.max_body_bytes = 64 * 1024;
        mopts.max_body_memory = 1024 * 1024;
        metrics_server_ = std::make_unique<http::Server>(mopts, metrics_router_, metrics_);
        metrics_server_->Listen();
    }
    if (s.role != "worker") {
        http::ServerOptions hopts;
        hopts.host = s.listen_host;
        hopts.port = s.listen_port;
        hopts.unix_path = s.listen_unix;
        hopts.io_threads = s.io_threads;
        hopts.max_body_bytes = s.max_body_bytes;
        hopts.max_header_bytes = s.max_header_bytes;
        hopts.read_timeout = Millis(s.read_timeout_seconds);
        hopts.max_connections = ConnectionCap(s.max_connections);
        hopts.max_body_memory = s.max_body_memory;
        hopts.trusted_proxies = *trusted_proxies;
        server_ = std::make_unique<http::Server>(hopts, router_, metrics_);
        server_->Listen();
        if (s.listen_port == 0) s.listen_port = server_->Port();
    }
    public_url_ = PublicUrl(s);

    schemas_ = api::LoadEmbeddedSchemas();
    catalog_ = LoadCatalog(s);
    if (const auto problems = api::CheckContract(*schemas_, *catalog_); !problems.empty()) {
        std::string all;
        for (const auto& p : problems) all += "\n  schemas and catalog disagree: " + p;
        throw StartError(1, "the build's data disagree:" + all);
    }
    const int applied = store::Migrate(s.database_url);
    spdlog::info("database ready ({} migration(s) applied)", applied);
    db_ = std::make_unique<store::Database>(s.database_url, s.db_threads);
    db_->Start();
    orgs_ = std::make_unique<store::OrgRepo>(*db_);
    tasks_ = std::make_unique<store::TaskRepo>(*db_, s.io_threads);
    jobs_ = std::make_unique<store::JobRepo>(*db_);

    const auto org =
        orgs_->EnsureOrganizationSync(s.default_org, s.default_tier, false, s.default_credits);
    if (!s.api_key.empty()) {
        if (!auth::IsWellFormedKey(s.api_key)) {
            throw StartError(
                2, "GENHOST_API_KEY must be key_ followed by 128 lowercase hex characters");
        }
        orgs_->AddKeySync(org.id, auth::HashKey(s.api_key), true);
    }

    // The output store (docs/outputs.md): a local folder, or a bucket nodes share.
    if (s.output_store == "s3") {
        outputs::S3Options s3;
        s3.endpoint = s.s3_endpoint;
        s3.region = s.s3_region;
        s3.bucket = s.s3_bucket;
        s3.access_key_id = s.s3_access_key_id;
        s3.secret_access_key = s.s3_secret_access_key;
        s3.prefix = s.s3_prefix;
        s3.metrics = &metrics_.Registry();
        try {
            outputs_ = std::make_unique<outputs::S3OutputStore>(std::move(s3));
        } catch (const std::exception& e) {
            throw StartError(2, e.what());
        }
        spdlog::info("output store: s3 bucket {} at {} (prefix \"{}\")", s.s3_bucket, s.s3_endpoint,
                     s.s3_prefix);
    } else {
        outputs_ = std::make_unique<outputs::LocalOutputStore>(std::filesystem::path(s.data_dir) /
                                                               "outputs");
    }
    signer_ = std::make_unique<outputs::UrlSigner>(SharedSecret("output_url_secret"), public_url_,
                                                   SystemClock::Instance());
    authenticator_ = std::make_unique<auth::Authenticator>(*orgs_, std::chrono::seconds(10));
    blocking_ = std::make_unique<boost::asio::thread_pool>(2);

    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    owner_ = std::string(host) + ":" + std::to_string(getpid()) + ":" + NewUuid().substr(0, 8);
    // This process's scratch folder; a sweep removes the scratch of processes that are gone (a
    // task killed mid-run leaves its intermediate files behind).
    scratch_ = std::make_unique<tasks::ScratchSpace>(std::filesystem::path(s.data_dir) / "scratch",
                                                     owner_);
    runtime_ = std::make_unique<tasks::Runtime>(*jobs_, owner_);
    runtime_->Every("scratch sweep", Millis(s.scratch_sweep_interval_seconds),
                    [this] { scratch_->Sweep(); });
    tasks::LaneOptions jobs_lane;
    jobs_lane.name = kJobsLane;
    jobs_lane.runners = 2;
    jobs_lane.lease_seconds = s.job_lease_seconds;  // one avatar takes well under a second
    runtime_->AddLane(jobs_lane);

    const std::string doc_url = s.doc_url.empty() ? public_url_ + "/docs/errors" : s.doc_url;
    // By name: a field added to App cannot be filled by position by mistake.
    app_ = std::make_unique<api::App>(api::App{.db = *db_,
                                               .tasks = *tasks_,
                                               .authenticator = *authenticator_,
                                               .schemas = schemas_,
                                               .catalog = catalog_,
                                               .outputs = *outputs_,
                                               .signer = *signer_,
                                               .metrics = metrics_,
                                               .blocking = *blocking_,
                                               .doc_url = doc_url,
                                               .output_url_ttl_seconds = s.output_url_ttl_seconds});
    if (metrics_server_) app_->metrics_router = &metrics_router_;

    Subscribe("genhost_keys", [this](const std::string&) { authenticator_->Invalidate(); });
    Subscribe("genhost_jobs", [this](const std::string&) { runtime_->KickAll(); });
}

Node::~Node() {
    // Normally stopped by Drain already; after a failed start, in the order Drain uses.
    if (server_) server_->Shutdown(std::chrono::milliseconds(0));
    if (runtime_) runtime_->Stop(core::Deadline(std::chrono::milliseconds(0)));
    if (listener_) listener_->Stop();
    RunStopSteps();  // a part may keep the blocking pool busy until its step (the decision log)
    if (metrics_server_) metrics_server_->Shutdown(std::chrono::milliseconds(0));
    if (blocking_) blocking_->join();
    // The features' parts, newest first: each may use those built before it.
    while (!owned_.empty()) owned_.pop_back();
    kept_.clear();
    if (db_) db_->Stop();
}

void Node::RunStopSteps() {
    if (stopped_) return;
    stopped_ = true;
    for (auto step = at_stop_.rbegin(); step != at_stop_.rend(); ++step) {
        try {
            (*step)();
        } catch (const std::exception& e) {
            spdlog::warn("a step at stop failed: {}", e.what());
        }
    }
}

std::string Node::SharedSecret(const std::string& name) {
    return store::SettingsRepo(*db_).GetOrCreateSync(name,
                                                     [] { return HexEncode(RandomBytes(32)); });
}

std::string Node::media_url() const {
    if (!settings_.media_url.empty()) return settings_.media_url;
    std::string base = public_url_;
    if (base.rfind("https://", 0) == 0) {
        base = "wss://" + base.substr(8);
    } else if (base.rfind("http://", 0) == 0) {
        base = "ws://" + base.substr(7);
    }
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/_genhost/realtime";
}

void Node::Start() {
    // Every declared job kind has its lane here; kinds in the database that this version does
    // not know are reported (tasks/job_kinds.hpp).
    const auto job_kinds = tasks::CheckJobKinds(runtime_->Lanes(), jobs_->CountByKindSync());
    for (const auto& w : job_kinds.warnings) spdlog::warn("{}", w);
    if (!job_kinds.errors.empty()) {
        for (const auto& e : job_kinds.errors) spdlog::error("{}", e);
        throw StartError(2, "the job kinds and the lanes disagree (above)");
    }
    app_->extra_gauges = [this] {
        std::vector<http::Sample> all{{"genhost_listener_connected",
                                       "Whether the notification listener is connected.",
                                       {},
                                       listener_ && listener_->Connected() ? 1.0 : 0.0}};
        for (const auto& gauges : gauges_) {
            for (auto& g : gauges()) all.push_back(std::move(g));
        }
        return all;
    };
    try {
        api::RegisterRoutes(router_, *app_, route_sets_);
    } catch (const std::runtime_error& e) {
        throw StartError(2, e.what());
    }
    try {
        // A declared channel nobody subscribes to, or an unknown one, stops the start.
        listener_ = std::make_unique<store::Listener>(settings_.database_url, channels_);
    } catch (const std::invalid_argument& e) {
        throw StartError(2, e.what());
    }
    // The runtime before the listener and the servers: a kick from either must find its lanes
    // running.
    runtime_->Start();
    listener_->Start();
    const config::Settings& s = settings_;
    if (metrics_server_) {
        metrics_server_->SetDocUrl(app_->doc_url);
        metrics_server_->Start();
        spdlog::info("metrics on {}:{}/metrics", s.metrics_host, metrics_server_->Port());
    }
    if (server_) {
        server_->SetDocUrl(app_->doc_url);
        server_->Start();
        if (!s.port_file.empty()) {
            const std::string tmp = s.port_file + ".tmp";
            std::ofstream(tmp) << server_->Port() << "\n";
            std::filesystem::rename(tmp, s.port_file);
        }
        if (s.listen_unix.empty()) {
            spdlog::info("genhost listening on {}:{} (public URL {})", s.listen_host,
                         server_->Port(), public_url_);
        } else {
            spdlog::info("genhost listening on unix:{} (public URL {})", s.listen_unix,
                         public_url_);
        }
    }
}

void Node::Drain(int sig, const sigset_t& signals) {
    const config::Settings& s = settings_;
    // On SIGTERM (a process manager, a rolling update) /readyz first turns 503 while everything
    // is still served for GENHOST_SHUTDOWN_DELAY, so that a load balancer stops sending work here;
    // then the drain, for at most GENHOST_DRAIN_TIMEOUT. SIGINT (Ctrl-C) drains at once. A second
    // signal, at any point from here, ends both at once: what still runs goes back to the queue.
    *app_->draining = true;
    const bool delay = server_ && sig == SIGTERM && s.shutdown_delay_seconds > 0;
    const auto seconds = [](double v) {
        return std::chrono::duration_cast<core::Deadline::Clock::duration>(
            std::chrono::duration<double>(v));
    };
    core::Deadline serving(seconds(delay ? s.shutdown_delay_seconds : 0));
    core::Deadline drain(seconds((delay ? s.shutdown_delay_seconds : 0) + s.drain_timeout_seconds));
    std::atomic<bool> stopped{false};
    std::thread second_signal([&] {
        const timespec poll{0, 100 * 1000 * 1000};
        while (!stopped.load()) {
            const int again = sigtimedwait(&signals, nullptr, &poll);
            if (again > 0) {
                spdlog::info("a second signal ({}): ending the drain now", again);
                serving.Cut();
                drain.Cut();
                return;
            }
        }
    });
    if (delay) {
        spdlog::info("received signal {}: /readyz answers 503; serving {} s more, then draining",
                     sig, s.shutdown_delay_seconds);
        while (!serving.Passed()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    spdlog::info("received signal {}, draining for at most {} s", sig, s.drain_timeout_seconds);
    if (server_) server_->Shutdown(drain);
    runtime_->Stop(drain);  // live realtime sessions end; see docs/realtime.md
    listener_->Stop();
    RunStopSteps();
    // Last: the drain's progress stays visible to scrapes until the end.
    if (metrics_server_) metrics_server_->Shutdown(std::chrono::milliseconds(1000));
    blocking_->join();
    stopped = true;
    second_signal.join();
}

}  // namespace genhost::features
