// The builtin conversation engine (src/realtime/builtin_engine.cpp): tools named by the
// utterance or by an enum value, with their arguments; greetings; answers from the knowledge
// chunks the search gives; what it says when it knows nothing; word-by-word streaming; the reply
// after tool results.
#include "genhost/realtime/engine.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace genhost::realtime {
namespace {

using ::testing::HasSubstr;

struct Said {
    Reply reply;
    std::vector<std::string> deltas;
};

Said Ask(Engine& engine, const EngineContext& context, std::vector<Turn> history) {
    Said out;
    std::atomic<bool> cancel{false};
    out.reply = engine.Respond(
        context, history, [&](std::string_view d) { out.deltas.emplace_back(d); }, cancel);
    return out;
}

Turn User(std::string text) { return {Turn::Role::kUser, std::move(text), {}, {}}; }

EngineContext Chef() {
    EngineContext c;
    c.avatar_name = "Chef Ana";
    c.personality = "A cheerful chef from Lisbon. She keeps answers short.";
    c.start_script = "Ask me about our opening hours or today's menu.";
    ToolSpec show;
    show.type = "client_event";
    show.name = "show_recipe";
    show.description = "Shows a recipe";
    show.parameters = nlohmann::json::parse(
        R"([{"type": "string", "name": "dish", "description": "Which", "enum": ["soup", "custard tart"]},
            {"type": "integer", "name": "servings", "description": "How many"}])");
    c.tools.push_back(show);
    ToolSpec book;
    book.type = "backend_rpc";
    book.name = "book_table";
    book.description = "Books a table";
    c.tools.push_back(book);
    c.search = [](const std::string& query, int) {
        std::vector<Knowledge> out;
        if (query.find("open") != std::string::npos || query.find("hours") != std::string::npos) {
            out.push_back({"Restaurant facts", "Hours",
                           "We serve fresh fish every day. The restaurant opens at nine in the "
                           "morning and closes at eleven at night. Reservations are welcome."});
        }
        return out;
    };
    return c;
}

TEST(BuiltinEngine, AToolNamedOrAnEnumValueIsCalledWithItsArguments) {
    auto engine = MakeBuiltinEngine();
    const auto byName = Ask(*engine, Chef(), {User("Could you book a table for 4 people?")});
    ASSERT_EQ(byName.reply.tool_calls.size(), 1u);
    EXPECT_EQ(byName.reply.tool_calls[0].name, "book_table");
    EXPECT_FALSE(byName.reply.tool_calls[0].id.empty());
    EXPECT_FALSE(byName.reply.text.empty());

    const auto byEnum = Ask(*engine, Chef(), {User("How do I make a custard tart for 6?")});
    ASSERT_EQ(byEnum.reply.tool_calls.size(), 1u);
    EXPECT_EQ(byEnum.reply.tool_calls[0].name, "show_recipe");
    EXPECT_EQ(byEnum.reply.tool_calls[0].arguments["dish"], "custard tart");
    EXPECT_EQ(byEnum.reply.tool_calls[0].arguments["servings"], 6);

    // Not named: no call.
    const auto none = Ask(*engine, Chef(), {User("What is the weather like?")});
    EXPECT_TRUE(none.reply.tool_calls.empty());
}

TEST(BuiltinEngine, AnswersFromTheKnowledgeWithTheBestSentence) {
    auto engine = MakeBuiltinEngine();
    const auto said = Ask(*engine, Chef(), {User("When does the restaurant open?")});
    EXPECT_TRUE(said.reply.tool_calls.empty());
    EXPECT_EQ(said.reply.text,
              "The restaurant opens at nine in the morning and closes at eleven at night.");
    // Streamed a word at a time, the pieces making the whole.
    EXPECT_GT(said.deltas.size(), 5u);
    std::string joined;
    for (const auto& d : said.deltas) joined += d;
    EXPECT_EQ(joined, said.reply.text);
}

TEST(BuiltinEngine, GreetsAndAdmitsWhatItDoesNotKnow) {
    auto engine = MakeBuiltinEngine();
    const auto hello = Ask(*engine, Chef(), {User("Hello!")});
    EXPECT_THAT(hello.reply.text, HasSubstr("I'm Chef Ana."));
    EXPECT_THAT(hello.reply.text, HasSubstr("A cheerful chef from Lisbon."));
    const auto unknown = Ask(*engine, Chef(), {User("Explain quantum chromodynamics")});
    EXPECT_THAT(unknown.reply.text, HasSubstr("not sure"));
    EXPECT_THAT(unknown.reply.text, HasSubstr("opening hours"));
    EngineContext bare;
    bare.avatar_name = "Max";
    EXPECT_THAT(Ask(*engine, bare, {User("Explain gravity")}).reply.text, HasSubstr("another way"));
}

TEST(BuiltinEngine, TellsToolResultsAndErrors) {
    auto engine = MakeBuiltinEngine();
    Turn results{Turn::Role::kTool, "", {}, {}};
    results.tool_results.push_back(
        {"c1", "book_table", nlohmann::json{{"message", "Booked for 8 pm."}}, {}, 12});
    EXPECT_EQ(Ask(*engine, Chef(), {User("book a table"), results}).reply.text, "Booked for 8 pm.");
    Turn failed{Turn::Role::kTool, "", {}, {}};
    failed.tool_results.push_back({"c2", "book_table", nullptr, "timed out", 4000});
    EXPECT_EQ(Ask(*engine, Chef(), {User("book a table"), failed}).reply.text,
              "Sorry, book table did not work: timed out.");
    Turn plain{Turn::Role::kTool, "", {}, {}};
    plain.tool_results.push_back(
        {"c3", "show_recipe", nlohmann::json{{"status", "event_sent"}}, {}, 0});
    EXPECT_EQ(Ask(*engine, Chef(), {User("soup"), plain}).reply.text, "Done.");
}

TEST(BuiltinEngine, TheSameConversationGivesTheSameReplies) {
    auto a = MakeBuiltinEngine();
    auto b = MakeBuiltinEngine();
    for (const char* u : {"Hello!", "When does it open?", "Show me the soup recipe"}) {
        const auto x = Ask(*a, Chef(), {User(u)});
        const auto y = Ask(*b, Chef(), {User(u)});
        EXPECT_EQ(x.reply.text, y.reply.text) << u;
        EXPECT_EQ(x.reply.tool_calls.size(), y.reply.tool_calls.size()) << u;
    }
}

}  // namespace
}  // namespace genhost::realtime
