// SpeechModel and SpeechRecognizer: pocketsphinx 5prealpha decoders in a shared pool.
//
// A decoder's state between utterances is its noise estimate (reset by ps_start_stream) and its
// live cepstral mean (feat_t's cmn_t, which sphinxbase's headers expose): the recognizer keeps
// its own copy of the mean and puts it into whichever decoder it leases, so a pooled decoder
// gives the same text as a fresh one.

#include <pocketsphinx.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/err.h>
#include <sphinxbase/feat.h>
#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "genhost/media/image.hpp"
#include "genhost/media/speech_recognition.hpp"

namespace genhost::media {
namespace {

// Samples handed to ps_process_raw at a time (100 ms), whatever the callers' chunks are, so the
// live cepstral mean updates at the same frames and the text does not depend on chunking.
constexpr std::size_t kBlockSamples = kRecognitionSampleRate / 10;

constexpr const char* kModelPackage = "pocketsphinx-en-us";

// DecoderMutex serialises ps_init and ps_free: sphinxbase's front end sets process globals (the
// frequency warping parameters, the log destination) while a decoder is made.
std::mutex& DecoderMutex() {
    static std::mutex mu;
    return mu;
}

struct DecoderFree {
    void operator()(ps_decoder_t* ps) const {
        std::lock_guard lock(DecoderMutex());
        ps_free(ps);
    }
};
using Decoder = std::unique_ptr<ps_decoder_t, DecoderFree>;

bool Exists(const std::string& path, bool directory) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    return directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

void CheckFiles(const SpeechModelFiles& files) {
    const auto missing = [](const std::string& path) {
        throw MediaError("speech recognition model file missing: " + path +
                         " (the en-US model comes with the Debian package " + kModelPackage + ")");
    };
    if (!Exists(files.acoustic_model, true)) missing(files.acoustic_model);
    for (const char* name : {"mdef", "means", "variances", "transition_matrices", "noisedict"}) {
        const std::string path = files.acoustic_model + "/" + name;
        if (!Exists(path, false)) missing(path);
    }
    if (!Exists(files.dictionary, false)) missing(files.dictionary);
    if (!Exists(files.language_model, false)) missing(files.language_model);
}

Decoder MakeDecoder(const SpeechModelFiles& files) {
    static std::once_flag quiet;
    std::call_once(quiet, [] { err_set_logfp(nullptr); });
    std::lock_guard lock(DecoderMutex());
    cmd_ln_t* config = cmd_ln_init(nullptr, ps_args(), TRUE, "-hmm", files.acoustic_model.c_str(),
                                   "-dict", files.dictionary.c_str(), "-lm",
                                   files.language_model.c_str(), static_cast<const char*>(nullptr));
    if (config == nullptr) throw MediaError("pocketsphinx rejected its configuration");
    ps_decoder_t* ps = ps_init(config);
    cmd_ln_free_r(config);  // the decoder holds its own reference
    if (ps == nullptr) {
        throw MediaError("pocketsphinx could not load the speech model " + files.acoustic_model +
                         " (is the Debian package " + kModelPackage + " intact?)");
    }
    return Decoder(ps);
}

// CmnState is a decoder's live cepstral mean normalisation.
struct CmnState {
    std::vector<mfcc_t> mean;
    std::vector<mfcc_t> sum;
    int32 nframe = 0;
};

cmn_t* CmnOf(ps_decoder_t* ps) {
    feat_t* feat = ps_get_feat(ps);
    return feat == nullptr ? nullptr : feat->cmn_struct;
}

CmnState SaveCmn(ps_decoder_t* ps) {
    CmnState state;
    if (const cmn_t* cmn = CmnOf(ps); cmn != nullptr && cmn->veclen > 0) {
        state.mean.assign(cmn->cmn_mean, cmn->cmn_mean + cmn->veclen);
        state.sum.assign(cmn->sum, cmn->sum + cmn->veclen);
        state.nframe = cmn->nframe;
    }
    return state;
}

void RestoreCmn(ps_decoder_t* ps, const CmnState& state) {
    cmn_t* cmn = CmnOf(ps);
    if (cmn == nullptr || cmn->veclen <= 0 ||
        state.mean.size() != static_cast<std::size_t>(cmn->veclen)) {
        return;
    }
    std::copy(state.mean.begin(), state.mean.end(), cmn->cmn_mean);
    std::copy(state.sum.begin(), state.sum.end(), cmn->sum);
    cmn->nframe = state.nframe;
}

// CleanHypothesis drops fillers ("<sil>", "[NOISE]") and alternate-pronunciation marks
// ("read(2)") and joins the words with single spaces.
std::string CleanHypothesis(const char* hyp) {
    std::string out;
    if (hyp == nullptr) return out;
    const std::string text(hyp);
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ') ++i;
        std::size_t end = text.find(' ', i);
        if (end == std::string::npos) end = text.size();
        std::string word = text.substr(i, end - i);
        i = end;
        if (word.empty() || word[0] == '<' || word[0] == '[') continue;
        if (const auto paren = word.find('('); paren != std::string::npos && paren > 0) {
            word.resize(paren);
        }
        if (!out.empty()) out += ' ';
        out += word;
    }
    return out;
}

}  // namespace

struct SpeechModel::Pool {
    SpeechModelFiles files;
    std::size_t max_idle = 0;
    mutable std::mutex mu;
    std::vector<Decoder> idle;

    // Pristine answers what every new decoder starts with (the model's -cmninit), read from the
    // first decoder, which is made on first use: about 90 MB that a node which never recognises
    // speech does not hold.
    const CmnState& Pristine() {
        std::call_once(pristine_once, [this] {
            Decoder first = MakeDecoder(files);
            pristine_cmn = SaveCmn(first.get());
            Return(std::move(first));
        });
        return pristine_cmn;
    }

    Decoder Lease() {
        {
            std::lock_guard lock(mu);
            if (!idle.empty()) {
                Decoder d = std::move(idle.back());
                idle.pop_back();
                return d;
            }
        }
        return MakeDecoder(files);
    }

    void Return(Decoder d) {
        std::unique_lock lock(mu);
        if (idle.size() < max_idle) {
            idle.push_back(std::move(d));
            return;
        }
        lock.unlock();
        d.reset();
    }

  private:
    std::once_flag pristine_once;
    CmnState pristine_cmn;
};

SpeechModel::SpeechModel(SpeechModelFiles files, int max_idle_decoders)
    : pool_(std::make_shared<Pool>()) {
    if (max_idle_decoders < 0) throw std::invalid_argument("max_idle_decoders must be >= 0");
    CheckFiles(files);
    pool_->files = std::move(files);
    pool_->max_idle = static_cast<std::size_t>(max_idle_decoders);
    // No decoder yet: the first is made when a recognizer or Prewarm first needs one.
}

SpeechModel::~SpeechModel() = default;

void SpeechModel::Prewarm(int count) {
    const std::size_t want =
        std::min(static_cast<std::size_t>(std::max(count, 0)), pool_->max_idle);
    if (want > 0) pool_->Pristine();
    for (;;) {
        {
            std::lock_guard lock(pool_->mu);
            if (pool_->idle.size() >= want) return;
        }
        Decoder d = MakeDecoder(pool_->files);
        std::lock_guard lock(pool_->mu);
        if (pool_->idle.size() >= want) return;  // another thread filled it; `d` is freed
        pool_->idle.push_back(std::move(d));
    }
}

int SpeechModel::idle_decoders() const {
    std::lock_guard lock(pool_->mu);
    return static_cast<int>(pool_->idle.size());
}

const SpeechModelFiles& SpeechModel::files() const { return pool_->files; }

struct SpeechRecognizer::Impl {
    std::shared_ptr<SpeechModel::Pool> pool;
    std::optional<CmnState> cmn;  // from the model's first decoder at the first utterance
    Decoder decoder;              // leased for the open utterance
    bool open = false;
    std::vector<std::int16_t> pending;  // less than one block
    std::size_t samples = 0;            // decoded in this utterance

    // Fail drops the open utterance and its decoder (in an unknown state) and throws.
    [[noreturn]] void Fail(const std::string& what) {
        decoder.reset();
        open = false;
        pending.clear();
        throw MediaError(what);
    }

    void Process(const std::int16_t* data, std::size_t n) {
        if (ps_process_raw(decoder.get(), data, n, FALSE, FALSE) < 0) {
            Fail("pocketsphinx failed to decode audio");
        }
    }

    void Close() {
        ps_end_utt(decoder.get());
        open = false;
        pending.clear();
        pool->Return(std::move(decoder));
    }
};

SpeechRecognizer::SpeechRecognizer(std::shared_ptr<SpeechModel> model)
    : impl_(std::make_unique<Impl>()) {
    if (model == nullptr) throw std::invalid_argument("SpeechRecognizer needs a model");
    impl_->pool = model->pool_;
    // The cepstral mean starts as the model's at the first utterance: a session's set-up never
    // waits for the model's first decoder (made on first use).
    impl_->pending.reserve(kBlockSamples);
}

SpeechRecognizer::~SpeechRecognizer() {
    try {
        AbortUtterance();
    } catch (...) {
        // ps_end_utt does not throw; the pool's vector may (out of memory): the decoder is lost.
    }
}

bool SpeechRecognizer::in_utterance() const { return impl_->open; }

void SpeechRecognizer::StartUtterance() {
    Impl& m = *impl_;
    AbortUtterance();
    if (!m.cmn) m.cmn = m.pool->Pristine();
    m.decoder = m.pool->Lease();
    RestoreCmn(m.decoder.get(), *m.cmn);
    if (ps_start_stream(m.decoder.get()) < 0 || ps_start_utt(m.decoder.get()) < 0) {
        m.Fail("pocketsphinx could not start an utterance");
    }
    m.open = true;
    m.samples = 0;
    m.pending.clear();
}

void SpeechRecognizer::Feed(std::span<const std::int16_t> pcm16k) {
    Impl& m = *impl_;
    if (!m.open) throw std::logic_error("SpeechRecognizer::Feed without StartUtterance");
    constexpr std::size_t kMaxSamples =
        static_cast<std::size_t>(kMaxUtteranceSeconds) * kRecognitionSampleRate;
    pcm16k = pcm16k.first(std::min(pcm16k.size(), kMaxSamples - m.samples));
    m.samples += pcm16k.size();
    std::size_t i = 0;
    while (i < pcm16k.size()) {
        if (m.pending.empty() && pcm16k.size() - i >= kBlockSamples) {
            m.Process(pcm16k.data() + i, kBlockSamples);
            i += kBlockSamples;
            continue;
        }
        const std::size_t take = std::min(kBlockSamples - m.pending.size(), pcm16k.size() - i);
        m.pending.insert(m.pending.end(), pcm16k.begin() + static_cast<std::ptrdiff_t>(i),
                         pcm16k.begin() + static_cast<std::ptrdiff_t>(i + take));
        i += take;
        if (m.pending.size() == kBlockSamples) {
            m.Process(m.pending.data(), m.pending.size());
            m.pending.clear();
        }
    }
}

std::string SpeechRecognizer::EndUtterance() {
    Impl& m = *impl_;
    if (!m.open) throw std::logic_error("SpeechRecognizer::EndUtterance without StartUtterance");
    if (!m.pending.empty()) m.Process(m.pending.data(), m.pending.size());
    if (ps_end_utt(m.decoder.get()) < 0) m.Fail("pocketsphinx failed to finish an utterance");
    std::string text;
    if (m.samples > 0) {
        int32 score = 0;
        text = CleanHypothesis(ps_get_hyp(m.decoder.get(), &score));
        m.cmn = SaveCmn(m.decoder.get());
    }
    m.open = false;
    m.pending.clear();
    m.pool->Return(std::move(m.decoder));
    return text;
}

void SpeechRecognizer::AbortUtterance() {
    if (impl_->open) impl_->Close();
}

std::string SpeechRecognizer::Transcribe(std::span<const std::int16_t> pcm16k) {
    if (impl_->open) {
        throw std::logic_error("SpeechRecognizer::Transcribe inside a streamed utterance");
    }
    if (pcm16k.empty()) return {};
    StartUtterance();
    Feed(pcm16k);
    return EndUtterance();
}

}  // namespace genhost::media
