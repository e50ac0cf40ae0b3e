// CheckJobKinds (tasks/job_kinds.hpp): every declared job kind must have exactly one engine of
// the node, with a handler, and only declared kinds may be served; kinds the database holds that
// this version does not declare are reported with their counts.
#include "genhost/tasks/job_kinds.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace genhost::tasks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Declared: the engines as kJobKinds declares them, every kind with a handler.
std::vector<EngineKinds> Declared() {
    std::map<std::string, EngineKinds> by_engine;
    for (const auto& spec : kJobKinds) {
        by_engine[spec.engine].engine = spec.engine;
        by_engine[spec.engine].kinds[spec.kind] = true;
    }
    std::vector<EngineKinds> out;
    for (auto& [name, e] : by_engine) out.push_back(e);
    return out;
}

TEST(JobKinds, TheDeclaredEnginesPass) {
    const auto r = CheckJobKinds(Declared(), {{kAvatarJobKind, 3}, {kWorkflowJobKind, 1}});
    EXPECT_THAT(r.errors, IsEmpty());
    EXPECT_THAT(r.warnings, IsEmpty());
}

TEST(JobKinds, AKindWithoutItsEngineOrHandlerStopsTheStart) {
    auto engines = Declared();
    for (auto& e : engines) {
        if (e.engine == "realtime") e.kinds.clear();
        if (e.engine == "jobs") e.kinds[kVoiceJobKind] = false;
    }
    const auto r = CheckJobKinds(engines, {});
    EXPECT_THAT(r.errors,
                ElementsAre(HasSubstr("engine jobs serves job kind 'voice' without a handler"),
                            HasSubstr("no engine serves job kind 'realtime_session'")));
}

TEST(JobKinds, AnUndeclaredOrTwiceServedKindStopsTheStart) {
    auto engines = Declared();
    engines.push_back({"extra", {{"thumbnail", true}, {kDocumentJobKind, true}}});
    const auto r = CheckJobKinds(engines, {});
    EXPECT_THAT(r.errors, ElementsAre(HasSubstr("declared for engine jobs but engine extra"),
                                      HasSubstr("'thumbnail', which tasks/job_kinds.hpp does not"),
                                      HasSubstr("'document' is served by 2 engines")));
}

TEST(JobKinds, UnknownKindsInTheDatabaseAreReportedWithTheirCounts) {
    const auto r = CheckJobKinds(Declared(), {{"thumbnail", 4}, {kVoiceJobKind, 2}});
    EXPECT_THAT(r.errors, IsEmpty());
    EXPECT_THAT(r.warnings, ElementsAre(HasSubstr("4 job(s) of kind 'thumbnail'")));
}

// The triggers of migrations/ queue only declared kinds: a kind is named once, in C++.
TEST(JobKinds, EveryKindTheMigrationsQueueIsDeclared) {
    std::set<std::string> declared;
    for (const auto& spec : kJobKinds) declared.insert(spec.kind);
    const std::regex enqueue(R"(genhost_enqueue_job\('([a-z_]+)')");
    std::set<std::string> queued;
    for (const auto& f :
         std::filesystem::directory_iterator(std::string(GENHOST_SOURCE_DIR) + "/migrations")) {
        std::ifstream in(f.path());
        std::stringstream text;
        text << in.rdbuf();
        const std::string sql = text.str();
        for (std::sregex_iterator m(sql.begin(), sql.end(), enqueue), end; m != end; ++m) {
            queued.insert((*m)[1]);
        }
    }
    EXPECT_GE(queued.size(), 5u);
    for (const auto& kind : queued) EXPECT_EQ(declared.count(kind), 1u) << kind;
}

}  // namespace
}  // namespace genhost::tasks
