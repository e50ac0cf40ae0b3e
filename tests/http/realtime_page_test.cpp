// RealtimePage.* drives the realtime web page (web/realtime.html, GET /_genhost/realtime/page)
// in headless Chromium against a real server (run by ctest realtime_page, which installs
// playwright-core and needs Debian's chromium; tests/node/run_realtime_page.sh).
//
// A custom avatar knows one fact from a knowledge document. The browser's fake microphone plays
// a question about it (espeak-ng's en-us+klatt voice, which the offline recogniser understands);
// the page must show the question and the avatar's answer holding the fact, receive the avatar's
// audio and changing video frames, show the client event a typed request calls, and hang up.
// The conversation is then ended, with the question and the answer in its transcript, and its
// recording an MP4 with video and audio as long as the conversation.
#include "helpers.hpp"

#include "support/media_fixtures.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/media/audio.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/speech_recognition.hpp"

#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <set>

namespace genhost::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The builtin engine answers with the sentence of the avatar's documents that shares the most
// words with the utterance: the fact shares "restaurant", "opening" and "hours" with the question.
// The question does not name the tool (that needs "show" and "hours", or "today"/"tomorrow"):
// a tool call would come instead of the answer.
constexpr char kPageFact[] =
    "The Blue Heron restaurant opening hours are from nine in the morning to eleven at night.";
// Of the questions tried, the one the recogniser hears best from en-us+klatt (e.g. "when does
// the restaurant open" comes back as "when it was a restaurant open", then as "when does the
// restaurant's open"; this one whole, or with "restaurants").
constexpr char kQuestion[] = "what are the restaurant opening hours";
// The words of the question the page's transcript must show (what the recogniser hears of it,
// checked below), and the word of the fact the answer must hold.
const std::vector<std::string> kQuestionWords = {"opening", "hours"};
constexpr char kAnswerWord[] = "nine";
// Typed into the page: it names the client_event tool show_hours and its enum value "today".
constexpr char kToolText[] = "Please show the opening hours for today";

std::vector<std::string> WordsOf(const std::string& text) {
    std::vector<std::string> out;
    std::string word;
    for (const char c : text + " ") {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '\'') {
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!word.empty()) {
            out.push_back(std::move(word));
            word.clear();
        }
    }
    return out;
}

bool HasWords(const std::string& text, const std::vector<std::string>& words) {
    const auto have = WordsOf(text);
    return std::all_of(words.begin(), words.end(), [&](const std::string& w) {
        return std::find(have.begin(), have.end(), w) != have.end();
    });
}

// Speech is `text` spoken by espeak-ng's en-us+klatt voice, as PCM16 at 16 kHz.
std::vector<std::int16_t> Speech(const std::string& text) {
    media::SpeechParams params;
    params.text = text;
    params.voice = "en-us+klatt";
    const auto spoken =
        media::Resample(media::SynthesizeSpeech(params), media::kRecognitionSampleRate, 1);
    std::vector<std::int16_t> out(spoken.samples.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = static_cast<std::int16_t>(
            std::lround(std::clamp(spoken.samples[i], -1.0f, 1.0f) * 32767.0f));
    }
    return out;
}

// Quiet is `seconds` of a faint noise (about -80 dBFS: a room, not digital silence, and below
// the voice-activity detector's floor of -55 dBFS).
std::vector<std::int16_t> Quiet(double seconds, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> noise(-6, 6);
    std::vector<std::int16_t> out(
        static_cast<std::size_t>(seconds * media::kRecognitionSampleRate));
    for (auto& s : out) s = static_cast<std::int16_t>(noise(rng));
    return out;
}

std::string WavOf(const std::vector<std::int16_t>& pcm) {
    media::AudioBuffer buffer;
    buffer.sample_rate = media::kRecognitionSampleRate;
    buffer.channels = 1;
    buffer.samples.reserve(pcm.size());
    for (const auto s : pcm) buffer.samples.push_back(static_cast<float>(s) / 32768.0f);
    media::AudioEncoding encoding;
    encoding.format = media::AudioFormat::kWav;
    encoding.sample_rate = media::kRecognitionSampleRate;
    encoding.channels = 1;
    return media::WriteAudio(buffer, encoding);
}

class RealtimePage : public ServerSuite<RealtimePage> {
  protected:
    static void SetUpTestSuite() {
        if (ClusterDsn().empty() || std::getenv("GENHOST_NODE_TEST_DIR") == nullptr) return;
        StartServer({{"GENHOST_LATENCY_SCALE", "0"}});
    }
    void SetUp() override {
        if (std::getenv("GENHOST_NODE_TEST_DIR") == nullptr) {
            GTEST_SKIP() << "run by ctest realtime_page (tests/node/run_realtime_page.sh)";
        }
        if (server_ == nullptr) GTEST_SKIP() << "no PostgreSQL configured";
        client_ = std::make_unique<HttpClient>("127.0.0.1", server_->port());
    }

    HttpResponse Send(const std::string& method, const std::string& path,
                      const nlohmann::json& body = nullptr) {
        return client_->Send(method, path, AuthHeaders(), body.is_null() ? "" : body.dump());
    }

    // Poll GETs `path` every 100 ms until `done` holds for its JSON body or `timeout` passes;
    // returns the last body.
    nlohmann::json Poll(const std::string& path,
                        const std::function<bool(const nlohmann::json&)>& done,
                        std::chrono::seconds timeout) {
        nlohmann::json last;
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            const auto r = Send("GET", path);
            last = r.status == 200 ? r.Json() : nlohmann::json{{"httpStatus", r.status}};
            if (r.status == 200 && done(last)) return last;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return last;
    }

    // RunPage runs tests/node/realtime_page.mjs on `url` with the fake microphone `wav` and
    // returns the JSON line it printed (null when it printed none); its whole output in `out`.
    nlohmann::json RunPage(const std::string& url, const std::string& wav, std::string& out) {
        const std::string dir = std::getenv("GENHOST_NODE_TEST_DIR");
        const char* chromium = std::getenv("GENHOST_CHROMIUM");
        std::string words;
        for (const auto& w : kQuestionWords) words += (words.empty() ? "" : ",") + w;
        const std::string cmd = "cd '" + dir + "' && GENHOST_PAGE_URL='" + url + "' GENHOST_WAV='" +
                                wav + "' GENHOST_QUESTION_WORDS='" + words +
                                "' GENHOST_ANSWER_WORD='" + kAnswerWord + "' GENHOST_TOOL_TEXT='" +
                                kToolText + "' GENHOST_CHROMIUM='" +
                                (chromium != nullptr ? chromium : "/usr/bin/chromium") +
                                "' timeout -k 10 300 node realtime_page.mjs 2>&1";
        out = RunCapture(cmd);
        const auto result = LastJsonLine(out);
        return result.is_discarded() ? nlohmann::json() : result;
    }

    std::unique_ptr<HttpClient> client_;  // made once the suite's server runs
};

TEST_F(RealtimePage, ASpokenQuestionIsAnsweredFromKnowledgeAndAToolFiresInTheBrowser) {
    // The page is one self-contained file: no scripts, styles or pictures from elsewhere.
    const auto html = client_->Send("GET", "/_genhost/realtime/page");
    ASSERT_EQ(html.status, 200);
    EXPECT_THAT(html.Header("content-type"), HasSubstr("text/html"));
    for (const char* outside : {"<script src", "<link rel=\"stylesheet\"", "src=\"http",
                                "href=\"http", "@import", "url(http"}) {
        EXPECT_EQ(html.body.find(outside), std::string::npos) << outside;
    }

    // The question as the fake microphone says it, and what the server's recogniser makes of it
    // (the same model and the same kind of audio: quiet before, the words, quiet after).
    const auto question = Speech(kQuestion);
    ASSERT_GT(question.size(), static_cast<std::size_t>(media::kRecognitionSampleRate / 2));
    {
        auto heard_pcm = Quiet(0.3, 1);
        heard_pcm.insert(heard_pcm.end(), question.begin(), question.end());
        const auto after = Quiet(0.5, 2);
        heard_pcm.insert(heard_pcm.end(), after.begin(), after.end());
        media::SpeechRecognizer recognizer(std::make_shared<media::SpeechModel>());
        const std::string heard = recognizer.Transcribe(heard_pcm);
        std::printf("the recogniser hears \"%s\" as \"%s\"\n", kQuestion, heard.c_str());
        ASSERT_TRUE(HasWords(heard, kQuestionWords))
            << "pick another question: the recogniser hears \"" << kQuestion << "\" as \"" << heard
            << "\"";
    }
    // 1 s of quiet, the question, 8 s of quiet: Chromium loops the file.
    std::vector<std::int16_t> mic = Quiet(1.0, 3);
    mic.insert(mic.end(), question.begin(), question.end());
    const auto tail = Quiet(8.0, 4);
    mic.insert(mic.end(), tail.begin(), tail.end());
    const fs::path wav = fs::path(server_->data_dir()) / "microphone.wav";
    std::ofstream(wav, std::ios::binary) << WavOf(mic);

    // The knowledge and the avatar that knows it.
    auto r = Send("POST", "/v1/documents",
                  {{"name", "Blue Heron"},
                   {"content", std::string("# Opening hours\n") + kPageFact +
                                   "\n\n# Menu\nThe chef cooks fresh fish every day.\n"}});
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string document = r.Json()["id"];
    const auto indexed = Poll(
        "/_genhost/documents/search?q=restaurant+opens&documentId=" + document,
        [](const nlohmann::json& j) { return !j["indexing"].get<bool>() && !j["data"].empty(); },
        std::chrono::seconds(20));
    ASSERT_FALSE(indexed.value("data", nlohmann::json::array()).empty()) << indexed.dump();

    r = Send("POST", "/v1/avatars",
             {{"name", "Heron Host"},
              {"referenceImage", "data:image/png;base64," + Base64Encode(MakePng(480, 640))},
              {"personality", "The friendly host of the Blue Heron restaurant."},
              {"voice", {{"type", "service-live-preset"}, {"presetId", "clara"}}},
              {"documentIds", {document}}});
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string avatar = r.Json()["id"];
    const auto ready_avatar = Poll(
        "/v1/avatars/" + avatar,
        [](const nlohmann::json& j) { return j.value("status", "") != "PROCESSING"; },
        std::chrono::seconds(30));
    ASSERT_EQ(ready_avatar.value("status", ""), "READY") << ready_avatar.dump();

    // The session, with a client_event tool the typed text names (and the question does not).
    const nlohmann::json tool = {{"type", "client_event"},
                                 {"name", "show_hours"},
                                 {"description", "Shows the opening hours on the page"},
                                 {"parameters",
                                  {{{"type", "string"},
                                    {"name", "day"},
                                    {"description", "Which day"},
                                    {"enum", {"today", "tomorrow"}}}}}};
    r = Send("POST", "/v1/realtime_sessions",
             {{"model", "gwm1_avatars"},
              {"avatar", {{"type", "custom"}, {"avatarId", avatar}}},
              {"maxDuration", 60},
              {"tools", {tool}}});
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string id = r.Json()["id"];
    const auto ready = Poll(
        "/v1/realtime_sessions/" + id,
        [](const nlohmann::json& j) { return j.value("status", "") != "NOT_READY"; },
        std::chrono::seconds(20));
    ASSERT_EQ(ready.value("status", ""), "READY") << ready.dump();
    const std::string key = ready["sessionKey"];

    // The page, in the browser.
    const std::string url = "http://127.0.0.1:" + std::to_string(server_->port()) +
                            "/_genhost/realtime/page?session=" + id + "&key=" + key;
    std::string output;
    const auto began = std::chrono::steady_clock::now();
    const auto seen = RunPage(url, wav.string(), output);
    const double browser_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    std::printf("the browser ran %.1f s and printed:\n%s\n", browser_seconds, output.c_str());
    ASSERT_TRUE(seen.is_object()) << "realtime_page.mjs printed no JSON:\n"
                                  << output << "\nserver log:\n"
                                  << server_->Log();
    ASSERT_FALSE(seen.contains("error")) << seen.dump(2) << "\nserver log:\n" << server_->Log();

    EXPECT_EQ(seen["page"]["status"], 200);
    EXPECT_THAT(seen["page"]["contentType"].get<std::string>(), HasSubstr("text/html"));
    const auto& state = seen["final"];
    EXPECT_EQ(state["status"], "ended") << state.dump(2);
    // The transcript: the question as the user's turn, the answer with the fact.
    std::string user_text;
    std::string answer_text;
    for (const auto& e : state["transcript"]) {
        const std::string text = e["text"];
        if (e["role"] == "user" && user_text.empty() && HasWords(text, kQuestionWords)) {
            user_text = text;
        }
        if (e["role"] == "assistant" && answer_text.empty() && HasWords(text, {kAnswerWord})) {
            answer_text = text;
        }
    }
    EXPECT_FALSE(user_text.empty()) << state["transcript"].dump(2);
    EXPECT_THAT(answer_text, HasSubstr("opening hours are from nine in the morning"))
        << state["transcript"].dump(2);
    // The avatar's audio and video: more than a second of speech, frames that change.
    EXPECT_GT(state["audioSeconds"].get<double>(), 1.0) << state.dump(2);
    EXPECT_GT(state["audioChunks"].get<int>(), 10) << state.dump(2);
    EXPECT_GT(state["videoFrames"].get<int>(), 20) << state.dump(2);
    EXPECT_GT(state["framesDrawn"].get<int>(), 0) << state.dump(2);
    const auto& hashes = seen["beforeTool"]["lastFrameHashes"];
    std::set<std::string> distinct;
    for (const auto& h : hashes) distinct.insert(h.get<std::string>());
    EXPECT_GE(distinct.size(), 3u) << hashes.dump();
    // The microphone was heard: the page sent audio.
    EXPECT_EQ(seen["beforeTool"]["micState"], "on") << seen["beforeTool"].dump(2);
    EXPECT_GT(state["micSecondsSent"].get<double>(), 2.0) << state.dump(2);
    // The typed request called the tool: one event with the enum value named.
    ASSERT_GE(state["clientEvents"].size(), 1u) << state.dump(2);
    EXPECT_EQ(state["clientEvents"][0]["tool"], "show_hours");
    EXPECT_EQ(state["clientEvents"][0]["args"], (nlohmann::json{{"day", "today"}}));
    // The camera preview ran (and was stopped by hanging up); nothing errored.
    EXPECT_EQ(state["cameraState"], "off") << state.dump(2);
    EXPECT_EQ(seen["beforeTool"]["cameraState"], "on") << seen["beforeTool"].dump(2);
    EXPECT_EQ(state["errors"], nlohmann::json::array()) << state.dump(2);

    // The session ended COMPLETED; the conversation holds the question and the answer.
    const auto session = Poll(
        "/v1/realtime_sessions/" + id,
        [](const nlohmann::json& j) { return j.value("status", "") == "COMPLETED"; },
        std::chrono::seconds(15));
    EXPECT_EQ(session.value("status", ""), "COMPLETED") << session.dump();
    // The recording is written when the session ends: wait for its URL.
    const auto conversation = Poll(
        "/v1/avatar_conversations/" + id,
        [](const nlohmann::json& j) {
            return j.value("status", "") != "in_progress" && j.contains("recordingUrl") &&
                   !j["recordingUrl"].is_null();
        },
        std::chrono::seconds(30));
    EXPECT_EQ(conversation.value("status", ""), "ended") << conversation.dump(2);
    bool asked = false;
    bool answered = false;
    bool tool_called = false;
    for (const auto& e : conversation.value("transcript", nlohmann::json::array())) {
        const std::string content = e["content"].is_string() ? e["content"].get<std::string>() : "";
        if (e["role"] == "user" && HasWords(content, kQuestionWords)) asked = true;
        if (e["role"] == "assistant" && content.find(kPageFact) != std::string::npos)
            answered = true;
        if (e["role"] == "assistant") {
            for (const auto& call : e.value("toolCalls", nlohmann::json::array())) {
                if (call["name"] == "show_hours") tool_called = true;
            }
        }
    }
    EXPECT_TRUE(asked) << conversation.dump(2);
    EXPECT_TRUE(answered) << conversation.dump(2);
    EXPECT_TRUE(tool_called) << conversation.dump(2);

    ASSERT_TRUE(conversation["duration"].is_number()) << conversation.dump(2);
    const double duration = conversation["duration"].get<double>();
    EXPECT_GT(duration, 3.0);
    ASSERT_TRUE(conversation.contains("recordingUrl") && conversation["recordingUrl"].is_string())
        << "no recording 30 s after the session ended: " << conversation.dump(2)
        << "\nserver log:\n"
        << server_->Log();
    const auto file = client_->Send("GET", PathOf(conversation["recordingUrl"].get<std::string>()));
    ASSERT_EQ(file.status, 200) << file.body.substr(0, 500);
    const fs::path mp4 = fs::path(server_->data_dir()) / "recording.mp4";
    std::ofstream(mp4, std::ios::binary) << file.body;
    const auto info = media::ProbeMediaFile(mp4.string());
    std::printf("recording: %zu bytes, %s %dx%d + %s, %.2f s; the conversation: %.0f s\n",
                file.body.size(), info.video_codec.c_str(), info.width, info.height,
                info.audio_codec.c_str(), info.duration_seconds, duration);
    EXPECT_THAT(info.container, HasSubstr("mp4"));
    EXPECT_FALSE(info.video_codec.empty());
    EXPECT_FALSE(info.audio_codec.empty());
    EXPECT_NEAR(info.duration_seconds, duration, 1.5);
}

}  // namespace
}  // namespace genhost::testing
