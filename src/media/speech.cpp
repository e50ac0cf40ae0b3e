// SynthesizeSpeech: espeak-ng speech, each utterance in a forked child of a pristine engine.
//
// espeak-ng keeps state between utterances in static variables no API resets (the pitch flutter
// index, automatic gain control, settings a previous language left behind), and re-initialising
// it after espeak_ng_Terminate deadlocks in 1.51. Forking gives every utterance the same start:
// the parent initialises the engine once and never speaks; the child speaks, writes s16 samples
// to a pipe and leaves with _exit (no atexit handlers, no flushing of the parent's buffers). The
// child only runs espeak-ng code and write(2); glibc keeps malloc and stdio usable after fork.

#include <espeak-ng/speak_lib.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "genhost/media/audio.hpp"

namespace genhost::media {
namespace {

// The longest utterance accepted (5000 characters at the slowest rate take about 12 minutes).
constexpr double kMaxSpeechSeconds = 1800;
// A child that sends nothing for this long is taken for stuck and killed.
constexpr auto kStallTimeout = std::chrono::seconds(30);

// Exit codes of the child.
constexpr int kChildOk = 0;
constexpr int kChildNoVoice = 3;
constexpr int kChildSynthFailed = 4;
constexpr int kChildWriteFailed = 5;

// Written only in a child, before it speaks.
int g_child_fd = -1;
bool g_child_write_failed = false;

int SynthCallback(short* wav, int count, espeak_EVENT* /*events*/) {
    if (wav == nullptr || count <= 0) return 0;
    const char* data = reinterpret_cast<const char*>(wav);
    std::size_t left = static_cast<std::size_t>(count) * sizeof(short);
    while (left > 0) {
        const ssize_t n = ::write(g_child_fd, data, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            g_child_write_failed = true;
            return 1;  // abort synthesis
        }
        data += n;
        left -= static_cast<std::size_t>(n);
    }
    return 0;
}

struct Engine {
    std::string data_path;
};

// ListMutex is held while espeak_ListVoices rebuilds the engine's voice list, and while a
// speaking child is forked: a child forked in the middle of a listing would inherit a half-made
// list and fail to find its voice ("no voice en-us+f4", now and then, with two jobs at once).
std::mutex& ListMutex() {
    static std::mutex mu;
    return mu;
}

// TheEngine initialises espeak-ng once per process (under a mutex) and returns its facts.
const Engine& TheEngine() {
    static std::mutex mu;
    static Engine* engine = nullptr;
    std::lock_guard lock(mu);
    if (engine == nullptr) {
        const int rate =
            espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nullptr, espeakINITIALIZE_DONT_EXIT);
        if (rate != kSpeechSampleRate) {
            throw MediaError("espeak-ng could not be initialised (is espeak-ng-data installed?)");
        }
        espeak_SetSynthCallback(&SynthCallback);
        const char* path = nullptr;
        espeak_Info(&path);
        auto* made = new Engine();  // lives as long as the process, like the engine itself
        made->data_path = path == nullptr ? std::string() : std::string(path);
        engine = made;
    }
    return *engine;
}

class Fd {
  public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    ~Fd() { Reset(); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    void Reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

  private:
    int fd_;
};

// Child owns a forked process: killed and reaped unless Wait() reaped it.
class Child {
  public:
    explicit Child(pid_t pid) : pid_(pid) {}
    ~Child() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            Reap();
        }
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    // Wait reaps the child and returns its exit code (-1 if killed by a signal).
    int Wait() {
        const int status = Reap();
        pid_ = -1;
        if (status == -2) return kChildOk;  // reaped elsewhere (SIGCHLD ignored): judge by data
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

  private:
    int Reap() {
        int status = 0;
        for (;;) {
            const pid_t r = ::waitpid(pid_, &status, 0);
            if (r == pid_) return status;
            if (r < 0 && errno == EINTR) continue;
            return -2;
        }
    }
    pid_t pid_;
};

[[noreturn]] void RunChild(int fd, const SpeechParams& params, const char* text,
                           std::size_t text_size) {
    g_child_fd = fd;
    std::srand(1);  // espeak-ng draws breath noise from rand()
    if (espeak_SetVoiceByName(params.voice.c_str()) != EE_OK) ::_exit(kChildNoVoice);
    espeak_SetParameter(espeakRATE, std::clamp(params.rate_wpm, 80, 450), 0);
    espeak_SetParameter(espeakPITCH, std::clamp(params.pitch, 0, 100), 0);
    espeak_SetParameter(espeakRANGE, std::clamp(params.range, 0, 100), 0);
    espeak_SetParameter(espeakVOLUME, std::clamp(params.volume, 0, 200), 0);
    espeak_SetParameter(espeakWORDGAP, std::clamp(params.word_gap, 0, 100), 0);
    const espeak_ERROR rc = espeak_Synth(text, text_size, 0, POS_CHARACTER, 0,
                                         espeakCHARS_UTF8 | espeakENDPAUSE, nullptr, nullptr);
    if (g_child_write_failed) ::_exit(kChildWriteFailed);
    ::_exit(rc == EE_OK ? kChildOk : kChildSynthFailed);
}

enum class Outcome { kDone, kStopped, kStalled };

AudioBuffer SpeakOnce(const SpeechParams& params, const std::function<bool()>& keep_going,
                      Outcome& outcome) {
    TheEngine();
    AudioBuffer audio;
    audio.sample_rate = kSpeechSampleRate;
    audio.channels = 1;
    if (params.text.empty()) {
        outcome = Outcome::kDone;
        return audio;
    }
    const std::string text = params.text;  // stable storage for the child

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw MediaError("pipe2 failed");
    Fd read_end(fds[0]);
    Fd write_end(fds[1]);
    pid_t pid = 0;
    {
        std::lock_guard lock(ListMutex());
        pid = ::fork();
    }
    if (pid < 0) throw MediaError("fork failed");
    if (pid == 0) {
        ::close(fds[0]);
        RunChild(fds[1], params, text.c_str(), text.size() + 1);
    }
    Child child(pid);
    write_end.Reset();

    const auto max_bytes = static_cast<std::size_t>(kMaxSpeechSeconds * kSpeechSampleRate) * 2;
    std::string bytes;
    char buffer[65536];
    auto last_data = std::chrono::steady_clock::now();
    for (;;) {
        pollfd p{read_end.get(), POLLIN, 0};
        const int ready = ::poll(&p, 1, 50);
        if (ready < 0 && errno != EINTR) throw MediaError("poll failed");
        if (keep_going && !keep_going()) {
            outcome = Outcome::kStopped;
            return AudioBuffer{kSpeechSampleRate, 1, {}};
        }
        if (ready <= 0) {
            if (std::chrono::steady_clock::now() - last_data > kStallTimeout) {
                outcome = Outcome::kStalled;
                return AudioBuffer{kSpeechSampleRate, 1, {}};
            }
            continue;
        }
        const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw MediaError("reading speech samples failed");
        if (n == 0) break;
        bytes.append(buffer, static_cast<std::size_t>(n));
        last_data = std::chrono::steady_clock::now();
        if (bytes.size() > max_bytes) throw MediaError("the speech is longer than allowed");
    }
    const int code = child.Wait();
    if (code == kChildNoVoice) throw MediaError("espeak-ng has no voice " + params.voice);
    if (code != kChildOk) throw MediaError("espeak-ng failed (" + std::to_string(code) + ")");

    const std::size_t count = bytes.size() / 2;
    audio.samples.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        std::int16_t v;
        std::memcpy(&v, bytes.data() + i * 2, 2);
        audio.samples[i] = static_cast<float>(v) / 32768.0f;
    }
    outcome = Outcome::kDone;
    return audio;
}

}  // namespace

AudioBuffer SynthesizeSpeech(const SpeechParams& params, const std::function<bool()>& keep_going) {
    // One retry: a child stuck at birth (a lock another thread held at fork time) is rare.
    for (int attempt = 0;; ++attempt) {
        Outcome outcome = Outcome::kDone;
        AudioBuffer audio = SpeakOnce(params, keep_going, outcome);
        if (outcome != Outcome::kStalled) return audio;
        if (attempt >= 1) throw MediaError("espeak-ng stalled");
    }
}

bool SpeechVoiceExists(const std::string& name) {
    const Engine& engine = TheEngine();
    const auto plus = name.find('+');
    const std::string language = name.substr(0, plus);
    if (language.empty()) return false;
    if (plus != std::string::npos) {
        const std::string variant = name.substr(plus + 1);
        if (variant.empty() || variant.find('/') != std::string::npos ||
            variant.find("..") != std::string::npos) {
            return false;
        }
        struct stat st {};
        if (::stat((engine.data_path + "/voices/!v/" + variant).c_str(), &st) != 0) return false;
    }
    // espeak_ListVoices reads the voice files and rebuilds the engine's list of them, which a
    // speaking child forked meanwhile would inherit half made (ListMutex). The files do not
    // change while the process runs, so each language is looked up once.
    static std::map<std::string, bool> known;
    std::lock_guard lock(ListMutex());
    if (const auto it = known.find(language); it != known.end()) return it->second;
    bool found = false;
    for (const espeak_VOICE* const* v = espeak_ListVoices(nullptr);
         !found && v != nullptr && *v != nullptr; ++v) {
        if ((*v)->identifier != nullptr) {
            const std::string id = (*v)->identifier;
            const auto slash = id.rfind('/');
            if (id.substr(slash == std::string::npos ? 0 : slash + 1) == language) found = true;
        }
        // languages: a list of (priority byte, NUL-terminated name), ended by a 0 priority.
        for (const char* l = (*v)->languages; !found && l != nullptr && *l != 0;
             l += std::strlen(l + 1) + 2) {
            if (language == l + 1) found = true;
        }
    }
    known.emplace(language, found);
    return found;
}

}  // namespace genhost::media
