// genhost/tasks/avatar_processor.hpp
//
// Provides AvatarProcessor, the `avatar` kind of the job engine (job_engine.hpp), which turns
// PROCESSING avatars READY or FAILED (docs/avatars.md). Every create and update queues a job for
// the avatar's new revision (migrations/0007_jobs.sql); any node's engine runs it under a lease
// (a node that dies leaves it to another once the lease expires). The job reads the reference
// image (from the output store, or fetched first when the request left a URL for later), makes
// the portrait avatar videos are drawn from (ProcessAvatarImage) and two low-resolution
// previews, stores them, and completes the revision by compare-and-set. An image that cannot be
// read or decoded ends the avatar FAILED with a reason a person can read; a job that fails for
// good otherwise (its runs kept dying) ends it FAILED too.
#pragma once

#include "genhost/media/video.hpp"
#include "genhost/outputs/output_store.hpp"
#include "genhost/providers/provider.hpp"
#include "genhost/store/avatars_repo.hpp"
#include "genhost/tasks/job_engine.hpp"

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
    std::string scratch_root;  // private folders for fetched and read images
};

class AvatarProcessor {
  public:
    // `fetch` reads a URL a request left for later (offline fetching) into a scratch folder.
    AvatarProcessor(AvatarProcessorOptions options, store::AvatarRepo& repo,
                    outputs::OutputStore& outputs, const providers::InputResolver& fetch);

    // Kind is the `avatar` job kind to register with the engine.
    JobKind Kind();

  private:
    // ProcessOne works on `claim` and ends it READY or FAILED.
    void ProcessOne(const store::AvatarClaim& claim);

    AvatarProcessorOptions options_;
    store::AvatarRepo& repo_;
    outputs::OutputStore& outputs_;
    const providers::InputResolver& fetch_;
};

}  // namespace genhost::tasks
