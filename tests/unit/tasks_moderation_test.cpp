// Tests for genhost/tasks/moderation.hpp: word folding (case, accents, fullwidth, zero-width
// characters, unspaced scripts), whole-word matching, the public-figure threshold, which fields
// are read, the document's validation, and the shipped schemas/moderation.json.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "genhost/tasks/moderation.hpp"

namespace genhost::tasks {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// A small document of the shipped format with neutral placeholder words.
constexpr char kDocument[] = R"({
  "text_fields": ["promptText", "negativePrompt", "text"],
  "categories": [
    {"name": "forbidden", "terms": ["purple elephant", "zorblax", "déjà vu"]},
    {"name": "audio_only", "code": "SAFETY.INPUT.AUDIO", "terms": ["quux"]}
  ],
  "public_figures": {
    "names": ["Ada Lovelace", "习近平"],
    "risky_terms": ["arrested", "in handcuffs"]
  }
})";

std::shared_ptr<const Moderator> Load() { return Moderator::Load(kDocument); }

std::optional<ModerationHit> Auto(const std::string& text) {
    return Load()->CheckText(text, PublicFigureThreshold::kAuto, "promptText");
}

std::optional<ModerationHit> Low(const std::string& text) {
    return Load()->CheckText(text, PublicFigureThreshold::kLow, "promptText");
}

TEST(MatchTokens, SplitsOnEverythingButLettersAndDigits) {
    EXPECT_THAT(MatchTokens("A purple-elephant, 2 times!"),
                ElementsAre("a", "purple", "elephant", "2", "times"));
    EXPECT_THAT(MatchTokens("  \t\n"), ElementsAre());
    EXPECT_THAT(MatchTokens("one\xe2\x80\x94two\xe3\x80\x82three"),  // em dash, ideographic stop
                ElementsAre("one", "two", "three"));
    EXPECT_THAT(MatchTokens("emoji\xf0\x9f\x98\x80here"), ElementsAre("emoji", "here"));
}

TEST(MatchTokens, FoldsCaseAndLatinAccents) {
    EXPECT_THAT(MatchTokens("ZORBLAX Déjà VU Ærø Straße Łódź"),
                ElementsAre("zorblax", "deja", "vu", "aero", "strasse", "lodz"));
    // Decomposed accents (e + combining acute) fold the same as precomposed ones.
    EXPECT_THAT(MatchTokens("De\xcc\x81ja\xcc\x80"), ElementsAre("deja"));
}

TEST(MatchTokens, ReadsFullwidthAsAsciiAndIgnoresInvisibleCharacters) {
    EXPECT_THAT(MatchTokens("\xef\xbc\xba\xef\xbd\x8f\xef\xbd\x92"), ElementsAre("zor"));
    // Zero-width space and soft hyphen do not split a word.
    EXPECT_THAT(MatchTokens("zor\xe2\x80\x8b"
                            "b\xc2\xad"
                            "lax"),
                ElementsAre("zorblax"));
}

TEST(MatchTokens, LowersGreekAndCyrillicAndSplitsUnspacedScripts) {
    EXPECT_THAT(MatchTokens("ΑΘΗΝΑ Москва"), ElementsAre("αθηνα", "москва"));
    EXPECT_THAT(MatchTokens("我爱习近平"), ElementsAre("我", "爱", "习", "近", "平"));
}

TEST(MatchTokens, SurvivesMalformedUtf8) {
    EXPECT_THAT(MatchTokens(std::string("ab\xff\xfe"
                                        "cd\xc3",
                                        7)),
                ElementsAre("ab", "cd"));
}

TEST(Moderator, MatchesWholeWordsOnly) {
    EXPECT_TRUE(Auto("a zorblax appears"));
    EXPECT_TRUE(Auto("Zorblax."));
    EXPECT_FALSE(Auto("zorblaxes everywhere"));
    EXPECT_FALSE(Auto("antizorblax"));
    EXPECT_TRUE(Auto("a Purple Elephant dancing"));
    EXPECT_TRUE(Auto("purple\nelephant"));
    EXPECT_TRUE(Auto("purple-elephant"));
    EXPECT_FALSE(Auto("purple and elephant"));
    EXPECT_FALSE(Auto("an elephant, purple"));
}

TEST(Moderator, MatchesAcrossCaseAccentsAndWidth) {
    EXPECT_TRUE(Auto("DEJA VU"));
    EXPECT_TRUE(Auto("déjà vu"));
    EXPECT_TRUE(Auto("ＺＯＲＢＬＡＸ"));
    EXPECT_TRUE(
        Auto("zor\xe2\x80\x8b"
             "blax"));
}

TEST(Moderator, HitCarriesTheCategoryCodeAndASafeMessage) {
    const auto hit = Auto("a zorblax");
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->code, "SAFETY.INPUT.TEXT");
    EXPECT_EQ(hit->category, "forbidden");
    EXPECT_EQ(hit->field, "promptText");
    EXPECT_THAT(hit->message, HasSubstr("promptText"));
    EXPECT_THAT(hit->message, HasSubstr("forbidden"));
    EXPECT_THAT(hit->message, Not(HasSubstr("zorblax")));
    EXPECT_EQ(Auto("quux")->code, "SAFETY.INPUT.AUDIO");
}

TEST(Moderator, AutoThresholdRefusesAnyListedPublicFigure) {
    const auto hit = Auto("a portrait of ada lovelace at her desk");
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->category, "public_figure");
    EXPECT_EQ(hit->code, "SAFETY.INPUT.TEXT");
    EXPECT_TRUE(Auto("Ada Lovelace's notebook"));
    EXPECT_TRUE(Auto("她喜欢习近平的书"));
    EXPECT_FALSE(Auto("a portrait of Ada at her desk"));
    EXPECT_FALSE(Auto("a lovelace collar"));
}

TEST(Moderator, LowThresholdRefusesAPublicFigureOnlyInARiskyContext) {
    EXPECT_FALSE(Low("a portrait of Ada Lovelace at her desk"));
    EXPECT_TRUE(Low("Ada Lovelace arrested on the street"));
    EXPECT_TRUE(Low("ada lovelace IN HANDCUFFS"));
    EXPECT_FALSE(Low("ada lovelace in a hand cuff shop"));
    // Risky words alone are fine at either threshold.
    EXPECT_FALSE(Low("a cartoon burglar arrested"));
    EXPECT_FALSE(Auto("a cartoon burglar arrested"));
    // Categories apply whatever the threshold.
    EXPECT_TRUE(Low("a zorblax"));
}

TEST(Moderator, CheckReadsTheTextFieldsWhereverTheyAreAndTheTasksThreshold) {
    const auto m = Load();
    EXPECT_FALSE(m->Check(json{{"model", "m"}, {"promptText", "a calm lake"}}));
    const auto neg = m->Check(json{{"promptText", "a calm lake"}, {"negativePrompt", "zorblax"}});
    ASSERT_TRUE(neg);
    EXPECT_EQ(neg->field, "negativePrompt");
    const auto nested = m->Check(json{{"speech", {{"type", "text"}, {"text", "a zorblax"}}}});
    ASSERT_TRUE(nested);
    EXPECT_EQ(nested->field, "speech.text");
    // Other strings are not moderated (a voice id, a media URL, the model).
    EXPECT_FALSE(m->Check(json{{"model", "zorblax"}, {"voice", "zorblax"}}));
    EXPECT_FALSE(m->Check(json{{"promptText", 12}}));

    const json figure = {{"promptText", "Ada Lovelace giving a talk"}};
    EXPECT_TRUE(m->Check(figure));
    json low = figure;
    low["contentModeration"] = {{"publicFigureThreshold", "low"}};
    EXPECT_FALSE(m->Check(low));
    low["promptText"] = "Ada Lovelace arrested while giving a talk";
    EXPECT_TRUE(m->Check(low));
    json explicit_auto = figure;
    explicit_auto["contentModeration"] = {{"publicFigureThreshold", "auto"}};
    EXPECT_TRUE(m->Check(explicit_auto));
}

TEST(Moderator, RefusesMalformedDocuments) {
    auto error = [](const std::string& doc) {
        try {
            Moderator::Load(doc);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_THAT(error("{"), HasSubstr("not valid JSON"));
    EXPECT_THAT(error(R"({"extra": 1})"), HasSubstr("unknown key \"extra\""));
    EXPECT_THAT(error(R"({"categories": [{"name": "x", "terms": ["--"]}]})"),
                HasSubstr("categories[0].terms[0] has no letters"));
    EXPECT_THAT(error(R"({"categories": [{"name": "x", "code": "INTERNAL", "terms": []}]})"),
                HasSubstr("SAFETY.INPUT"));
    EXPECT_THAT(error(R"({"categories": [{"terms": []}]})"), HasSubstr("categories[0].name"));
    EXPECT_THAT(error(R"({"text_fields": []})"), HasSubstr("text_fields"));
    EXPECT_THAT(error(R"({"public_figures": {"names": "x"}})"), HasSubstr("must be an array"));
    EXPECT_EQ(error(R"({"note": "empty lists moderate nothing"})"), "no error");
}

TEST(Moderator, ShippedListsLoadAndBehave) {
    std::ifstream in(std::string(GENHOST_SOURCE_DIR) + "/schemas/moderation.json");
    std::ostringstream text;
    text << in.rdbuf();
    const auto m = Moderator::Load(text.str());
    EXPECT_FALSE(m->Check(json{{"promptText", "a lighthouse at dusk, waves crashing"}}));
    EXPECT_FALSE(m->Check(json{{"promptText", "a trump card on a poker table, close-up shot"}}));
    const auto hit = m->Check(json{{"promptText", "a torture porn scene"}});
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->code, "SAFETY.INPUT.TEXT");
    EXPECT_EQ(hit->category, "graphic_violence");
    EXPECT_TRUE(m->Check(json{{"promptText", "Taylor Swift on stage"}}));
    EXPECT_FALSE(m->Check(json{{"promptText", "Taylor Swift on stage"},
                               {"contentModeration", {{"publicFigureThreshold", "low"}}}}));
    EXPECT_TRUE(m->Check(json{{"promptText", "Taylor Swift arrested on stage"},
                              {"contentModeration", {{"publicFigureThreshold", "low"}}}}));
}

}  // namespace
}  // namespace genhost::tasks
