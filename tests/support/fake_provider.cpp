#include "support/fake_provider.hpp"

#include "support/media_fixtures.hpp"
#include "support/tls_server.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

namespace genhost::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

constexpr auto kSlowRun = std::chrono::milliseconds(1500);

Response Answer(const Request& req, int status, const std::string& content_type, std::string body) {
    Response res(static_cast<http::status>(status), req.version());
    res.set(http::field::server, "fake-provider");
    if (!content_type.empty()) res.set(http::field::content_type, content_type);
    res.body() = std::move(body);
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    return res;
}

Response Json(const Request& req, int status, const json& body) {
    return Answer(req, status, "application/json", body.dump());
}

}  // namespace

struct FakeProvider::Impl {
    struct Job {
        std::string scenario;
        Clock::time_point created;
        bool deleted = false;
        int polls = 0;
    };

    explicit Impl(bool use_tls) : tls(use_tls) {
        png = MakePng(64, 36);
        if (tls) {
            const auto certs = MakeTestCertificates({"localhost"});
            server_tls.use_certificate_chain(asio::buffer(certs.cert_pem));
            server_tls.use_private_key(asio::buffer(certs.key_pem), ssl::context::pem);
            char tmpl[] = "/tmp/genhost-fake-ca.XXXXXX";
            const int fd = mkstemp(tmpl);
            if (fd < 0) throw std::runtime_error("mkstemp failed");
            close(fd);
            ca_file = tmpl;
            std::ofstream(ca_file) << certs.ca_pem;
        }
        acceptor.open(tcp::v4());
        acceptor.set_option(asio::socket_base::reuse_address(true));
        acceptor.bind({asio::ip::make_address("127.0.0.1"), 0});
        acceptor.listen();
        port = acceptor.local_endpoint().port();
        asio::co_spawn(ioc, Accept(), asio::detached);
        thread = std::thread([this] { ioc.run(); });
    }

    ~Impl() {
        ioc.stop();
        if (thread.joinable()) thread.join();
        if (!ca_file.empty()) std::filesystem::remove(ca_file);
    }

    asio::awaitable<void> Accept() {
        for (;;) {
            tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
            asio::co_spawn(ioc, Session(std::move(socket)), asio::detached);
        }
    }

    asio::awaitable<void> Session(tcp::socket socket) {
        try {
            if (tls) {
                beast::ssl_stream<tcp::socket> stream(std::move(socket), server_tls);
                co_await stream.async_handshake(ssl::stream_base::server, asio::use_awaitable);
                co_await Serve(stream);
            } else {
                co_await Serve(socket);
            }
        } catch (const std::exception&) {
            // The client went away (or failed its handshake); nothing to do.
        }
    }

    template <class Stream>
    asio::awaitable<void> Serve(Stream& stream) {
        beast::flat_buffer buffer;
        for (;;) {
            Request req;
            co_await http::async_read(stream, buffer, req, asio::use_awaitable);
            Record(req);
            Response res = Handle(req);
            co_await http::async_write(stream, res, asio::use_awaitable);
            if (!req.keep_alive()) co_return;
        }
    }

    void Record(const Request& req) {
        Seen seen;
        seen.method = std::string(req.method_string());
        seen.target = std::string(req.target());
        seen.body = req.body();
        for (const auto& field : req) {
            std::string name(field.name_string());
            for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            seen.headers[name] = std::string(field.value());
        }
        seen.at = Clock::now();
        std::lock_guard lock(mu);
        requests.push_back(std::move(seen));
    }

    std::string Base() const {
        return (tls ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(port);
    }

    json Outputs(const std::string& id, const std::string& scenario) const {
        if (scenario == "multi") {
            return json::array({{{"url", "/files/" + id + "/0.png"}},
                                {{"url", Base() + "/blob/" + id + "/1"}, {"extension", "png"}},
                                "/blob/" + id + "/2"});
        }
        if (scenario == "huge") return json::array({{{"url", "/huge/" + id}}});
        if (scenario == "no-outputs") return json::array();
        return json::array({{{"url", "/files/" + id + "/0.png"}}});
    }

    Response Handle(const Request& req) {
        const std::string target(req.target());
        const std::string tasks = "/v1/tasks";
        std::lock_guard lock(mu);
        if (req.method() == http::verb::post && target == tasks) return Submit(req);
        if (target.rfind(tasks + "/", 0) == 0) {
            const std::string id = target.substr(tasks.size() + 1);
            const auto it = jobs.find(id);
            if (it == jobs.end()) return Json(req, 404, {{"error", "no such job"}});
            Job& job = it->second;
            if (req.method() == http::verb::delete_) {
                job.deleted = true;
                return Answer(req, 204, "", "");
            }
            if (req.method() == http::verb::get) return Poll(req, id, job);
            return Json(req, 405, {{"error", "method"}});
        }
        if (req.method() == http::verb::get && target.rfind("/files/", 0) == 0) {
            return Answer(req, 200, "image/png", png);
        }
        if (req.method() == http::verb::get && target.rfind("/blob/", 0) == 0) {
            return Answer(req, 200, "image/png", png);
        }
        if (req.method() == http::verb::get && target.rfind("/huge/", 0) == 0) {
            return Answer(req, 200, "video/mp4", std::string(3 << 20, '\0'));
        }
        return Json(req, 404, {{"error", "not found"}});
    }

    Response Submit(const Request& req) {
        const json body = json::parse(req.body(), nullptr, false);
        if (!body.is_object() || !body.contains("taskId") || !body.contains("input")) {
            return Json(req, 400, {{"error", "not a submission"}});
        }
        submissions.push_back(body);
        const std::string task = body["taskId"].get<std::string>();
        std::string prompt = body["input"].value("promptText", std::string());
        const std::string scenario = prompt.substr(0, prompt.find(' '));
        if (scenario == "down") return Json(req, 503, {{"error", "overloaded"}});
        if (scenario == "flaky" && ++submit_failures[task] <= 2) {
            return Json(req, 500, {{"error", "try again"}});
        }
        if (scenario == "refuse") {
            return Json(req, 422, {{"error", "The fake provider refuses purple."}});
        }
        if (scenario == "unauthorized") return Json(req, 401, {{"error", "who are you"}});
        if (scenario == "garbage") return Answer(req, 200, "text/html", "<html>oops</html>");
        const std::string id = "job-" + std::to_string(++next_job);
        jobs[id] = Job{scenario, Clock::now()};
        job_of_task[task] = id;
        return Json(req, 202, {{"id", id}, {"status", "PENDING"}});
    }

    Response Poll(const Request& req, const std::string& id, Job& job) {
        ++job.polls;
        if (job.deleted) return Json(req, 200, {{"status", "CANCELLED"}});
        const std::string& s = job.scenario;
        if (s == "flaky-poll" && job.polls <= 2) return Json(req, 502, {{"error", "gateway"}});
        if (s == "garbage-poll") return Json(req, 200, {{"status", "DANCING"}});
        if (s == "forever") return Json(req, 200, {{"status", "RUNNING"}, {"progress", 0.1}});
        if (s == "slow") {
            const auto elapsed = Clock::now() - job.created;
            if (elapsed < kSlowRun) {
                const double f = std::chrono::duration<double>(elapsed) / kSlowRun;
                return Json(req, 200, {{"status", "RUNNING"}, {"progress", f}});
            }
        }
        if (s == "fail-safety") {
            return Json(req, 200,
                        {{"status", "FAILED"},
                         {"failureCode", "SAFETY.INPUT.TEXT"},
                         {"failure", "The fake provider saw a forbidden colour."}});
        }
        if (s == "fail-unknown") {
            return Json(req, 200,
                        {{"status", "FAILED"},
                         {"failureCode", "GPU.OOM"},
                         {"failure", "CUDA out of memory at /opt/model"}});
        }
        return Json(req, 200,
                    {{"status", "SUCCEEDED"}, {"progress", 1}, {"outputs", Outputs(id, s)}});
    }

    const bool tls;
    std::string png;
    std::string ca_file;
    // The TLS context outlives the io_context, whose destruction ends the pending sessions.
    ssl::context server_tls{ssl::context::tls_server};
    asio::io_context ioc;
    tcp::acceptor acceptor{ioc};
    unsigned short port = 0;
    std::thread thread;

    mutable std::mutex mu;
    std::vector<Seen> requests;
    std::vector<json> submissions;
    std::map<std::string, Job> jobs;
    std::map<std::string, std::string> job_of_task;
    std::map<std::string, int> submit_failures;
    int next_job = 0;
};

FakeProvider::FakeProvider(bool tls) : impl_(std::make_unique<Impl>(tls)) {}
FakeProvider::~FakeProvider() = default;

unsigned short FakeProvider::port() const { return impl_->port; }
std::string FakeProvider::Url() const { return impl_->Base(); }
std::string FakeProvider::CaFile() const { return impl_->ca_file; }
const std::string& FakeProvider::OutputPng() const { return impl_->png; }

std::vector<FakeProvider::Seen> FakeProvider::Requests() const {
    std::lock_guard lock(impl_->mu);
    return impl_->requests;
}

std::optional<FakeProvider::Seen> FakeProvider::Find(const std::string& method,
                                                     const std::string& prefix) const {
    std::lock_guard lock(impl_->mu);
    for (const auto& r : impl_->requests) {
        if (r.method == method && r.target.rfind(prefix, 0) == 0) return r;
    }
    return std::nullopt;
}

std::vector<json> FakeProvider::Submissions() const {
    std::lock_guard lock(impl_->mu);
    return impl_->submissions;
}

std::string FakeProvider::JobOf(const std::string& task_id) const {
    std::lock_guard lock(impl_->mu);
    const auto it = impl_->job_of_task.find(task_id);
    return it == impl_->job_of_task.end() ? std::string() : it->second;
}

}  // namespace genhost::testing
