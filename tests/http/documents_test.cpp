// Knowledge documents against a real server (docs/documents.md): the record of SPEC.md with
// content on create and get and without it in lists; PATCH 204 and a new content indexed again
// by the job engine (the search extra sees it moments later); usedBy follows the avatars;
// another organization's documents are 404 and cannot be attached; bad bodies, queries and keys
// get the contract's errors.
#include "helpers.hpp"

#include "support/wait_for.hpp"

#include "genhost/core/crypto.hpp"

#include <gmock/gmock.h>

namespace genhost::testing {
namespace {

using ::testing::ElementsAre;

class DocumentsApi : public ServerSuite<DocumentsApi> {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "0"}}); }

    HttpResponse Send(const std::string& method, const std::string& path,
                      const nlohmann::json& body = nullptr, const std::string& key = kTestKey) {
        return client_.Send(method, path, AuthHeaders(key), body.is_null() ? "" : body.dump());
    }

    nlohmann::json Search(const std::string& query) {
        const auto r = Send("GET", "/_genhost/documents/search?" + query);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.Json();
    }

    // SearchWhenIndexed searches until no searched document waits for its index (10 s at most).
    nlohmann::json SearchWhenIndexed(const std::string& query) {
        nlohmann::json last;
        EXPECT_TRUE(test::WaitFor([&] { return !(last = Search(query))["indexing"].get<bool>(); },
                                  std::chrono::seconds(10), std::chrono::milliseconds(20)));
        return last;
    }

    static std::vector<std::string> Paths(const HttpResponse& r) {
        std::vector<std::string> out;
        const auto body = r.Json();
        for (const auto& i : body["issues"]) {
            std::string p;
            for (const auto& part : i["path"]) p += "/" + part.get<std::string>();
            out.push_back(p);
        }
        return out;
    }

    HttpClient client_ = Client();
};

TEST_F(DocumentsApi, ARecordWithContentThenIndexedAndSearchable) {
    const auto made = Send("POST", "/v1/documents",
                           {{"name", "FAQ"},
                            {"content",
                             "# Delivery\nParcels leave the warehouse every weekday at noon.\n"
                             "# Payment\nWe take cards and bank transfers.\n"}});
    ASSERT_EQ(made.status, 200) << made.body;
    const auto doc = made.Json();
    EXPECT_EQ(doc["type"], "text");
    EXPECT_EQ(doc["usedBy"], nlohmann::json::array());
    EXPECT_EQ(doc["createdAt"], doc["updatedAt"]);
    const std::string id = doc["id"];

    auto found = SearchWhenIndexed("q=warehouse+noon&documentId=" + id);
    EXPECT_EQ(found["strategy"], "websearch");
    ASSERT_EQ(found["data"].size(), 1u) << found.dump();
    EXPECT_EQ(found["data"][0]["heading"], "Delivery");
    EXPECT_EQ(found["data"][0]["documentName"], "FAQ");

    // A new content answers 204 and is indexed again; the old text is no longer found.
    const auto patched =
        Send("PATCH", "/v1/documents/" + id, {{"content", "# Delivery\nBy drone, hourly.\n"}});
    EXPECT_EQ(patched.status, 204);
    EXPECT_TRUE(patched.body.empty());
    found = SearchWhenIndexed("q=drone&documentId=" + id);
    ASSERT_EQ(found["data"].size(), 1u) << found.dump();
    EXPECT_EQ(Search("q=warehouse&documentId=" + id)["strategy"], "none");
    const auto got = Send("GET", "/v1/documents/" + id).Json();
    EXPECT_EQ(got["content"], "# Delivery\nBy drone, hourly.\n");
    EXPECT_GT(got["updatedAt"].get<std::string>(), got["createdAt"].get<std::string>());
}

TEST_F(DocumentsApi, OtherOrganizationsDocumentsAreNotFoundNorAttachable) {
    const std::string other = CreateKey(*server_, "documents-other");
    const auto theirs =
        Send("POST", "/v1/documents", {{"name", "Secret"}, {"content", "plans"}}, other);
    ASSERT_EQ(theirs.status, 200);
    const std::string id = theirs.Json()["id"];
    EXPECT_EQ(Send("GET", "/v1/documents/" + id).status, 404);
    EXPECT_EQ(Send("PATCH", "/v1/documents/" + id, {{"name", "x"}}).status, 404);
    EXPECT_EQ(Send("DELETE", "/v1/documents/" + id).status, 404);
    EXPECT_EQ(Send("GET", "/v1/documents/not-a-uuid").status, 404);
    const auto r = Send("GET", "/_genhost/documents/search?q=plans&documentId=" + id);
    EXPECT_EQ(r.status, 400);
    EXPECT_THAT(Paths(r), ElementsAre("/documentId/0"));
    EXPECT_EQ(Search("q=plans")["data"].size(), 0u);
    EXPECT_EQ(Send("GET", "/v1/documents/" + id, nullptr, other).status, 200);
}

TEST_F(DocumentsApi, BadBodiesQueriesAndKeysGetTheContractsErrors) {
    auto r = Send("POST", "/v1/documents",
                  {{"name", std::string(256, 'n')}, {"content", ""}, {"extra", 1}});
    ASSERT_EQ(r.status, 400);
    EXPECT_THAT(Paths(r), ElementsAre("/name", "/content", ""));
    r = Send("POST", "/v1/documents", {{"name", "big"}, {"content", std::string(200001, 'c')}});
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(Send("POST", "/v1/documents", {{"name", "ok"}, {"content", std::string(200000, 'c')}})
                  .status,
              200);
    r = Send("GET", "/v1/documents?sort=name&order=sideways&limit=101&cursor=%%%");
    ASSERT_EQ(r.status, 400);
    EXPECT_THAT(Paths(r), ElementsAre("/sort", "/order", "/limit", "/cursor"));
    r = Send("GET", "/_genhost/documents/search?limit=0&avatarId=x");
    ASSERT_EQ(r.status, 400);
    EXPECT_THAT(Paths(r), ElementsAre("/q", "/avatarId", "/limit"));
    EXPECT_EQ(Send("GET",
                   "/_genhost/documents/search?q=x&avatarId=182bd5e5-6e1a-4fe4-a799-"
                   "aa6d9a6ab26e")
                  .status,
              404);
    EXPECT_EQ(client_.Send("GET", "/v1/documents").status, 401);
    EXPECT_EQ(client_.Send("GET", "/_genhost/documents/search?q=x").status, 401);
}

}  // namespace
}  // namespace genhost::testing
