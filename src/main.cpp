// genhost: the server binary. main only wires the modules together and runs a subcommand:
//   serve | migrate | keys create --org NAME [--tier N] | keys disable KEY_ID | keys list
//   tasks cancel TASK_ID | orgs suspend NAME | orgs resume NAME
//   workflows publish FILE.json --org NAME
#include "genhost/api/app.hpp"
#include "genhost/api/upload_source.hpp"
#include "genhost/api/workflows.hpp"
#include "genhost/assets/resolver.hpp"
#include "genhost/auth/auth.hpp"
#include "genhost/catalog/catalog.hpp"
#include "genhost/config/settings.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/core/deadline.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/core/logging.hpp"
#include "genhost/core/resources.hpp"
#include "genhost/core/version.hpp"
#include "genhost/http/server.hpp"
#include "genhost/media/log.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/outputs/s3_store.hpp"
#include "genhost/outputs/upload_folder.hpp"
#include "genhost/outputs/upload_policy.hpp"
#include "genhost/providers/builtin.hpp"
#include "genhost/providers/http_provider.hpp"
#include "genhost/providers/provider_config.hpp"
#include "genhost/store/avatars_repo.hpp"
#include "genhost/store/credits_repo.hpp"
#include "genhost/store/jobs_repo.hpp"
#include "genhost/store/listener.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/store/settings_repo.hpp"
#include "genhost/store/tasks_repo.hpp"
#include "genhost/store/uploads_repo.hpp"
#include "genhost/store/workflows_repo.hpp"
#include "genhost/tasks/avatar_processor.hpp"
#include "genhost/tasks/document_indexer.hpp"
#include "genhost/tasks/job_engine.hpp"
#include "genhost/tasks/job_kinds.hpp"
#include "genhost/tasks/moderation.hpp"
#include "genhost/tasks/periodic.hpp"
#include "genhost/tasks/realtime_conversation.hpp"
#include "genhost/tasks/realtime_sessions.hpp"
#include "genhost/tasks/retention_sweeper.hpp"
#include "genhost/tasks/scratch.hpp"
#include "genhost/tasks/upload_sweeper.hpp"
#include "genhost/tasks/voice_processor.hpp"
#include "genhost/tasks/worker_pool.hpp"
#include "genhost/tasks/workflow_runner.hpp"
#include "genhost/validate/json_body.hpp"
#include "genhost/validate/schema_set.hpp"

#include <spdlog/spdlog.h>

#include <sys/resource.h>
#include <unistd.h>
#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

namespace {

using genhost::config::Settings;

constexpr const char* kUsage =
    "usage: genhost [options] COMMAND\n"
    "commands:\n"
    "  serve                              run the HTTP API and the task workers\n"
    "  migrate                            apply database migrations and exit\n"
    "  keys create --org NAME [--tier N]  create an API key (and the organization)\n"
    "  keys disable KEY_ID                disable a key\n"
    "  keys list                          list keys\n"
    "  tasks cancel TASK_ID               cancel a task (it shows CANCELLED)\n"
    "  orgs suspend NAME | orgs resume NAME\n"
    "  credits grant --org NAME --amount N [--note TEXT]\n"
    "                                     add N credits (negative: take back) to an organization\n"
    "  credits show [--org NAME]          balances, 30-day spend and ledger totals\n"
    "  workflows publish FILE.json --org NAME\n"
    "                                     publish a workflow ({name, description?, graph});\n"
    "                                     prints the version id (docs/workflows.md)\n";

std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string Resource(const char* path) {
    const auto r = genhost::FindResource(path);
    if (!r) throw std::runtime_error(std::string("missing embedded resource ") + path);
    return std::string(*r);
}

std::shared_ptr<const genhost::catalog::Catalog> LoadCatalog(const Settings& s) {
    const std::string tiers =
        s.tiers_file.empty() ? Resource("schemas/tiers.json") : ReadFile(s.tiers_file);
    // GENHOST_MODEL_PROVIDERS routes models to providers without editing the catalog.
    const std::string models = genhost::providers::RouteModels(
        Resource("schemas/models.json"), genhost::providers::ParseModelRoutes(s.model_providers));
    return genhost::catalog::Catalog::Load(models, tiers);
}

std::string PublicUrl(const Settings& s) {
    if (!s.public_url.empty()) return s.public_url;
    // Behind a unix-domain socket only the proxy in front knows the public address: set
    // GENHOST_PUBLIC_URL (docs/configuration.md).
    if (!s.listen_unix.empty()) return "http://localhost";
    const bool v6 = s.listen_host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + s.listen_host + "]" : s.listen_host) + ":" +
           std::to_string(s.listen_port);
}

// MediaUrl is the realtime media plane's URL that consume answers: GENHOST_MEDIA_URL, else the
// public URL (with the port actually bound) as ws:// or wss://, plus /_genhost/realtime.
std::string MediaUrl(const Settings& s, unsigned short bound_port) {
    if (!s.media_url.empty()) return s.media_url;
    std::string base = s.public_url;
    if (base.empty()) {
        Settings bound = s;
        if (bound.listen_port == 0) bound.listen_port = bound_port;
        base = PublicUrl(bound);
    }
    if (base.rfind("https://", 0) == 0) {
        base = "wss://" + base.substr(8);
    } else if (base.rfind("http://", 0) == 0) {
        base = "ws://" + base.substr(7);
    }
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/_genhost/realtime";
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

int RequireDatabase(const Settings& s) {
    if (s.database_url.empty()) {
        std::cerr << "genhost: DATABASE_URL (or DATABASE_URL_FILE) is required\n";
        return 2;
    }
    return 0;
}

// Arg returns the value after `--name` in `args`, if present.
std::optional<std::string> Arg(const std::vector<std::string>& args, const std::string& name) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
        if (args[i] == "--" + name) return args[i + 1];
        if (args[i].rfind("--" + name + "=", 0) == 0) return args[i].substr(name.size() + 3);
    }
    if (!args.empty() && args.back().rfind("--" + name + "=", 0) == 0) {
        return args.back().substr(name.size() + 3);
    }
    return std::nullopt;
}

// StopSignals is the set Serve waits for: SIGTERM and SIGINT.
sigset_t StopSignals() {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    return signals;
}

int Serve(const Settings& settings) {
    if (int rc = RequireDatabase(settings)) return rc;
    Settings s = settings;
    // Signals are taken synchronously by this thread; main blocked them before any thread
    // started, and every thread inherits the mask.
    const sigset_t signals = StopSignals();

    // The listener is bound first: with port 0 the port it picks is part of the public URL that
    // signed output and upload URLs carry. Nothing is accepted before Start, once all is wired.
    genhost::http::Router router;
    genhost::http::Metrics metrics;
    std::string proxies_error;
    const auto trusted_proxies =
        genhost::http::TrustedProxies::Parse(s.trusted_proxies, &proxies_error);
    if (!trusted_proxies) {
        std::cerr << "genhost: GENHOST_TRUSTED_PROXIES: " << proxies_error << "\n";
        return 2;
    }
    // GENHOST_METRICS_LISTEN: a listener of its own for /metrics (on worker nodes too).
    genhost::http::Router metrics_router;
    std::unique_ptr<genhost::http::Server> metrics_server;
    if (!s.metrics_listen.empty()) {
        genhost::http::ServerOptions mopts;
        mopts.host = s.metrics_host;
        mopts.port = s.metrics_port;
        mopts.io_threads = 1;
        mopts.max_connections = 64;
        mopts.max_body_bytes = 64 * 1024;
        mopts.max_body_memory = 1024 * 1024;
        metrics_server = std::make_unique<genhost::http::Server>(mopts, metrics_router, metrics);
        metrics_server->Listen();
    }
    std::unique_ptr<genhost::http::Server> server;
    if (s.role != "worker") {
        genhost::http::ServerOptions hopts;
        hopts.host = s.listen_host;
        hopts.port = s.listen_port;
        hopts.unix_path = s.listen_unix;
        hopts.io_threads = s.io_threads;
        hopts.max_body_bytes = s.max_body_bytes;
        hopts.max_header_bytes = s.max_header_bytes;
        hopts.read_timeout =
            std::chrono::milliseconds(static_cast<long>(s.read_timeout_seconds * 1000));
        hopts.max_connections = ConnectionCap(s.max_connections);
        hopts.max_body_memory = s.max_body_memory;
        hopts.trusted_proxies = *trusted_proxies;
        server = std::make_unique<genhost::http::Server>(hopts, router, metrics);
        server->Listen();
        if (s.listen_port == 0) s.listen_port = server->Port();
    }

    const auto schemas = genhost::api::LoadEmbeddedSchemas();
    const auto catalog = LoadCatalog(s);
    if (const auto problems = genhost::api::CheckContract(*schemas, *catalog); !problems.empty()) {
        for (const auto& p : problems) spdlog::critical("schemas and catalog disagree: {}", p);
        return 1;
    }
    const int applied = genhost::store::Migrate(s.database_url);
    spdlog::info("database ready ({} migration(s) applied)", applied);

    genhost::store::Database db(s.database_url, s.db_threads);
    db.Start();
    genhost::store::OrgRepo orgs(db);
    genhost::store::TaskRepo tasks(db, s.io_threads);

    const auto org =
        orgs.EnsureOrganizationSync(s.default_org, s.default_tier, false, s.default_credits);
    if (!s.api_key.empty()) {
        if (!genhost::auth::IsWellFormedKey(s.api_key)) {
            std::cerr << "genhost: GENHOST_API_KEY must be key_ followed by 128 lowercase hex "
                         "characters\n";
            return 2;
        }
        orgs.AddKeySync(org.id, genhost::auth::HashKey(s.api_key), true);
    }
    const std::string secret = genhost::store::SettingsRepo(db).GetOrCreateSync(
        "output_url_secret", [] { return genhost::HexEncode(genhost::RandomBytes(32)); });

    // The output store (docs/outputs.md): a local folder, or a bucket nodes share.
    std::unique_ptr<genhost::outputs::OutputStore> output_store_ptr;
    if (s.output_store == "s3") {
        genhost::outputs::S3Options s3;
        s3.endpoint = s.s3_endpoint;
        s3.region = s.s3_region;
        s3.bucket = s.s3_bucket;
        s3.access_key_id = s.s3_access_key_id;
        s3.secret_access_key = s.s3_secret_access_key;
        s3.prefix = s.s3_prefix;
        s3.metrics = &metrics.Registry();
        try {
            output_store_ptr = std::make_unique<genhost::outputs::S3OutputStore>(std::move(s3));
        } catch (const std::exception& e) {
            std::cerr << "genhost: " << e.what() << "\n";
            return 2;
        }
        spdlog::info("output store: s3 bucket {} at {} (prefix \"{}\")", s.s3_bucket, s.s3_endpoint,
                     s.s3_prefix);
    } else {
        output_store_ptr = std::make_unique<genhost::outputs::LocalOutputStore>(
            std::filesystem::path(s.data_dir) / "outputs");
    }
    genhost::outputs::OutputStore& output_store = *output_store_ptr;
    genhost::outputs::UrlSigner signer(secret, PublicUrl(s), genhost::SystemClock::Instance());
    genhost::auth::Authenticator authenticator(orgs, std::chrono::seconds(10));

    // Ephemeral uploads (docs/uploads.md): their own cluster-wide signing secret, files in the
    // output store's input area, and a sweeper on every node.
    const std::string upload_secret = genhost::store::SettingsRepo(db).GetOrCreateSync(
        "upload_policy_secret", [] { return genhost::HexEncode(genhost::RandomBytes(32)); });
    const genhost::outputs::UploadPolicySigner upload_signer(upload_secret, PublicUrl(s),
                                                             genhost::SystemClock::Instance());
    const genhost::outputs::UploadFolder upload_folder(std::filesystem::path(s.data_dir) /
                                                       "inputs" / "uploads");
    genhost::store::UploadRepo uploads(db);
    genhost::tasks::UploadSweeperOptions sweep_opts;
    sweep_opts.interval =
        std::chrono::milliseconds(static_cast<long>(s.upload_sweep_interval_seconds * 1000));
    genhost::tasks::UploadSweeper upload_sweeper(sweep_opts, uploads, upload_folder);
    genhost::tasks::RetentionOptions retention_opts;
    retention_opts.retention =
        std::chrono::seconds(static_cast<long long>(s.task_retention_seconds));
    retention_opts.interval = sweep_opts.interval;
    genhost::tasks::RetentionSweeper retention_sweeper(retention_opts, tasks, output_store);

    genhost::providers::BuiltinProvider builtin(*catalog, s.latency_scale);
    // Media inputs (docs/assets.md): fetched, decoded or taken from uploads, probed, checked at
    // request time on the asset pool, and named by reference in the stored task.
    genhost::assets::FetcherOptions fetch_opts;
    fetch_opts.test_ca_file = s.fetch_test_ca;
    fetch_opts.test_hosts = genhost::assets::ParseTestHosts(s.fetch_test_hosts);
    if (!fetch_opts.test_ca_file.empty() || !fetch_opts.test_hosts.empty()) {
        spdlog::warn("asset fetcher test settings are on (GENHOST_FETCH_TEST_CA / _HOSTS)");
    }
    const genhost::assets::Fetcher fetcher(fetch_opts);
    genhost::api::StoredUploads upload_source(uploads, upload_folder);
    const genhost::assets::InputArea input_area(
        (std::filesystem::path(s.data_dir) / "inputs").string());
    const genhost::assets::AssetReader asset_reader(fetcher, upload_source, {});
    const genhost::assets::Resolver inputs(asset_reader, input_area);
    genhost::assets::RequestInputs request_inputs(asset_reader, input_area,
                                                  {s.fetch_offline == 1, 4});
    const genhost::assets::InputSweeper input_sweeper(input_area, std::chrono::hours(48),
                                                      std::chrono::minutes(10));
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    genhost::tasks::WorkerOptions wopts;
    wopts.owner =
        std::string(host) + ":" + std::to_string(getpid()) + ":" + genhost::NewUuid().substr(0, 8);
    wopts.workers = s.role == "api" ? 0 : s.workers;
    wopts.lease_seconds = s.lease_seconds;
    wopts.max_attempts = s.max_attempts;
    // This process's scratch folder; a sweeper removes the scratch of processes that are gone
    // (a task killed mid-run leaves its intermediate files behind).
    genhost::tasks::ScratchSpace scratch(std::filesystem::path(s.data_dir) / "scratch",
                                         wopts.owner);
    genhost::tasks::Periodic scratch_sweeper(
        "scratch sweeper",
        std::chrono::milliseconds(static_cast<long>(s.scratch_sweep_interval_seconds * 1000)),
        [&scratch] { scratch.Sweep(); });
    wopts.scratch_root = scratch.Path().string();
    // Tasks of workflow nodes may name an upstream task's output (docs/workflows.md).
    const genhost::tasks::OutputReferences task_inputs(inputs, output_store);
    wopts.inputs = &task_inputs;
    wopts.nice = s.worker_nice;
    wopts.metrics = &metrics.Registry();
    // Moderation before any provider runs (docs/moderation.md).
    const auto moderation = genhost::tasks::Moderator::Load(
        s.moderation_file.empty() ? Resource("schemas/moderation.json")
                                  : ReadFile(s.moderation_file));
    wopts.moderation = moderation.get();
    // HTTP providers by name (docs/providers.md); which one serves a model is catalog data.
    std::vector<std::unique_ptr<genhost::providers::HttpProvider>> http_providers;
    std::map<std::string, genhost::providers::Provider*> providers{{"builtin", &builtin}};
    std::set<std::string> provider_names{"builtin"};
    for (auto& o : genhost::providers::ParseProviders(
             s.providers, s.providers_file.empty() ? "" : ReadFile(s.providers_file))) {
        spdlog::info("provider {} at {}", o.name, o.url);
        http_providers.push_back(
            std::make_unique<genhost::providers::HttpProvider>(std::move(o), *catalog));
        providers[http_providers.back()->name()] = http_providers.back().get();
        provider_names.insert(http_providers.back()->name());
    }
    for (const auto& [model, provider] :
         genhost::providers::UnservedModels(*catalog, provider_names)) {
        spdlog::warn(
            "model {} is served by provider {}, which is not configured: its tasks will "
            "fail with INTERNAL",
            model, provider);
    }
    genhost::tasks::WorkerPool workers(
        wopts, tasks, *catalog, providers, output_store,
        [&catalog](int tier, const std::string& model) {
            return genhost::api::LimitsFor(*catalog, tier, model).max_concurrent;
        });

    // Background jobs (docs/architecture.md): every node runs them, whatever its role.
    genhost::store::JobRepo jobs(db);
    genhost::store::AvatarRepo avatars(db);
    genhost::tasks::AvatarProcessorOptions avatar_opts;
    avatar_opts.scratch_root = wopts.scratch_root;
    genhost::tasks::AvatarProcessor avatar_processor(avatar_opts, avatars, output_store, inputs);
    genhost::tasks::JobEngineOptions job_opts;
    job_opts.owner = wopts.owner;
    // Two runners: a voice's analysis and synthesis (a second or so) never hold up an avatar or
    // a document's index behind it.
    job_opts.runners = 2;
    job_opts.lease_seconds = 120;  // renewed every 40 s; one avatar takes well under a second
    genhost::store::DocumentRepo documents(db);
    genhost::tasks::DocumentIndexer document_indexer(documents);
    genhost::store::VoiceRepo voices(db);
    genhost::tasks::VoiceProcessorOptions voice_opts;
    voice_opts.scratch_root = wopts.scratch_root;
    genhost::tasks::VoiceProcessor voice_processor(voice_opts, voices, output_store, inputs);
    genhost::tasks::JobEngine job_engine(
        job_opts, jobs,
        {{genhost::tasks::kAvatarJobKind, avatar_processor.Kind()},
         {genhost::tasks::kDocumentJobKind, document_indexer.Kind()},
         {genhost::tasks::kVoiceJobKind, voice_processor.Kind()},
         {genhost::tasks::kOutputExpiryJobKind, voice_processor.ExpiryKind()}});

    // Realtime sessions (docs/realtime.md): their own engine, whose runners are this node's
    // places for sessions (each keeps its session's job for the session's whole life).
    genhost::store::RealtimeRepo realtime_sessions(db);
    genhost::tasks::LiveSessions live_sessions;
    genhost::tasks::ConversationOptions conversation_opts;
    conversation_opts.scratch_root = wopts.scratch_root;
    genhost::tasks::ConversationDeps conversation_deps;
    conversation_deps.sessions = &realtime_sessions;
    conversation_deps.documents = &documents;
    conversation_deps.outputs = &output_store;
    // A decoder per utterance being recognised at once (about 91 MB each), kept for the next
    // one up to one per session place: creating one costs about 0.2 s of CPU.
    conversation_deps.speech = std::make_shared<genhost::media::SpeechModel>(
        genhost::media::SpeechModelFiles{}, std::max(2, s.realtime_sessions));
    if (!s.llm_url.empty()) {
        genhost::realtime::ChatCompletionsOptions llm;
        llm.base_url = s.llm_url;
        llm.model = s.llm_model;
        llm.api_key = s.llm_key;
        conversation_deps.make_engine = [llm] {
            return genhost::realtime::MakeChatCompletionsEngine(llm);
        };
    }
    genhost::tasks::RealtimeOptions realtime_opts;
    realtime_opts.owner = wopts.owner;
    realtime_opts.ready_seconds = s.realtime_ready_seconds;
    realtime_opts.metrics = &metrics.Registry();
    genhost::tasks::RealtimeRunner realtime_runner(
        realtime_opts, realtime_sessions, live_sessions,
        [&catalog](int tier) {
            return genhost::api::LimitsFor(*catalog, tier, "gwm1_avatars").max_concurrent;
        },
        genhost::tasks::ConversationTurns(conversation_opts, conversation_deps));
    genhost::tasks::JobEngineOptions realtime_engine_opts;
    realtime_engine_opts.owner = wopts.owner;
    realtime_engine_opts.runners = std::max(1, s.realtime_sessions);
    realtime_engine_opts.lease_seconds = s.realtime_lease_seconds;
    realtime_engine_opts.max_attempts = 3;
    genhost::tasks::JobEngine realtime_engine(
        realtime_engine_opts, jobs, {{genhost::tasks::kRealtimeJobKind, realtime_runner.Kind()}});
    // Workflow invocations (docs/workflows.md): their own engine, whose steps are short and
    // frequent (woken when a node's task ends), with the task lease, so an invocation
    // whose node died mid-step goes on elsewhere as soon as a task would.
    genhost::store::WorkflowRepo workflows(db);
    genhost::tasks::WorkflowRunner workflow_runner(workflows, tasks, *catalog);
    genhost::tasks::JobEngineOptions workflow_engine_opts;
    workflow_engine_opts.owner = wopts.owner;
    workflow_engine_opts.runners = 2;
    workflow_engine_opts.lease_seconds = s.lease_seconds;
    genhost::tasks::JobEngine workflow_engine(
        workflow_engine_opts, jobs, {{genhost::tasks::kWorkflowJobKind, workflow_runner.Kind()}});
    // Every declared job kind has its engine here; kinds in the database that this version does
    // not know are reported (tasks/job_kinds.hpp).
    const auto job_kinds =
        genhost::tasks::CheckJobKinds({{"jobs", job_engine.HandledKinds()},
                                       {"realtime", realtime_engine.HandledKinds()},
                                       {"workflows", workflow_engine.HandledKinds()}},
                                      jobs.CountByKindSync());
    for (const auto& w : job_kinds.warnings) spdlog::warn("{}", w);
    if (!job_kinds.errors.empty()) {
        for (const auto& e : job_kinds.errors) spdlog::error("{}", e);
        return 2;
    }
    const std::string room_secret = genhost::store::SettingsRepo(db).GetOrCreateSync(
        "media_token_secret", [] { return genhost::HexEncode(genhost::RandomBytes(32)); });

    genhost::store::RouterCache router_cache;
    genhost::store::Listener listener(
        s.database_url,
        {{"genhost_tasks", [&](const std::string&) { workers.Wake(); }},
         {"genhost_cancel", [&](const std::string& id) { workers.CancelLocal(id); }},
         {"genhost_keys", [&](const std::string&) { authenticator.Invalidate(); }},
         {"genhost_jobs",
          [&](const std::string&) {
              job_engine.Kick();
              realtime_engine.Kick();
              workflow_engine.Kick();
          }},
         {"genhost_routers", [&](const std::string&) { router_cache.Clear(); }},
         {"genhost_sessions", [&](const std::string& id) { realtime_runner.Wake(id); }}});
    listener.Start();
    workers.Start();
    upload_sweeper.Start();
    retention_sweeper.Start();
    scratch_sweeper.Start();
    job_engine.Start();
    workflow_engine.Start();

    boost::asio::thread_pool blocking(2);
    const std::string doc_url = s.doc_url.empty() ? PublicUrl(s) + "/docs/errors" : s.doc_url;
    // By name: a field added to App cannot be filled by position by mistake.
    genhost::api::App app{.db = db,
                          .tasks = tasks,
                          .authenticator = authenticator,
                          .schemas = schemas,
                          .catalog = catalog,
                          .outputs = output_store,
                          .signer = signer,
                          .metrics = metrics,
                          .blocking = blocking,
                          .doc_url = doc_url,
                          .output_url_ttl_seconds = s.output_url_ttl_seconds};
    app.uploads.repo = &uploads;
    app.uploads.signer = &upload_signer;
    app.uploads.folder = &upload_folder;
    app.uploads.max_bytes = s.upload_max_bytes;
    app.uploads.ttl_seconds = s.upload_ttl_seconds;
    app.inputs = &request_inputs;
    app.avatars.repo = &avatars;
    app.input_files = &inputs;
    app.avatars.kick = [&job_engine] { job_engine.Kick(); };
    app.documents.repo = &documents;
    app.documents.kick = [&job_engine] { job_engine.Kick(); };
    app.voices.repo = &voices;
    genhost::store::CreditRepo credits(db);
    app.credits.repo = &credits;
    genhost::store::RouterRepo routers(db);
    app.routers.repo = &routers;
    const genhost::routing::Engine routing_engine(catalog, schemas);
    genhost::store::RoutingSnapshotRepo routing_snapshot(db);
    genhost::store::RouterLog router_log(db);
    router_log.Start(blocking.get_executor());
    app.routers.engine = &routing_engine;
    app.routers.snapshot = &routing_snapshot;
    app.routers.log = &router_log;
    app.routers.cache = &router_cache;
    app.voices.kick = [&job_engine] { job_engine.Kick(); };
    app.realtime.repo = &realtime_sessions;
    app.realtime.token_secret = room_secret;
    app.realtime.kick = [&realtime_engine] { realtime_engine.Kick(); };
    app.realtime.live = &live_sessions;
    app.workflows.repo = &workflows;
    app.workflows.kick = [&workflow_engine] { workflow_engine.Kick(); };
    app.extra_gauges = [&] {
        std::vector<genhost::http::Sample> gauges{
            {"genhost_workers_running",
             "Tasks running in this process.",
             {},
             static_cast<double>(workers.Running())},
            {"genhost_worker_runs_abandoned_total",
             "Task runs of this process stopped because their lease was lost, since it started.",
             {},
             static_cast<double>(workers.Abandoned()),
             true},
            {"genhost_listener_connected",
             "Whether the notification listener is connected.",
             {},
             listener.Connected() ? 1.0 : 0.0},
            {"genhost_realtime_sessions_live",
             "Realtime sessions this process runs now (admitted, from READY to their end).",
             {},
             static_cast<double>(live_sessions.size())}};
        if (server) {
            gauges.push_back({"genhost_http_connections",
                              "Open HTTP connections (GENHOST_MAX_CONNECTIONS caps them).",
                              {},
                              static_cast<double>(server->Connections())});
            gauges.push_back({"genhost_http_connections_refused_total",
                              "Connections answered 503 at the connection cap, since start.",
                              {},
                              static_cast<double>(server->Refusals()),
                              true});
            gauges.push_back({"genhost_http_body_memory_bytes",
                              "Request body bytes held now (GENHOST_MAX_BODY_MEMORY caps them).",
                              {},
                              static_cast<double>(server->BodyMemory())});
        }
        return gauges;
    };
    if (metrics_server) app.metrics_router = &metrics_router;
    genhost::api::RegisterRoutes(router, app);
    if (metrics_server) {
        metrics_server->SetDocUrl(doc_url);
        metrics_server->Start();
        spdlog::info("metrics on {}:{}/metrics", s.metrics_host, metrics_server->Port());
    }

    if (server) {
        server->SetDocUrl(doc_url);
        server->Start();
        if (!s.port_file.empty()) {
            const std::string tmp = s.port_file + ".tmp";
            std::ofstream(tmp) << server->Port() << "\n";
            std::filesystem::rename(tmp, s.port_file);
        }
        realtime_runner.set_media_url(MediaUrl(s, server->Port()));
        if (s.listen_unix.empty()) {
            spdlog::info("genhost listening on {}:{} (public URL {})", s.listen_host,
                         server->Port(), PublicUrl(s));
        } else {
            spdlog::info("genhost listening on unix:{} (public URL {})", s.listen_unix,
                         PublicUrl(s));
        }
    }

    if (!server) realtime_runner.set_media_url(MediaUrl(s, s.listen_port));
    realtime_engine.Start();

    int sig = 0;
    sigwait(&signals, &sig);
    // On SIGTERM (a process manager, a rolling update) /readyz first turns 503 while everything
    // is still served for GENHOST_SHUTDOWN_DELAY, so that a load balancer stops sending work here;
    // then the drain, for at most GENHOST_DRAIN_TIMEOUT. SIGINT (Ctrl-C) drains at once. A second
    // signal, at any point from here, ends both at once: what still runs goes back to the queue.
    *app.draining = true;
    const bool delay = server && sig == SIGTERM && s.shutdown_delay_seconds > 0;
    const auto seconds = [](double v) {
        return std::chrono::duration_cast<genhost::core::Deadline::Clock::duration>(
            std::chrono::duration<double>(v));
    };
    genhost::core::Deadline serving(seconds(delay ? s.shutdown_delay_seconds : 0));
    genhost::core::Deadline drain(
        seconds((delay ? s.shutdown_delay_seconds : 0) + s.drain_timeout_seconds));
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
    if (server) server->Shutdown(drain);
    workers.Stop(drain);
    upload_sweeper.Stop();
    retention_sweeper.Stop();
    scratch_sweeper.Stop();
    job_engine.Stop(drain);
    workflow_engine.Stop(drain);
    realtime_engine.Stop(std::chrono::milliseconds(0));  // live sessions end; see docs/realtime.md
    listener.Stop();
    router_log.Stop();  // writes the decisions still queued
    // Last: the drain's progress stays visible to scrapes until the end.
    if (metrics_server) metrics_server->Shutdown(std::chrono::milliseconds(1000));
    blocking.join();
    db.Stop();
    stopped = true;
    second_signal.join();
    spdlog::info("genhost stopped");
    spdlog::default_logger()->flush();
    return 0;
}

int Keys(const Settings& s, const std::vector<std::string>& args) {
    if (int rc = RequireDatabase(s)) return rc;
    genhost::store::Migrate(s.database_url);
    genhost::store::Database db(s.database_url, 1);
    db.Start();
    genhost::store::OrgRepo orgs(db);
    const std::string verb = args.size() > 1 ? args[1] : "";
    if (verb == "create") {
        const auto org_name = Arg(args, "org");
        if (!org_name || org_name->empty()) {
            std::cerr << "genhost keys create: --org NAME is required\n";
            return 2;
        }
        const auto tier_arg = Arg(args, "tier");
        int tier = 1;
        if (tier_arg) {
            try {
                tier = std::stoi(*tier_arg);
            } catch (const std::exception&) {
                tier = 0;
            }
            if (tier < 1) {
                std::cerr << "genhost keys create: --tier must be a positive integer\n";
                return 2;
            }
        }
        const auto org =
            orgs.EnsureOrganizationSync(*org_name, tier, tier_arg.has_value(), s.default_credits);
        const std::string key = genhost::auth::GenerateKey();
        const std::string id = orgs.AddKeySync(org.id, genhost::auth::HashKey(key), false);
        std::cout << "key_id: " << id << "\norganization: " << org.name << " (tier " << org.tier
                  << ")\napi_key: " << key << "\n";
        return 0;
    }
    if (verb == "disable" && args.size() == 3) {
        if (!orgs.DisableKeySync(args[2])) {
            std::cerr << "genhost keys disable: no key " << args[2] << "\n";
            return 1;
        }
        std::cout << "disabled " << args[2] << "\n";
        return 0;
    }
    if (verb == "list") {
        for (const auto& k : orgs.ListKeysSync()) {
            std::cout << k.id << "  " << k.org_name << "  "
                      << genhost::FormatTimestamp(k.created_at)
                      << (k.disabled ? "  disabled" : "  active") << "\n";
        }
        return 0;
    }
    std::cerr << kUsage;
    return 2;
}

int Tasks(const Settings& s, const std::vector<std::string>& args) {
    if (int rc = RequireDatabase(s)) return rc;
    if (args.size() != 3 || args[1] != "cancel") {
        std::cerr << kUsage;
        return 2;
    }
    genhost::store::Migrate(s.database_url);
    genhost::store::Database db(s.database_url, 1);
    db.Start();
    genhost::store::TaskRepo tasks(db);
    const auto r = tasks.CancelSync("", args[2], false);
    using Kind = genhost::store::CancelResult::Kind;
    if (r.kind == Kind::kNotFound) {
        std::cerr << "genhost tasks cancel: no task " << args[2] << "\n";
        return 1;
    }
    std::cout << (r.kind == Kind::kCancelled ? "cancelled " : "already finished ") << args[2]
              << "\n";
    return 0;
}

int Credits(const Settings& s, const std::vector<std::string>& args) {
    if (int rc = RequireDatabase(s)) return rc;
    const std::string verb = args.size() > 1 ? args[1] : "";
    if (verb != "grant" && verb != "show") {
        std::cerr << kUsage;
        return 2;
    }
    genhost::store::Migrate(s.database_url);
    genhost::store::Database db(s.database_url, 1);
    db.Start();
    genhost::store::CreditRepo credits(db);
    const auto org_name = Arg(args, "org");
    if (verb == "grant") {
        const auto amount_arg = Arg(args, "amount");
        if (!org_name || org_name->empty() || !amount_arg) {
            std::cerr << "genhost credits grant: --org NAME and --amount N are required\n";
            return 2;
        }
        std::int64_t amount = 0;
        const auto [end, ec] =
            std::from_chars(amount_arg->data(), amount_arg->data() + amount_arg->size(), amount);
        if (ec != std::errc() || end != amount_arg->data() + amount_arg->size() || amount == 0) {
            std::cerr << "genhost credits grant: --amount must be a non-zero integer\n";
            return 2;
        }
        const std::string note = Arg(args, "note").value_or("granted by an operator");
        try {
            const auto balance = credits.GrantSync(*org_name, amount, note);
            if (!balance) {
                std::cerr << "genhost credits grant: no organization " << *org_name << "\n";
                return 1;
            }
            std::cout << "organization: " << *org_name << "\ngranted: " << amount
                      << "\nbalance: " << *balance << "\n";
        } catch (const std::invalid_argument& e) {
            std::cerr << "genhost credits grant: " << e.what() << "\n";
            return 1;
        }
        return 0;
    }
    const auto accounts = credits.AccountsSync(org_name.value_or(""));
    if (org_name && accounts.empty()) {
        std::cerr << "genhost credits show: no organization " << *org_name << "\n";
        return 1;
    }
    std::cout << "organization  tier  balance  spent_30_days  granted  charged  refunded\n";
    for (const auto& a : accounts) {
        std::cout << a.org_name << "  " << a.tier << "  " << a.balance << "  " << a.spent_30_days
                  << "  " << a.granted << "  " << a.charged << "  " << a.refunded
                  << (a.metered ? "" : "  (unmetered)") << "\n";
    }
    return 0;
}

// Workflows publishes a workflow file ({name, description?, graph}) for an organization, with the
// same checks as POST /_genhost/workflows (genhost/api/workflows.hpp), and prints the version.
int Workflows(const Settings& s, const std::vector<std::string>& args) {
    if (int rc = RequireDatabase(s)) return rc;
    const auto org_name = Arg(args, "org");
    if (args.size() < 3 || args[1] != "publish" || !org_name || org_name->empty()) {
        std::cerr << kUsage;
        return 2;
    }
    nlohmann::json body;
    try {
        // As an HTTP body is parsed (depth-limited, UTF-8 checked): the checks that follow walk
        // the document recursively, so 50,000 nested brackets would overflow the stack.
        auto parsed =
            genhost::validate::ParseRequestJson(ReadFile(args[2]), genhost::api::kMaxJsonDepth);
        if (!parsed) {
            std::cerr << "genhost workflows publish: " << args[2] << ": " << parsed.error().message;
            for (const auto& issue : parsed.error().issues) std::cerr << ": " << issue.message;
            std::cerr << "\n";
            return 1;
        }
        body = std::move(*parsed);
    } catch (const std::exception& e) {
        std::cerr << "genhost workflows publish: " << args[2] << ": " << e.what() << "\n";
        return 1;
    }
    const auto schemas = genhost::api::LoadEmbeddedSchemas();
    const auto catalog = LoadCatalog(s);
    genhost::store::Migrate(s.database_url);
    genhost::store::Database db(s.database_url, 1);
    db.Start();
    genhost::store::OrgRepo orgs(db);
    const auto org = orgs.FindOrganizationSync(*org_name);
    if (!org) {
        std::cerr << "genhost workflows publish: no organization " << *org_name << "\n";
        return 1;
    }
    auto version = genhost::api::WorkflowPublication(*schemas, *catalog, org->id, body);
    if (!version) {
        std::cerr << "genhost workflows publish: " << version.error().message << "\n";
        for (const auto& issue : version.error().issues) {
            nlohmann::json path = issue.path;
            std::cerr << "  " << path.dump() << ": " << issue.message << "\n";
        }
        return 1;
    }
    genhost::store::WorkflowRepo workflows(db);
    const auto published = workflows.PublishSync(*version);
    std::cout << "version_id: " << published.id << "\nworkflow: " << published.name << " (version "
              << published.version << ")\n";
    return 0;
}

int Orgs(const Settings& s, const std::vector<std::string>& args) {
    if (int rc = RequireDatabase(s)) return rc;
    if (args.size() != 3 || (args[1] != "suspend" && args[1] != "resume")) {
        std::cerr << kUsage;
        return 2;
    }
    genhost::store::Migrate(s.database_url);
    genhost::store::Database db(s.database_url, 1);
    db.Start();
    genhost::store::OrgRepo orgs(db);
    if (!orgs.SetSuspendedSync(args[2], args[1] == "suspend")) {
        std::cerr << "genhost orgs: no organization " << args[2] << "\n";
        return 1;
    }
    std::cout << args[1] << "ed " << args[2] << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const auto parsed = genhost::config::Parse(argc, argv, genhost::config::ProcessEnv);
    if (parsed.help) {
        std::cout << kUsage << "\n" << parsed.help_text;
        return 0;
    }
    if (parsed.version) {
        std::cout << "genhost " << genhost::Version() << "\n";
        return 0;
    }
    if (!parsed.error.empty()) {
        std::cerr << "genhost: " << parsed.error << "\n" << kUsage;
        return 2;
    }
    const Settings& s = parsed.settings;
    const bool serving = parsed.positional.empty() || parsed.positional[0] == "serve";
    if (serving) {
        // SIGTERM and SIGINT are taken by Serve's thread with sigwait, so every thread must
        // block them, and the first threads start below (the log's flusher): a signal that
        // reached one of them while Serve drained killed the process mid-drain.
        const sigset_t signals = StopSignals();
        pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    }
    try {
        genhost::SetupLogging(s.log_level, s.log_format);
        // FFmpeg's diagnostics (hostile media) go through the same log, not plain stderr.
        genhost::media::RouteLibavLog();
    } catch (const std::exception& e) {
        std::cerr << "genhost: " << e.what() << "\n";
        return 2;
    }
    const auto& args = parsed.positional;
    const std::string command = args.empty() ? "serve" : args[0];
    try {
        if (command == "serve") return Serve(s);
        if (command == "migrate") {
            if (int rc = RequireDatabase(s)) return rc;
            const int n = genhost::store::Migrate(s.database_url);
            std::cout << "applied " << n << " migration(s)\n";
            return 0;
        }
        if (command == "keys") return Keys(s, args);
        if (command == "tasks") return Tasks(s, args);
        if (command == "orgs") return Orgs(s, args);
        if (command == "credits") return Credits(s, args);
        if (command == "workflows") return Workflows(s, args);
    } catch (const std::exception& e) {
        spdlog::critical("genhost {}: {}", command, e.what());
        spdlog::default_logger()->flush();
        return 1;
    }
    std::cerr << kUsage;
    return 2;
}
