// Custom avatars against a real server (docs/avatars.md): POST /v1/avatars answers the avatar
// PROCESSING with every field of SPEC.md, and it becomes READY with previews genhost serves;
// GET lists newest first in keyset pages; PATCH validates (at least one field), refuses an
// avatar still PROCESSING with 409 and makes it PROCESSING again; DELETE removes it and its
// pictures; references to voices and documents that do not exist, unreadable pictures, bad
// pages and other organizations' avatars get the contract's errors; and avatar_videos draws a
// READY custom avatar's own picture (and refuses one that is not READY).
#include "helpers.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/video.hpp"

#include <gmock/gmock.h>
#include <pqxx/pqxx>

#include <filesystem>

namespace genhost::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// SolidPng is a w x h PNG of one colour.
std::string SolidPng(int w, int h, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    media::RgbImage img(w, h);
    for (std::size_t i = 0; i < img.pixels.size(); i += 3) {
        img.pixels[i] = r;
        img.pixels[i + 1] = g;
        img.pixels[i + 2] = b;
    }
    return media::EncodePicture(img, media::ImageFormat::kPng);
}

nlohmann::json CreateBody(const std::string& name = "Ada") {
    return {{"name", name},
            {"referenceImage", DataUri("image/png", SolidPng(600, 800, 230, 120, 40))},
            {"personality", "A patient maths teacher."},
            {"voice", {{"type", "service-live-preset"}, {"presetId", "clara"}}}};
}

class AvatarsApi : public ServerSuite<AvatarsApi> {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "0"}}); }

    HttpResponse Post(const nlohmann::json& body, const std::string& key = kTestKey) {
        return client_.Send("POST", "/v1/avatars", AuthHeaders(key), body.dump());
    }

    // WaitFor polls the avatar until its status is `want` or 30 s pass; returns the last body.
    nlohmann::json WaitFor(const std::string& id, const std::string& want) {
        nlohmann::json last;
        for (int i = 0; i < 600; ++i) {
            const auto r = client_.Send("GET", "/v1/avatars/" + id, AuthHeaders());
            if (r.status != 200) return {{"httpStatus", r.status}};
            last = r.Json();
            if (last["status"] == want) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return last;
    }

    void Sql(const std::string& sql) {
        pqxx::connection c(db_->dsn());
        pqxx::nontransaction n(c);
        n.exec(sql);
    }

    static void ExpectIssue(const HttpResponse& r, const std::vector<std::string>& path,
                            const std::string& message) {
        ASSERT_EQ(r.status, 400) << r.body;
        const auto body = r.Json();
        ASSERT_TRUE(body.contains("issues")) << r.body;
        bool found = false;
        for (const auto& issue : body["issues"]) {
            if (issue["path"] == path &&
                issue["message"].get<std::string>().find(message) != std::string::npos) {
                found = true;
            }
        }
        EXPECT_TRUE(found) << r.body;
    }

    HttpClient client_ = Client();
};

TEST_F(AvatarsApi, ACreatedAvatarIsProcessingThenReadyWithPreviews) {
    auto body = CreateBody();
    body["startScript"] = "Hello, class!";
    const auto r = Post(body);
    ASSERT_EQ(r.status, 200) << r.body;
    const auto created = r.Json();
    EXPECT_EQ(created["status"], "PROCESSING");
    for (const char* field :
         {"id", "name", "personality", "startScript", "voice", "referenceImageUri",
          "processedImageUri", "documentIds", "createdAt", "updatedAt", "status"}) {
        EXPECT_TRUE(created.contains(field)) << field;
    }
    EXPECT_EQ(created["name"], "Ada");
    EXPECT_EQ(created["startScript"], "Hello, class!");
    EXPECT_EQ(created["documentIds"], nlohmann::json::array());
    EXPECT_EQ(created["voice"], (nlohmann::json{{"type", "service-live-preset"},
                                                {"presetId", "clara"},
                                                {"name", "Clara"},
                                                {"description",
                                                 "American English female voice, medium pitch, "
                                                 "steady pace"}}));
    EXPECT_FALSE(created.contains("failureReason"));

    const std::string id = created["id"];
    const auto ready = WaitFor(id, "READY");
    ASSERT_EQ(ready["status"], "READY") << ready.dump();
    EXPECT_EQ(ready["createdAt"], created["createdAt"]);
    // The previews: JPEGs of at most 256 pixels, served by genhost behind signed URLs.
    for (const char* field : {"referenceImageUri", "processedImageUri"}) {
        ASSERT_TRUE(ready[field].is_string()) << ready.dump();
        const auto file = client_.Send("GET", PathOf(ready[field].get<std::string>()));
        ASSERT_EQ(file.status, 200) << field;
        EXPECT_EQ(file.Header("content-type"), "image/jpeg");
        const auto info = media::ProbeMedia(file.body);
        EXPECT_EQ(std::max(info.width, info.height), 256) << field;
    }
    // processed: the square crop of the 600x800 picture.
    const auto processed =
        media::ProbeMedia(client_.Send("GET", PathOf(ready["processedImageUri"])).body);
    EXPECT_EQ(processed.width, processed.height);

    const auto missing =
        client_.Send("GET", "/v1/avatars/182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e", AuthHeaders());
    EXPECT_EQ(missing.status, 404);
    EXPECT_EQ(missing.Json()["error"], "Avatar not found");
    EXPECT_EQ(client_.Send("GET", "/v1/avatars/not-a-uuid", AuthHeaders()).status, 404);
    EXPECT_EQ(client_.Send("PUT", "/v1/avatars/" + id, AuthHeaders(), "{}").status, 405);
}

TEST_F(AvatarsApi, BadBodiesAndReferencesGetTheirIssues) {
    const auto count = [&] {
        return client_.Send("GET", "/v1/avatars?limit=100", AuthHeaders()).Json()["data"].size();
    };
    const auto before = count();
    auto missing = Post({{"name", ""}});
    ExpectIssue(missing, {"name"}, "at least 1 character");
    ExpectIssue(missing, {"referenceImage"}, "Required");
    ExpectIssue(missing, {"personality"}, "Required");
    ExpectIssue(missing, {"voice"}, "Required");

    auto voice = CreateBody();
    voice["voice"] = {{"type", "service-live-preset"}, {"presetId", "Maya"}};
    ExpectIssue(Post(voice), {"voice", "presetId"}, "Invalid enum value");
    voice["voice"] = {{"type", "runway-live-preset"}, {"presetId", "clara"}};
    ExpectIssue(Post(voice), {"voice", "type"}, "");
    voice["voice"] = {{"type", "custom"}, {"id", "182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e"}};
    ExpectIssue(Post(voice), {"voice", "id"}, "Voice not found");

    auto docs = CreateBody();
    docs["documentIds"] = {"182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e"};
    ExpectIssue(Post(docs), {"documentIds", "0"}, "Document not found");
    docs["documentIds"] = nlohmann::json::array();
    docs["imageProcessing"] = "enhance";
    ExpectIssue(Post(docs), {"imageProcessing"}, "Invalid enum value");

    auto picture = CreateBody();
    picture["referenceImage"] = DataUri("image/png", "not a png at all");
    ExpectIssue(Post(picture), {"referenceImage"}, "");
    picture["referenceImage"] = "http://example.com/face.png";
    ExpectIssue(Post(picture), {"referenceImage"}, "");

    auto script = CreateBody();
    script["startScript"] = std::string(2001, 'a');
    ExpectIssue(Post(script), {"startScript"}, "at most 2000");
    EXPECT_EQ(count(), before);  // nothing above was stored
}

TEST_F(AvatarsApi, ListPagesNewestFirstAndChecksItsQuery) {
    const std::string key = CreateKey(*server_, "avatar-lister");
    std::vector<std::string> made;
    for (int i = 0; i < 5; ++i) {
        const auto r = Post(CreateBody("L" + std::to_string(i)), key);
        ASSERT_EQ(r.status, 200) << r.body;
        made.insert(made.begin(), r.Json()["id"].get<std::string>());
    }
    std::vector<std::string> seen;
    std::string target = "/v1/avatars?limit=2";
    for (int page = 0; page < 5; ++page) {
        const auto r = client_.Send("GET", target, AuthHeaders(key));
        ASSERT_EQ(r.status, 200) << r.body;
        const auto body = r.Json();
        for (const auto& a : body["data"]) seen.push_back(a["id"]);
        // hasMore and nextCursor agree: a cursor exactly while more follow.
        EXPECT_EQ(body["hasMore"], !body["nextCursor"].is_null()) << body.dump();
        EXPECT_EQ(body["hasMore"], page < 2) << body.dump();
        if (body["nextCursor"].is_null()) break;
        target = "/v1/avatars?limit=2&cursor=" + body["nextCursor"].get<std::string>();
    }
    EXPECT_EQ(seen, made);
    // The default page holds all five; another organization sees none of them.
    EXPECT_EQ(client_.Send("GET", "/v1/avatars", AuthHeaders(key)).Json()["data"].size(), 5u);
    const auto theirs = client_.Send("GET", "/v1/avatars", AuthHeaders()).Json();
    for (const auto& a : theirs["data"]) {
        EXPECT_EQ(std::count(made.begin(), made.end(), a["id"]), 0);
    }
    EXPECT_EQ(client_.Send("GET", "/v1/avatars/" + made[0], AuthHeaders()).status, 404);
    EXPECT_EQ(client_.Send("DELETE", "/v1/avatars/" + made[0], AuthHeaders()).status, 404);

    ExpectIssue(client_.Send("GET", "/v1/avatars?limit=0", AuthHeaders()), {"limit"},
                "greater than or equal to 1");
    ExpectIssue(client_.Send("GET", "/v1/avatars?limit=101", AuthHeaders()), {"limit"},
                "less than or equal to 100");
    ExpectIssue(client_.Send("GET", "/v1/avatars?limit=ten", AuthHeaders()), {"limit"},
                "Expected integer");
    ExpectIssue(client_.Send("GET", "/v1/avatars?cursor=zzz", AuthHeaders()), {"cursor"},
                "Invalid cursor");
    ExpectIssue(client_.Send("GET", "/v1/avatars?cursor=", AuthHeaders()), {"cursor"},
                "at least 1 character");
    ExpectIssue(client_.Send("GET", "/v1/avatars?cursor=" + std::string(1001, 'a'), AuthHeaders()),
                {"cursor"}, "at most 1000 character");
}

TEST_F(AvatarsApi, PatchChangesAReadyAvatarAndProcessesItAgain) {
    const auto created = Post(CreateBody("Patchy")).Json();
    const std::string id = created["id"];
    ASSERT_EQ(WaitFor(id, "READY")["status"], "READY");

    ExpectIssue(client_.Send("PATCH", "/v1/avatars/" + id, AuthHeaders(), "{}"), {},
                "at least one field");
    ExpectIssue(client_.Send("PATCH", "/v1/avatars/" + id, AuthHeaders(), R"({"name":""})"),
                {"name"}, "at least 1 character");
    EXPECT_EQ(client_
                  .Send("PATCH", "/v1/avatars/182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e", AuthHeaders(),
                        R"({"name":"x"})")
                  .status,
              404);

    const nlohmann::json change = {
        {"name", "Patched"},
        {"startScript", "Hi"},
        {"voice", {{"type", "service-live-preset"}, {"presetId", "roman"}}},
        {"referenceImage", DataUri("image/png", SolidPng(400, 300, 20, 60, 200))},
        {"imageProcessing", "none"}};
    auto r = client_.Send("PATCH", "/v1/avatars/" + id, AuthHeaders(), change.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    auto body = r.Json();
    EXPECT_EQ(body["status"], "PROCESSING");
    EXPECT_EQ(body["name"], "Patched");
    EXPECT_EQ(body["personality"], created["personality"]);
    EXPECT_EQ(body["voice"]["presetId"], "roman");
    EXPECT_TRUE(body["processedImageUri"].is_null());  // the old previews are not shown
    auto ready = WaitFor(id, "READY");
    ASSERT_EQ(ready["status"], "READY");
    const auto processed =
        media::ProbeMedia(client_.Send("GET", PathOf(ready["processedImageUri"])).body);
    EXPECT_EQ(processed.width, 256);  // `none`: the 400x300 picture as it is, 4:3
    EXPECT_EQ(processed.height, 192);

    // startScript null clears it; the picture stays.
    r = client_.Send("PATCH", "/v1/avatars/" + id, AuthHeaders(), R"({"startScript":null})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_TRUE(r.Json()["startScript"].is_null());
    ready = WaitFor(id, "READY");
    ASSERT_EQ(ready["status"], "READY");
    EXPECT_TRUE(ready["processedImageUri"].is_string());

    // An avatar still PROCESSING (held by a processor elsewhere) cannot be changed.
    Sql("UPDATE avatars SET status = 'PROCESSING', lease_owner = 'elsewhere',"
        " lease_expires_at = now() + interval '1 hour' WHERE id = '" +
        id + "'");
    r = client_.Send("PATCH", "/v1/avatars/" + id, AuthHeaders(), R"({"name":"again"})");
    EXPECT_EQ(r.status, 409);
    EXPECT_THAT(r.Json()["error"].get<std::string>(), HasSubstr("still being processed"));

    // A FAILED avatar shows why, and can be changed.
    Sql("UPDATE avatars SET status = 'FAILED', failure_reason = 'no face found',"
        " lease_owner = NULL WHERE id = '" +
        id + "'");
    body = client_.Send("GET", "/v1/avatars/" + id, AuthHeaders()).Json();
    EXPECT_EQ(body["status"], "FAILED");
    EXPECT_EQ(body["failureReason"], "no face found");
    r = client_.Send("PATCH", "/v1/avatars/" + id, AuthHeaders(), R"({"name":"again"})");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(WaitFor(id, "READY")["status"], "READY");
}

TEST_F(AvatarsApi, DeleteRemovesTheAvatarAndItsPictures) {
    const std::string id = Post(CreateBody("Gone")).Json()["id"];
    const auto ready = WaitFor(id, "READY");
    ASSERT_EQ(ready["status"], "READY");
    const std::string preview = PathOf(ready["referenceImageUri"]);
    EXPECT_EQ(client_.Send("GET", preview).status, 200);
    EXPECT_EQ(client_.Send("DELETE", "/v1/avatars/" + id, AuthHeaders()).status, 204);
    EXPECT_EQ(client_.Send("GET", "/v1/avatars/" + id, AuthHeaders()).status, 404);
    EXPECT_EQ(client_.Send("GET", preview).status, 404);
    EXPECT_FALSE(fs::exists(fs::path(server_->data_dir()) / "outputs" / ("avatar-" + id)));
    EXPECT_EQ(client_.Send("DELETE", "/v1/avatars/" + id, AuthHeaders()).status, 404);
}

TEST_F(AvatarsApi, AvatarVideosDrawACustomAvatarsOwnPicture) {
    const std::string id = Post(CreateBody("Speaker")).Json()["id"];
    ASSERT_EQ(WaitFor(id, "READY")["status"], "READY");
    const nlohmann::json request = {
        {"model", "gwm1_avatars"},
        {"avatar", {{"type", "custom"}, {"avatarId", id}}},
        {"speech", {{"type", "text"}, {"text", "Good morning, everyone."}}}};
    auto r = client_.Send("POST", "/v1/avatar_videos", AuthHeaders(), request.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const auto task = WaitForStatus(client_, r.Json()["id"], {"SUCCEEDED", "FAILED"});
    ASSERT_EQ(task["status"], "SUCCEEDED") << task.dump();
    const auto video = client_.Send("GET", PathOf(task["output"][0]));
    ASSERT_EQ(video.status, 200);
    const fs::path file = fs::path(server_->data_dir()) / "avatar-video-check.mp4";
    std::ofstream(file, std::ios::binary) << video.body;
    const auto info = media::ProbeMediaFile(file.string());
    EXPECT_EQ(info.width, 1280);
    EXPECT_EQ(info.height, 720);
    EXPECT_FALSE(info.audio_codec.empty());
    // The first frame shows the avatar's orange picture in the middle (no procedural portrait).
    const auto frame = media::LoadImageRgb(file.string());
    const std::uint8_t* px = frame.Row(100) + 3 * 640;
    EXPECT_NEAR(px[0], 230, 12);
    EXPECT_NEAR(px[1], 120, 12);
    EXPECT_NEAR(px[2], 40, 12);
    fs::remove(file);

    // Not this organization's, unknown, or not READY: a 400 at the avatar's id.
    const std::string other = CreateKey(*server_, "avatar-video-other");
    r = client_.Send("POST", "/v1/avatar_videos", AuthHeaders(other), request.dump());
    ExpectIssue(r, {"avatar", "avatarId"}, "Avatar not found");
    Sql("UPDATE avatars SET status = 'FAILED', failure_reason = 'x' WHERE id = '" + id + "'");
    r = client_.Send("POST", "/v1/avatar_videos", AuthHeaders(), request.dump());
    ExpectIssue(r, {"avatar", "avatarId"}, "The avatar is FAILED");
}

}  // namespace
}  // namespace genhost::testing
