// Tests for genhost/config/settings.hpp: Parse with an injected environment. Defaults, every
// environment variable, flags overriding the environment, the listen address forms, malformed
// numbers, unknown role and log format, help, and subcommand arguments handed on in order.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "genhost/config/settings.hpp"
#include "genhost/core/version.hpp"

namespace genhost::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Env = std::map<std::string, std::string>;

// Parses `args` (without the program name) with `env` as the whole environment, and records
// which variables were asked for.
ParseResult ParseArgs(const std::vector<std::string>& args, const Env& env = {},
                      std::vector<std::string>* asked = nullptr) {
    std::vector<const char*> argv{"genhost"};
    for (const auto& a : args) argv.push_back(a.c_str());
    return Parse(static_cast<int>(argv.size()), argv.data(),
                 [&](const std::string& name) -> std::optional<std::string> {
                     if (asked) asked->push_back(name);
                     const auto it = env.find(name);
                     if (it == env.end()) return std::nullopt;
                     return it->second;
                 });
}

TEST(Parse, Defaults) {
    const auto r = ParseArgs({});
    ASSERT_EQ(r.error, "");
    EXPECT_FALSE(r.help);
    EXPECT_TRUE(r.positional.empty());
    const Settings& s = r.settings;
    const Settings d;
    EXPECT_EQ(s.listen_host, "127.0.0.1");
    EXPECT_EQ(s.listen_port, 8080);
    EXPECT_EQ(s.database_url, "");
    EXPECT_EQ(s.api_key, "");
    EXPECT_EQ(s.default_org, "default");
    EXPECT_EQ(s.default_tier, 5);
    EXPECT_EQ(s.data_dir, "var/data");
    EXPECT_EQ(s.public_url, "");
    EXPECT_EQ(s.log_level, "info");
    EXPECT_EQ(s.log_format, "json");
    EXPECT_EQ(s.role, "all");
    EXPECT_EQ(s.io_threads, d.io_threads);
    EXPECT_EQ(s.db_threads, d.db_threads);
    EXPECT_EQ(s.workers, d.workers);
    EXPECT_EQ(s.max_body_bytes, d.max_body_bytes);
    EXPECT_GE(s.max_body_bytes, 16u * 1024 * 1024 * 4 / 3);  // 16 MB of media as base64 fits
    EXPECT_EQ(s.max_header_bytes, d.max_header_bytes);
    EXPECT_DOUBLE_EQ(s.read_timeout_seconds, d.read_timeout_seconds);
    EXPECT_DOUBLE_EQ(s.drain_timeout_seconds, d.drain_timeout_seconds);
    EXPECT_DOUBLE_EQ(s.shutdown_delay_seconds, 5);
    EXPECT_DOUBLE_EQ(s.output_url_ttl_seconds, 24 * 3600);
    EXPECT_DOUBLE_EQ(s.lease_seconds, d.lease_seconds);
    EXPECT_EQ(s.max_attempts, d.max_attempts);
    EXPECT_DOUBLE_EQ(s.latency_scale, 0);
    EXPECT_EQ(s.tiers_file, "");
    EXPECT_EQ(s.port_file, "");
    EXPECT_EQ(s.doc_url, "");
}

TEST(Parse, TheMemoryCapsAndScratchSweep) {
    const Settings d;
    EXPECT_EQ(d.max_connections, 4096u);
    EXPECT_EQ(d.max_body_memory, 256u * 1024 * 1024);
    EXPECT_GE(d.max_body_memory, d.max_body_bytes);
    EXPECT_DOUBLE_EQ(d.scratch_sweep_interval_seconds, 300);
    auto r = ParseArgs({}, {{"GENHOST_MAX_CONNECTIONS", "100"},
                            {"GENHOST_MAX_BODY_MEMORY", "50000000"},
                            {"GENHOST_SCRATCH_SWEEP_INTERVAL", "2.5"}});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.max_connections, 100u);
    EXPECT_EQ(r.settings.max_body_memory, 50000000u);
    EXPECT_DOUBLE_EQ(r.settings.scratch_sweep_interval_seconds, 2.5);
    r = ParseArgs({"--max-connections", "7", "--max-body-memory", "26000000",
                   "--scratch-sweep-interval", "1"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.max_connections, 7u);
    EXPECT_EQ(r.settings.max_body_memory, 26000000u);
    EXPECT_THAT(ParseArgs({"--max-connections", "0"}).error, HasSubstr("max connections"));
    EXPECT_THAT(ParseArgs({"--max-connections", "2000000"}).error, HasSubstr("max connections"));
    // Below the body limit a largest body could never be read.
    EXPECT_THAT(ParseArgs({"--max-body-memory", "1000"}).error, HasSubstr("max body memory"));
    EXPECT_EQ(ParseArgs({"--max-body-memory", "1000", "--max-body-bytes", "1000"}).error, "");
    EXPECT_THAT(ParseArgs({"--scratch-sweep-interval", "0"}).error, HasSubstr("scratch sweep"));
}

TEST(Parse, ReadsTheEnvironmentThroughTheInjectedFunctionOnly) {
    std::vector<std::string> asked;
    const auto r = ParseArgs({}, {}, &asked);
    ASSERT_EQ(r.error, "");
    EXPECT_THAT(asked, ::testing::Contains("GENHOST_LISTEN"));
    EXPECT_THAT(asked, ::testing::Contains("DATABASE_URL"));
    EXPECT_THAT(asked, ::testing::Contains("GENHOST_API_KEY"));
}

// Issue 32: --help printed secrets from the environment (the DATABASE_URL password, the API key,
// the LLM key).
TEST(Parse, HelpNeverShowsASecretsValue) {
    const Env env = {{"DATABASE_URL", "postgresql://genhost:hunter2@db:5432/genhost"},
                     {"GENHOST_API_KEY", "key_" + std::string(128, 'b')},
                     {"GENHOST_LLM_KEY", "sk-llm-secret"},
                     {"GENHOST_S3_SECRET_ACCESS_KEY", "s3-secret"},
                     {"GENHOST_LLM_MODEL", "llama-3"}};
    const auto r = ParseArgs({"--help"}, env);
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.help_text.find("hunter2"), std::string::npos) << r.help_text;
    EXPECT_EQ(r.help_text.find(std::string(128, 'b')), std::string::npos);
    EXPECT_EQ(r.help_text.find("sk-llm-secret"), std::string::npos);
    EXPECT_EQ(r.help_text.find("s3-secret"), std::string::npos);
    EXPECT_THAT(r.help_text, HasSubstr("DATABASE_URL=(set)"));  // that they are set is shown
    EXPECT_THAT(r.help_text, HasSubstr("(=llama-3)"));          // other values still are
    // The secrets themselves are read all the same.
    EXPECT_EQ(r.settings.llm_key, "sk-llm-secret");
}

TEST(Parse, ReadsEveryEnvironmentVariable) {
    const Env env = {
        {"GENHOST_LISTEN", "0.0.0.0:9000"},
        {"DATABASE_URL", "postgresql://u:p@db:5432/genhost"},
        {"GENHOST_API_KEY", "key_abc"},
        {"GENHOST_DEFAULT_ORG", "acme"},
        {"GENHOST_DEFAULT_TIER", "3"},
        {"GENHOST_DEFAULT_CREDITS", "123456789012"},
        {"GENHOST_DATA_DIR", "/srv/genhost"},
        {"GENHOST_PUBLIC_URL", "https://gen.example.com"},
        {"GENHOST_LOG_LEVEL", "debug"},
        {"GENHOST_LOG_FORMAT", "text"},
        {"GENHOST_ROLE", "worker"},
        {"GENHOST_IO_THREADS", "4"},
        {"GENHOST_DB_THREADS", "16"},
        {"GENHOST_WORKERS", "7"},
        {"GENHOST_MAX_BODY_BYTES", "1048576"},
        {"GENHOST_READ_TIMEOUT", "2.5"},
        {"GENHOST_DRAIN_TIMEOUT", "3.25"},
        {"GENHOST_SHUTDOWN_DELAY", "1.5"},
        {"GENHOST_OUTPUT_URL_TTL", "600"},
        {"GENHOST_LEASE_SECONDS", "45"},
        {"GENHOST_MAX_ATTEMPTS", "5"},
        {"GENHOST_LATENCY_SCALE", "0.5"},
        {"GENHOST_TIERS_FILE", "/etc/genhost/tiers.json"},
        {"GENHOST_PORT_FILE", "/tmp/port"},
        {"GENHOST_DOC_URL", "https://docs.example.com/errors"},
    };
    const auto r = ParseArgs({}, env);
    ASSERT_EQ(r.error, "");
    const Settings& s = r.settings;
    EXPECT_EQ(s.listen_host, "0.0.0.0");
    EXPECT_EQ(s.listen_port, 9000);
    EXPECT_EQ(s.database_url, "postgresql://u:p@db:5432/genhost");
    EXPECT_EQ(s.api_key, "key_abc");
    EXPECT_EQ(s.default_org, "acme");
    EXPECT_EQ(s.default_tier, 3);
    EXPECT_EQ(s.default_credits, 123456789012);
    EXPECT_EQ(s.data_dir, "/srv/genhost");
    EXPECT_EQ(s.public_url, "https://gen.example.com");
    EXPECT_EQ(s.log_level, "debug");
    EXPECT_EQ(s.log_format, "text");
    EXPECT_EQ(s.role, "worker");
    EXPECT_EQ(s.io_threads, 4);
    EXPECT_EQ(s.db_threads, 16);
    EXPECT_EQ(s.workers, 7);
    EXPECT_EQ(s.max_body_bytes, 1048576u);
    EXPECT_DOUBLE_EQ(s.read_timeout_seconds, 2.5);
    EXPECT_DOUBLE_EQ(s.drain_timeout_seconds, 3.25);
    EXPECT_DOUBLE_EQ(s.shutdown_delay_seconds, 1.5);
    EXPECT_DOUBLE_EQ(s.output_url_ttl_seconds, 600);
    EXPECT_DOUBLE_EQ(s.lease_seconds, 45);
    EXPECT_EQ(s.max_attempts, 5);
    EXPECT_DOUBLE_EQ(s.latency_scale, 0.5);
    EXPECT_EQ(s.tiers_file, "/etc/genhost/tiers.json");
    EXPECT_EQ(s.port_file, "/tmp/port");
    EXPECT_EQ(s.doc_url, "https://docs.example.com/errors");
    EXPECT_TRUE(r.positional.empty());
}

TEST(Parse, EmptyEnvironmentValuesAreIgnored) {
    const auto r =
        ParseArgs({}, {{"GENHOST_LISTEN", ""}, {"GENHOST_WORKERS", ""}, {"DATABASE_URL", ""}});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.listen_port, 8080);
    EXPECT_EQ(r.settings.workers, Settings{}.workers);
}

TEST(Parse, EveryFlag) {
    const auto r = ParseArgs({"--listen",         "10.0.0.1:1234",
                              "--default-org",    "org-flag",
                              "--default-tier",   "2",
                              "--data-dir",       "/data",
                              "--public-url",     "http://public",
                              "--log-level",      "warn",
                              "--log-format",     "text",
                              "--role",           "api",
                              "--io-threads",     "3",
                              "--db-threads",     "5",
                              "--workers",        "0",
                              "--max-body-bytes", "2048",
                              "--read-timeout",   "1.5",
                              "--drain-timeout",  "0.5",
                              "--shutdown-delay", "0",
                              "--output-url-ttl", "60",
                              "--lease-seconds",  "10",
                              "--max-attempts",   "1",
                              "--latency-scale",  "1",
                              "--tiers-file",     "t.json",
                              "--port-file",      "p.txt",
                              "--doc-url",        "http://doc"});
    ASSERT_EQ(r.error, "");
    const Settings& s = r.settings;
    EXPECT_EQ(s.listen_host, "10.0.0.1");
    EXPECT_EQ(s.listen_port, 1234);
    EXPECT_EQ(s.default_org, "org-flag");
    EXPECT_EQ(s.default_tier, 2);
    EXPECT_EQ(s.data_dir, "/data");
    EXPECT_EQ(s.public_url, "http://public");
    EXPECT_EQ(s.log_level, "warn");
    EXPECT_EQ(s.log_format, "text");
    EXPECT_EQ(s.role, "api");
    EXPECT_EQ(s.io_threads, 3);
    EXPECT_EQ(s.db_threads, 5);
    EXPECT_EQ(s.workers, 0);
    EXPECT_EQ(s.max_body_bytes, 2048u);
    EXPECT_DOUBLE_EQ(s.read_timeout_seconds, 1.5);
    EXPECT_DOUBLE_EQ(s.drain_timeout_seconds, 0.5);
    EXPECT_DOUBLE_EQ(s.shutdown_delay_seconds, 0);
    EXPECT_DOUBLE_EQ(s.output_url_ttl_seconds, 60);
    EXPECT_DOUBLE_EQ(s.lease_seconds, 10);
    EXPECT_EQ(s.max_attempts, 1);
    EXPECT_DOUBLE_EQ(s.latency_scale, 1);
    EXPECT_EQ(s.tiers_file, "t.json");
    EXPECT_EQ(s.port_file, "p.txt");
    EXPECT_EQ(s.doc_url, "http://doc");
    EXPECT_TRUE(r.positional.empty());
}

TEST(Parse, FlagsOverrideTheEnvironment) {
    const Env env = {{"GENHOST_LISTEN", "0.0.0.0:9000"},
                     {"GENHOST_WORKERS", "7"},
                     {"GENHOST_LOG_FORMAT", "text"},
                     {"DATABASE_URL", "postgresql://env"}};
    const auto r =
        ParseArgs({"--listen=127.0.0.1:7000", "--workers", "1", "--log-format", "json"}, env);
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.listen_port, 7000);
    EXPECT_EQ(r.settings.listen_host, "127.0.0.1");
    EXPECT_EQ(r.settings.workers, 1);
    EXPECT_EQ(r.settings.log_format, "json");
    EXPECT_EQ(r.settings.database_url, "postgresql://env");  // not overridden: env kept
}

TEST(Parse, EqualsAndSpaceFlagFormsAgree) {
    const auto a = ParseArgs({"--workers=4", "--data-dir=/x"});
    const auto b = ParseArgs({"--workers", "4", "--data-dir", "/x"});
    ASSERT_EQ(a.error, "");
    ASSERT_EQ(b.error, "");
    EXPECT_EQ(a.settings.workers, 4);
    EXPECT_EQ(b.settings.workers, 4);
    EXPECT_EQ(a.settings.data_dir, "/x");
    EXPECT_EQ(b.settings.data_dir, "/x");
}

// --- listen --------------------------------------------------------------------------------

TEST(Parse, ListenHostAndPort) {
    const auto r = ParseArgs({"--listen", "localhost:1"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.listen_host, "localhost");
    EXPECT_EQ(r.settings.listen_port, 1);
}

TEST(Parse, ListenBracketedIpv6) {
    const auto r = ParseArgs({"--listen", "[::1]:8080"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.listen_host, "::1");
    EXPECT_EQ(r.settings.listen_port, 8080);

    const auto any = ParseArgs({}, {{"GENHOST_LISTEN", "[::]:65535"}});
    ASSERT_EQ(any.error, "");
    EXPECT_EQ(any.settings.listen_host, "::");
    EXPECT_EQ(any.settings.listen_port, 65535);
}

TEST(Parse, ListenPortZeroPicksAFreePort) {
    const auto r = ParseArgs({"--listen", "127.0.0.1:0"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.listen_port, 0);
}

TEST(Parse, ListenRejectsBadPorts) {
    for (const char* bad : {"127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:http", "127.0.0.1:80x",
                            "127.0.0.1:8 0", "127.0.0.1:99999999999", "127.0.0.1:1.5"}) {
        const auto r = ParseArgs({"--listen", bad});
        EXPECT_THAT(r.error, HasSubstr("listen")) << bad;
    }
}

TEST(Parse, ListenRejectsMissingPartsFromFlagAndEnvironment) {
    for (const char* bad : {"127.0.0.1", "127.0.0.1:", ":8080", "localhost", "[::1]"}) {
        EXPECT_THAT(ParseArgs({"--listen", bad}).error, HasSubstr("listen")) << bad;
        EXPECT_THAT(ParseArgs({}, {{"GENHOST_LISTEN", bad}}).error, HasSubstr("listen")) << bad;
    }
}

TEST(Parse, ListenOnAUnixSocket) {
    const auto r = ParseArgs({"--listen", "unix:/run/genhost/api.sock"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.listen_unix, "/run/genhost/api.sock");
    const auto env = ParseArgs({}, {{"GENHOST_LISTEN", "unix:relative.sock"}});
    ASSERT_EQ(env.error, "");
    EXPECT_EQ(env.settings.listen_unix, "relative.sock");
    EXPECT_EQ(ParseArgs({"--listen", "127.0.0.1:80"}).settings.listen_unix, "");
    EXPECT_THAT(ParseArgs({"--listen", "unix:"}).error, HasSubstr("listen"));
}

// --- malformed values ----------------------------------------------------------------------

TEST(Parse, RejectsNonNumericEnvironmentValues) {
    for (const char* name :
         {"GENHOST_DEFAULT_TIER", "GENHOST_IO_THREADS", "GENHOST_DB_THREADS", "GENHOST_WORKERS",
          "GENHOST_MAX_BODY_BYTES", "GENHOST_READ_TIMEOUT", "GENHOST_DRAIN_TIMEOUT",
          "GENHOST_OUTPUT_URL_TTL", "GENHOST_LEASE_SECONDS", "GENHOST_MAX_ATTEMPTS",
          "GENHOST_LATENCY_SCALE"}) {
        const auto r = ParseArgs({}, {{name, "lots"}});
        EXPECT_THAT(r.error, HasSubstr(name)) << name;
    }
}

TEST(Parse, RejectsEnvironmentNumbersWithTrailingGarbage) {
    for (const auto& [name, value] :
         std::vector<std::pair<std::string, std::string>>{{"GENHOST_WORKERS", "12abc"},
                                                          {"GENHOST_IO_THREADS", "2 threads"},
                                                          {"GENHOST_DEFAULT_TIER", "3.5"},
                                                          {"GENHOST_MAX_BODY_BYTES", "10MB"},
                                                          {"GENHOST_READ_TIMEOUT", "30s"},
                                                          {"GENHOST_OUTPUT_URL_TTL", "1h"}}) {
        const auto r = ParseArgs({}, {{name, value}});
        EXPECT_THAT(r.error, HasSubstr(name)) << name << "=" << value;
    }
}

TEST(Parse, RejectsNegativeEnvironmentSizes) {
    const auto r = ParseArgs({}, {{"GENHOST_MAX_BODY_BYTES", "-1"}});
    EXPECT_THAT(r.error, HasSubstr("GENHOST_MAX_BODY_BYTES"));
}

TEST(Parse, RejectsEnvironmentIntegersOutOfRange) {
    const auto r = ParseArgs({}, {{"GENHOST_WORKERS", "99999999999999999999"}});
    EXPECT_THAT(r.error, HasSubstr("GENHOST_WORKERS"));
}

TEST(Parse, RejectsMalformedFlagNumbers) {
    for (const auto& args : std::vector<std::vector<std::string>>{{"--workers", "many"},
                                                                  {"--workers", "12abc"},
                                                                  {"--io-threads", "1.5"},
                                                                  {"--read-timeout", "soon"},
                                                                  {"--max-body-bytes", "big"}}) {
        EXPECT_NE(ParseArgs(args).error, "") << args[0] << " " << args[1];
    }
}

TEST(Parse, TheShutdownDelayAndDrainAreBounded) {
    EXPECT_EQ(ParseArgs({"--shutdown-delay=0"}).error, "");
    EXPECT_NE(ParseArgs({"--shutdown-delay=-1"}).error, "");
    EXPECT_NE(ParseArgs({}, {{"GENHOST_SHUTDOWN_DELAY", "nan"}}).error, "");
    EXPECT_NE(ParseArgs({"--drain-timeout=99999"}).error, "");
}

TEST(Parse, RejectsNegativeFlagSizes) { EXPECT_NE(ParseArgs({"--max-body-bytes=-1"}).error, ""); }

TEST(Parse, RejectsAFlagWithoutItsValue) { EXPECT_NE(ParseArgs({"--listen"}).error, ""); }

TEST(Parse, RejectsNonPositiveCounts) {
    EXPECT_THAT(ParseArgs({"--io-threads", "0"}).error, HasSubstr("positive"));
    EXPECT_THAT(ParseArgs({"--db-threads", "0"}).error, HasSubstr("positive"));
    EXPECT_THAT(ParseArgs({}, {{"GENHOST_WORKERS", "-1"}}).error, HasSubstr("positive"));
    EXPECT_THAT(ParseArgs({}, {{"GENHOST_OUTPUT_URL_TTL", "0"}}).error, HasSubstr("positive"));
    EXPECT_THAT(ParseArgs({}, {{"GENHOST_LEASE_SECONDS", "0.5"}}).error, HasSubstr("positive"));
    EXPECT_THAT(ParseArgs({}, {{"GENHOST_MAX_ATTEMPTS", "0"}}).error, HasSubstr("positive"));
    EXPECT_EQ(ParseArgs({"--workers", "0"}).error, "");  // an api-only node runs no workers
}

TEST(Parse, RejectsThreadCountsAndLatencyScalesOutOfRange) {
    EXPECT_THAT(ParseArgs({"--workers", "100000"}).error, HasSubstr("at most 1024"));
    EXPECT_THAT(ParseArgs({}, {{"GENHOST_IO_THREADS", "1025"}}).error, HasSubstr("at most 1024"));
    EXPECT_THAT(ParseArgs({"--db-threads", "5000"}).error, HasSubstr("at most 1024"));
    EXPECT_EQ(ParseArgs({"--workers", "1024"}).error, "");
    for (const char* bad : {"nan", "inf", "-0.5", "101", "1e300"}) {
        EXPECT_THAT(ParseArgs({}, {{"GENHOST_LATENCY_SCALE", bad}}).error,
                    HasSubstr("latency scale must be a number from 0 to 100"))
            << bad;
    }
    for (const char* good : {"0", "0.25", "1", "100"}) {
        EXPECT_EQ(ParseArgs({"--latency-scale", good}).error, "") << good;
    }
}

TEST(Parse, DefaultCreditsAreANonNegativeInteger) {
    EXPECT_EQ(ParseArgs({}).settings.default_credits, 10000000);
    EXPECT_EQ(ParseArgs({"--default-credits=0"}).error, "");
    EXPECT_EQ(ParseArgs({"--default-credits=-5"}).error, "default credits must not be negative");
    EXPECT_NE(ParseArgs({}, {{"GENHOST_DEFAULT_CREDITS", "lots"}}).error, "");
    EXPECT_NE(ParseArgs({}, {{"GENHOST_DEFAULT_CREDITS", "5e3"}}).error, "");
}

TEST(Parse, RejectsUnknownRole) {
    EXPECT_THAT(ParseArgs({"--role", "admin"}).error, HasSubstr("role"));
    EXPECT_THAT(ParseArgs({}, {{"GENHOST_ROLE", "ALL"}}).error, HasSubstr("role"));
    for (const char* ok : {"all", "api", "worker"}) {
        EXPECT_EQ(ParseArgs({"--role", ok}).error, "") << ok;
    }
}

TEST(Parse, RejectsUnknownLogFormat) {
    EXPECT_THAT(ParseArgs({"--log-format", "xml"}).error, HasSubstr("log format"));
    EXPECT_THAT(ParseArgs({}, {{"GENHOST_LOG_FORMAT", "JSON"}}).error, HasSubstr("log format"));
}

// --- help and subcommands ------------------------------------------------------------------

TEST(Parse, Help) {
    for (const char* flag : {"--help", "-h"}) {
        const auto r = ParseArgs({flag});
        EXPECT_EQ(r.error, "");
        EXPECT_TRUE(r.help) << flag;
        EXPECT_THAT(r.help_text, HasSubstr("--listen"));
        EXPECT_THAT(r.help_text, HasSubstr("GENHOST_LISTEN"));
        EXPECT_THAT(r.help_text, HasSubstr("DATABASE_URL"));
    }
}

TEST(Parse, SubcommandAlone) {
    const auto r = ParseArgs({"serve"});
    ASSERT_EQ(r.error, "");
    EXPECT_THAT(r.positional, ElementsAre("serve"));
}

TEST(Parse, SubcommandArgumentsArePassedThroughInOrder) {
    const auto r = ParseArgs({"keys", "create", "--org", "acme", "--tier", "3"});
    ASSERT_EQ(r.error, "");
    EXPECT_THAT(r.positional, ElementsAre("keys", "create", "--org", "acme", "--tier", "3"));
    EXPECT_EQ(r.settings.tiers_file, "");  // "--tier" is not an abbreviation of --tiers-file
}

TEST(Parse, SubcommandEqualsFormsArePassedThrough) {
    const auto r = ParseArgs({"keys", "create", "--org=acme", "--tier=3"});
    ASSERT_EQ(r.error, "");
    EXPECT_THAT(r.positional, ElementsAre("keys", "create", "--org=acme", "--tier=3"));
    EXPECT_EQ(r.settings.tiers_file, "");
}

TEST(Parse, SubcommandArgumentsMixedWithServerFlags) {
    const auto r =
        ParseArgs({"--data-dir", "/db", "keys", "disable", "k-123", "--log-level", "error"});
    ASSERT_EQ(r.error, "");
    EXPECT_THAT(r.positional, ElementsAre("keys", "disable", "k-123"));
    EXPECT_EQ(r.settings.data_dir, "/db");
    EXPECT_EQ(r.settings.log_level, "error");
}

TEST(Parse, KeysListAndMigrate) {
    EXPECT_THAT(ParseArgs({"keys", "list"}).positional, ElementsAre("keys", "list"));
    EXPECT_THAT(ParseArgs({"migrate"}).positional, ElementsAre("migrate"));
}

TEST(Parse, FlagAbbreviationsAreNotGuessed) {
    // A prefix of a server flag is not that flag: it is handed to the subcommand untouched.
    const auto r = ParseArgs({"keys", "create", "--org", "acme", "--work", "9"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.workers, Settings{}.workers);
    EXPECT_THAT(r.positional, ElementsAre("keys", "create", "--org", "acme", "--work", "9"));
}

// Issue 32: secrets are never taken as flags (they would show in the process list), and each may
// come from the file its _FILE variable names.
TEST(Secrets, AreNeverFlagsAndTheirOldFlagsAreRefusedByName) {
    int secrets = 0;
    for (const auto& spec : SettingSpecs()) {
        if (!spec.secret) continue;
        ++secrets;
        EXPECT_STREQ(spec.flag, "") << spec.env;
    }
    EXPECT_EQ(secrets, 4);  // DATABASE_URL, GENHOST_API_KEY, GENHOST_LLM_KEY, the S3 secret
    for (const std::string flag :
         {"--database-url", "--api-key", "--llm-key", "--s3-secret-access-key"}) {
        const auto r = ParseArgs({flag, "hunter2", "serve"});
        EXPECT_THAT(r.error, HasSubstr(flag + " is not taken")) << flag;
        EXPECT_EQ(r.error.find("hunter2"), std::string::npos);
        EXPECT_THAT(ParseArgs({flag + "=hunter2"}).error, HasSubstr("_FILE"));
    }
}

std::string WriteTemp(const std::string& content) {
    char path[] = "/tmp/genhost-secret-XXXXXX";
    const int fd = ::mkstemp(path);
    EXPECT_GE(fd, 0);
    ::close(fd);
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

TEST(Secrets, AreReadFromTheFileTheirFileVariableNames) {
    const std::string db = WriteTemp("postgresql://u:hunter2@db/genhost\n");
    const std::string key = WriteTemp("key_" + std::string(128, 'c'));
    const auto r = ParseArgs({}, {{"DATABASE_URL_FILE", db},
                                  {"GENHOST_API_KEY_FILE", key},
                                  {"GENHOST_LLM_KEY_FILE", ""}});  // empty: not set
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.database_url, "postgresql://u:hunter2@db/genhost");  // newline dropped
    EXPECT_EQ(r.settings.api_key, "key_" + std::string(128, 'c'));
    EXPECT_EQ(r.settings.llm_key, "");

    // Both the variable and its file: refused, rather than one silently winning.
    const auto both =
        ParseArgs({}, {{"DATABASE_URL", "postgresql://x"}, {"DATABASE_URL_FILE", db}});
    EXPECT_EQ(both.error, "set DATABASE_URL or DATABASE_URL_FILE, not both");
    // A file that cannot be read is named; nothing of a secret is ever echoed.
    const auto missing = ParseArgs({}, {{"GENHOST_LLM_KEY_FILE", "/nonexistent/llm-key"}});
    EXPECT_EQ(missing.error, "cannot read GENHOST_LLM_KEY_FILE (/nonexistent/llm-key)");
    std::remove(db.c_str());
    std::remove(key.c_str());
}

TEST(Version, IsPrinted) {
    const auto r = ParseArgs({"--version"});
    ASSERT_EQ(r.error, "");
    EXPECT_TRUE(r.version);
    EXPECT_THAT(std::string(genhost::Version()),
                ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
}

// DefaultText is a setting's default as docs/configuration.md shows it between backticks.
std::string DefaultText(const SettingSpec& spec) {
    const Settings d;
    return std::visit(
        [&](auto member) -> std::string {
            using T = std::decay_t<decltype(d.*member)>;
            if constexpr (std::is_same_v<T, std::string>) {
                return d.*member;
            } else if constexpr (std::is_same_v<T, double>) {
                std::ostringstream out;
                out << std::setprecision(15) << d.*member;
                return out.str();
            } else {
                return std::to_string(d.*member);
            }
        },
        spec.field);
}

// Issue 32: one table drives parsing, --help and docs/configuration.md.
TEST(SettingSpecs, AreDistinctAndTheirDocumentedDefaultsAreTheRealOnes) {
    std::set<std::string> envs, flags;
    std::vector<SettingField> fields;
    for (const auto& spec : SettingSpecs()) {
        EXPECT_TRUE(envs.insert(spec.env).second) << spec.env;
        if (*spec.flag) {
            EXPECT_TRUE(flags.insert(spec.flag).second) << spec.flag;
        }
        EXPECT_EQ(std::count(fields.begin(), fields.end(), spec.field), 0)
            << spec.env << " fills a field twice";
        fields.push_back(spec.field);
        EXPECT_STRNE(spec.summary, "") << spec.env;
        EXPECT_STRNE(spec.doc, "") << spec.env;
        const std::string value = DefaultText(spec);
        // An empty default is described in words ("— (required)", "built in", "`PUBLIC_URL/...`").
        if (!value.empty()) {
            EXPECT_EQ(std::string(spec.default_doc).rfind("`" + value + "`", 0), 0u)
                << spec.env << ": the default is " << value << ", the docs say "
                << spec.default_doc;
        }
    }
}

TEST(SettingSpecs, EachIsReadFromItsVariableAndShownByHelp) {
    const auto help = ParseArgs({"--help"}).help_text;
    for (const auto& spec : SettingSpecs()) {
        EXPECT_THAT(help, HasSubstr(spec.env));
        if (*spec.flag) {
            EXPECT_THAT(help, HasSubstr(std::string("--") + spec.flag));
        }
        // The variable fills its own field: a value that every field's type takes ("7") lands
        // in this field and in no other.
        const auto r = ParseArgs({}, {{spec.env, "7"}});
        const Settings d;
        const bool changed = std::visit(
            [&](auto member) {
                using T = std::decay_t<decltype(d.*member)>;
                if constexpr (std::is_same_v<T, std::string>) {
                    return r.settings.*member == "7";
                } else {
                    return r.settings.*member == static_cast<T>(7);
                }
            },
            spec.field);
        EXPECT_TRUE(changed || !r.error.empty()) << spec.env;
    }
}

// The table of docs/configuration.md is SettingsTable(), byte for byte: a setting added,
// renamed or redocumented in the code without the page (or the reverse) fails here, and the
// message holds the table to paste.
TEST(SettingSpecs, DocsConfigurationHoldsTheirTable) {
    std::ifstream in(GENHOST_SOURCE_DIR "/docs/configuration.md");
    ASSERT_TRUE(in);
    std::stringstream page;
    page << in.rdbuf();
    const std::string table = SettingsTable();
    EXPECT_NE(page.str().find(table), std::string::npos)
        << "docs/configuration.md does not hold the settings table; it should be:\n"
        << table;
}

TEST(ProcessEnv, ReadsTheRealEnvironment) {
    ::setenv("GENHOST_CONFIG_TEST_VAR", "v1", 1);
    EXPECT_EQ(ProcessEnv("GENHOST_CONFIG_TEST_VAR"), "v1");
    ::unsetenv("GENHOST_CONFIG_TEST_VAR");
    EXPECT_EQ(ProcessEnv("GENHOST_CONFIG_TEST_VAR"), std::nullopt);
}

}  // namespace
}  // namespace genhost::config
