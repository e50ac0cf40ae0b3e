// genhost/tasks/moderation.hpp
//
// Provides Moderator: the content check every task passes on its worker before any provider
// runs (docs/moderation.md). The text fields of the validated input (promptText,
// negativePrompt, speech scripts: the document's `text_fields`, wherever they sit) are matched
// against the term lists of each category and against a public-figure list that honours the
// task's `contentModeration.publicFigureThreshold`:
// - `auto` (the default): a text naming a listed public figure is refused;
// - `low`: only a text that names one *and* holds one of the `risky_terms` is refused.
// A hit ends the task FAILED with the category's code (SAFETY.INPUT.TEXT by default) and a human
// message naming the field and the category, never the matched words; the task keeps its
// estimated cost (moderated generations cost the same, LIMITS_AND_PRICES.md).
//
// Matching is by whole words, case-insensitive, after folding: Latin letters lose their accents
// (NFD combining marks dropped too), ß → ss, æ → ae; Greek and Cyrillic capitals are lowered;
// fullwidth ASCII is read as ASCII; zero-width characters and soft hyphens are ignored; every
// other non-letter separates words. Scripts written without spaces (CJK, kana, Thai) match
// character by character. No stemming: list the forms to refuse.
//
// Thread-safety: a loaded Moderator is immutable and shared by every worker.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace genhost::tasks {

// ModerationHit says why a task is refused.
struct ModerationHit {
    std::string code;      // failure code, e.g. "SAFETY.INPUT.TEXT"
    std::string category;  // a category name of the document, or "public_figure"
    std::string field;     // the text's place in the input, e.g. "promptText", "speech.text"
    std::string message;   // safe to show the client
};

// PublicFigureThreshold is contentModeration.publicFigureThreshold.
enum class PublicFigureThreshold { kAuto, kLow };

// MatchTokens returns the folded words of `text` as the matcher sees them (for tests and docs).
std::vector<std::string> MatchTokens(std::string_view text);

class Moderator {
  public:
    // Load compiles a moderation document (the format of schemas/moderation.json, described in
    // docs/moderation.md). Throws std::invalid_argument naming the problem: invalid JSON, an
    // unknown key, a term with no letters, a code outside the SAFETY.INPUT.* family.
    static std::shared_ptr<const Moderator> Load(std::string_view document);

    // Check moderates every text field of the validated task input `input`; nullopt if clean.
    std::optional<ModerationHit> Check(const nlohmann::json& input) const;

    // CheckText moderates one text (`field` only labels the hit).
    std::optional<ModerationHit> CheckText(std::string_view text, PublicFigureThreshold threshold,
                                           const std::string& field = "text") const;

  private:
    // A compiled term list: terms as word sequences, indexed by their first word.
    struct TermList {
        std::vector<std::vector<std::string>> terms;
        std::unordered_map<std::string, std::vector<std::size_t>> by_first;
        void Add(std::vector<std::string> term);
        bool MatchesAny(const std::vector<std::string>& words) const;
    };
    struct Category {
        std::string name;
        std::string code;
        TermList terms;
    };

    void CheckNode(const nlohmann::json& node, const std::string& path,
                   PublicFigureThreshold threshold, std::optional<ModerationHit>& hit) const;

    std::vector<std::string> text_fields_;
    std::vector<Category> categories_;
    std::string figure_code_ = "SAFETY.INPUT.TEXT";
    TermList figures_;
    TermList risky_;
};

}  // namespace genhost::tasks
