// Media inputs against a real server: an HTTPS fixture server on loopback with a CA made at run
// time serves every failure of SPEC.md's asset list, and genhost (trusting that CA and mapping
// the test hosts to loopback) must answer each with a 400 at the field's path and SPEC.md's
// message; good PNG and MP4 inputs are accepted and priced by their probed length. Data URIs,
// upload URIs, offline mode and the workers' resolver are covered too. All traffic stays on
// loopback.
#include "helpers.hpp"
#include "support/media_fixtures.hpp"
#include "support/tls_server.hpp"

#include "genhost/assets/fetcher.hpp"
#include "genhost/assets/resolver.hpp"
#include "genhost/core/crypto.hpp"

#include <gmock/gmock.h>
#include <pqxx/pqxx>

#include <filesystem>
#include <random>
#include <sstream>
#include <thread>

namespace genhost::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Path = std::vector<std::string>;

// Fixtures: made once, served by path.
struct Fixtures {
    std::string png = MakePng(640, 360);
    std::string wide_png = MakePng(2000, 100);  // 20:1
    std::string huge_png = MakePng(8001, 16);   // a side over 8000 px
    std::string mp4 = MakeMp4(320, 240, 4.0);   // 4 s at 10 fps
    std::string long_mp4 = MakeMp4(160, 120, 12.0);
    std::string short_mp4 = MakeMp4(160, 120, 2.0);
    std::string wav = MakeWav(6.0);
    std::string short_wav = MakeWav(3.0);
    std::string garbage = [] {
        std::string s(4096, '\0');
        std::mt19937 rng(3);
        for (char& c : s) c = static_cast<char>(rng());
        return s;
    }();
};

const Fixtures& Media() {
    static const Fixtures fixtures;
    return fixtures;
}

TlsReply Route(const ReceivedRequest& request) {
    const Fixtures& m = Media();
    const std::string& t = request.target;
    if (t == "/good.png") return Reply(200, "image/png", m.png);
    if (t == "/good.mp4") return Reply(200, "video/mp4", m.mp4);
    if (t == "/long.mp4") return Reply(200, "video/mp4", m.long_mp4);
    if (t == "/short.mp4") return Reply(200, "video/mp4", m.short_mp4);
    if (t == "/good.wav") return Reply(200, "audio/wav", m.wav);
    if (t == "/short.wav") return Reply(200, "audio/wav", m.short_wav);
    if (t == "/wide.png") return Reply(200, "image/png", m.wide_png);
    if (t == "/huge.png") return Reply(200, "image/png", m.huge_png);
    if (t == "/garbage.png") return Reply(200, "image/png", m.garbage);
    if (t == "/png-as-mp4") return Reply(200, "video/mp4", m.png);
    if (t == "/mp4-as-png") return Reply(200, "image/png", m.mp4);
    if (t == "/html.png") return Reply(200, "text/html; charset=utf-8", m.png);
    if (t == "/octet.png") return Reply(200, "application/octet-stream", m.png);
    if (t == "/untyped.png") return Reply(200, "", m.png);
    if (t == "/missing.png") return Reply(404, "text/plain", "not here");
    if (t == "/redirect.png") {
        TlsReply r;
        r.head =
            "HTTP/1.1 302 Found\r\nLocation: https://assets.test/good.png\r\n"
            "Content-Length: 0\r\nConnection: close\r\n\r\n";
        return r;
    }
    if (t == "/chunked.png") {
        TlsReply r;
        r.head =
            "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n";
        std::ostringstream hex;
        hex << std::hex << m.png.size();
        r.body = hex.str() + "\r\n" + m.png + "\r\n0\r\n\r\n";
        return r;
    }
    if (t == "/short-body.png") {
        TlsReply r = Reply(200, "image/png", m.png);
        r.head = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: " +
                 std::to_string(m.png.size() + 1000) + "\r\nConnection: close\r\n\r\n";
        return r;
    }
    if (t == "/too-large.png") {
        TlsReply r;
        r.head = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: " +
                 std::to_string(17 * 1024 * 1024) + "\r\nConnection: close\r\n\r\n";
        r.body = m.png;  // never read: the length alone is over the image cap
        return r;
    }
    if (t == "/slow.png") {
        TlsReply r = Reply(200, "image/png", m.png);
        r.chunk_bytes = 64;
        r.pause = std::chrono::milliseconds(500);  // minutes for the whole picture
        return r;
    }
    return Reply(404, "text/plain", "no route");
}

class Assets : public ServerSuite<Assets> {
  protected:
    static void SetUpTestSuite() {
        certs_ = new TestCertificates(MakeTestCertificates({"assets.test", "other.test"}));
        fixtures_ = new TlsTestServer(*certs_, &Route);
        char dir[] = "/tmp/genhost-assets-test.XXXXXX";
        ASSERT_NE(mkdtemp(dir), nullptr);
        dir_ = new std::string(dir);
        ca_file_ = new std::string(*dir_ + "/ca.pem");
        std::ofstream(*ca_file_) << certs_->ca_pem;
        StartServer(
            {{"GENHOST_FETCH_TEST_CA", *ca_file_}, {"GENHOST_FETCH_TEST_HOSTS", TestHosts()}});
    }
    static void TearDownTestSuite() {
        ServerSuite::TearDownTestSuite();
        delete fixtures_;
        delete certs_;
        std::filesystem::remove_all(*dir_);
        delete ca_file_;
        delete dir_;
    }

    // assets.test and wrong-name.test both reach the fixture server; only the first is in its
    // certificate.
    static std::string TestHosts() {
        const std::string port = std::to_string(fixtures_->port());
        return "assets.test=127.0.0.1:" + port + ",wrong-name.test=127.0.0.1:" + port;
    }

    static std::string Url(const std::string& path) { return "https://assets.test" + path; }

    HttpResponse Post(const std::string& endpoint, const json& body) {
        auto c = Client();
        return c.Send("POST", "/v1/" + endpoint, AuthHeaders(), body.dump());
    }

    // ExpectIssue checks a 400 with one issue at `path` carrying `message`.
    void ExpectIssue(const HttpResponse& r, const Path& path, const std::string& message) {
        ASSERT_EQ(r.status, 400) << r.body;
        const auto body = r.Json();
        ASSERT_EQ(body["issues"].size(), 1u) << r.body;
        EXPECT_EQ(body["issues"][0]["path"].get<Path>(), path) << r.body;
        EXPECT_EQ(body["issues"][0]["message"], message) << r.body;
    }

    static json Upscale(const std::string& uri) {
        return {{"model", "upscale_precision_upscaler_v2"}, {"imageUri", uri}};
    }
    static json VideoUpscale(const std::string& uri) {
        return {{"model", "upscale_video_upscaler_creative"}, {"videoUri", uri}};
    }

    static TestCertificates* certs_;
    static TlsTestServer* fixtures_;
    static std::string* dir_;
    static std::string* ca_file_;
};
TestCertificates* Assets::certs_ = nullptr;
TlsTestServer* Assets::fixtures_ = nullptr;
std::string* Assets::dir_ = nullptr;
std::string* Assets::ca_file_ = nullptr;

TEST_F(Assets, GoodImageUrlIsFetchedHonestlyAndStoredByReference) {
    const auto r = Post("image_upscale", Upscale(Url("/good.png")));
    ASSERT_EQ(r.status, 200) << r.body;
    // 640 px long side x scaleFactor 2 is under 4096: the probed size gives the low price.
    EXPECT_EQ(r.Json()["estimatedCost"]["credits"], 25);

    bool seen = false;
    for (const auto& request : fixtures_->Requests()) {
        if (request.target != "/good.png") continue;
        seen = true;
        EXPECT_EQ(request.method, "GET");
        EXPECT_THAT(request.Header("user-agent"), StartsWith("genhost/"));
        EXPECT_THAT(request.Header("user-agent"), HasSubstr(" API/"));
        EXPECT_EQ(request.Header("host"), "assets.test");
        EXPECT_EQ(request.Header("authorization"), "");
        EXPECT_EQ(request.Header("cookie"), "");
    }
    EXPECT_TRUE(seen);

    // The stored input names the fetched file, which lies in the input area.
    const std::string id = r.Json()["id"];
    pqxx::connection conn(db_->dsn());
    pqxx::work tx(conn);
    const auto row = tx.exec_params1("SELECT input::text FROM tasks WHERE id = $1", id);
    const auto input = json::parse(row[0].as<std::string>());
    EXPECT_EQ(input["imageUri"], "genhost-input:" + id + "/input_0");
    EXPECT_TRUE(std::filesystem::exists(server_->data_dir() + "/data/inputs/" + id + "/input_0"));
}

TEST_F(Assets, GoodVideoIsPricedByItsProbedLength) {
    const auto r = Post("video_upscale", VideoUpscale(Url("/good.mp4")));
    ASSERT_EQ(r.status, 200) << r.body;
    // 4 s x 10 fps = 40 frames at 0.9 (2k default), not the 30 s x 24 fps maximum (648).
    EXPECT_EQ(r.Json()["estimatedCost"]["credits"], 36);
}

TEST_F(Assets, GoodAudioIsAccepted) {
    const auto r =
        Post("voice_isolation", {{"model", "voice_isolation"}, {"audioUri", Url("/good.wav")}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Json()["estimatedCost"]["credits"], 1);  // 1 per 6 s
}

TEST_F(Assets, HttpFailures) {
    ExpectIssue(Post("image_upscale", Upscale(Url("/missing.png"))), {"imageUri"},
                "Failed to fetch asset: HTTP status 404 (only 200 is accepted; redirects are not "
                "followed)");
    ExpectIssue(Post("image_upscale", Upscale(Url("/redirect.png"))), {"imageUri"},
                "Failed to fetch asset: HTTP status 302 (only 200 is accepted; redirects are not "
                "followed)");
}

TEST_F(Assets, ContentTypeFailures) {
    ExpectIssue(Post("image_upscale", Upscale(Url("/html.png"))), {"imageUri"},
                "Unsupported Content-Type 'text/html': not on the approved list for image assets");
    ExpectIssue(Post("image_upscale", Upscale(Url("/octet.png"))), {"imageUri"},
                "Unsupported Content-Type 'application/octet-stream': not on the approved list "
                "for image assets");
    ExpectIssue(Post("image_upscale", Upscale(Url("/untyped.png"))), {"imageUri"},
                "Content-Type response header missing");
}

TEST_F(Assets, LengthFailures) {
    ExpectIssue(Post("image_upscale", Upscale(Url("/chunked.png"))), {"imageUri"},
                "Content-Length not provided (streamed responses of unknown length are "
                "rejected)");
    ExpectIssue(Post("image_upscale", Upscale(Url("/short-body.png"))), {"imageUri"},
                "Asset size exceeds the maximum for the type");
    ExpectIssue(Post("image_upscale", Upscale(Url("/too-large.png"))), {"imageUri"},
                "Asset size exceeds the maximum for the type");
}

TEST_F(Assets, SlowBodyTimesOutAfterTenSeconds) {
    const auto start = std::chrono::steady_clock::now();
    ExpectIssue(Post("image_upscale", Upscale(Url("/slow.png"))), {"imageUri"},
                "Timeout while fetching asset (download longer than 10 seconds)");
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_GE(took, std::chrono::seconds(9));
    EXPECT_LT(took, std::chrono::seconds(20));
}

TEST_F(Assets, PictureLimits) {
    ExpectIssue(Post("image_upscale", Upscale(Url("/huge.png"))), {"imageUri"},
                "Invalid asset dimensions (either side must not exceed 8000 px)");
    ExpectIssue(Post("image_upscale", Upscale(Url("/wide.png"))), {"imageUri"},
                "Invalid aspect ratio (width / height must be between 0.25 and 4)");
}

TEST_F(Assets, BytesMustBeWhatTheTypeSays) {
    ExpectIssue(Post("image_upscale", Upscale(Url("/garbage.png"))), {"imageUri"},
                "Unsupported asset type");
    ExpectIssue(Post("image_upscale", Upscale(Url("/mp4-as-png"))), {"imageUri"},
                "Unsupported asset type");
    ExpectIssue(Post("video_upscale", VideoUpscale(Url("/png-as-mp4"))), {"videoUri"},
                "Unsupported asset type");
}

TEST_F(Assets, DurationLimitsPerEndpoint) {
    // omni_flash video_to_video: videoUri <= 10 s.
    ExpectIssue(Post("video_to_video", {{"model", "omni_flash"},
                                        {"videoUri", Url("/long.mp4")},
                                        {"promptText", "make it blue"}}),
                {"videoUri"}, "Invalid asset duration (must be at most 10 seconds)");
    // act_two: reference 3-30 s, nested path.
    ExpectIssue(Post("character_performance",
                     {{"model", "act_two"},
                      {"character", {{"type", "image"}, {"uri", Url("/good.png")}}},
                      {"reference", {{"type", "video"}, {"uri", Url("/short.mp4")}}}}),
                {"reference", "uri"}, "Invalid asset duration (must be at least 3 seconds)");
    // voice isolation: > 4.6 s.
    ExpectIssue(
        Post("voice_isolation", {{"model", "voice_isolation"}, {"audioUri", Url("/short.wav")}}),
        {"audioUri"}, "Invalid asset duration (must be at least 4.6 seconds)");
}

TEST_F(Assets, IssuePathOfAnArrayItem) {
    const auto r = Post("image_to_video", {{"model", "veo3.1"},
                                           {"promptImage",
                                            {{{"uri", Url("/good.png")}, {"position", "first"}},
                                             {{"uri", Url("/missing.png")}, {"position", "last"}}}},
                                           {"ratio", "1280:720"}});
    ExpectIssue(r, {"promptImage", "1", "uri"},
                "Failed to fetch asset: HTTP status 404 (only 200 is accepted; redirects are not "
                "followed)");
}

TEST_F(Assets, AddressPolicy) {
    const std::string port = std::to_string(fixtures_->port());
    const auto before = fixtures_->Requests().size();
    ExpectIssue(Post("image_upscale", Upscale("https://127.0.0.1:" + port + "/good.png")),
                {"imageUri"}, "The URL must be a domain, not an IP address");
    ExpectIssue(Post("image_upscale", Upscale("https://2130706433:" + port + "/good.png")),
                {"imageUri"}, "The URL must be a domain, not an IP address");
    ExpectIssue(Post("image_upscale", Upscale("https://[::1]:" + port + "/good.png")), {"imageUri"},
                "The URL must be a domain, not an IP address");
    // localhost resolves to loopback: refused after DNS, before any connection.
    ExpectIssue(Post("image_upscale", Upscale("https://localhost:" + port + "/good.png")),
                {"imageUri"}, "Failed to fetch asset");
    EXPECT_EQ(fixtures_->Requests().size(), before);
}

TEST_F(Assets, TlsNameIsVerified) {
    // Mapped to the fixture server, but its certificate does not name wrong-name.test.
    ExpectIssue(Post("image_upscale", Upscale("https://wrong-name.test/good.png")), {"imageUri"},
                "Failed to fetch asset");
}

TEST_F(Assets, HostileMediaLeavesTheLogJsonLines) {
    // FFmpeg's own complaints about such media go through genhost's logger ("ffmpeg"), not as
    // plain text on stderr: every line the server printed stays JSON.
    const auto& m = Media();
    ExpectIssue(Post("image_upscale", Upscale(DataUri("image/png", MakePngBomb(100000)))),
                {"imageUri"}, "Unsupported asset type");
    ExpectIssue(Post("image_upscale", Upscale(DataUri("image/png", m.garbage))), {"imageUri"},
                "Unsupported asset type");
    ExpectIssue(Post("image_upscale", Upscale(DataUri("image/png", m.mp4))), {"imageUri"},
                "Unsupported asset type");
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // the log is flushed each second
    std::istringstream in(server_->Log());
    std::string line;
    int ffmpeg = 0;
    int lines = 0;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        ++lines;
        const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
        ASSERT_TRUE(j.is_object()) << "not a JSON line: " << line;
        ffmpeg += j.value("logger", "") == "ffmpeg";
    }
    EXPECT_GT(lines, 0);
    EXPECT_GT(ffmpeg, 0) << "no FFmpeg line reached the log";
}

TEST_F(Assets, DataUris) {
    const auto& m = Media();
    auto r = Post("image_upscale", Upscale(DataUri("image/png", m.png)));
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string id = r.Json()["id"];
    pqxx::connection conn(db_->dsn());
    pqxx::work tx(conn);
    const auto row = tx.exec_params1("SELECT input::text FROM tasks WHERE id = $1", id);
    EXPECT_EQ(json::parse(row[0].as<std::string>())["imageUri"],
              "genhost-input:" + id + "/input_0");

    ExpectIssue(Post("image_upscale", Upscale(DataUri("image/png", m.garbage))), {"imageUri"},
                "Unsupported asset type");
    ExpectIssue(Post("image_upscale", Upscale(DataUri("image/gif", m.png))), {"imageUri"},
                "Unsupported asset type");
    ExpectIssue(Post("image_upscale", Upscale(DataUri("image/png", MakePngBomb(100000)))),
                {"imageUri"}, "Unsupported asset type");
    ExpectIssue(Post("image_upscale", Upscale(DataUri("image/png", m.huge_png))), {"imageUri"},
                "Invalid asset dimensions (either side must not exceed 8000 px)");
    ExpectIssue(Post("voice_isolation", {{"model", "voice_isolation"},
                                         {"audioUri", DataUri("audio/wav", m.short_wav)}}),
                {"audioUri"}, "Invalid asset duration (must be at least 4.6 seconds)");
    // A video may carry the speech of speech_to_speech, but a silent one has none: refused at
    // creation rather than failing the task later.
    ExpectIssue(Post("speech_to_speech",
                     {{"model", "voice_multilingual_sts_v2"},
                      {"media", {{"type", "video"}, {"uri", DataUri("video/mp4", m.mp4)}}},
                      {"voice", {{"type", "service-preset"}, {"presetId", "Maya"}}}}),
                {"media", "uri"}, "The media has no audio track");
}

TEST_F(Assets, UnknownUploadUri) {
    ExpectIssue(Post("image_upscale", Upscale("genhost://0123456789abcdef")), {"imageUri"},
                "Failed to fetch asset: the upload URI is unknown or has expired");
}

TEST_F(Assets, RefusedRequestsLeaveNoFiles) {
    const auto r = Post("image_to_video", {{"model", "veo3.1"},
                                           {"promptImage",
                                            {{{"uri", Url("/good.png")}, {"position", "first"}},
                                             {{"uri", Url("/missing.png")}, {"position", "last"}}}},
                                           {"ratio", "1280:720"}});
    ASSERT_EQ(r.status, 400);
    // Every folder left in the input area belongs to a stored task.
    pqxx::connection conn(db_->dsn());
    pqxx::work tx(conn);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // Discard runs on the pool
    for (const auto& entry :
         std::filesystem::directory_iterator(server_->data_dir() + "/data/inputs")) {
        const std::string name = entry.path().filename().string();
        if (name == "uploads") continue;
        const auto n = tx.exec_params1("SELECT count(*) FROM tasks WHERE id::text = $1", name);
        EXPECT_EQ(n[0].as<int>(), 1) << name;
    }
}

// The workers' resolver, in this process: references, and what offline mode leaves to it.
TEST_F(Assets, WorkerResolverFailsTasksWithAssetInvalid) {
    assets::FetcherOptions options;
    options.test_ca_file = *ca_file_;
    options.test_hosts = assets::ParseTestHosts(TestHosts());
    const assets::Fetcher fetcher(options);
    assets::NullUploadSource uploads;
    const assets::AssetReader reader(fetcher, uploads, {});
    const assets::InputArea area(*dir_ + "/inputs");
    const assets::Resolver resolver(reader, area);
    const std::string scratch = *dir_ + "/scratch";

    const std::string fetched = resolver.Resolve(Url("/good.png"), MediaKind::kImage, scratch);
    EXPECT_EQ(std::filesystem::file_size(fetched), Media().png.size());
    try {
        resolver.Resolve(Url("/missing.png"), MediaKind::kImage, scratch);
        ADD_FAILURE() << "no failure";
    } catch (const providers::TaskFailure& e) {
        EXPECT_EQ(e.code(), "ASSET.INVALID");
        EXPECT_THAT(e.what(), HasSubstr("HTTP status 404"));
    }
    try {
        resolver.Resolve("genhost-input:0b0c0d0e-0000-4000-8000-000000000000/input_0",
                         MediaKind::kImage, scratch);
        ADD_FAILURE() << "no failure";
    } catch (const providers::TaskFailure& e) {
        EXPECT_EQ(e.code(), "ASSET.INVALID");
        EXPECT_STREQ(e.what(), "Failed to fetch asset: the stored input is no longer available");
    }
    std::filesystem::create_directories(*dir_ + "/inputs/0b0c0d0e-0000-4000-8000-000000000000");
    std::ofstream(*dir_ + "/inputs/0b0c0d0e-0000-4000-8000-000000000000/input_0") << "x";
    EXPECT_EQ(resolver.Resolve("genhost-input:0b0c0d0e-0000-4000-8000-000000000000/input_0",
                               MediaKind::kImage, scratch),
              *dir_ + "/inputs/0b0c0d0e-0000-4000-8000-000000000000/input_0");
    // A reference cannot climb out of the input area.
    EXPECT_THROW(resolver.Resolve("genhost-input:../../etc/passwd", MediaKind::kImage, scratch),
                 providers::TaskFailure);
}

TEST(AssetsOffline, UrlsAreAcceptedUnfetchedAndBilledAtTheMaximum) {
    TestDatabase db;
    const auto certs = MakeTestCertificates({"assets.test"});
    std::atomic<int> requests{0};
    TlsTestServer fixtures(certs, [&requests](const ReceivedRequest& r) {
        ++requests;
        return Route(r);
    });
    ServerProcess server(db.dsn(), {{"GENHOST_FETCH_OFFLINE", "1"},
                                    {"GENHOST_FETCH_TEST_HOSTS",
                                     "assets.test=127.0.0.1:" + std::to_string(fixtures.port())}});
    server.Start();
    HttpClient c("127.0.0.1", server.port());
    auto r = c.Send("POST", "/v1/video_upscale", AuthHeaders(),
                    json{{"model", "upscale_video_upscaler_creative"},
                         {"videoUri", "https://assets.test/missing.mp4"}}
                        .dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Json()["estimatedCost"]["credits"], 648);  // 30 s x 24 fps x 0.9
    EXPECT_EQ(requests.load(), 0);
    // Structural checks still apply.
    r = c.Send(
        "POST", "/v1/video_upscale", AuthHeaders(),
        json{{"model", "upscale_video_upscaler_creative"}, {"videoUri", "https://10.0.0.1/a.mp4"}}
            .dump());
    ASSERT_EQ(r.status, 400);
    EXPECT_EQ(r.Json()["issues"][0]["message"], "The URL must be a domain, not an IP address");
    // Data URIs are still read and probed.
    r = c.Send("POST", "/v1/video_upscale", AuthHeaders(),
               json{{"model", "upscale_video_upscaler_creative"},
                    {"videoUri", DataUri("video/mp4", Media().png)}}
                   .dump());
    ASSERT_EQ(r.status, 400);
    EXPECT_EQ(r.Json()["issues"][0]["message"], "Unsupported asset type");
}

}  // namespace
}  // namespace genhost::testing
