// The builtin conversation engine (genhost/realtime/engine.hpp): deterministic, no model.
//
// For a user's utterance, in order:
// 1. A tool: the utterance names a tool (all words of its name, "show_recipe" = "show" and
//    "recipe") or one of the enum values of its string parameters. Its arguments: each string
//    parameter with an enum gets the value named (else its first value), other string parameters
//    the utterance, numbers the first number said (else 0), booleans true, arrays [] and objects
//    {}. The reply says a short sentence and calls the tool; once its result comes back, the next
//    reply tells it ("Done." or what failed).
// 2. A greeting or "who are you": the avatar introduces itself (its name and the first sentence
//    of its personality).
// 3. Knowledge: the avatar's documents are searched for the utterance; the reply is the sentence
//    of the best chunk that shares the most content words with the utterance, with the next one
//    when it is short.
// 4. Otherwise it says it does not know, and what it can talk about.
// Text is streamed word by word through on_text.
#include "genhost/realtime/engine.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace genhost::realtime {

namespace {

const std::set<std::string>& StopWords() {
    static const std::set<std::string> words = {
        "a",    "an",   "the",  "is",   "are",   "was",   "were",   "be",     "to",    "of",
        "and",  "or",   "in",   "on",   "at",    "for",   "with",   "by",     "from",  "it",
        "its",  "this", "that", "what", "which", "who",   "whom",   "how",    "when",  "where",
        "why",  "do",   "does", "did",  "can",   "could", "would",  "should", "will",  "i",
        "me",   "my",   "you",  "your", "we",    "our",   "us",     "they",   "them",  "their",
        "he",   "she",  "his",  "her",  "about", "tell",  "please", "know",   "there", "here",
        "some", "any",  "have", "has",  "had",   "so",    "if",     "as",     "not",   "no",
        "yes",  "just", "like", "want", "need",  "give",  "say",    "said",   "get",   "let"};
    return words;
}

// Words are the lower-case words of `text` (letters, digits and apostrophes).
std::vector<std::string> Words(std::string_view text) {
    std::vector<std::string> out;
    std::string word;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '\'' || u >= 0x80) {
            word += static_cast<char>(std::tolower(u));
        } else if (!word.empty()) {
            out.push_back(std::move(word));
            word.clear();
        }
    }
    if (!word.empty()) out.push_back(std::move(word));
    return out;
}

std::set<std::string> ContentWords(std::string_view text) {
    std::set<std::string> out;
    for (auto& w : Words(text)) {
        if (w.size() > 1 && !StopWords().count(w)) out.insert(std::move(w));
    }
    return out;
}

bool Contains(const std::vector<std::string>& words, const std::string& w) {
    return std::find(words.begin(), words.end(), w) != words.end();
}

// Sentences splits `text` after '.', '!' and '?' (markdown headings and list marks dropped).
std::vector<std::string> Sentences(std::string_view text) {
    std::vector<std::string> out;
    std::string current;
    const auto flush = [&] {
        std::size_t b = 0;
        while (b < current.size() &&
               (std::isspace(static_cast<unsigned char>(current[b])) || current[b] == '#' ||
                current[b] == '-' || current[b] == '*')) {
            ++b;
        }
        std::string s = current.substr(b);
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
        if (!Words(s).empty()) out.push_back(std::move(s));
        current.clear();
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n' && (i + 1 < text.size() && text[i + 1] == '\n')) {
            flush();
            continue;
        }
        current += c == '\n' ? ' ' : c;
        if ((c == '.' || c == '!' || c == '?') &&
            (i + 1 == text.size() || std::isspace(static_cast<unsigned char>(text[i + 1])))) {
            flush();
        }
    }
    flush();
    return out;
}

std::string FirstSentence(std::string_view text) {
    const auto all = Sentences(text);
    return all.empty() ? std::string() : all.front();
}

// Stream sends `text` through on_text a word at a time.
void Stream(const std::string& text, const std::function<void(std::string_view)>& on_text,
            const std::atomic<bool>& cancel) {
    if (!on_text) return;
    std::size_t start = 0;
    while (start < text.size() && !cancel) {
        std::size_t end = text.find(' ', start + 1);
        if (end == std::string::npos) end = text.size();
        on_text(std::string_view(text).substr(start, end - start));
        start = end;
    }
}

// NamesTool reports whether `words` name `tool` (every word of its name) and fills its
// arguments from the utterance.
std::optional<ToolCall> Named(const ToolSpec& tool, const std::string& utterance,
                              const std::vector<std::string>& words) {
    std::string spaced = tool.name;
    std::replace(spaced.begin(), spaced.end(), '_', ' ');
    const auto name_words = Words(spaced);
    bool named = !name_words.empty();
    for (const auto& w : name_words) named = named && Contains(words, w);
    nlohmann::json args = nlohmann::json::object();
    bool enum_named = false;
    std::optional<double> number;
    for (const auto& w : words) {
        if (!number && !w.empty() && std::isdigit(static_cast<unsigned char>(w[0]))) {
            try {
                number = std::stod(w);
            } catch (const std::exception&) {
            }
        }
    }
    for (const auto& p : tool.parameters) {
        const std::string type = p.value("type", "string");
        const std::string name = p.value("name", "");
        if (type == "string") {
            if (p.contains("enum") && !p["enum"].empty()) {
                std::string chosen;
                for (const auto& v : p["enum"]) {
                    const auto value_words = Words(v.get<std::string>());
                    bool all = !value_words.empty();
                    for (const auto& vw : value_words) all = all && Contains(words, vw);
                    if (all) {
                        chosen = v.get<std::string>();
                        break;
                    }
                }
                if (!chosen.empty()) enum_named = true;
                args[name] = chosen.empty() ? p["enum"][0].get<std::string>() : chosen;
            } else {
                args[name] = utterance;
            }
        } else if (type == "integer") {
            args[name] = static_cast<long long>(number.value_or(0));
        } else if (type == "number") {
            args[name] = number.value_or(0);
        } else if (type == "boolean") {
            args[name] = true;
        } else if (type == "array") {
            args[name] = nlohmann::json::array();
        } else {
            args[name] = nlohmann::json::object();
        }
    }
    if (!named && !enum_named) return std::nullopt;
    return ToolCall{{}, tool.name, std::move(args)};
}

class BuiltinEngine final : public Engine {
  public:
    Reply Respond(const EngineContext& context, const std::vector<Turn>& history,
                  const std::function<void(std::string_view)>& on_text,
                  const std::atomic<bool>& cancel) override {
        Reply reply;
        if (history.empty()) return reply;
        const Turn& last = history.back();
        if (last.role == Turn::Role::kTool) {
            reply.text = AfterTools(last.tool_results);
        } else if (last.role == Turn::Role::kUser) {
            reply = Answer(context, last.text, ++calls_);
        }
        Stream(reply.text, on_text, cancel);
        return reply;
    }

  private:
    static std::string AfterTools(const std::vector<ToolResult>& results) {
        std::string out;
        for (const auto& r : results) {
            std::string spaced = r.name;
            std::replace(spaced.begin(), spaced.end(), '_', ' ');
            if (!out.empty()) out += ' ';
            if (r.error) {
                out += "Sorry, " + spaced + " did not work: " + *r.error + ".";
            } else if (r.result.is_string() && !r.result.get<std::string>().empty()) {
                out += r.result.get<std::string>();
            } else if (r.result.is_object() && r.result.contains("message") &&
                       r.result["message"].is_string()) {
                out += r.result["message"].get<std::string>();
            } else {
                out += "Done.";
            }
        }
        return out;
    }

    Reply Answer(const EngineContext& context, const std::string& utterance, int call) {
        Reply reply;
        const auto words = Words(utterance);
        for (const auto& tool : context.tools) {
            if (auto named = Named(tool, utterance, words)) {
                named->id = "call_" + std::to_string(call) + "_" + tool.name;
                std::string spaced = tool.name;
                std::replace(spaced.begin(), spaced.end(), '_', ' ');
                reply.text = "Sure, one moment.";
                reply.tool_calls.push_back(std::move(*named));
                return reply;
            }
        }
        const bool greeting =
            (!words.empty() && (words[0] == "hello" || words[0] == "hi" || words[0] == "hey")) ||
            (Contains(words, "who") && Contains(words, "you"));
        const std::string who = "I'm " + context.avatar_name + ".";
        if (greeting && ContentWords(utterance).size() <= 2) {
            const std::string about = FirstSentence(context.personality);
            reply.text = "Hello! " + who + (about.empty() ? "" : " " + about);
            return reply;
        }
        if (context.search) {
            const auto query_words = ContentWords(utterance);
            const auto hits = context.search(utterance, 3);
            std::string best;
            std::string next;
            std::size_t best_score = 0;
            for (const auto& hit : hits) {
                const auto sentences = Sentences(hit.text);
                for (std::size_t i = 0; i < sentences.size(); ++i) {
                    std::size_t score = 0;
                    for (const auto& w : ContentWords(sentences[i])) score += query_words.count(w);
                    if (score > best_score) {
                        best_score = score;
                        best = sentences[i];
                        next = i + 1 < sentences.size() ? sentences[i + 1] : std::string();
                    }
                }
            }
            if (best_score > 0) {
                reply.text = best;
                if (Words(best).size() < 8 && !next.empty()) reply.text += " " + next;
                return reply;
            }
        }
        std::string topics;
        if (!context.start_script.empty()) topics = FirstSentence(context.start_script);
        reply.text =
            "I'm not sure about that." +
            (topics.empty() ? std::string(" Could you ask me another way?") : " " + topics);
        return reply;
    }

    int calls_ = 0;
};

}  // namespace

std::unique_ptr<Engine> MakeBuiltinEngine() { return std::make_unique<BuiltinEngine>(); }

}  // namespace genhost::realtime
