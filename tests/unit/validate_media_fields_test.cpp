// SchemaSet::MediaFields: every media string of a valid body, with its issue path, JSON pointer
// and kind, following the union branch the body selects.
#include "genhost/validate/schema_set.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace genhost::validate {
namespace {

using nlohmann::json;
using Path = std::vector<std::string>;

std::shared_ptr<const SchemaSet> RepoSchemas() {
    static const std::shared_ptr<const SchemaSet> set = [] {
        std::vector<SchemaDocument> documents;
        const auto dir = std::filesystem::path(GENHOST_SOURCE_DIR) / "schemas";
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
            if (entry.path().extension() != ".json") continue;
            std::ifstream in(entry.path(), std::ios::binary);
            std::ostringstream text;
            text << in.rdbuf();
            documents.push_back({"schemas/" + entry.path().filename().string(), text.str()});
        }
        return SchemaSet::Compile(documents);
    }();
    return set;
}

std::vector<MediaField> Fields(const char* endpoint, const json& body) {
    const auto issues = RepoSchemas()->Validate(endpoint, body);
    EXPECT_TRUE(issues.empty()) << "test body is invalid: " << issues.front().message;
    return RepoSchemas()->MediaFields(endpoint, body);
}

const char* const kImage = "https://example.com/cat.png";
const char* const kVideo = "https://example.com/clip.mp4";
const char* const kAudio = "https://example.com/voice.mp3";

TEST(MediaFields, BareStringPromptImage) {
    const auto fields =
        Fields("image_to_video",
               {{"model", "gen4_turbo"}, {"promptImage", kImage}, {"ratio", "1280:720"}});
    ASSERT_EQ(fields.size(), 1u);
    EXPECT_EQ(fields[0].path, (Path{"promptImage"}));
    EXPECT_EQ(fields[0].pointer, "/promptImage");
    EXPECT_EQ(fields[0].kind, "image");
}

TEST(MediaFields, ArrayPromptImage) {
    const auto fields =
        Fields("image_to_video",
               {{"model", "veo3.1"},
                {"promptImage",
                 {{{"uri", kImage}, {"position", "first"}},
                  {{"uri", "data:image/png;base64,iVBORw0KGgo="}, {"position", "last"}}}},
                {"ratio", "1280:720"}});
    ASSERT_EQ(fields.size(), 2u);
    EXPECT_EQ(fields[0].path, (Path{"promptImage", "0", "uri"}));
    EXPECT_EQ(fields[1].path, (Path{"promptImage", "1", "uri"}));
    EXPECT_EQ(fields[1].pointer, "/promptImage/1/uri");
}

TEST(MediaFields, NestedObjectsAndKinds) {
    const auto fields =
        Fields("character_performance", {{"model", "act_two"},
                                         {"character", {{"type", "video"}, {"uri", kVideo}}},
                                         {"reference", {{"type", "video"}, {"uri", kVideo}}}});
    ASSERT_EQ(fields.size(), 2u);
    EXPECT_EQ(fields[0].path, (Path{"character", "uri"}));
    EXPECT_EQ(fields[0].kind, "video");  // the branch the body chose
    EXPECT_EQ(fields[1].path, (Path{"reference", "uri"}));
    EXPECT_EQ(fields[1].pointer, "/reference/uri");
    EXPECT_EQ(fields[1].kind, "video");

    const auto image =
        Fields("character_performance", {{"model", "act_two"},
                                         {"character", {{"type", "image"}, {"uri", kImage}}},
                                         {"reference", {{"type", "video"}, {"uri", kVideo}}}});
    ASSERT_EQ(image.size(), 2u);
    EXPECT_EQ(image[0].kind, "image");
}

TEST(MediaFields, AudioAndVideoEndpoints) {
    auto fields = Fields("voice_isolation", {{"model", "voice_isolation"}, {"audioUri", kAudio}});
    ASSERT_EQ(fields.size(), 1u);
    EXPECT_EQ(fields[0].path, (Path{"audioUri"}));
    EXPECT_EQ(fields[0].kind, "audio");

    fields = Fields("video_upscale",
                    {{"model", "upscale_video_upscaler_creative"}, {"videoUri", kVideo}});
    ASSERT_EQ(fields.size(), 1u);
    EXPECT_EQ(fields[0].kind, "video");
}

TEST(MediaFields, TextOnlyRequestsHaveNone) {
    EXPECT_TRUE(Fields("text_to_image",
                       {{"model", "gen4_image"}, {"promptText", "a cat"}, {"ratio", "1280:720"}})
                    .empty());
}

TEST(MediaFields, ReferenceArrays) {
    const auto fields =
        Fields("text_to_image", {{"model", "gen4_image"},
                                 {"promptText", "a cat"},
                                 {"ratio", "1280:720"},
                                 {"referenceImages", {{{"uri", kImage}}, {{"uri", kImage}}}}});
    ASSERT_EQ(fields.size(), 2u);
    EXPECT_EQ(fields[0].path, (Path{"referenceImages", "0", "uri"}));
    EXPECT_EQ(fields[1].path, (Path{"referenceImages", "1", "uri"}));
}

}  // namespace
}  // namespace genhost::validate
