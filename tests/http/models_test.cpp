// Every model of every generation endpoint end to end (issue 5): each request of
// tests/http/model_requests.json is sent to a real server, the builtin provider runs it, the task
// must SUCCEED, and every output is downloaded through its signed URL and read with libavformat:
// kind, size, duration within one frame, 24 fps for generated video, audio track present or
// absent, number of outputs, and the Content-Type and Content-Length the output URL serves.
#include "helpers.hpp"
#include "support/media_fixtures.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/media/image.hpp"

#include <gmock/gmock.h>

#include <fstream>
#include <sstream>

namespace genhost::testing {
namespace {

using nlohmann::json;

struct ModelCase {
    std::string endpoint;
    json body;
    json expect;
};

void PrintTo(const ModelCase& c, std::ostream* os) {
    *os << c.endpoint << " " << c.body.value("model", "");
}

std::vector<ModelCase> LoadCases() {
    std::ifstream in(std::string(GENHOST_SOURCE_DIR) + "/tests/http/model_requests.json");
    std::stringstream s;
    s << in.rdbuf();
    std::vector<ModelCase> cases;
    const json doc = json::parse(s.str());
    for (const auto& c : doc["cases"]) {
        cases.push_back({c["endpoint"], c["body"], c["expect"]});
    }
    return cases;
}

std::string CaseName(const ::testing::TestParamInfo<ModelCase>& info) {
    std::string name = info.param.endpoint + "_" + info.param.body["model"].get<std::string>();
    for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    return name;
}

class Models : public ServerSuite<Models, ::testing::TestWithParam<ModelCase>> {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "0"}}); }
};

TEST_P(Models, SucceedWithTheMediaAsked) {
    const ModelCase& c = GetParam();
    json body = c.body;
    FillMediaPlaceholders(body);
    HttpClient client("127.0.0.1", server_->port());
    const auto created = client.Send("POST", "/v1/" + c.endpoint, AuthHeaders(), body.dump());
    ASSERT_EQ(created.status, 200) << created.body;
    const std::string id = created.Json()["id"];
    const auto task =
        WaitForStatus(client, id, {"SUCCEEDED", "FAILED", "CANCELLED"}, std::chrono::seconds(300));
    ASSERT_EQ(task["status"], "SUCCEEDED") << task.dump() << "\n" << server_->Log();
    const json& e = c.expect;
    ASSERT_TRUE(task["output"].is_array());
    EXPECT_EQ(task["output"].size(), e.value("count", 1u));
    const std::string kind = e["kind"];
    for (const auto& url : task["output"]) {
        const auto file = client.Send("GET", PathOf(url), {});
        ASSERT_EQ(file.status, 200) << url;
        EXPECT_EQ(file.Header("content-length"), std::to_string(file.body.size()));
        const std::string type = file.Header("content-type");
        EXPECT_EQ(type.substr(0, type.find('/')), kind == "audio"   ? "audio"
                                                  : kind == "image" ? "image"
                                                                    : "video")
            << type;
        const media::MediaInfo info = media::ProbeMedia(file.body);
        SCOPED_TRACE(info.container + " " + info.video_codec + " " + info.audio_codec);
        if (kind == "audio") {
            EXPECT_TRUE(info.video_codec.empty());
            EXPECT_FALSE(info.audio_codec.empty());
            EXPECT_GT(info.sample_rate, 0);
            EXPECT_GT(info.duration_seconds, 0.2);
        } else {
            EXPECT_FALSE(info.video_codec.empty());
            EXPECT_GT(info.width, 0);
            EXPECT_GT(info.height, 0);
        }
        if (e.contains("width")) {
            EXPECT_EQ(info.width, e["width"].get<int>());
            EXPECT_EQ(info.height, e["height"].get<int>());
        }
        if (kind == "video") {
            EXPECT_NEAR(info.frame_rate, 24.0, 0.01);
            EXPECT_EQ(info.width % 2, 0);
            EXPECT_EQ(info.height % 2, 0);
        }
        if (e.contains("seconds")) {
            EXPECT_NEAR(info.duration_seconds, e["seconds"].get<double>(), 1.0 / 24 + 0.03);
        }
        if (e.contains("audio")) {
            EXPECT_EQ(!info.audio_codec.empty(), e["audio"].get<bool>());
        }
    }
}

INSTANTIATE_TEST_SUITE_P(EveryModel, Models, ::testing::ValuesIn(LoadCases()), CaseName);

}  // namespace
}  // namespace genhost::testing
