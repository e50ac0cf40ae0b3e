// ChunkDocument: markdown sections with their heading paths, pieces of at most the target size
// cut at paragraph, sentence or word boundaries, overlapping, never inside a UTF-8 character,
// and every byte of the text in some chunk. Words: the lower-case vocabulary of a text.
#include "genhost/knowledge/chunker.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace genhost::knowledge {
namespace {

using ::testing::ElementsAre;

TEST(Chunker, PlainTextIsOneChunkWithoutHeading) {
    const auto chunks = ChunkDocument("  Opening hours are 9 to 5.\n");
    ASSERT_EQ(chunks.size(), 1u);
    EXPECT_EQ(chunks[0].heading, "");
    EXPECT_EQ(chunks[0].text, "Opening hours are 9 to 5.");
    EXPECT_EQ(chunks[0].start, 2u);
}

TEST(Chunker, HeadingsMakeSectionsWithTheirPath) {
    const std::string doc =
        "Intro text.\n"
        "# Setup\n"
        "Install it.\n"
        "## Linux ##\n"
        "Use apt.\n"
        "### Debian\n"
        "Bookworm.\n"
        "## Windows\n"
        "Use the installer.\n"
        "# Usage\n"
        "Run it.\n";
    const auto chunks = ChunkDocument(doc);
    std::vector<std::string> headings;
    std::vector<std::string> texts;
    for (const auto& c : chunks) {
        headings.push_back(c.heading);
        texts.push_back(c.text);
        EXPECT_EQ(doc.substr(c.start, c.text.size()), c.text);
    }
    EXPECT_THAT(headings, ElementsAre("", "Setup", "Setup > Linux", "Setup > Linux > Debian",
                                      "Setup > Windows", "Usage"));
    EXPECT_THAT(texts, ElementsAre("Intro text.", "Install it.", "Use apt.", "Bookworm.",
                                   "Use the installer.", "Run it."));
}

TEST(Chunker, HashesInFencesAndWithoutASpaceAreText) {
    const std::string doc =
        "# Script\n"
        "```bash\n"
        "# not a heading\n"
        "echo hi\n"
        "```\n"
        "#hashtag is text too\n";
    const auto chunks = ChunkDocument(doc);
    ASSERT_EQ(chunks.size(), 1u);
    EXPECT_EQ(chunks[0].heading, "Script");
    EXPECT_NE(chunks[0].text.find("# not a heading"), std::string::npos);
    EXPECT_NE(chunks[0].text.find("#hashtag"), std::string::npos);
}

TEST(Chunker, EmptySectionsKeepTheirHeadingAndBlankTextGivesNothing) {
    EXPECT_TRUE(ChunkDocument("").empty());
    EXPECT_TRUE(ChunkDocument("\n\n  \n").empty());
    const auto chunks = ChunkDocument("# Only a title\n\n");
    ASSERT_EQ(chunks.size(), 1u);
    EXPECT_EQ(chunks[0].heading, "Only a title");
    EXPECT_EQ(chunks[0].text, "");
}

TEST(Chunker, LongSectionsAreCutAtSentencesAndOverlap) {
    std::string doc = "# Policy\n";
    for (int i = 0; i < 200; ++i) {
        doc += "Sentence number " + std::to_string(i) + " says something useful. ";
        if (i % 10 == 9) doc += "\n\n";
    }
    const auto chunks = ChunkDocument(doc);
    ASSERT_GT(chunks.size(), 5u);
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        const auto& c = chunks[i];
        EXPECT_LE(c.text.size(), kChunkTarget);
        EXPECT_EQ(c.heading, "Policy");
        EXPECT_EQ(doc.substr(c.start, c.text.size()), c.text);
        if (i + 1 < chunks.size()) {
            // Each piece ends at a sentence or paragraph end, and the next starts inside it.
            EXPECT_EQ(c.text.back(), '.') << c.text;
            EXPECT_LT(chunks[i + 1].start, c.start + c.text.size());
            EXPECT_GT(chunks[i + 1].start, c.start);
        }
    }
    // Every byte of the text is in some chunk.
    EXPECT_EQ(chunks.front().start, doc.find("Sentence"));
    const auto& last = chunks.back();
    EXPECT_EQ(last.start + last.text.size(), doc.find_last_not_of(" \n") + 1);
}

TEST(Chunker, TextWithoutSpacesIsCutBetweenCharacters) {
    std::string doc;
    for (int i = 0; i < 2000; ++i) doc += "\xC3\xA9";  // "é" x 2000, 4000 bytes, no space
    const auto chunks = ChunkDocument(doc);
    ASSERT_GE(chunks.size(), 3u);
    std::size_t covered = 0;
    for (const auto& c : chunks) {
        EXPECT_LE(c.text.size(), kChunkTarget);
        EXPECT_EQ(c.start % 2, 0u) << "a cut inside a character";
        EXPECT_EQ(c.text.size() % 2, 0u);
        EXPECT_LE(c.start, covered);
        covered = c.start + c.text.size();
    }
    EXPECT_EQ(covered, doc.size());
}

TEST(Chunker, OptionsChangeTheSize) {
    std::string doc;
    for (int i = 0; i < 100; ++i) doc += "word" + std::to_string(i) + " ";
    const auto small = ChunkDocument(doc, {.target = 100, .overlap = 20});
    const auto large = ChunkDocument(doc);
    EXPECT_GT(small.size(), 5u);
    EXPECT_EQ(large.size(), 1u);
    for (const auto& c : small) EXPECT_LE(c.text.size(), 100u);
}

TEST(Words, LowerCaseDistinctWordsOfThreeToFortyBytes) {
    EXPECT_THAT(Words("The CAT sat; the cat's hat, a 42 x9 H2O Straße"),
                ElementsAre("cat", "h2o", "hat", "sat", "straße", "the"));
    EXPECT_TRUE(Words(std::string(41, 'a')).empty());
    EXPECT_TRUE(Words("12345 ab").empty());
}

}  // namespace
}  // namespace genhost::knowledge
