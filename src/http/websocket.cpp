#include "genhost/http/websocket.hpp"

#include "websocket_control.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <deque>
#include <mutex>
#include <string_view>

namespace genhost::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace websocket = boost::beast::websocket;

struct WebSocket::Impl {
    // What ties the WebSocket to its I/O context; touched only on the connection's I/O thread,
    // and gone after Release.
    struct Io {
        explicit Io(WebSocketControl::Socket socket)
            : ws(std::move(socket)), writer_done(ws.get_executor()) {}
        websocket::stream<WebSocketControl::Socket> ws;
        // Finish waits on it; the writer cancels it when it stops.
        asio::steady_timer writer_done;
    };

    struct Outgoing {
        bool binary = false;
        std::string data;
    };

    Impl(WebSocketControl::Socket socket, std::string remote, std::size_t max_message_bytes,
         std::size_t max_queued_bytes)
        : executor(socket.get_executor()), remote(std::move(remote)), max_queued(max_queued_bytes) {
        io.emplace(std::move(socket));
        auto& ws = io->ws;
        ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
        ws.read_message_max(max_message_bytes);
        // One frame per message: no fragment headers every write_buffer_bytes.
        ws.auto_fragment(false);
    }

    const asio::any_io_executor executor;
    const std::string remote;
    std::optional<Io> io;

    mutable std::mutex mu;
    // Everything below is guarded by mu.
    std::deque<Outgoing> queue;
    std::size_t queued = 0;  // bytes in `queue` and in the message being written
    std::size_t max_queued;
    bool open = true;            // Send and Close take what they are given
    bool close_pending = false;  // Close was called: the writer sends the frame after the queue
    websocket::close_reason reason;
    bool failed = false;   // nothing more can be written (a failure, or the close frame went)
    bool writing = false;  // a writer runs or has been posted
    bool sealed = false;   // Seal: nothing may be posted to the executor any more

    // DropQueueLocked forgets the messages not yet being written.
    void DropQueueLocked() {
        for (const auto& m : queue) queued -= m.data.size();
        queue.clear();
    }

    // FailLocked records that the connection can carry nothing more.
    void FailLocked() {
        open = false;
        failed = true;
        close_pending = false;
        DropQueueLocked();
    }

    // StartWriterLocked posts the writer to the connection's executor unless one runs already.
    static void StartWriterLocked(const std::shared_ptr<Impl>& self) {
        if (self->writing) return;
        self->writing = true;
        asio::post(self->executor,
                   [self] { asio::co_spawn(self->executor, WriteLoop(self), asio::detached); });
    }

    // WriteLoop writes the queue, one message at a time, then the close frame if one was asked
    // for, and stops when there is nothing left (or nothing can be written).
    static asio::awaitable<void> WriteLoop(std::shared_ptr<Impl> self) {
        for (;;) {
            std::optional<Outgoing> item;
            std::optional<websocket::close_reason> close;
            {
                std::lock_guard lock(self->mu);
                if (!self->sealed && !self->failed && self->io) {
                    if (!self->queue.empty()) {
                        item = std::move(self->queue.front());
                        self->queue.pop_front();
                    } else if (self->close_pending) {
                        self->close_pending = false;
                        close = self->reason;
                    }
                }
                if (!item && !close) {
                    self->writing = false;
                    break;
                }
            }
            auto& ws = self->io->ws;  // not used past the co_await: Release may reset io
            if (close) {
                const websocket::close_reason reason = *close;
                // Whatever the outcome, nothing more is written.
                co_await ws.async_close(reason, asio::as_tuple(asio::use_awaitable));
                std::lock_guard lock(self->mu);
                self->FailLocked();  // the close frame is the last thing written
                continue;
            }
            ws.binary(item->binary);
            const asio::const_buffer buffer = asio::buffer(item->data);
            auto [ec, written] =
                co_await ws.async_write(buffer, asio::as_tuple(asio::use_awaitable));
            std::lock_guard lock(self->mu);
            self->queued -= item->data.size();
            if (ec) self->FailLocked();
        }
        if (self->io) self->io->writer_done.cancel();
    }
};

namespace {

// CutReason cuts a close reason to the 123 bytes a close frame has room for, at a UTF-8
// character boundary.
std::string_view CutReason(std::string_view reason) {
    constexpr std::size_t kMax = 123;
    if (reason.size() <= kMax) return reason;
    std::size_t n = kMax;
    while (n > 0 && (static_cast<unsigned char>(reason[n]) & 0xC0) == 0x80) --n;
    return reason.substr(0, n);
}

// SendableCode reports whether a close frame may carry `code` (RFC 6455 section 7.4).
bool SendableCode(std::uint16_t code) {
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
           (code >= 3000 && code <= 4999);
}

}  // namespace

WebSocket::WebSocket(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

WebSocket::~WebSocket() = default;

asio::awaitable<std::optional<WsMessage>> WebSocket::Read() {
    const std::shared_ptr<Impl> self = impl_;
    if (!self->io) co_return std::nullopt;
    std::string data;
    auto buffer = asio::dynamic_buffer(data);
    auto& ws = self->io->ws;
    auto [ec, n] = co_await ws.async_read(buffer, asio::as_tuple(asio::use_awaitable));
    if (ec || !self->io) {
        if (ec && ec != websocket::error::closed && ec != asio::error::operation_aborted) {
            spdlog::debug("websocket from {}: read ended: {}", self->remote, ec.message());
        }
        std::lock_guard lock(self->mu);
        self->FailLocked();
        co_return std::nullopt;
    }
    WsMessage message;
    message.binary = self->io->ws.got_binary();
    message.data = std::move(data);
    co_return message;
}

bool WebSocket::Send(std::string data, bool binary) {
    std::lock_guard lock(impl_->mu);
    Impl& s = *impl_;
    if (!s.open || s.failed || s.sealed) return false;
    if (data.size() > s.max_queued || s.queued > s.max_queued - data.size()) return false;
    s.queued += data.size();
    s.queue.push_back(Impl::Outgoing{binary, std::move(data)});
    Impl::StartWriterLocked(impl_);
    return true;
}

void WebSocket::Close(std::uint16_t code, std::string reason) {
    std::lock_guard lock(impl_->mu);
    Impl& s = *impl_;
    if (!s.open || s.failed || s.sealed) return;
    s.open = false;
    s.close_pending = true;
    s.reason = websocket::close_reason(
        static_cast<websocket::close_code>(SendableCode(code) ? code : ws_close::kInternalError),
        CutReason(reason));
    Impl::StartWriterLocked(impl_);
}

bool WebSocket::open() const {
    std::lock_guard lock(impl_->mu);
    return impl_->open && !impl_->failed && !impl_->sealed;
}

std::size_t WebSocket::queued_bytes() const {
    std::lock_guard lock(impl_->mu);
    return impl_->queued;
}

std::size_t WebSocket::max_queued_bytes() const {
    std::lock_guard lock(impl_->mu);
    return impl_->max_queued;
}

void WebSocket::set_max_queued_bytes(std::size_t bytes) {
    std::lock_guard lock(impl_->mu);
    impl_->max_queued = bytes;
}

std::string WebSocket::remote_address() const { return impl_->remote; }

const asio::any_io_executor& WebSocket::executor() const { return impl_->executor; }

std::shared_ptr<WebSocket> WebSocketControl::Make(Socket socket, std::string remote_address,
                                                  std::size_t max_message_bytes,
                                                  std::size_t max_queued_bytes) {
    return std::make_shared<WebSocket>(std::make_shared<WebSocket::Impl>(
        std::move(socket), std::move(remote_address), max_message_bytes, max_queued_bytes));
}

asio::awaitable<beast::error_code> WebSocketControl::Handshake(WebSocket& ws,
                                                               const std::string& target,
                                                               const Fields& fields,
                                                               const std::string& request_id) {
    const std::shared_ptr<WebSocket::Impl> self = ws.impl_;
    if (!self->io) co_return beast::error_code(asio::error::operation_aborted);
    bhttp::request<bhttp::empty_body> request{bhttp::verb::get, target, 11};
    for (const auto& [name, value] : fields) request.insert(name, value);
    auto& stream = self->io->ws;
    stream.set_option(
        websocket::stream_base::decorator([id = request_id](websocket::response_type& response) {
            // Else Beast names itself and its version.
            response.set(bhttp::field::server, "genhost");
            response.set("X-Request-Id", id);
        }));
    auto [ec] = co_await stream.async_accept(request, asio::as_tuple(asio::use_awaitable));
    co_return ec;
}

asio::awaitable<void> WebSocketControl::Finish(WebSocket& ws, std::chrono::milliseconds limit) {
    const std::shared_ptr<WebSocket::Impl> self = ws.impl_;
    ws.Close(ws_close::kNormal, std::string());
    bool writing = false;
    {
        std::lock_guard lock(self->mu);
        writing = self->writing;
    }
    // The writer runs on this thread: it cannot stop between the look above and the wait.
    if (!writing || !self->io) co_return;
    auto& timer = self->io->writer_done;
    timer.expires_after(limit);
    // Cancelled by the writer when it stops, or expired: either way the wait is over.
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

void WebSocketControl::Seal(WebSocket& ws) {
    std::lock_guard lock(ws.impl_->mu);
    ws.impl_->sealed = true;
    ws.impl_->FailLocked();
}

void WebSocketControl::Release(WebSocket& ws) {
    Seal(ws);
    auto& io = ws.impl_->io;
    if (!io) return;
    beast::error_code ignored;
    beast::get_lowest_layer(io->ws).close(ignored);
    io.reset();
}

}  // namespace genhost::http
