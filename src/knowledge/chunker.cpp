#include "genhost/knowledge/chunker.hpp"

#include <algorithm>
#include <set>

namespace genhost::knowledge {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// A byte that continues a UTF-8 character (never a place to cut).
bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

struct Line {
    std::size_t begin = 0;  // offset of the line
    std::size_t end = 0;    // offset of its newline (or the end of the text)
};

// HeadingLevel is the ATX level of `line` (1-6), with its title in `title`; 0 when not a heading.
int HeadingLevel(std::string_view line, std::string& title) {
    std::size_t i = 0;
    while (i < line.size() && i < 3 && line[i] == ' ') ++i;  // up to 3 spaces of indent
    std::size_t hashes = 0;
    while (i + hashes < line.size() && line[i + hashes] == '#') ++hashes;
    if (hashes == 0 || hashes > 6) return 0;
    const std::size_t after = i + hashes;
    if (after < line.size() && line[after] != ' ' && line[after] != '\t') return 0;
    std::string_view rest = line.substr(std::min(after, line.size()));
    // Trim, and drop a closing run of '#' (CommonMark).
    while (!rest.empty() && IsSpace(rest.front())) rest.remove_prefix(1);
    while (!rest.empty() && IsSpace(rest.back())) rest.remove_suffix(1);
    std::size_t closing = rest.size();
    while (closing > 0 && rest[closing - 1] == '#') --closing;
    if (closing < rest.size() && (closing == 0 || rest[closing - 1] == ' ')) {
        rest = rest.substr(0, closing);
        while (!rest.empty() && IsSpace(rest.back())) rest.remove_suffix(1);
    }
    title.assign(rest);
    return static_cast<int>(hashes);
}

bool IsFence(std::string_view line, char& fence) {
    std::size_t i = 0;
    while (i < line.size() && i < 3 && line[i] == ' ') ++i;
    if (line.size() - i >= 3 && (line[i] == '`' || line[i] == '~') && line[i + 1] == line[i] &&
        line[i + 2] == line[i]) {
        fence = line[i];
        return true;
    }
    return false;
}

struct Section {
    std::string heading;    // the path, bounded (kMaxHeadingPath)
    std::string title;      // its own title alone, bounded (kMaxHeadingTitle)
    std::size_t begin = 0;  // the text after the heading line
    std::size_t end = 0;
};

// Capped cuts `text` to at most `max` bytes between two characters, marking the cut with "…".
std::string Capped(std::string_view text, std::size_t max) {
    if (text.size() <= max) return std::string(text);
    std::size_t end = max - 3;  // room for "…" (3 bytes)
    while (end > 0 && IsContinuation(text[end])) --end;
    return std::string(text.substr(0, end)) + "\u2026";
}

// PathOf joins the open headings' titles with " > ", keeping the innermost ones when the whole
// would pass kMaxHeadingPath ("… > Linux > Debian").
std::string PathOf(const std::vector<std::pair<int, std::string>>& path) {
    std::string out;
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
        if (it->second.empty()) continue;
        const std::string joined = out.empty() ? it->second : it->second + " > " + out;
        if (joined.size() > kMaxHeadingPath) {
            out = out.empty() ? Capped(it->second, kMaxHeadingPath) : "\u2026 > " + out;
            break;
        }
        out = joined;
    }
    return out;
}

std::vector<Section> Sections(std::string_view content) {
    std::vector<Section> sections;
    std::vector<std::pair<int, std::string>> path;  // (level, title) of the open headings
    Section current;
    bool in_fence = false;
    char fence = 0;
    std::size_t pos = 0;
    while (pos < content.size()) {
        const std::size_t nl = content.find('\n', pos);
        const std::size_t end = nl == std::string_view::npos ? content.size() : nl;
        std::string_view line = content.substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        char f = 0;
        std::string title;
        int level = 0;
        if (IsFence(line, f)) {
            if (!in_fence) {
                in_fence = true;
                fence = f;
            } else if (f == fence) {
                in_fence = false;
            }
        } else if (!in_fence && (level = HeadingLevel(line, title)) > 0) {
            current.end = pos;
            sections.push_back(current);
            while (!path.empty() && path.back().first >= level) path.pop_back();
            path.emplace_back(level, Capped(title, kMaxHeadingTitle));
            current = Section{};
            current.title = path.back().second;
            current.heading = PathOf(path);
            current.begin = std::min(end + 1, content.size());
        }
        pos = end + 1;
    }
    current.end = content.size();
    sections.push_back(current);
    return sections;
}

// Trim narrows [begin, end) of `content` to its non-space bytes.
void Trim(std::string_view content, std::size_t& begin, std::size_t& end) {
    while (begin < end && IsSpace(content[begin])) ++begin;
    while (end > begin && IsSpace(content[end - 1])) --end;
}

// CutBefore is where a piece of `content` starting at `begin` ends, at most at `limit`.
std::size_t CutBefore(std::string_view content, std::size_t begin, std::size_t limit) {
    const std::size_t half = begin + (limit - begin) / 2;
    // A paragraph break in the second half.
    for (std::size_t i = limit; i > half; --i) {
        if (content[i - 1] == '\n' && i >= 2 && content[i - 2] == '\n') return i;
    }
    // A sentence end (followed by a space or the line's end).
    for (std::size_t i = limit; i > half; --i) {
        const char c = content[i - 1];
        if ((c == '.' || c == '!' || c == '?' || c == '\n') &&
            (c == '\n' || i == content.size() || IsSpace(content[i]))) {
            return i;
        }
    }
    for (std::size_t i = limit; i > half; --i) {
        if (IsSpace(content[i - 1])) return i;
    }
    std::size_t i = limit;
    while (i > begin + 1 && i < content.size() && IsContinuation(content[i])) --i;
    return i;
}

// WordStartAtOrAfter moves `at` forward to the start of a word (or the first byte after spaces),
// not past `limit`.
std::size_t WordStartAtOrAfter(std::string_view content, std::size_t at, std::size_t limit) {
    if (at == 0 || IsSpace(content[at - 1])) {
        while (at < limit && IsSpace(content[at])) ++at;
        return at;
    }
    std::size_t i = at;
    while (i < limit && !IsSpace(content[i])) ++i;
    while (i < limit && IsSpace(content[i])) ++i;
    if (i >= limit) {
        // No word starts in reach: cut between two characters instead.
        while (at < limit && IsContinuation(content[at])) ++at;
        return at;
    }
    return i;
}

}  // namespace

std::size_t IndexBudget(std::size_t content_bytes) {
    return kIndexBudgetFactor * content_bytes + kIndexBudgetSlack;
}

std::vector<Chunk> ChunkDocument(std::string_view content, const ChunkOptions& options) {
    const std::size_t target = std::max<std::size_t>(options.target, 16);
    const std::size_t overlap = std::min(options.overlap, target / 2 - 1);
    const std::vector<Section> sections = Sections(content);
    std::vector<Chunk> chunks;
    std::vector<std::size_t> section_of;  // chunks[i] is a piece of sections[section_of[i]]
    const auto add = [&](std::size_t section, std::string text, std::size_t start) {
        chunks.push_back({std::string(), std::move(text), start});
        section_of.push_back(section);
    };
    for (std::size_t k = 0; k < sections.size(); ++k) {
        const Section& s = sections[k];
        std::size_t begin = s.begin;
        std::size_t end = s.end;
        Trim(content, begin, end);
        if (begin >= end) {
            if (!s.heading.empty()) add(k, std::string(), begin);
            continue;
        }
        while (begin < end) {
            if (end - begin <= target) {
                add(k, std::string(content.substr(begin, end - begin)), begin);
                break;
            }
            const std::size_t cut = CutBefore(content, begin, begin + target);
            std::size_t piece_end = cut;
            std::size_t piece_begin = begin;
            Trim(content, piece_begin, piece_end);
            if (piece_begin < piece_end) {
                add(k, std::string(content.substr(piece_begin, piece_end - piece_begin)),
                    piece_begin);
            }
            // The next piece overlaps this one, and always moves on.
            std::size_t next = cut > begin + overlap ? cut - overlap : cut;
            next = WordStartAtOrAfter(content, next, cut);
            if (next <= begin) next = cut;
            begin = next;
            Trim(content, begin, end);
        }
    }
    // Headings are what the index repeats: every chunk carries one. They get what the budget
    // leaves beyond the texts: first each chunk its section's own title, then, in document
    // order, the whole path instead. An ordinary document has room for every path.
    std::size_t used = 0;
    for (const auto& c : chunks) used += c.text.size();
    const std::size_t budget = IndexBudget(content.size());
    std::size_t room = budget > used ? budget - used : 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        const std::string& title = sections[section_of[i]].title;
        if (title.size() > room) continue;
        chunks[i].heading = title;
        room -= title.size();
    }
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        const Section& s = sections[section_of[i]];
        if (chunks[i].heading.size() != s.title.size() || s.heading.size() <= s.title.size()) {
            continue;  // no title fitted, or the path is no longer than the title
        }
        const std::size_t extra = s.heading.size() - s.title.size();
        if (extra > room) continue;
        chunks[i].heading = s.heading;
        room -= extra;
    }
    // A heading with no text that got no room adds nothing worth finding.
    chunks.erase(std::remove_if(chunks.begin(), chunks.end(),
                                [](const Chunk& c) { return c.text.empty() && c.heading.empty(); }),
                 chunks.end());
    return chunks;
}

std::vector<std::string> Words(std::string_view text) {
    std::set<std::string> words;
    std::string word;
    bool has_letter = false;
    const auto flush = [&] {
        if (has_letter && word.size() >= 3 && word.size() <= 40) words.insert(word);
        word.clear();
        has_letter = false;
    };
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z')) {
            word.push_back(static_cast<char>(u | 0x20));
            has_letter = true;
        } else if (u >= '0' && u <= '9') {
            word.push_back(c);
        } else if (u >= 0x80) {
            word.push_back(c);  // a letter of another script, most likely
            if (u >= 0xC0) has_letter = true;
        } else {
            flush();
        }
    }
    flush();
    return {words.begin(), words.end()};
}

}  // namespace genhost::knowledge
