// Tests for S3OutputStore (genhost/outputs/s3_store.hpp) against a real S3-compatible server.
// tests/node/run_s3_store.sh (ctest node_s3_store) starts s3rver from npm on 127.0.0.1 with a
// bucket and runs this program with
//   GENHOST_TEST_S3_URL                 the endpoint, http://127.0.0.1:PORT
//   GENHOST_TEST_S3_BUCKET              the bucket
//   GENHOST_TEST_S3_ACCESS_KEY_ID       and GENHOST_TEST_S3_SECRET_ACCESS_KEY (s3rver's S3RVER)
//   GENHOST_TEST_S3_REGION              optional, us-east-1 by default
//   GENHOST_TEST_S3_CA_FILE             optional, the CA of an https endpoint
// Without GENHOST_TEST_S3_URL the server tests skip. Each test works under its own key prefix.
// Covered: Put (replacing), Stat, Read ranges (inside, at and past the end), PutFile streaming a
// 5 MB file and removing it, DeleteObject, DeleteTask across several ListObjectsV2 pages
// (max-keys 2) without touching a sibling task, error codes from the server's XML
// (SignatureDoesNotMatch, NoSuchBucket), certificate verification over https, unsafe names. The
// option checks, the XML listing parser, and retries (against a small flaky server on loopback
// that answers 503 first) are tested offline.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "genhost/core/ids.hpp"
#include "genhost/outputs/s3_store.hpp"

namespace genhost::outputs {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Env(const char* name, const std::string& fallback = "") {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : fallback;
}

class S3OutputStoreTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (Env("GENHOST_TEST_S3_URL").empty()) {
            GTEST_SKIP() << "GENHOST_TEST_S3_URL is not set (tests/node/run_s3_store.sh sets it)";
        }
        options_.endpoint = Env("GENHOST_TEST_S3_URL");
        options_.bucket = Env("GENHOST_TEST_S3_BUCKET", "genhost-test");
        options_.access_key_id = Env("GENHOST_TEST_S3_ACCESS_KEY_ID", "S3RVER");
        options_.secret_access_key = Env("GENHOST_TEST_S3_SECRET_ACCESS_KEY", "S3RVER");
        options_.region = Env("GENHOST_TEST_S3_REGION", "us-east-1");
        options_.ca_file = Env("GENHOST_TEST_S3_CA_FILE");
        options_.prefix = "test-" + NewUuid() + "/outputs/";
        options_.timeout = std::chrono::seconds(20);
        store_ = std::make_unique<S3OutputStore>(options_);
    }

    S3Options options_;
    std::unique_ptr<S3OutputStore> store_;
};

// Issue 32: every request is counted by method and status class, and timed; a request that
// gets no answer counts as `error`.
TEST_F(S3OutputStoreTest, RequestsAreCountedByMethodAndStatusClass) {
    metrics::Registry registry;
    S3Options counted = options_;
    counted.metrics = &registry;
    S3OutputStore store(counted);
    store.Put("task-m", "0.png", "0123456789");
    EXPECT_TRUE(store.Stat("task-m", "0.png").has_value());
    EXPECT_FALSE(store.Stat("task-m", "missing.png").has_value());
    store.DeleteTask("task-m");
    S3Options closed = counted;
    closed.endpoint = "http://127.0.0.1:1";  // nothing listens there
    EXPECT_THROW(S3OutputStore(closed).Put("task-m", "1.png", "x"), std::runtime_error);
    std::string text;
    registry.Render(text);
    EXPECT_THAT(text, HasSubstr("genhost_s3_requests_total{method=\"PUT\",status=\"2xx\"} 1\n"));
    EXPECT_THAT(text, HasSubstr("genhost_s3_requests_total{method=\"HEAD\",status=\"2xx\"} 1\n"));
    EXPECT_THAT(text, HasSubstr("genhost_s3_requests_total{method=\"HEAD\",status=\"4xx\"} 1\n"));
    EXPECT_THAT(text, HasSubstr("genhost_s3_requests_total{method=\"GET\",status=\"2xx\"}"));
    // Three attempts (S3Options.attempts) at the closed port.
    EXPECT_THAT(text, HasSubstr("genhost_s3_requests_total{method=\"PUT\",status=\"error\"} 3\n"));
    EXPECT_THAT(text, HasSubstr("genhost_s3_request_duration_seconds_count{method=\"PUT\"} 4\n"));
}

TEST_F(S3OutputStoreTest, PutStatReadAndDeleteObject) {
    EXPECT_EQ(store_->Stat("task-1", "0.png"), std::nullopt);
    store_->Put("task-1", "0.png", "0123456789");
    auto info = store_->Stat("task-1", "0.png");
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->size, 10u);
    EXPECT_EQ(info->content_type, "image/png");

    EXPECT_EQ(store_->Read("task-1", "0.png", 0, 10), "0123456789");
    EXPECT_EQ(store_->Read("task-1", "0.png", 2, 3), "234");
    EXPECT_EQ(store_->Read("task-1", "0.png", 9, 1), "9");
    EXPECT_EQ(store_->Read("task-1", "0.png", 7, 100), "789");  // fewer at the end
    EXPECT_EQ(store_->Read("task-1", "0.png", 10, 5), "");      // at the end
    EXPECT_EQ(store_->Read("task-1", "0.png", 50, 5), "");      // past the end
    EXPECT_EQ(store_->Read("task-1", "0.png", 3, 0), "");

    // Put replaces the object as a whole.
    store_->Put("task-1", "0.png", "abc");
    info = store_->Stat("task-1", "0.png");
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->size, 3u);
    EXPECT_EQ(store_->Read("task-1", "0.png", 0, 10), "abc");

    // An empty object and a binary one.
    store_->Put("task-1", "empty.json", "");
    info = store_->Stat("task-1", "empty.json");
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->size, 0u);
    EXPECT_EQ(info->content_type, "application/json");
    const std::string binary("\0\x01\xff\r\n\0z", 7);
    store_->Put("task-1", "b.bin", binary);
    EXPECT_EQ(store_->Read("task-1", "b.bin", 0, 7), binary);

    store_->DeleteObject("task-1", "0.png");
    EXPECT_EQ(store_->Stat("task-1", "0.png"), std::nullopt);
    EXPECT_NO_THROW(store_->DeleteObject("task-1", "0.png"));  // gone already: no error
    EXPECT_THAT(store_->ListTask("task-1"), ElementsAre("b.bin", "empty.json"));
    store_->DeleteTask("task-1");
    EXPECT_TRUE(store_->ListTask("task-1").empty());
}

TEST_F(S3OutputStoreTest, PutFileStreamsALargeFileAndRemovesIt) {
    const fs::path path = fs::temp_directory_path() / ("genhost-s3-test-" + NewUuid() + ".mp4");
    constexpr std::size_t kSize = 5 * 1024 * 1024 + 123;
    std::string content(kSize, '\0');
    std::uint32_t x = 2463534242u;  // xorshift: no repeating pattern a wrong offset could match
    for (auto& c : content) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c = static_cast<char>(x & 0xff);
    }
    {
        std::ofstream out(path, std::ios::binary);
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
    }
    store_->PutFile("task-2", "0.mp4", path.string());
    EXPECT_FALSE(fs::exists(path));

    const auto info = store_->Stat("task-2", "0.mp4");
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->size, kSize);
    EXPECT_EQ(info->content_type, "video/mp4");
    EXPECT_EQ(store_->Read("task-2", "0.mp4", 0, 1000), content.substr(0, 1000));
    EXPECT_EQ(store_->Read("task-2", "0.mp4", 3'000'000, 65536), content.substr(3'000'000, 65536));
    EXPECT_EQ(store_->Read("task-2", "0.mp4", kSize - 10, 1000), content.substr(kSize - 10));
    EXPECT_TRUE(store_->Read("task-2", "0.mp4", 0, kSize) == content);

    // A missing source file is an error and stores nothing.
    EXPECT_THROW(store_->PutFile("task-2", "1.mp4", path.string()), std::runtime_error);
    EXPECT_EQ(store_->Stat("task-2", "1.mp4"), std::nullopt);
    store_->DeleteTask("task-2");
    EXPECT_EQ(store_->Stat("task-2", "0.mp4"), std::nullopt);
}

TEST_F(S3OutputStoreTest, DeleteTaskFollowsContinuationTokensAndSparesOtherTasks) {
    options_.list_max_keys = 2;  // five objects: three pages
    S3OutputStore store(options_);
    for (const char* name : {"0.png", "1.png", "2.png", "3.mp4", "4.json"}) {
        store.Put("task-3", name, name);
    }
    store.Put("task-30", "0.png", "sibling");  // shares the text prefix "task-3", not the folder
    store.Put("other", "0.png", "other");
    EXPECT_THAT(store.ListTask("task-3"),
                ElementsAre("0.png", "1.png", "2.png", "3.mp4", "4.json"));

    store.DeleteTask("task-3");
    EXPECT_TRUE(store.ListTask("task-3").empty());
    EXPECT_EQ(store.Stat("task-3", "2.png"), std::nullopt);
    EXPECT_EQ(store.Read("task-30", "0.png", 0, 100), "sibling");
    EXPECT_EQ(store.Read("other", "0.png", 0, 100), "other");

    EXPECT_NO_THROW(store.DeleteTask("task-3"));  // nothing left: no error
    EXPECT_NO_THROW(store.DeleteTask("never-existed"));
    store.DeleteTask("task-30");
    store.DeleteTask("other");
    EXPECT_TRUE(store.ListTask("task-30").empty());
}

TEST_F(S3OutputStoreTest, ServerErrorsCarryTheS3Code) {
    S3Options wrong_secret = options_;
    wrong_secret.secret_access_key = "not-the-secret";
    S3OutputStore bad(wrong_secret);
    try {
        bad.Put("task-4", "0.png", "x");
        FAIL() << "a wrong secret must fail";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("SignatureDoesNotMatch"));
        EXPECT_THAT(e.what(), HasSubstr("403"));
    }
    EXPECT_EQ(store_->Stat("task-4", "0.png"), std::nullopt);

    S3Options no_bucket = options_;
    no_bucket.bucket = "genhost-missing-" + NewUuid().substr(0, 8);
    S3OutputStore missing(no_bucket);
    try {
        missing.Put("task-4", "0.png", "x");
        FAIL() << "a missing bucket must fail";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("NoSuchBucket"));
    }
    try {
        missing.DeleteTask("task-4");
        FAIL() << "listing a missing bucket must fail";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("NoSuchBucket"));
    }
    EXPECT_THROW(store_->Read("task-4", "missing.png", 0, 10), std::runtime_error);
}

TEST_F(S3OutputStoreTest, HttpsVerifiesTheServerCertificate) {
    // Over https (GENHOST_TEST_S3_CA_FILE names the test CA) the store trusts only that CA: with
    // the system's trust store the handshake fails. Over http there is nothing to check.
    if (options_.endpoint.rfind("https://", 0) != 0) return;
    ASSERT_FALSE(options_.ca_file.empty());
    store_->Put("task-6", "0.png", "tls");
    EXPECT_EQ(store_->Read("task-6", "0.png", 0, 10), "tls");
    S3Options untrusted = options_;
    untrusted.ca_file.clear();
    S3OutputStore system_trust(untrusted);
    try {
        system_trust.Stat("task-6", "0.png");
        FAIL() << "a certificate from the test CA must not verify against the system's store";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("S3 HEAD"));
    }
    store_->DeleteTask("task-6");
}

TEST_F(S3OutputStoreTest, UnsafeNamesNeverReachTheServer) {
    EXPECT_THROW(store_->Put("../x", "0.png", "x"), std::invalid_argument);
    EXPECT_THROW(store_->Put("task-5", "a/b.png", "x"), std::invalid_argument);
    EXPECT_THROW(store_->Read("task-5", ".hidden", 0, 1), std::invalid_argument);
    EXPECT_EQ(store_->Stat("task-5", "a b.png"), std::nullopt);
    EXPECT_NO_THROW(store_->DeleteObject("task-5", "../0.png"));
    EXPECT_NO_THROW(store_->DeleteTask(".."));
}

// FlakyS3 answers the first `failures` requests 503 SlowDown and the rest 200, and keeps each
// request's method and body. It closes each connection after one answer (without saying so, as a
// server whose keep-alive timed out does), or with `keep_alive` serves a connection until the
// client closes it.
class FlakyS3 {
  public:
    explicit FlakyS3(int failures, bool keep_alive = false)
        : failures_(failures), keep_alive_(keep_alive) {
        acceptor_.open(tcp::v4());
        acceptor_.bind({boost::asio::ip::make_address("127.0.0.1"), 0});
        acceptor_.listen();
        thread_ = std::thread([this] { Serve(); });
    }
    ~FlakyS3() {
        stop_ = true;
        boost::system::error_code ec;
        tcp::socket wake(ioc_);
        wake.connect(acceptor_.local_endpoint(), ec);  // unblocks accept
        thread_.join();
    }
    std::string url() const {
        return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
    }
    std::vector<std::string> requests() const {
        std::lock_guard lock(mu_);
        return requests_;
    }
    int connections() const { return connections_.load(); }

  private:
    using tcp = boost::asio::ip::tcp;
    void Serve() {
        namespace http = boost::beast::http;
        while (true) {
            boost::system::error_code ec;
            tcp::socket socket(ioc_);
            acceptor_.accept(socket, ec);
            if (ec || stop_) return;
            ++connections_;
            boost::beast::flat_buffer buffer;
            do {
                http::request<http::string_body> req;
                http::read(socket, buffer, req, ec);
                if (ec) break;
                {
                    std::lock_guard lock(mu_);
                    requests_.push_back(std::string(req.method_string()) + " " + req.body());
                }
                const bool fail = failures_-- > 0;
                http::response<http::string_body> res{
                    fail ? http::status::service_unavailable : http::status::ok, 11};
                if (fail) {
                    res.body() = "<Error><Code>SlowDown</Code><Message>busy</Message></Error>";
                }
                res.prepare_payload();
                http::write(socket, res, ec);
            } while (keep_alive_ && !ec);
            socket.shutdown(tcp::socket::shutdown_both, ec);
        }
    }

    boost::asio::io_context ioc_;
    tcp::acceptor acceptor_{ioc_};
    int failures_;
    bool keep_alive_;
    std::atomic<int> connections_{0};
    std::atomic<bool> stop_{false};
    mutable std::mutex mu_;
    std::vector<std::string> requests_;
    std::thread thread_;
};

S3Options FlakyOptions(const FlakyS3& server, metrics::Registry* registry) {
    S3Options o;
    o.endpoint = server.url();
    o.bucket = "b";
    o.access_key_id = "k";
    o.secret_access_key = "s";
    o.retry_base = std::chrono::milliseconds(10);
    o.metrics = registry;
    return o;
}

// Issue 32: S3 retries a 5xx and a request without an answer, up to `attempts` in all, and a
// streamed file is sent whole again.
TEST(S3RetryTest, A5xxIsRetriedAndAStreamedFileIsSentWholeAgain) {
    metrics::Registry registry;
    {
        FlakyS3 server(2);
        S3OutputStore(FlakyOptions(server, &registry)).Put("t", "0.png", "0123456789");
        EXPECT_THAT(server.requests(),
                    ElementsAre("PUT 0123456789", "PUT 0123456789", "PUT 0123456789"));
    }
    {
        FlakyS3 server(2);
        const fs::path file = fs::temp_directory_path() / ("genhost-s3-retry-" + NewUuid());
        std::ofstream(file) << std::string(100000, 'x') << "end";
        S3OutputStore(FlakyOptions(server, &registry)).PutFile("t", "1.mp4", file.string());
        const auto requests = server.requests();
        ASSERT_EQ(requests.size(), 3u);
        for (const auto& r : requests) EXPECT_EQ(r, "PUT " + std::string(100000, 'x') + "end");
        EXPECT_FALSE(fs::exists(file));  // removed once stored
    }
    std::string text;
    registry.Render(text);
    EXPECT_THAT(text, HasSubstr("genhost_s3_requests_total{method=\"PUT\",status=\"5xx\"} 4\n"));
    EXPECT_THAT(text, HasSubstr("genhost_s3_requests_total{method=\"PUT\",status=\"2xx\"} 2\n"));
}

// Issue 32: connections are reused while the server keeps them open, and a kept connection the
// server closed meanwhile costs nothing but a new connection: no error, no attempt.
TEST(S3RetryTest, ConnectionsAreReusedAndAClosedKeptOneIsReplaced) {
    {
        FlakyS3 server(0, /*keep_alive=*/true);
        metrics::Registry registry;
        S3OutputStore store(FlakyOptions(server, &registry));
        for (int i = 0; i < 5; ++i) store.Put("t", std::to_string(i) + ".png", "x");
        EXPECT_TRUE(store.Stat("t", "0.png").has_value());
        EXPECT_EQ(server.requests().size(), 6u);
        EXPECT_EQ(server.connections(), 1);
    }
    FlakyS3 server(0, /*keep_alive=*/false);
    metrics::Registry registry;
    S3OutputStore store(FlakyOptions(server, &registry));
    for (int i = 0; i < 5; ++i) store.Put("t", std::to_string(i) + ".png", "x");
    EXPECT_EQ(server.requests().size(), 5u);
    EXPECT_EQ(server.connections(), 5);
    std::string text;
    registry.Render(text);
    EXPECT_THAT(text, HasSubstr("genhost_s3_requests_total{method=\"PUT\",status=\"2xx\"} 5\n"));
    EXPECT_THAT(text, Not(HasSubstr("status=\"error\"")));
}

TEST(S3RetryTest, AttemptsAreBoundedAndTheLastAnswerIsReported) {
    FlakyS3 server(100);
    S3Options o = FlakyOptions(server, nullptr);
    o.attempts = 4;
    try {
        S3OutputStore(o).Put("t", "0.png", "x");
        ADD_FAILURE() << "Put succeeded";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("503 SlowDown: busy"));
    }
    EXPECT_EQ(server.requests().size(), 4u);
    // No answer at all (nothing listens): the same bound.
    metrics::Registry registry;
    S3Options closed = o;
    closed.endpoint = "http://127.0.0.1:1";
    closed.metrics = &registry;
    EXPECT_THROW(S3OutputStore(closed).Put("t", "0.png", "x"), std::runtime_error);
    std::string text;
    registry.Render(text);
    EXPECT_THAT(text, HasSubstr("genhost_s3_requests_total{method=\"PUT\",status=\"error\"} 4\n"));
}

TEST(S3OptionsTest, ConstructorChecksTheOptions) {
    S3Options o;
    o.endpoint = "http://127.0.0.1:9";
    o.bucket = "b";
    o.access_key_id = "k";
    o.secret_access_key = "s";
    EXPECT_NO_THROW(S3OutputStore{o});
    for (const char* bad : {"ftp://host", "http://", "http://host/path", "host:9000",
                            "http://host:port", "http://user@host"}) {
        S3Options b = o;
        b.endpoint = bad;
        EXPECT_THROW(S3OutputStore{b}, std::invalid_argument) << bad;
    }
    S3Options no_bucket = o;
    no_bucket.bucket.clear();
    EXPECT_THROW(S3OutputStore{no_bucket}, std::invalid_argument);
    S3Options no_secret = o;
    no_secret.secret_access_key.clear();
    EXPECT_THROW(S3OutputStore{no_secret}, std::invalid_argument);
    // A closed port is a transport error naming the request.
    o.timeout = std::chrono::seconds(5);
    S3OutputStore closed(o);
    try {
        closed.Put("task", "0.png", "x");
        FAIL() << "nothing listens on port 9";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("S3 PUT task/0.png"));
    }
}

TEST(S3ListParserTest, ReadsKeysTruncationAndToken) {
    const auto page = ParseListObjectsV2(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Name>b</Name><Prefix>p/t/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>"
        "<IsTruncated>true</IsTruncated>"
        "<Contents><Key>p/t/a&amp;b.png</Key><Size>3</Size></Contents>"
        "<Contents><Key>p/t/&#x3C;&#99;&gt;.mp4</Key><Size>4</Size></Contents>"
        "<NextContinuationToken>tok+/=&amp;</NextContinuationToken>"
        "</ListBucketResult>");
    EXPECT_THAT(page.keys, ElementsAre("p/t/a&b.png", "p/t/<c>.mp4"));
    EXPECT_TRUE(page.truncated);
    EXPECT_EQ(page.next_token, "tok+/=&");

    const auto last = ParseListObjectsV2(
        "<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount>"
        "</ListBucketResult>");
    EXPECT_TRUE(last.keys.empty());
    EXPECT_FALSE(last.truncated);
    EXPECT_EQ(last.next_token, "");
}

}  // namespace
}  // namespace genhost::outputs
