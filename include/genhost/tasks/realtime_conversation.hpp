// genhost/tasks/realtime_conversation.hpp
//
// Provides ConversationTurns: what runs inside a joined realtime session (docs/realtime.md,
// "Inside a session"). It is the SessionTurns of RealtimeRunner (realtime_sessions.hpp).
//
// Per session, three threads: the runner's own (events from the media plane: the user's audio
// through a voice-activity detector and the speech recognizer, typed text, END_CALL, the
// backend's RPC answers), a thinker (the conversation engine, then speech synthesis in the
// avatar's voice, sentence by sentence), and a player (every 1/fps seconds, never faster than
// real time: the next slice of the avatar's speech and a video frame whose mouth follows it;
// idle frames, blinking, when silent). The startScript is spoken when the user joins. A user who
// speaks while the avatar talks stops it (barge-in): the rest of its speech is dropped, the
// reply's engine call is cancelled, and its transcript entry ends with " [interrupted]".
// Tools: client_event sends {type: client_event, tool, args} to the user; backend_rpc sends an
// rpc_request to the backend participant and waits at most its timeoutSeconds. The transcript
// (user and assistant entries, tool calls and results with their durations) is written as it
// happens; once the session's end is recorded (TurnsOutcome::finish), its recording (the
// avatar's video with both sides' audio, mixed) is written to the output store as
// conversation-<id>/recording.mp4.
#pragma once

#include "genhost/media/speech_recognition.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/realtime/engine.hpp"
#include "genhost/store/documents_repo.hpp"
#include "genhost/store/realtime_repo.hpp"
#include "genhost/tasks/realtime_sessions.hpp"

#include <functional>
#include <memory>
#include <string>

namespace genhost::tasks {

struct ConversationOptions {
    int fps = 10;               // video frames (and audio slices) per second
    int frame_size = 256;       // video frames are frame_size x frame_size
    int vad_hangover_ms = 500;  // silence that ends an utterance
    std::string scratch_root;   // where the recording is assembled
    bool record = true;
};

// ConversationDeps is what a session's runtime uses.
struct ConversationDeps {
    store::RealtimeRepo* sessions = nullptr;
    store::DocumentRepo* documents = nullptr;
    outputs::OutputStore* outputs = nullptr;
    std::shared_ptr<media::SpeechModel> speech;  // offline recognition (shared by sessions)
    // Makes the engine of one session (the builtin one, or the chat-completions one).
    std::function<std::unique_ptr<realtime::Engine>()> make_engine;
};

// ConversationTurns runs sessions with `deps`.
SessionTurns ConversationTurns(ConversationOptions options, ConversationDeps deps);

}  // namespace genhost::tasks
