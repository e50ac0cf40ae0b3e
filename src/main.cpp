// genhost: the server binary. main only wires the modules together and runs a subcommand:
//   serve | migrate | keys create --org NAME [--tier N] | keys disable KEY_ID | keys list
//   tasks cancel TASK_ID | orgs suspend NAME | orgs resume NAME
#include "genhost/api/app.hpp"
#include "genhost/auth/auth.hpp"
#include "genhost/catalog/catalog.hpp"
#include "genhost/config/settings.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/core/logging.hpp"
#include "genhost/core/resources.hpp"
#include "genhost/http/server.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/providers/builtin.hpp"
#include "genhost/providers/inputs.hpp"
#include "genhost/store/listener.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/store/settings_repo.hpp"
#include "genhost/store/tasks_repo.hpp"
#include "genhost/tasks/worker_pool.hpp"
#include "genhost/validate/schema_set.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

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
    "  orgs suspend NAME | orgs resume NAME\n";

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
    return genhost::catalog::Catalog::Load(Resource("schemas/models.json"), tiers);
}

std::string PublicUrl(const Settings& s) {
    if (!s.public_url.empty()) return s.public_url;
    const bool v6 = s.listen_host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + s.listen_host + "]" : s.listen_host) + ":" +
           std::to_string(s.listen_port);
}

void PrepareStatements(genhost::store::Database& db) {
    genhost::store::OrgRepo::Prepare(db);
    genhost::store::TaskRepo::Prepare(db);
    genhost::store::SettingsRepo::Prepare(db);
}

int RequireDatabase(const Settings& s) {
    if (s.database_url.empty()) {
        std::cerr << "genhost: DATABASE_URL (or --database-url) is required\n";
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

int Serve(const Settings& s) {
    if (int rc = RequireDatabase(s)) return rc;
    // Signals are taken synchronously by this thread; every other thread inherits the mask.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    const auto schemas = genhost::api::LoadEmbeddedSchemas();
    const auto catalog = LoadCatalog(s);
    if (const auto problems = genhost::api::CheckContract(*schemas, *catalog); !problems.empty()) {
        for (const auto& p : problems) spdlog::critical("schemas and catalog disagree: {}", p);
        return 1;
    }
    const int applied = genhost::store::Migrate(s.database_url);
    spdlog::info("database ready ({} migration(s) applied)", applied);

    genhost::store::Database db(s.database_url, s.db_threads);
    PrepareStatements(db);
    db.Start();
    genhost::store::OrgRepo orgs(db);
    genhost::store::TaskRepo tasks(db);

    const auto org = orgs.EnsureOrganizationSync(s.default_org, s.default_tier, false);
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

    genhost::outputs::LocalOutputStore output_store(std::filesystem::path(s.data_dir) / "outputs");
    genhost::outputs::UrlSigner signer(secret, PublicUrl(s), genhost::SystemClock::Instance());
    genhost::auth::Authenticator authenticator(orgs, std::chrono::seconds(10));

    genhost::providers::BuiltinProvider builtin(*catalog, s.latency_scale);
    const genhost::providers::DataUriResolver inputs;
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    genhost::tasks::WorkerOptions wopts;
    wopts.owner =
        std::string(host) + ":" + std::to_string(getpid()) + ":" + genhost::NewUuid().substr(0, 8);
    wopts.workers = s.role == "api" ? 0 : s.workers;
    wopts.lease_seconds = s.lease_seconds;
    wopts.max_attempts = s.max_attempts;
    wopts.scratch_root = (std::filesystem::path(s.data_dir) / "scratch").string();
    wopts.inputs = &inputs;
    genhost::tasks::WorkerPool workers(
        wopts, tasks, *catalog, {{"builtin", &builtin}}, output_store,
        [&catalog](int tier, const std::string& model) {
            return genhost::api::LimitsFor(*catalog, tier, model).max_concurrent;
        });

    genhost::store::Listener listener(
        s.database_url,
        {[&] { workers.Wake(); }, [&](const std::string& id) { workers.CancelLocal(id); },
         [&] { authenticator.Invalidate(); }});
    listener.Start();
    workers.Start();

    boost::asio::thread_pool blocking(2);
    genhost::http::Metrics metrics;
    const std::string doc_url = s.doc_url.empty() ? PublicUrl(s) + "/docs/errors" : s.doc_url;
    genhost::api::App app{db,
                          tasks,
                          authenticator,
                          schemas,
                          catalog,
                          output_store,
                          signer,
                          metrics,
                          blocking,
                          doc_url,
                          s.output_url_ttl_seconds,
                          64,
                          {}};
    app.extra_gauges = [&] {
        return std::vector<genhost::http::Sample>{
            {"genhost_workers_running",
             "Tasks running in this process.",
             {},
             static_cast<double>(workers.Running())},
            {"genhost_listener_connected",
             "Whether the notification listener is connected.",
             {},
             listener.Connected() ? 1.0 : 0.0}};
    };
    genhost::http::Router router;
    genhost::api::RegisterRoutes(router, app);

    std::unique_ptr<genhost::http::Server> server;
    if (s.role != "worker") {
        genhost::http::ServerOptions hopts;
        hopts.host = s.listen_host;
        hopts.port = s.listen_port;
        hopts.io_threads = s.io_threads;
        hopts.max_body_bytes = s.max_body_bytes;
        hopts.max_header_bytes = s.max_header_bytes;
        hopts.read_timeout =
            std::chrono::milliseconds(static_cast<long>(s.read_timeout_seconds * 1000));
        hopts.doc_url = doc_url;
        server = std::make_unique<genhost::http::Server>(hopts, router, metrics);
        server->Listen();
        server->Start();
        if (!s.port_file.empty()) {
            const std::string tmp = s.port_file + ".tmp";
            std::ofstream(tmp) << server->Port() << "\n";
            std::filesystem::rename(tmp, s.port_file);
        }
        spdlog::info("genhost listening on {}:{} (public URL {})", s.listen_host, server->Port(),
                     PublicUrl(s));
    }

    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("received signal {}, draining", sig);
    const auto drain = std::chrono::milliseconds(static_cast<long>(s.drain_timeout_seconds * 1000));
    if (server) server->Shutdown(drain);
    workers.Stop(drain);
    listener.Stop();
    blocking.join();
    db.Stop();
    spdlog::info("genhost stopped");
    spdlog::default_logger()->flush();
    return 0;
}

int Keys(const Settings& s, const std::vector<std::string>& args) {
    if (int rc = RequireDatabase(s)) return rc;
    genhost::store::Migrate(s.database_url);
    genhost::store::Database db(s.database_url, 1);
    PrepareStatements(db);
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
        const auto org = orgs.EnsureOrganizationSync(*org_name, tier, tier_arg.has_value());
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
    PrepareStatements(db);
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

int Orgs(const Settings& s, const std::vector<std::string>& args) {
    if (int rc = RequireDatabase(s)) return rc;
    if (args.size() != 3 || (args[1] != "suspend" && args[1] != "resume")) {
        std::cerr << kUsage;
        return 2;
    }
    genhost::store::Migrate(s.database_url);
    genhost::store::Database db(s.database_url, 1);
    PrepareStatements(db);
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
    if (!parsed.error.empty()) {
        std::cerr << "genhost: " << parsed.error << "\n" << kUsage;
        return 2;
    }
    const Settings& s = parsed.settings;
    try {
        genhost::SetupLogging(s.log_level, s.log_format);
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
    } catch (const std::exception& e) {
        spdlog::critical("genhost {}: {}", command, e.what());
        spdlog::default_logger()->flush();
        return 1;
    }
    std::cerr << kUsage;
    return 2;
}
