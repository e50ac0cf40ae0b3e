// The realtime feature (docs/realtime.md): realtime sessions, their conversations and the media
// plane. A session runs on the `realtime` lane for its whole life, so the lane's runners are this
// node's places for sessions; its lease is short (GENHOST_REALTIME_LEASE), and the sessions end
// when the node stops instead of holding up the drain.
#include "genhost/api/realtime_routes.hpp"
#include "genhost/features/node.hpp"
#include "genhost/media/speech_recognition.hpp"
#include "genhost/realtime/engine.hpp"
#include "genhost/store/realtime_repo.hpp"
#include "genhost/tasks/job_kinds.hpp"
#include "genhost/tasks/realtime_conversation.hpp"
#include "genhost/tasks/realtime_sessions.hpp"

namespace genhost::features {

void WireRealtime(Node& node) {
    const config::Settings& s = node.settings();
    auto& repo = node.Own<store::RealtimeRepo>(node.db());
    auto& live = node.Own<tasks::LiveSessions>();
    tasks::ConversationOptions conversation;
    conversation.scratch_root = node.scratch_root();
    tasks::ConversationDeps deps;
    deps.sessions = &repo;
    deps.documents = &node.Need(node.app().documents.repo, "the documents feature");
    deps.outputs = &node.outputs();
    // A decoder per utterance being recognised at once (about 91 MB each), kept for the next
    // one up to one per session place: creating one costs about 0.2 s of CPU.
    deps.speech = std::make_shared<media::SpeechModel>(media::SpeechModelFiles{},
                                                       std::max(2, s.realtime_sessions));
    if (!s.llm_url.empty()) {
        realtime::ChatCompletionsOptions llm;
        llm.base_url = s.llm_url;
        llm.model = s.llm_model;
        llm.api_key = s.llm_key;
        deps.make_engine = [llm] { return realtime::MakeChatCompletionsEngine(llm); };
    }
    tasks::RealtimeOptions o;
    o.owner = node.owner();
    o.ready_seconds = s.realtime_ready_seconds;
    o.metrics = &node.metrics().Registry();
    o.media_url = node.media_url();
    const auto catalog = node.catalog();
    auto& runner = node.Own<tasks::RealtimeRunner>(
        o, repo, live,
        [catalog](int tier) {
            return api::LimitsFor(*catalog, tier, "gwm1_avatars").max_concurrent;
        },
        tasks::ConversationTurns(conversation, deps));
    tasks::LaneOptions lane;
    lane.name = "realtime";
    lane.runners = std::max(1, s.realtime_sessions);
    lane.lease_seconds = s.realtime_lease_seconds;
    lane.max_attempts = 3;
    lane.stop_at_once = true;
    node.runtime().AddLane(lane);
    node.runtime().AddKind("realtime", tasks::kRealtimeJobKind, runner.Kind());

    api::App& app = node.app();
    app.realtime.repo = &repo;
    app.realtime.token_secret = node.SharedSecret("media_token_secret");
    app.realtime.kick = node.runtime().Kicker("realtime");
    app.realtime.live = &live;
    node.Subscribe("genhost_sessions", [&runner](const std::string& id) { runner.Wake(id); });
    node.Gauges([&live] {
        return std::vector<http::Sample>{
            {"genhost_realtime_sessions_live",
             "Realtime sessions this process runs now (admitted, from READY to their end).",
             {},
             static_cast<double>(live.size())}};
    });
    node.Routes(api::RegisterRealtimeRoutes);
    node.Routes(api::RegisterConversationRoutes);
}

}  // namespace genhost::features
