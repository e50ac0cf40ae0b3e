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
    R"({"operationId": "x", "method": "GET", "path": "/x", "auth": "apiKey", "tag": "Tasks",
        "summary": "X", "responses": {"200": {"description": "x"}}})";

TEST(Operations, MalformedDeclarationsAreRefused) {
    EXPECT_EQ(Refused(std::string("[") + kGood + "]"), "");
    EXPECT_THAT(Refused(std::string("[") + kGood + "," + kGood + "]"), HasSubstr("two operations"));
    EXPECT_THAT(Refused(R"([{"operationId": "x", "method": "GET", "path": "/x", "auth": "apiKey",
                             "tag": "T", "responses": {"200": "NotFound"}}])"),
                HasSubstr("no \"summary\""));
    EXPECT_THAT(Refused(R"([{"operationId": "x", "method": "GET", "path": "/x", "auth": "cookie",
                             "tag": "T", "summary": "X", "responses": {"200": "NotFound"}}])"),
                HasSubstr("auth must be"));
    EXPECT_THAT(Refused(R"([{"operationId": "x", "method": "POST", "path": "/x", "auth": "apiKey",
                             "tag": "T", "summary": "X", "request": "text_to_image",
                             "responses": {"200": "NotFound"}}])"),
                HasSubstr("names no resource schema"));
    EXPECT_THAT(Refused(R"([{"operationId": "x", "method": "GET", "path": "/x/{id}",
                             "auth": "apiKey", "tag": "T", "summary": "X",
                             "responses": {"200": "NotFound"}}])"),
                HasSubstr("no pathParameters"));
    EXPECT_THAT(Refused(R"([{"operationId": "x", "method": "GET", "path": "/x", "auth": "apiKey",
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
    extra.insert("listDocuments");
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

}  // namespace
}  // namespace genhost::api
