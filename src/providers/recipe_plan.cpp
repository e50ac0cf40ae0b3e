#include "recipe_plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace genhost::providers::recipes {
namespace {

std::string Trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(first, last - first + 1));
}

std::vector<std::string> Sentences(std::string_view story) {
    std::vector<std::string> out;
    std::string current;
    const auto flush = [&] {
        std::string t = Trim(current);
        if (!t.empty()) out.push_back(std::move(t));
        current.clear();
    };
    for (std::size_t i = 0; i < story.size(); ++i) {
        const char c = story[i];
        current.push_back(c);
        if (c == '.' || c == '!' || c == '?' || c == ';' || c == '\n') {
            flush();
            continue;
        }
        // The ideographic full stop and the full-width ! and ? (UTF-8: E3 80 82, EF BC 81, EF BC
        // 9F).
        if (i + 2 < story.size()) {
            const std::string_view three = story.substr(i, 3);
            if (three == "\xE3\x80\x82" || three == "\xEF\xBC\x81" || three == "\xEF\xBC\x9F") {
                current.append(story.substr(i + 1, 2));
                i += 2;
                flush();
            }
        }
    }
    flush();
    return out;
}

}  // namespace

std::string ShotFraming(int index, int count) {
    if (index == 0) return "Establishing wide shot";
    if (index == count - 1) return "Closing wide shot";
    static constexpr std::array<const char*, 3> kMiddle = {"Medium shot", "Close-up",
                                                           "Detail shot"};
    return kMiddle[static_cast<std::size_t>(index - 1) % kMiddle.size()];
}

std::vector<std::string> SplitStory(std::string_view story, int count) {
    count = std::max(1, count);
    std::vector<std::string> sentences = Sentences(story);
    if (sentences.empty()) sentences.push_back(Trim(story));
    const int n = static_cast<int>(sentences.size());
    std::vector<std::string> groups(static_cast<std::size_t>(count));
    if (n >= count) {
        for (int j = 0; j < n; ++j) {
            auto& group = groups[static_cast<std::size_t>(static_cast<long long>(j) * count / n)];
            if (!group.empty()) group += ' ';
            group += sentences[static_cast<std::size_t>(j)];
        }
    } else {
        for (int i = 0; i < count; ++i) {
            groups[static_cast<std::size_t>(i)] =
                sentences[static_cast<std::size_t>(static_cast<long long>(i) * n / count)];
        }
    }
    std::vector<std::string> prompts;
    for (int i = 0; i < count; ++i) {
        prompts.push_back(ShotFraming(i, count) + ": " + groups[static_cast<std::size_t>(i)]);
    }
    return prompts;
}

std::vector<int> AllocateFrames(const std::vector<double>& seconds, int fps) {
    std::vector<int> frames;
    double cumulative = 0;
    long long previous = 0;
    for (const double s : seconds) {
        cumulative += std::max(0.0, s);
        const long long boundary = std::llround(cumulative * fps);
        frames.push_back(static_cast<int>(boundary - previous));
        previous = boundary;
    }
    for (auto& f : frames) {
        if (f >= 1) continue;
        auto longest = std::max_element(frames.begin(), frames.end());
        if (*longest <= 1) {
            f = 1;  // nothing to take from: the total grows by a frame
            continue;
        }
        --*longest;
        f = 1;
    }
    return frames;
}

std::vector<double> EqualShots(double total_seconds, int count) {
    count = std::max(1, count);
    return std::vector<double>(static_cast<std::size_t>(count), total_seconds / count);
}

Matte KeyOutBackground(const media::RgbImage& photo) {
    Matte matte{photo, std::vector<std::uint8_t>(
                           static_cast<std::size_t>(photo.width) * photo.height, 255)};
    if (photo.width < 4 || photo.height < 4) return matte;
    // The border's pixels: the outermost two rows and columns.
    std::array<std::vector<int>, 3> border;
    const auto take = [&](int x, int y) {
        const std::uint8_t* p = photo.Row(y) + 3 * x;
        for (int c = 0; c < 3; ++c) border[c].push_back(p[c]);
    };
    for (int x = 0; x < photo.width; ++x) {
        for (const int y : {0, 1, photo.height - 2, photo.height - 1}) take(x, y);
    }
    for (int y = 2; y < photo.height - 2; ++y) {
        for (const int x : {0, 1, photo.width - 2, photo.width - 1}) take(x, y);
    }
    std::array<int, 3> key{};
    for (int c = 0; c < 3; ++c) {
        auto& v = border[c];
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        key[c] = v[v.size() / 2];
    }
    // Uniform enough: most border pixels lie near the median.
    std::size_t near = 0;
    const std::size_t total = border[0].size();
    for (std::size_t i = 0; i < total; ++i) {
        int d = 0;
        for (int c = 0; c < 3; ++c) d += std::abs(border[c][i] - key[c]);
        if (d <= 60) ++near;
    }
    if (near * 10 < total * 8) return matte;  // a busy border: keep the picture whole
    constexpr int kInside = 40;               // colour distance (sum of |dr|+|dg|+|db|) keyed out
    constexpr int kOutside = 110;             // and fully kept, with a ramp between
    for (int y = 0; y < photo.height; ++y) {
        const std::uint8_t* p = photo.Row(y);
        for (int x = 0; x < photo.width; ++x) {
            const int d = std::abs(p[3 * x] - key[0]) + std::abs(p[3 * x + 1] - key[1]) +
                          std::abs(p[3 * x + 2] - key[2]);
            const int a = d <= kInside    ? 0
                          : d >= kOutside ? 255
                                          : (d - kInside) * 255 / (kOutside - kInside);
            matte.alpha[static_cast<std::size_t>(y) * photo.width + x] =
                static_cast<std::uint8_t>(a);
        }
    }
    return matte;
}

Matte ResizeMatte(const Matte& matte, int width, int height) {
    width = std::max(1, width);
    height = std::max(1, height);
    media::RgbImage alpha(matte.rgb.width, matte.rgb.height);
    for (std::size_t i = 0; i < matte.alpha.size(); ++i) {
        alpha.pixels[3 * i] = alpha.pixels[3 * i + 1] = alpha.pixels[3 * i + 2] = matte.alpha[i];
    }
    Matte out;
    out.rgb = media::Resize(matte.rgb, width, height);
    const media::RgbImage scaled = media::Resize(alpha, width, height);
    out.alpha.resize(static_cast<std::size_t>(width) * height);
    for (std::size_t i = 0; i < out.alpha.size(); ++i) out.alpha[i] = scaled.pixels[3 * i];
    return out;
}

void Composite(const Matte& matte, int x, int y, double opacity, media::RgbImage& frame) {
    const int scale = static_cast<int>(std::lround(std::clamp(opacity, 0.0, 1.0) * 256));
    for (int row = 0; row < matte.rgb.height; ++row) {
        const int fy = y + row;
        if (fy < 0 || fy >= frame.height) continue;
        const std::uint8_t* src = matte.rgb.Row(row);
        std::uint8_t* dst = frame.Row(fy);
        for (int col = 0; col < matte.rgb.width; ++col) {
            const int fx = x + col;
            if (fx < 0 || fx >= frame.width) continue;
            const int a =
                matte.alpha[static_cast<std::size_t>(row) * matte.rgb.width + col] * scale / 256;
            if (a == 0) continue;
            for (int c = 0; c < 3; ++c) {
                const int s = src[3 * col + c];
                const int d = dst[3 * fx + c];
                dst[3 * fx + c] = static_cast<std::uint8_t>(d + ((s - d) * a + 127) / 255);
            }
        }
    }
}

Box LocateProduct(const media::RgbImage& frame, const media::RgbImage& product) {
    constexpr int kSmallWidth = 96;
    if (frame.width < 2 || frame.height < 2 || product.width < 1 || product.height < 1) {
        return {0, 0, frame.width, frame.height};
    }
    const int sw = std::min(kSmallWidth, frame.width);
    const int sh = std::max(
        2, static_cast<int>(std::lround(static_cast<double>(frame.height) * sw / frame.width)));
    const media::RgbImage small = media::Resize(frame, sw, sh);
    const double aspect = static_cast<double>(product.width) / product.height;
    double best = std::numeric_limits<double>::max();
    Box best_box{sw / 4, sh / 4, sw / 2, sh / 2};
    for (const double fraction : {0.3, 0.45, 0.6, 0.8}) {
        int th = std::max(2, static_cast<int>(std::lround(sh * fraction)));
        int tw = std::max(2, static_cast<int>(std::lround(th * aspect)));
        if (tw > sw) {
            tw = sw;
            th = std::max(2, static_cast<int>(std::lround(tw / aspect)));
        }
        if (th > sh) continue;
        const media::RgbImage t = media::Resize(product, tw, th);
        for (int y = 0; y + th <= sh; y += 2) {
            for (int x = 0; x + tw <= sw; x += 2) {
                long long sum = 0;
                for (int row = 0; row < th; ++row) {
                    const std::uint8_t* a = small.Row(y + row) + 3 * x;
                    const std::uint8_t* b = t.Row(row);
                    for (int i = 0; i < 3 * tw; ++i) sum += std::abs(a[i] - b[i]);
                }
                const double mean = static_cast<double>(sum) / (3.0 * tw * th);
                if (mean < best - 1e-9) {
                    best = mean;
                    best_box = {x, y, tw, th};
                }
            }
        }
    }
    const double s = static_cast<double>(frame.width) / sw;
    Box box;
    box.x = std::clamp(static_cast<int>(std::lround(best_box.x * s)), 0, frame.width - 1);
    box.y = std::clamp(static_cast<int>(std::lround(best_box.y * frame.height / double(sh))), 0,
                       frame.height - 1);
    box.width =
        std::clamp(static_cast<int>(std::lround(best_box.width * s)), 1, frame.width - box.x);
    box.height =
        std::clamp(static_cast<int>(std::lround(best_box.height * frame.height / double(sh))), 1,
                   frame.height - box.y);
    return box;
}

}  // namespace genhost::providers::recipes
