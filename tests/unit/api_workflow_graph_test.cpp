// Publishing a workflow (genhost/api/workflows.hpp): a valid graph passes; cycles, type
// mismatches, broken edges and inputs their endpoint's schema refuses are each reported at their
// path, all at once.
#include "genhost/api/app.hpp"
#include "genhost/api/workflows.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

namespace genhost::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kPrompt = "11111111-1111-4111-8111-111111111111";
constexpr const char* kImage = "22222222-2222-4222-8222-222222222222";
constexpr const char* kVideoA = "33333333-3333-4333-8333-333333333333";
constexpr const char* kVideoB = "44444444-4444-4444-8444-444444444444";
constexpr const char* kSeconds = "55555555-5555-4555-8555-555555555555";

json Edge(const std::string& from, const std::string& output, const std::string& to,
          const std::string& field) {
    return {{"source", {{"node", from}, {"output", output}}},
            {"target", {{"node", to}, {"field", field}}}};
}

// FanOut is a text primitive into a text_to_image node whose image feeds two image_to_video
// nodes.
json FanOut() {
    return {{"name", "Fan-out"},
            {"description", "One image, two clips"},
            {"graph",
             {{"version", 1},
              {"nodes",
               {{{"id", kPrompt}, {"name", "Prompt"}, {"type", "text"}, {"value", "a lighthouse"}},
                {{"id", kImage},
                 {"name", "Still"},
                 {"type", "generation"},
                 {"endpoint", "text_to_image"},
                 {"input", {{"model", "gen4_image"}, {"ratio", "1280:720"}}}},
                {{"id", kVideoA},
                 {"name", "Clip A"},
                 {"type", "generation"},
                 {"endpoint", "image_to_video"},
                 {"input", {{"model", "gen4_turbo"}, {"ratio", "1280:720"}, {"duration", 5}}}},
                {{"id", kVideoB},
                 {"name", "Clip B"},
                 {"type", "generation"},
                 {"endpoint", "image_to_video"},
                 {"input",
                  {{"model", "gen4_turbo"}, {"ratio", "1280:720"}, {"promptText", "slow pan"}}}}}},
              {"edges",
               {Edge(kPrompt, "value", kImage, "promptText"),
                Edge(kImage, "output", kVideoA, "promptImage"),
                Edge(kImage, "output", kVideoB, "/promptImage")}}}}};
}

class WorkflowGraph : public ::testing::Test {
  protected:
    std::vector<Issue> Publish(const json& body) {
        const auto r = WorkflowPublication(*schemas_, *catalog_, "org", body);
        if (r) return {};
        EXPECT_FALSE(r.error().issues.empty());
        return r.error().issues;
    }

    static std::string Paths(const std::vector<Issue>& issues) {
        std::string out;
        for (const auto& i : issues) out += json(i.path).dump() + " " + i.message + "\n";
        return out;
    }

    std::shared_ptr<const validate::SchemaSet> schemas_ = LoadEmbeddedSchemas();
    std::shared_ptr<const catalog::Catalog> catalog_ = catalog::Catalog::LoadEmbedded();
};

TEST_F(WorkflowGraph, AFanOutIsPublishable) {
    const auto r = WorkflowPublication(*schemas_, *catalog_, "org", FanOut());
    ASSERT_TRUE(r) << Paths(r.error().issues);
    EXPECT_EQ(r->name, "Fan-out");
    EXPECT_EQ(r->description, "One image, two clips");
    EXPECT_EQ(json::parse(r->graph_json), FanOut()["graph"]);
}

TEST_F(WorkflowGraph, CyclesAreReportedAtTheEdgeThatClosesThem) {
    json body = FanOut();
    // Clip A's video back into the still's promptText: text_to_image takes no video, but first of
    // all the graph is no longer acyclic. Still -> Clip A -> Still.
    body["graph"]["edges"][0] = Edge(kVideoA, "output", kImage, "promptText");
    const auto issues = Publish(body);
    bool cycle = false;
    for (const auto& i : issues) {
        if (i.message.find("cycle") != std::string::npos) {
            cycle = true;
            EXPECT_EQ(i.path, (std::vector<std::string>{"graph", "edges", "0"})) << Paths(issues);
            EXPECT_THAT(i.message, HasSubstr("Still → Clip A → Still"));
        }
    }
    EXPECT_TRUE(cycle) << Paths(issues);

    json self = FanOut();
    self["graph"]["edges"].push_back(Edge(kImage, "output", kImage, "seed"));
    const auto self_issues = Publish(self);
    ASSERT_FALSE(self_issues.empty());
    EXPECT_EQ(self_issues[0].path, (std::vector<std::string>{"graph", "edges", "3"}))
        << Paths(self_issues);
}

TEST_F(WorkflowGraph, TypeMismatchesAreReportedAtTheEdgesField) {
    json body = FanOut();
    // Text into a media field, and an image into a text field.
    body["graph"]["edges"][2] = Edge(kPrompt, "value", kVideoB, "promptImage");
    body["graph"]["edges"].push_back(Edge(kImage, "output", kVideoA, "promptText"));
    const auto issues = Publish(body);
    ASSERT_EQ(issues.size(), 2u) << Paths(issues);
    EXPECT_EQ(issues[0].path, (std::vector<std::string>{"graph", "edges", "3", "target", "field"}));
    EXPECT_THAT(issues[0].message, HasSubstr("Type mismatch"));
    EXPECT_THAT(issues[0].message, HasSubstr("carries image media"));
    EXPECT_EQ(issues[1].path, (std::vector<std::string>{"graph", "edges", "2", "target", "field"}));
    EXPECT_THAT(issues[1].message, HasSubstr("takes image media"));

    // A number into a string field, and video into an image field.
    json numbers = FanOut();
    numbers["graph"]["nodes"].push_back(
        {{"id", kSeconds}, {"name", "Seconds"}, {"type", "number"}, {"value", 5}});
    numbers["graph"]["edges"][0] = Edge(kSeconds, "value", kImage, "promptText");
    numbers["graph"]["edges"][2] = Edge(kVideoA, "output", kVideoB, "promptImage");
    const auto number_issues = Publish(numbers);
    ASSERT_EQ(number_issues.size(), 2u) << Paths(number_issues);
    EXPECT_EQ(number_issues[0].path,
              (std::vector<std::string>{"graph", "edges", "0", "target", "field"}));
    EXPECT_THAT(number_issues[0].message, HasSubstr("a number"));
    EXPECT_EQ(number_issues[1].path,
              (std::vector<std::string>{"graph", "edges", "2", "target", "field"}));
    EXPECT_THAT(number_issues[1].message, HasSubstr("carries video media"));
}

TEST_F(WorkflowGraph, InputsTheirSchemaRefusesAreReportedAtTheirPath) {
    json body = FanOut();
    body["graph"]["nodes"][1]["input"]["ratio"] = "1:1";          // not a gen4_image ratio
    body["graph"]["nodes"][2]["input"]["duration"] = 99;          // out of range
    body["graph"]["nodes"][0]["value"] = std::string(1001, 'x');  // too long as a promptText
    const auto issues = Publish(body);
    const std::string all = Paths(issues);
    ASSERT_EQ(issues.size(), 3u) << all;
    EXPECT_EQ(issues[0].path, (std::vector<std::string>{"graph", "nodes", "0", "value"})) << all;
    EXPECT_EQ(issues[0].code, "too_big");
    EXPECT_THAT(issues[0].message, HasSubstr("promptText of text_to_image"));
    EXPECT_EQ(issues[1].path, (std::vector<std::string>{"graph", "nodes", "1", "input", "ratio"}));
    EXPECT_EQ(issues[1].code, "invalid_enum_value");
    EXPECT_EQ(issues[2].path,
              (std::vector<std::string>{"graph", "nodes", "2", "input", "duration"}));

    // A required field left empty with no edge feeding it: gen4_turbo needs promptImage.
    json unfed = FanOut();
    unfed["graph"]["edges"].erase(1);
    const auto unfed_issues = Publish(unfed);
    ASSERT_EQ(unfed_issues.size(), 1u) << Paths(unfed_issues);
    EXPECT_EQ(unfed_issues[0].path,
              (std::vector<std::string>{"graph", "nodes", "2", "input", "promptImage"}));
    EXPECT_EQ(unfed_issues[0].message, "Required");
}

TEST_F(WorkflowGraph, BrokenNodesAndEdgesAreAllReported) {
    json body = FanOut();
    auto& nodes = body["graph"]["nodes"];
    nodes[3]["id"] = kVideoA;                 // a duplicate id
    nodes[1]["endpoint"] = "text_to_images";  // no such endpoint
    auto& edges = body["graph"]["edges"];
    edges.push_back(Edge(kSeconds, "value", kImage, "seed"));         // no such node
    edges.push_back(Edge(kPrompt, "output", kVideoA, "promptText"));  // primitives have `value`
    edges.push_back(Edge(kVideoA, "output", kPrompt, "value"));       // into a primitive
    edges.push_back(Edge(kPrompt, "value", kVideoA, "model"));        // the model
    edges.push_back(Edge(kPrompt, "value", kVideoA, "a..b"));         // not a path
    const auto issues = Publish(body);
    const std::string all = Paths(issues);
    const auto has = [&](std::vector<std::string> path) {
        for (const auto& i : issues) {
            if (i.path == path) return true;
        }
        return false;
    };
    EXPECT_TRUE(has({"graph", "nodes", "3", "id"})) << all;
    EXPECT_TRUE(has({"graph", "nodes", "1", "endpoint"})) << all;
    EXPECT_TRUE(has({"graph", "edges", "3", "source", "node"})) << all;
    EXPECT_TRUE(has({"graph", "edges", "4", "source", "output"})) << all;
    EXPECT_TRUE(has({"graph", "edges", "5", "target", "node"})) << all;
    EXPECT_TRUE(has({"graph", "edges", "6", "target", "field"})) << all;
    EXPECT_TRUE(has({"graph", "edges", "7", "target", "field"})) << all;

    // The publication schema comes first: a missing graph, an unknown node type.
    EXPECT_EQ(Publish({{"name", "x"}})[0].path, (std::vector<std::string>{"graph"}));
    json typed = FanOut();
    typed["graph"]["nodes"][0]["type"] = "string";
    EXPECT_EQ(Publish(typed)[0].path, (std::vector<std::string>{"graph", "nodes", "0", "type"}));
    json primitives_only = FanOut();
    primitives_only["graph"]["nodes"] = json::array({FanOut()["graph"]["nodes"][0]});
    primitives_only["graph"]["edges"] = json::array();
    EXPECT_EQ(Publish(primitives_only)[0].path, (std::vector<std::string>{"graph", "nodes"}));
}

// Issue 31, 2: an edge's field is checked against the target schema's shape and bounds before
// any JSON is written: an index past maxItems (50,000,000 or 10^12) took 6 s and 1.78 GB, or a
// 500, because nlohmann's pointer assignment grows the array to the index it names.
TEST_F(WorkflowGraph, FieldsBeyondTheSchemasBoundsAreRefusedWithoutTouchingTheInput) {
    const auto refused = [&](const std::string& field, const std::string& why) {
        json body = FanOut();
        body["graph"]["edges"].push_back(Edge(kPrompt, "value", kImage, field));
        const auto started = std::chrono::steady_clock::now();
        const auto issues = Publish(body);
        const auto took = std::chrono::steady_clock::now() - started;
        SCOPED_TRACE(field + "\n" + Paths(issues));
        ASSERT_FALSE(issues.empty());
        EXPECT_EQ(issues[0].path,
                  (std::vector<std::string>{"graph", "edges", "3", "target", "field"}));
        EXPECT_THAT(issues[0].message, HasSubstr("has no place for field"));
        EXPECT_THAT(issues[0].message, HasSubstr(why));
        // Nothing was built: far below the seconds an allocation of the index would take.
        EXPECT_LT(took, std::chrono::seconds(2));
    };
    // gen4_image takes at most 3 reference images.
    refused("/referenceImages/50000000/uri", "referenceImages holds at most 3 item(s)");
    refused("referenceImages.1000000000000.uri", "referenceImages is an array");
    refused("/referenceImages/3/uri", "referenceImages holds at most 3 item(s)");
    refused("/referenceImages/01/uri", "'01' is no index");
    refused("/referenceImages/x", "'x' is no index");
    refused("/promptText/0", "promptText takes a value, not fields");
    refused("/nothing", "the input has no field nothing");
    refused("/referenceImages/0/nothing", "referenceImages.0 has no field nothing");

    // Inside the bounds, a primitive's text reaches a reference image's tag.
    json fits = FanOut();
    fits["graph"]["nodes"][1]["input"]["referenceImages"] = {
        {{"uri", "https://example.com/a.png"}, {"tag", "first"}}};
    fits["graph"]["nodes"].push_back(
        {{"id", kSeconds}, {"name", "Tag"}, {"type", "text"}, {"value", "second"}});
    fits["graph"]["nodes"][1]["input"]["referenceImages"].push_back(
        {{"uri", "https://example.com/b.png"}});
    fits["graph"]["edges"].push_back(Edge(kSeconds, "value", kImage, "referenceImages.1.tag"));
    const auto r = WorkflowPublication(*schemas_, *catalog_, "org", fits);
    EXPECT_TRUE(r) << (r ? "" : Paths(r.error().issues));
}

TEST_F(WorkflowGraph, FieldsArePointersOrDottedPaths) {
    EXPECT_EQ(FieldPointer("promptText"), "/promptText");
    EXPECT_EQ(FieldPointer("promptImage.0.uri"), "/promptImage/0/uri");
    EXPECT_EQ(FieldPointer("/promptImage/0/uri"), "/promptImage/0/uri");
    EXPECT_EQ(FieldPointer("a/b"), "/a~1b");
    EXPECT_EQ(FieldPointer(""), std::nullopt);
    EXPECT_EQ(FieldPointer("a..b"), std::nullopt);
    EXPECT_EQ(FieldPointer("/a~2"), std::nullopt);
    EXPECT_EQ(OutputKind(*catalog_, "text_to_image", "gen4_image"), "image");
    EXPECT_EQ(OutputKind(*catalog_, "image_to_video", "gen4_turbo"), "video");
    EXPECT_EQ(OutputKind(*catalog_, "text_to_speech", "voice_v3"), "audio");
}

}  // namespace
}  // namespace genhost::api
