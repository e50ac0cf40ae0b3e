// bench/assets_bench.cpp: what reading one media input costs (issue 4): fetch over HTTPS from a
// loopback fixture server (a test CA made at start) and probe with libav, for a 1 MB image and a
// 10 MB video.
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DGENHOST_BUILD_BENCH=ON
//   cmake --build build/bench --target assets_bench -j2
//   build/bench/bench/assets_bench --benchmark_repetitions=5
//   --benchmark_report_aggregates_only=true
//
// Steps:
//   Fetch       Fetcher::Fetch: DNS skipped (test host map), TCP + TLS 1.3 handshake, GET, the
//               body streamed to a file, Content-Type / Content-Length checks.
//   Probe       AssetReader::Probe on the downloaded file: libavformat header, stream analysis,
//               first frame decoded, per-asset limits.
//   FetchProbe  AssetReader::Read: both, as a request does for each URL input.
// Needs the test support library (tests/support: TLS server, media fixtures), so configure with
// tests on (the default).
#include "genhost/assets/fetcher.hpp"
#include "genhost/assets/resolver.hpp"
#include "support/media_fixtures.hpp"
#include "support/tls_server.hpp"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <memory>

namespace {

using genhost::MediaKind;
using genhost::assets::AssetReader;
using genhost::assets::Fetcher;

struct Setup {
    std::string dir;
    std::string image;  // ~1 MB PNG
    std::string video;  // ~10 MB MP4
    std::unique_ptr<genhost::testing::TlsTestServer> server;
    std::unique_ptr<Fetcher> fetcher;
    genhost::assets::NullUploadSource uploads;
    std::unique_ptr<AssetReader> reader;

    Setup() {
        char tmpl[] = "/tmp/genhost-assets-bench.XXXXXX";
        dir = mkdtemp(tmpl);
        image = genhost::testing::MakePng(600, 560, true);
        video = genhost::testing::MakeMp4(640, 360, 2.6, 10, true);  // about 10 MB
        const auto certs = genhost::testing::MakeTestCertificates({"assets.test"});
        server = std::make_unique<genhost::testing::TlsTestServer>(
            certs, [this](const genhost::testing::ReceivedRequest& r) {
                if (r.target == "/image.png")
                    return genhost::testing::Reply(200, "image/png", image);
                return genhost::testing::Reply(200, "video/mp4", video);
            });
        std::ofstream(dir + "/ca.pem") << certs.ca_pem;
        genhost::assets::FetcherOptions options;
        options.system_cas = false;
        options.test_ca_file = dir + "/ca.pem";
        options.test_hosts["assets.test"] = {"127.0.0.1", server->port()};
        fetcher = std::make_unique<Fetcher>(options);
        genhost::assets::AssetLimits limits;
        reader = std::make_unique<AssetReader>(*fetcher, uploads, limits);
    }
    ~Setup() {
        server.reset();
        std::filesystem::remove_all(dir);
    }
};

Setup& Env() {
    static Setup setup;
    return setup;
}

struct Case {
    const char* url;
    MediaKind kind;
    const std::string& (*bytes)();
};

const std::string& ImageBytes() { return Env().image; }
const std::string& VideoBytes() { return Env().video; }

const Case kImage{"https://assets.test/image.png", MediaKind::kImage, &ImageBytes};
const Case kVideo{"https://assets.test/video.mp4", MediaKind::kVideo, &VideoBytes};

void Fetch(benchmark::State& state, const Case& c) {
    Setup& env = Env();
    const std::string dest = env.dir + "/fetched";
    for (auto _ : state) {
        auto r = env.fetcher->Fetch(c.url, c.kind, 64ull << 20, dest);
        if (!r) state.SkipWithError(r.error().message.c_str());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes().size()));
    state.counters["bytes"] = static_cast<double>(c.bytes().size());
}

void Probe(benchmark::State& state, const Case& c) {
    Setup& env = Env();
    const std::string path = env.dir + "/probe";
    std::ofstream(path, std::ios::binary) << c.bytes();
    const std::string type = c.kind == MediaKind::kImage ? "image/png" : "video/mp4";
    for (auto _ : state) {
        auto r = env.reader->Probe(path, c.kind, type);
        if (!r) state.SkipWithError(r.error().message.c_str());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes().size()));
}

void FetchProbe(benchmark::State& state, const Case& c) {
    Setup& env = Env();
    const std::string dest = env.dir + "/read";
    for (auto _ : state) {
        auto r = env.reader->Read(c.url, c.kind, "", dest);
        if (!r) state.SkipWithError(r.error().message.c_str());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes().size()));
}

BENCHMARK_CAPTURE(Fetch, image_1MB, kImage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(Fetch, video_10MB, kVideo)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(Probe, image_1MB, kImage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(Probe, video_10MB, kVideo)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(FetchProbe, image_1MB, kImage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(FetchProbe, video_10MB, kVideo)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
