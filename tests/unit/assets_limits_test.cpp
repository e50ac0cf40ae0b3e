// The pure checks of media inputs: approved types, the bytes matching the declared type, the
// per-asset limits (dimensions, aspect ratio) and the per-field limits of the catalog.
#include "genhost/assets/content_types.hpp"
#include "genhost/assets/failure.hpp"
#include "genhost/assets/limits.hpp"

#include <gtest/gtest.h>

namespace genhost::assets {
namespace {

media::MediaInfo Png(int w, int h) {
    media::MediaInfo i;
    i.container = "png_pipe";
    i.video_codec = "png";
    i.width = w;
    i.height = h;
    return i;
}

media::MediaInfo Mp4(double seconds, int w = 1280, int h = 720) {
    media::MediaInfo i;
    i.container = "mov,mp4,m4a,3gp,3g2,mj2";
    i.video_codec = "h264";
    i.width = w;
    i.height = h;
    i.duration_seconds = seconds;
    i.frame_rate = 24;
    return i;
}

media::MediaInfo Wav(double seconds) {
    media::MediaInfo i;
    i.container = "wav";
    i.audio_codec = "pcm_s16le";
    i.sample_rate = 48000;
    i.channels = 1;
    i.duration_seconds = seconds;
    return i;
}

TEST(ContentTypes, Normalizes) {
    EXPECT_EQ(NormalizeMediaType("Image/PNG; charset=binary"), "image/png");
    EXPECT_EQ(NormalizeMediaType("  video/mp4  "), "video/mp4");
    EXPECT_EQ(NormalizeMediaType(""), "");
}

TEST(ContentTypes, ApprovedListsPerKind) {
    EXPECT_TRUE(IsApprovedMediaType("image/png", MediaKind::kImage));
    EXPECT_TRUE(IsApprovedMediaType("image/jpeg", MediaKind::kImage));
    EXPECT_TRUE(IsApprovedMediaType("image/webp", MediaKind::kImage));
    EXPECT_TRUE(IsApprovedMediaType("video/mp4", MediaKind::kVideo));
    EXPECT_TRUE(IsApprovedMediaType("video/quicktime", MediaKind::kVideo));
    EXPECT_TRUE(IsApprovedMediaType("audio/mpeg", MediaKind::kAudio));
    EXPECT_TRUE(IsApprovedMediaType("audio/wav", MediaKind::kAudio));
    // Generic and cross-kind types are refused.
    for (const char* type : {"application/octet-stream", "binary/octet-stream", "text/plain",
                             "text/html", "application/json", "", "image/*", "image/svg+xml"}) {
        EXPECT_FALSE(IsApprovedMediaType(type, MediaKind::kImage)) << type;
        EXPECT_FALSE(IsApprovedMediaType(type, MediaKind::kVideo)) << type;
        EXPECT_FALSE(IsApprovedMediaType(type, MediaKind::kAudio)) << type;
    }
    EXPECT_FALSE(IsApprovedMediaType("video/mp4", MediaKind::kImage));
    EXPECT_FALSE(IsApprovedMediaType("image/png", MediaKind::kVideo));
    EXPECT_FALSE(IsApprovedMediaType("video/mp4", MediaKind::kAudio));
    EXPECT_FALSE(ApprovedMediaTypes(MediaKind::kAudio).empty());
}

TEST(ContentTypes, BytesMustBeWhatTheTypeSays) {
    EXPECT_TRUE(MatchesProbe(Png(10, 10), MediaKind::kImage, "image/png"));
    EXPECT_FALSE(MatchesProbe(Png(10, 10), MediaKind::kImage, "image/jpeg"));
    EXPECT_FALSE(MatchesProbe(Mp4(3), MediaKind::kImage, "image/png"));
    EXPECT_TRUE(MatchesProbe(Mp4(3), MediaKind::kVideo, "video/mp4"));
    EXPECT_TRUE(MatchesProbe(Mp4(3), MediaKind::kVideo, "video/quicktime"));
    EXPECT_FALSE(MatchesProbe(Mp4(3), MediaKind::kVideo, "video/webm"));
    EXPECT_FALSE(MatchesProbe(Png(10, 10), MediaKind::kVideo, "video/mp4"));
    EXPECT_TRUE(MatchesProbe(Wav(5), MediaKind::kAudio, "audio/wav"));
    EXPECT_FALSE(MatchesProbe(Wav(5), MediaKind::kAudio, "audio/mpeg"));
    EXPECT_FALSE(MatchesProbe(Mp4(3), MediaKind::kAudio, "audio/mp4"));  // no audio stream
    // Uploads declare no type: only the kind counts.
    EXPECT_TRUE(MatchesProbe(Png(10, 10), MediaKind::kImage, ""));
    EXPECT_TRUE(MatchesProbe(Mp4(3), MediaKind::kVideo, ""));
    EXPECT_FALSE(MatchesProbe(Wav(3), MediaKind::kVideo, ""));
}

TEST(CheckProbed, DimensionsAndAspectRatio) {
    const AssetLimits limits;
    EXPECT_FALSE(CheckProbed(Png(8000, 8000), MediaKind::kImage, "image/png", limits));
    EXPECT_FALSE(CheckProbed(Png(4000, 1000), MediaKind::kImage, "image/png", limits));
    EXPECT_FALSE(CheckProbed(Png(1000, 4000), MediaKind::kImage, "image/png", limits));

    auto f = CheckProbed(Png(8001, 4000), MediaKind::kImage, "image/png", limits);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FailureKind::kDimensions);
    EXPECT_EQ(f->message, "Invalid asset dimensions (either side must not exceed 8000 px)");
    EXPECT_STREQ(IssueCode(*f), "too_big");
    f = CheckProbed(Mp4(3, 1000, 9000), MediaKind::kVideo, "video/mp4", limits);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FailureKind::kDimensions);

    f = CheckProbed(Png(4001, 1000), MediaKind::kImage, "image/png", limits);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FailureKind::kAspectRatio);
    EXPECT_EQ(f->message, "Invalid aspect ratio (width / height must be between 0.25 and 4)");
    f = CheckProbed(Mp4(3, 100, 500), MediaKind::kVideo, "video/mp4", limits);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FailureKind::kAspectRatio);

    f = CheckProbed(Mp4(3), MediaKind::kImage, "image/png", limits);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FailureKind::kUnsupportedType);
    EXPECT_EQ(f->message, "Unsupported asset type");
    EXPECT_FALSE(CheckProbed(Wav(10), MediaKind::kAudio, "audio/wav", limits));
}

ProbedInput At(std::vector<std::string> path, MediaKind kind, media::MediaInfo info) {
    std::string pointer;
    for (const auto& p : path) pointer += "/" + p;
    return ProbedInput{std::move(path), pointer, kind, std::move(info)};
}

TEST(CheckFieldLimits, SingleVideoMaximum) {
    const auto inputs = nlohmann::json::parse(
        R"({"videoUri": {"kind": "video", "required": true, "max_seconds": 10}})");
    const AssetLimits limits;
    EXPECT_TRUE(
        CheckFieldLimits(inputs, {At({"videoUri"}, MediaKind::kVideo, Mp4(10.0))}, limits).empty());
    EXPECT_TRUE(  // container rounding
        CheckFieldLimits(inputs, {At({"videoUri"}, MediaKind::kVideo, Mp4(10.04))}, limits)
            .empty());
    const auto issues =
        CheckFieldLimits(inputs, {At({"videoUri"}, MediaKind::kVideo, Mp4(12))}, limits);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].code, "too_big");
    EXPECT_EQ(issues[0].path, (std::vector<std::string>{"videoUri"}));
    EXPECT_EQ(issues[0].message, "Invalid asset duration (must be at most 10 seconds)");
}

TEST(CheckFieldLimits, MinimumAndMaximumOfANestedField) {
    // act_two's reference: 3-30 s at /reference/uri.
    const auto inputs = nlohmann::json::parse(
        R"({"reference.uri": {"kind": "video", "min_seconds": 3, "max_seconds": 30},
            "character.uri": {"kind": ["image", "video"]}})");
    const AssetLimits limits;
    auto issues = CheckFieldLimits(inputs,
                                   {At({"character", "uri"}, MediaKind::kImage, Png(100, 100)),
                                    At({"reference", "uri"}, MediaKind::kVideo, Mp4(2))},
                                   limits);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].code, "too_small");
    EXPECT_EQ(issues[0].path, (std::vector<std::string>{"reference", "uri"}));
    EXPECT_EQ(issues[0].message, "Invalid asset duration (must be at least 3 seconds)");
    issues =
        CheckFieldLimits(inputs, {At({"reference", "uri"}, MediaKind::kVideo, Mp4(31))}, limits);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].message, "Invalid asset duration (must be at most 30 seconds)");
}

TEST(CheckFieldLimits, AFieldThatNeedsAudioRefusesSilentVideo) {
    // speech_to_speech's media: audio or a video, but there must be sound to work on.
    const auto inputs = nlohmann::json::parse(
        R"({"media.uri": {"kind": ["audio", "video"], "max_seconds": 300, "needs_audio": true}})");
    const AssetLimits limits;
    auto issues =
        CheckFieldLimits(inputs, {At({"media", "uri"}, MediaKind::kVideo, Mp4(5))}, limits);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].code, "custom");
    EXPECT_EQ(issues[0].path, (std::vector<std::string>{"media", "uri"}));
    EXPECT_EQ(issues[0].message, "The media has no audio track");
    media::MediaInfo with_sound = Mp4(5);
    with_sound.audio_codec = "aac";
    EXPECT_TRUE(
        CheckFieldLimits(inputs, {At({"media", "uri"}, MediaKind::kVideo, with_sound)}, limits)
            .empty());
    EXPECT_TRUE(CheckFieldLimits(inputs, {At({"media", "uri"}, MediaKind::kAudio, Wav(5))}, limits)
                    .empty());
    // Without the flag a silent video is fine (video_to_video's videoUri).
    const auto plain = nlohmann::json::parse(R"({"videoUri": {"kind": "video"}})");
    EXPECT_TRUE(
        CheckFieldLimits(plain, {At({"videoUri"}, MediaKind::kVideo, Mp4(5))}, limits).empty());
}

TEST(CheckFieldLimits, VoiceIsolationBounds) {
    const auto inputs = nlohmann::json::parse(
        R"({"audioUri": {"kind": "audio", "min_seconds": 4.6, "max_seconds": 3600}})");
    const AssetLimits limits;
    auto issues = CheckFieldLimits(inputs, {At({"audioUri"}, MediaKind::kAudio, Wav(3))}, limits);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].message, "Invalid asset duration (must be at least 4.6 seconds)");
    EXPECT_TRUE(
        CheckFieldLimits(inputs, {At({"audioUri"}, MediaKind::kAudio, Wav(5))}, limits).empty());
    EXPECT_EQ(
        CheckFieldLimits(inputs, {At({"audioUri"}, MediaKind::kAudio, Wav(3601))}, limits).size(),
        1u);
}

TEST(CheckFieldLimits, CombinedCapOfAnArrayField) {
    const auto inputs = nlohmann::json::parse(
        R"({"referenceVideos": {"kind": "video", "max_items": 3, "max_seconds": 15},
            "references": {"kind": "image", "max_items": 2}})");
    const AssetLimits limits;
    std::vector<ProbedInput> probed = {
        At({"referenceVideos", "0", "uri"}, MediaKind::kVideo, Mp4(8)),
        At({"referenceVideos", "1", "uri"}, MediaKind::kVideo, Mp4(7)),
    };
    EXPECT_TRUE(CheckFieldLimits(inputs, probed, limits).empty());
    probed.push_back(At({"referenceVideos", "2", "uri"}, MediaKind::kVideo, Mp4(1)));
    auto issues = CheckFieldLimits(inputs, probed, limits);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].path, (std::vector<std::string>{"referenceVideos"}));
    EXPECT_EQ(issues[0].message,
              "Invalid asset duration (referenceVideos must be at most 15 seconds combined)");

    probed = {At({"references", "0", "uri"}, MediaKind::kImage, Png(10, 10)),
              At({"references", "1", "uri"}, MediaKind::kImage, Png(10, 10)),
              At({"references", "2", "uri"}, MediaKind::kImage, Png(10, 10))};
    issues = CheckFieldLimits(inputs, probed, limits);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].path, (std::vector<std::string>{"references"}));
    EXPECT_EQ(issues[0].message, "Array must contain at most 2 element(s)");
}

TEST(CheckFieldLimits, CombinedWithAnotherFieldCountsBoth) {
    // hailuo3 video_to_video: referenceVideos combined with promptVideo at most 15 s.
    const auto inputs = nlohmann::json::parse(
        R"({"promptVideo": {"kind": "video", "max_seconds": 15},
            "referenceVideos": {"kind": "video", "max_items": 2, "max_seconds": 15,
                                "combined_with": ["promptVideo"]}})");
    const AssetLimits limits;
    std::vector<ProbedInput> probed = {
        At({"promptVideo"}, MediaKind::kVideo, Mp4(8)),
        At({"referenceVideos", "0", "uri"}, MediaKind::kVideo, Mp4(7)),
    };
    EXPECT_TRUE(CheckFieldLimits(inputs, probed, limits).empty());
    probed[1] = At({"referenceVideos", "0", "uri"}, MediaKind::kVideo, Mp4(8));
    const auto issues = CheckFieldLimits(inputs, probed, limits);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].path, (std::vector<std::string>{"referenceVideos"}));
    EXPECT_EQ(issues[0].message,
              "Invalid asset duration (referenceVideos and promptVideo must be "
              "at most 15 seconds combined)");
    // Without reference videos the prompt video alone is judged by its own rule.
    EXPECT_TRUE(CheckFieldLimits(inputs, {At({"promptVideo"}, MediaKind::kVideo, Mp4(15))}, limits)
                    .empty());
}

TEST(CheckFieldLimits, AnExclusiveCapIsStrict) {
    // seedance2_5: referenceAudio total under 30 s.
    const auto inputs = nlohmann::json::parse(
        R"({"referenceAudio": {"kind": "audio", "max_items": 10, "max_seconds": 30,
                               "max_seconds_exclusive": true}})");
    const AssetLimits limits;
    std::vector<ProbedInput> probed = {
        At({"referenceAudio", "0", "uri"}, MediaKind::kAudio, Wav(15)),
        At({"referenceAudio", "1", "uri"}, MediaKind::kAudio, Wav(14)),
    };
    EXPECT_TRUE(CheckFieldLimits(inputs, probed, limits).empty());
    probed[1] = At({"referenceAudio", "1", "uri"}, MediaKind::kAudio, Wav(15));
    auto issues = CheckFieldLimits(inputs, probed, limits);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].path, (std::vector<std::string>{"referenceAudio"}));
    EXPECT_EQ(issues[0].message,
              "Invalid asset duration (referenceAudio must be less than 30 seconds combined)");
    issues = CheckFieldLimits(
        inputs, {At({"referenceAudio", "0", "uri"}, MediaKind::kAudio, Wav(30))}, limits);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].path, (std::vector<std::string>{"referenceAudio", "0", "uri"}));
    EXPECT_EQ(issues[0].message, "Invalid asset duration (must be less than 30 seconds)");
}

TEST(CheckFieldLimits, PrefixesMatchWholeSegments) {
    // "/references" must not cover "/referencesExtra/0".
    const auto inputs =
        nlohmann::json::parse(R"({"references": {"kind": "image", "max_items": 0}})");
    EXPECT_TRUE(CheckFieldLimits(inputs,
                                 {At({"referencesExtra", "0"}, MediaKind::kImage, Png(10, 10))},
                                 AssetLimits{})
                    .empty());
    EXPECT_TRUE(CheckFieldLimits(nlohmann::json(), {}, AssetLimits{}).empty());
}

TEST(FactsOf, KeysByPointer) {
    const auto facts = FactsOf({At({"videoUri"}, MediaKind::kVideo, Mp4(7.5)),
                                At({"promptImage", "0", "uri"}, MediaKind::kImage, Png(640, 480))});
    ASSERT_EQ(facts.media.size(), 2u);
    const auto& video = facts.media.at("/videoUri");
    EXPECT_DOUBLE_EQ(video.duration_seconds.value(), 7.5);
    EXPECT_DOUBLE_EQ(video.frames_per_second.value(), 24);
    const auto& image = facts.media.at("/promptImage/0/uri");
    EXPECT_FALSE(image.duration_seconds.has_value());
    EXPECT_EQ(image.width.value(), 640);
    EXPECT_EQ(image.height.value(), 480);
}

TEST(Messages, SpecWording) {
    EXPECT_EQ(messages::HttpStatus(302),
              "Failed to fetch asset: HTTP status 302 (only 200 is accepted; redirects are not "
              "followed)");
    EXPECT_EQ(messages::Timeout(10),
              "Timeout while fetching asset (download longer than 10 seconds)");
    EXPECT_EQ(messages::ContentType("application/octet-stream", "image"),
              "Unsupported Content-Type 'application/octet-stream': not on the approved list for "
              "image assets");
}

}  // namespace
}  // namespace genhost::assets
