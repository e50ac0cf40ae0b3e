// ServerProcess runs the real `genhost serve` binary as a child process on a free loopback port
// with its own data folder, for HTTP tests. The log goes to a file the test can read.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace genhost::testing {

// A fixed, well-formed key for tests.
inline const std::string kTestKey = "key_" + std::string(128, 'a');

class ServerProcess {
  public:
    // Env entries are added to (or override) the defaults: DATABASE_URL=dsn, GENHOST_LISTEN=
    // 127.0.0.1:0, GENHOST_API_KEY=kTestKey, GENHOST_LOG_LEVEL=info, GENHOST_DATA_DIR=<temp>.
    ServerProcess(std::string dsn, std::map<std::string, std::string> env = {});
    ~ServerProcess();  // SIGTERM, then SIGKILL after 10 s; removes the temp folder
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;

    // Start spawns the process and waits until it listens (throws after `timeout`).
    void Start(std::chrono::seconds timeout = std::chrono::seconds(60));

    unsigned short port() const { return port_; }
    const std::string& data_dir() const { return dir_; }

    // Signal sends `sig`; WaitExit waits for the process to end and returns its exit status
    // (or 128+signal), nullopt on timeout.
    void Signal(int sig);
    std::optional<int> WaitExit(std::chrono::milliseconds timeout);

    // Log returns what the process has printed so far.
    std::string Log() const;

    // RunCommand runs `genhost ARGS` (a CLI subcommand) against the same database and returns
    // its exit status; output in `out`.
    int RunCommand(const std::string& args, std::string* out = nullptr) const;

  private:
    std::string dsn_;
    std::map<std::string, std::string> env_;
    std::string dir_;
    int pid_ = -1;
    unsigned short port_ = 0;
    int runs_ = 0;
};

}  // namespace genhost::testing
