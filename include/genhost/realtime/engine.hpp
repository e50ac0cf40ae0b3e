// genhost/realtime/engine.hpp
//
// Provides the conversation engine seam of realtime sessions (docs/realtime.md, "Conversation
// engines"): what a session's runtime asks an engine for, turn by turn, and the two engines.
//
// - The runtime keeps the conversation (Turn history) and asks Reply for the avatar's next
//   message: text streamed through `on_text` as it comes (so speech can start before the reply
//   is whole), then the tool calls the engine wants, if any. After running them the runtime calls
//   Reply again with their results in the history, until a reply has no tool calls.
// - BuiltinEngine (deterministic, the default): answers from the personality, the startScript
//   and the avatar's knowledge documents (through `search`, the documents index), and calls a
//   tool when the utterance names it or one of its string parameters' enum values.
// - ChatCompletionsEngine: an OpenAI-compatible `POST {base}/chat/completions` endpoint
//   (llama.cpp's server, vLLM, Ollama, hosted APIs), streaming (server-sent events), the tools as
//   function calling, the knowledge chunks in the system message (src/realtime/chat_engine.cpp).
//
// Engines are used by one session's thread at a time; Reply blocks. `cancel` turning true (the
// user barged in, the session ended) makes Reply return promptly with what it has.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::realtime {

// ToolSpec is a tool of the session as its create body declared it (schemas/realtime_sessions.json
// #/$defs/tool): type client_event or backend_rpc, name, description, parameters (each
// {type, name, description, required?, enum?, items?, properties?}), timeoutSeconds.
struct ToolSpec {
    std::string type;
    std::string name;
    std::string description;
    nlohmann::json parameters = nlohmann::json::array();
    double timeout_seconds = 4;
};

// ToolSpecs reads a session's stored tools.
std::vector<ToolSpec> ToolSpecs(const nlohmann::json& tools);

// ToolJsonSchema is the JSON Schema of a tool's arguments (function calling's `parameters`):
// {type: object, properties, required, additionalProperties: false}.
nlohmann::json ToolJsonSchema(const ToolSpec& tool);

struct ToolCall {
    std::string id;  // the engine's call id (generated when the engine gives none)
    std::string name;
    nlohmann::json arguments = nlohmann::json::object();
};

struct ToolResult {
    std::string id;
    std::string name;
    nlohmann::json result;  // null when it failed
    std::optional<std::string> error;
    double duration_ms = 0;
};

// Turn is one entry of the conversation as the engine sees it.
struct Turn {
    enum class Role { kUser, kAssistant, kTool } role = Role::kUser;
    std::string text;                      // user or assistant text ("" for tool-only turns)
    std::vector<ToolCall> tool_calls;      // assistant
    std::vector<ToolResult> tool_results;  // tool: the results of the previous turn's calls
};

// Knowledge is a chunk of the avatar's documents that matched the utterance.
struct Knowledge {
    std::string document;  // its document's name
    std::string heading;   // the section it is from ("" when none)
    std::string text;
};

// SearchFn finds the avatar's knowledge chunks that best match `query` (at most `limit`).
using SearchFn = std::function<std::vector<Knowledge>(const std::string& query, int limit)>;

// EngineContext is what stays the same for a whole session.
struct EngineContext {
    std::string avatar_name;
    std::string personality;
    std::string start_script;
    std::vector<ToolSpec> tools;
    SearchFn search;  // empty: the avatar has no documents
};

struct Reply {
    std::string text;  // the whole text (also streamed through on_text)
    std::vector<ToolCall> tool_calls;
    std::string error;  // non-empty when the engine failed (the text then says something short)
};

class Engine {
  public:
    virtual ~Engine() = default;
    virtual Reply Respond(const EngineContext& context, const std::vector<Turn>& history,
                          const std::function<void(std::string_view delta)>& on_text,
                          const std::atomic<bool>& cancel) = 0;
};

// MakeBuiltinEngine is the deterministic engine.
std::unique_ptr<Engine> MakeBuiltinEngine();

// ChatCompletionsOptions configure the OpenAI-compatible engine (GENHOST_LLM_URL, _MODEL, _KEY).
struct ChatCompletionsOptions {
    std::string
        base_url;  // e.g. http://127.0.0.1:8081/v1 (the request goes to base/chat/completions)
    std::string model;
    std::string api_key;                       // sent as Authorization: Bearer when set
    std::chrono::milliseconds timeout{20000};  // the whole request, first byte to last
    double temperature = 0.7;
    int max_tokens = 300;
};

// MakeChatCompletionsEngine is the OpenAI-compatible engine. Errors (connection, status, a
// malformed stream) come back as Reply::error, never as exceptions.
std::unique_ptr<Engine> MakeChatCompletionsEngine(ChatCompletionsOptions options);

}  // namespace genhost::realtime
