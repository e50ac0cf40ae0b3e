// AssetReader, RequestInputs and InputArea without a network: data URIs, upload URIs through a
// fake UploadSource, references, and offline mode (URLs only parsed).
#include "genhost/assets/resolver.hpp"
#include "genhost/core/crypto.hpp"
#include "genhost/media/image.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace genhost::assets {
namespace {

namespace fs = std::filesystem;

class FakeUploads : public UploadSource {
  public:
    std::map<std::pair<std::string, std::string>, std::string> files;
    std::optional<std::string> PathFor(const std::string& org, const std::string& id) override {
        const auto it = files.find({org, id});
        if (it == files.end()) return std::nullopt;
        return it->second;
    }
};

class AssetReaderTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char dir[] = "/tmp/genhost-reader-XXXXXX";
        ASSERT_NE(mkdtemp(dir), nullptr);
        dir_ = dir;
        png_ = media::RenderImage({320, 200, 3, "reader", media::ImageFormat::kPng, {}});
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string DataUri(const std::string& type, const std::string& bytes) {
        return "data:" + type + ";base64," + Base64Encode(bytes);
    }

    FetcherOptions NoNetwork() {
        FetcherOptions o;
        o.system_cas = false;
        return o;
    }

    std::string dir_;
    std::string png_;
};

TEST_F(AssetReaderTest, DataUriBecomesAProbedFile) {
    const Fetcher fetcher(NoNetwork());
    NullUploadSource uploads;
    const AssetReader reader(fetcher, uploads, {});
    const auto r = reader.Read(DataUri("image/png", png_), MediaKind::kImage, "org", dir_ + "/a");
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->media_type, "image/png");
    EXPECT_EQ(r->info.width, 320);
    EXPECT_EQ(fs::file_size(dir_ + "/a"), png_.size());

    // Unpadded and upper-case base64 marker, as the request schemas allow.
    std::string unpadded = "data:image/png;BASE64," + Base64Encode(png_);
    while (unpadded.back() == '=') unpadded.pop_back();
    EXPECT_TRUE(reader.Read(unpadded, MediaKind::kImage, "org", dir_ + "/b").has_value());
}

TEST_F(AssetReaderTest, DataUriFailures) {
    const Fetcher fetcher(NoNetwork());
    NullUploadSource uploads;
    AssetLimits limits;
    limits.data_uri_bytes[0] = 100;
    const AssetReader reader(fetcher, uploads, limits);
    auto r = reader.Read("data:image/png;base64,@@@", MediaKind::kImage, "org", dir_ + "/x");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "Invalid data URI");
    r = reader.Read(DataUri("image/png", png_), MediaKind::kImage, "org", dir_ + "/x");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "Asset size exceeds the maximum for the type");
    r = reader.Read(DataUri("image/bmp", "BM"), MediaKind::kImage, "org", dir_ + "/x");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "Unsupported asset type");
    const AssetReader roomy(fetcher, uploads, {});
    r = roomy.Read(DataUri("image/png", "not a png at all"), MediaKind::kImage, "org", dir_ + "/x");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, FailureKind::kUnsupportedType);
    EXPECT_FALSE(fs::exists(dir_ + "/x"));  // a refused file does not stay
}

TEST_F(AssetReaderTest, UploadsAreLinkedFromTheirOwnersOnly) {
    const Fetcher fetcher(NoNetwork());
    FakeUploads uploads;
    std::ofstream(dir_ + "/upload-1", std::ios::binary) << png_;
    uploads.files[{"org-a", "upload-1"}] = dir_ + "/upload-1";
    const AssetReader reader(fetcher, uploads, {});
    auto r = reader.Read("genhost://upload-1", MediaKind::kImage, "org-a", dir_ + "/in");
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(fs::hard_link_count(dir_ + "/upload-1"), 2u);
    r = reader.Read("genhost://upload-1", MediaKind::kImage, "org-b", dir_ + "/in2");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "Failed to fetch asset: the upload URI is unknown or has expired");
    r = reader.Read("genhost://upload-1", MediaKind::kVideo, "org-a", dir_ + "/in3");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "Unsupported asset type");  // a picture is not a video
}

TEST_F(AssetReaderTest, UrlFailuresNeedNoNetwork) {
    const Fetcher fetcher(NoNetwork());
    NullUploadSource uploads;
    const AssetReader reader(fetcher, uploads, {});
    auto r = reader.Read("http://example.com/a.png", MediaKind::kImage, "org", dir_ + "/u");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "Only HTTPS URLs are allowed");
    r = reader.Read("https://169.254.169.254/latest", MediaKind::kImage, "org", dir_ + "/u");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "The URL must be a domain, not an IP address");
}

TEST_F(AssetReaderTest, RequestInputsRewritesTheInputAndKeepsFacts) {
    const Fetcher fetcher(NoNetwork());
    NullUploadSource uploads;
    const AssetReader reader(fetcher, uploads, {});
    const InputArea area(dir_ + "/inputs");
    RequestInputs inputs(reader, area, {true, 2});  // offline: URLs are only parsed

    PrepareRequest request;
    request.task_id = "0a0b0c0d-0000-4000-8000-000000000001";
    request.org_id = "org";
    request.input = {{"model", "veo3.1"},
                     {"promptImage",
                      {{{"uri", DataUri("image/png", png_)}, {"position", "first"}},
                       {{"uri", "https://cdn.example.com/last.png"}, {"position", "last"}}}}};
    request.media = {{{"promptImage", "0", "uri"}, "/promptImage/0/uri", MediaKind::kImage},
                     {{"promptImage", "1", "uri"}, "/promptImage/1/uri", MediaKind::kImage}};
    const Prepared prepared = inputs.PrepareSync(request);
    ASSERT_TRUE(prepared.issues.empty()) << prepared.issues[0].message;
    EXPECT_FALSE(prepared.all_probed);
    EXPECT_EQ(prepared.input["promptImage"][0]["uri"],
              "genhost-input:0a0b0c0d-0000-4000-8000-000000000001/input_0");
    EXPECT_EQ(prepared.input["promptImage"][1]["uri"], "https://cdn.example.com/last.png");
    EXPECT_EQ(prepared.facts.media.at("/promptImage/0/uri").width.value(), 320);
    const auto path = area.PathOf(prepared.input["promptImage"][0]["uri"].get<std::string>());
    ASSERT_TRUE(path);
    EXPECT_EQ(fs::file_size(*path), png_.size());

    // An issue anywhere: nothing stays on disk.
    request.task_id = "0a0b0c0d-0000-4000-8000-000000000002";
    request.input["promptImage"][1]["uri"] = "https://127.0.0.1/last.png";
    const Prepared refused = inputs.PrepareSync(request);
    ASSERT_EQ(refused.issues.size(), 1u);
    EXPECT_EQ(refused.issues[0].path, (std::vector<std::string>{"promptImage", "1", "uri"}));
    EXPECT_EQ(refused.issues[0].message, "The URL must be a domain, not an IP address");
    EXPECT_FALSE(fs::exists(area.DirFor(request.task_id)));
}

TEST_F(AssetReaderTest, RequestInputsChecksFieldLimits) {
    const Fetcher fetcher(NoNetwork());
    NullUploadSource uploads;
    const AssetReader reader(fetcher, uploads, {});
    const InputArea area(dir_ + "/inputs");
    RequestInputs inputs(reader, area, {false, 2});
    PrepareRequest request;
    request.task_id = "0a0b0c0d-0000-4000-8000-000000000003";
    request.input = {
        {"references",
         {{{"uri", DataUri("image/png", png_)}}, {{"uri", DataUri("image/png", png_)}}}}};
    request.media = {{{"references", "0", "uri"}, "/references/0/uri", MediaKind::kImage},
                     {{"references", "1", "uri"}, "/references/1/uri", MediaKind::kImage}};
    request.field_limits = {{"references", {{"kind", "image"}, {"max_items", 1}}}};
    const Prepared prepared = inputs.PrepareSync(request);
    ASSERT_EQ(prepared.issues.size(), 1u);
    EXPECT_EQ(prepared.issues[0].path, (std::vector<std::string>{"references"}));
    EXPECT_FALSE(fs::exists(area.DirFor(request.task_id)));
}

TEST(InputArea, References) {
    const InputArea area("/data/inputs");
    const std::string ref = InputArea::Reference("0a0b-4000", "input_3");
    EXPECT_EQ(ref, "genhost-input:0a0b-4000/input_3");
    EXPECT_TRUE(InputArea::IsReference(ref));
    EXPECT_EQ(area.PathOf(ref).value(), "/data/inputs/0a0b-4000/input_3");
    for (const char* bad :
         {"genhost-input:", "genhost-input:abc", "genhost-input:../x/input_0",
          "genhost-input:0a0b/../input_0", "genhost-input:0a0b/.hidden", "genhost-input:0a0b/a/b",
          "genhost-input:UPPER/input_0", "https://example.com/x", "genhost-input:0a0b/"}) {
        EXPECT_FALSE(area.PathOf(bad).has_value()) << bad;
    }
}

TEST(InputArea, SweepsOldTaskFoldersButNotUploads) {
    char dir[] = "/tmp/genhost-area-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const InputArea area(dir);
    fs::create_directories(area.DirFor("0a0b-0001"));
    fs::create_directories(std::string(dir) + "/uploads");
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(100);
    fs::last_write_time(area.DirFor("0a0b-0001"), old);
    fs::last_write_time(std::string(dir) + "/uploads", old);
    fs::create_directories(area.DirFor("0a0b-0002"));
    EXPECT_EQ(area.SweepOlderThan(std::chrono::hours(48)), 1u);
    EXPECT_FALSE(fs::exists(area.DirFor("0a0b-0001")));
    EXPECT_TRUE(fs::exists(area.DirFor("0a0b-0002")));
    EXPECT_TRUE(fs::exists(std::string(dir) + "/uploads"));
    fs::remove_all(dir);
}

}  // namespace
}  // namespace genhost::assets
