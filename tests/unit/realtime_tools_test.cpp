// A session's tools as the engines see them (genhost/realtime/engine.hpp): ToolSpecs reads the
// stored create-body tools with their defaults (timeoutSeconds 4), ToolJsonSchema gives the JSON
// Schema of a tool's arguments for every parameter type (string with enum, integer, number,
// boolean, array with items, object with nested properties), `required` defaulting to true and
// additionalProperties false at every object level.
#include "genhost/realtime/engine.hpp"

#include <gtest/gtest.h>

namespace genhost::realtime {
namespace {

using nlohmann::json;

json Tools() {
    return json::parse(R"([
      {"type": "backend_rpc", "name": "lookup", "description": "Looks a city up.",
       "parameters": [
         {"type": "string", "name": "city", "description": "The city.", "required": true,
          "enum": ["Paris", "Rome"]},
         {"type": "array", "name": "tags", "description": "Tags.", "items": {"type": "string"}},
         {"type": "object", "name": "where", "description": "A place.", "required": false,
          "properties": [
            {"type": "number", "name": "lat", "description": "Latitude."},
            {"type": "number", "name": "lng", "description": "Longitude.", "required": false},
            {"type": "array", "name": "ids", "description": "Ids.", "items": {"type": "integer"}}
          ]}
       ],
       "timeoutSeconds": 6.5},
      {"type": "client_event", "name": "show_slide", "description": "Shows a slide."},
      {"type": "backend_rpc", "name": "ping", "description": "Pings.", "parameters": []}
    ])");
}

TEST(ToolSpecs, ReadsTheStoredToolsWithTheirDefaults) {
    const auto specs = ToolSpecs(Tools());
    ASSERT_EQ(specs.size(), 3u);
    EXPECT_EQ(specs[0].type, "backend_rpc");
    EXPECT_EQ(specs[0].name, "lookup");
    EXPECT_EQ(specs[0].description, "Looks a city up.");
    EXPECT_EQ(specs[0].parameters, Tools()[0]["parameters"]);
    EXPECT_DOUBLE_EQ(specs[0].timeout_seconds, 6.5);

    EXPECT_EQ(specs[1].type, "client_event");
    EXPECT_EQ(specs[1].name, "show_slide");
    EXPECT_EQ(specs[1].parameters, json::array());
    EXPECT_DOUBLE_EQ(specs[1].timeout_seconds, 4);

    EXPECT_EQ(specs[2].parameters, json::array());
    EXPECT_DOUBLE_EQ(specs[2].timeout_seconds, 4);
}

TEST(ToolSpecs, NothingOrSomethingElseIsNoTools) {
    EXPECT_TRUE(ToolSpecs(json()).empty());
    EXPECT_TRUE(ToolSpecs(json::array()).empty());
    EXPECT_TRUE(ToolSpecs(json::object()).empty());
    EXPECT_EQ(ToolSpecs(json::array({1, "x", json::object()})).size(), 1u);
}

TEST(ToolJsonSchema, DescribesEveryParameterType) {
    ToolSpec tool;
    tool.name = "everything";
    tool.parameters = json::parse(R"([
      {"type": "string", "name": "s", "description": "A string."},
      {"type": "string", "name": "e", "description": "An enum.", "enum": ["a", "b"]},
      {"type": "integer", "name": "i", "description": "An integer.", "required": false},
      {"type": "number", "name": "n", "description": "A number.", "required": true},
      {"type": "boolean", "name": "b", "description": "A boolean."},
      {"type": "array", "name": "a", "description": "Numbers.", "items": {"type": "number"}},
      {"type": "object", "name": "o", "description": "An object.", "properties": [
        {"type": "string", "name": "k", "description": "Kind.", "enum": ["x"]},
        {"type": "boolean", "name": "f", "description": "Flag.", "required": false},
        {"type": "array", "name": "l", "description": "Flags.", "items": {"type": "boolean"},
         "required": false}
      ]}
    ])");
    const json expected = json::parse(R"({
      "type": "object",
      "properties": {
        "s": {"type": "string", "description": "A string."},
        "e": {"type": "string", "description": "An enum.", "enum": ["a", "b"]},
        "i": {"type": "integer", "description": "An integer."},
        "n": {"type": "number", "description": "A number."},
        "b": {"type": "boolean", "description": "A boolean."},
        "a": {"type": "array", "description": "Numbers.", "items": {"type": "number"}},
        "o": {"type": "object", "description": "An object.",
              "properties": {
                "k": {"type": "string", "description": "Kind.", "enum": ["x"]},
                "f": {"type": "boolean", "description": "Flag."},
                "l": {"type": "array", "description": "Flags.", "items": {"type": "boolean"}}
              },
              "required": ["k"],
              "additionalProperties": false}
      },
      "required": ["s", "e", "n", "b", "a", "o"],
      "additionalProperties": false
    })");
    EXPECT_EQ(ToolJsonSchema(tool), expected) << ToolJsonSchema(tool).dump(2);
}

TEST(ToolJsonSchema, TheStoredToolsSchema) {
    const auto specs = ToolSpecs(Tools());
    const json expected = json::parse(R"({
      "type": "object",
      "properties": {
        "city": {"type": "string", "description": "The city.", "enum": ["Paris", "Rome"]},
        "tags": {"type": "array", "description": "Tags.", "items": {"type": "string"}},
        "where": {"type": "object", "description": "A place.",
                  "properties": {
                    "lat": {"type": "number", "description": "Latitude."},
                    "lng": {"type": "number", "description": "Longitude."},
                    "ids": {"type": "array", "description": "Ids.", "items": {"type": "integer"}}
                  },
                  "required": ["lat", "ids"],
                  "additionalProperties": false}
      },
      "required": ["city", "tags"],
      "additionalProperties": false
    })");
    EXPECT_EQ(ToolJsonSchema(specs[0]), expected) << ToolJsonSchema(specs[0]).dump(2);
}

TEST(ToolJsonSchema, NoParametersIsAnEmptyObject) {
    const auto specs = ToolSpecs(Tools());
    const json expected = {{"type", "object"},
                           {"properties", json::object()},
                           {"required", json::array()},
                           {"additionalProperties", false}};
    EXPECT_EQ(ToolJsonSchema(specs[1]), expected);
    EXPECT_EQ(ToolJsonSchema(specs[2]), expected);
    EXPECT_EQ(ToolJsonSchema(ToolSpec{}), expected);
}

TEST(ToolJsonSchema, KeepsTheDeclaredOrderOfRequired) {
    ToolSpec tool;
    tool.parameters = json::parse(R"([
      {"type": "string", "name": "zeta", "description": "z"},
      {"type": "string", "name": "alpha", "description": "a"},
      {"type": "string", "name": "mid", "description": "m"}
    ])");
    EXPECT_EQ(ToolJsonSchema(tool)["required"], json({"zeta", "alpha", "mid"}));
}

}  // namespace
}  // namespace genhost::realtime
