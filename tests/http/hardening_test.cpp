// Issue 31: the reproductions of a probe of the surfaces added since the last hardening, against
// a real server, each while /healthz is watched (the server must stay responsive): a workflow
// edge whose field names a huge array index; heading amplification in a document; document
// search with a query that is not UTF-8; dates out of PostgreSQL's range in the usage endpoints;
// and `genhost workflows publish` on a file of 50,000 nested brackets. The realtime ones are in
// realtime_conversation_test.cpp (they need a joined session), the deleted outputs of a workflow
// invocation in workflows_test.cpp.
#include "helpers.hpp"

#include <gmock/gmock.h>
#include <pqxx/pqxx>

#include <filesystem>
#include <fstream>

namespace genhost::testing {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

std::vector<std::string> IssuePath(const HttpResponse& r, std::size_t i = 0) {
    const auto body = r.Json();
    if (!body.contains("issues") || body["issues"].size() <= i) return {};
    return body["issues"][i]["path"].get<std::vector<std::string>>();
}

class Hardening : public ServerSuite<Hardening> {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "0"}}); }

    HttpResponse Send(const std::string& method, const std::string& path,
                      const json& body = nullptr) {
        return client_.Send(method, path, AuthHeaders(), body.is_null() ? "" : body.dump());
    }

    HttpClient client_ = Client();
};

// 2. An edge targeting /referenceImages/50000000/uri made a 560-byte publication take 6 s and
// 1.78 GB on an I/O thread; 10^12 gave a 500.
TEST_F(Hardening, AWorkflowEdgeIndexPastTheSchemasBoundIsA400AtItsField) {
    const std::string prompt = "0c8f6a52-4f7e-4d0b-9a51-2d3c4b5a6f70";
    const std::string still = "1d9a7b63-5a8f-4e1c-8b62-3e4d5c6b7a81";
    const auto publication = [&](const std::string& field) {
        return json{
            {"name", "Pointer"},
            {"graph",
             {{"version", 1},
              {"nodes",
               {{{"id", prompt}, {"name", "Prompt"}, {"type", "text"}, {"value", "a lighthouse"}},
                {{"id", still},
                 {"name", "Still"},
                 {"type", "generation"},
                 {"endpoint", "text_to_image"},
                 {"input",
                  {{"model", "gen4_image"}, {"ratio", "1280:720"}, {"promptText", "x"}}}}}},
              {"edges",
               {{{"source", {{"node", prompt}, {"output", "value"}}},
                 {"target", {{"node", still}, {"field", field}}}}}}}}};
    };
    HealthWatch health(server_->port());
    for (const std::string field :
         {"/referenceImages/50000000/uri", "/referenceImages/1000000000000/uri",
          "referenceImages.99999999.tag"}) {
        const auto started = std::chrono::steady_clock::now();
        const auto r = Send("POST", "/_genhost/workflows", publication(field));
        const auto took = std::chrono::steady_clock::now() - started;
        ASSERT_EQ(r.status, 400) << field << ": " << r.body;
        EXPECT_EQ(IssuePath(r),
                  (std::vector<std::string>{"graph", "edges", "0", "target", "field"}))
            << r.body;
        EXPECT_THAT(r.body, HasSubstr("no place for field"));
        EXPECT_LT(took, std::chrono::seconds(2)) << field;
    }
    // The same publication through the command: refused alike, at once.
    const std::string file = server_->data_dir() + "/pointer.json";
    std::ofstream(file) << publication("/referenceImages/50000000/uri").dump();
    std::string out;
    EXPECT_EQ(server_->RunCommand("workflows publish " + file + " --org default", &out), 1) << out;
    EXPECT_THAT(out, HasSubstr("no place for field"));
    health.Stop();
    EXPECT_LT(health.SlowestMs(), kResponsiveMs);
    EXPECT_EQ(health.Failures(), 0);
}

// 8. `genhost workflows publish` crashed (SIGSEGV) on a file of 50,000 nested '['.
TEST_F(Hardening, PublishingADeeplyNestedFileIsRefusedNotACrash) {
    const std::string file = server_->data_dir() + "/nested.json";
    std::ofstream(file) << std::string(50000, '[');
    std::string out;
    const int rc = server_->RunCommand("workflows publish " + file + " --org default", &out);
    EXPECT_EQ(rc, 1) << out;
    EXPECT_THAT(out, HasSubstr("nest"));
    // Deep but closed, too.
    std::ofstream(file) << std::string(50000, '[') + std::string(50000, ']');
    EXPECT_EQ(server_->RunCommand("workflows publish " + file + " --org default", &out), 1) << out;
}

// 3. Five nested 2,000-character headings and 21,111 empty sub-headings made 21,113 chunks of
// 211 million characters (756 MB of index, 38 s, 2 GB of WAL).
TEST_F(Hardening, HeadingAmplificationStaysWithinTheIndexBudget) {
    std::string content;
    for (int level = 1; level <= 5; ++level) {
        content += std::string(level, '#') + " " +
                   std::string(2000, static_cast<char>('a' + level)) + "\n";
    }
    for (int i = 0; i < 21111; ++i) content += "###### \n";
    HealthWatch health(server_->port());
    const auto made = Send("POST", "/v1/documents", {{"name", "Headings"}, {"content", content}});
    ASSERT_EQ(made.status, 200) << made.body;
    const std::string id = made.Json()["id"];
    pqxx::connection c(db_->dsn());
    long long chunks = 0;
    long long bytes = 0;
    for (int i = 0; i < 600; ++i) {
        pqxx::nontransaction n(c);
        const auto pending =
            n.exec1("SELECT count(*) FROM jobs WHERE kind = 'document' AND subject = '" + id +
                    "'")[0]
                .as<long long>();
        const auto row = n.exec1(
            "SELECT count(*), coalesce(sum(octet_length(heading) + octet_length(body)), 0)"
            " FROM document_chunks WHERE document_id = '" +
            id + "'");
        chunks = row[0].as<long long>();
        bytes = row[1].as<long long>();
        if (pending == 0 && chunks > 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    health.Stop();
    ASSERT_GT(chunks, 0);
    // Within the budget of docs/documents.md: three times the content and 4 KiB.
    EXPECT_LE(bytes, static_cast<long long>(3 * content.size() + 4096)) << chunks << " chunks";
    EXPECT_LT(health.SlowestMs(), kResponsiveMs);
    // Still searchable by its headings.
    const auto found = Send("GET", "/_genhost/documents/search?q=" + std::string(50, 'c'));
    EXPECT_EQ(found.status, 200) << found.body;
}

// 6. Document search answered 500 for a query that is not UTF-8.
TEST_F(Hardening, ASearchQueryThatIsNotUtf8IsA400AtQ) {
    for (const std::string q : {"%ff%fe", "caf%C3", "%ed%a0%80"}) {
        const auto r = Send("GET", "/_genhost/documents/search?q=" + q);
        ASSERT_EQ(r.status, 400) << q << ": " << r.body;
        EXPECT_EQ(IssuePath(r), std::vector<std::string>{"q"}) << r.body;
        EXPECT_THAT(r.body, HasSubstr("UTF-8"));
    }
    // Every declared query parameter is checked alike: an enum, a uuid, a date-time.
    EXPECT_EQ(IssuePath(Send("GET", "/v1/documents?sort=%ff")), std::vector<std::string>{"sort"});
    EXPECT_EQ(IssuePath(Send("GET", "/v1/avatar_conversations?avatar=%ff")),
              std::vector<std::string>{"avatar"});
    EXPECT_EQ(IssuePath(Send("GET", "/v1/avatar_conversations?startDate=%ff")),
              std::vector<std::string>{"startDate"});
}

// 7. POST /v1/organization/usage answered 500 for an early beforeDate (its default start fell
// before year 1); every date parameter of the API is tried at both ends of its range.
TEST_F(Hardening, DatesAtTheEdgesOfTheCalendarAreAnsweredNever500) {
    const auto usage = [&](const json& body) {
        return Send("POST", "/v1/organization/usage", body);
    };
    auto r = usage({{"beforeDate", "0001-01-01"}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(IssuePath(r), std::vector<std::string>{"beforeDate"});
    EXPECT_THAT(r.body, HasSubstr("after 0001-01-01"));
    r = usage({{"startDate", "0000-12-01"}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(IssuePath(r), std::vector<std::string>{"startDate"});
    r = usage({{"beforeDate", "0000-12-31"}});
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(IssuePath(r), std::vector<std::string>{"beforeDate"});
    // The first and last days themselves are answered.
    for (const json& body : {json{{"beforeDate", "0001-01-02"}}, json{{"beforeDate", "0001-02-15"}},
                             json{{"startDate", "0001-01-01"}}, json{{"startDate", "9999-12-31"}},
                             json{{"startDate", "9999-12-01"}, {"beforeDate", "9999-12-31"}}}) {
        r = usage(body);
        EXPECT_EQ(r.status, 200) << body.dump() << ": " << r.body;
    }
    // The realtime endpoints' date-times, at and past the ends of the calendar.
    for (const std::string t :
         {"0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z",
          "0001-01-01T00:00:00%2B23:59", "9999-12-31T23:59:59-23:59"}) {
        const auto list = Send("GET", "/v1/avatar_conversations?startDate=" + t + "&endDate=" + t);
        EXPECT_TRUE(list.status == 200 || list.status == 400) << t << ": " << list.body;
        const auto day = Send("GET", "/v1/avatar_usage?startDate=" + t + "&endDate=" + t);
        EXPECT_TRUE(day.status == 200 || day.status == 400) << t << ": " << day.body;
    }
}

}  // namespace
}  // namespace genhost::testing
