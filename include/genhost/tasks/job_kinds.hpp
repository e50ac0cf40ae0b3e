// genhost/tasks/job_kinds.hpp
//
// Provides the one declaration of every kind of background job (the `jobs` table's `kind`,
// migrations/0007_jobs.sql and the triggers that queue them) and of the engine on a node that
// runs it, and CheckJobKinds, which a node runs at start:
// - every declared kind must be served by exactly one engine of this node, with a handler, and
//   no engine may serve an undeclared kind: otherwise the node refuses to start;
// - a kind found in the database that is not declared (a newer or older version's job, in a
//   rolling upgrade) is reported, with its count, and left alone.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace genhost::tasks {

inline constexpr const char* kAvatarJobKind = "avatar";
inline constexpr const char* kDocumentJobKind = "document";
inline constexpr const char* kVoiceJobKind = "voice";
inline constexpr const char* kOutputExpiryJobKind = "output_expiry";
inline constexpr const char* kRealtimeJobKind = "realtime_session";
inline constexpr const char* kWorkflowJobKind = "workflow_invocation";

// JobKindSpec: a kind, the engine that serves it, and what one job of it is.
struct JobKindSpec {
    const char* kind;
    const char* engine;
    const char* doc;
};

inline constexpr JobKindSpec kJobKinds[] = {
    {kAvatarJobKind, "jobs", "process an avatar's revision (migration 0005's trigger)"},
    {kDocumentJobKind, "jobs", "index a knowledge document's revision (migration 0008)"},
    {kVoiceJobKind, "jobs", "analyse a custom voice and make its preview (migration 0009)"},
    {kOutputExpiryJobKind, "jobs", "delete a voice preview's files once expired"},
    {kRealtimeJobKind, "realtime", "run a realtime session for its whole life (migration 0013)"},
    {kWorkflowJobKind, "workflows", "advance a workflow invocation (migration 0015)"},
};

// EngineKinds: an engine's name and the kinds it serves, each with or without a handler.
struct EngineKinds {
    std::string engine;
    std::map<std::string, bool> kinds;  // kind -> has a handler
};

// JobKindReport is CheckJobKinds' answer: errors stop the start; warnings are logged.
struct JobKindReport {
    std::vector<std::string> errors;
    std::vector<std::string> warnings;
};

// CheckJobKinds compares the engines of this node with kJobKinds and with the kinds found in the
// database (`in_database`: kind -> rows).
JobKindReport CheckJobKinds(const std::vector<EngineKinds>& engines,
                            const std::map<std::string, long>& in_database);

}  // namespace genhost::tasks
