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

std::size_t IndexedBytes(const std::vector<Chunk>& chunks) {
    std::size_t total = 0;
    for (const auto& c : chunks) total += c.heading.size() + c.text.size();
    return total;
}

// Issue 31, 3: five nested 2,000-character headings followed by 21,111 empty sub-headings made
// 21,113 chunks holding 211 million characters (756 MB of index, 38 s, 2 GB of WAL).
TEST(Chunker, HeadingAmplificationIsBounded) {
    std::string doc;
    for (int level = 1; level <= 5; ++level) {
        doc += std::string(level, '#') + " " + std::string(2000, static_cast<char>('a' + level)) +
               "\n";
    }
    for (int i = 0; i < 21111; ++i) doc += "###### \n";  // empty titles
    for (int i = 0; i < 2000; ++i) doc += "###### s" + std::to_string(i) + "\n";
    const auto chunks = ChunkDocument(doc);
    const std::size_t total = IndexedBytes(chunks);
    EXPECT_LE(total, IndexBudget(doc.size()));
    EXPECT_LE(total, 3 * doc.size() + kIndexBudgetSlack);
    for (const auto& c : chunks) {
        EXPECT_LE(c.heading.size(), kMaxHeadingPath);
    }
    // The first headed chunks still carry their (shortened) path, innermost titles whole.
    ASSERT_FALSE(chunks.empty());
    EXPECT_EQ(chunks.front().heading.size() <= kMaxHeadingPath, true);
    EXPECT_NE(chunks.front().heading.find("\u2026"), std::string::npos) << chunks.front().heading;
}

TEST(Chunker, LongTitlesAndDeepPathsAreCutBetweenCharacters) {
    // 300 two-byte characters: cut to at most 200 bytes, never inside one, marked with "…".
    std::string title;
    for (int i = 0; i < 300; ++i) title += "\xc3\xa9";
    const auto chunks = ChunkDocument("# " + title + "\n\nSome text.\n");
    ASSERT_EQ(chunks.size(), 1u);
    EXPECT_LE(chunks[0].heading.size(), kMaxHeadingTitle);
    EXPECT_EQ(chunks[0].heading.substr(chunks[0].heading.size() - 3), "\u2026");
    EXPECT_EQ((chunks[0].heading.size() - 3) % 2, 0u);

    // Six levels of 100 bytes: the innermost ones are kept whole, the outer ones elided.
    std::string doc;
    for (int level = 1; level <= 6; ++level) {
        doc += std::string(level, '#') + " L" + std::to_string(level) + std::string(98, 'x') +
               "\nText of level " + std::to_string(level) + ".\n";
    }
    const auto deep = ChunkDocument(doc);
    ASSERT_EQ(deep.size(), 6u);
    EXPECT_EQ(deep[2].heading.rfind("L1", 0), 0u);  // three levels fit whole
    const std::string& last = deep[5].heading;
    EXPECT_LE(last.size(), kMaxHeadingPath);
    EXPECT_EQ(last.rfind("\u2026 > ", 0), 0u) << last;
    EXPECT_NE(last.find("L6"), std::string::npos);
    EXPECT_NE(last.find("L4"), std::string::npos);
    EXPECT_EQ(last.find("L1"), std::string::npos);
}

TEST(Chunker, OrdinaryDocumentsKeepEveryHeadingPath) {
    // A long manual with many sections stays far inside the budget: nothing is shortened.
    std::string doc;
    for (int i = 0; i < 200; ++i) {
        doc += "# Chapter " + std::to_string(i) + "\n## Part\n";
        for (int j = 0; j < 30; ++j) doc += "Sentence " + std::to_string(j) + " of the part. ";
        doc += "\n";
    }
    const auto chunks = ChunkDocument(doc);
    for (const auto& c : chunks) EXPECT_EQ(c.heading.rfind("Chapter ", 0), 0u) << c.heading;
    EXPECT_LE(IndexedBytes(chunks), IndexBudget(doc.size()));
}

TEST(Words, LowerCaseDistinctWordsOfThreeToFortyBytes) {
    EXPECT_THAT(Words("The CAT sat; the cat's hat, a 42 x9 H2O Straße"),
                ElementsAre("cat", "h2o", "hat", "sat", "straße", "the"));
    EXPECT_TRUE(Words(std::string(41, 'a')).empty());
    EXPECT_TRUE(Words("12345 ab").empty());
}

}  // namespace
}  // namespace genhost::knowledge
