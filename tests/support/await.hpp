// AwaitOn runs an awaitable to its end on a test's own io_context (which nothing else runs) and
// returns its value, rethrowing what it throws.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

namespace genhost::testing {

template <class T>
T AwaitOn(boost::asio::io_context& io, boost::asio::awaitable<T> a) {
    auto f = boost::asio::co_spawn(io, std::move(a), boost::asio::use_future);
    io.restart();
    io.run();
    return f.get();
}

}  // namespace genhost::testing
