// genhost_realtime_drive: drives N realtime sessions at once against a running genhost, as users
// would (bench/realtime/run.sh; docs/performance.md, "Realtime sessions").
//
// Each session (a thread): POST /v1/realtime_sessions (a preset avatar, a one-word startScript),
// poll to READY, consume, join the media plane, wait until the greeting was spoken, then TURNS
// turns: a question, spoken (16 kHz PCM of espeak-ng's en-us+klatt voice, streamed in 20 ms
// messages at real-time pace; "end of speech" = when its last sample was sent) or typed
// (`user_text`; "end" = when it was sent); the reply latency is the time from that end to the
// first audio message of the avatar's reply. The reply is played out before the next turn. Also
// counted: audio gaps (two audio messages of one reply more than 250 ms apart: the avatar's
// speech stalled), video frames per second received, and the speech received against the wall
// time joined.
//
// Usage: genhost_realtime_drive --port P --key KEY [--sessions N] [--turns T]
//          [--mode spoken|typed] [--question TEXT] [--jitter SECONDS]
// Prints one JSON object.
#include "client.hpp"
#include "genhost/media/audio.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using Clock = std::chrono::steady_clock;
using genhost::bench::ReadySession;
using genhost::bench::Request;
using nlohmann::json;

namespace {

struct Options {
    unsigned short port = 0;
    std::string key;
    int sessions = 1;
    int turns = 5;
    std::string mode = "spoken";
    std::string question = "when does the restaurant open";
    double jitter = 0;  // seconds: each turn waits a random 0..jitter first (users out of step)
};

std::vector<std::int16_t> Spoken(const std::string& text) {
    genhost::media::SpeechParams params;
    params.text = text;
    params.voice = "en-us+klatt";
    const auto audio = genhost::media::Resample(genhost::media::SynthesizeSpeech(params), 16000, 1);
    std::vector<std::int16_t> out(audio.samples.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = static_cast<std::int16_t>(std::clamp(audio.samples[i], -1.0f, 1.0f) * 32767);
    }
    // The speech ends at its last audible sample: espeak-ng's trailing silence is cut, so the
    // latency counts from the real end of the words.
    while (!out.empty() && std::abs(out.back()) < 300) out.pop_back();
    return out;
}

struct Result {
    std::vector<double> latencies_ms;
    int gaps = 0;
    double audio_seconds = 0;  // speech received
    long frames = 0;
    double seconds = 0;  // joined time
    std::string error;
};

class Session {
  public:
    Session(const Options& o, const std::vector<std::int16_t>& question)
        : o_(o), question_(question), ws_(io_) {}

    Result Run() {
        Result r;
        try {
            Drive(r);
        } catch (const std::exception& e) {
            r.error = e.what();
        }
        return r;
    }

  private:
    void Drive(Result& r) {
        const json session =
            ReadySession(o_.port, o_.key,
                         {{"model", "gwm1_avatars"},
                          {"avatar", {{"type", "service-preset"}, {"presetId", "human-resource"}}},
                          {"startScript", "Hello."},
                          {"personality", "A helpful host."},
                          {"maxDuration", 1800}});
        const std::string id = session["id"];
        const json credentials =
            Request(o_.port, session["sessionKey"].get<std::string>(), http::verb::post,
                    "/v1/realtime_sessions/" + id + "/consume");
        const std::string url = credentials.value("url", "");
        const std::string path = url.substr(url.find('/', url.find("//") + 2));
        ws_.next_layer().connect({asio::ip::make_address("127.0.0.1"), o_.port});
        ws_.handshake("127.0.0.1",
                      path + "?access_token=" + credentials["token"].get<std::string>());
        const auto joined = Clock::now();
        // The reader runs on its own thread; the turns wait on what it saw.
        std::thread reader([this, &r] { Read(r); });
        WaitQuiet(Clock::now(), 20.0);  // the greeting
        std::mt19937 random(static_cast<unsigned>(std::hash<std::string>()(id)));
        for (int turn = 0; turn < o_.turns; ++turn) {
            if (o_.jitter > 0) {
                std::uniform_real_distribution<double> pause(0, o_.jitter);
                std::this_thread::sleep_for(std::chrono::milliseconds(int(pause(random) * 1000)));
            }
            Clock::time_point end;
            if (o_.mode == "typed") {
                end = Clock::now();
                Write(json{{"type", "user_text"}, {"text", o_.question}}.dump(), false);
            } else {
                std::vector<std::int16_t> audio(4800, 0);  // 300 ms of room first
                audio.insert(audio.end(), question_.begin(), question_.end());
                const auto start = Clock::now();
                for (std::size_t at = 0, k = 0; at < audio.size(); at += 320, ++k) {
                    const std::size_t n = std::min<std::size_t>(320, audio.size() - at);
                    std::string m(5 + n * 2, '\0');
                    m[0] = 0x01;
                    std::memcpy(m.data() + 5, audio.data() + at, n * 2);
                    Write(m, true);
                    std::this_thread::sleep_until(start + std::chrono::milliseconds(20 * (k + 1)));
                }
                end = Clock::now();
                // Silence after it, as a microphone keeps sending, until the reply starts.
                std::thread room([this, end] {
                    const std::vector<std::int16_t> quiet(320, 0);
                    std::string m(5 + 640, '\0');
                    m[0] = 0x01;
                    for (int k = 0; k < 150; ++k) {
                        {
                            std::lock_guard lock(mu_);
                            if (last_audio_ > end) return;
                        }
                        Write(m, true);
                        std::this_thread::sleep_until(end +
                                                      std::chrono::milliseconds(20 * (k + 1)));
                    }
                });
                room.join();
            }
            const auto first = WaitAudioAfter(end, 15.0);
            if (!first) throw std::runtime_error("no reply to turn " + std::to_string(turn));
            r.latencies_ms.push_back(
                std::chrono::duration<double, std::milli>(*first - end).count());
            WaitQuiet(*first, 30.0);
        }
        Write(R"({"type": "END_CALL"})", false);
        r.seconds = std::chrono::duration<double>(Clock::now() - joined).count();
        reader.join();
        std::lock_guard lock(mu_);
        r.frames = frames_;
        r.audio_seconds = static_cast<double>(samples_) / 16000.0;
    }

    void Write(const std::string& data, bool binary) {
        std::lock_guard lock(write_mu_);
        ws_.binary(binary);
        beast::error_code ec;
        ws_.write(asio::buffer(data), ec);
    }

    void Read(Result& r) {
        for (;;) {
            beast::flat_buffer buffer;
            beast::error_code ec;
            ws_.read(buffer, ec);
            if (ec) return;
            if (!ws_.got_binary() || buffer.size() < 5) continue;
            const auto* bytes = static_cast<const std::uint8_t*>(buffer.data().data());
            std::lock_guard lock(mu_);
            if (bytes[0] == 0x02) {
                ++frames_;
                continue;
            }
            const auto now = Clock::now();
            if (last_audio_ != Clock::time_point{} &&
                now - last_audio_ > std::chrono::milliseconds(250) &&
                now - last_audio_ < std::chrono::milliseconds(600)) {
                ++r.gaps;  // a stall inside a reply (a longer silence is between replies)
            }
            last_audio_ = now;
            samples_ += (buffer.size() - 5) / 2;
            cv_.notify_all();
        }
    }

    // WaitAudioAfter returns the arrival time of the first audio message after `t`.
    std::optional<Clock::time_point> WaitAudioAfter(Clock::time_point t, double seconds) {
        std::unique_lock lock(mu_);
        const bool got = cv_.wait_for(lock, std::chrono::milliseconds(int(seconds * 1000)),
                                      [&] { return last_audio_ > t; });
        if (!got) return std::nullopt;
        return first_after(t);
    }
    Clock::time_point first_after(Clock::time_point) const { return last_audio_; }

    // WaitQuiet waits until no audio came for 600 ms (after `from`).
    void WaitQuiet(Clock::time_point from, double seconds) {
        const auto deadline = Clock::now() + std::chrono::milliseconds(int(seconds * 1000));
        while (Clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            std::lock_guard lock(mu_);
            const auto last = std::max(last_audio_, from);
            if (Clock::now() - last > std::chrono::milliseconds(600)) return;
        }
    }

    const Options& o_;
    const std::vector<std::int16_t>& question_;
    asio::io_context io_;
    websocket::stream<asio::ip::tcp::socket> ws_;
    std::mutex write_mu_;
    std::mutex mu_;
    std::condition_variable cv_;
    Clock::time_point last_audio_{};
    std::size_t samples_ = 0;
    long frames_ = 0;
};

double Percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t i =
        std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5));
    return v[i];
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const std::string v = argv[i + 1];
        if (a == "--port") o.port = static_cast<unsigned short>(std::stoi(v));
        if (a == "--key") o.key = v;
        if (a == "--sessions") o.sessions = std::stoi(v);
        if (a == "--turns") o.turns = std::stoi(v);
        if (a == "--mode") o.mode = v;
        if (a == "--question") o.question = v;
        if (a == "--jitter") o.jitter = std::stod(v);
    }
    if (o.port == 0 || o.key.empty()) {
        std::cerr << "usage: genhost_realtime_drive --port P --key KEY [--sessions N] [--turns T]"
                     " [--mode spoken|typed] [--question TEXT]\n";
        return 2;
    }
    const auto question = Spoken(o.question);
    std::vector<Result> results(o.sessions);
    std::vector<std::thread> threads;
    const auto start = Clock::now();
    for (int s = 0; s < o.sessions; ++s) {
        threads.emplace_back([&, s] {
            std::this_thread::sleep_for(std::chrono::milliseconds(150 * s));  // staggered joins
            Session session(o, question);
            results[s] = session.Run();
        });
    }
    for (auto& t : threads) t.join();
    std::vector<double> latencies;
    int gaps = 0, failed = 0;
    double audio = 0, frames = 0, joined = 0;
    json errors = json::array();
    for (const auto& r : results) {
        latencies.insert(latencies.end(), r.latencies_ms.begin(), r.latencies_ms.end());
        gaps += r.gaps;
        audio += r.audio_seconds;
        frames += static_cast<double>(r.frames);
        joined += r.seconds;
        if (!r.error.empty()) {
            ++failed;
            errors.push_back(r.error);
        }
    }
    const json out = {
        {"sessions", o.sessions},
        {"mode", o.mode},
        {"jitter_seconds", o.jitter},
        {"turns", latencies.size()},
        {"failed", failed},
        {"errors", errors},
        {"reply_ms_p50", std::round(Percentile(latencies, 0.5))},
        {"reply_ms_p95", std::round(Percentile(latencies, 0.95))},
        {"reply_ms_max", std::round(Percentile(latencies, 1.0))},
        {"audio_gaps", gaps},
        {"video_fps_per_session", joined > 0 ? std::round(frames / joined * 10) / 10 : 0},
        {"avatar_audio_seconds", std::round(audio)},
        {"wall_seconds", std::round(std::chrono::duration<double>(Clock::now() - start).count())}};
    std::cout << out.dump() << std::endl;
    return failed == 0 ? 0 : 1;
}
