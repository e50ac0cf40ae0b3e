// A realtime session whose conversation engine is an OpenAI-compatible endpoint
// (GENHOST_LLM_URL, _MODEL, _KEY; docs/realtime.md "Conversation engines"), against a real
// server and a fake endpoint on loopback: the typed question reaches the endpoint as a streaming
// chat-completions request with the model, the key, the avatar's personality in the system
// message and the session's tools as functions; the endpoint's streamed text is what the avatar
// says, and its tool call fires the client_event.
#include "helpers.hpp"

#include "support/ws_client.hpp"

#include <gmock/gmock.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <mutex>
#include <thread>

namespace genhost::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using ::testing::HasSubstr;

// FakeChat answers every POST .../chat/completions with a scripted server-sent-event stream and
// keeps the requests it got.
class FakeChat {
  public:
    FakeChat() : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
        thread_ = std::thread([this] { Serve(); });
    }
    ~FakeChat() {
        // A blocking accept is not interrupted by closing the acceptor from another thread:
        // a connection of our own wakes it, and the loop sees stop_.
        stop_ = true;
        {
            asio::io_context io;
            asio::ip::tcp::socket wake(io);
            beast::error_code ec;
            wake.connect(acceptor_.local_endpoint(), ec);
        }
        thread_.join();
        beast::error_code ec;
        acceptor_.close(ec);
    }
    unsigned short port() const { return acceptor_.local_endpoint().port(); }
    std::vector<std::pair<std::string, nlohmann::json>> requests() {  // (authorization, body)
        std::lock_guard lock(mu_);
        return requests_;
    }

  private:
    static std::string Event(const nlohmann::json& delta) {
        return "data: " + nlohmann::json{{"choices", {{{"index", 0}, {"delta", delta}}}}}.dump() +
               "\n\n";
    }

    void Serve() {
        while (!stop_) {
            asio::ip::tcp::socket socket(io_);
            beast::error_code ec;
            acceptor_.accept(socket, ec);
            if (ec || stop_) return;
            beast::flat_buffer buffer;
            beast::http::request<beast::http::string_body> req;
            beast::http::read(socket, buffer, req, ec);
            if (ec) continue;
            const auto body = nlohmann::json::parse(req.body(), nullptr, false);
            std::string last_user;
            bool after_tool = false;
            if (body.is_object()) {
                for (const auto& m : body["messages"]) {
                    if (m["role"] == "user") last_user = m["content"];
                    after_tool = m["role"] == "tool";
                }
            }
            {
                std::lock_guard lock(mu_);
                requests_.push_back({std::string(req[beast::http::field::authorization]), body});
            }
            std::string stream;
            if (after_tool) {
                stream += Event({{"content", "The dessert list is on your screen."}});
            } else if (last_user.find("dessert") != std::string::npos) {
                stream +=
                    Event({{"tool_calls",
                            {{{"index", 0},
                              {"id", "call_1"},
                              {"type", "function"},
                              {"function", {{"name", "show_menu"}, {"arguments", "{\"sec"}}}}}}});
                stream += Event(
                    {{"tool_calls",
                      {{{"index", 0}, {"function", {{"arguments", "tion\": \"desserts\"}"}}}}}}});
            } else {
                stream += Event({{"role", "assistant"}, {"content", "We open "}});
                stream += Event({{"content", "at noon, "}});
                stream += Event({{"content", "every day."}});
            }
            stream += "data: [DONE]\n\n";
            std::string head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
            asio::write(socket, asio::buffer(head + stream), ec);
            socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
        }
    }

    asio::io_context io_;
    asio::ip::tcp::acceptor acceptor_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::mutex mu_;
    std::vector<std::pair<std::string, nlohmann::json>> requests_;
};

class RealtimeLlm : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        if (ClusterDsn().empty()) return;
        fake_ = std::make_unique<FakeChat>();
        db_ = std::make_unique<TestDatabase>();
        server_ = std::make_unique<ServerProcess>(
            db_->dsn(),
            std::map<std::string, std::string>{
                {"GENHOST_LLM_URL", "http://127.0.0.1:" + std::to_string(fake_->port()) + "/v1"},
                {"GENHOST_LLM_MODEL", "tiny-chat"},
                {"GENHOST_LLM_KEY", "sk-test"}});
        server_->Start();
    }
    static void TearDownTestSuite() {
        server_.reset();
        db_.reset();
        fake_.reset();
    }
    void SetUp() override {
        if (server_ == nullptr) GTEST_SKIP() << "no PostgreSQL configured";
    }
    static inline std::unique_ptr<FakeChat> fake_;
    static inline std::unique_ptr<TestDatabase> db_;
    static inline std::unique_ptr<ServerProcess> server_;
};

TEST_F(RealtimeLlm, TheEndpointAnswersAndCallsTools) {
    HttpClient client("127.0.0.1", server_->port());
    const nlohmann::json body = {
        {"model", "gwm1_avatars"},
        {"avatar", {{"type", "service-preset"}, {"presetId", "cooking-teacher"}}},
        {"personality", "A chef who loves Lisbon."},
        {"startScript", "Hi."},
        {"tools",
         {{{"type", "client_event"},
           {"name", "show_menu"},
           {"description", "Shows a section of the menu"},
           {"parameters",
            {{{"type", "string"},
              {"name", "section"},
              {"description", "Which"},
              {"enum", {"mains", "desserts"}}}}}}}}};
    const auto created = client.Send("POST", "/v1/realtime_sessions", AuthHeaders(), body.dump());
    ASSERT_EQ(created.status, 200) << created.body;
    const std::string id = created.Json()["id"];
    nlohmann::json session = nlohmann::json::object();
    for (int i = 0; i < 200 && session.value("status", "") != "READY"; ++i) {
        session = client.Send("GET", "/v1/realtime_sessions/" + id, AuthHeaders()).Json();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(session["status"], "READY");
    const auto credentials =
        client
            .Send("POST", "/v1/realtime_sessions/" + id + "/consume",
                  {{"Authorization", "Bearer " + session["sessionKey"].get<std::string>()}}, "")
            .Json();
    WsClient user(server_->port());
    ASSERT_EQ(user.Handshake(PathOf(credentials["url"].get<std::string>()) +
                             "?access_token=" + credentials["token"].get<std::string>()),
              101);
    ASSERT_TRUE(user.Write(R"({"type": "user_text", "text": "When do you open?"})"));
    std::map<int, std::string> assistant;
    nlohmann::json event;
    bool asked_dessert = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline && event.is_null()) {
        const auto text = user.ReadText();
        if (!text) break;
        const auto m = nlohmann::json::parse(*text);
        if (m.value("type", "") == "transcription" && m["role"] == "assistant") {
            assistant[m["turn"].get<int>()] += m["text"].get<std::string>();
        }
        if (m.value("type", "") == "client_event") event = m;
        if (!asked_dessert && assistant[2] == "We open at noon, every day.") {
            asked_dessert = true;
            ASSERT_TRUE(user.Write(R"({"type": "user_text", "text": "Any dessert?"})"));
        }
    }
    EXPECT_EQ(assistant[2], "We open at noon, every day.");
    EXPECT_EQ(event, nlohmann::json({{"type", "client_event"},
                                     {"tool", "show_menu"},
                                     {"args", {{"section", "desserts"}}}}));
    user.Write(R"({"type": "END_CALL"})");

    const auto requests = fake_->requests();
    ASSERT_GE(requests.size(), 2u);
    const auto& [authorization, first] = requests[0];
    EXPECT_EQ(authorization, "Bearer sk-test");
    EXPECT_EQ(first["model"], "tiny-chat");
    EXPECT_EQ(first["stream"], true);
    EXPECT_EQ(first["messages"][0]["role"], "system");
    EXPECT_THAT(first["messages"][0]["content"].get<std::string>(),
                HasSubstr("A chef who loves Lisbon."));
    EXPECT_EQ(first["messages"].back()["content"], "When do you open?");
    EXPECT_EQ(first["tools"][0]["function"]["name"], "show_menu");
    EXPECT_EQ(first["tools"][0]["function"]["parameters"]["properties"]["section"]["enum"],
              nlohmann::json({"mains", "desserts"}));
}

}  // namespace
}  // namespace genhost::testing
