// The uploads and outputs feature (docs/uploads.md, docs/outputs.md, docs/assets.md): ephemeral
// uploads with their signing secret, folder and sweep; the signed output URLs; and the media
// inputs of requests (fetched, decoded or taken from uploads, probed, and kept in the input area,
// swept after 48 hours).
#include "genhost/api/upload_source.hpp"
#include "genhost/api/uploads_routes.hpp"
#include "genhost/assets/resolver.hpp"
#include "genhost/features/node.hpp"
#include "genhost/outputs/upload_folder.hpp"
#include "genhost/outputs/upload_policy.hpp"
#include "genhost/store/uploads_repo.hpp"
#include "genhost/tasks/upload_sweeper.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

namespace genhost::features {

void WireUploads(Node& node) {
    const config::Settings& s = node.settings();
    const std::filesystem::path data(s.data_dir);
    auto& repo = node.Own<store::UploadRepo>(node.db());
    auto& signer = node.Own<outputs::UploadPolicySigner>(
        node.SharedSecret("upload_policy_secret"), node.public_url(), SystemClock::Instance());
    auto& folder = node.Own<outputs::UploadFolder>(data / "inputs" / "uploads");
    tasks::UploadSweeperOptions sweep;
    sweep.interval =
        std::chrono::milliseconds(static_cast<long>(s.upload_sweep_interval_seconds * 1000));
    auto& sweeper = node.Own<tasks::UploadSweeper>(sweep, repo, folder);
    node.runtime().Every("upload sweep", sweep.interval, [&sweeper] { sweeper.Run(); });
    api::App& app = node.app();
    app.uploads.repo = &repo;
    app.uploads.signer = &signer;
    app.uploads.folder = &folder;
    app.uploads.max_bytes = s.upload_max_bytes;
    app.uploads.ttl_seconds = s.upload_ttl_seconds;

    // Media inputs: fetched, decoded or taken from uploads, probed, checked at request time on
    // the asset pool, and named by reference in the stored task.
    assets::FetcherOptions fetch;
    fetch.test_ca_file = s.fetch_test_ca;
    fetch.test_hosts = assets::ParseTestHosts(s.fetch_test_hosts);
    if (!fetch.test_ca_file.empty() || !fetch.test_hosts.empty()) {
        spdlog::warn("asset fetcher test settings are on (GENHOST_FETCH_TEST_CA / _HOSTS)");
    }
    const auto& fetcher = node.Own<assets::Fetcher>(fetch);
    auto& upload_source = node.Own<api::StoredUploads>(repo, folder);
    const auto& area = node.Own<assets::InputArea>((data / "inputs").string());
    const auto& reader =
        node.Own<assets::AssetReader>(fetcher, upload_source, assets::AssetLimits{});
    const auto& inputs = node.Own<assets::Resolver>(reader, area);
    app.inputs = &node.Own<assets::RequestInputs>(
        reader, area, assets::RequestInputsOptions{s.fetch_offline == 1, 4});
    app.input_files = &inputs;
    node.inputs = &inputs;
    node.runtime().Every("input sweep", std::chrono::minutes(10), [&area] {
        if (const std::size_t n = area.SweepOlderThan(std::chrono::hours(48))) {
            spdlog::info("removed the inputs of {} old task(s)", n);
        }
    });
    node.Routes(api::RegisterUploadRoutes);
    node.Routes(api::RegisterOutputRoutes);
}

}  // namespace genhost::features
