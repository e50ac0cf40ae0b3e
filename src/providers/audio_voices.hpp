// src/providers/audio_voices.hpp (private to src/providers)
//
// Provides the data behind the builtin audio pipelines (defined in pipelines_audio.cpp): the 49
// speech preset voices as espeak-ng voices with a timbre, the espeak-ng voice of each language
// code, the placeholder script of voice_dubbing, and the text helpers text_to_speech uses. The
// table is documented in docs/pipelines.md.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::providers::audio {

// VoiceProfile is one preset voice. `accent` is the espeak-ng English voice used for English
// text; other languages use their own espeak-ng voice with the same variant. pitch and range
// are espeak-ng's 0..100 settings, speed multiplies 175 words per minute, tract scales the
// formants (asetrate + atempo: >1 is a smaller vocal tract), colour is a libavfilter chain.
struct VoiceProfile {
    const char* id;
    const char* accent;
    const char* variant;
    int pitch;
    int range;
    double speed;
    double tract;
    const char* colour;
    bool female;
};

// Voices lists the 49 profiles in the order of schemas/common.json's speechVoiceId.
std::span<const VoiceProfile> Voices();

// FindVoice returns the profile of `id`, or nullptr.
const VoiceProfile* FindVoice(std::string_view id);

// LanguageVoice is the espeak-ng voice for an ISO 639-1 code (and "fil"), e.g. "zh" → "cmn";
// empty when espeak-ng has none.
std::string LanguageVoice(std::string_view code);

// DubbingLanguages lists the 29 voice_dubbing target codes.
std::span<const char* const> DubbingLanguages();

// PlaceholderScript is voice_dubbing's stand-in sentence in language `code`.
std::string_view PlaceholderScript(std::string_view code);

// DetectLanguage guesses the language of `text` from its script (and, for Latin script, a few
// common words): an ISO 639-1 code, "en" when unsure.
std::string DetectLanguage(std::string_view text);

// Segment is a stretch of text and the delivery an expressive tag asked for.
struct Segment {
    std::string text;
    std::string delivery;  // "", "whisper", "loud", "soft", "laugh"
};

// SplitExpressiveTags removes [tags] from `text` and returns the segments they delimit.
std::vector<Segment> SplitExpressiveTags(std::string_view text);

// NormalizeText spells out symbols espeak-ng would skip or misread (%, &, currency, +, @) for
// English text.
std::string NormalizeText(std::string_view text);

}  // namespace genhost::providers::audio
