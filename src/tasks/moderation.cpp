#include "genhost/tasks/moderation.hpp"

#include <algorithm>
#include <stdexcept>

namespace genhost::tasks {

namespace {

using nlohmann::json;

// Latin-1 Supplement and Latin Extended-A letters (U+00C0..U+017F) folded to lower-case ASCII;
// "" marks the two signs among them (× and ÷), which separate words.
constexpr const char* kLatinFold[] = {
    "a", "a", "a",  "a",  "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i",  "i",   // U+00C0
    "d", "n", "o",  "o",  "o", "o", "o",  "",  "o", "u", "u", "u", "u", "y", "th", "ss",  // U+00D0
    "a", "a", "a",  "a",  "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i",  "i",   // U+00E0
    "d", "n", "o",  "o",  "o", "o", "o",  "",  "o", "u", "u", "u", "u", "y", "th", "y",   // U+00F0
    "a", "a", "a",  "a",  "a", "a", "c",  "c", "c", "c", "c", "c", "c", "c", "d",  "d",   // U+0100
    "d", "d", "e",  "e",  "e", "e", "e",  "e", "e", "e", "e", "e", "g", "g", "g",  "g",   // U+0110
    "g", "g", "g",  "g",  "h", "h", "h",  "h", "i", "i", "i", "i", "i", "i", "i",  "i",   // U+0120
    "i", "i", "ij", "ij", "j", "j", "k",  "k", "k", "l", "l", "l", "l", "l", "l",  "l",   // U+0130
    "l", "l", "l",  "n",  "n", "n", "n",  "n", "n", "n", "n", "n", "o", "o", "o",  "o",   // U+0140
    "o", "o", "oe", "oe", "r", "r", "r",  "r", "r", "r", "s", "s", "s", "s", "s",  "s",   // U+0150
    "s", "s", "t",  "t",  "t", "t", "t",  "t", "u", "u", "u", "u", "u", "u", "u",  "u",   // U+0160
    "u", "u", "u",  "u",  "w", "w", "y",  "y", "y", "z", "z", "z", "z", "z", "z",  "s",   // U+0170
};

// Decode reads one UTF-8 code point at `i` (advancing it); U+FFFD for a malformed sequence.
char32_t Decode(std::string_view s, std::size_t& i) {
    const auto b0 = static_cast<unsigned char>(s[i++]);
    if (b0 < 0x80) return b0;
    int extra = 0;
    char32_t cp = 0;
    if ((b0 & 0xE0) == 0xC0) {
        extra = 1;
        cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        extra = 2;
        cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        extra = 3;
        cp = b0 & 0x07;
    } else {
        return 0xFFFD;
    }
    for (int k = 0; k < extra; ++k) {
        if (i >= s.size() || (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) return 0xFFFD;
        cp = (cp << 6) | (static_cast<unsigned char>(s[i++]) & 0x3F);
    }
    return cp;
}

void Encode(char32_t cp, std::string& out) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

bool In(char32_t cp, char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; }

// Ignored characters vanish without splitting a word: combining marks, zero-width characters,
// the soft hyphen and variation selectors.
bool Ignored(char32_t cp) {
    return In(cp, 0x0300, 0x036F) || In(cp, 0x200B, 0x200D) || cp == 0x2060 || cp == 0xFEFF ||
           cp == 0x00AD || In(cp, 0xFE00, 0xFE0F);
}

// Separators: punctuation, symbols, spaces and emoji outside ASCII.
bool Separator(char32_t cp) {
    return In(cp, 0x0080, 0x00BF) || cp == 0x00D7 || cp == 0x00F7 || In(cp, 0x2000, 0x206F) ||
           In(cp, 0x2190, 0x2BFF) || In(cp, 0x3000, 0x303F) || In(cp, 0xFE30, 0xFE4F) ||
           In(cp, 0xFF00, 0xFF0F) || In(cp, 0xFF1A, 0xFF20) || In(cp, 0xFF3B, 0xFF40) ||
           In(cp, 0xFF5B, 0xFF65) || In(cp, 0x1F000, 0x1FAFF) || cp == 0xFFFD ||
           In(cp, 0xD800, 0xDFFF) || cp > 0x10FFFF;
}

// Unspaced scripts are matched character by character: each character is a word of its own.
bool Unspaced(char32_t cp) {
    return In(cp, 0x3040, 0x30FF) || In(cp, 0x3400, 0x4DBF) || In(cp, 0x4E00, 0x9FFF) ||
           In(cp, 0xF900, 0xFAFF) || In(cp, 0x0E00, 0x0E7F) || In(cp, 0x20000, 0x2FFFF);
}

char32_t Lower(char32_t cp) {
    if (In(cp, 'A', 'Z')) return cp + 0x20;
    if (In(cp, 0x0391, 0x03A9) && cp != 0x03A2) return cp + 0x20;  // Greek capitals
    if (cp == 0x03C2) return 0x03C3;                               // final sigma
    if (In(cp, 0x0410, 0x042F)) return cp + 0x20;                  // Cyrillic capitals
    if (In(cp, 0x0400, 0x040F)) return cp + 0x50;
    return cp;
}

std::string Require(const json& v, const std::string& where) {
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
        throw std::invalid_argument("moderation: " + where + " must be a non-empty string");
    }
    return v.get<std::string>();
}

void OnlyKeys(const json& obj, std::initializer_list<std::string_view> keys,
              const std::string& where) {
    if (!obj.is_object())
        throw std::invalid_argument("moderation: " + where + " must be an object");
    for (const auto& [key, value] : obj.items()) {
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
            throw std::invalid_argument("moderation: " + where + ": unknown key \"" + key + "\"");
        }
    }
}

std::string CheckCode(const json& v, const std::string& where) {
    const std::string code = Require(v, where);
    const std::string family = "SAFETY.INPUT.";
    const bool ok = code.size() > family.size() && code.rfind(family, 0) == 0 &&
                    std::all_of(code.begin() + static_cast<long>(family.size()), code.end(),
                                [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
    if (!ok) throw std::invalid_argument("moderation: " + where + " must be SAFETY.INPUT.<KIND>");
    return code;
}

}  // namespace

std::vector<std::string> MatchTokens(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    auto flush = [&] {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
    };
    for (std::size_t i = 0; i < text.size();) {
        char32_t cp = Decode(text, i);
        if (In(cp, 0xFF01, 0xFF5E)) cp -= 0xFEE0;  // fullwidth ASCII
        if (Ignored(cp)) continue;
        if (cp < 0x80) {
            const auto c = static_cast<char>(Lower(cp));
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
                word.push_back(c);
            } else {
                flush();
            }
        } else if (In(cp, 0x00C0, 0x017F)) {
            const char* folded = kLatinFold[cp - 0xC0];
            if (*folded == '\0') {
                flush();
            } else {
                word += folded;
            }
        } else if (Separator(cp)) {
            flush();
        } else if (Unspaced(cp)) {
            flush();
            Encode(cp, word);
            flush();
        } else {
            Encode(Lower(cp), word);
        }
    }
    flush();
    return words;
}

void Moderator::TermList::Add(std::vector<std::string> term) {
    by_first[term.front()].push_back(terms.size());
    terms.push_back(std::move(term));
}

bool Moderator::TermList::MatchesAny(const std::vector<std::string>& words) const {
    for (std::size_t i = 0; i < words.size(); ++i) {
        const auto it = by_first.find(words[i]);
        if (it == by_first.end()) continue;
        for (const std::size_t t : it->second) {
            const auto& term = terms[t];
            if (i + term.size() <= words.size() &&
                std::equal(term.begin(), term.end(), words.begin() + static_cast<long>(i))) {
                return true;
            }
        }
    }
    return false;
}

std::shared_ptr<const Moderator> Moderator::Load(std::string_view document) {
    const json doc = json::parse(document, nullptr, false);
    if (doc.is_discarded()) throw std::invalid_argument("moderation: not valid JSON");
    OnlyKeys(doc, {"note", "text_fields", "categories", "public_figures"}, "the document");
    auto m = std::make_shared<Moderator>();
    auto terms = [](const json& list, const std::string& where, TermList& into) {
        if (!list.is_array())
            throw std::invalid_argument("moderation: " + where + " must be an array");
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string at = where + "[" + std::to_string(i) + "]";
            auto words = MatchTokens(Require(list[i], at));
            if (words.empty()) {
                throw std::invalid_argument("moderation: " + at + " has no letters or digits");
            }
            into.Add(std::move(words));
        }
    };
    const json fields = doc.value("text_fields", json::array({"promptText"}));
    if (!fields.is_array() || fields.empty()) {
        throw std::invalid_argument("moderation: text_fields must be a non-empty array");
    }
    for (std::size_t i = 0; i < fields.size(); ++i) {
        m->text_fields_.push_back(Require(fields[i], "text_fields[" + std::to_string(i) + "]"));
    }
    const json categories = doc.value("categories", json::array());
    if (!categories.is_array())
        throw std::invalid_argument("moderation: categories must be an array");
    for (std::size_t i = 0; i < categories.size(); ++i) {
        const std::string at = "categories[" + std::to_string(i) + "]";
        const json& c = categories[i];
        OnlyKeys(c, {"name", "code", "note", "terms"}, at);
        Category category;
        category.name = Require(c.value("name", json()), at + ".name");
        category.code =
            c.contains("code") ? CheckCode(c["code"], at + ".code") : "SAFETY.INPUT.TEXT";
        terms(c.value("terms", json::array()), at + ".terms", category.terms);
        m->categories_.push_back(std::move(category));
    }
    if (doc.contains("public_figures")) {
        const json& f = doc["public_figures"];
        OnlyKeys(f, {"note", "code", "names", "risky_terms"}, "public_figures");
        if (f.contains("code")) m->figure_code_ = CheckCode(f["code"], "public_figures.code");
        terms(f.value("names", json::array()), "public_figures.names", m->figures_);
        terms(f.value("risky_terms", json::array()), "public_figures.risky_terms", m->risky_);
    }
    return m;
}

std::optional<ModerationHit> Moderator::CheckText(std::string_view text,
                                                  PublicFigureThreshold threshold,
                                                  const std::string& field) const {
    const auto words = MatchTokens(text);
    if (words.empty()) return std::nullopt;
    for (const auto& category : categories_) {
        if (category.terms.MatchesAny(words)) {
            return ModerationHit{
                category.code, category.name, field,
                "The text in " + field +
                    " was refused by content moderation (category: " + category.name + ")."};
        }
    }
    if (!figures_.MatchesAny(words)) return std::nullopt;
    if (threshold == PublicFigureThreshold::kAuto) {
        return ModerationHit{
            figure_code_, "public_figure", field,
            "The text in " + field +
                " names a recognisable public figure, which content moderation refuses "
                "(contentModeration.publicFigureThreshold is auto)."};
    }
    if (risky_.MatchesAny(words)) {
        return ModerationHit{figure_code_, "public_figure", field,
                             "The text in " + field +
                                 " places a recognisable public figure in a sensitive context, "
                                 "which content moderation refuses."};
    }
    return std::nullopt;
}

void Moderator::CheckNode(const json& node, const std::string& path,
                          PublicFigureThreshold threshold,
                          std::optional<ModerationHit>& hit) const {
    if (hit) return;
    if (node.is_object()) {
        for (const auto& [key, value] : node.items()) {
            const std::string at = path.empty() ? key : path + "." + key;
            if (value.is_string() &&
                std::find(text_fields_.begin(), text_fields_.end(), key) != text_fields_.end()) {
                hit = CheckText(value.get_ref<const std::string&>(), threshold, at);
            } else {
                CheckNode(value, at, threshold, hit);
            }
            if (hit) return;
        }
    } else if (node.is_array()) {
        for (std::size_t i = 0; i < node.size() && !hit; ++i) {
            CheckNode(node[i], path + "." + std::to_string(i), threshold, hit);
        }
    }
}

std::optional<ModerationHit> Moderator::Check(const json& input) const {
    auto threshold = PublicFigureThreshold::kAuto;
    if (input.is_object()) {
        const auto cm = input.find("contentModeration");
        if (cm != input.end() && cm->is_object()) {
            const auto t = cm->find("publicFigureThreshold");
            if (t != cm->end() && t->is_string() && *t == "low") {
                threshold = PublicFigureThreshold::kLow;
            }
        }
    }
    std::optional<ModerationHit> hit;
    CheckNode(input, "", threshold, hit);
    return hit;
}

}  // namespace genhost::tasks
