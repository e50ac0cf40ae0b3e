// Tests of the schema dialect itself with small inline documents: Compile's errors ($ref
// resolution and cycles, unknown keywords, unsafe patterns, ...), the formats, plain unions,
// nullable types, numeric enums and consts, number bounds, the issue cap, additionalProperties
// schemas, ApplyDefaults through $ref and unions, and Utf16Length.
#include "genhost/validate/schema_set.hpp"
#include "unit/issue_print.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace genhost::validate {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kDialect = "https://json-schema.org/draft/2020-12/schema";

json Endpoint(const std::string& name = "t") {
    return {{"name", name},
            {"method", "POST"},
            {"path", "/v1/" + name},
            {"kind", "generation"},
            {"summary", "test"}};
}

// EndpointDoc makes an endpoint document whose request schema is `schema` (keys merged into
// the root), with `defs` as its $defs.
std::string EndpointDoc(const json& schema, const json& defs = json::object()) {
    json doc = {{"$schema", kDialect}, {"x-endpoint", Endpoint()}};
    if (!defs.empty()) doc["$defs"] = defs;
    doc.update(schema);
    return doc.dump();
}

std::shared_ptr<const SchemaSet> One(const json& schema, const json& defs = json::object()) {
    return SchemaSet::Compile({{"schemas/t.json", EndpointDoc(schema, defs)}});
}

// Field compiles {"type":"object","properties":{"v": field},"additionalProperties":false} and
// returns the issues of {"v": value}.
std::vector<Issue> Field(const json& field, const json& value) {
    const auto set =
        One({{"type", "object"}, {"properties", {{"v", field}}}, {"additionalProperties", false}});
    return set->Validate("t", json{{"v", value}});
}

std::vector<Issue> At(const char* code, std::string message) {
    return {Issue{code, {"v"}, std::move(message)}};
}

std::string DocumentsError(const std::vector<SchemaDocument>& documents) {
    try {
        SchemaSet::Compile(documents);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

std::string CompileError(const json& schema, const json& defs = json::object()) {
    return DocumentsError({{"schemas/t.json", EndpointDoc(schema, defs)}});
}

const json kString = {{"type", "string"}};

TEST(Utf16Length, CountsCodeUnits) {
    EXPECT_EQ(Utf16Length(""), 0u);
    EXPECT_EQ(Utf16Length("abc"), 3u);
    EXPECT_EQ(Utf16Length("caf\xC3\xA9"), 4u);       // é: 2 bytes, 1 unit
    EXPECT_EQ(Utf16Length("\xE2\x82\xAC"), 1u);      // €: 3 bytes, 1 unit
    EXPECT_EQ(Utf16Length("\xF0\x9F\x98\x80"), 2u);  // 😀: 4 bytes, a surrogate pair
    EXPECT_EQ(Utf16Length("a\xF0\x9F\x98\x80"
                          "b"),
              4u);
    EXPECT_EQ(Utf16Length("\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD"),
              4u);  // 👍🏽: two astral code points
    EXPECT_EQ(Utf16Length(std::string(3, '\0')), 3u);
}

TEST(Compile, EndpointsAreListedByName) {
    const std::string doc_b = json{
        {"$schema", kDialect},
        {"x-endpoint", Endpoint("b")},
        {"type", "object"},
        {"additionalProperties",
         false}}.dump();
    const std::string doc_a = json{
        {"$schema", kDialect},
        {"x-endpoint", Endpoint("a")},
        {"type", "object"},
        {"additionalProperties",
         false}}.dump();
    const auto set = SchemaSet::Compile({{"schemas/b.json", doc_b},
                                         {"schemas/a.json", doc_a},
                                         {"schemas/models.json", R"({"note": "catalog data"})"}});
    ASSERT_EQ(set->Endpoints().size(), 2u);
    EXPECT_EQ(set->Endpoints()[0].name, "a");
    EXPECT_EQ(set->Endpoints()[1].name, "b");
    EXPECT_EQ(set->Endpoints()[1].path, "/v1/b");
    // Data files that are not schema documents are left alone.
    EXPECT_EQ(set->Document("schemas/models.json"), nullptr);
    EXPECT_NE(set->Document("schemas/a.json"), nullptr);
    EXPECT_THROW(set->Validate("c", json::object()), std::out_of_range);
    EXPECT_THROW(set->ApplyDefaults("c", json::object()), std::out_of_range);
}

TEST(Compile, BrokenDocumentsNameTheirLocation) {
    EXPECT_THAT(DocumentsError({{"schemas/t.json", "{"}}),
                HasSubstr("schemas/t.json: not valid JSON"));
    EXPECT_THAT(DocumentsError({{"schemas/t.json", R"({"$defs": {}})"}}),
                HasSubstr("a schema document declares \"$schema\""));
    EXPECT_THAT(CompileError({{"type", "object"},
                              {"additionalProperties", false},
                              {"properties", {{"a", {{"type", "string"}, {"minLenght", 1}}}}}}),
                HasSubstr("schemas/t.json#/properties/a: unknown keyword \"minLenght\""));
    EXPECT_THAT(CompileError({{"type", "strnig"}}), HasSubstr("unknown type \"strnig\""));
    EXPECT_THAT(CompileError({{"type", "object"}}),
                HasSubstr("an object schema must set \"additionalProperties\""));
    EXPECT_THAT(
        CompileError({{"type", "object"}, {"additionalProperties", false}, {"required", {"a"}}}),
        HasSubstr("\"required\" names \"a\", which is not in \"properties\""));
    EXPECT_THAT(CompileError({{"type", "integer"}, {"minLength", 1}}),
                HasSubstr("\"minLength\" needs \"type\" to include \"string\""));
    EXPECT_THAT(CompileError({{"type", "string"}, {"format", "email"}}),
                HasSubstr("unknown format \"email\""));
    EXPECT_THAT(CompileError({{"type", "string"}, {"format", "media"}}),
                HasSubstr("format media needs \"x-media-kind\""));
    EXPECT_THAT(CompileError({{"type", "string"}, {"enum", {"a", "a"}}}),
                HasSubstr("lists \"a\" twice"));
    EXPECT_THAT(CompileError({{"type", "string"}, {"enum", {1}}}),
                HasSubstr("value 1 does not have the schema's type"));
    EXPECT_THAT(
        CompileError({{"type", "string"}, {"default", 5}}),
        HasSubstr("schemas/t.json#/default: does not validate: Expected string, received number"));
    EXPECT_THAT(CompileError({{"type", "string"}, {"maxLength", 3}, {"examples", {"abcd"}}}),
                HasSubstr("/examples: does not validate"));
    EXPECT_THAT(CompileError({{"type", "string"}, {"x-endpoint", Endpoint()}, {"$id", 5}}),
                HasSubstr("\"$id\" must be a string"));
    const std::string twice =
        json{{"$schema", kDialect}, {"x-endpoint", Endpoint()}, {"type", "null"}}.dump();
    EXPECT_THAT(DocumentsError({{"schemas/a.json", twice}, {"schemas/b.json", twice}}),
                HasSubstr("endpoint \"t\" is defined twice"));
    EXPECT_THAT(DocumentsError({{"schemas/a.json", twice}, {"schemas/a.json", twice}}),
                HasSubstr("duplicate document path"));
}

TEST(Compile, PatternsNeedASmallMaxLength) {
    EXPECT_THAT(CompileError({{"type", "string"}, {"pattern", "^a"}}),
                HasSubstr("\"pattern\" needs \"maxLength\" of at most 256"));
    EXPECT_THAT(CompileError({{"type", "string"}, {"pattern", "^a"}, {"maxLength", 100000}}),
                HasSubstr("\"pattern\" needs \"maxLength\""));
    EXPECT_THAT(CompileError({{"type", "string"}, {"pattern", "(a"}, {"maxLength", 10}}),
                HasSubstr("\"pattern\" does not compile"));
    EXPECT_EQ(CompileError({{"type", "string"}, {"pattern", "^a"}, {"maxLength", 10}}), "");
}

TEST(Compile, RefsResolveAcrossDocumentsAndRejectCycles) {
    const std::string lib =
        json{{"$schema", kDialect}, {"$defs", {{"name", {{"type", "string"}, {"maxLength", 3}}}}}}
            .dump();
    const std::string user = EndpointDoc({{"type", "object"},
                                          {"additionalProperties", false},
                                          {"properties",
                                           {{"n", {{"$ref", "lib.json#/$defs/name"}}},
                                            {"m", {{"$ref", "./lib.json#/$defs/name"}}},
                                            {"l", {{"$ref", "#/$defs/local"}}}}}},
                                         {{"local", {{"$ref", "lib.json#/$defs/name"}}}});
    const auto set = SchemaSet::Compile({{"schemas/lib.json", lib}, {"schemas/t.json", user}});
    EXPECT_EQ(set->Validate("t", {{"n", "abcd"}, {"m", "ab"}, {"l", "abcde"}}),
              (std::vector<Issue>{
                  {"too_big", {"l"}, "String must contain at most 3 character(s)"},
                  {"too_big", {"n"}, "String must contain at most 3 character(s)"},
              }));

    EXPECT_THAT(CompileError({{"$ref", "#/$defs/missing"}}),
                HasSubstr("nothing at schemas/t.json#/$defs/missing"));
    EXPECT_THAT(CompileError({{"$ref", "other.json#/$defs/x"}}),
                HasSubstr("no document \"schemas/other.json\""));
    EXPECT_THAT(CompileError({{"$ref", "#/$defs/a"}},
                             {{"a", {{"$ref", "#/$defs/b"}}}, {"b", {{"$ref", "#/$defs/a"}}}}),
                HasSubstr("$ref cycle"));
    EXPECT_THAT(CompileError({{"$ref", "#/$defs/node"}},
                             {{"node",
                               {{"type", "object"},
                                {"additionalProperties", false},
                                {"properties", {{"child", {{"$ref", "#/$defs/node"}}}}}}}}),
                HasSubstr("$ref cycle through \"#/$defs/node\""));
    EXPECT_THAT(CompileError({{"$ref", "#/$defs/a"}, {"maxLength", 3}}, {{"a", kString}}),
                HasSubstr("beside \"$ref\" only annotations and a default are allowed"));
    EXPECT_THAT(CompileError({{"$ref", "#defs"}}), HasSubstr("only JSON-pointer fragments"));
    // An unused broken definition in a library document is still an error.
    const std::string broken =
        json{{"$schema", kDialect}, {"$defs", {{"x", {{"type", "text"}}}}}}.dump();
    EXPECT_THAT(DocumentsError({{"schemas/common.json", broken}}),
                HasSubstr("schemas/common.json#/$defs/x: unknown type \"text\""));
}

TEST(Compile, DiscriminatorsAreChecked) {
    const json a = {{"type", "object"},
                    {"additionalProperties", false},
                    {"properties", {{"model", {{"type", "string"}, {"const", "a"}}}}},
                    {"required", {"model"}}};
    json no_const = a;
    no_const["properties"]["model"] = kString;
    json not_required = a;
    not_required.erase("required");
    const json disc = {{"propertyName", "model"}};
    EXPECT_EQ(
        CompileError({{"oneOf", {{{"$ref", "#/$defs/a"}}}}, {"discriminator", disc}}, {{"a", a}}),
        "");
    EXPECT_THAT(CompileError({{"oneOf", {{{"$ref", "#/$defs/a"}}}}, {"discriminator", disc}},
                             {{"a", no_const}}),
                HasSubstr("needs a string \"const\""));
    EXPECT_THAT(CompileError({{"oneOf", {{{"$ref", "#/$defs/a"}}}}, {"discriminator", disc}},
                             {{"a", not_required}}),
                HasSubstr("must be an object schema that requires \"model\""));
    EXPECT_THAT(CompileError({{"oneOf", {{{"$ref", "#/$defs/a"}}, {{"$ref", "#/$defs/a"}}}},
                              {"discriminator", disc}},
                             {{"a", a}}),
                HasSubstr("two branches have \"a\""));
    EXPECT_THAT(CompileError({{"oneOf", {{{"$ref", "#/$defs/a"}}}},
                              {"discriminator", disc},
                              {"x-retired", {{"a", "gone"}}}},
                             {{"a", a}}),
                HasSubstr("\"a\" is also a live branch"));
    EXPECT_THAT(CompileError({{"oneOf", {{{"$ref", "#/$defs/a"}}}},
                              {"discriminator",
                               {{"propertyName", "model"}, {"mapping", {{"b", "#/$defs/a"}}}}}},
                             {{"a", a}}),
                HasSubstr("\"b\" does not map to the branch"));
    EXPECT_THAT(
        CompileError(
            {{"type", "object"}, {"additionalProperties", false}, {"x-retired", {{"a", "b"}}}}),
        HasSubstr("\"x-retired\" needs a discriminator"));
}

TEST(Formats, Uuid) {
    const json uuid = {{"type", "string"}, {"format", "uuid"}};
    EXPECT_THAT(Field(uuid, "182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e"), IsEmpty());
    EXPECT_THAT(Field(uuid, "182BD5E5-6E1A-4FE4-A799-AA6D9A6AB26E"), IsEmpty());
    const auto invalid = At("invalid_string", "Invalid uuid");
    EXPECT_EQ(Field(uuid, "182bd5e5-6e1a-1fe4-a799-aa6d9a6ab26e"), invalid);  // version 1
    EXPECT_EQ(Field(uuid, "182bd5e5-6e1a-4fe4-c799-aa6d9a6ab26e"), invalid);  // bad variant
    EXPECT_EQ(Field(uuid, "182bd5e56e1a4fe4a799aa6d9a6ab26e"), invalid);
    EXPECT_EQ(Field(uuid, "182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26"), invalid);
    EXPECT_EQ(Field(uuid, "g82bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e"), invalid);
}

TEST(Formats, DateTimeAndDate) {
    const json date_time = {{"type", "string"}, {"format", "date-time"}};
    for (const char* ok :
         {"2024-11-06T12:00:00Z", "2024-11-06T23:59:59.123456Z", "2024-02-29T00:00:00Z"}) {
        EXPECT_THAT(Field(date_time, ok), IsEmpty()) << ok;
    }
    for (const char* bad :
         {"2024-11-06T12:00:00+01:00", "2024-11-06T12:00:00", "2024-11-06 12:00:00Z",
          "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-11-06T24:00:00Z",
          "2024-11-06T12:00:00.Z", "2024-11-06t12:00:00z", "2024-11-06"}) {
        EXPECT_EQ(Field(date_time, bad), At("invalid_string", "Invalid datetime")) << bad;
    }
    const json date = {{"type", "string"}, {"format", "date"}};
    EXPECT_THAT(Field(date, "2024-02-29"), IsEmpty());
    for (const char* bad :
         {"2023-02-29", "2024-1-01", "2024-04-31", "2024-11-06T00:00:00Z", "20241106"}) {
        EXPECT_EQ(Field(date, bad), At("invalid_string", "Invalid date")) << bad;
    }
}

TEST(Formats, UriAndHttpsUrl) {
    const json uri = {{"type", "string"}, {"format", "uri"}};
    for (const char* ok : {"https://example.com/a", "wss://rtc.example.com:443/room",
                           "mailto:a@b.c", "https://[::1]:8080/x"}) {
        EXPECT_THAT(Field(uri, ok), IsEmpty()) << ok;
    }
    for (const char* bad :
         {"not a url", "example.com", "http://", "https://exa mple.com", "://x", "1http://x"}) {
        EXPECT_EQ(Field(uri, bad), At("invalid_string", "Invalid url")) << bad;
    }
    const json https = {{"type", "string"}, {"format", "https-url"}};
    EXPECT_THAT(Field(https, "https://example.com/hook"), IsEmpty());
    EXPECT_EQ(Field(https, "http://example.com/hook"),
              At("invalid_string", "Only HTTPS URLs are allowed"));
    EXPECT_EQ(Field(https, "https:example.com"), At("invalid_string", "Invalid URL"));
}

TEST(Formats, MediaKinds) {
    const json video = {{"type", "string"}, {"format", "media"}, {"x-media-kind", "video"}};
    const json audio = {{"type", "string"}, {"format", "media"}, {"x-media-kind", "audio"}};
    EXPECT_THAT(Field(video, "data:video/mp4;base64,AAAAIGZ0eXBpc29t"), IsEmpty());
    EXPECT_THAT(Field(audio, "data:audio/mpeg;base64,SUQz"), IsEmpty());
    EXPECT_EQ(Field(audio, "data:video/mp4;base64,AAAA"),
              At("invalid_string", "Unsupported asset type"));
    EXPECT_EQ(Field(video, "data:image/png;base64,AAAA"),
              At("invalid_string", "Unsupported asset type"));
    EXPECT_THAT(Field(video, "https://example.com/v.mp4"), IsEmpty());
    EXPECT_THAT(Field(audio, "genhost://clip-123"), IsEmpty());
    // 16 MiB decoded for video and audio: 5592405 quads (16777215 bytes) plus "AA==" (1 byte).
    const std::string at_limit = std::string(5592405 * 4, 'A') + "AA==";
    EXPECT_THAT(Field(video, "data:video/mp4;base64," + at_limit), IsEmpty());
    EXPECT_THAT(Field(audio, "data:audio/wav;base64," + at_limit), IsEmpty());
    const std::string over = std::string(5592405 * 4, 'A') + "AAA=";
    EXPECT_EQ(Field(video, "data:video/mp4;base64," + over),
              At("too_big", "Asset size exceeds the maximum for the type"));
    // The same data is far over the image limit.
    const json image = {{"type", "string"}, {"format", "media"}, {"x-media-kind", "image"}};
    EXPECT_EQ(Field(image, "data:image/png;base64," + at_limit),
              At("too_big", "Asset size exceeds the maximum for the type"));
}

TEST(Types, NullableAndMultipleTypes) {
    const json nullable = {{"type", {"string", "null"}}, {"maxLength", 2}};
    EXPECT_THAT(Field(nullable, nullptr), IsEmpty());
    EXPECT_THAT(Field(nullable, "ab"), IsEmpty());
    EXPECT_EQ(Field(nullable, 5), At("invalid_type", "Expected string, received number"));
    EXPECT_EQ(Field(nullable, "abc"), At("too_big", "String must contain at most 2 character(s)"));
    EXPECT_EQ(Field(kString, nullptr), At("invalid_type", "Expected string, received null"));
    const json either = {{"type", {"string", "integer"}}};
    EXPECT_EQ(Field(either, true),
              At("invalid_type", "Expected string | number, received boolean"));
    EXPECT_EQ(Field({{"type", "null"}}, 1), At("invalid_type", "Expected null, received number"));
    EXPECT_EQ(Field({{"type", "boolean"}}, "true"),
              At("invalid_type", "Expected boolean, received string"));
}

TEST(Types, ConstAndEnumsOfEveryKind) {
    EXPECT_EQ(Field({{"type", "integer"}, {"const", 8}}, 9),
              At("invalid_enum_value", "Invalid literal value, expected 8"));
    EXPECT_THAT(Field({{"type", "integer"}, {"const", 8}}, 8.0), IsEmpty());
    EXPECT_EQ(Field({{"type", "string"}, {"const", "a"}}, 1),
              At("invalid_enum_value", "Invalid literal value, expected \"a\""));
    const json durations = {{"type", "integer"}, {"enum", {4, 6, 8}}};
    EXPECT_THAT(Field(durations, 6), IsEmpty());
    EXPECT_EQ(Field(durations, 5),
              At("invalid_enum_value", "Invalid enum value. Expected 4 | 6 | 8, received '5'"));
    EXPECT_EQ(Field(durations, "4"), At("invalid_type", "Expected number, received string"));
    const json mixed = {{"enum", {"auto", 5}}};
    EXPECT_THAT(Field(mixed, "auto"), IsEmpty());
    EXPECT_THAT(Field(mixed, 5), IsEmpty());
    EXPECT_EQ(Field(mixed, 6),
              At("invalid_enum_value", "Invalid enum value. Expected 'auto' | 5, received '6'"));
}

TEST(Types, NumberBounds) {
    const json ratio = {{"type", "number"}, {"exclusiveMinimum", 0}, {"exclusiveMaximum", 1}};
    EXPECT_THAT(Field(ratio, 0.5), IsEmpty());
    EXPECT_EQ(Field(ratio, 0), At("too_small", "Number must be greater than 0"));
    EXPECT_EQ(Field(ratio, 1), At("too_big", "Number must be less than 1"));
    const json speed = {{"type", "number"}, {"minimum", 0.7}, {"maximum", 1.2}};
    EXPECT_THAT(Field(speed, 0.7), IsEmpty());
    EXPECT_THAT(Field(speed, 1), IsEmpty());
    EXPECT_EQ(Field(speed, 0.69), At("too_small", "Number must be greater than or equal to 0.7"));
    EXPECT_EQ(Field(speed, 1.25), At("too_big", "Number must be less than or equal to 1.2"));
    const json rate = {{"type", "integer"}, {"minimum", -50}, {"maximum", 100}};
    EXPECT_EQ(Field(rate, -51), At("too_small", "Number must be greater than or equal to -50"));
    EXPECT_EQ(Field(rate, 2.5), At("invalid_type", "Expected integer, received float"));
    EXPECT_EQ(Field({{"type", "integer"}}, "1"),
              At("invalid_type", "Expected number, received string"));
}

TEST(Unions, PlainUnionPicksTheBranchOfTheValuesType) {
    // promptImage-style: a media string or an array of {uri, position}.
    const json item = {
        {"type", "object"},
        {"additionalProperties", false},
        {"properties",
         {{"uri", {{"type", "string"}, {"format", "media"}, {"x-media-kind", "image"}}},
          {"position", {{"type", "string"}, {"enum", {"first", "last"}}}}}},
        {"required", {"uri"}}};
    const json union_schema = {
        {"oneOf",
         {{{"type", "string"}, {"format", "media"}, {"x-media-kind", "image"}},
          {{"type", "array"}, {"items", item}, {"minItems", 1}, {"maxItems", 2}}}}};
    EXPECT_THAT(Field(union_schema, "https://example.com/a.png"), IsEmpty());
    EXPECT_THAT(Field(union_schema,
                      json::array({{{"uri", "https://example.com/a.png"}, {"position", "first"}}})),
                IsEmpty());
    EXPECT_EQ(Field(union_schema, 5),
              At("invalid_type", "Expected string | array, received number"));
    EXPECT_EQ(Field(union_schema, json::object()),
              At("invalid_type", "Expected string | array, received object"));
    EXPECT_EQ(Field(union_schema, "http://example.com/a.png"),
              At("invalid_string", "Only HTTPS URLs are allowed"));
    EXPECT_EQ(
        Field(union_schema,
              json::array({{{"uri", "https://example.com/a.png"}, {"position", "middle"}}})),
        (std::vector<Issue>{{"invalid_enum_value",
                             {"v", "0", "position"},
                             "Invalid enum value. Expected 'first' | 'last', received 'middle'"}}));
    EXPECT_EQ(Field(union_schema, json::array()),
              At("too_small", "Array must contain at least 1 element(s)"));
}

TEST(Unions, SeveralBranchesOfOneTypeReportTheClosest) {
    // aleph2 keyframes: {uri, seconds} or {uri, at}.
    const json uri = {{"type", "string"}, {"maxLength", 100}};
    const json by_seconds = {
        {"type", "object"},
        {"additionalProperties", false},
        {"properties", {{"uri", uri}, {"seconds", {{"type", "number"}, {"maximum", 30}}}}},
        {"required", {"uri", "seconds"}}};
    const json by_fraction = {
        {"type", "object"},
        {"additionalProperties", false},
        {"properties", {{"uri", uri}, {"at", {{"type", "number"}, {"maximum", 1}}}}},
        {"required", {"uri", "at"}}};
    const json keyframe = {{"anyOf", {by_seconds, by_fraction}}};
    EXPECT_THAT(Field(keyframe, {{"uri", "u"}, {"seconds", 3}}), IsEmpty());
    EXPECT_THAT(Field(keyframe, {{"uri", "u"}, {"at", 0.5}}), IsEmpty());
    EXPECT_EQ(
        Field(keyframe, {{"uri", "u"}, {"at", 2}}),
        (std::vector<Issue>{{"too_big", {"v", "at"}, "Number must be less than or equal to 1"}}));
    EXPECT_EQ(Field(keyframe, {{"uri", "u"}, {"seconds", 31}}),
              (std::vector<Issue>{
                  {"too_big", {"v", "seconds"}, "Number must be less than or equal to 30"}}));
    // A tie goes to the first branch.
    EXPECT_EQ(Field(keyframe, {{"uri", "u"}}),
              (std::vector<Issue>{{"invalid_type", {"v", "seconds"}, "Required"}}));
    EXPECT_EQ(Field(keyframe, "x"), At("invalid_type", "Expected object, received string"));
}

TEST(Objects, AdditionalPropertiesSchemaAndUnknownKeyCaps) {
    const json map = {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}};
    EXPECT_THAT(Field(map, {{"a", 1}, {"b", 2}}), IsEmpty());
    EXPECT_EQ(
        Field(map, {{"a", 1}, {"b", "x"}}),
        (std::vector<Issue>{{"invalid_type", {"v", "b"}, "Expected number, received string"}}));
    const json strict = {{"type", "object"}, {"additionalProperties", false}};
    json many = json::object();
    for (int i = 0; i < 25; ++i) many["k" + std::string(i < 10 ? "0" : "") + std::to_string(i)] = i;
    const std::vector<Issue> issues = Field(strict, many);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].code, "unrecognized_keys");
    EXPECT_THAT(issues[0].message,
                ::testing::StartsWith("Unrecognized key(s) in object: 'k00', 'k01', "));
    EXPECT_THAT(issues[0].message, ::testing::EndsWith("'k19' and 5 more"));
    const json open = {{"type", "object"}, {"additionalProperties", true}};
    EXPECT_THAT(Field(open, many), IsEmpty());
}

TEST(Limits, IssuesAreCapped) {
    const json list = {{"type", "array"}, {"maxItems", 1000}, {"items", kString}};
    const std::vector<Issue> issues = Field(list, json(std::vector<int>(1000, 1)));
    ASSERT_EQ(issues.size(), SchemaSet::kMaxIssues);
    EXPECT_EQ(issues.back(),
              (Issue{"invalid_type", {"v", "99"}, "Expected string, received number"}));
}

TEST(Limits, DeepInputIsNotFollowedBeyondTheSchema) {
    json deep = json::array();
    json* cursor = &deep;
    for (int i = 0; i < 2000; ++i) {
        cursor->push_back(json::array());
        cursor = &(*cursor)[0];
    }
    EXPECT_EQ(Field(kString, deep), At("invalid_type", "Expected string, received array"));
    EXPECT_THAT(Field({{"type", "array"}, {"maxItems", 1}}, deep), IsEmpty());
}

TEST(Defaults, FollowRefsAndUnionBranches) {
    const json mode = {{"type", "string"}, {"enum", {"a", "b"}}, {"default", "a"}};
    const json settings = {
        {"type", "object"}, {"additionalProperties", false}, {"properties", {{"mode", mode}}}};
    const json level = {{"type", "integer"}, {"maximum", 5}, {"default", 1}};
    const json settings_ref = {{"$ref", "#/$defs/settings"}};
    const json properties = {
        {"level", {{"$ref", "#/$defs/level"}}},
        {"override", {{"$ref", "#/$defs/level"}, {"default", 3}}},
        {"settings",
         {{"oneOf", json::array({{{"type", "string"}, {"maxLength", 10}}, settings_ref})}}},
        {"items", {{"type", "array"}, {"maxItems", 5}, {"items", settings_ref}}}};
    const auto set =
        One({{"type", "object"}, {"additionalProperties", false}, {"properties", properties}},
            {{"level", level}, {"settings", settings}});
    EXPECT_EQ(set->ApplyDefaults("t", json::object()), (json{{"level", 1}, {"override", 3}}));
    const json input = {{"level", 4},
                        {"settings", json::object()},
                        {"items", json::array({json::object(), {{"mode", "b"}}})}};
    const json expected = {{"level", 4},
                           {"override", 3},
                           {"settings", {{"mode", "a"}}},
                           {"items", json::array({{{"mode", "a"}}, {{"mode", "b"}}})}};
    EXPECT_EQ(set->ApplyDefaults("t", input), expected);
    EXPECT_EQ(set->ApplyDefaults("t", {{"settings", "plain"}}),
              (json{{"level", 1}, {"override", 3}, {"settings", "plain"}}));
}

}  // namespace
}  // namespace genhost::validate
