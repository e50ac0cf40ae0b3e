// genhost/store/router_log.hpp
//
// Provides RouterLog: the routing decisions of model routers (router_requests, migrations/
// 0012_routing.sql), written off the request path and listed per router, newest first
// (GET /v1/routers/{id}/requests).
//
// Append only queues a decision in memory (a mutex, no I/O). The writer started by Start sends
// the queue every `interval`, or as soon as kBatch decisions wait, each batch of up to kBatch as
// one multi-row INSERT (the rows travel as one JSON array). Flush writes everything appended
// before it was called, including a batch another caller is sending at that moment; List flushes
// first, so a node reads its own decisions. One batch is sent at a time (a second writer waits on
// its database thread for the first).
//
// Failures: while the database is unreachable the decisions stay queued and the writer tries
// again on its next tick (Flush and List throw DatabaseUnavailable). The queue holds at most
// kMaxQueued decisions; beyond that the oldest are dropped, counted by dropped() and logged by
// the writer. A batch the database refuses for any other reason (a router deleted meanwhile, a
// value a CHECK refuses, text JSON cannot carry) is sent again one decision at a time, and only
// the refused ones are dropped (counted and logged). Sending a batch again is harmless: rows are
// keyed by the caller's id.
#pragma once

#include "genhost/core/clock.hpp"
#include "genhost/store/database.hpp"
#include "genhost/store/keyset.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace genhost::store {

// RouterDecision is one row of router_requests.
struct RouterDecision {
    std::string id;  // a uuid the caller makes (genhost::NewOrderedUuid)
    std::string org_id;
    std::string router_id;
    int router_version = 1;
    std::string request_id;
    bool dry_run = false;
    // routed, no_eligible_model, router_config_not_found, invalid_request or error
    std::string status;
    std::optional<std::string> task_id;
    std::optional<std::string> model;
    std::optional<std::string> provider;
    std::optional<double> estimated_credits;
    // lowest_cost, best_latency, best_quality, only_eligible_model or filter_order_fallback
    std::optional<std::string> reason_code;
    std::optional<std::string> reason;
    std::string emptied_by_json = "[]";  // a JSON array, as text
    std::string pipeline_json = "[]";    // a JSON array, as text
    SysTime created_at;                  // the time of the decision, set by the caller
};

struct RouterDecisionPage {
    std::vector<RouterDecision> decisions;
    bool more = false;
};

class RouterLog {
  public:
    static constexpr std::size_t kBatch = 256;
    static constexpr std::size_t kMaxQueued = 100000;

    // Registers the statements with `db` (Prepare).
    explicit RouterLog(Database& db);
    // The destructor ends the writer at its next tick, without writing what is queued (Stop
    // does); the writer keeps the queue's state alive until then.
    ~RouterLog();
    RouterLog(const RouterLog&) = delete;
    RouterLog& operator=(const RouterLog&) = delete;

    static void Prepare(Database& db);

    // Start launches the writer on `ex` (its own strand of it); once.
    void Start(boost::asio::any_io_executor ex,
               std::chrono::milliseconds interval = std::chrono::milliseconds(50));

    // Append queues `d`; never blocks on I/O. Safe from any thread.
    void Append(RouterDecision d);

    // Flush writes every decision appended before the call. Throws DatabaseUnavailable.
    boost::asio::awaitable<void> Flush();

    // Stop ends the writer and writes what is queued, blocking the calling thread (shutdown, on a
    // thread that is not an I/O thread, before Database::Stop; the writer's execution context
    // must not be destroyed yet, though it need not run). Decisions it cannot write (the database
    // is unreachable) are lost, counted by dropped() and logged. Appends after Stop stay queued
    // until a Flush.
    void Stop();

    // List returns decisions of router `router_id` of organization `org_id`, newest first
    // (created_at, then id, descending), after the keyset `after` (the last row of the previous
    // page), at most `limit`; `more` says another page exists. Flushes first. Ids that are not
    // UUIDs give an empty page, never sent to SQL.
    boost::asio::awaitable<RouterDecisionPage> List(std::string org_id, std::string router_id,
                                                    int limit, std::optional<Keyset> after);

    // dropped counts the decisions lost since start: queue overflow, refused by the database, or
    // unwritten at Stop.
    std::uint64_t dropped() const;

    // queued counts the decisions waiting to be written (metrics).
    std::size_t queued() const;

  private:
    struct State;  // shared with the writer, which may outlive this object
    Database& db_;
    std::shared_ptr<State> state_;
};

}  // namespace genhost::store
