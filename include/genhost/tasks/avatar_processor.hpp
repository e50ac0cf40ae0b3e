// genhost/tasks/avatar_processor.hpp
//
// Provides AvatarProcessor, the background job that turns PROCESSING avatars READY or FAILED
// (docs/avatars.md): it claims one avatar at a time with a lease (store::AvatarRepo::ClaimSync;
// any node may run one, an avatar whose node died is claimed again once its lease expires),
// reads the reference image (from the output store, or fetched first when the request left a
// URL for later), makes the portrait avatar videos are drawn from (ProcessAvatarImage) and two
// low-resolution previews, stores them, and completes the claim. An image that cannot be read
// or decoded ends the avatar FAILED with a reason a person can read. Runs on its own thread;
// Kick wakes it right after a create or update so the avatar need not wait for the interval.
#pragma once

#include "genhost/media/video.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/providers/provider.hpp"
#include "genhost/store/avatars_repo.hpp"
#include "genhost/tasks/periodic.hpp"

#include <chrono>
#include <string>

namespace genhost::tasks {

// The longest side of a processed portrait and of the previews, in pixels.
inline constexpr int kAvatarPortraitSide = 1024;
inline constexpr int kAvatarPreviewSide = 256;

// ProcessAvatarImage makes an avatar's portrait from its decoded reference picture. `optimize`
// frames it as a square head-and-shoulders crop (centred across, from a little above the middle
// down, as portrait photos are composed), stretches its levels when the picture is flat, and
// scales it to kAvatarPortraitSide; otherwise the picture is only scaled down to fit that side.
media::RgbImage ProcessAvatarImage(const media::RgbImage& source, bool optimize);

// AvatarFolder is the output store folder of avatar `id`'s pictures.
std::string AvatarFolder(std::string_view id);

struct AvatarProcessorOptions {
    std::chrono::milliseconds interval{2000};  // how often unclaimed work is looked for
    int lease_seconds = 120;                   // one avatar's processing, fetch included
    std::string owner;                         // this node's lease owner name
    std::string scratch_root;                  // private folders for fetched and read images
};

class AvatarProcessor {
  public:
    // `fetch` reads a URL a request left for later (offline fetching) into a scratch folder.
    AvatarProcessor(AvatarProcessorOptions options, store::AvatarRepo& repo,
                    outputs::OutputStore& outputs, const providers::InputResolver& fetch);

    void Start();
    void Stop();
    void Kick();

    // ProcessAvailable processes avatars until none is left to claim; returns how many it
    // ended (READY or FAILED). Throws what the repository throws.
    int ProcessAvailable();

  private:
    // ProcessOne works on `claim` and ends it READY or FAILED.
    void ProcessOne(const store::AvatarClaim& claim);

    AvatarProcessorOptions options_;
    store::AvatarRepo& repo_;
    outputs::OutputStore& outputs_;
    const providers::InputResolver& fetch_;
    Periodic job_;
};

}  // namespace genhost::tasks
