// Ephemeral uploads against a real server (docs/uploads.md): POST /v1/uploads answers the
// upload URI, URL and signed fields; the multipart POST of a real PNG streams it to
// DATA_DIR/inputs/uploads/<id> and completes the row; a bad signature, another upload's policy,
// an expired policy, a second upload, a too-large file or body and malformed forms are refused
// with JSON errors (and a refused POST does not use up the upload); expired uploads are swept.
// NodeSdk.* drives the official Node client (run by ctest node_sdk, which installs it): its
// uploads, and its documents and avatars.
#include "helpers.hpp"

#include "genhost/core/clock.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/media/image.hpp"
#include "support/media_fixtures.hpp"

#include <gmock/gmock.h>
#include <pqxx/pqxx>

#include <cstdio>
#include <filesystem>
#include <tuple>

namespace genhost::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

constexpr std::size_t kCap = 1024 * 1024;  // GENHOST_UPLOAD_MAX_BYTES of these servers
constexpr char kBoundary[] = "----genhost-test-boundary-7d1f";

std::string UploadPng(int width = 640, int height = 360) {
    media::ImageSpec spec;
    spec.width = width;
    spec.height = height;
    spec.seed = 7;
    spec.prompt = "an upload";
    return media::RenderImage(spec);
}

// Form builds a multipart body in the Node client's order: the fields, the optional metadata,
// then the file.
std::string Form(const std::vector<std::pair<std::string, std::string>>& fields,
                 const std::string& file, const std::string& filename = "frame.png",
                 const std::string& type = "image/png", bool metadata = true) {
    const std::string delim = std::string("--") + kBoundary;
    std::string b;
    for (const auto& [k, v] : fields) {
        b += delim + "\r\nContent-Disposition: form-data; name=\"" + k + "\"\r\n\r\n" + v + "\r\n";
    }
    if (metadata) {
        b += delim + "\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{\"a\":1}\r\n";
    }
    b += delim + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + filename +
         "\"\r\nContent-Type: " + type + "\r\n\r\n" + file + "\r\n" + delim + "--\r\n";
    return b;
}

std::vector<std::pair<std::string, std::string>> FieldsOf(const nlohmann::json& upload) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [k, v] : upload["fields"].items()) out.emplace_back(k, v.get<std::string>());
    return out;
}

Headers FormHeaders() {
    return {{"Content-Type", std::string("multipart/form-data; boundary=") + kBoundary}};
}

std::string IdOf(const nlohmann::json& upload) {
    return upload["uri"].get<std::string>().substr(std::string("genhost://").size());
}

class UploadsBase : public ServerSuite<UploadsBase> {
  protected:
    static void Start(std::map<std::string, std::string> env) {
        env.emplace("GENHOST_UPLOAD_MAX_BYTES", std::to_string(kCap));
        StartServer(std::move(env));
    }
    static void Stop() { ServerSuite::TearDownTestSuite(); }

    nlohmann::json Create(HttpClient& c, const std::string& filename = "frame.png") {
        const auto r = c.Send("POST", "/v1/uploads", AuthHeaders(),
                              nlohmann::json{{"filename", filename}, {"type", "ephemeral"}}.dump());
        EXPECT_EQ(r.status, 200) << r.body;
        return r.Json();
    }

    HttpResponse Post(HttpClient& c, const nlohmann::json& upload, const std::string& body,
                      const Headers& headers = FormHeaders()) {
        return c.Send("POST", PathOf(upload["uploadUrl"].get<std::string>()), headers, body);
    }

    fs::path FileOf(const std::string& id) const {
        return fs::path(server_->data_dir()) / "data" / "inputs" / "uploads" / id;
    }

    // Row returns (completed, size, content_type, file_name) of upload `id` from the database.
    std::tuple<bool, long long, std::string, std::string> Row(const std::string& id) {
        pqxx::connection conn(db_->dsn());
        pqxx::nontransaction n(conn);
        const auto r = n.exec_params(
            "SELECT completed_at IS NOT NULL, coalesce(size, -1), coalesce(content_type, ''),"
            " coalesce(file_name, '') FROM uploads WHERE id = $1",
            id);
        if (r.empty()) return {false, -2, "", ""};
        return {r[0][0].as<bool>(), r[0][1].as<long long>(), r[0][2].as<std::string>(),
                r[0][3].as<std::string>()};
    }

    static std::string ReadFile(const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }
};

class Uploads : public UploadsBase {
  protected:
    static void SetUpTestSuite() {
        if (ClusterDsn().empty()) return;
        Start({});
    }
    static void TearDownTestSuite() { Stop(); }
    void SetUp() override {
        if (server_ == nullptr) GTEST_SKIP() << "no PostgreSQL configured";
    }
};

TEST_F(Uploads, CreateAnswersTheUriTheUrlAndSignedFields) {
    auto c = Client();
    const auto r = c.Send("POST", "/v1/uploads", AuthHeaders(),
                          R"({"filename": "frame.png", "type": "ephemeral"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_THAT(r.Header("content-type"), HasSubstr("application/json"));
    const auto j = r.Json();
    const std::string uri = j["runwayUri"];
    EXPECT_EQ(j["uri"], uri);
    ASSERT_EQ(uri.rfind("genhost://", 0), 0u) << uri;
    const std::string id = IdOf(j);
    EXPECT_TRUE(IsUuidV4(id)) << id;
    EXPECT_EQ(j["uploadUrl"],
              "http://127.0.0.1:" + std::to_string(server_->port()) + "/uploads/" + id);
    ASSERT_TRUE(j["fields"].is_object());
    EXPECT_TRUE(j["fields"]["policy"].is_string());
    EXPECT_EQ(j["fields"]["signature"].get<std::string>().size(), 64u);
    const auto expires = ParseTimestamp(j["expiresAt"].get<std::string>());
    ASSERT_TRUE(expires);
    const auto ttl = *expires - SystemClock::Instance().Now();
    EXPECT_GT(ttl, std::chrono::hours(23));
    EXPECT_LE(ttl, std::chrono::hours(24) + std::chrono::seconds(2));
    // Nothing is on disk before the multipart POST.
    EXPECT_FALSE(fs::exists(FileOf(id)));
    EXPECT_EQ(std::get<1>(Row(id)), -1);
}

TEST_F(Uploads, CreateValidatesItsBody) {
    auto c = Client();
    const std::vector<std::pair<std::string, std::vector<std::string>>> bad = {
        {R"({"type": "ephemeral"})", {"filename"}},
        {R"({"filename": "a.png"})", {"type"}},
        {R"({"filename": "a.png", "type": "permanent"})", {"type"}},
        {R"({"filename": "", "type": "ephemeral"})", {"filename"}},
        {R"({"filename": ")" + std::string(256, 'a') + R"(", "type": "ephemeral"})", {"filename"}},
        {R"({"filename": 7, "type": "ephemeral"})", {"filename"}},
        {R"({"filename": "a\u0000b.png", "type": "ephemeral"})", {"filename"}},
        {R"({"filename": "a.png", "type": "ephemeral", "extra": 1})", {}},
    };
    for (const auto& [body, path] : bad) {
        const auto r = c.Send("POST", "/v1/uploads", AuthHeaders(), body);
        ASSERT_EQ(r.status, 400) << body << " → " << r.body;
        const auto j = r.Json();
        ASSERT_FALSE(j["issues"].empty()) << r.body;
        if (!path.empty()) {
            EXPECT_EQ(j["issues"][0]["path"], path) << r.body;
        }
    }
    EXPECT_EQ(c.Send("POST", "/v1/uploads", AuthHeaders(), "{nope").status, 400);
    const auto ok =
        c.Send("POST", "/v1/uploads", AuthHeaders(),
               R"({"filename": ")" + std::string(255, 'a') + R"(", "type": "ephemeral"})");
    EXPECT_EQ(ok.status, 200) << ok.body;
}

TEST_F(Uploads, CreateNeedsAKeyAndTheVersionHeader) {
    auto c = Client();
    const std::string body = R"({"filename": "a.png", "type": "ephemeral"})";
    auto r = c.Send("POST", "/v1/uploads", {{"Content-Type", "application/json"}}, body);
    EXPECT_EQ(r.status, 401);
    EXPECT_TRUE(r.Json()["error"].is_string());
    r = c.Send("POST", "/v1/uploads",
               {{"Authorization", "Bearer " + kTestKey}, {"Content-Type", "application/json"}},
               body);
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(c.Send("GET", "/v1/uploads", AuthHeaders()).status, 405);
}

TEST_F(Uploads, MultipartPostOfARealPngStoresItAndCompletesTheUpload) {
    auto c = Client();
    const auto upload = Create(c, "my photo.png");
    const std::string id = IdOf(upload);
    const std::string png = UploadPng();
    ASSERT_EQ(PngSize(png), std::make_pair(640, 360));

    const auto r = Post(c, upload, Form(FieldsOf(upload), png, "frame.png"));
    EXPECT_EQ(r.status, 204) << r.body;
    EXPECT_TRUE(r.body.empty());
    ASSERT_TRUE(fs::exists(FileOf(id)));
    EXPECT_EQ(ReadFile(FileOf(id)), png);
    EXPECT_FALSE(fs::exists(FileOf(id).string() + ".part"));
    const auto [completed, size, type, name] = Row(id);
    EXPECT_TRUE(completed);
    EXPECT_EQ(size, static_cast<long long>(png.size()));
    EXPECT_EQ(type, "image/png");
    EXPECT_EQ(name, "frame.png");
}

TEST_F(Uploads, AcceptsAFileOfExactlyTheCapWithoutMetadata) {
    auto c = Client();
    const auto upload = Create(c);
    std::string file(kCap, 'z');
    const auto r = Post(
        c, upload, Form(FieldsOf(upload), file, "blob.bin", "application/octet-stream", false));
    EXPECT_EQ(r.status, 204) << r.body;
    EXPECT_EQ(fs::file_size(FileOf(IdOf(upload))), kCap);
}

TEST_F(Uploads, ASecondUploadToTheSameIdIs409) {
    auto c = Client();
    const auto upload = Create(c);
    const std::string png = UploadPng(64, 64);
    ASSERT_EQ(Post(c, upload, Form(FieldsOf(upload), png)).status, 204);
    const auto again = Post(c, upload, Form(FieldsOf(upload), UploadPng(32, 32)));
    EXPECT_EQ(again.status, 409) << again.body;
    EXPECT_THAT(again.Json()["error"].get<std::string>(), HasSubstr("already been received"));
    EXPECT_EQ(ReadFile(FileOf(IdOf(upload))), png);  // the first file stays
}

TEST_F(Uploads, ABadSignatureIs403AndDoesNotUseUpTheUpload) {
    auto c = Client();
    const auto upload = Create(c);
    auto fields = FieldsOf(upload);
    for (auto& [k, v] : fields) {
        if (k == "signature") v[0] = v[0] == 'a' ? 'b' : 'a';
    }
    auto r = Post(c, upload, Form(fields, UploadPng(64, 64)));
    EXPECT_EQ(r.status, 403) << r.body;
    EXPECT_EQ(r.Json()["error"], "Invalid upload policy signature");
    EXPECT_FALSE(fs::exists(FileOf(IdOf(upload))));

    // A policy that grants more, with the old signature.
    fields = FieldsOf(upload);
    for (auto& [k, v] : fields) {
        if (k == "policy") {
            auto doc = nlohmann::json::parse(*Base64Decode(v));
            doc["maxBytes"] = 1ull << 40;
            v = Base64Encode(doc.dump());
        }
    }
    r = Post(c, upload, Form(fields, UploadPng(64, 64)));
    EXPECT_EQ(r.status, 403) << r.body;

    // No policy at all (the file first).
    r = Post(c, upload, Form({}, UploadPng(64, 64)));
    EXPECT_EQ(r.status, 403) << r.body;
    EXPECT_THAT(r.Json()["error"].get<std::string>(), HasSubstr("no upload policy"));

    EXPECT_EQ(Post(c, upload, Form(FieldsOf(upload), UploadPng(64, 64))).status, 204);
}

TEST_F(Uploads, APolicyOnlyOpensItsOwnUpload) {
    auto c = Client();
    const auto a = Create(c);
    const auto b = Create(c);
    // b's fields sent to a's URL.
    auto r = c.Send("POST", PathOf(a["uploadUrl"].get<std::string>()), FormHeaders(),
                    Form(FieldsOf(b), UploadPng(64, 64)));
    EXPECT_EQ(r.status, 403) << r.body;
    EXPECT_TRUE(r.Json()["error"].is_string());
    // a's fields sent to an id nobody created.
    r = c.Send("POST", "/uploads/" + NewUuid(), FormHeaders(),
               Form(FieldsOf(a), UploadPng(64, 64)));
    EXPECT_EQ(r.status, 403) << r.body;
    // Not an upload id at all.
    r = c.Send("POST", "/uploads/not-an-id", FormHeaders(), Form(FieldsOf(a), UploadPng(64, 64)));
    EXPECT_EQ(r.status, 404) << r.body;
    EXPECT_TRUE(r.Json()["error"].is_string());
    EXPECT_FALSE(fs::exists(FileOf(IdOf(a))));
    EXPECT_FALSE(fs::exists(FileOf(IdOf(b))));
}

TEST_F(Uploads, AFileOverTheCapIs413AndLeavesNothing) {
    auto c = Client();
    const auto upload = Create(c);
    const std::string id = IdOf(upload);
    auto r = Post(c, upload, Form(FieldsOf(upload), std::string(kCap + 1, 'x')));
    EXPECT_EQ(r.status, 413) << r.body;
    EXPECT_THAT(r.Json()["error"].get<std::string>(),
                HasSubstr("larger than this upload's limit of " + std::to_string(kCap)));
    EXPECT_FALSE(fs::exists(FileOf(id)));
    EXPECT_FALSE(fs::exists(FileOf(id).string() + ".part"));
    EXPECT_EQ(std::get<1>(Row(id)), -1);

    // A body past the route's limit is refused from its Content-Length, before any of it.
    r = Post(c, upload, Form(FieldsOf(upload), std::string(kCap + 512 * 1024, 'x')));
    EXPECT_EQ(r.status, 413) << r.body;
    EXPECT_EQ(r.Json()["error"], "Request body too large");

    // The upload was not used up.
    EXPECT_EQ(Post(c, upload, Form(FieldsOf(upload), UploadPng(64, 64))).status, 204);
}

TEST_F(Uploads, MalformedFormsAre400) {
    auto c = Client();
    const auto upload = Create(c);
    const auto fields = FieldsOf(upload);
    // Not multipart.
    auto r = Post(c, upload, "{}", {{"Content-Type", "application/json"}});
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_THAT(r.Json()["error"].get<std::string>(), HasSubstr("multipart/form-data"));
    // No file part.
    std::string no_file;
    for (const auto& [k, v] : fields) {
        no_file += std::string("--") + kBoundary + "\r\nContent-Disposition: form-data; name=\"" +
                   k + "\"\r\n\r\n" + v + "\r\n";
    }
    no_file += std::string("--") + kBoundary + "--\r\n";
    r = Post(c, upload, no_file);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_THAT(r.Json()["error"].get<std::string>(), HasSubstr("no file part"));
    // Cut before the closing delimiter.
    std::string cut = Form(fields, UploadPng(64, 64));
    cut.resize(cut.size() - 10);
    r = Post(c, upload, cut);
    EXPECT_EQ(r.status, 400) << r.body;
    // An empty file.
    r = Post(c, upload, Form(fields, ""));
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_THAT(r.Json()["error"].get<std::string>(), HasSubstr("empty"));
    // Still usable after all that.
    EXPECT_EQ(Post(c, upload, Form(fields, UploadPng(64, 64))).status, 204);
}

TEST_F(Uploads, TheUriIsAcceptedAsAMediaInput) {
    auto c = Client();
    const auto upload = Create(c);
    ASSERT_EQ(Post(c, upload, Form(FieldsOf(upload), UploadPng(1280, 720))).status, 204);
    const auto r = c.Send("POST", "/v1/image_to_video", AuthHeaders(),
                          nlohmann::json{{"model", "gen4_turbo"},
                                         {"promptImage", upload["uri"]},
                                         {"promptText", "a slow pan"},
                                         {"ratio", "1280:720"},
                                         {"duration", 5}}
                              .dump());
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_TRUE(IsUuid(r.Json()["id"].get<std::string>()));
}

TEST_F(Uploads, UnknownForeignAndIncompleteUploadUrisAre400AtTheField) {
    auto c = Client();
    const auto incomplete = Create(c);
    const std::string other_key = CreateKey(*server_, "globex-uploads");
    const auto made = c.Send("POST", "/v1/uploads", AuthHeaders(other_key),
                             R"({"filename": "theirs.png", "type": "ephemeral"})");
    ASSERT_EQ(made.status, 200) << made.body;
    const auto foreign = made.Json();
    ASSERT_EQ(Post(c, foreign, Form(FieldsOf(foreign), UploadPng(1280, 720))).status, 204);
    for (const std::string& uri :
         {foreign["uri"].get<std::string>(), incomplete["uri"].get<std::string>(),
          "genhost://" + NewUuid()}) {
        const auto r = c.Send(
            "POST", "/v1/image_to_video", AuthHeaders(),
            nlohmann::json{{"model", "gen4_turbo"}, {"promptImage", uri}, {"ratio", "1280:720"}}
                .dump());
        ASSERT_EQ(r.status, 400) << uri << " → " << r.body;
        const auto j = r.Json();
        ASSERT_FALSE(j["issues"].empty()) << r.body;
        EXPECT_EQ(j["issues"][0]["path"], nlohmann::json::array({"promptImage"})) << r.body;
        EXPECT_THAT(j["issues"][0]["message"].get<std::string>(),
                    HasSubstr("upload URI is unknown"))
            << r.body;
    }
}

// A server whose uploads expire after two seconds and are swept every 200 ms.
class ExpiringUploads : public UploadsBase {
  protected:
    static void SetUpTestSuite() {
        if (ClusterDsn().empty()) return;
        Start({{"GENHOST_UPLOAD_TTL", "2"}, {"GENHOST_UPLOAD_SWEEP_INTERVAL", "0.2"}});
    }
    static void TearDownTestSuite() { Stop(); }
    void SetUp() override {
        if (server_ == nullptr) GTEST_SKIP() << "no PostgreSQL configured";
    }
};

TEST_F(ExpiringUploads, AnExpiredPolicyIs403) {
    auto c = Client();
    const auto upload = Create(c);
    std::this_thread::sleep_for(std::chrono::milliseconds(3200));
    const auto r = Post(c, upload, Form(FieldsOf(upload), UploadPng(64, 64)));
    EXPECT_EQ(r.status, 403) << r.body;
    EXPECT_THAT(r.Json()["error"].get<std::string>(), HasSubstr("expired"));
    EXPECT_FALSE(fs::exists(FileOf(IdOf(upload))));
}

TEST_F(ExpiringUploads, ExpiredUploadsAreSweptWithTheirFiles) {
    auto c = Client();
    const auto upload = Create(c);
    const std::string id = IdOf(upload);
    ASSERT_EQ(Post(c, upload, Form(FieldsOf(upload), UploadPng(64, 64))).status, 204);
    ASSERT_TRUE(fs::exists(FileOf(id)));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while ((fs::exists(FileOf(id)) || std::get<1>(Row(id)) != -2) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_FALSE(fs::exists(FileOf(id)));
    EXPECT_EQ(std::get<1>(Row(id)), -2);  // the row is gone
    EXPECT_THAT(server_->Log(), HasSubstr("expired upload"));
}

// The official Node client (CLIENTS.md 1.10) against this server. tests/node/run_node_sdk.sh
// installs it and runs these tests with GENHOST_NODE_TEST_DIR set (ctest node_sdk).
class NodeSdk : public UploadsBase {
  protected:
    static void SetUpTestSuite() {
        if (ClusterDsn().empty() || std::getenv("GENHOST_NODE_TEST_DIR") == nullptr) return;
        Start({});
    }
    static void TearDownTestSuite() { Stop(); }
    void SetUp() override {
        if (std::getenv("GENHOST_NODE_TEST_DIR") == nullptr) {
            GTEST_SKIP() << "run by ctest node_sdk (tests/node/run_node_sdk.sh)";
        }
        if (server_ == nullptr) GTEST_SKIP() << "no PostgreSQL configured";
    }

    // RunNode runs tests/node/`script` and returns the JSON line it printed.
    nlohmann::json RunNode(const std::string& png_path,
                           const std::string& script = "uploads_sdk.mjs",
                           const std::string& extra_env = "") {
        const std::string dir = std::getenv("GENHOST_NODE_TEST_DIR");
        std::string secret;
        {
            pqxx::connection conn(db_->dsn());
            pqxx::nontransaction n(conn);
            const auto r = n.exec("SELECT value FROM settings WHERE name = 'media_token_secret'");
            if (!r.empty()) secret = r[0][0].as<std::string>();
        }
        const std::string cmd =
            "cd '" + dir + "' && GENHOST_URL=http://127.0.0.1:" + std::to_string(server_->port()) +
            " GENHOST_KEY=" + kTestKey + " GENHOST_PNG='" + png_path +
            "' GENHOST_MEDIA_SECRET=" + secret + " " + extra_env + " node " + script + " 2>&1";
        const std::string out = RunCapture(cmd);
        const auto result = LastJsonLine(out);
        if (!result.is_discarded()) return result;
        ADD_FAILURE() << "node printed no JSON result:\n" << out;
        return {};
    }
};

TEST_F(NodeSdk, CreateEphemeralUploadsAPngWhoseUriImageToVideoAccepts) {
    const std::string png = UploadPng(1280, 720);
    const fs::path file = fs::path(server_->data_dir()) / "frame.png";
    std::ofstream(file, std::ios::binary) << png;

    const auto result = RunNode(file.string());
    ASSERT_FALSE(result.contains("error")) << result.dump(2) << "\n" << server_->Log();
    const std::string uri = result["uri"];
    ASSERT_THAT(uri, MatchesRegex("genhost://[0-9a-f-]{36}"));
    const std::string id = uri.substr(std::string("genhost://").size());
    EXPECT_EQ(ReadFile(FileOf(id)), png);
    const auto [completed, size, type, name] = Row(id);
    EXPECT_TRUE(completed);
    EXPECT_EQ(size, static_cast<long long>(png.size()));
    EXPECT_EQ(type, "image/png");
    EXPECT_EQ(name, "frame.png");
    ASSERT_TRUE(result["task"].is_object()) << result.dump(2);
    EXPECT_TRUE(IsUuid(result["task"]["id"].get<std::string>())) << result.dump(2);
}

// documents.* and avatars.* with documents, as a new user of the official client would use them
// (tests/node/documents_sdk.mjs): every answer parses, pages are followed to the end, and the
// client raises its own error classes for a missing document and bad input.
TEST_F(NodeSdk, DocumentsAndAvatarsWithDocuments) {
    const fs::path file = fs::path(server_->data_dir()) / "portrait.png";
    std::ofstream(file, std::ios::binary) << UploadPng(600, 800);

    const auto r = RunNode(file.string(), "documents_sdk.mjs");
    ASSERT_FALSE(r.contains("error")) << r.dump(2) << "\n" << server_->Log();
    ASSERT_EQ(r["created"].size(), 3u) << r.dump(2);
    for (const auto& d : r["created"]) {
        EXPECT_EQ(d["type"], "text");
        EXPECT_EQ(d["usedBy"], nlohmann::json::array());
    }
    EXPECT_EQ(r["retrieved"]["name"], "Returns and refunds");
    EXPECT_THAT(r["retrieved"]["content"].get<std::string>(), HasSubstr("# Returns policy"));
    // Oldest first, two a page, all three, without content.
    ASSERT_EQ(r["listed"].size(), 3u) << r.dump(2);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(r["listed"][i]["id"], r["created"][i]["id"]);
        EXPECT_EQ(r["listed"][i]["hasContent"], false);
    }
    EXPECT_EQ(r["avatar"]["documentIds"],
              nlohmann::json::array({r["created"][0]["id"], r["created"][1]["id"]}));
    ASSERT_EQ(r["usedBy"].size(), 1u) << r.dump(2);
    EXPECT_EQ(r["usedBy"][0]["id"], r["avatar"]["id"]);
    EXPECT_EQ(r["usedBy"][0]["name"], "Clerk");
    EXPECT_EQ(r["afterDelete"], nlohmann::json::array({r["created"][0]["id"]}));
    EXPECT_EQ(r["missing"]["notFound"], true) << r.dump(2);
    EXPECT_EQ(r["missing"]["status"], 404);
    EXPECT_EQ(r["invalid"]["badRequest"], true) << r.dump(2);
    const auto& issues = r["invalid"]["body"]["issues"];
    ASSERT_EQ(issues.size(), 2u) << r.dump(2);
    EXPECT_EQ(issues[0]["path"], nlohmann::json::array({"name"}));
    EXPECT_EQ(issues[1]["path"], nlohmann::json::array({"content"}));
    EXPECT_EQ(r["attachGone"]["status"], 400);
    EXPECT_EQ(r["attachGone"]["body"]["issues"][0]["path"],
              nlohmann::json::array({"documentIds", "0"}));
}

// voices.* as a new user of the official client would use them (tests/node/voices_sdk.mjs): a
// preview, a designed voice and one cloned from the preview, READY; pages; updates; an avatar
// speaking with the voice, which shows it deleted after the voice is.
TEST_F(NodeSdk, VoicesDesignedClonedAndUsedByAnAvatar) {
    const fs::path file = fs::path(server_->data_dir()) / "portrait.png";
    std::ofstream(file, std::ios::binary) << UploadPng(600, 800);

    const auto r = RunNode(file.string(), "voices_sdk.mjs");
    ASSERT_FALSE(r.contains("error")) << r.dump(2) << "\n" << server_->Log();
    EXPECT_GT(r["preview"]["durationSecs"].get<double>(), 2) << r.dump(2);
    EXPECT_EQ(r["previewType"], "audio/mpeg");
    EXPECT_EQ(r["designed"]["status"], "READY") << r.dump(2);
    EXPECT_EQ(r["designed"]["description"], "Reads the stories");
    EXPECT_THAT(r["designed"]["previewUrl"].get<std::string>(), HasSubstr("preview.mp3"));
    EXPECT_EQ(r["cloned"]["status"], "READY") << r.dump(2);
    EXPECT_EQ(r["listed"].size(), 2u);
    EXPECT_EQ(r["listed"][0], r["cloned"]["id"]);  // newest first
    EXPECT_EQ(r["unchanged"]["name"], "Narrator");
    EXPECT_EQ(r["renamed"]["name"], "Storyteller");
    EXPECT_TRUE(r["renamed"]["description"].is_null());
    EXPECT_EQ(r["avatarVoice"]["type"], "custom");
    EXPECT_EQ(r["avatarVoice"]["deleted"], false);
    EXPECT_EQ(r["avatarVoice"]["name"], "Storyteller");
    EXPECT_EQ(r["avatarVoiceAfterDelete"]["deleted"], true);
    EXPECT_FALSE(r["avatarVoiceAfterDelete"].contains("name"));
    EXPECT_EQ(r["missing"]["notFound"], true);
    EXPECT_EQ(r["clientLiteral"]["badRequest"], true) << r.dump(2);
    EXPECT_EQ(r["clientLiteral"]["body"]["issues"][0]["path"],
              nlohmann::json::array({"from", "model"}));
}

// routers.* as a new user of the official client would use them (tests/node/routers_sdk.mjs):
// defaults filled in, a settings merge that bumps the version and a rename that does not, pages,
// and the client's ConflictError, BadRequestError and NotFoundError.
TEST_F(NodeSdk, RoutersCreatedMergedPagedAndDeleted) {
    const auto r = RunNode("", "routers_sdk.mjs");
    ASSERT_FALSE(r.contains("error")) << r.dump(2) << "\n" << server_->Log();
    EXPECT_EQ(r["plain"]["name"], "plain");
    EXPECT_EQ(r["plain"]["settings"]["optimizeFor"], "cost");
    EXPECT_EQ(r["plain"]["settings"]["schemaVersion"], 1);
    EXPECT_EQ(r["created"]["version"], 1);
    EXPECT_EQ(r["merged"]["version"], 2);
    EXPECT_EQ(r["merged"]["settings"]["models"]["ids"],
              nlohmann::json::array({"gen4_turbo", "gen4_image"}));
    EXPECT_EQ(r["merged"]["settings"]["maxCreditsPerGeneration"]["video"], 100);
    EXPECT_EQ(r["renamed"]["version"], 2);
    EXPECT_EQ(r["renamed"]["name"], "Ads (cheap)");
    EXPECT_EQ(r["listed"], nlohmann::json::array({"ads-video", "plain"}));
    EXPECT_EQ(r["retrieved"]["settings"]["optimizeFor"], "cost");
    EXPECT_EQ(r["duplicate"]["is"], true) << r.dump(2);
    EXPECT_EQ(r["duplicate"]["status"], 409);
    EXPECT_EQ(r["unknownModel"]["is"], true);
    EXPECT_EQ(r["unknownModel"]["body"]["issues"][0]["path"],
              nlohmann::json::parse(R"(["settings","models","ids","0"])"));
    EXPECT_EQ(r["missing"]["is"], true);
    EXPECT_EQ(r["missing"]["status"], 404);
    // Routed generation: the dry run (client.post) decides what generate.image.create then does.
    EXPECT_EQ(r["dryRun"]["dryRun"], true);
    EXPECT_FALSE(r["dryRun"].contains("id"));
    EXPECT_EQ(r["routed"]["dryRun"], false);
    EXPECT_EQ(r["routed"]["routing"], r["dryRun"]["routing"]);
    EXPECT_EQ(r["routed"]["routing"]["configId"], "media");
    EXPECT_EQ(r["routed"]["routing"]["resolvedSettings"]["priceCeiling"], 8);
    EXPECT_LE(r["routed"]["routing"]["estimatedCost"]["credits"].get<double>(), 8);
    EXPECT_EQ(r["routed"]["routing"]["resolvedInput"]["aspectRatio"], "16:9");
    EXPECT_EQ(r["task"]["status"], "SUCCEEDED");
    EXPECT_EQ(r["task"]["outputs"], 1);
    EXPECT_EQ(r["speech"]["resolvedInput"],
              nlohmann::json({{"type", "speech"}, {"voice", "preset"}}));
    EXPECT_EQ(r["noEligible"]["is"], true) << r.dump(2);
    EXPECT_EQ(r["noEligible"]["status"], 400);
    EXPECT_THAT(r["noEligible"]["body"]["error"].get<std::string>(),
                ::testing::StartsWith("No eligible model: the "));
    EXPECT_EQ(r["unknownRouter"]["is"], true);
    EXPECT_EQ(r["unknownRouter"]["status"], 404);
    // The decision log, newest first: the unserved video, the speech, the image, the dry run.
    const auto& log = r["log"]["data"];
    ASSERT_EQ(log.size(), 4u) << r["log"].dump(2);
    EXPECT_EQ(log[0]["status"], "no_eligible_model");
    EXPECT_EQ(log[1]["model"], r["speech"]["model"]);
    EXPECT_EQ(log[2]["taskId"], r["routed"]["id"]);
    EXPECT_EQ(log[3]["dryRun"], true);
    EXPECT_EQ(r["log"]["hasMore"], false);
}

// realtimeSessions.*, avatarConversations.* and avatars.getUsage as a new user of the official
// client would use them (tests/node/realtime_sdk.mjs), with the consume call a browser makes.
TEST_F(NodeSdk, RealtimeSessionsConsumedCancelledAndRecorded) {
    const auto r = RunNode("", "realtime_sdk.mjs");
    ASSERT_FALSE(r.contains("error")) << r.dump(2) << "\n" << server_->Log();
    const std::string id = r["created"]["id"];
    EXPECT_EQ(r["ready"]["status"], "READY");
    EXPECT_EQ(r["ready"]["hasKey"], true);
    EXPECT_EQ(r["consume"]["status"], 200);
    EXPECT_EQ(r["consume"]["cors"], "*");
    EXPECT_EQ(r["consume"]["body"]["roomName"], id);
    EXPECT_EQ(r["consume"]["body"]["url"],
              "ws://127.0.0.1:" + std::to_string(server_->port()) + "/_genhost/realtime");
    EXPECT_EQ(r["cancelled"], "CANCELLED");
    ASSERT_GE(r["listed"].size(), 1u);
    EXPECT_EQ(r["listed"][0]["id"], id);
    EXPECT_EQ(r["listed"][0]["hasTools"], true);
    EXPECT_EQ(r["conversation"]["status"], "ended");
    EXPECT_EQ(r["conversation"]["tools"][0]["name"], "show_recipe");
    EXPECT_EQ(r["conversation"]["maxDuration"], 120);
    EXPECT_GE(r["usage"]["totalSessions"].get<int>(), 1);
    EXPECT_EQ(r["deleted"]["is"], true);
    EXPECT_EQ(r["badBody"]["is"], true);
    EXPECT_EQ(r["badBody"]["body"]["issues"][0]["path"], nlohmann::json::array({"maxDuration"}));
    EXPECT_EQ(r["missing"]["is"], true);
    EXPECT_EQ(r["missing"]["status"], 404);
}

// genhost's media-plane tokens pass LiveKit's own TokenVerifier (tests/node/livekit_token.mjs).
TEST_F(NodeSdk, MediaTokensPassLiveKitsTokenVerifier) {
    const auto r = RunNode("", "livekit_token.mjs");
    ASSERT_FALSE(r.contains("error")) << r.dump(2);
    const std::string id = r["id"];
    EXPECT_EQ(r["user"]["sub"], "user");
    EXPECT_EQ(r["user"]["iss"], "genhost");
    EXPECT_EQ(r["user"]["video"]["room"], id);
    EXPECT_EQ(r["user"]["video"]["roomJoin"], true);
    EXPECT_EQ(r["user"]["video"]["canPublish"], true);
    EXPECT_EQ(r["backend"]["sub"], "backend");
    EXPECT_EQ(r["backend"]["video"]["room"], id);
    EXPECT_EQ(r["backend"]["video"]["canPublish"], false);
    EXPECT_EQ(r["backend"]["video"]["canPublishData"], true);
    EXPECT_GT(r["user"]["exp"].get<long long>(), r["user"]["nbf"].get<long long>());
    EXPECT_EQ(r["wrongSecret"], "refused");
    EXPECT_EQ(r["wrongIssuer"], "refused");
}

// organization.*, recipes.* (all seven, their tasks waited for with waitForTaskOutput) as a new
// user of the official client would use them (tests/node/organization_sdk.mjs).
TEST_F(NodeSdk, OrganizationCreditsAndEveryRecipe) {
    const fs::path png = fs::path(server_->data_dir()) / "product.png";
    std::ofstream(png, std::ios::binary) << UploadPng(640, 480);
    const fs::path mp4 = fs::path(server_->data_dir()) / "reference.mp4";
    std::ofstream(mp4, std::ios::binary) << MakeMp4(320, 240, 3.0);
    const auto r =
        RunNode(png.string(), "organization_sdk.mjs", "GENHOST_MP4='" + mp4.string() + "'");
    ASSERT_FALSE(r.contains("error")) << r.dump(2) << "\n" << server_->Log();
    const std::int64_t before = r["before"]["creditBalance"];
    const std::int64_t after = r["after"]["creditBalance"];
    EXPECT_GT(before, after);
    EXPECT_TRUE(r["before"]["tier"]["models"].contains("multi_shot_video"));
    ASSERT_EQ(r["recipes"].size(), 7u);
    for (const auto& [name, recipe] : r["recipes"].items()) {
        EXPECT_EQ(recipe["status"], "SUCCEEDED") << name;
        EXPECT_GE(recipe["outputs"].get<int>(), 2) << name;  // the result, steps, steps.json
    }
    EXPECT_EQ(r["after"]["usage"]["models"]["product_ad"]["dailyGenerations"], 1);
    // Usage: today's net per recipe (the suite's earlier tests spent under other models),
    // summing to what the balance lost while the recipes ran.
    const std::set<std::string> recipes = {
        "ad_localization",        "marketing_stock_image", "multi_shot_video", "product_ad",
        "product_campaign_image", "product_swap",          "product_ugc"};
    std::int64_t used = 0;
    std::set<std::string> models;
    for (const auto& day : r["usage"]["results"]) {
        for (const auto& u : day["usedCredits"]) {
            if (!recipes.count(u["model"])) continue;
            used += u["amount"].get<std::int64_t>();
            models.insert(u["model"]);
        }
    }
    EXPECT_EQ(used, before - after);
    EXPECT_EQ(models, recipes);
    EXPECT_EQ(r["badBody"]["is"], true);
    EXPECT_GE(r["badBody"]["body"]["issues"].size(), 2u);
    EXPECT_EQ(r["badRange"]["is"], true);
    EXPECT_EQ(r["badRange"]["body"]["issues"][0]["path"], nlohmann::json::array({"beforeDate"}));
    EXPECT_EQ(r["missing"]["is"], true);
}

// workflows.* and workflowInvocations.* (its waiter included) as a new user of the official
// client would use them, the workflow published through genhost's stand-in endpoint
// (tests/node/workflows_sdk.mjs).
TEST_F(NodeSdk, WorkflowsPublishedListedRunAndWaitedFor) {
    const auto r = RunNode("", "workflows_sdk.mjs");
    ASSERT_FALSE(r.contains("error")) << r.dump(2) << "\n" << server_->Log();
    EXPECT_EQ(r["publishStatus"], 200);
    ASSERT_GE(r["list"]["data"].size(), 1u);
    const auto& listed = r["list"]["data"][0];
    EXPECT_EQ(listed["name"], "Still and two clips");
    EXPECT_EQ(listed["versions"][0]["id"], r["retrieved"]["id"]);
    EXPECT_EQ(r["retrieved"]["graph"]["nodes"].size(), 4u);
    EXPECT_EQ(r["retrieved"]["description"], "One image, animated twice");
    EXPECT_EQ(r["done"]["status"], "SUCCEEDED");
    const auto& output = r["done"]["output"];
    // The three generation nodes, each with its output fetched: an image and two videos.
    ASSERT_EQ(output.size(), 3u) << r["done"].dump();
    EXPECT_EQ(r["fetched"]["1d9a7b63-5a8f-4e1c-8b62-3e4d5c6b7a81"]["type"], "image/png");
    for (const char* clip :
         {"2eab8c74-6b9a-4f2d-9c73-4f5e6d7c8b92", "3fbc9d85-7cab-4a3e-8d84-5a6f7e8d9ca3"}) {
        EXPECT_EQ(r["fetched"][clip]["status"], 200);
        EXPECT_EQ(r["fetched"][clip]["type"], "video/mp4");
        EXPECT_GT(r["fetched"][clip]["bytes"].get<int>(), 1000);
    }
    EXPECT_FALSE(r["done"].contains("nodeErrors"));
    // Billed as the sum of its tasks: an image (5) and two 2-second clips (5 a second).
    EXPECT_EQ(r["spent"], 5 + 2 * 10);
    EXPECT_EQ(r["badOverride"]["is"], true);
    EXPECT_EQ(
        r["badOverride"]["body"]["issues"][0]["path"],
        nlohmann::json::array({"nodeOutputs", "0c8f6a52-4f7e-4d0b-9a51-2d3c4b5a6f70", "value"}));
    EXPECT_EQ(r["missing"]["is"], true);
}
}  // namespace
}  // namespace genhost::testing
