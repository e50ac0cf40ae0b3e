// The HTTP provider (genhost/providers/http_provider.hpp) against FakeProvider on loopback, in
// process: submission body and headers, outputs of every shape, progress, retries with backoff,
// each failure mapping of docs/providers.md, cancellation and timeouts deleting the job, output
// size caps, stored inputs sent inline, and verified TLS.
#include "support/fake_provider.hpp"
#include "support/media_fixtures.hpp"

#include "genhost/catalog/catalog.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/providers/http_provider.hpp"
#include "genhost/providers/inputs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace genhost::testing {
namespace {

using providers::HttpProvider;
using providers::HttpProviderOptions;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

const catalog::Catalog& TheCatalog() {
    static const auto catalog = catalog::Catalog::LoadEmbedded();
    return *catalog;
}

std::string ReadAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

HttpProviderOptions FastOptions(const std::string& url) {
    HttpProviderOptions o;
    o.name = "fake";
    o.url = url;
    o.poll_interval = std::chrono::milliseconds(20);
    o.request_timeout = std::chrono::milliseconds(2000);
    o.retries = 2;
    o.backoff = std::chrono::milliseconds(10);
    return o;
}

// StoredInputs resolves "stored:NAME" media strings to files of a folder, like the worker's
// resolver does for stored inputs; data URIs through the data URI resolver.
class StoredInputs : public providers::InputResolver {
  public:
    explicit StoredInputs(std::string dir) : dir_(std::move(dir)) {}
    std::string Resolve(const std::string& media, MediaKind kind,
                        const std::string& scratch) const override {
        if (media.rfind("stored:", 0) == 0) return dir_ + "/" + media.substr(7);
        return providers::DataUriResolver().Resolve(media, kind, scratch);
    }

  private:
    std::string dir_;
};

// Outcome of one run of a provider on a task.
struct Outcome {
    std::vector<providers::Output> outputs;
    std::string code;  // failure code; "CANCELLED" when cancelled; "" on success
    std::string message;
    std::vector<double> progress;
    Clock::time_point cancelled_at;
};

class ProviderProtocol : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/genhost-provider-test.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        std::filesystem::create_directories(dir_ + "/scratch");
        std::filesystem::create_directories(dir_ + "/stored");
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    json ImageInput(const std::string& prompt) {
        return {{"model", "gen4_image"}, {"promptText", prompt}, {"ratio", "1280:720"}};
    }

    // Run runs `provider` on a task with `input`; `cancel_when` (polled every 5 ms) cancels it.
    Outcome Run(HttpProvider& provider, const json& input,
                const std::string& endpoint = "text_to_image",
                const std::function<bool()>& cancel_when = {}) {
        Outcome out;
        std::atomic<bool> cancelled{false};
        std::mutex mu;
        auto progress = [&](double f) {
            std::lock_guard lock(mu);
            out.progress.push_back(f);
        };
        StoredInputs inputs(dir_ + "/stored");
        providers::TaskContext ctx(task_id_, endpoint, input["model"].get<std::string>(), input,
                                   cancelled, progress, dir_ + "/scratch", &inputs);
        std::atomic<bool> done{false};
        std::thread canceller;
        if (cancel_when) {
            canceller = std::thread([&] {
                while (!done && !cancel_when())
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                if (done) return;
                out.cancelled_at = Clock::now();
                cancelled = true;
            });
        }
        try {
            out.outputs = provider.Run(ctx);
        } catch (const providers::TaskFailure& e) {
            out.code = e.code();
            out.message = e.what();
        } catch (const providers::Cancelled&) {
            out.code = "CANCELLED";
        }
        done = true;
        if (canceller.joinable()) canceller.join();
        return out;
    }

    std::string dir_;
    std::string task_id_ = "6f1c2e3d-0000-4aaa-8bbb-cccccccccccc";
};

TEST_F(ProviderProtocol, SubmitsTheTaskAndReturnsTheDownloadedOutput) {
    FakeProvider fake;
    HttpProvider provider(FastOptions(fake.Url()), TheCatalog());
    const auto out = Run(provider, ImageInput("succeed a lighthouse"));
    ASSERT_EQ(out.code, "") << out.message;
    ASSERT_EQ(out.outputs.size(), 1u);
    EXPECT_EQ(out.outputs[0].suffix, "0.png");
    EXPECT_TRUE(out.outputs[0].data.empty());
    EXPECT_EQ(ReadAll(out.outputs[0].file), fake.OutputPng());
    EXPECT_EQ(std::filesystem::path(out.outputs[0].file).parent_path(), dir_ + "/scratch");

    const auto submissions = fake.Submissions();
    ASSERT_EQ(submissions.size(), 1u);
    const json& s = submissions[0];
    EXPECT_EQ(s["taskId"], task_id_);
    EXPECT_EQ(s["endpoint"], "text_to_image");
    EXPECT_EQ(s["model"], "gen4_image");
    EXPECT_EQ(s["input"], ImageInput("succeed a lighthouse"));
    EXPECT_EQ(s["inputs"], json::array());
    const auto post = fake.Find("POST", "/v1/tasks");
    ASSERT_TRUE(post);
    EXPECT_EQ(post->headers.at("content-type"), "application/json");
    EXPECT_THAT(post->headers.at("idempotency-key"), HasSubstr(task_id_));
    // Once the outputs are downloaded genhost releases the job.
    EXPECT_TRUE(fake.Find("DELETE", "/v1/tasks/" + fake.JobOf(task_id_)));
}

TEST_F(ProviderProtocol, OutputsMayBeRelativeAbsoluteOrTypedByContentType) {
    FakeProvider fake;
    HttpProvider provider(FastOptions(fake.Url()), TheCatalog());
    const auto out = Run(provider, ImageInput("multi"));
    ASSERT_EQ(out.code, "") << out.message;
    ASSERT_EQ(out.outputs.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(out.outputs[i].suffix, std::to_string(i) + ".png");
        EXPECT_EQ(ReadAll(out.outputs[i].file), fake.OutputPng());
    }
}

TEST_F(ProviderProtocol, ProgressRisesFromZeroToOne) {
    FakeProvider fake;
    HttpProvider provider(FastOptions(fake.Url()), TheCatalog());
    const auto out = Run(provider, ImageInput("slow"));
    ASSERT_EQ(out.code, "") << out.message;
    ASSERT_GE(out.progress.size(), 5u);
    EXPECT_EQ(out.progress.front(), 0.0);
    EXPECT_EQ(out.progress.back(), 1.0);
    EXPECT_TRUE(std::is_sorted(out.progress.begin(), out.progress.end()));
    const auto middle = std::count_if(out.progress.begin(), out.progress.end(),
                                      [](double f) { return f > 0.1 && f < 0.85; });
    EXPECT_GE(middle, 3) << "the provider's progress shows while it runs";
}

TEST_F(ProviderProtocol, ServerErrorsAreRetriedWithTheSameIdempotencyKey) {
    FakeProvider fake;
    HttpProvider provider(FastOptions(fake.Url()), TheCatalog());
    const auto out = Run(provider, ImageInput("flaky"));
    ASSERT_EQ(out.code, "") << out.message;
    EXPECT_EQ(out.outputs.size(), 1u);
    std::vector<FakeProvider::Seen> posts;
    for (const auto& r : fake.Requests()) {
        if (r.method == "POST") posts.push_back(r);
    }
    ASSERT_EQ(posts.size(), 3u);
    EXPECT_EQ(posts[0].headers.at("idempotency-key"), posts[2].headers.at("idempotency-key"));
    // Backoff: 10 ms, then 20 ms.
    EXPECT_GE(posts[1].at - posts[0].at, std::chrono::milliseconds(10));
    EXPECT_GE(posts[2].at - posts[1].at, std::chrono::milliseconds(20));

    const auto polled = Run(provider, ImageInput("flaky-poll"));
    EXPECT_EQ(polled.code, "") << polled.message;
}

TEST_F(ProviderProtocol, PermanentServerErrorsEndUnavailable) {
    FakeProvider fake;
    HttpProvider provider(FastOptions(fake.Url()), TheCatalog());
    const auto out = Run(provider, ImageInput("down"));
    EXPECT_EQ(out.code, "THIRD_PARTY.UNAVAILABLE");
    EXPECT_THAT(out.message, Not(HasSubstr("503")));
    EXPECT_EQ(fake.Submissions().size(), 3u);  // one try and two retries
}

TEST_F(ProviderProtocol, AnUnreachableProviderEndsUnavailable) {
    std::string url;
    {
        FakeProvider gone;
        url = gone.Url();
    }
    HttpProvider provider(FastOptions(url), TheCatalog());
    const auto out = Run(provider, ImageInput("succeed"));
    EXPECT_EQ(out.code, "THIRD_PARTY.UNAVAILABLE");
}

TEST_F(ProviderProtocol, ARefusalEndsInputValidationWithTheProvidersReason) {
    FakeProvider fake;
    HttpProvider provider(FastOptions(fake.Url()), TheCatalog());
    const auto out = Run(provider, ImageInput("refuse"));
    EXPECT_EQ(out.code, "THIRD_PARTY.INPUT_VALIDATION");
    EXPECT_EQ(out.message, "The fake provider refuses purple.");
    EXPECT_EQ(fake.Submissions().size(), 1u) << "a refusal is not retried";
}

TEST_F(ProviderProtocol, ProtocolViolationsEndInternal) {
    FakeProvider fake;
    HttpProvider provider(FastOptions(fake.Url()), TheCatalog());
    for (const std::string scenario : {"garbage", "garbage-poll", "no-outputs", "unauthorized"}) {
        const auto out = Run(provider, ImageInput(scenario));
        EXPECT_EQ(out.code, "INTERNAL") << scenario;
        EXPECT_THAT(out.message, Not(HasSubstr("DANCING"))) << scenario;
    }
    // A job that broke the protocol while running is deleted.
    const auto requests = fake.Requests();
    const auto deletes = std::count_if(requests.begin(), requests.end(),
                                       [](const auto& r) { return r.method == "DELETE"; });
    EXPECT_EQ(deletes, 2);  // garbage-poll and no-outputs had jobs
}

TEST_F(ProviderProtocol, FailedJobsKeepKnownCodesOnly) {
    FakeProvider fake;
    HttpProvider provider(FastOptions(fake.Url()), TheCatalog());
    const auto safety = Run(provider, ImageInput("fail-safety"));
    EXPECT_EQ(safety.code, "SAFETY.INPUT.TEXT");
    EXPECT_EQ(safety.message, "The fake provider saw a forbidden colour.");
    const auto unknown = Run(provider, ImageInput("fail-unknown"));
    EXPECT_EQ(unknown.code, "INTERNAL");
    EXPECT_THAT(unknown.message, Not(HasSubstr("CUDA")));
}

TEST_F(ProviderProtocol, CancellationDeletesTheJobWithinASecond) {
    FakeProvider fake;
    HttpProvider provider(FastOptions(fake.Url()), TheCatalog());
    const auto out = Run(provider, ImageInput("forever"), "text_to_image",
                         [&] { return fake.Find("GET", "/v1/tasks/job-").has_value(); });
    ASSERT_EQ(out.code, "CANCELLED");
    const auto del = fake.Find("DELETE", "/v1/tasks/" + fake.JobOf(task_id_));
    ASSERT_TRUE(del);
    EXPECT_LT(del->at - out.cancelled_at, std::chrono::seconds(1));
    EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/scratch"));
}

TEST_F(ProviderProtocol, ATaskThatOutlivesItsTimeoutIsDeletedAndUnavailable) {
    FakeProvider fake;
    auto o = FastOptions(fake.Url());
    o.task_timeout = std::chrono::milliseconds(300);
    HttpProvider provider(o, TheCatalog());
    const auto started = Clock::now();
    const auto out = Run(provider, ImageInput("forever"));
    EXPECT_EQ(out.code, "THIRD_PARTY.UNAVAILABLE");
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(2));
    EXPECT_TRUE(fake.Find("DELETE", "/v1/tasks/" + fake.JobOf(task_id_)));
}

TEST_F(ProviderProtocol, AnOutputOverTheCapIsABadOutput) {
    FakeProvider fake;
    auto o = FastOptions(fake.Url());
    o.max_output_bytes = 1 << 20;
    HttpProvider provider(o, TheCatalog());
    const auto out = Run(provider, ImageInput("huge"));
    EXPECT_EQ(out.code, "INTERNAL.BAD_OUTPUT.CODE01");
    o.max_output_bytes = 4 << 20;
    HttpProvider roomy(o, TheCatalog());
    const auto ok = Run(roomy, ImageInput("huge"));
    ASSERT_EQ(ok.code, "") << ok.message;
    EXPECT_EQ(ok.outputs[0].suffix, "0.mp4");
}

TEST_F(ProviderProtocol, MediaInputsTravelAsUrlsOrInlineDataUris) {
    FakeProvider fake;
    HttpProvider provider(FastOptions(fake.Url()), TheCatalog());
    const std::string png = MakePng(32, 32);
    const std::string data_uri = "data:image/png;base64," + Base64Encode(png);
    json input = {{"model", "gen4.5"},
                  {"promptText", "succeed"},
                  {"promptImage", data_uri},
                  {"ratio", "1280:720"},
                  {"duration", 5}};
    ASSERT_EQ(Run(provider, input, "image_to_video").code, "");
    // A stored input (a file the worker's resolver names) is sent inline, typed by its bytes.
    std::ofstream(dir_ + "/stored/input_0", std::ios::binary) << png;
    input["promptImage"] = json::array({{{"uri", "stored:input_0"}, {"position", "first"}}});
    ASSERT_EQ(Run(provider, input, "image_to_video").code, "");
    input["promptImage"] = "https://media.example/cat.png";
    ASSERT_EQ(Run(provider, input, "image_to_video").code, "");

    const auto s = fake.Submissions();
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0]["inputs"],
              json::array({{{"pointer", "/promptImage"}, {"kind", "image"}, {"url", data_uri}}}));
    EXPECT_EQ(s[0]["input"]["promptImage"], data_uri);
    EXPECT_EQ(s[1]["inputs"][0]["pointer"], "/promptImage/0/uri");
    EXPECT_EQ(s[1]["inputs"][0]["url"], data_uri);
    EXPECT_EQ(s[1]["input"]["promptImage"][0]["uri"], data_uri);
    EXPECT_EQ(s[1]["input"]["promptImage"][0]["position"], "first");
    EXPECT_EQ(s[2]["inputs"][0]["url"], "https://media.example/cat.png");

    // Too large to inline: genhost says so instead of sending it.
    auto o = FastOptions(fake.Url());
    o.max_inline_input_bytes = 100;
    HttpProvider small(o, TheCatalog());
    input["promptImage"] = "stored:input_0";
    const auto refused = Run(small, input, "image_to_video");
    EXPECT_EQ(refused.code, "INTERNAL");
    EXPECT_THAT(refused.message, HasSubstr("too large"));
}

TEST_F(ProviderProtocol, HttpsIsVerified) {
    FakeProvider fake(/*tls=*/true);
    auto o = FastOptions(fake.Url());
    o.ca_file = fake.CaFile();
    HttpProvider trusted(o, TheCatalog());
    const auto ok = Run(trusted, ImageInput("succeed"));
    ASSERT_EQ(ok.code, "") << ok.message;
    EXPECT_EQ(ReadAll(ok.outputs[0].file), fake.OutputPng());

    // The system's trust store does not know the test CA: no connection, no job.
    auto untrusted_options = FastOptions(fake.Url());
    untrusted_options.retries = 0;
    HttpProvider untrusted(untrusted_options, TheCatalog());
    EXPECT_EQ(Run(untrusted, ImageInput("succeed")).code, "THIRD_PARTY.UNAVAILABLE");
    EXPECT_EQ(fake.Submissions().size(), 1u);

    // The certificate names localhost, not 127.0.0.1.
    auto by_address = o;
    by_address.url = "https://127.0.0.1:" + std::to_string(fake.port());
    by_address.retries = 0;
    HttpProvider mismatched(by_address, TheCatalog());
    EXPECT_EQ(Run(mismatched, ImageInput("succeed")).code, "THIRD_PARTY.UNAVAILABLE");
    EXPECT_EQ(fake.Submissions().size(), 1u);
}

TEST(HttpProviderOptions, RefusesMalformedUrlsAndHeaders) {
    HttpProviderOptions o;
    o.name = "x";
    o.url = "ftp://example";
    EXPECT_THROW(HttpProvider(o, TheCatalog()), std::invalid_argument);
    o.url = "http://example/?q";
    EXPECT_THROW(HttpProvider(o, TheCatalog()), std::invalid_argument);
    o.url = "http://example";
    o.headers = {{"X-Bad", "a\r\nInjected: 1"}};
    EXPECT_THROW(HttpProvider(o, TheCatalog()), std::invalid_argument);
    o.headers = {};
    o.ca_file = "/nonexistent/ca.pem";
    EXPECT_THROW(HttpProvider(o, TheCatalog()), std::runtime_error);
}

}  // namespace
}  // namespace genhost::testing
