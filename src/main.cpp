// genhost: the server binary. main only wires the modules together and runs a subcommand:
//   serve | migrate | keys create --org NAME [--tier N] | keys disable KEY_ID | keys list
//   tasks cancel TASK_ID | orgs suspend NAME | orgs resume NAME
//   workflows publish FILE.json --org NAME
#include "genhost/api/app.hpp"
#include "genhost/api/workflows.hpp"
#include "genhost/auth/auth.hpp"
#include "genhost/config/settings.hpp"
#include "genhost/core/clock.hpp"
#include "genhost/core/logging.hpp"
#include "genhost/core/version.hpp"
#include "genhost/features/node.hpp"
#include "genhost/media/log.hpp"
#include "genhost/store/credits_repo.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/store/tasks_repo.hpp"
#include "genhost/store/workflows_repo.hpp"
#include "genhost/validate/json_body.hpp"

#include <spdlog/spdlog.h>

#include <charconv>
#include <csignal>
#include <iostream>
#include <memory>

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

// Serve runs the node (genhost/features/node.hpp) with every feature of the feature list until
// a stop signal, then drains it.
int Serve(const Settings& settings) {
    if (int rc = RequireDatabase(settings)) return rc;
    // Signals are taken synchronously by this thread; main blocked them before any thread
    // started, and every thread inherits the mask.
    const sigset_t signals = StopSignals();
    std::unique_ptr<genhost::features::Node> node;
    try {
        node = std::make_unique<genhost::features::Node>(settings);
        for (const auto& feature : genhost::features::Features()) {
            spdlog::debug("wiring feature {}", feature.name);
            feature.wire(*node);
        }
        node->Start();
    } catch (const genhost::features::StartError& e) {
        spdlog::critical("genhost cannot start: {}", e.what());
        std::cerr << "genhost: " << e.what() << "\n";
        return e.status;
    }
    int sig = 0;
    sigwait(&signals, &sig);
    node->Drain(sig, signals);
    node.reset();
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
        auto parsed = genhost::validate::ParseRequestJson(
            genhost::features::ReadSettingsFile(args[2]), genhost::api::kMaxJsonDepth);
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
    const auto catalog = genhost::features::LoadCatalog(s);
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
