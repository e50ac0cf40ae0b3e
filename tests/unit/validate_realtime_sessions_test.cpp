// The request contract of POST /v1/realtime_sessions (schemas/realtime_sessions.json; SPEC.md
// "Limits", CLIENTS.md 3.12), ahead of its endpoint (issue 23): a full body passes with its
// defaults, and every rule of the tools, the avatar, the integrations and the bounds is an issue
// at its path.
#include "genhost/validate/schema_set.hpp"

#include "genhost/core/resources.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace genhost::validate {
namespace {

using nlohmann::json;

const SchemaSet& S() {
    static const auto schemas = [] {
        std::vector<SchemaDocument> docs;
        for (const auto& r : EmbeddedResources()) {
            if (r.path.rfind("schemas/", 0) == 0) {
                docs.push_back({std::string(r.path), std::string(r.content)});
            }
        }
        return SchemaSet::Compile(docs);
    }();
    return *schemas;
}

json Body() {
    return json::parse(R"({
      "model": "gwm1_avatars",
      "avatar": {"type": "custom", "avatarId": "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"},
      "personality": "A patient museum guide.",
      "startScript": "Welcome! Ask me about the paintings.",
      "tools": [
        {"type": "client_event", "name": "show_painting", "description": "Shows a painting.",
         "parameters": [
           {"type": "string", "name": "room", "description": "The room.", "enum": ["north", "south"]},
           {"type": "integer", "name": "index", "description": "Which one.", "required": true},
           {"type": "array", "name": "tags", "description": "Tags.", "items": {"type": "string"}},
           {"type": "object", "name": "frame", "description": "The frame.",
            "properties": [{"type": "boolean", "name": "gilded", "description": "Gilded?"}]}]},
        {"type": "backend_rpc", "name": "lookup_ticket", "description": "Finds a ticket."}
      ]
    })");
}

std::vector<std::string> Paths(const json& body) {
    std::vector<std::string> out;
    for (const auto& issue : S().Validate("realtime_sessions", body)) {
        out.push_back(json(issue.path).dump());
    }
    return out;
}

bool Has(const std::vector<std::string>& paths, const std::string& path) {
    return std::find(paths.begin(), paths.end(), path) != paths.end();
}

TEST(RealtimeSessionsSchema, AFullBodyPassesWithItsDefaults) {
    const auto issues = S().Validate("realtime_sessions", Body());
    for (const auto& i : issues) ADD_FAILURE() << json(i.path).dump() << ": " << i.message;
    ASSERT_TRUE(issues.empty());
    const auto filled = S().ApplyDefaults("realtime_sessions", Body());
    EXPECT_EQ(filled["maxDuration"], 300);
    EXPECT_EQ(filled["tools"][1]["timeoutSeconds"], 4);
    EXPECT_FALSE(filled["tools"][0].contains("timeoutSeconds"));
    json preset = {{"model", "gwm1_avatars"},
                   {"avatar", {{"type", "service-preset"}, {"presetId", "cooking-teacher"}}},
                   {"integration",
                    {{"type", "rtcroom"},
                     {"url", "wss://rooms.example.com"},
                     {"token", "t"},
                     {"roomName", "r"}}}};
    EXPECT_TRUE(S().Validate("realtime_sessions", preset).empty());
}

TEST(RealtimeSessionsSchema, ToolRulesAreIssuesAtTheirPaths) {
    json b = Body();
    for (int i = 0; i < 19; ++i) b["tools"].push_back(b["tools"][1]);
    EXPECT_TRUE(Has(Paths(b), R"(["tools"])"));  // 21 tools
    b = Body();
    b["tools"][0]["name"] = "9lives";
    b["tools"][1]["name"] = std::string(65, 'a');
    b["tools"][1]["description"] = std::string(1025, 'd');
    b["tools"][1]["timeoutSeconds"] = 9;
    auto paths = Paths(b);
    EXPECT_TRUE(Has(paths, R"(["tools","0","name"])"));
    EXPECT_TRUE(Has(paths, R"(["tools","1","name"])"));
    EXPECT_TRUE(Has(paths, R"(["tools","1","description"])"));
    EXPECT_TRUE(Has(paths, R"(["tools","1","timeoutSeconds"])"));
    b = Body();
    b["tools"][0]["timeoutSeconds"] = 4;  // client_event takes no timeout
    EXPECT_TRUE(Has(Paths(b), R"(["tools","0"])"));
    b = Body();
    auto& params = b["tools"][0]["parameters"];
    for (int i = 0; i < 17; ++i) params.push_back(params[1]);
    EXPECT_TRUE(Has(Paths(b), R"(["tools","0","parameters"])"));  // 21 parameters
    b = Body();
    json values = json::array();
    for (int i = 0; i < 21; ++i) values.push_back("v" + std::to_string(i));
    b["tools"][0]["parameters"][0]["enum"] = values;
    EXPECT_TRUE(Has(Paths(b), R"(["tools","0","parameters","0","enum"])"));
    b = Body();
    b["tools"][0]["parameters"][0]["enum"][1] = std::string(65, 'x');
    EXPECT_TRUE(Has(Paths(b), R"(["tools","0","parameters","0","enum","1"])"));
    b = Body();
    auto& nested = b["tools"][0]["parameters"][3]["properties"];
    for (int i = 0; i < 20; ++i) nested.push_back(nested[0]);
    EXPECT_TRUE(Has(Paths(b), R"(["tools","0","parameters","3","properties"])"));  // 21 nested
    b = Body();
    b["tools"][0]["parameters"][3]["properties"][0] = b["tools"][0]["parameters"][3];
    EXPECT_FALSE(Paths(b).empty());  // an object inside an object
    b = Body();
    b["tools"][0]["parameters"][2].erase("items");
    EXPECT_TRUE(Has(Paths(b), R"(["tools","0","parameters","2","items"])"));
}

TEST(RealtimeSessionsSchema, AvatarIntegrationAndBounds) {
    json b = Body();
    b["avatar"] = {{"type", "runway-preset"}, {"presetId", "cooking-teacher"}};  // client literal
    EXPECT_TRUE(Has(Paths(b), R"(["avatar","type"])"));
    b = Body();
    b["integration"] = {{"type", "elevenlabs"}, {"signedUrl", "wss://x"}};  // client literal
    EXPECT_TRUE(Has(Paths(b), R"(["integration","type"])"));
    b = Body();
    b["integration"] = {
        {"type", "rtcroom"}, {"url", "https://x"}, {"token", "t"}, {"roomName", "n"}};
    EXPECT_TRUE(Has(Paths(b), R"(["integration","url"])"));
    b = Body();
    b["integration"] = {{"type", "voice_provider"}, {"signedUrl", "wss://x"}};
    b["rtcroom"] = {{"url", "wss://r"}, {"token", "t"}, {"roomName", "n"}};
    EXPECT_TRUE(Has(Paths(b), R"(["rtcroom"])"));
    b = Body();
    b["maxDuration"] = 5;
    b["personality"] = std::string(10001, 'p');
    b["startScript"] = std::string(2001, 's');
    b["model"] = "gwm2";
    const auto paths = Paths(b);
    EXPECT_TRUE(Has(paths, R"(["maxDuration"])"));
    EXPECT_TRUE(Has(paths, R"(["personality"])"));
    EXPECT_TRUE(Has(paths, R"(["startScript"])"));
    EXPECT_TRUE(Has(paths, R"(["model"])"));
}

}  // namespace
}  // namespace genhost::validate
