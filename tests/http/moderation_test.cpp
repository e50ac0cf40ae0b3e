// Moderation end to end against a real genhost with the shipped lists (schemas/moderation.json):
// a refused prompt ends the task FAILED with SAFETY.INPUT.TEXT and keeps its estimated cost;
// contentModeration.publicFigureThreshold decides whether a named public figure is refused.
#include "helpers.hpp"

#include <gmock/gmock.h>

namespace genhost::testing {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

class Moderation : public ServerSuite<Moderation> {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_WORKERS", "2"}}); }

    // Run creates a gen4_image task and returns {creation response, finished task}.
    std::pair<json, json> Run(const json& extra) {
        auto c = Client();
        json body = ImageRequest();
        body.update(extra);
        const auto r = c.Send("POST", "/v1/text_to_image", AuthHeaders(), body.dump());
        EXPECT_EQ(r.status, 200) << r.body;
        const json created = r.Json();
        return {created,
                WaitForStatus(c, created["id"].get<std::string>(),
                              {"SUCCEEDED", "FAILED", "CANCELLED"}, std::chrono::seconds(30))};
    }
};

TEST_F(Moderation, ARefusedPromptFailsWithSafetyInputTextAndKeepsItsCost) {
    const auto [created, task] = Run({{"promptText", "A Torture-Porn scene in a lighthouse"}});
    EXPECT_EQ(task["status"], "FAILED");
    EXPECT_EQ(task["failureCode"], "SAFETY.INPUT.TEXT");
    EXPECT_THAT(task["failure"].get<std::string>(), HasSubstr("promptText"));
    EXPECT_THAT(task["failure"].get<std::string>(), ::testing::Not(HasSubstr("orture")));
    EXPECT_FALSE(task.contains("output"));
    ASSERT_TRUE(created.contains("estimatedCost"));
    EXPECT_GT(created["estimatedCost"]["credits"].get<double>(), 0);
    EXPECT_EQ(task["estimatedCost"], created["estimatedCost"]);
}

TEST_F(Moderation, ACleanPromptSucceeds) {
    const auto [created, task] = Run({{"promptText", "a lighthouse at dusk, waves crashing"}});
    EXPECT_EQ(task["status"], "SUCCEEDED");
}

TEST_F(Moderation, PublicFiguresFollowTheTasksThreshold) {
    const auto [c1, strict] = Run({{"promptText", "Taylor Swift reading in a lighthouse"}});
    EXPECT_EQ(strict["status"], "FAILED");
    EXPECT_EQ(strict["failureCode"], "SAFETY.INPUT.TEXT");
    EXPECT_THAT(strict["failure"].get<std::string>(), HasSubstr("public figure"));
    EXPECT_EQ(strict["estimatedCost"], c1["estimatedCost"]);

    const json low = {{"publicFigureThreshold", "low"}};
    const auto [c2, lenient] =
        Run({{"promptText", "Taylor Swift reading in a lighthouse"}, {"contentModeration", low}});
    EXPECT_EQ(lenient["status"], "SUCCEEDED");

    const auto [c3, risky] =
        Run({{"promptText", "Taylor Swift arrested in a lighthouse"}, {"contentModeration", low}});
    EXPECT_EQ(risky["status"], "FAILED");
    EXPECT_EQ(risky["failureCode"], "SAFETY.INPUT.TEXT");
}

}  // namespace
}  // namespace genhost::testing
