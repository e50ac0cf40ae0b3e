// The OpenAI-compatible conversation engine (genhost/realtime/engine.hpp): one streaming
// `POST {base}/chat/completions` per Respond, the session's tools as function calling, the
// avatar's knowledge chunks in the system message.
//
// The client is blocking: each Respond runs its own io_context on the session's thread, in slices
// of 20 ms so `cancel` and the deadline are looked at between them. The response is read as it
// arrives and parsed as server-sent events: content deltas go to `on_text` at once (speech starts
// before the reply is whole), tool-call deltas are assembled by their index. A server that answers
// `application/json` (it ignored `stream: true`) is read as a whole completion.
//
// Nothing here throws to the caller: every failure becomes Reply::error, with the text streamed
// so far kept in Reply::text. A cancelled reply is not a failure: it returns what came so far.
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/ssl.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include "genhost/core/ids.hpp"
#include "genhost/core/utf8.hpp"
#include "genhost/net/tls.hpp"
#include "genhost/net/url.hpp"
#include "genhost/realtime/engine.hpp"

namespace genhost::realtime {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kSlice = std::chrono::milliseconds(20);
constexpr std::uint32_t kHeaderLimit = 16 * 1024;
constexpr std::uint64_t kBodyLimit = 16 * 1024 * 1024;
constexpr std::size_t kLineLimit = 1024 * 1024;
constexpr std::size_t kErrorBodyShown = 300;
constexpr std::size_t kMaxJsonDepth = 64;

// ParseModelJson parses what the language model's server sent, discarded when it is not JSON or
// nests deeper than kMaxJsonDepth (what it holds is dumped again later, recursively).
json ParseModelJson(std::string_view text) {
    if (JsonNestingDepth(text) > kMaxJsonDepth) return json(json::value_t::discarded);
    return json::parse(text, nullptr, false);
}
constexpr int kKnowledgeChunks = 4;

// Dump is json::dump that never throws on invalid UTF-8 (it is replaced).
std::string Dump(const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Utf8Length is the length of the valid UTF-8 sequence at the start of `text`, 0 when there is
// none (a stray byte, an overlong form, a surrogate, a sequence cut short).
std::size_t Utf8Length(std::string_view text) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char c = byte(0);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    unsigned min = 0;
    unsigned code = 0;
    if ((c & 0xe0) == 0xc0) {
        n = 2, min = 0x80, code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3, min = 0x800, code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4, min = 0x10000, code = c & 0x07;
    } else {
        return 0;
    }
    if (text.size() < n) return 0;
    for (std::size_t i = 1; i < n; ++i) {
        if ((byte(i) & 0xc0) != 0x80) return 0;
        code = (code << 6) | (byte(i) & 0x3f);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
    return n;
}

// Start returns the beginning of `text` for an error message: at most `limit` bytes, on one line,
// valid UTF-8 (a reply's error may end up in JSON), "..." when cut.
std::string Start(std::string_view text, std::size_t limit = kErrorBodyShown) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size() && i < limit) {
        const std::size_t n = Utf8Length(text.substr(i));
        if (n == 0) {
            out += '?';
            ++i;
        } else if (i + n > limit) {
            break;
        } else if (n == 1 && static_cast<unsigned char>(text[i]) < 0x20) {
            out += ' ';
            ++i;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (i < text.size()) out += "...";
    return out;
}

// ---- The endpoint ------------------------------------------------------------------------------

using Url = net::HttpUrl;

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
    }
    return true;
}

// CompletionsUrl is `{base}/chat/completions` for an absolute http(s) base URL (with or without a
// trailing '/'); nullopt when the base is anything else (a query or a fragment too).
std::optional<Url> CompletionsUrl(std::string_view base) {
    auto url = net::ParseHttpUrl(base).url;
    if (!url || url->has_query) return std::nullopt;
    while (!url->path.empty() && url->path.back() == '/') url->path.pop_back();
    url->path += "/chat/completions";
    return url;
}

// ---- The request -------------------------------------------------------------------------------

std::string LastUserUtterance(const std::vector<Turn>& history) {
    for (auto it = history.rbegin(); it != history.rend(); ++it) {
        if (it->role == Turn::Role::kUser && !it->text.empty()) return it->text;
    }
    return {};
}

std::string SystemMessage(const EngineContext& context, const std::vector<Turn>& history) {
    std::string out;
    if (context.avatar_name.empty()) {
        out += "You are an avatar talking with a person in a live voice conversation.";
    } else {
        out += "You are " + context.avatar_name +
               ", an avatar talking with a person in a live voice conversation.";
    }
    if (!context.personality.empty()) out += "\n\nYour personality:\n" + context.personality;
    out +=
        "\n\nEverything you write is spoken aloud, so answer briefly: one to three short "
        "sentences, in plain conversational text. No markdown, lists, headings, code, emoji or "
        "links.";
    if (!context.tools.empty()) {
        out += " When one of your tools fits what the person asks, call it instead of guessing.";
    }
    const std::string utterance = LastUserUtterance(history);
    if (context.search && !utterance.empty()) {
        const auto chunks = context.search(utterance, kKnowledgeChunks);
        if (!chunks.empty()) {
            out +=
                "\n\nReference material from your documents (use it when it answers the "
                "question; if it does not, say so rather than inventing facts):";
            for (const auto& chunk : chunks) {
                out += "\n\n[" + chunk.document;
                if (!chunk.heading.empty()) out += " - " + chunk.heading;
                out += "]\n" + chunk.text;
            }
        }
    }
    return out;
}

json Messages(const EngineContext& context, const std::vector<Turn>& history) {
    json messages = json::array();
    messages.push_back({{"role", "system"}, {"content", SystemMessage(context, history)}});
    for (const auto& turn : history) {
        switch (turn.role) {
            case Turn::Role::kUser:
                messages.push_back({{"role", "user"}, {"content", turn.text}});
                break;
            case Turn::Role::kAssistant: {
                json message = {{"role", "assistant"}};
                if (turn.tool_calls.empty()) {
                    message["content"] = turn.text;
                } else {
                    message["content"] = turn.text.empty() ? json(nullptr) : json(turn.text);
                    json calls = json::array();
                    for (const auto& call : turn.tool_calls) {
                        calls.push_back(
                            {{"id", call.id},
                             {"type", "function"},
                             {"function",
                              {{"name", call.name},
                               {"arguments", Dump(call.arguments.is_null() ? json::object()
                                                                           : call.arguments)}}}});
                    }
                    message["tool_calls"] = std::move(calls);
                }
                messages.push_back(std::move(message));
                break;
            }
            case Turn::Role::kTool:
                for (const auto& result : turn.tool_results) {
                    const json content =
                        result.error ? json{{"error", *result.error}} : result.result;
                    messages.push_back({{"role", "tool"},
                                        {"tool_call_id", result.id},
                                        {"content", Dump(content)}});
                }
                break;
        }
    }
    return messages;
}

json RequestBody(const ChatCompletionsOptions& options, const EngineContext& context,
                 const std::vector<Turn>& history) {
    json body = {{"model", options.model},
                 {"stream", true},
                 {"temperature", options.temperature},
                 {"max_tokens", options.max_tokens},
                 {"messages", Messages(context, history)}};
    if (!context.tools.empty()) {
        json tools = json::array();
        for (const auto& tool : context.tools) {
            tools.push_back({{"type", "function"},
                             {"function",
                              {{"name", tool.name},
                               {"description", tool.description},
                               {"parameters", ToolJsonSchema(tool)}}}});
        }
        body["tools"] = std::move(tools);
        body["tool_choice"] = "auto";
    }
    return body;
}

// ---- The response ------------------------------------------------------------------------------

// Completion assembles a reply from the stream's chunks (or a whole completion): the text, passed
// on to `on_text` piece by piece, and the tool calls, keyed by their index.
class Completion {
  public:
    explicit Completion(const std::function<void(std::string_view)>& on_text) : on_text_(on_text) {}

    // Chunk takes one `chat.completion.chunk` object; false (with error()) when it is not one.
    bool Chunk(const json& chunk) {
        if (!chunk.is_object()) return Fail("an event of the stream is not a JSON object");
        if (const auto it = chunk.find("error"); it != chunk.end() && !it->is_null()) {
            return Fail("the language model reported an error: " + ErrorText(*it));
        }
        const auto choices = chunk.find("choices");
        if (choices == chunk.end() || !choices->is_array() || choices->empty()) return true;
        const json& choice = choices->front();
        if (!choice.is_object()) return true;
        if (const auto it = choice.find("finish_reason"); it != choice.end() && it->is_string()) {
            finished_ = true;
        }
        // `delta` in a stream, `message` in a whole completion.
        auto delta = choice.find("delta");
        if (delta == choice.end()) delta = choice.find("message");
        if (delta == choice.end() || !delta->is_object()) return true;
        if (const auto it = delta->find("content"); it != delta->end() && it->is_string()) {
            const auto& piece = it->get_ref<const std::string&>();
            if (!piece.empty()) {
                text_ += piece;
                if (on_text_) on_text_(piece);
            }
        }
        if (const auto it = delta->find("tool_calls"); it != delta->end() && it->is_array()) {
            int position = 0;
            for (const auto& call : *it) {
                ToolCallDelta(call, position++);
            }
        }
        return true;
    }

    const std::string& text() const { return text_; }
    const std::string& error() const { return error_; }
    bool finished() const { return finished_; }  // a choice gave its finish_reason

    std::vector<ToolCall> ToolCalls() const {
        std::vector<ToolCall> out;
        for (const auto& [index, partial] : calls_) {
            ToolCall call;
            call.id = partial.id.empty() ? "call_" + NewUuid() : partial.id;
            call.name = partial.name;
            if (partial.object) {
                call.arguments = *partial.object;
            } else {
                json parsed = ParseModelJson(partial.arguments);
                // An unparsable arguments string keeps the call, with no arguments.
                if (parsed.is_object()) call.arguments = std::move(parsed);
            }
            out.push_back(std::move(call));
        }
        return out;
    }

    bool Fail(std::string why) {
        if (error_.empty()) error_ = std::move(why);
        return false;
    }

  private:
    struct PartialCall {
        std::string id;
        std::string name;
        std::string arguments;       // the fragments so far
        std::optional<json> object;  // a server that sends the arguments as an object
    };

    static std::string ErrorText(const json& error) {
        if (error.is_string()) return error.get<std::string>();
        if (error.is_object()) {
            if (const auto it = error.find("message"); it != error.end() && it->is_string()) {
                return it->get<std::string>();
            }
        }
        return Start(Dump(error));
    }

    void ToolCallDelta(const json& call, int position) {
        if (!call.is_object()) return;
        int index = position;
        if (const auto it = call.find("index"); it != call.end() && it->is_number_integer()) {
            index = it->get<int>();
        }
        auto& partial = calls_[index];
        if (const auto it = call.find("id");
            it != call.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
            partial.id = it->get<std::string>();
        }
        const auto function = call.find("function");
        if (function == call.end() || !function->is_object()) return;
        if (const auto it = function->find("name"); it != function->end() && it->is_string()) {
            const auto& name = it->get_ref<const std::string&>();
            // Servers send the name once; some repeat it whole in later deltas.
            if (name != partial.name) partial.name += name;
        }
        if (const auto it = function->find("arguments"); it != function->end()) {
            if (it->is_string()) {
                partial.arguments += it->get_ref<const std::string&>();
            } else if (it->is_object()) {
                partial.object = *it;
            }
        }
    }

    const std::function<void(std::string_view)>& on_text_;
    std::string text_;
    std::string error_;
    bool finished_ = false;
    std::map<int, PartialCall> calls_;
};

// EventStream splits a server-sent event stream into events (lines ending in "\n" or "\r\n",
// events ending at an empty line, comments and fields other than `data` ignored) and gives each
// event's data to the completion: `[DONE]` ends the stream.
class EventStream {
  public:
    explicit EventStream(Completion& completion) : completion_(completion) {}

    // Feed takes the next bytes of the stream; false once the stream is over ([DONE] or an error).
    bool Feed(std::string_view bytes) {
        pending_.append(bytes);
        std::size_t begin = 0;
        while (!over_) {
            const auto end = pending_.find('\n', begin);
            if (end == std::string::npos) break;
            std::string_view line(pending_.data() + begin, end - begin);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            Line(line);
            begin = end + 1;
        }
        pending_.erase(0, begin);
        if (!over_ && pending_.size() > kLineLimit) {
            completion_.Fail("a line of the stream is longer than " + std::to_string(kLineLimit) +
                             " bytes");
            over_ = true;
        }
        return !over_;
    }

    // End is the end of the stream: an event without its closing empty line still counts.
    void End() {
        if (over_) return;
        if (!pending_.empty()) {
            std::string last = std::move(pending_);
            pending_.clear();
            if (!last.empty() && last.back() == '\r') last.pop_back();
            Line(last);
        }
        Dispatch();
    }

    bool done() const { return done_; }  // [DONE] arrived
    bool over() const { return over_; }

  private:
    void Line(std::string_view line) {
        if (line.empty()) {
            Dispatch();
            return;
        }
        if (line.front() == ':') return;  // a comment (keep-alive)
        const auto colon = line.find(':');
        const std::string_view field = line.substr(0, colon);
        std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        if (field != "data") return;  // event, id, retry
        if (has_data_) data_ += '\n';
        data_.append(value);
        has_data_ = true;
    }

    void Dispatch() {
        if (!has_data_ || over_) return;
        std::string data = std::move(data_);
        data_.clear();
        has_data_ = false;
        Event(data);
    }

    void Event(const std::string& data) {
        const auto first = data.find_first_not_of(" \t\r\n");
        if (first == std::string::npos) return;
        const auto last = data.find_last_not_of(" \t\r\n");
        const std::string_view trimmed(data.data() + first, last - first + 1);
        if (trimmed == "[DONE]") {
            done_ = true;
            over_ = true;
            return;
        }
        json chunk = ParseModelJson(trimmed);
        if (chunk.is_discarded()) {
            // Servers that put one chunk per `data:` line without the empty line between them.
            if (trimmed.find('\n') != std::string_view::npos && EachLine(trimmed)) return;
            completion_.Fail("the stream held a malformed event: " + Start(trimmed, 120));
            over_ = true;
            return;
        }
        if (!completion_.Chunk(chunk)) over_ = true;
    }

    bool EachLine(std::string_view data) {
        std::vector<json> chunks;
        std::size_t begin = 0;
        while (begin <= data.size()) {
            auto end = data.find('\n', begin);
            if (end == std::string_view::npos) end = data.size();
            const std::string_view line = data.substr(begin, end - begin);
            if (line == "[DONE]") {
                chunks.emplace_back(nullptr);
            } else if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
                json chunk = ParseModelJson(line);
                if (chunk.is_discarded()) return false;
                chunks.push_back(std::move(chunk));
            }
            begin = end + 1;
        }
        for (const auto& chunk : chunks) {
            if (chunk.is_null()) {
                done_ = true;
                over_ = true;
                return true;
            }
            if (!completion_.Chunk(chunk)) {
                over_ = true;
                return true;
            }
        }
        return true;
    }

    Completion& completion_;
    std::string pending_;
    std::string data_;
    bool has_data_ = false;
    bool done_ = false;
    bool over_ = false;
};

// Exchange is one request's state, shared by the coroutine reading the response and Respond.
struct Exchange {
    explicit Exchange(const std::function<void(std::string_view)>& on_text)
        : completion(on_text), events(completion) {}

    enum class Phase { kResolving, kConnecting, kHandshake, kSending, kWaiting, kReading };
    enum class Mode { kEvents, kWhole, kFailure };

    Completion completion;
    EventStream events;
    Phase phase = Phase::kResolving;
    Mode mode = Mode::kEvents;
    int status = 0;
    std::string whole;  // kWhole: the completion; kFailure: the start of the error body
    bool over = false;  // nothing more is wanted from the response

    void Header(int status_code, std::string_view content_type) {
        status = status_code;
        phase = Phase::kReading;
        if (status != 200) {
            mode = Mode::kFailure;
        } else if (StartsWithNoCase(content_type, "application/json")) {
            mode = Mode::kWhole;
        }
    }

    void Body(std::string_view bytes) {
        switch (mode) {
            case Mode::kEvents:
                if (!events.Feed(bytes)) over = true;
                break;
            case Mode::kWhole:
                whole.append(bytes);
                break;
            case Mode::kFailure:
                whole.append(bytes.substr(0, std::min(bytes.size(), 4 * kErrorBodyShown)));
                if (whole.size() >= 4 * kErrorBodyShown) over = true;
                break;
        }
    }

    void End() {
        if (mode == Mode::kEvents) {
            events.End();
        } else if (mode == Mode::kWhole) {
            json answer = ParseModelJson(whole);
            if (answer.is_discarded()) {
                completion.Fail("the language model's answer is not JSON: " + Start(whole, 120));
            } else {
                completion.Chunk(answer);
            }
        }
    }
};

using Request = http::request<http::string_body>;

template <class Stream>
asio::awaitable<void> Talk(Stream& stream, const Request& req, Exchange& exchange) {
    exchange.phase = Exchange::Phase::kSending;
    co_await http::async_write(stream, req, asio::use_awaitable);
    exchange.phase = Exchange::Phase::kWaiting;
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(kBodyLimit);
    co_await http::async_read_header(stream, buffer, parser, asio::use_awaitable);
    const int status = static_cast<int>(parser.get().result_int());
    const std::string content_type(parser.get()[http::field::content_type]);
    exchange.Header(status, content_type);
    while (!parser.is_done() && !exchange.over) {
        co_await http::async_read_some(stream, buffer, parser, asio::use_awaitable);
        auto& body = parser.get().body();
        if (!body.empty()) {
            exchange.Body(body);
            body.clear();
        }
    }
    if (parser.is_done() && !exchange.over) exchange.End();
}

asio::awaitable<void> Fetch(ssl::context* tls, const Url& url, const Request& req,
                            Exchange& exchange, Clock::time_point deadline) {
    const auto ex = co_await asio::this_coro::executor;
    asio::ip::tcp::resolver resolver(ex);
    const auto endpoints =
        co_await resolver.async_resolve(url.host, url.PortString(), asio::use_awaitable);
    exchange.phase = Exchange::Phase::kConnecting;
    if (url.tls) {
        beast::ssl_stream<beast::tcp_stream> stream(ex, *tls);
        auto& tcp = beast::get_lowest_layer(stream);
        tcp.expires_at(deadline);
        co_await tcp.async_connect(endpoints, asio::use_awaitable);
        exchange.phase = Exchange::Phase::kHandshake;
        net::VerifyHost(stream.native_handle(), url.host);
        co_await stream.async_handshake(ssl::stream_base::client, asio::use_awaitable);
        co_await Talk(stream, req, exchange);
        // No TLS shutdown: the response is complete (or abandoned) and a peer may never answer
        // close_notify.
    } else {
        beast::tcp_stream stream(ex);
        stream.expires_at(deadline);
        co_await stream.async_connect(endpoints, asio::use_awaitable);
        co_await Talk(stream, req, exchange);
    }
}

std::string Milliseconds(std::chrono::milliseconds ms) {
    return std::to_string(ms.count()) + " ms";
}

// TransportError words a failure to get (the rest of) the response.
std::string TransportError(const Exchange& exchange, const Url& url,
                           std::chrono::milliseconds timeout, const boost::system::error_code* code,
                           const std::string& what) {
    const bool timed_out =
        code == nullptr || *code == beast::error::timeout || *code == asio::error::timed_out;
    const std::string origin = url.Origin();
    if (timed_out) {
        const std::string within = " within " + Milliseconds(timeout);
        switch (exchange.phase) {
            case Exchange::Phase::kResolving:
                return "cannot resolve the language model's host " + url.host + within;
            case Exchange::Phase::kConnecting:
                return "cannot connect to the language model at " + origin + within;
            case Exchange::Phase::kHandshake:
                return "no TLS handshake with the language model at " + origin + within;
            case Exchange::Phase::kSending:
                return "cannot send the request to the language model at " + origin + within;
            case Exchange::Phase::kWaiting:
                return "the language model at " + origin + " did not answer" + within;
            case Exchange::Phase::kReading:
                break;
        }
        return "the language model's answer did not finish" + within;
    }
    switch (exchange.phase) {
        case Exchange::Phase::kResolving:
            return "cannot resolve the language model's host " + url.host + ": " + what;
        case Exchange::Phase::kConnecting:
            return "cannot connect to the language model at " + origin + ": " + what;
        case Exchange::Phase::kHandshake:
            return "TLS with the language model at " + origin + " failed: " + what;
        case Exchange::Phase::kSending:
            return "cannot send the request to the language model at " + origin + ": " + what;
        case Exchange::Phase::kWaiting:
            return "the language model at " + origin + " did not answer: " + what;
        case Exchange::Phase::kReading:
            break;
    }
    return "the language model's answer broke off: " + what;
}

class ChatCompletionsEngine final : public Engine {
  public:
    explicit ChatCompletionsEngine(ChatCompletionsOptions options) : options_(std::move(options)) {}

    Reply Respond(const EngineContext& context, const std::vector<Turn>& history,
                  const std::function<void(std::string_view delta)>& on_text,
                  const std::atomic<bool>& cancel) override {
        Reply reply;
        std::string partial;
        try {
            reply = Run(context, history, on_text, cancel, &partial);
        } catch (const std::exception& e) {
            reply = Reply{};
            reply.text = partial;
            reply.error = std::string("the language model request failed: ") + e.what();
        } catch (...) {
            reply = Reply{};
            reply.text = partial;
            reply.error = "the language model request failed";
        }
        return reply;
    }

  private:
    ssl::context* TlsContext(std::string* error) {
        std::lock_guard lock(tls_mutex_);
        if (!tls_) {
            try {
                tls_ = net::ClientTlsContext({});
            } catch (const std::exception& e) {
                *error = e.what();
                return nullptr;
            }
        }
        return tls_.get();
    }

    Reply Run(const EngineContext& context, const std::vector<Turn>& history,
              const std::function<void(std::string_view)>& on_text, const std::atomic<bool>& cancel,
              std::string* partial) {
        Reply reply;
        const auto url = CompletionsUrl(options_.base_url);
        if (!url) {
            reply.error =
                "the language model's URL is not an http(s) URL: " + Start(options_.base_url, 120);
            return reply;
        }
        ssl::context* tls = nullptr;
        if (url->tls) {
            tls = TlsContext(&reply.error);
            if (tls == nullptr) return reply;
        }

        Request req;
        req.method(http::verb::post);
        req.target(url->Target());
        req.version(11);
        req.set(http::field::host, url->HostHeader());
        req.set(http::field::user_agent, "genhost");
        req.set(http::field::accept, "text/event-stream, application/json");
        req.set(http::field::content_type, "application/json");
        if (!options_.api_key.empty()) {
            req.set(http::field::authorization, "Bearer " + options_.api_key);
        }
        req.keep_alive(false);
        req.body() = Dump(RequestBody(options_, context, history));
        req.prepare_payload();

        // Everything the coroutine uses is declared before the io_context, so that a coroutine
        // abandoned on cancel or timeout is destroyed (with the io_context) before it.
        Exchange exchange(on_text);
        const auto deadline = Clock::now() + options_.timeout;
        bool done = false;
        std::exception_ptr failure;
        bool cancelled = false;
        bool timed_out = false;
        {
            asio::io_context ioc;
            asio::co_spawn(ioc, Fetch(tls, *url, req, exchange, deadline),
                           [&](std::exception_ptr e) {
                               failure = std::move(e);
                               done = true;
                           });
            while (!done) {
                *partial = exchange.completion.text();
                if (cancel.load()) {
                    cancelled = true;
                    break;
                }
                // The stream's own timer fires at the deadline; this also bounds name resolution.
                if (Clock::now() > deadline + kSlice) {
                    timed_out = true;
                    break;
                }
                ioc.run_for(kSlice);
            }
            ioc.stop();
        }

        reply.text = exchange.completion.text();
        if (cancelled) return reply;
        if (timed_out) {
            reply.error = TransportError(exchange, *url, options_.timeout, nullptr, "");
            return reply;
        }
        if (failure) {
            try {
                std::rethrow_exception(failure);
            } catch (const boost::system::system_error& e) {
                const auto code = e.code();
                if (code == http::error::body_limit) {
                    reply.error = "the language model's answer is larger than allowed";
                } else if (exchange.phase == Exchange::Phase::kReading &&
                           exchange.mode == Exchange::Mode::kEvents &&
                           exchange.completion.finished() && exchange.completion.error().empty() &&
                           (code == http::error::partial_message ||
                            code == http::error::end_of_stream || code == asio::error::eof)) {
                    // The connection closed after the last chunk without [DONE]: the reply is
                    // whole all the same.
                    exchange.events.End();
                } else {
                    reply.error =
                        TransportError(exchange, *url, options_.timeout, &code, code.message());
                }
            } catch (const std::exception& e) {
                reply.error = std::string("the language model request failed: ") + e.what();
            }
            if (!reply.error.empty()) {
                if (exchange.mode != Exchange::Mode::kFailure) return reply;
                reply.error.clear();  // a failure status read in part: report the status below
            }
        }
        reply.text = exchange.completion.text();
        if (exchange.mode == Exchange::Mode::kFailure) {
            reply.error = "the language model answered " + std::to_string(exchange.status);
            const std::string body = Start(exchange.whole);
            if (!body.empty()) reply.error += ": " + body;
            return reply;
        }
        if (!exchange.completion.error().empty()) {
            reply.error = exchange.completion.error();
            return reply;
        }
        reply.tool_calls = exchange.completion.ToolCalls();
        return reply;
    }

    ChatCompletionsOptions options_;
    std::mutex tls_mutex_;
    std::unique_ptr<ssl::context> tls_;
};

}  // namespace

std::unique_ptr<Engine> MakeChatCompletionsEngine(ChatCompletionsOptions options) {
    return std::make_unique<ChatCompletionsEngine>(std::move(options));
}

}  // namespace genhost::realtime
