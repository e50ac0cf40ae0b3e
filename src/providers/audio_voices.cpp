// The data behind the builtin audio pipelines: the 49 preset voices, language voices, the
// voice_dubbing placeholder scripts and the text helpers (see audio_voices.hpp).
#include "audio_voices.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <map>
#include <utility>

#include "genhost/media/audio.hpp"

namespace genhost::providers::audio {
namespace {

// Colours: small EQ moves so that voices sharing an espeak-ng variant still sound apart.
constexpr const char* kFlat = "anull";
constexpr const char* kWarm = "equalizer=f=220:t=q:w=1:g=3,equalizer=f=6000:t=q:w=1:g=-3";
constexpr const char* kBright = "equalizer=f=3500:t=q:w=1:g=4";
constexpr const char* kSoft = "lowpass=f=6500,equalizer=f=300:t=q:w=1:g=2";
constexpr const char* kNasal = "equalizer=f=1200:t=q:w=0.8:g=5";
constexpr const char* kThin = "highpass=f=250,equalizer=f=2500:t=q:w=1:g=3";
constexpr const char* kBoom = "equalizer=f=120:t=q:w=1:g=5";
constexpr const char* kRough = "equalizer=f=180:t=q:w=1:g=4,equalizer=f=2800:t=q:w=1:g=3";
constexpr const char* kCave = "aecho=0.8:0.6:40:0.3,equalizer=f=100:t=q:w=1:g=6";
constexpr const char* kMonster = "aecho=0.8:0.7:60:0.35,lowpass=f=3200,equalizer=f=90:t=q:w=1:g=6";
constexpr const char* kAlien = "vibrato=f=7:d=0.35,aecho=0.6:0.5:18:0.35";
constexpr const char* kHall = "aecho=0.7:0.4:70:0.2";

// id, accent, variant, pitch, range, speed, tract, colour, female. Every combination differs.
constexpr std::array<VoiceProfile, 49> kVoices = {{
    {"Maya", "en-us", "f2", 55, 60, 1.00, 1.05, kFlat, true},
    {"Arjun", "en", "m3", 45, 60, 1.05, 1.00, kNasal, false},
    {"Serene", "en-gb-x-rp", "f5", 48, 35, 0.88, 1.02, kSoft, true},
    {"Bernard", "en", "m7", 35, 40, 0.90, 0.94, kWarm, false},
    {"Billy", "en-us", "m2", 60, 65, 1.12, 1.08, kBright, false},
    {"Mark", "en-us", "m1", 45, 50, 1.00, 1.00, kFlat, false},
    {"Clint", "en-us", "croak", 25, 30, 0.85, 0.90, kRough, false},
    {"Mabel", "en", "grandma", 58, 45, 0.85, 1.03, kThin, true},
    {"Chad", "en-us", "m4", 48, 60, 1.10, 0.98, kBright, false},
    {"Leslie", "en-us", "f1", 52, 50, 1.00, 1.00, kFlat, true},
    {"Eleanor", "en-gb-x-rp", "f3", 50, 45, 0.95, 1.04, kWarm, true},
    {"Elias", "en", "m5", 40, 45, 0.95, 0.96, kWarm, false},
    {"Elliot", "en-us", "m6", 52, 55, 1.05, 1.02, kFlat, false},
    {"Grungle", "en-us", "m8", 22, 25, 0.80, 0.85, kCave, false},
    {"Brodie", "en-gb-x-gbclan", "m2", 50, 65, 1.08, 1.00, kFlat, false},
    {"Sandra", "en-us", "f4", 46, 50, 1.00, 1.00, kWarm, true},
    {"Kirk", "en-us", "m3", 42, 40, 0.98, 0.95, kBoom, false},
    {"Kylie", "en-gb-x-gbclan", "f2", 62, 70, 1.12, 1.10, kBright, true},
    {"Lara", "en", "f1", 56, 55, 1.02, 1.06, kSoft, true},
    {"Lisa", "en-us", "f5", 54, 60, 1.05, 1.04, kBright, true},
    {"Malachi", "en-029", "m1", 40, 55, 0.95, 0.95, kWarm, false},
    {"Marlene", "en-us-nyc", "f3", 50, 60, 1.05, 1.00, kNasal, true},
    {"Martin", "en", "m2", 47, 45, 1.00, 0.99, kFlat, false},
    {"Miriam", "en", "f4", 52, 40, 0.92, 1.02, kHall, true},
    {"Monster", "en-us", "m7", 15, 20, 0.75, 0.80, kMonster, false},
    {"Paula", "en-us", "f2", 46, 45, 0.95, 1.00, kWarm, true},
    {"Pip", "en", "f5", 90, 80, 1.20, 1.25, kThin, true},
    {"Rusty", "en-us", "m4", 38, 35, 0.90, 0.92, kRough, false},
    {"Ragnar", "en-gb-scotland", "m6", 20, 35, 0.88, 0.86, kBoom, false},
    {"Xylar", "en-us", "klatt3", 60, 10, 1.00, 1.15, kAlien, false},
    {"Maggie", "en-gb-scotland", "f3", 58, 60, 1.05, 1.05, kFlat, true},
    {"Jack", "en", "m5", 46, 55, 1.08, 1.00, kBright, false},
    {"Katie", "en-us", "f1", 60, 65, 1.10, 1.08, kBright, true},
    {"Noah", "en-us", "m6", 44, 50, 1.00, 0.98, kWarm, false},
    {"James", "en-gb-x-rp", "m1", 42, 45, 0.95, 0.97, kFlat, false},
    {"Rina", "en-us", "f4", 62, 55, 1.05, 1.07, kSoft, true},
    {"Ella", "en", "f2", 64, 60, 1.00, 1.10, kFlat, true},
    {"Mariah", "en-029", "f5", 56, 70, 1.00, 1.03, kWarm, true},
    {"Frank", "en-us-nyc", "m3", 38, 50, 1.05, 0.94, kRough, false},
    {"Claudia", "en", "f3", 46, 45, 0.95, 1.00, kWarm, true},
    {"Niki", "en-us", "f5", 66, 70, 1.15, 1.10, kThin, true},
    {"Vincent", "en-gb-x-rp", "m8", 30, 40, 0.90, 0.92, kHall, false},
    {"Kendrick", "en-us", "m2", 36, 55, 1.02, 0.95, kBoom, false},
    {"Myrna", "en-us", "grandma", 55, 40, 0.85, 1.00, kSoft, true},
    {"Tom", "en-us", "m5", 50, 50, 1.00, 1.00, kFlat, false},
    {"Wanda", "en-gb-x-gbcwmd", "f1", 50, 55, 0.98, 1.03, kNasal, true},
    {"Benjamin", "en", "benjamin", 45, 50, 1.00, 0.98, kFlat, false},
    {"Kiana", "en-us", "f2", 58, 65, 1.08, 1.06, kBright, true},
    {"Rachel", "en-us", "f3", 54, 50, 1.00, 1.04, kFlat, true},
}};

struct Language {
    const char* code;
    const char* voice;
    const char* script;
};

// The 29 dubbing languages first (in schemas/voice_dubbing.json's order), then other codes
// voice_v3's languageCode may name. Filipino has no espeak-ng voice: Indonesian, whose
// phonology and Latin spelling are close, reads it.
constexpr std::array<Language, 29> kDubbing = {{
    {"en", "en-us", "This voice was dubbed automatically. The original words were not translated."},
    {"hi", "hi", "यह आवाज़ स्वचालित रूप से डब की गई है। मूल शब्दों का अनुवाद नहीं किया गया।"},
    {"pt", "pt-br",
     "Esta voz foi dublada automaticamente. As palavras originais não foram traduzidas."},
    {"zh", "cmn", "这段声音是自动配音的。原来的话没有被翻译。"},
    {"es", "es", "Esta voz fue doblada automáticamente. Las palabras originales no se tradujeron."},
    {"fr", "fr",
     "Cette voix a été doublée automatiquement. Les mots d'origine n'ont pas été traduits."},
    {"de", "de",
     "Diese Stimme wurde automatisch synchronisiert. Die ursprünglichen Worte wurden nicht "
     "übersetzt."},
    {"ja", "ja", "この音声は自動的に吹き替えられました。元の言葉は翻訳されていません。"},
    {"ar", "ar", "تمت دبلجة هذا الصوت تلقائيا. لم تترجم الكلمات الأصلية."},
    {"ru", "ru", "Этот голос был дублирован автоматически. Исходные слова не были переведены."},
    {"ko", "ko", "이 목소리는 자동으로 더빙되었습니다. 원래 말은 번역되지 않았습니다."},
    {"id", "id",
     "Suara ini disulihsuarakan secara otomatis. Kata-kata aslinya tidak diterjemahkan."},
    {"it", "it",
     "Questa voce è stata doppiata automaticamente. Le parole originali non sono state tradotte."},
    {"nl", "nl",
     "Deze stem is automatisch nagesynchroniseerd. De oorspronkelijke woorden zijn niet vertaald."},
    {"tr", "tr", "Bu ses otomatik olarak seslendirildi. Orijinal sözler çevrilmedi."},
    {"pl", "pl",
     "Ten głos został automatycznie zdubbingowany. Oryginalne słowa nie zostały przetłumaczone."},
    {"sv", "sv",
     "Den här rösten har dubbats automatiskt. De ursprungliga orden har inte översatts."},
    {"fil", "id",
     "Ang boses na ito ay awtomatikong na-dub. Hindi isinalin ang orihinal na mga salita."},
    {"ms", "ms", "Suara ini dialih suara secara automatik. Perkataan asal tidak diterjemahkan."},
    {"ro", "ro", "Această voce a fost dublată automat. Cuvintele originale nu au fost traduse."},
    {"uk", "uk", "Цей голос було дубльовано автоматично. Оригінальні слова не були перекладені."},
    {"el", "el", "Αυτή η φωνή μεταγλωττίστηκε αυτόματα. Τα αρχικά λόγια δεν μεταφράστηκαν."},
    {"cs", "cs", "Tento hlas byl automaticky nadabován. Původní slova nebyla přeložena."},
    {"da", "da", "Denne stemme er blevet dubbet automatisk. De oprindelige ord er ikke oversat."},
    {"fi", "fi", "Tämä ääni on dubattu automaattisesti. Alkuperäisiä sanoja ei käännetty."},
    {"bg", "bg", "Този глас беше дублиран автоматично. Оригиналните думи не бяха преведени."},
    {"hr", "hr", "Ovaj glas je automatski sinkroniziran. Izvorne riječi nisu prevedene."},
    {"sk", "sk", "Tento hlas bol automaticky nadabovaný. Pôvodné slová neboli preložené."},
    {"ta", "ta", "இந்தக் குரல் தானாகவே டப் செய்யப்பட்டது. மூல வார்த்தைகள் மொழிபெயர்க்கப்படவில்லை."},
}};

constexpr std::array<const char*, 29> kDubbingCodes = {
    "en", "hi", "pt",  "zh", "es", "fr", "de", "ja", "ar", "ru", "ko", "id", "it", "nl", "tr",
    "pl", "sv", "fil", "ms", "ro", "uk", "el", "cs", "da", "fi", "bg", "hr", "sk", "ta"};

std::string Lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// NextCodePoint decodes one UTF-8 code point at `i` (advancing it); U+FFFD on bad bytes.
char32_t NextCodePoint(std::string_view s, std::size_t& i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    int extra = 0;
    char32_t cp = 0;
    if (b0 < 0x80) {
        ++i;
        return b0;
    } else if ((b0 & 0xE0) == 0xC0) {
        extra = 1;
        cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        extra = 2;
        cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        extra = 3;
        cp = b0 & 0x07;
    } else {
        ++i;
        return 0xFFFD;
    }
    ++i;
    for (int k = 0; k < extra; ++k) {
        if (i >= s.size() || (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) return 0xFFFD;
        cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3F);
        ++i;
    }
    return cp;
}

bool IsLetter(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0xC0; }

// Lowercase words of ASCII-ish text (letters of any script kept as bytes).
std::vector<std::string> Words(std::string_view text) {
    std::vector<std::string> words;
    std::string current;
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t start = i;
        const char32_t c = NextCodePoint(text, i);
        if (IsLetter(c) || c == '\'') {
            current += Lower(text.substr(start, i - start));
        } else if (!current.empty()) {
            words.push_back(std::move(current));
            current.clear();
        }
    }
    if (!current.empty()) words.push_back(std::move(current));
    return words;
}

struct LatinHints {
    const char* code;
    std::array<const char*, 10> words;
    std::array<const char*, 4> letters;  // UTF-8 letters typical of the language
};

constexpr std::array<LatinHints, 19> kLatin = {{
    {"en", {"the", "and", "is", "you", "of", "to", "it", "this", "that", "with"}, {}},
    {"es",
     {"el", "los", "que", "es", "una", "por", "con", "para", "pero", "muy"},
     {"ñ", "¿", "¡", "ó"}},
    {"pt",
     {"não", "uma", "que", "os", "com", "para", "você", "mais", "é", "do"},
     {"ã", "õ", "ç", "ê"}},
    {"fr",
     {"le", "les", "et", "est", "une", "je", "vous", "pas", "c'est", "des"},
     {"è", "ê", "à", "ç"}},
    {"de",
     {"und", "der", "die", "das", "ist", "nicht", "ich", "ein", "sie", "mit"},
     {"ß", "ü", "ö", "ä"}},
    {"it",
     {"il", "che", "di", "non", "sono", "è", "gli", "della", "per", "una"},
     {"ò", "ù", "à", "ì"}},
    {"nl",
     {"het", "een", "niet", "ik", "van", "de", "is", "dat", "en", "zijn"},
     {"ij", {}, {}, {}}},
    {"tr",
     {"bir", "ve", "bu", "için", "değil", "ben", "çok", "ne", "da", "ile"},
     {"ş", "ğ", "ı", "İ"}},
    {"pl",
     {"nie", "jest", "się", "to", "że", "na", "jak", "ale", "tak", "w"},
     {"ł", "ż", "ś", "ą"}},
    {"sv", {"och", "är", "jag", "det", "inte", "att", "som", "en", "på", "med"}, {"å", {}, {}, {}}},
    {"da", {"og", "er", "ikke", "jeg", "det", "at", "en", "til", "på", "med"}, {"ø", "æ", {}, {}}},
    {"fi",
     {"ja", "on", "ei", "minä", "että", "se", "hän", "mutta", "kun", "oli"},
     {"ää", "öö", {}, {}}},
    {"ro",
     {"și", "este", "nu", "cu", "pentru", "sunt", "care", "o", "un", "mai"},
     {"ă", "ț", "ș", "â"}},
    {"cs",
     {"je", "se", "že", "na", "to", "není", "jsem", "ale", "jak", "tak"},
     {"ř", "ě", "ů", {}}},
    {"sk", {"je", "sa", "že", "na", "to", "nie", "som", "ale", "ako", "tak"}, {"ľ", "ô", "ĺ", "ŕ"}},
    {"hr", {"je", "se", "da", "na", "to", "nije", "sam", "ali", "kako", "i"}, {"đ", "ć", {}, {}}},
    {"id", {"yang", "dan", "ini", "tidak", "saya", "itu", "dengan", "untuk", "ada", "akan"}, {}},
    {"ms", {"yang", "dan", "ini", "tidak", "saya", "itu", "dengan", "untuk", "ialah", "boleh"}, {}},
    {"fil", {"ang", "ng", "mga", "ako", "hindi", "sa", "ay", "na", "ito", "ka"}, {}},
}};

}  // namespace

std::span<const VoiceProfile> Voices() { return kVoices; }

const VoiceProfile* FindVoice(std::string_view id) {
    for (const auto& v : kVoices) {
        if (id == v.id) return &v;
    }
    return nullptr;
}

std::string LanguageVoice(std::string_view code) {
    const std::string lower = Lower(code.substr(0, code.find_first_of("-_")));
    for (const auto& l : kDubbing) {
        if (lower == l.code) return l.voice;
    }
    static const std::map<std::string, std::string, std::less<>> kOthers = {
        {"yue", "yue"}, {"nb", "nb"}, {"no", "nb"}};
    if (const auto it = kOthers.find(lower); it != kOthers.end()) return it->second;
    if (lower.size() >= 2 && lower.size() <= 3 &&
        std::all_of(lower.begin(), lower.end(), [](char c) { return c >= 'a' && c <= 'z'; }) &&
        media::SpeechVoiceExists(lower)) {
        return lower;
    }
    return {};
}

std::span<const char* const> DubbingLanguages() { return kDubbingCodes; }

std::string_view PlaceholderScript(std::string_view code) {
    for (const auto& l : kDubbing) {
        if (code == l.code) return l.script;
    }
    return kDubbing[0].script;
}

std::string DetectLanguage(std::string_view text) {
    // Scripts other than Latin decide at once (kana before Han: Japanese mixes both).
    std::map<std::string, int> script;
    bool ukrainian = false;
    bool russian_only = false;
    bool bulgarian = false;
    for (std::size_t i = 0; i < text.size();) {
        const char32_t c = NextCodePoint(text, i);
        if (c >= 0x0900 && c <= 0x097F)
            ++script["hi"];
        else if (c >= 0x0B80 && c <= 0x0BFF)
            ++script["ta"];
        else if ((c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x1100 && c <= 0x11FF))
            ++script["ko"];
        else if (c >= 0x3040 && c <= 0x30FF)
            script["ja"] += 4;
        else if (c >= 0x4E00 && c <= 0x9FFF)
            ++script["zh"];
        else if (c >= 0x0600 && c <= 0x06FF)
            ++script["ar"];
        else if (c >= 0x0370 && c <= 0x03FF)
            ++script["el"];
        else if (c >= 0x0400 && c <= 0x04FF) {
            ++script["cyr"];
            if (c == 0x0456 || c == 0x0457 || c == 0x0454 || c == 0x0491) ukrainian = true;
            if (c == 0x044B || c == 0x044D || c == 0x0451) russian_only = true;
            if (c == 0x044A) bulgarian = true;
        }
    }
    std::string best;
    int best_count = 0;
    for (const auto& [code, count] : script) {
        if (count > best_count) {
            best = code;
            best_count = count;
        }
    }
    if (best == "cyr") return ukrainian ? "uk" : (bulgarian && !russian_only ? "bg" : "ru");
    if (!best.empty()) return best;

    const auto words = Words(text);
    const std::string lower = Lower(text);
    std::string winner = "en";
    int winner_score = 0;
    for (const auto& hints : kLatin) {
        int score = 0;
        for (const char* w : hints.words) {
            if (w == nullptr) continue;
            score += static_cast<int>(std::count(words.begin(), words.end(), w)) * 2;
        }
        for (const char* l : hints.letters) {
            if (l == nullptr) continue;
            for (std::size_t at = lower.find(l); at != std::string::npos;
                 at = lower.find(l, at + 1)) {
                score += 3;
            }
        }
        if (score > winner_score) {
            winner = hints.code;
            winner_score = score;
        }
    }
    return winner;
}

std::vector<Segment> SplitExpressiveTags(std::string_view text) {
    static const std::array<std::pair<const char*, const char*>, 22> kTags = {{
        {"whisper", "whisper"}, {"quiet", "soft"},    {"soft", "soft"},   {"sad", "soft"},
        {"sigh", "soft"},       {"calm", "soft"},     {"tired", "soft"},  {"shout", "loud"},
        {"yell", "loud"},       {"loud", "loud"},     {"excit", "loud"},  {"angr", "loud"},
        {"happ", "loud"},       {"cheer", "loud"},    {"laugh", "laugh"}, {"chuckl", "laugh"},
        {"giggl", "laugh"},     {"snicker", "laugh"}, {"crying", "soft"}, {"nervous", "soft"},
        {"curious", ""},        {"sarcas", ""},
    }};
    std::vector<Segment> segments(1);
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t open = text.find('[', i);
        const std::size_t close = open == std::string_view::npos ? open : text.find(']', open);
        if (open == std::string_view::npos || close == std::string_view::npos) {
            segments.back().text += text.substr(i);
            break;
        }
        segments.back().text += text.substr(i, open - i);
        const std::string tag = Lower(text.substr(open + 1, close - open - 1));
        std::string delivery;
        for (const auto& [prefix, d] : kTags) {
            if (tag.find(prefix) != std::string::npos) {
                delivery = d;
                break;
            }
        }
        segments.push_back(Segment{{}, delivery});
        i = close + 1;
    }
    std::vector<Segment> kept;
    for (auto& s : segments) {
        const bool blank = std::all_of(s.text.begin(), s.text.end(), [](char c) {
            return std::isspace(static_cast<unsigned char>(c)) != 0;
        });
        if (blank) s.text.clear();
        if (!s.text.empty() || s.delivery == "laugh") kept.push_back(std::move(s));
    }
    return kept;
}

std::string NormalizeText(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 16);
    auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        std::string_view currency;
        std::size_t symbol = 1;
        if (c == '$') currency = " dollars";
        if (text.substr(i, 3) == "\xE2\x82\xAC") currency = " euros", symbol = 3;  // €
        if (text.substr(i, 2) == "\xC2\xA3") currency = " pounds", symbol = 2;     // £
        if (text.substr(i, 2) == "\xC2\xA5") currency = " yen", symbol = 2;        // ¥
        if (!currency.empty()) {
            std::size_t j = i + symbol;
            while (j < text.size() &&
                   (is_digit(text[j]) || ((text[j] == '.' || text[j] == ',') &&
                                          j + 1 < text.size() && is_digit(text[j + 1])))) {
                ++j;
            }
            out += ' ';
            out += text.substr(i + symbol, j - i - symbol);
            out += currency;
            i = j;
            continue;
        }
        switch (c) {
            case '%':
                out += " percent";
                break;
            case '&':
                out += " and ";
                break;
            case '+':
                out += " plus ";
                break;
            case '@':
                out += " at ";
                break;
            case '=':
                out += " equals ";
                break;
            default:
                out += c;
        }
        ++i;
    }
    return out;
}

}  // namespace genhost::providers::audio
