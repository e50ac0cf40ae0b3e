#include "genhost/config/settings.hpp"

#include <boost/program_options.hpp>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <type_traits>

namespace genhost::config {

namespace po = boost::program_options;

namespace {

// Upper bounds of the settings that start one thread (and maybe one database connection) each,
// and of the latency scale (100 already makes a typical 30 s model take 50 minutes).
constexpr int kMaxThreads = 1024;
constexpr double kMaxLatencyScale = 100;
// Each connection is a file descriptor; the process's limit is checked at start.
constexpr std::size_t kMaxConnections = 1000000;

bool SplitListen(const std::string& value, std::string& host, unsigned short& port) {
    const auto colon = value.rfind(':');
    if (colon == std::string::npos || colon == 0) return false;
    host = value.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    try {
        std::size_t used = 0;
        const int p = std::stoi(value.substr(colon + 1), &used);
        if (used != value.size() - colon - 1 || p < 0 || p > 65535) return false;
        port = static_cast<unsigned short>(p);
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

// ReadSecretFile reads a secret from the file ENV_FILE names, without its trailing newline.
bool ReadSecretFile(const std::string& path, std::string& value) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream content;
    content << in.rdbuf();
    value = content.str();
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
    return static_cast<bool>(in) || in.eof();
}

// SecretFlagName is the flag a secret would have: DATABASE_URL gives database-url,
// GENHOST_API_KEY gives api-key.
std::string SecretFlagName(std::string env) {
    if (env.rfind("GENHOST_", 0) == 0) env.erase(0, 8);
    for (char& c : env) c = c == '_' ? '-' : static_cast<char>(std::tolower(c));
    return env;
}

// Assign sets `target` from the text of an environment variable. Numbers must be the whole
// value: "12abc" or "30s" is an error, not 12 or 30.
template <typename T>
bool Assign(const std::string& v, T& target) {
    try {
        std::size_t used = v.size();
        if constexpr (std::is_same_v<T, std::string>) {
            target = v;
        } else if constexpr (std::is_same_v<T, int>) {
            target = std::stoi(v, &used);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
            target = std::stoll(v, &used);
        } else if constexpr (std::is_same_v<T, double>) {
            target = std::stod(v, &used);
        } else if constexpr (std::is_same_v<T, std::size_t>) {
            if (v.find('-') != std::string::npos) return false;
            target = static_cast<std::size_t>(std::stoull(v, &used));
        }
        return used == v.size();
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace

std::optional<std::string> ProcessEnv(const std::string& name) {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
}

ParseResult Parse(int argc, const char* const* argv, const Getenv& getenv) {
    ParseResult out;
    Settings& s = out.settings;

    // Environment first; flags below override it. A secret may come from the file ENV_FILE names.
    for (const auto& spec : SettingSpecs()) {
        auto value = getenv(spec.env);
        if (spec.secret) {
            const std::string file_var = std::string(spec.env) + "_FILE";
            const auto file = getenv(file_var);
            if (file && !file->empty()) {
                if (value && !value->empty()) {
                    out.error = std::string("set ") + spec.env + " or " + file_var + ", not both";
                    return out;
                }
                std::string content;
                if (!ReadSecretFile(*file, content)) {
                    out.error = "cannot read " + file_var + " (" + *file + ")";
                    return out;
                }
                value = content;
            }
        }
        if (!value || value->empty()) continue;
        const bool ok =
            std::visit([&](auto member) { return Assign(*value, s.*member); }, spec.field);
        if (!ok) {
            // A secret's value is never echoed.
            out.error = std::string("invalid value for ") + spec.env +
                        (spec.secret ? std::string() : ": " + *value);
            return out;
        }
    }

    // A secret given as a flag would show in the process list: such a flag is refused by name
    // (the flags that genhost once took: --database-url, --api-key, --llm-key, ...).
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        for (const auto& spec : SettingSpecs()) {
            if (!spec.secret) continue;
            const std::string flag = "--" + SecretFlagName(spec.env);
            if (arg == flag || arg.rfind(flag + "=", 0) == 0) {
                out.error = flag + " is not taken: secrets never go on the command line; set " +
                            spec.env + " or " + spec.env + "_FILE";
                return out;
            }
        }
    }

    // --help shows each setting's value, but never a secret's: only whether it is set.
    po::options_description desc("Options (each also read from the environment variable named)");
    desc.add_options()("help,h", "show this help")("version", "print the version and exit");
    std::ostringstream env_only;
    for (const auto& spec : SettingSpecs()) {
        const std::string text = std::string(spec.env) + ": " + spec.summary;
        if (*spec.flag == '\0') {
            std::string shown;
            std::visit(
                [&](auto member) {
                    using T = std::decay_t<decltype(s.*member)>;
                    if constexpr (std::is_same_v<T, std::string>) {
                        shown = spec.secret ? (s.*member).empty() ? "" : "(set)" : s.*member;
                    } else {
                        shown = std::to_string(s.*member);
                    }
                },
                spec.field);
            env_only << "  " << spec.env << "=" << shown << "\n      " << spec.summary
                     << (spec.secret ? std::string(" (or the file ") + spec.env + "_FILE names)"
                                     : std::string())
                     << "\n";
            continue;
        }
        std::visit(
            [&](auto member) {
                desc.add_options()(spec.flag, po::value(&(s.*member))->default_value(s.*member),
                                   text.c_str());
            },
            spec.field);
    }
    std::ostringstream help;
    help << desc << "\nEnvironment only (a secret is shown as (set)):\n" << env_only.str();
    out.help_text = help.str();
    try {
        po::variables_map vm;
        // Subcommands take their own arguments (`keys create --org NAME`): everything this
        // parser does not know is handed on in order.
        // No guessing of abbreviations: `--tier` (of `keys create`) is not `--tiers-file`.
        const auto parsed = po::command_line_parser(argc, argv)
                                .options(desc)
                                .style(po::command_line_style::default_style &
                                       ~po::command_line_style::allow_guessing)
                                .allow_unregistered()
                                .run();
        out.positional = po::collect_unrecognized(parsed.options, po::include_positional);
        po::store(parsed, vm);
        po::notify(vm);
        out.help = vm.count("help") > 0;
        out.version = vm.count("version") > 0;
    } catch (const std::exception& e) {
        out.error = e.what();
        return out;
    }
    const std::string& listen = s.listen;
    const bool unix_socket = listen.rfind("unix:", 0) == 0;
    if (unix_socket) s.listen_unix = listen.substr(5);
    if (unix_socket ? s.listen_unix.empty() : !SplitListen(listen, s.listen_host, s.listen_port)) {
        out.error = "invalid listen address (want host:port or unix:PATH): " + listen;
        return out;
    }
    if (!s.metrics_listen.empty() &&
        !SplitListen(s.metrics_listen, s.metrics_host, s.metrics_port)) {
        out.error = "invalid metrics listen address (want host:port): " + s.metrics_listen;
        return out;
    }
    if (s.log_format != "json" && s.log_format != "text") {
        out.error = "log format must be json or text";
    } else if (s.role != "all" && s.role != "api" && s.role != "worker") {
        out.error = "role must be all, api or worker";
    } else if (s.io_threads < 1 || s.db_threads < 1 || s.workers < 0) {
        out.error = "thread counts must be positive";
    } else if (s.io_threads > kMaxThreads || s.db_threads > kMaxThreads ||
               s.workers > kMaxThreads) {
        // Each is a thread (and a database connection, for I/O and database threads).
        out.error = "I/O threads, database threads and workers must be at most " +
                    std::to_string(kMaxThreads) + " each";
    } else if (!(s.latency_scale >= 0) || !(s.latency_scale <= kMaxLatencyScale)) {
        // Also refuses nan and inf, which would make every task's pacing undefined.
        out.error = "latency scale must be a number from 0 to " +
                    std::to_string(static_cast<int>(kMaxLatencyScale));
    } else if (s.worker_nice < 0 || s.worker_nice > 19) {
        out.error = "worker nice must be between 0 and 19";
    } else if (s.default_credits < 0) {
        out.error = "default credits must not be negative";
    } else if (s.output_url_ttl_seconds <= 0 || s.lease_seconds < 1 || s.max_attempts < 1) {
        out.error = "output URL TTL, lease and attempts must be positive";
    } else if (!(s.job_lease_seconds >= 1)) {
        out.error = "job lease must be at least 1 second";
    } else if (s.max_body_bytes == 0 || s.max_body_bytes > SIZE_MAX / 2) {
        // program_options reads "-1" into an unsigned as SIZE_MAX: no limit at all.
        out.error = "max body bytes must be a positive size";
    } else if (s.max_connections == 0 || s.max_connections > kMaxConnections) {
        out.error = "max connections must be from 1 to " + std::to_string(kMaxConnections);
    } else if (s.max_body_memory < s.max_body_bytes || s.max_body_memory > SIZE_MAX / 2) {
        // Below it, a body of the largest allowed size could never be read.
        out.error = "max body memory must be at least max body bytes (" +
                    std::to_string(s.max_body_bytes) + ")";
    } else if (!(s.scratch_sweep_interval_seconds > 0)) {
        out.error = "scratch sweep interval must be positive";
    } else if (s.upload_max_bytes == 0 || s.upload_max_bytes > SIZE_MAX / 4) {
        out.error = "upload max bytes must be a positive size";
    } else if (!(s.upload_ttl_seconds > 0) || !(s.upload_sweep_interval_seconds > 0)) {
        out.error = "upload TTL and sweep interval must be positive";
    } else if (!(s.shutdown_delay_seconds >= 0) || !(s.shutdown_delay_seconds <= 3600) ||
               !(s.drain_timeout_seconds >= 0) || !(s.drain_timeout_seconds <= 3600)) {
        out.error = "shutdown delay and drain timeout must be from 0 to 3600 seconds";
    } else if (!(s.task_retention_seconds >= 0)) {
        out.error = "task retention must be zero or positive";
    } else if (s.fetch_offline != 0 && s.fetch_offline != 1) {
        out.error = "fetch offline must be 0 or 1";
    } else if (s.output_store != "local" && s.output_store != "s3") {
        out.error = "output store must be local or s3";
    } else if (s.output_store == "s3" &&
               (s.s3_endpoint.empty() || s.s3_bucket.empty() || s.s3_access_key_id.empty() ||
                s.s3_secret_access_key.empty())) {
        out.error =
            "the s3 output store needs GENHOST_S3_ENDPOINT, GENHOST_S3_BUCKET, "
            "GENHOST_S3_ACCESS_KEY_ID and GENHOST_S3_SECRET_ACCESS_KEY";
    } else if (s.output_store == "s3" && s.s3_endpoint.rfind("http://", 0) != 0 &&
               s.s3_endpoint.rfind("https://", 0) != 0) {
        out.error = "S3 endpoint must start with http:// or https://";
    } else if (s.output_store == "s3" && s.s3_region.empty()) {
        out.error = "S3 region must not be empty";
    }
    return out;
}

}  // namespace genhost::config
