#include "genhost/tasks/avatar_processor.hpp"

#include "job_files.hpp"

#include "genhost/core/ids.hpp"
#include "genhost/media/image.hpp"
#include "genhost/store/database.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace genhost::tasks {

namespace fs = std::filesystem;

namespace {

// FitInside returns the size of a w x h picture scaled down (never up) to fit side x side,
// both even (the JPEG encoder's 4:2:0 sampling).
std::pair<int, int> FitInside(int w, int h, int side) {
    double scale = std::min(1.0, static_cast<double>(side) / std::max(w, h));
    const int fw = std::max(2, static_cast<int>(w * scale) & ~1);
    const int fh = std::max(2, static_cast<int>(h * scale) & ~1);
    return {fw, fh};
}

media::RgbImage Crop(const media::RgbImage& source, int x0, int y0, int w, int h) {
    media::RgbImage out(w, h);
    for (int y = 0; y < h; ++y) {
        const std::uint8_t* from = source.Row(y0 + y) + std::size_t(3) * x0;
        std::copy(from, from + std::size_t(3) * w, out.Row(y));
    }
    return out;
}

// StretchLevels widens the picture's luma range to the full scale when it is flat (a hazy or
// dim photo): the 0.5th and 99.5th percentiles of luma go to 0 and 255, by at most 1.6 times.
void StretchLevels(media::RgbImage& image) {
    std::array<std::uint64_t, 256> histogram{};
    const std::size_t pixels = std::size_t(image.width) * image.height;
    for (std::size_t i = 0; i < pixels; ++i) {
        const std::uint8_t* p = image.pixels.data() + 3 * i;
        ++histogram[(54 * p[0] + 183 * p[1] + 19 * p[2]) >> 8];  // BT.709 weights
    }
    const std::uint64_t cut = pixels / 200;
    int lo = 0;
    int hi = 255;
    for (std::uint64_t seen = 0; lo < 255 && seen + histogram[lo] <= cut; ++lo) {
        seen += histogram[lo];
    }
    for (std::uint64_t seen = 0; hi > 0 && seen + histogram[hi] <= cut; --hi) {
        seen += histogram[hi];
    }
    if (hi - lo >= 230 || hi - lo < 16) return;  // already full, or a flat picture
    // Gain in 16.16 fixed point, capped at 1.6.
    const int gain = std::min((255 << 16) / (hi - lo), (16 << 16) / 10);
    const int mid = (lo + hi) / 2;
    std::array<std::uint8_t, 256> map{};
    for (int v = 0; v < 256; ++v) {
        map[v] = static_cast<std::uint8_t>(std::clamp(128 + (((v - mid) * gain) >> 16), 0, 255));
    }
    for (auto& v : image.pixels) v = map[v];
}

}  // namespace

std::string AvatarFolder(std::string_view id) { return "avatar-" + LowerUuid(id); }

media::RgbImage ProcessAvatarImage(const media::RgbImage& source, bool optimize) {
    if (!optimize) {
        const auto [w, h] = FitInside(source.width, source.height, kAvatarPortraitSide);
        if (w == source.width && h == source.height) return source;
        return media::Resize(source, w, h);
    }
    const int side = std::min(source.width, source.height);
    const int x0 = (source.width - side) / 2;
    // A taller picture keeps its upper part: a portrait's head sits above the middle.
    const int y0 = (source.height - side) / 5;
    media::RgbImage square = Crop(source, x0, y0, side, side);
    const int out_side = std::clamp(side, 512, kAvatarPortraitSide) & ~1;
    media::RgbImage out =
        out_side == side ? std::move(square) : media::Resize(square, out_side, out_side);
    StretchLevels(out);
    return out;
}

AvatarProcessor::AvatarProcessor(AvatarProcessorOptions options, store::AvatarRepo& repo,
                                 outputs::OutputStore& outputs,
                                 const providers::InputResolver& fetch)
    : options_(std::move(options)), repo_(repo), outputs_(outputs), fetch_(fetch) {}

JobKind AvatarProcessor::Kind() {
    JobKind kind;
    kind.run = [this](const store::JobClaim& job, const std::atomic<bool>&) {
        const auto claim = repo_.LoadClaimSync(job.subject, job.revision);
        // Deleted, or changed since (its new revision has a job of its own): nothing to do.
        if (claim) ProcessOne(*claim);
        return JobResult::Done();
    };
    kind.failed = [this](const store::JobClaim& job, const std::string& reason) {
        spdlog::error("avatar {} revision {}: processing failed for good: {}", job.subject,
                      job.revision, reason);
        if (const auto claim = repo_.LoadClaimSync(job.subject, job.revision)) {
            repo_.FailSync(*claim, "The reference image could not be processed (internal error)");
        }
    };
    return kind;
}

void AvatarProcessor::ProcessOne(const store::AvatarClaim& claim) {
    const std::string folder = AvatarFolder(claim.id);
    std::string reason;
    std::string portrait_jpeg;
    try {
        JobScratch scratch(options_.scratch_root, "avatar");
        fs::path source_path;
        std::string source_bytes;
        if (!claim.source_uri.empty()) {
            // The request left the URL for later: fetch it, keep it as this avatar's source.
            source_path = fetch_.Resolve(claim.source_uri, MediaKind::kImage, scratch.path);
            source_bytes = ReadWholeFile(source_path);
            const std::string name = "source-" + NewUuid().substr(0, 8);
            outputs_.Put(folder, name, source_bytes);
            if (!repo_.SourceStoredSync(claim, name)) {
                outputs_.DeleteObject(folder, name);
                return;  // updated, deleted or taken over meanwhile
            }
        } else {
            const auto info = outputs_.Stat(folder, claim.source_name);
            if (claim.source_name.empty() || !info) {
                throw providers::TaskFailure("ASSET.INVALID",
                                             "The reference image is no longer stored");
            }
            source_bytes = outputs_.Read(folder, claim.source_name, 0, info->size);
            source_path = scratch.path / "source";
            WriteWholeFile(source_path, source_bytes);
        }
        const media::RgbImage source = media::LoadImageRgb(source_path.string(), 4096, 4096);
        const media::RgbImage portrait =
            ProcessAvatarImage(source, claim.image_processing != "none");
        portrait_jpeg = media::EncodePicture(portrait, media::ImageFormat::kJpeg);
        const auto [rw, rh] = FitInside(source.width, source.height, kAvatarPreviewSide);
        const auto [pw, ph] = FitInside(portrait.width, portrait.height, kAvatarPreviewSide);
        outputs_.Put(
            folder, "reference.jpg",
            media::EncodePicture(media::Resize(source, rw, rh), media::ImageFormat::kJpeg));
        outputs_.Put(
            folder, "processed.jpg",
            media::EncodePicture(media::Resize(portrait, pw, ph), media::ImageFormat::kJpeg));
    } catch (const providers::TaskFailure& e) {
        reason = e.what();
    } catch (const media::MediaError& e) {
        reason = std::string("The reference image could not be decoded: ") + e.what();
    } catch (const store::DatabaseUnavailable&) {
        throw;  // the lease runs out and another run (or node) takes the avatar again
    } catch (const std::exception& e) {
        spdlog::error("avatar {}: processing failed: {}", claim.id, e.what());
        reason = "The reference image could not be processed (internal error)";
    }
    const bool ended =
        reason.empty() ? repo_.CompleteSync(claim, portrait_jpeg) : repo_.FailSync(claim, reason);
    if (!ended && !repo_.ExistsSync(claim.id)) {
        // Deleted while it was processed: what this run stored has no avatar any more.
        outputs_.DeleteTask(folder);
    }
    spdlog::debug("avatar {} revision {}: {}", claim.id, claim.revision,
                  !ended ? "superseded" : (reason.empty() ? "READY" : "FAILED: " + reason));
}

}  // namespace genhost::tasks
