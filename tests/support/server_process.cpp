#include "support/server_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace genhost::testing {

namespace fs = std::filesystem;

ServerProcess::ServerProcess(std::string dsn, std::map<std::string, std::string> env)
    : dsn_(std::move(dsn)), env_(std::move(env)) {
    char tmpl[] = "/tmp/genhost-server.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
}

ServerProcess::~ServerProcess() {
    if (pid_ > 0) {
        Signal(SIGTERM);
        if (!WaitExit(std::chrono::seconds(10))) {
            Signal(SIGKILL);
            WaitExit(std::chrono::seconds(5));
        }
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
}

void ServerProcess::Start(std::chrono::seconds timeout) {
    const std::string port_file = dir_ + "/port";
    fs::remove(port_file);
    std::map<std::string, std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string kv = *e;
        const auto eq = kv.find('=');
        if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    env["DATABASE_URL"] = dsn_;
    env["GENHOST_LISTEN"] = "127.0.0.1:0";
    env["GENHOST_API_KEY"] = kTestKey;
    env["GENHOST_LOG_LEVEL"] = "info";
    env["GENHOST_DATA_DIR"] = dir_ + "/data";
    env["GENHOST_PORT_FILE"] = port_file;
    env["GENHOST_DRAIN_TIMEOUT"] = "10";
    env["GENHOST_SHUTDOWN_DELAY"] = "0";  // tests that stop a server want it gone at once
    for (const auto& [k, v] : env_) env[k] = v;
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    const std::string log = dir_ + "/server.log";
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        // The server dies with the test process, even when a failed assertion aborts it.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        const char* argv[] = {GENHOST_BINARY, "serve", nullptr};
        execve(GENHOST_BINARY, const_cast<char**>(argv), envp.data());
        _exit(127);
    }
    pid_ = pid;
    ++runs_;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        std::ifstream in(port_file);
        int port = 0;
        if (in >> port && port > 0) {
            port_ = static_cast<unsigned short>(port);
            return;
        }
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            throw std::runtime_error("genhost exited during start:\n" + Log());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("genhost did not start in time:\n" + Log());
}

void ServerProcess::Signal(int sig) {
    if (pid_ > 0) kill(pid_, sig);
}

std::optional<int> ServerProcess::WaitExit(std::chrono::milliseconds timeout) {
    if (pid_ <= 0) return std::nullopt;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        int status = 0;
        const pid_t r = waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            pid_ = -1;
            if (WIFEXITED(status)) return WEXITSTATUS(status);
            if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
            return -1;
        }
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

std::string ServerProcess::Log() const {
    std::ifstream in(dir_ + "/server.log");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

int ServerProcess::RunCommand(const std::string& args, std::string* out) const {
    const std::string file = dir_ + "/command.out";
    const std::string cmd = "DATABASE_URL='" + dsn_ + "' GENHOST_LOG_LEVEL=warn " + GENHOST_BINARY +
                            " " + args + " >" + file + " 2>&1";
    const int rc = std::system(cmd.c_str());
    if (out != nullptr) {
        std::ifstream in(file);
        std::ostringstream s;
        s << in.rdbuf();
        *out = s.str();
    }
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace genhost::testing
