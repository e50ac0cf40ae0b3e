// Tests for genhost/providers/provider_config.hpp: GENHOST_PROVIDERS, GENHOST_PROVIDERS_FILE and
// GENHOST_MODEL_PROVIDERS parsing, routing models over the catalog, the start-up check of
// unserved models; and MediaInputsOf (http_provider.hpp), which finds the media strings a
// provider is sent URLs for.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "genhost/catalog/catalog.hpp"
#include "genhost/providers/http_provider.hpp"
#include "genhost/providers/provider_config.hpp"

namespace genhost::providers {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

std::string ReadFile(const std::string& relative) {
    std::ifstream in(std::string(GENHOST_SOURCE_DIR) + "/" + relative, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string ErrorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "no error";
}

TEST(ParseProviders, ReadsTheListWithDefaultOptions) {
    const auto p =
        ParseProviders(" gpu1=http://10.0.0.5:9000 , gpu2=https://infer.example/x/,", "");
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0].name, "gpu1");
    EXPECT_EQ(p[0].url, "http://10.0.0.5:9000");
    EXPECT_EQ(p[0].poll_interval, std::chrono::milliseconds(1000));
    EXPECT_EQ(p[0].retries, 4);
    EXPECT_EQ(p[1].name, "gpu2");
    EXPECT_EQ(p[1].url, "https://infer.example/x/");
    EXPECT_TRUE(ParseProviders("", "").empty());
}

TEST(ParseProviders, ReadsTheFileWithEveryOption) {
    const auto p = ParseProviders("a=http://127.0.0.1:1", R"({
      "note": "ours",
      "providers": {"gpu": {
        "url": "https://gpu.internal:8443/genhost", "poll_interval": 0.25, "request_timeout": 5,
        "task_timeout": 600, "download_timeout": 120, "retries": 2, "backoff": 0.1,
        "max_output_bytes": 1000, "max_outputs": 3, "max_inline_input_bytes": 0,
        "ca_file": "/etc/ca.pem", "headers": {"Authorization": "Bearer t"}, "note": "x"}}})");
    ASSERT_EQ(p.size(), 2u);
    const auto& g = p[1];
    EXPECT_EQ(g.name, "gpu");
    EXPECT_EQ(g.url, "https://gpu.internal:8443/genhost");
    EXPECT_EQ(g.poll_interval, std::chrono::milliseconds(250));
    EXPECT_EQ(g.request_timeout, std::chrono::milliseconds(5000));
    EXPECT_EQ(g.task_timeout, std::chrono::milliseconds(600000));
    EXPECT_EQ(g.download_timeout, std::chrono::milliseconds(120000));
    EXPECT_EQ(g.retries, 2);
    EXPECT_EQ(g.backoff, std::chrono::milliseconds(100));
    EXPECT_EQ(g.max_output_bytes, 1000u);
    EXPECT_EQ(g.max_outputs, 3);
    EXPECT_EQ(g.max_inline_input_bytes, 0u);
    EXPECT_EQ(g.ca_file, "/etc/ca.pem");
    EXPECT_THAT(g.headers, ElementsAre(Pair("Authorization", "Bearer t")));
}

TEST(ParseProviders, RefusesMistakes) {
    EXPECT_THAT(ErrorOf([] { ParseProviders("gpu", ""); }), HasSubstr("expected name=value"));
    EXPECT_THAT(ErrorOf([] { ParseProviders("gpu=ftp://x", ""); }),
                HasSubstr("http:// or https://"));
    EXPECT_THAT(ErrorOf([] { ParseProviders("gpu=http://x/?a=b", ""); }), HasSubstr("query"));
    EXPECT_THAT(ErrorOf([] { ParseProviders("builtin=http://x", ""); }), HasSubstr("not builtin"));
    EXPECT_THAT(ErrorOf([] { ParseProviders("a b=http://x", ""); }), HasSubstr("invalid provider"));
    EXPECT_THAT(ErrorOf([] { ParseProviders("g=http://x,g=http://y", ""); }),
                HasSubstr("configured twice"));
    EXPECT_THAT(ErrorOf([] {
                    ParseProviders("g=http://x", R"({"providers": {"g": {"url": "http://y"}}})");
                }),
                HasSubstr("configured twice"));
    EXPECT_THAT(ErrorOf([] { ParseProviders("", "[]"); }), HasSubstr("not a JSON object"));
    EXPECT_THAT(ErrorOf([] { ParseProviders("", R"({"provider": {}})"); }),
                HasSubstr("unknown key \"provider\""));
    EXPECT_THAT(ErrorOf([] { ParseProviders("", R"({"providers": {"g": {}}})"); }),
                HasSubstr("url is required"));
    EXPECT_THAT(ErrorOf([] {
                    ParseProviders("", R"({"providers": {"g": {"url": "http://x", "retry": 1}}})");
                }),
                HasSubstr("unknown key \"retry\""));
    EXPECT_THAT(ErrorOf([] {
                    ParseProviders(
                        "", R"({"providers": {"g": {"url": "http://x", "poll_interval": 0}}})");
                }),
                HasSubstr("poll_interval must be a number of seconds > 0"));
    EXPECT_THAT(ErrorOf([] {
                    ParseProviders("",
                                   R"({"providers": {"g": {"url": "http://x", "retries": -1}}})");
                }),
                HasSubstr("retries must be a non-negative integer"));
    EXPECT_THAT(ErrorOf([] {
                    ParseProviders(
                        "", R"({"providers": {"g": {"url": "http://x", "max_outputs": 0}}})");
                }),
                HasSubstr("max_outputs must be between 1"));
}

TEST(ModelRoutes, ParseAndApplyOverTheCatalog) {
    const auto routes = ParseModelRoutes("gen4.5=gpu1, veo3.1=gpu1,gen4_image=builtin");
    EXPECT_THAT(routes, ElementsAre(Pair("gen4.5", "gpu1"), Pair("gen4_image", "builtin"),
                                    Pair("veo3.1", "gpu1")));
    const auto models = RouteModels(ReadFile("schemas/models.json"), routes);
    const auto catalog = catalog::Catalog::Load(models, ReadFile("schemas/tiers.json"));
    EXPECT_EQ(catalog->FindModel("gen4.5")->provider, "gpu1");
    EXPECT_EQ(catalog->FindModel("veo3.1")->provider, "gpu1");
    EXPECT_EQ(catalog->FindModel("gen4_image")->provider, "builtin");
    EXPECT_EQ(catalog->FindModel("gen4_turbo")->provider, "builtin");

    const auto unserved = UnservedModels(*catalog, {"builtin"});
    EXPECT_THAT(unserved, ElementsAre(Pair("gen4.5", "gpu1"), Pair("veo3.1", "gpu1")));
    EXPECT_TRUE(UnservedModels(*catalog, {"builtin", "gpu1"}).empty());

    EXPECT_EQ(RouteModels("unchanged", {}), "unchanged");
    EXPECT_THAT(ErrorOf([] {
                    RouteModels(ReadFile("schemas/models.json"), {{"nope", "g"}});
                }),
                HasSubstr("no model \"nope\""));
    EXPECT_THAT(ErrorOf([] { ParseModelRoutes("a=g,a=h"); }), HasSubstr("routed twice"));
    EXPECT_THAT(ErrorOf([] { ParseModelRoutes("a=g h"); }), HasSubstr("invalid provider name"));
}

TEST(MediaInputsOf, FindsStringsArraysAndUriFieldsFromTheCatalog) {
    const auto catalog =
        catalog::Catalog::Load(ReadFile("schemas/models.json"), ReadFile("schemas/tiers.json"));
    auto pointers = [&](const std::string& endpoint, const json& input) {
        std::vector<std::string> out;
        for (const auto& m : MediaInputsOf(*catalog, endpoint, input)) {
            out.push_back(m.pointer + " " + m.kind);
        }
        return out;
    };
    EXPECT_THAT(pointers("image_to_video",
                         {{"model", "gen4.5"}, {"promptImage", "data:image/png;base64,AA=="}}),
                ElementsAre("/promptImage image"));
    EXPECT_THAT(pointers("image_to_video",
                         {{"model", "gen4.5"},
                          {"promptImage",
                           json::array({{{"uri", "https://a/x.png"}, {"position", "first"}}})}}),
                ElementsAre("/promptImage/0/uri image"));
    EXPECT_THAT(pointers("text_to_image", {{"model", "gen4_image"}, {"promptText", "x"}}),
                ElementsAre());
    EXPECT_THAT(pointers("text_to_image",
                         {{"model", "gen4_image"},
                          {"referenceImages", json::array({{{"uri", "https://a/1.png"}},
                                                           {{"uri", "https://a/2.png"}}})}}),
                ElementsAre("/referenceImages/0/uri image", "/referenceImages/1/uri image"));
    EXPECT_THAT(pointers("character_performance",
                         {{"model", "act_two"},
                          {"character", {{"type", "video"}, {"uri", "https://a/c.mp4"}}},
                          {"reference", {{"type", "video"}, {"uri", "https://a/r.mp4"}}}}),
                ElementsAre("/character/uri video", "/reference/uri video"));
    EXPECT_TRUE(pointers("text_to_image", {{"model", "nope"}}).empty());
    EXPECT_TRUE(pointers("text_to_image", json::array()).empty());
}

}  // namespace
}  // namespace genhost::providers
