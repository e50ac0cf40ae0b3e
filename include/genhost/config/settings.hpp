// genhost/config/settings.hpp
//
// Provides Settings, every knob of `genhost serve`, read from the environment (GENHOST_*,
// DATABASE_URL) and overridden by command-line flags, and SettingSpecs, the one table of them
// (variable, flag, field, secrecy, default and doc) that drives the parsing, `--help` and the
// table of docs/configuration.md (a unit test keeps that page equal to SettingsTable()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace genhost::config {

struct Settings {
    std::string listen = "127.0.0.1:8080";  // host:port or unix:PATH; parsed into the three below
    std::string listen_host = "127.0.0.1";
    unsigned short listen_port = 8080;
    std::string listen_unix;  // GENHOST_LISTEN=unix:PATH: a unix-domain socket instead
    // GENHOST_METRICS_LISTEN: host:port of a listener serving only /metrics (then the API's
    // port answers it 404); empty: /metrics is on the API's port. Parsed into the two below.
    std::string metrics_listen;
    std::string metrics_host;
    unsigned short metrics_port = 0;
    // GENHOST_TRUSTED_PROXIES: addresses and networks whose X-Forwarded-For names the client
    // (src/http/forwarded.hpp); checked at start.
    std::string trusted_proxies;
    std::string database_url;  // required for serve / migrate / keys / tasks
    std::string api_key;       // provisioned for the default organization when set
    std::string default_org = "default";
    int default_tier = 5;
    // The opening balance (credits, 1 credit = USD 0.01) of every organization genhost creates,
    // the default one included (docs/credits.md).
    std::int64_t default_credits = 10000000;
    std::string data_dir = "var/data";  // outputs live under data_dir/outputs
    std::string public_url;             // base of output URLs; default http://listen
    std::string log_level = "info";     // trace, debug, info, warn, error
    std::string log_format = "json";    // json or text
    std::string role = "all";           // all, api or worker
    int io_threads = 2;
    int db_threads = 4;
    int workers = 2;
    std::size_t max_body_bytes = 24 * 1024 * 1024;  // 16 MB of media as base64 plus JSON
    std::size_t max_header_bytes = 16 * 1024;
    double read_timeout_seconds = 30;
    // Caps that keep a node's memory bounded whatever its clients send (docs/configuration.md):
    // open connections, and request bodies held in memory by all connections together.
    std::size_t max_connections = 4096;
    std::size_t max_body_memory = 256 * 1024 * 1024;
    double scratch_sweep_interval_seconds = 300;  // how often scratch of dead processes is swept
    double drain_timeout_seconds = 20;
    // After SIGTERM: /readyz answers 503 at once while the listener keeps serving this long, so a
    // load balancer stops sending new requests before the drain begins.
    double shutdown_delay_seconds = 5;
    double output_url_ttl_seconds = 24 * 3600;
    double lease_seconds = 30;
    double job_lease_seconds = 120;  // the `jobs` lane's lease (avatars, documents, voices)
    int max_attempts = 3;
    double latency_scale = 0;  // 0: as fast as possible; 1: the catalog's typical latency
    std::string tiers_file;    // replaces the embedded schemas/tiers.json
    std::string port_file;     // write the bound port here once listening
    std::string doc_url;       // docUrl of 400 bodies; default public_url + /docs/errors
    // Providers and moderation (docs/providers.md, docs/moderation.md).
    std::string providers;        // "name=url,..." HTTP providers with default options
    std::string providers_file;   // JSON file of HTTP providers with their options
    std::string model_providers;  // "model=provider,..." laid over the catalog's `provider`
    std::string moderation_file;  // replaces the embedded schemas/moderation.json
    int worker_nice = 10;         // nice value of worker threads (0 = same as the I/O threads)
    std::size_t upload_max_bytes = 200 * 1024 * 1024;  // per ephemeral upload (docs/uploads.md)
    double upload_ttl_seconds = 24 * 3600;             // uploads expire and are deleted after it
    double upload_sweep_interval_seconds = 60;         // how often expired uploads are swept
    // Realtime sessions (docs/realtime.md): the media plane's URL as consume answers it
    // (default: public_url as ws(s) + /_genhost/realtime), sessions run at once by this node,
    // how long a READY session waits for its first participant, and the lease of a session.
    std::string media_url;
    int realtime_sessions = 10;
    double realtime_ready_seconds = 120;
    double realtime_lease_seconds = 15;
    // The conversation engine: builtin unless llm_url names an OpenAI-compatible endpoint
    // (.../v1, to which /chat/completions is added), with its model and key.
    std::string llm_url;
    std::string llm_model = "default";
    std::string llm_key;
    double task_retention_seconds =
        30 * 24 * 3600;  // finished tasks are deleted after it; 0: never
    // Asset fetching (docs/assets.md). Offline: URLs are accepted unfetched at request time and
    // fetched by the worker. The two test settings come from the environment only (no flag):
    // an extra trusted CA file and "name=127.0.0.1:port,..." test hosts on loopback.
    int fetch_offline = 0;
    std::string fetch_test_ca;
    std::string fetch_test_hosts;
    // Output store (docs/outputs.md): "local" keeps outputs under data_dir/outputs; "s3" in a
    // bucket of an S3-compatible store, objects <s3_prefix><task id>/<name>.
    std::string output_store = "local";
    std::string s3_endpoint;  // http(s)://host[:port]
    std::string s3_region = "us-east-1";
    std::string s3_bucket;
    std::string s3_access_key_id;
    std::string s3_secret_access_key;  // a secret: environment or its _FILE only
    std::string s3_prefix;
};

// SettingField points at the member of Settings a setting fills.
using SettingField =
    std::variant<std::string Settings::*, int Settings::*, std::int64_t Settings::*,
                 double Settings::*, std::size_t Settings::*>;

// SettingSpec describes one setting.
struct SettingSpec {
    const char* env;   // its environment variable
    const char* flag;  // its flag without "--"; empty: environment only
    SettingField field;
    // A secret is never a flag (flags show in the process list), is shown by --help only as
    // "(set)", and may instead be read from the file that ENV_FILE names.
    bool secret;
    const char* default_doc;  // the default, as docs/configuration.md shows it (markdown)
    const char* summary;      // one line for --help
    const char* doc;          // the meaning, as docs/configuration.md shows it (markdown)
};

// SettingSpecs is every setting, in the order of docs/configuration.md.
std::span<const SettingSpec> SettingSpecs();

// SettingsTable is the markdown table of docs/configuration.md, made from SettingSpecs.
std::string SettingsTable();

// ParseResult is the outcome of reading the command line.
struct ParseResult {
    Settings settings;
    std::vector<std::string> positional;  // subcommand and its arguments
    std::string error;                    // non-empty: print it and exit 2
    bool help = false;
    bool version = false;  // --version: print Version() and exit
    std::string help_text;
};

using Getenv = std::function<std::optional<std::string>(const std::string&)>;

// Parse reads the environment through `getenv`, then the flags of `argv`; unknown flags and
// malformed values are reported in ParseResult::error.
ParseResult Parse(int argc, const char* const* argv, const Getenv& getenv);

// ProcessEnv reads the real process environment.
std::optional<std::string> ProcessEnv(const std::string& name);

}  // namespace genhost::config
