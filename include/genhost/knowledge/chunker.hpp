// genhost/knowledge/chunker.hpp
//
// Provides ChunkDocument, which cuts a knowledge document (markdown or plain text) into the
// overlapping chunks its retrieval index holds (docs/documents.md, "Retrieval"), and Words, the
// vocabulary a document adds to its organization's misspelling fallback.
//
// - Sections: an ATX heading line (`#` to `######`, then a space, outside fenced code blocks)
//   starts a section; each chunk carries its section's heading path ("Setup > Linux"). Text
//   before the first heading is a section without a heading. A setext heading or a heading
//   inside ``` / ~~~ fences is text.
// - Size: a section of at most `target` bytes is one chunk. A longer one is cut into pieces of
//   at most `target` bytes, each ending at the last paragraph break in its second half, else the
//   last sentence end, else the last space, else anywhere between two UTF-8 characters. The next
//   piece starts `overlap` bytes before that end (moved forward to a word's start), so a passage
//   cut in two is still found whole in one of them.
// - A section with neither heading nor text (blank lines) gives no chunk.
// - Bounds (a document cannot make the index much larger than itself): a heading's title is cut
//   to kMaxHeadingTitle bytes and a path to kMaxHeadingPath (its innermost titles kept, "… > "
//   before them). The bytes of all chunks, headings and texts, stay within IndexBudget of the
//   content: the headings share what the texts leave of it, each chunk first getting its own
//   section's title, then, in document order while room lasts, the whole path. A chunk of an
//   empty section that got no heading is left out.
// Pure functions; no I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::knowledge {

inline constexpr std::size_t kChunkTarget = 1500;  // bytes of text per chunk, at most
inline constexpr std::size_t kChunkOverlap = 200;  // bytes shared by consecutive pieces

inline constexpr std::size_t kMaxHeadingTitle = 200;    // bytes of one heading's title
inline constexpr std::size_t kMaxHeadingPath = 400;     // bytes of a chunk's heading path
inline constexpr std::size_t kIndexBudgetFactor = 3;    // indexed bytes per content byte...
inline constexpr std::size_t kIndexBudgetSlack = 4096;  // ...plus this

// IndexBudget is the most bytes (headings and texts) the chunks of a document of
// `content_bytes` hold.
std::size_t IndexBudget(std::size_t content_bytes);

struct ChunkOptions {
    std::size_t target = kChunkTarget;
    std::size_t overlap = kChunkOverlap;  // less than target / 2
};

struct Chunk {
    std::string heading;    // the heading path, " > " between levels; "" before any heading
    std::string text;       // the section's text (without its heading line), trimmed
    std::size_t start = 0;  // byte offset of `text` in the document
};

std::vector<Chunk> ChunkDocument(std::string_view content, const ChunkOptions& options = {});

// Words returns the distinct words of `text`, in lower case (ASCII letters folded; other UTF-8
// letters kept as written): runs of letters and digits of 3 to 40 bytes that hold a letter.
std::vector<std::string> Words(std::string_view text);

}  // namespace genhost::knowledge
