// FakeProvider: a small inference server for tests that speaks the HTTP provider protocol of
// docs/providers.md on a free loopback port, over plain HTTP or TLS (a certificate for
// "localhost" signed by a CA made at run time). It runs on its own thread and records every
// request with its arrival time.
//
// What a job does is scripted by the first word of the submitted input's `promptText`:
//   succeed (or anything unlisted)  SUCCEEDED at the first poll, one PNG output
//   ("/files/<job>/0.png") multi          three outputs: a relative path, an absolute URL with
//   "extension", and a path
//                  without extension served as image/png
//   slow           RUNNING with progress rising for 1.5 s, then SUCCEEDED
//   flaky          the first two submissions of the task answer 500, then as succeed
//   flaky-poll     the first two polls answer 502, then as succeed
//   down           every submission answers 503
//   refuse         the submission answers 422 {"error": "The fake provider refuses purple."}
//   unauthorized   the submission answers 401
//   garbage        the submission answers 200 with HTML
//   garbage-poll   polls answer {"status": "DANCING"}
//   no-outputs     SUCCEEDED with an empty outputs array
//   fail-safety    FAILED, failureCode SAFETY.INPUT.TEXT, failure "The fake provider saw a
//                  forbidden colour."
//   fail-unknown   FAILED, failureCode GPU.OOM, failure "CUDA out of memory at /opt/model"
//   huge           SUCCEEDED with one 3 MiB output (video/mp4)
//   forever        RUNNING (progress 0.1) until deleted
// DELETE /v1/tasks/{job} marks a job CANCELLED.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace genhost::testing {

class FakeProvider {
  public:
    // Seen is one request the fake received.
    struct Seen {
        std::string method;
        std::string target;
        std::string body;
        std::map<std::string, std::string> headers;  // names lower case
        std::chrono::steady_clock::time_point at;
    };

    explicit FakeProvider(bool tls = false);
    ~FakeProvider();
    FakeProvider(const FakeProvider&) = delete;
    FakeProvider& operator=(const FakeProvider&) = delete;

    unsigned short port() const;
    // Url is the provider URL to configure: http://127.0.0.1:PORT or https://localhost:PORT.
    std::string Url() const;
    // CaFile is a PEM file of the CA that signed the TLS certificate ("" without TLS).
    std::string CaFile() const;

    std::vector<Seen> Requests() const;
    // Find returns the first request with `method` whose target starts with `prefix`.
    std::optional<Seen> Find(const std::string& method, const std::string& prefix) const;
    // Submissions returns the JSON bodies of every POST /v1/tasks, in order.
    std::vector<nlohmann::json> Submissions() const;
    // JobOf returns the job id created for genhost task `task_id` ("" if none).
    std::string JobOf(const std::string& task_id) const;

    // OutputPng is the PNG every succeeding job outputs.
    const std::string& OutputPng() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace genhost::testing
