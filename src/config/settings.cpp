#include "genhost/config/settings.hpp"

#include <boost/program_options.hpp>

#include <cstdint>
#include <cstdlib>
#include <sstream>

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

}  // namespace

std::optional<std::string> ProcessEnv(const std::string& name) {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
}

ParseResult Parse(int argc, const char* const* argv, const Getenv& getenv) {
    ParseResult out;
    Settings& s = out.settings;
    std::string listen = "127.0.0.1:8080";

    // Environment first; flags below override it. Each flag's default is the environment value.
    auto env = [&](const char* name, auto& target) {
        const auto v = getenv(name);
        if (!v || v->empty()) return;
        using T = std::decay_t<decltype(target)>;
        try {
            // Numbers must be the whole value: "12abc" or "30s" is an error, not 12 or 30.
            std::size_t used = v->size();
            if constexpr (std::is_same_v<T, std::string>) {
                target = *v;
            } else if constexpr (std::is_same_v<T, int>) {
                target = std::stoi(*v, &used);
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                target = std::stoll(*v, &used);
            } else if constexpr (std::is_same_v<T, double>) {
                target = std::stod(*v, &used);
            } else if constexpr (std::is_same_v<T, std::size_t>) {
                if (v->find('-') != std::string::npos) throw std::invalid_argument("negative");
                target = static_cast<std::size_t>(std::stoull(*v, &used));
            }
            if (used != v->size()) throw std::invalid_argument("trailing characters");
        } catch (const std::exception&) {
            out.error = std::string("invalid value for ") + name + ": " + *v;
        }
    };
    env("GENHOST_LISTEN", listen);
    env("DATABASE_URL", s.database_url);
    env("GENHOST_API_KEY", s.api_key);
    env("GENHOST_DEFAULT_ORG", s.default_org);
    env("GENHOST_DEFAULT_TIER", s.default_tier);
    env("GENHOST_DEFAULT_CREDITS", s.default_credits);
    env("GENHOST_DATA_DIR", s.data_dir);
    env("GENHOST_PUBLIC_URL", s.public_url);
    env("GENHOST_LOG_LEVEL", s.log_level);
    env("GENHOST_LOG_FORMAT", s.log_format);
    env("GENHOST_ROLE", s.role);
    env("GENHOST_IO_THREADS", s.io_threads);
    env("GENHOST_DB_THREADS", s.db_threads);
    env("GENHOST_WORKERS", s.workers);
    env("GENHOST_MAX_BODY_BYTES", s.max_body_bytes);
    env("GENHOST_READ_TIMEOUT", s.read_timeout_seconds);
    env("GENHOST_MAX_CONNECTIONS", s.max_connections);
    env("GENHOST_MAX_BODY_MEMORY", s.max_body_memory);
    env("GENHOST_SCRATCH_SWEEP_INTERVAL", s.scratch_sweep_interval_seconds);
    env("GENHOST_DRAIN_TIMEOUT", s.drain_timeout_seconds);
    env("GENHOST_SHUTDOWN_DELAY", s.shutdown_delay_seconds);
    env("GENHOST_OUTPUT_URL_TTL", s.output_url_ttl_seconds);
    env("GENHOST_LEASE_SECONDS", s.lease_seconds);
    env("GENHOST_MAX_ATTEMPTS", s.max_attempts);
    env("GENHOST_LATENCY_SCALE", s.latency_scale);
    env("GENHOST_TIERS_FILE", s.tiers_file);
    env("GENHOST_MEDIA_URL", s.media_url);
    env("GENHOST_REALTIME_SESSIONS", s.realtime_sessions);
    env("GENHOST_REALTIME_READY_SECONDS", s.realtime_ready_seconds);
    env("GENHOST_REALTIME_LEASE_SECONDS", s.realtime_lease_seconds);
    env("GENHOST_LLM_URL", s.llm_url);
    env("GENHOST_LLM_MODEL", s.llm_model);
    env("GENHOST_LLM_KEY", s.llm_key);
    env("GENHOST_PORT_FILE", s.port_file);
    env("GENHOST_DOC_URL", s.doc_url);
    env("GENHOST_PROVIDERS", s.providers);
    env("GENHOST_PROVIDERS_FILE", s.providers_file);
    env("GENHOST_MODEL_PROVIDERS", s.model_providers);
    env("GENHOST_MODERATION_FILE", s.moderation_file);
    env("GENHOST_WORKER_NICE", s.worker_nice);
    env("GENHOST_UPLOAD_MAX_BYTES", s.upload_max_bytes);
    env("GENHOST_UPLOAD_TTL", s.upload_ttl_seconds);
    env("GENHOST_UPLOAD_SWEEP_INTERVAL", s.upload_sweep_interval_seconds);
    env("GENHOST_TASK_RETENTION", s.task_retention_seconds);
    env("GENHOST_FETCH_OFFLINE", s.fetch_offline);
    env("GENHOST_FETCH_TEST_CA", s.fetch_test_ca);
    env("GENHOST_FETCH_TEST_HOSTS", s.fetch_test_hosts);
    env("GENHOST_OUTPUT_STORE", s.output_store);
    env("GENHOST_S3_ENDPOINT", s.s3_endpoint);
    env("GENHOST_S3_REGION", s.s3_region);
    env("GENHOST_S3_BUCKET", s.s3_bucket);
    env("GENHOST_S3_ACCESS_KEY_ID", s.s3_access_key_id);
    env("GENHOST_S3_SECRET_ACCESS_KEY", s.s3_secret_access_key);
    env("GENHOST_S3_PREFIX", s.s3_prefix);
    if (!out.error.empty()) return out;

    // --help shows each setting's value, but never a secret's: only whether it is set.
    const auto secret = [](const std::string& value) {
        return value.empty() ? std::string() : std::string("(set)");
    };
    po::options_description desc("Options (each also read from the environment variable named)");
    // clang-format off
    desc.add_options()
        ("help,h", "show this help")
        ("listen", po::value(&listen)->default_value(listen), "GENHOST_LISTEN: host:port to serve on, or unix:PATH for a unix-domain socket")
        ("database-url", po::value(&s.database_url)->default_value(s.database_url, secret(s.database_url)), "DATABASE_URL: PostgreSQL connection string")
        ("api-key", po::value(&s.api_key)->default_value(s.api_key, secret(s.api_key)), "GENHOST_API_KEY: key provisioned for the default organization")
        ("default-org", po::value(&s.default_org)->default_value(s.default_org), "GENHOST_DEFAULT_ORG")
        ("default-tier", po::value(&s.default_tier)->default_value(s.default_tier), "GENHOST_DEFAULT_TIER: usage tier of the default organization")
        ("default-credits", po::value(&s.default_credits)->default_value(s.default_credits), "GENHOST_DEFAULT_CREDITS: the opening credit balance of every new organization")
        ("data-dir", po::value(&s.data_dir)->default_value(s.data_dir), "GENHOST_DATA_DIR: where outputs are stored")
        ("public-url", po::value(&s.public_url)->default_value(s.public_url), "GENHOST_PUBLIC_URL: base URL clients reach this server at")
        ("log-level", po::value(&s.log_level)->default_value(s.log_level), "GENHOST_LOG_LEVEL: trace, debug, info, warn, error")
        ("log-format", po::value(&s.log_format)->default_value(s.log_format), "GENHOST_LOG_FORMAT: json or text")
        ("role", po::value(&s.role)->default_value(s.role), "GENHOST_ROLE: all, api or worker")
        ("io-threads", po::value(&s.io_threads)->default_value(s.io_threads), "GENHOST_IO_THREADS")
        ("db-threads", po::value(&s.db_threads)->default_value(s.db_threads), "GENHOST_DB_THREADS: database connections")
        ("workers", po::value(&s.workers)->default_value(s.workers), "GENHOST_WORKERS: concurrent generation tasks")
        ("max-body-bytes", po::value(&s.max_body_bytes)->default_value(s.max_body_bytes), "GENHOST_MAX_BODY_BYTES")
        ("read-timeout", po::value(&s.read_timeout_seconds)->default_value(s.read_timeout_seconds), "GENHOST_READ_TIMEOUT: seconds to read one request")
        ("max-connections", po::value(&s.max_connections)->default_value(s.max_connections), "GENHOST_MAX_CONNECTIONS: open connections at most; past it a new one is answered 503")
        ("max-body-memory", po::value(&s.max_body_memory)->default_value(s.max_body_memory), "GENHOST_MAX_BODY_MEMORY: bytes of request bodies held at once; past it a body is answered 503")
        ("scratch-sweep-interval", po::value(&s.scratch_sweep_interval_seconds)->default_value(s.scratch_sweep_interval_seconds), "GENHOST_SCRATCH_SWEEP_INTERVAL: seconds between sweeps of the scratch of processes that are gone")
        ("drain-timeout", po::value(&s.drain_timeout_seconds)->default_value(s.drain_timeout_seconds), "GENHOST_DRAIN_TIMEOUT: seconds to finish in-flight requests on SIGTERM")
        ("shutdown-delay", po::value(&s.shutdown_delay_seconds)->default_value(s.shutdown_delay_seconds), "GENHOST_SHUTDOWN_DELAY: seconds, after SIGTERM, that /readyz answers 503 while requests are still served, before the drain (a second signal ends the wait)")
        ("output-url-ttl", po::value(&s.output_url_ttl_seconds)->default_value(s.output_url_ttl_seconds), "GENHOST_OUTPUT_URL_TTL: seconds an output URL stays valid")
        ("lease-seconds", po::value(&s.lease_seconds)->default_value(s.lease_seconds), "GENHOST_LEASE_SECONDS: task lease length")
        ("max-attempts", po::value(&s.max_attempts)->default_value(s.max_attempts), "GENHOST_MAX_ATTEMPTS: runs of a task before it fails")
        ("latency-scale", po::value(&s.latency_scale)->default_value(s.latency_scale), "GENHOST_LATENCY_SCALE: 0 = fast, 1 = typical model latency")
        ("tiers-file", po::value(&s.tiers_file)->default_value(s.tiers_file), "GENHOST_TIERS_FILE: replaces the built-in tier table")
        ("media-url", po::value(&s.media_url)->default_value(s.media_url), "GENHOST_MEDIA_URL: this node's realtime media plane as clients reach it (default: the public URL as ws(s)://.../_genhost/realtime)")
        ("realtime-sessions", po::value(&s.realtime_sessions)->default_value(s.realtime_sessions), "GENHOST_REALTIME_SESSIONS: realtime sessions this node runs at once")
        ("realtime-ready-seconds", po::value(&s.realtime_ready_seconds)->default_value(s.realtime_ready_seconds), "GENHOST_REALTIME_READY_SECONDS: how long a READY session waits for its first participant")
        ("llm-url", po::value(&s.llm_url)->default_value(s.llm_url), "GENHOST_LLM_URL: an OpenAI-compatible endpoint (e.g. http://127.0.0.1:8081/v1) for realtime sessions' conversation engine; empty: the builtin engine")
        ("llm-model", po::value(&s.llm_model)->default_value(s.llm_model), "GENHOST_LLM_MODEL: the model named in chat-completions requests")
        ("llm-key", po::value(&s.llm_key)->default_value(s.llm_key, secret(s.llm_key)), "GENHOST_LLM_KEY: the endpoint's API key (sent as a bearer token when set)")
        ("realtime-lease-seconds", po::value(&s.realtime_lease_seconds)->default_value(s.realtime_lease_seconds), "GENHOST_REALTIME_LEASE_SECONDS: a realtime session's lease (a dead node's sessions fail after it)")
        ("port-file", po::value(&s.port_file)->default_value(s.port_file), "GENHOST_PORT_FILE: write the bound port here")
        ("doc-url", po::value(&s.doc_url)->default_value(s.doc_url), "GENHOST_DOC_URL: docUrl of 400 bodies")
        ("providers", po::value(&s.providers)->default_value(s.providers), "GENHOST_PROVIDERS: HTTP providers, name=url,...")
        ("providers-file", po::value(&s.providers_file)->default_value(s.providers_file), "GENHOST_PROVIDERS_FILE: JSON file of HTTP providers and their options")
        ("model-providers", po::value(&s.model_providers)->default_value(s.model_providers), "GENHOST_MODEL_PROVIDERS: model=provider,... overriding the catalog")
        ("moderation-file", po::value(&s.moderation_file)->default_value(s.moderation_file), "GENHOST_MODERATION_FILE: replaces the built-in moderation lists")
        ("worker-nice", po::value(&s.worker_nice)->default_value(s.worker_nice), "GENHOST_WORKER_NICE: nice value of worker threads, 0-19")
        ("upload-max-bytes", po::value(&s.upload_max_bytes)->default_value(s.upload_max_bytes), "GENHOST_UPLOAD_MAX_BYTES: largest file of one upload")
        ("upload-ttl", po::value(&s.upload_ttl_seconds)->default_value(s.upload_ttl_seconds), "GENHOST_UPLOAD_TTL: seconds until an upload expires and is deleted")
        ("upload-sweep-interval", po::value(&s.upload_sweep_interval_seconds)->default_value(s.upload_sweep_interval_seconds), "GENHOST_UPLOAD_SWEEP_INTERVAL: seconds between sweeps of expired uploads and retired tasks")
        ("task-retention", po::value(&s.task_retention_seconds)->default_value(s.task_retention_seconds), "GENHOST_TASK_RETENTION: seconds a finished task and its outputs are kept (0: forever)")
        ("fetch-offline", po::value(&s.fetch_offline)->default_value(s.fetch_offline), "GENHOST_FETCH_OFFLINE: 1 = accept asset URLs unfetched; workers fetch them")
        ("output-store", po::value(&s.output_store)->default_value(s.output_store), "GENHOST_OUTPUT_STORE: local (data dir) or s3")
        ("s3-endpoint", po::value(&s.s3_endpoint)->default_value(s.s3_endpoint), "GENHOST_S3_ENDPOINT: http(s)://host[:port] of the S3-compatible store")
        ("s3-region", po::value(&s.s3_region)->default_value(s.s3_region), "GENHOST_S3_REGION: SigV4 region")
        ("s3-bucket", po::value(&s.s3_bucket)->default_value(s.s3_bucket), "GENHOST_S3_BUCKET: bucket of the outputs")
        ("s3-access-key-id", po::value(&s.s3_access_key_id)->default_value(s.s3_access_key_id), "GENHOST_S3_ACCESS_KEY_ID (the secret: GENHOST_S3_SECRET_ACCESS_KEY, environment only)")
        ("s3-prefix", po::value(&s.s3_prefix)->default_value(s.s3_prefix), "GENHOST_S3_PREFIX: prepended to <task id>/<name> in object keys")
        ;
    // clang-format on
    std::ostringstream help;
    help << desc;
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
    } catch (const std::exception& e) {
        out.error = e.what();
        return out;
    }
    const bool unix_socket = listen.rfind("unix:", 0) == 0;
    if (unix_socket) s.listen_unix = listen.substr(5);
    if (unix_socket ? s.listen_unix.empty() : !SplitListen(listen, s.listen_host, s.listen_port)) {
        out.error = "invalid listen address (want host:port or unix:PATH): " + listen;
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
