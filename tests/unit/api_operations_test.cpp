// Tests for genhost/api/operations.hpp: the shipped operation table (every generation endpoint and
// every declared operation, unique ids and routes), what a malformed declaration is refused for,
// and the start-up check that binds operations to handlers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "genhost/api/openapi.hpp"
#include "genhost/api/operations.hpp"

namespace genhost::api {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const validate::SchemaSet> Shipped() {
    static const auto set = validate::SchemaSet::Compile(EmbeddedSchemaDocuments());
    return set;
}

TEST(Operations, TheShippedTableHoldsEveryOperationOnce) {
    const auto table = EmbeddedOperations(*Shipped());
    std::set<std::string> ids;
    std::set<std::string> routes;
    int generation = 0;
    for (const auto& op : table.operations) {
        EXPECT_TRUE(ids.insert(op.operation_id).second) << op.operation_id;
        EXPECT_TRUE(routes.insert(op.method + " " + op.path).second) << op.path;
        generation += !op.endpoint.empty();
    }
    EXPECT_EQ(generation, 14);
    for (const char* id :
         {"getTask", "deleteTask", "listAvatars", "createAvatar", "getAvatar", "updateAvatar",
          "deleteAvatar", "createUpload", "receiveUpload", "getOutput", "getOpenApi",
          "getErrorsDoc", "healthz", "readyz", "getMetrics", "textToImage", "avatarVideos"}) {
        EXPECT_EQ(ids.count(id), 1u) << id;
    }
    EXPECT_EQ(OperationIdOf("video_to_video"), "videoToVideo");
}

// Refused returns the message LoadOperations throws for `operations`, a list of declarations.
std::string Refused(const std::string& operations, const std::string& extra = "") {
    try {
        LoadOperations(*Shipped(), R"({)" + extra + R"("operations": )" + operations + "}");
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

constexpr const char* kGood =
    R"({"operationId": "x", "method": "GET", "path": "/v1/x", "auth": "apiKey", "tag": "Tasks",
        "summary": "X", "responses": {"200": {"description": "x"}}})";

TEST(Operations, MalformedDeclarationsAreRefused) {
    EXPECT_EQ(Refused(std::string("[") + kGood + "]"), "");
    EXPECT_THAT(Refused(std::string("[") + kGood + "," + kGood + "]"), HasSubstr("two operations"));
    EXPECT_THAT(Refused(R"([{"operationId": "x", "method": "GET", "path": "/v1/x", "auth": "apiKey",
                             "tag": "T", "responses": {"200": "NotFound"}}])"),
                HasSubstr("no \"summary\""));
    EXPECT_THAT(Refused(R"([{"operationId": "x", "method": "GET", "path": "/v1/x", "auth": "cookie",
                             "tag": "T", "summary": "X", "responses": {"200": "NotFound"}}])"),
                HasSubstr("auth must be"));
    EXPECT_THAT(
        Refused(R"([{"operationId": "x", "method": "POST", "path": "/v1/x", "auth": "apiKey",
                             "tag": "T", "summary": "X", "request": "text_to_image",
                             "responses": {"200": "NotFound"}}])"),
        HasSubstr("names no resource schema"));
    EXPECT_THAT(Refused(R"([{"operationId": "x", "method": "GET", "path": "/v1/x/{id}",
                             "auth": "apiKey", "tag": "T", "summary": "X",
                             "responses": {"200": "NotFound"}}])"),
                HasSubstr("no pathParameters"));
    EXPECT_THAT(Refused(R"([{"operationId": "x", "method": "GET", "path": "/v1/x", "auth": "apiKey",
                             "tag": "T", "summary": "X", "responses": {}}])"),
                HasSubstr("no responses"));
    // The same route as a generation endpoint.
    EXPECT_THAT(Refused(R"([{"operationId": "x", "method": "POST", "path": "/v1/text_to_image",
                             "auth": "apiKey", "tag": "T", "summary": "X",
                             "responses": {"200": "NotFound"}}])"),
                HasSubstr("two operations serve"));
}

TEST(Operations, EveryOperationNeedsAHandlerAndEveryHandlerAnOperation) {
    const auto table = EmbeddedOperations(*Shipped());
    std::set<std::string> handlers;
    for (const auto& op : table.operations) {
        if (op.endpoint.empty()) handlers.insert(op.operation_id);
    }
    EXPECT_NO_THROW(CheckHandlers(table, handlers));
    auto missing = handlers;
    missing.erase("getTask");
    try {
        CheckHandlers(table, missing);
        ADD_FAILURE() << "an operation without a handler was accepted";
    } catch (const std::exception& e) {
        EXPECT_THAT(e.what(), HasSubstr("getTask"));
    }
    auto extra = handlers;
    extra.insert("listNothingAtAll");
    EXPECT_THROW(CheckHandlers(table, extra), std::runtime_error);
}

// The document is assembled from the table: every declared operation is a path of it.
TEST(Operations, EveryOperationIsPublished) {
    const auto doc = BuildOpenApi(*Shipped(), *catalog::Catalog::LoadEmbedded());
    for (const auto& op : EmbeddedOperations(*Shipped()).operations) {
        std::string method = op.method;
        for (char& c : method) c = static_cast<char>(std::tolower(c));
        ASSERT_TRUE(doc["paths"].contains(op.path)) << op.path;
        ASSERT_TRUE(doc["paths"][op.path].contains(method)) << op.method << " " << op.path;
        EXPECT_EQ(doc["paths"][op.path][method]["operationId"], op.operation_id);
    }
}

// CheckQuery checks declared query parameters by their schemas, reporting every issue.
TEST(Operations, DeclaredQueryParametersAreChecked) {
    const auto table = EmbeddedOperations(*Shipped());
    const Operation* search = nullptr;
    const Operation* list = nullptr;
    for (const auto& op : table.operations) {
        if (op.operation_id == "searchDocuments") search = &op;
        if (op.operation_id == "listDocuments") list = &op;
    }
    ASSERT_NE(search, nullptr);
    ASSERT_NE(list, nullptr);
    const auto issues = [](const Operation& op, std::string query) {
        http::Request req;
        req.query = std::move(query);
        std::vector<std::string> out;
        for (const auto& i : CheckQuery(op, req)) {
            std::string path;
            for (const auto& p : i.path) path += "/" + p;
            out.push_back(i.code + " " + path);
        }
        return out;
    };
    EXPECT_THAT(issues(*list, ""), ::testing::IsEmpty());
    EXPECT_THAT(issues(*list, "sort=updatedAt&order=asc&limit=5"), ::testing::IsEmpty());
    EXPECT_THAT(issues(*list, "sort=name&order=up"),
                ::testing::ElementsAre("invalid_enum_value /sort", "invalid_enum_value /order"));
    EXPECT_THAT(issues(*list, "sort=createdAt&sort=updatedAt"),
                ::testing::ElementsAre("invalid_type /sort"));
    EXPECT_THAT(issues(*search, "limit=5"), ::testing::ElementsAre("invalid_type /q"));
    EXPECT_THAT(
        issues(*search, "q=&limit=51&avatarId=abc"),
        ::testing::ElementsAre("too_small /q", "invalid_string /avatarId", "too_big /limit"));
    EXPECT_THAT(issues(*search, "q=" + std::string(1001, 'a')),
                ::testing::ElementsAre("too_big /q"));
    EXPECT_THAT(issues(*search, "q=a&limit=x"), ::testing::ElementsAre("invalid_type /limit"));
    EXPECT_THAT(
        issues(*search, "q=a&documentId=182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e&documentId=no"),
        ::testing::ElementsAre("invalid_string /documentId/1"));
    std::string many = "q=a";
    for (int i = 0; i < 51; ++i) many += "&documentId=182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e";
    EXPECT_THAT(issues(*search, many), ::testing::ElementsAre("too_big /documentId"));
    EXPECT_THAT(issues(*search, "q=a%00b"), ::testing::ElementsAre("invalid_string /q"));
    // Bytes that are not UTF-8 are refused at their parameter, enums included (their message
    // would echo them), before any of them reaches PostgreSQL.
    EXPECT_THAT(issues(*search, "q=%ff%fe"), ::testing::ElementsAre("invalid_string /q"));
    EXPECT_THAT(issues(*search, "q=caf%C3"), ::testing::ElementsAre("invalid_string /q"));
    EXPECT_THAT(issues(*list, "sort=%ff"), ::testing::ElementsAre("invalid_string /sort"));
    // Percent-encoded values are decoded first; unknown parameters are ignored.
    EXPECT_THAT(issues(*search, "q=caf%C3%A9+au+lait&other=1"), ::testing::IsEmpty());
}

// Operations that need the key live under /v1/ (the API) or /_genhost/ (the stand-in's extras).
TEST(Operations, KeyedOperationsLiveUnderV1OrTheExtrasPrefix) {
    EXPECT_THAT(
        Refused(R"([{"operationId": "x", "method": "GET", "path": "/extra", "auth": "apiKey",
                               "tag": "T", "summary": "s", "responses": {"200": "NotFound"}}])"),
        HasSubstr("/_genhost/"));
}

}  // namespace
}  // namespace genhost::api
