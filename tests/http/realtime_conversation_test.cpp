// Inside a joined realtime session, against a real server (docs/realtime.md, "Inside a
// session"): the startScript spoken at the join; a typed question answered from the avatar's
// knowledge document, streamed as transcription deltas, with the avatar's voice at real-time pace
// and video frames whose mouth moves; a spoken question recognised from the user's audio; a
// client_event tool; backend_rpc tools answered, failing, and timing out; barge-in; the
// transcript with tool calls and results; and the recording (an MP4 with video and audio of the
// session's length).
#include "helpers.hpp"

#include "support/ws_client.hpp"

#include "genhost/core/crypto.hpp"
#include "genhost/core/ids.hpp"
#include "genhost/media/audio.hpp"
#include "genhost/media/image.hpp"
#include "genhost/media/video.hpp"

#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace genhost::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr const char* kFact =
    "The Blue Heron restaurant opens at nine in the morning and closes at eleven at night.";

std::string DataUriPng() {
    media::RgbImage img(600, 800);
    for (std::size_t i = 0; i < img.pixels.size(); i += 3) {
        img.pixels[i] = 200;
        img.pixels[i + 1] = 150;
        img.pixels[i + 2] = 120;
    }
    return "data:image/png;base64," +
           Base64Encode(media::EncodePicture(img, media::ImageFormat::kPng));
}

// Spoken is `text` said by espeak-ng's en-us+klatt voice as 16 kHz PCM16 (the recognizer
// understands this voice well).
std::vector<std::int16_t> Spoken(const std::string& text) {
    media::SpeechParams params;
    params.text = text;
    params.voice = "en-us+klatt";
    const auto audio = media::Resample(media::SynthesizeSpeech(params), 16000, 1);
    std::vector<std::int16_t> out(audio.samples.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = static_cast<std::int16_t>(std::clamp(audio.samples[i], -1.0f, 1.0f) * 32767);
    }
    return out;
}

std::string AudioMessage(const std::int16_t* pcm, std::size_t count) {
    std::string m(5 + count * 2, '\0');
    m[0] = 0x01;
    std::memcpy(m.data() + 5, pcm, count * 2);
    return m;
}

// Stream sends `audio` as a microphone would: 20 ms messages at real-time pace.
bool Stream(WsClient& ws, const std::vector<std::int16_t>& audio) {
    for (std::size_t at = 0; at < audio.size(); at += 320) {
        const std::size_t n = std::min<std::size_t>(320, audio.size() - at);
        if (!ws.Write(AudioMessage(audio.data() + at, n), true)) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

// What a user's socket received.
struct Received {
    std::vector<nlohmann::json> texts;
    int audio_messages = 0;
    std::size_t audio_samples = 0;
    std::set<std::string> frames;  // distinct JPEGs
    int frame_messages = 0;
    Clock::time_point first_audio{};
    Clock::time_point last_audio{};
};

class RealtimeConversation : public ServerSuite<RealtimeConversation> {
  protected:
    static void SetUpTestSuite() { StartServer({{"GENHOST_LATENCY_SCALE", "0"}}); }

    HttpResponse Send(const std::string& method, const std::string& path,
                      const nlohmann::json& body = nullptr) {
        return client_.Send(method, path, AuthHeaders(), body.is_null() ? "" : body.dump());
    }

    // KnowledgeAvatar makes a document holding kFact and a READY custom avatar that uses it.
    std::string KnowledgeAvatar() {
        const auto doc = Send("POST", "/v1/documents",
                              {{"name", "Blue Heron facts"},
                               {"content", std::string("# Opening hours\n\n") + kFact +
                                               " Reservations are welcome.\n\n# Menu\n\nWe "
                                               "serve fresh fish and custard tarts every day.\n"}});
        EXPECT_EQ(doc.status, 200) << doc.body;
        const auto avatar =
            Send("POST", "/v1/avatars",
                 {{"name", "Heron Host"},
                  {"referenceImage", DataUriPng()},
                  {"personality", "A warm host of the Blue Heron restaurant."},
                  {"startScript", "Welcome to the Blue Heron!"},
                  {"voice", {{"type", "service-live-preset"}, {"presetId", "clara"}}},
                  {"documentIds", {doc.Json()["id"]}}});
        EXPECT_EQ(avatar.status, 200) << avatar.body;
        const std::string id = avatar.Json()["id"];
        for (int i = 0; i < 600; ++i) {
            if (Send("GET", "/v1/avatars/" + id).Json()["status"] == "READY") break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        // The document is indexed by a job too: wait until the search finds the fact.
        for (int i = 0; i < 600; ++i) {
            const auto hits =
                Send("GET", "/_genhost/documents/search?q=opens+nine&avatarId=" + id).Json();
            if (hits.contains("data") && !hits["data"].empty()) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return id;
    }

    nlohmann::json Until(const std::string& id, const std::set<std::string>& want) {
        nlohmann::json last;
        for (int i = 0; i < 600; ++i) {
            last = Send("GET", "/v1/realtime_sessions/" + id).Json();
            if (want.count(last.value("status", ""))) return last;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ADD_FAILURE() << "session " << id << " stayed " << last.dump();
        return last;
    }

    // Join creates and joins a session of `body` as the user.
    std::string Join(const nlohmann::json& body, std::unique_ptr<WsClient>& user) {
        const auto created = Send("POST", "/v1/realtime_sessions", body);
        EXPECT_EQ(created.status, 200) << created.body;
        const std::string id = created.Json()["id"];
        const auto ready = Until(id, {"READY"});
        const auto credentials =
            client_
                .Send("POST", "/v1/realtime_sessions/" + id + "/consume",
                      {{"Authorization", "Bearer " + ready["sessionKey"].get<std::string>()}}, "")
                .Json();
        user = std::make_unique<WsClient>(server_->port());
        EXPECT_EQ(user->Handshake(PathOf(credentials["url"].get<std::string>()) +
                                  "?access_token=" + credentials["token"].get<std::string>()),
                  101);
        return id;
    }

    // ReadUntil reads the user's socket until `done` says so or `seconds` pass.
    static void ReadUntil(WsClient& ws, Received& got,
                          const std::function<bool(const Received&)>& done, double seconds) {
        const auto deadline = Clock::now() + std::chrono::milliseconds(int(seconds * 1000));
        while (Clock::now() < deadline && !done(got)) {
            const auto m = ws.Read();
            if (!m) break;
            if (!m->binary) {
                got.texts.push_back(nlohmann::json::parse(m->data));
                continue;
            }
            const auto kind = static_cast<std::uint8_t>(m->data[0]);
            if (kind == 0x01) {
                if (got.audio_messages == 0) got.first_audio = Clock::now();
                got.last_audio = Clock::now();
                ++got.audio_messages;
                got.audio_samples += (m->data.size() - 5) / 2;
            } else if (kind == 0x02) {
                ++got.frame_messages;
                got.frames.insert(m->data.substr(5));
            }
        }
    }

    // Said joins the transcription deltas of (role, turn).
    static std::string Said(const Received& got, const std::string& role, int turn) {
        std::string out;
        for (const auto& t : got.texts) {
            if (t.value("type", "") == "transcription" && t["role"] == role && t["turn"] == turn) {
                out += t["text"].get<std::string>();
            }
        }
        return out;
    }

    static int Turns(const Received& got, const std::string& role) {
        int most = 0;
        for (const auto& t : got.texts) {
            if (t.value("type", "") == "transcription" && t["role"] == role) {
                most = std::max(most, t["turn"].get<int>());
            }
        }
        return most;
    }

    // BookTable is a backend_rpc tool that books a table for a number of guests.
    static nlohmann::json BookTable(int timeout_seconds) {
        return {{"type", "backend_rpc"},
                {"name", "book_table"},
                {"description", "Books a table"},
                {"timeoutSeconds", timeout_seconds},
                {"parameters",
                 {{{"type", "integer"}, {"name", "guests"}, {"description", "How many"}}}}};
    }

    // ConnectBackend joins session `id` as its backend (connect_backend, then the media plane)
    // and reads its `joined` message.
    std::unique_ptr<WsClient> ConnectBackend(const std::string& id) {
        const auto credentials =
            Send("POST", "/v1/realtime_sessions/" + id + "/connect_backend").Json();
        auto backend = std::make_unique<WsClient>(server_->port());
        EXPECT_EQ(backend->Handshake(PathOf(credentials["url"].get<std::string>()) +
                                     "?access_token=" + credentials["token"].get<std::string>()),
                  101);
        EXPECT_TRUE(backend->ReadText());  // joined
        return backend;
    }

    // AnswerBooking answers the backend_rpc call `id` as a booking system would, and waits
    // until the avatar said so.
    static void AnswerBooking(WsClient& backend, WsClient& user, Received& got,
                              const nlohmann::json& id) {
        ASSERT_TRUE(backend.Write(nlohmann::json{
            {"type", "rpc_response"}, {"id", id}, {"payload", R"({"message": "Booked for 8 pm."})"}}
                                      .dump()));
        ReadUntil(
            user, got,
            [](const Received& g) {
                for (int turn = 1; turn <= Turns(g, "assistant"); ++turn) {
                    if (Said(g, "assistant", turn) == "Booked for 8 pm.") return true;
                }
                return false;
            },
            10);
    }

    nlohmann::json Conversation(const std::string& id) {
        return Send("GET", "/v1/avatar_conversations/" + id).Json();
    }

    HttpClient client_ = Client();
};

TEST_F(RealtimeConversation, ATypedQuestionIsAnsweredFromTheKnowledgeWithVoiceAndMovingVideo) {
    const std::string avatar = KnowledgeAvatar();
    std::unique_ptr<WsClient> user;
    const std::string id = Join({{"model", "gwm1_avatars"},
                                 {"avatar", {{"type", "custom"}, {"avatarId", avatar}}},
                                 {"maxDuration", 60}},
                                user);
    Received got;
    // The startScript first: turn 1 of the assistant, spoken.
    ReadUntil(
        *user, got, [](const Received& g) { return g.audio_samples > 16000; }, 10);
    EXPECT_EQ(Said(got, "assistant", 1), "Welcome to the Blue Heron!");
    ASSERT_GT(got.audio_samples, 16000u);

    // Never faster than real time: audio arrives no faster than it plays.
    const std::size_t before = got.audio_samples;
    const auto t0 = Clock::now();
    ReadUntil(
        *user, got, [](const Received&) { return false; }, 1.0);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_LE(static_cast<double>(got.audio_samples - before) / 16000.0, seconds + 0.25);

    ASSERT_TRUE(user->Write(R"({"type": "user_text", "text": "When does the restaurant open?"})"));
    ReadUntil(
        *user, got,
        [](const Received& g) {
            return Said(g, "assistant", 2).find("night.") != std::string::npos;
        },
        10);
    EXPECT_EQ(Said(got, "user", 1), "When does the restaurant open?");
    EXPECT_EQ(Said(got, "assistant", 2), kFact);
    // Streamed: the answer came in several deltas.
    int deltas = 0;
    for (const auto& t : got.texts)
        deltas += t.value("type", "") == "transcription" && t["turn"] == 2;
    EXPECT_GT(deltas, 3);
    // Its speech and frames whose mouth moves (more than a closed and a blinking face).
    const std::size_t answer_start = got.audio_samples;
    ReadUntil(
        *user, got, [&](const Received& g) { return g.audio_samples > answer_start + 48000; }, 10);
    EXPECT_GT(got.audio_samples, answer_start + 48000);
    EXPECT_GT(got.frames.size(), 5u);
    EXPECT_GE(got.frame_messages, 20);

    ASSERT_TRUE(user->Write(R"({"type": "END_CALL"})"));
    const auto completed = Until(id, {"COMPLETED"});
    // The transcript: the greeting, the question, the answer.
    nlohmann::json conversation;
    for (int i = 0; i < 600; ++i) {
        conversation = Conversation(id);
        if (!conversation["recordingUrl"].is_null()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const auto& transcript = conversation["transcript"];
    ASSERT_GE(transcript.size(), 3u) << conversation.dump(2);
    EXPECT_EQ(transcript[0]["role"], "assistant");
    EXPECT_EQ(transcript[0]["content"], "Welcome to the Blue Heron!");
    EXPECT_EQ(transcript[1]["role"], "user");
    EXPECT_EQ(transcript[1]["content"], "When does the restaurant open?");
    EXPECT_FALSE(transcript[1].contains("toolCalls"));
    EXPECT_EQ(transcript[2]["role"], "assistant");
    EXPECT_THAT(transcript[2]["content"].get<std::string>(), HasSubstr("nine in the morning"));
    EXPECT_EQ(transcript[2]["toolCalls"], nlohmann::json::array());
    EXPECT_FALSE(transcript[2]["timestamp"].is_null());

    // The recording: an MP4 with video and audio as long as the session.
    ASSERT_FALSE(conversation["recordingUrl"].is_null()) << conversation.dump(2);
    const auto mp4 = client_.Send("GET", PathOf(conversation["recordingUrl"]));
    ASSERT_EQ(mp4.status, 200);
    const auto info = media::ProbeMedia(mp4.body);
    EXPECT_EQ(info.video_codec, "h264");
    EXPECT_EQ(info.width, 256);
    EXPECT_EQ(info.audio_codec, "aac");
    EXPECT_NEAR(info.duration_seconds, completed["duration"].get<double>(), 1.5);
}

TEST_F(RealtimeConversation, ASpokenQuestionIsRecognisedAndAnswered) {
    const std::string avatar = KnowledgeAvatar();
    std::unique_ptr<WsClient> user;
    const std::string id = Join({{"model", "gwm1_avatars"},
                                 {"avatar", {{"type", "custom"}, {"avatarId", avatar}}},
                                 {"startScript", "Hi."},
                                 {"maxDuration", 60}},
                                user);
    Received got;
    ReadUntil(
        *user, got, [](const Received& g) { return g.audio_samples > 4000; }, 10);
    // Half a second of quiet room, the question, then silence, in 20 ms messages at real pace.
    std::vector<std::int16_t> audio(8000, 0);
    const auto question = Spoken("when does the restaurant open");
    audio.insert(audio.end(), question.begin(), question.end());
    audio.insert(audio.end(), 16000, 0);
    ASSERT_TRUE(Stream(*user, audio));
    ReadUntil(
        *user, got,
        [](const Received& g) {
            return Said(g, "assistant", 2).find("night.") != std::string::npos;
        },
        15);
    const std::string heard = Said(got, "user", 1);
    EXPECT_THAT(heard, HasSubstr("restaurant")) << heard;
    EXPECT_THAT(heard, HasSubstr("open")) << heard;
    EXPECT_EQ(Said(got, "assistant", 2), kFact);
    ASSERT_TRUE(user->Write(R"({"type": "END_CALL"})"));
    Until(id, {"COMPLETED"});
    const auto transcript = Conversation(id)["transcript"];
    ASSERT_GE(transcript.size(), 3u);
    EXPECT_EQ(transcript[1]["content"], heard);
}

TEST_F(RealtimeConversation, ToolsFireAndTheirResultsAreInTheTranscript) {
    const nlohmann::json body = {
        {"model", "gwm1_avatars"},
        {"avatar", {{"type", "service-preset"}, {"presetId", "cooking-teacher"}}},
        {"startScript", "Hello."},
        {"maxDuration", 60},
        {"tools",
         {{{"type", "client_event"},
           {"name", "show_recipe"},
           {"description", "Shows a recipe"},
           {"parameters",
            {{{"type", "string"},
              {"name", "dish"},
              {"description", "Which dish"},
              {"enum", {"soup", "cake"}}}}}},
          BookTable(1),
          {{"type", "backend_rpc"},
           {"name", "check_stock"},
           {"description", "Checks the stock"},
           {"timeoutSeconds", 1}}}}};
    std::unique_ptr<WsClient> user;
    const std::string id = Join(body, user);
    Received got;
    ReadUntil(
        *user, got, [](const Received& g) { return Turns(g, "assistant") >= 1; }, 10);

    // client_event: the page gets it, the avatar says so.
    ASSERT_TRUE(user->Write(R"({"type": "user_text", "text": "How do I bake a cake?"})"));
    ReadUntil(
        *user, got,
        [](const Received& g) {
            for (const auto& t : g.texts) {
                if (t.value("type", "") == "client_event") return true;
            }
            return false;
        },
        10);
    nlohmann::json event;
    for (const auto& t : got.texts) {
        if (t.value("type", "") == "client_event") event = t;
    }
    EXPECT_EQ(event, nlohmann::json({{"type", "client_event"},
                                     {"tool", "show_recipe"},
                                     {"args", {{"dish", "cake"}}}}));

    // backend_rpc without a backend: the result's error.
    ASSERT_TRUE(user->Write(R"({"type": "user_text", "text": "check the stock please"})"));
    ReadUntil(
        *user, got,
        [](const Received& g) { return Turns(g, "user") >= 2 && Turns(g, "assistant") >= 5; }, 10);

    // With a backend: answered, then one that never answers (timeout 1 s).
    const auto backend_socket = ConnectBackend(id);
    WsClient& backend = *backend_socket;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_TRUE(user->Write(R"({"type": "user_text", "text": "Book a table for 4"})"));
    const auto request = backend.ReadText();
    ASSERT_TRUE(request);
    const auto rpc = nlohmann::json::parse(*request);
    EXPECT_EQ(rpc["type"], "rpc_request");
    EXPECT_EQ(rpc["method"], "book_table");
    EXPECT_EQ(nlohmann::json::parse(rpc["payload"].get<std::string>()),
              nlohmann::json({{"args", {{"guests", 4}}}}));
    AnswerBooking(backend, *user, got, rpc["id"]);
    ASSERT_TRUE(user->Write(R"({"type": "user_text", "text": "check the stock now"})"));
    const auto ignored = backend.ReadText();
    ASSERT_TRUE(ignored);
    EXPECT_EQ(nlohmann::json::parse(*ignored)["method"], "check_stock");
    ReadUntil(
        *user, got,
        [](const Received& g) {
            for (int turn = 1; turn <= Turns(g, "assistant"); ++turn) {
                if (Said(g, "assistant", turn).find("within 1 s") != std::string::npos) {
                    return true;
                }
            }
            return false;
        },
        10);
    ASSERT_TRUE(user->Write(R"({"type": "END_CALL"})"));
    Until(id, {"COMPLETED"});

    // The transcript: each call and result on its assistant entry, with durations.
    const auto transcript = Conversation(id)["transcript"];
    std::map<std::string, nlohmann::json> results;
    std::map<std::string, nlohmann::json> calls;
    for (const auto& e : transcript) {
        if (e["role"] != "assistant") continue;
        for (const auto& c : e["toolCalls"]) calls[c["name"]] = c;
        for (const auto& r : e["toolResults"]) results[r["name"]] = r;
    }
    EXPECT_EQ(calls["show_recipe"]["arguments"], nlohmann::json({{"dish", "cake"}}));
    EXPECT_EQ(results["show_recipe"]["result"], nlohmann::json({{"status", "event_sent"}}));
    EXPECT_EQ(results["book_table"]["result"], nlohmann::json({{"message", "Booked for 8 pm."}}));
    EXPECT_TRUE(results["book_table"]["error"].is_null());
    EXPECT_GE(results["book_table"]["durationMs"].get<double>(), 0);
    EXPECT_THAT(results["check_stock"]["error"].get<std::string>(), HasSubstr("within 1 s"));
    EXPECT_GE(results["check_stock"]["durationMs"].get<double>(), 950);
    EXPECT_LE(results["check_stock"]["durationMs"].get<double>(), 2500);
    // The first check_stock, before the backend joined, failed at once (its result was
    // replaced in the map by the timed-out one: look for it in order).
    bool no_backend = false;
    for (const auto& e : transcript) {
        if (e["role"] != "assistant") continue;
        for (const auto& r : e["toolResults"]) {
            no_backend = no_backend ||
                         (r["name"] == "check_stock" && r["error"].is_string() &&
                          r["error"].get<std::string>().find("no backend") != std::string::npos);
        }
    }
    EXPECT_TRUE(no_backend) << transcript.dump(2);
}

TEST_F(RealtimeConversation, SpeakingOverTheAvatarStopsIt) {
    std::unique_ptr<WsClient> user;
    const std::string long_script =
        "Welcome! Today I will tell you everything about our kitchen, from the market in the "
        "early morning to the last dessert at night, and about every cook who works here, one "
        "by one, with their favourite recipes and the stories behind them.";
    const std::string id =
        Join({{"model", "gwm1_avatars"},
              {"avatar", {{"type", "service-preset"}, {"presetId", "influencer"}}},
              {"startScript", long_script},
              {"maxDuration", 60}},
             user);
    Received got;
    ReadUntil(
        *user, got, [](const Received& g) { return g.audio_samples > 16000; }, 10);
    // The user talks over it.
    const auto words = Spoken("wait a moment please");
    std::vector<std::int16_t> audio(words);
    audio.insert(audio.end(), 12000, 0);
    ASSERT_TRUE(Stream(*user, audio));
    ReadUntil(
        *user, got,
        [](const Received& g) {
            return Said(g, "assistant", 1).find("[interrupted]") != std::string::npos;
        },
        5);
    EXPECT_THAT(Said(got, "assistant", 1), HasSubstr(" [interrupted]"));
    // The avatar stopped: far less than the whole script was played.
    const auto whole = std::chrono::seconds(12);
    EXPECT_LT(got.audio_samples, static_cast<std::size_t>(16000 * whole.count()));
    ASSERT_TRUE(user->Write(R"({"type": "END_CALL"})"));
    Until(id, {"COMPLETED"});
    const auto transcript = Conversation(id)["transcript"];
    ASSERT_GE(transcript.size(), 1u);
    EXPECT_EQ(transcript[0]["content"], long_script + " [interrupted]");
}

// DropLine returns the server's log line that reports what session `id` dropped ("" if none).
std::string DropLine(const std::string& log, const std::string& id) {
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);) {
        if (line.find(id) != std::string::npos &&
            line.find("unmatched rpc answers") != std::string::npos) {
            return line;
        }
    }
    return "";
}

// Issue 31, 4, 5 and 9, and the unbounded RPC answers of 1: malformed data messages are dropped
// and answered with an error message while the session goes on; a typed turn is cut between two
// characters; U+0000 is refused as REST bodies refuse it; unsolicited RPC answers are dropped.
TEST_F(RealtimeConversation, MalformedMessagesAreAnsweredAndTheSessionGoesOn) {
    const nlohmann::json body = {
        {"model", "gwm1_avatars"},
        {"avatar", {{"type", "service-preset"}, {"presetId", "cooking-teacher"}}},
        {"startScript", "Hi."},
        {"maxDuration", 120},
        {"tools", {BookTable(5)}}};
    std::unique_ptr<WsClient> user;
    const std::string id = Join(body, user);
    HealthWatch health(server_->port());
    Received got;
    ReadUntil(
        *user, got, [](const Received& g) { return Turns(g, "assistant") >= 1; }, 10);
    const auto backend_socket = ConnectBackend(id);
    WsClient& backend = *backend_socket;

    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    const std::vector<std::string> malformed = {
        R"({"type": 1})",
        R"([1, 2, 3])",
        "not json",
        deep,
        R"({"type": "user_text", "text": 5})",
        R"({"type": "user_text", "text": "hello\u0000world"})",
    };
    for (const auto& m : malformed) ASSERT_TRUE(user->Write(m));
    const auto errors = [](const Received& g) {
        std::vector<std::string> out;
        for (const auto& t : g.texts) {
            if (t.value("type", "") == "error") out.push_back(t.value("message", ""));
        }
        return out;
    };
    ReadUntil(
        *user, got, [&](const Received& g) { return errors(g).size() >= malformed.size(); }, 10);
    const auto said = errors(got);
    ASSERT_EQ(said.size(), malformed.size());
    EXPECT_THAT(said[0], HasSubstr("string \"type\""));
    EXPECT_THAT(said[1], HasSubstr("JSON object"));
    EXPECT_THAT(said[2], HasSubstr("JSON object"));
    EXPECT_THAT(said[3], HasSubstr("deeper than"));
    EXPECT_THAT(said[4], HasSubstr("string \"text\""));
    EXPECT_THAT(said[5], HasSubstr("U+0000"));

    // The backend's malformed answer is refused too; 50 answers nobody asked for, 100 KB each,
    // are dropped (paced, so that even a sanitizer build takes them as they come: this is not
    // the flood test).
    ASSERT_TRUE(backend.Write(R"({"type": "rpc_response", "id": 5})"));
    const auto refused = backend.ReadText();
    ASSERT_TRUE(refused);
    EXPECT_EQ(nlohmann::json::parse(*refused)["type"], "error") << *refused;
    const std::string filler(100 * 1024, 'x');
    for (int i = 0; i < 50; ++i) {
        ASSERT_TRUE(backend.Write(nlohmann::json{
            {"type", "rpc_response"},
            {"id", "unasked-" + std::to_string(i)},
            {"payload", filler}}.dump()));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }

    // A typed turn over 2,000 bytes whose byte 2,000 falls inside a character: cut before it.
    std::string long_text = "a";
    for (int i = 0; i < 1000; ++i) long_text += "\xc3\xa9";  // é
    ASSERT_TRUE(user->Write(nlohmann::json{{"type", "user_text"}, {"text", long_text}}.dump()));
    ReadUntil(
        *user, got, [](const Received& g) { return Turns(g, "user") >= 1; }, 10);
    const std::string cut = long_text.substr(0, 1999);
    EXPECT_EQ(Said(got, "user", 1), cut);

    // The session goes on: a tool call is answered as ever.
    ASSERT_TRUE(user->Write(R"({"type": "user_text", "text": "Book a table for 4"})"));
    std::optional<nlohmann::json> rpc;
    for (int i = 0; i < 10 && !rpc; ++i) {
        const auto text = backend.ReadText();
        ASSERT_TRUE(text) << backend.close_code() << "\n" << server_->Log();
        const auto m = nlohmann::json::parse(*text);
        if (m["type"] == "rpc_request") rpc = m;
    }
    ASSERT_TRUE(rpc);
    AnswerBooking(backend, *user, got, (*rpc)["id"]);
    EXPECT_EQ(Send("GET", "/v1/realtime_sessions/" + id).Json()["status"], "RUNNING");
    ASSERT_TRUE(user->Write(R"({"type": "END_CALL"})"));
    const auto ended = Until(id, {"COMPLETED", "FAILED"});
    EXPECT_EQ(ended["status"], "COMPLETED") << ended.dump();
    health.Stop();
    EXPECT_LT(health.SlowestMs(), kResponsiveMs);
    EXPECT_EQ(health.Failures(), 0);

    const auto transcript = Conversation(id)["transcript"];
    std::vector<std::string> users;
    for (const auto& e : transcript) {
        if (e["role"] == "user") users.push_back(e["content"]);
    }
    EXPECT_THAT(users, ::testing::ElementsAre(cut, "Book a table for 4")) << transcript.dump(2);
    // What was dropped is counted in the log.
    std::string line;
    for (int i = 0; i < 50 && (line = DropLine(server_->Log(), id)).empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_THAT(line, HasSubstr("7 malformed or refused messages"));
    EXPECT_THAT(line, HasSubstr("50 unmatched rpc answers"));
}

// Issue 31, 1: the user's audio is kept at real time (with a second's tolerance); a flood of
// audio (1,200 messages of 256 KiB in a fraction of a second took the server from 518 to 905 MB)
// is dropped, and its socket closed with 1008, while the session keeps what it said.
TEST_F(RealtimeConversation, AudioPastRealTimeIsDroppedAndAFloodClosed) {
    std::unique_ptr<WsClient> user;
    const std::string id =
        Join({{"model", "gwm1_avatars"},
              {"avatar", {{"type", "service-preset"}, {"presetId", "cooking-teacher"}}},
              {"startScript", "Hi."},
              {"maxDuration", 60}},
             user);
    HealthWatch health(server_->port());
    Received got;
    ReadUntil(
        *user, got, [](const Received& g) { return Turns(g, "assistant") >= 1; }, 10);
    // Five seconds of (quiet) audio in one go: about four of them are dropped.
    std::vector<std::int16_t> quiet(320, 0);
    for (int i = 0; i < 250; ++i) ASSERT_TRUE(user->Write(AudioMessage(quiet.data(), 320), true));
    ASSERT_TRUE(user->Write(R"({"type": "user_text", "text": "hello"})"));
    ReadUntil(
        *user, got, [](const Received& g) { return Turns(g, "user") >= 1; }, 10);

    // The flood: messages of 262,143 bytes (8 s of audio each) as fast as the socket takes them;
    // three are past the ten seconds of audio the server drops before disconnecting the user.
    // (bench/realtime/flood.sh sends 1,200 of them, from ten sessions at once.)
    std::string frame(262143, '\0');
    frame[0] = 0x01;
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(user->Write(frame, true));
    // The server tells the user why, and closes its socket with 1008.
    ReadUntil(
        *user, got, [](const Received&) { return false; }, 10);
    std::string why;
    for (const auto& t : got.texts) {
        if (t.value("type", "") == "error") why = t.value("message", "");
    }
    EXPECT_THAT(why, HasSubstr("flooding"));
    EXPECT_EQ(user->close_code(), 1008);
    const auto ended = Until(id, {"COMPLETED", "FAILED"});
    EXPECT_EQ(ended["status"], "COMPLETED") << ended.dump();
    health.Stop();
    EXPECT_LT(health.SlowestMs(), kResponsiveMs);
    // What was said before is kept: the typed turn, and the greeting (cut short if the flood
    // came while it was spoken).
    const auto transcript = Conversation(id)["transcript"];
    ASSERT_GE(transcript.size(), 2u) << transcript.dump(2);
    std::set<std::string> said;
    for (const auto& e : transcript) {
        if (e["content"].is_string())
            said.insert(e["role"].get<std::string>() + ": " +
                        e["content"].get<std::string>().substr(0, 3));
    }
    EXPECT_TRUE(said.count("user: hel")) << transcript.dump(2);
    EXPECT_TRUE(said.count("assistant: Hi.")) << transcript.dump(2);
    std::string line;
    for (int i = 0; i < 50 && (line = DropLine(server_->Log(), id)).empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // Past real time: more than the ten seconds after which the socket was closed.
    ASSERT_FALSE(line.empty());
    const auto ms_at = line.find("dropped ");
    ASSERT_NE(ms_at, std::string::npos) << line;
    EXPECT_GT(std::stoll(line.substr(ms_at + 8)), 10000) << line;
}

}  // namespace
}  // namespace genhost::testing
