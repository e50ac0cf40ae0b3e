// VoiceRepo and VoiceProcessor against a real PostgreSQL: voices are scoped to their
// organization and listed newest first; creating one queues its job in the same transaction;
// the processor, run by the job engine, clones a speech sample (READY with a profile whose pitch
// follows the sample's, and a preview MP3), fails a sample without speech or too short with the
// analysis's reason, designs the same voice from the same description, and leaves a voice
// deleted meanwhile alone; the output_expiry kind deletes a folder once it is due.
#include "support/org_database.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/media/audio.hpp"
#include "genhost/media/voice_profile.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/providers/inputs.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/jobs_repo.hpp"
#include "genhost/store/migrations.hpp"
#include "genhost/store/orgs.hpp"
#include "genhost/store/voices_repo.hpp"
#include "genhost/tasks/job_engine.hpp"
#include "genhost/tasks/voice_processor.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <stdlib.h>

namespace genhost::testing {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

class Voices : public OrgDatabaseTest {
  protected:
    void SetUp() override {
        OrgDatabaseTest::SetUp();
        if (IsSkipped()) return;
        repo_ = std::make_unique<store::VoiceRepo>(*pool_);
        jobs_ = std::make_unique<store::JobRepo>(*pool_);
        char tmpl[] = "/tmp/genhost-voices-pg.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        outputs_ = std::make_unique<outputs::LocalOutputStore>(fs::path(dir_) / "outputs");
        tasks::VoiceProcessorOptions o;
        o.scratch_root = (fs::path(dir_) / "scratch").string();
        processor_ = std::make_unique<tasks::VoiceProcessor>(o, *repo_, *outputs_, fetch_);
    }

    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    int RunJobs() {
        tasks::JobEngineOptions o;
        o.owner = "test";
        tasks::JobEngine engine(o, *jobs_,
                                {{tasks::kVoiceJobKind, processor_->Kind()},
                                 {tasks::kOutputExpiryJobKind, processor_->ExpiryKind()}});
        return engine.RunAvailable();
    }

    // Cloned stores `wav` as the sample of a new voice of `org`.
    store::VoiceRecord Cloned(const std::string& wav, const std::string& org = "") {
        store::NewVoice v;
        v.id = NewUuid();
        v.org_id = org.empty() ? org_ : org;
        v.name = "Clone";
        v.source = "audio";
        v.sample_name = "sample-1";
        outputs_->Put(tasks::VoiceFolder(v.id), v.sample_name, wav);
        return Await(repo_->Create(v));
    }

    store::VoiceRecord Designed(const std::string& prompt) {
        store::NewVoice v;
        v.id = NewUuid();
        v.org_id = org_;
        v.name = "Designed";
        v.description = "for tests";
        v.source = "text";
        v.model = "voice_ttv_v3";
        v.prompt = prompt;
        return Await(repo_->Create(v));
    }

    static std::string Wav(const media::AudioBuffer& audio) {
        media::AudioEncoding e;
        e.format = media::AudioFormat::kWav;
        e.sample_rate = audio.sample_rate;
        e.channels = audio.channels;
        return media::WriteAudio(audio, e);
    }

    static std::string Speech(int pitch, int rate) {
        media::SpeechParams p;
        p.text =
            "The quick brown fox jumps over the lazy dog. She sells sea shells by the sea shore, "
            "and then she goes home to rest for a while.";
        p.voice = "en-us";
        p.pitch = pitch;
        p.rate_wpm = rate;
        return Wav(media::SynthesizeSpeech(p));
    }

    store::VoiceRecord Get(const std::string& id) { return *Await(repo_->Get(org_, id)); }

    std::unique_ptr<store::VoiceRepo> repo_;
    std::unique_ptr<store::JobRepo> jobs_;
    std::string dir_;
    std::unique_ptr<outputs::LocalOutputStore> outputs_;
    providers::DataUriResolver fetch_;
    std::unique_ptr<tasks::VoiceProcessor> processor_;
};

TEST_F(Voices, ScopedListedNewestFirstRenamedAndDeleted) {
    const auto a = Designed("A calm low voice of a middle-aged man");
    const auto b = Designed("A bright high voice of a young woman");
    EXPECT_EQ(a.status, store::ProcessingStatus::kProcessing);
    EXPECT_TRUE(jobs_->GetSync(tasks::kVoiceJobKind, a.id).has_value());
    EXPECT_FALSE(Await(repo_->Get(other_org_, a.id)).has_value());
    const auto page = Await(repo_->List(org_, 1, std::nullopt));
    ASSERT_EQ(page.voices.size(), 1u);
    EXPECT_EQ(page.voices[0].id, b.id);
    EXPECT_TRUE(page.more);

    store::VoiceChange change;
    change.name = "Renamed";
    change.set_description = true;  // to null
    const auto renamed = Await(repo_->Update(org_, a.id, change));
    ASSERT_TRUE(renamed.has_value());
    EXPECT_EQ(renamed->name, "Renamed");
    EXPECT_FALSE(renamed->description.has_value());
    EXPECT_EQ(renamed->revision, 1);  // not processed again
    const auto same = Await(repo_->Update(org_, a.id, store::VoiceChange{}));
    EXPECT_EQ(same->updated_at, renamed->updated_at);
    EXPECT_FALSE(Await(repo_->Update(other_org_, a.id, change)).has_value());

    EXPECT_FALSE(Await(repo_->Delete(other_org_, a.id)));
    EXPECT_TRUE(Await(repo_->Delete(org_, a.id)));
    EXPECT_FALSE(jobs_->GetSync(tasks::kVoiceJobKind, a.id).has_value());
}

TEST_F(Voices, ACloneFollowsItsSamplesPitchAndHasAPreview) {
    const auto low = Cloned(Speech(20, 150));
    const auto high = Cloned(Speech(85, 220));
    EXPECT_EQ(RunJobs(), 2);
    const auto l = Get(low.id);
    const auto h = Get(high.id);
    ASSERT_EQ(l.status, store::ProcessingStatus::kReady) << l.failure_reason;
    ASSERT_EQ(h.status, store::ProcessingStatus::kReady) << h.failure_reason;
    const auto lp = media::ProfileFromJson(nlohmann::json::parse(l.profile_json));
    const auto hp = media::ProfileFromJson(nlohmann::json::parse(h.profile_json));
    EXPECT_LT(media::ProfileTargetF0(lp) * 1.2, media::ProfileTargetF0(hp));
    EXPECT_LT(lp.rate_wpm, hp.rate_wpm);
    // The preview is an MP3 whose pitch is the profile's.
    const auto info = outputs_->Stat(tasks::VoiceFolder(high.id), "preview.mp3");
    ASSERT_TRUE(info.has_value());
    const fs::path mp3 = fs::path(dir_) / "preview.mp3";
    std::ofstream(mp3, std::ios::binary)
        << outputs_->Read(tasks::VoiceFolder(high.id), "preview.mp3", 0, info->size);
    media::AudioReadOptions read;
    read.sample_rate = 16000;
    const auto preview = media::ReadAudio(mp3.string(), read);
    EXPECT_GT(preview.seconds(), 3);
    EXPECT_LT(std::abs(12 * std::log2(media::EstimatePitch(preview) / media::ProfileTargetF0(hp))),
              2.5);
    EXPECT_FALSE(jobs_->GetSync(tasks::kVoiceJobKind, high.id).has_value());  // done
}

TEST_F(Voices, SamplesWithoutSpeechOrTooShortFailWithTheReason) {
    media::AudioBuffer silence;
    silence.sample_rate = 16000;
    silence.channels = 1;
    silence.samples.assign(16000 * 5, 0.0f);
    media::AudioBuffer blip = silence;
    blip.samples.resize(16000);
    const auto quiet = Cloned(Wav(silence));
    const auto short_one = Cloned(Wav(blip));
    const auto garbage = Cloned("this is not audio at all");
    RunJobs();
    EXPECT_EQ(Get(quiet.id).status, store::ProcessingStatus::kFailed);
    EXPECT_EQ(Get(quiet.id).failure_reason, "The sample holds no speech");
    EXPECT_NE(Get(short_one.id).failure_reason.find("too short"), std::string::npos)
        << Get(short_one.id).failure_reason;
    EXPECT_NE(Get(garbage.id).failure_reason.find("could not"), std::string::npos)
        << Get(garbage.id).failure_reason;
    EXPECT_FALSE(outputs_->Stat(tasks::VoiceFolder(quiet.id), "preview.mp3").has_value());
}

TEST_F(Voices, TheSameDescriptionDesignsTheSameVoice) {
    const auto a = Designed("A deep, slow voice of an elderly Scottish man, warm");
    const auto b = Designed("A deep, slow voice of an elderly Scottish man, warm");
    const auto c = Designed("A squeaky, fast voice of a cheerful young girl");
    RunJobs();
    EXPECT_EQ(Get(a.id).profile_json, Get(b.id).profile_json);
    EXPECT_NE(Get(a.id).profile_json, Get(c.id).profile_json);
    EXPECT_EQ(Get(c.id).status, store::ProcessingStatus::kReady);
}

TEST_F(Voices, AVoiceDeletedWhileItIsProcessedIsLeftAlone) {
    const auto v = Designed("A calm low voice of a middle-aged man");
    const auto work = repo_->LoadWorkSync(v.id, 1);
    ASSERT_TRUE(work.has_value());
    ASSERT_TRUE(Await(repo_->Delete(org_, v.id)));
    EXPECT_FALSE(processor_->ProcessSync(*work));
    EXPECT_FALSE(repo_->LoadWorkSync(v.id, 1).has_value());
}

TEST_F(Voices, ExpiredOutputFoldersAreDeletedWhenDue) {
    outputs_->Put("voice-preview-soon", "preview.mp3", "mp3");
    outputs_->Put("voice-preview-later", "preview.mp3", "mp3");
    Await(repo_->ExpireOutput("voice-preview-soon", 0));
    Await(repo_->ExpireOutput("voice-preview-later", 3600));
    EXPECT_EQ(RunJobs(), 1);
    EXPECT_FALSE(outputs_->Stat("voice-preview-soon", "preview.mp3").has_value());
    EXPECT_TRUE(outputs_->Stat("voice-preview-later", "preview.mp3").has_value());
}

}  // namespace
}  // namespace genhost::testing
