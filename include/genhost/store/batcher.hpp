// genhost/store/batcher.hpp
//
// Provides Batcher<In, Out>: concurrent calls of one kind gathered into a single database job
// (group commit). A call joins the batch that is waiting in the pool's queue; when a database
// thread takes that job it takes every call gathered so far (up to `max_batch`) and answers them
// with one statement, so a busy server pays one round trip, one commit and one thread wake-up per
// batch instead of per call. An idle server sends batches of one, with no added wait: a batch
// is never held back to let it grow.
//
// `run` receives the inputs and returns one output per input, in order. An exception (or a
// lost connection, which arrives as DatabaseUnavailable) fails every call of the batch. Each
// awaiting coroutine resumes on its own executor.
#pragma once

#include "genhost/store/database.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace genhost::store {

template <class In, class Out>
class Batcher {
  public:
    using RunFn = std::function<std::vector<Out>(pqxx::connection_base&, const std::vector<In>&)>;

    Batcher(Database& db, std::size_t max_batch, RunFn run)
        : db_(db), max_batch_(max_batch == 0 ? 1 : max_batch), run_(std::move(run)) {}
    Batcher(const Batcher&) = delete;
    Batcher& operator=(const Batcher&) = delete;

    // Submit adds `in` to the waiting batch and resumes with its output.
    boost::asio::awaitable<Out> Submit(In in) {
        namespace asio = boost::asio;
        co_return co_await asio::async_initiate<decltype(asio::use_awaitable),
                                                void(std::exception_ptr, Out)>(
            [this, &in](auto handler) {
                auto executor = asio::get_associated_executor(handler);
                auto work = asio::make_work_guard(executor);
                auto shared = std::make_shared<decltype(handler)>(std::move(handler));
                Call call{std::move(in),
                          [shared, work = std::move(work)](std::exception_ptr ep, Out out) mutable {
                              auto ex = work.get_executor();
                              asio::post(ex, [shared, ep, out = std::move(out)]() mutable {
                                  (*shared)(ep, std::move(out));
                              });
                              work.reset();
                          }};
                bool enqueue = false;
                {
                    std::lock_guard lock(mu_);
                    waiting_.push_back(std::move(call));
                    if (!queued_) enqueue = queued_ = true;
                }
                if (enqueue) EnqueueJob();
            },
            asio::use_awaitable);
    }

  private:
    struct Call {
        In in;
        std::function<void(std::exception_ptr, Out)> done;
    };
    struct Job {
        bool ran = false;
        std::vector<Call> calls;
        std::vector<Out> outs;
    };

    // Take removes up to max_batch_ waiting calls; if more wait, another job is queued for them.
    std::vector<Call> Take() {
        std::vector<Call> calls;
        bool more = false;
        {
            std::lock_guard lock(mu_);
            if (waiting_.size() <= max_batch_) {
                calls.swap(waiting_);
                queued_ = false;
            } else {
                calls.assign(std::make_move_iterator(waiting_.begin()),
                             std::make_move_iterator(waiting_.begin() + max_batch_));
                waiting_.erase(waiting_.begin(), waiting_.begin() + max_batch_);
                more = true;  // queued_ stays true: the job below is the queued one
            }
        }
        if (more) EnqueueJob();
        return calls;
    }

    void EnqueueJob() {
        auto job = std::make_shared<Job>();
        db_.Submit(
            [this, job](pqxx::connection_base& c) {
                job->ran = true;
                job->calls = Take();
                std::vector<In> ins;
                ins.reserve(job->calls.size());
                for (auto& call : job->calls) ins.push_back(std::move(call.in));
                job->outs = run_(c, ins);
                if (job->outs.size() != ins.size()) {
                    throw std::logic_error("batch returned a different number of rows");
                }
            },
            [this, job](std::exception_ptr ep) {
                if (!job->ran) job->calls = Take();  // the pool could not run the job
                for (std::size_t i = 0; i < job->calls.size(); ++i) {
                    job->calls[i].done(ep, ep ? Out{} : std::move(job->outs[i]));
                }
            });
    }

    Database& db_;
    const std::size_t max_batch_;
    RunFn run_;
    std::mutex mu_;
    std::vector<Call> waiting_;
    bool queued_ = false;  // a job that will take the waiting calls is in the pool's queue
};

}  // namespace genhost::store
