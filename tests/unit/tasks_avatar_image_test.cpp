// ProcessAvatarImage: `optimize` makes a square portrait (upper part of a tall picture, centre of
// a wide one) between 512 and 1024 pixels and stretches a flat picture's levels; `none` only
// scales a picture down to fit 1024 pixels.
#include "genhost/tasks/avatar_processor.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace genhost::tasks {
namespace {

// Striped makes a w x h picture whose rows are coloured by their position (top: value `top`,
// bottom: `bottom`), so where a crop came from can be read off its pixels.
media::RgbImage Striped(int w, int h, int top = 0, int bottom = 255) {
    media::RgbImage img(w, h);
    for (int y = 0; y < h; ++y) {
        const auto v = static_cast<std::uint8_t>(top + (bottom - top) * y / std::max(1, h - 1));
        std::fill(img.Row(y), img.Row(y) + 3 * w, v);
    }
    return img;
}

std::pair<int, int> Range(const media::RgbImage& img) {
    const auto [lo, hi] = std::minmax_element(img.pixels.begin(), img.pixels.end());
    return {*lo, *hi};
}

TEST(AvatarImage, OptimizeCropsASquareAndKeepsItsSizeWithinBounds) {
    const auto wide = ProcessAvatarImage(Striped(1600, 800), true);
    EXPECT_EQ(wide.width, 800);
    EXPECT_EQ(wide.height, 800);
    const auto large = ProcessAvatarImage(Striped(3000, 4000), true);
    EXPECT_EQ(large.width, kAvatarPortraitSide);
    EXPECT_EQ(large.height, kAvatarPortraitSide);
    const auto small = ProcessAvatarImage(Striped(300, 200), true);
    EXPECT_EQ(small.width, 512);  // enlarged to the smallest portrait
    EXPECT_EQ(small.height, 512);
}

TEST(AvatarImage, OptimizeKeepsTheUpperPartOfATallPicture) {
    // 600 x 1200: the square starts a fifth of the spare height down (row 120), not at the top
    // (row 0) nor the middle (row 300). Its first row then has value 120 * 255 / 1199 = 25.
    const auto out = ProcessAvatarImage(Striped(600, 1200), true);
    ASSERT_EQ(out.width, 600);
    const int first = out.Row(0)[0];
    EXPECT_NEAR(first, 25, 3);
}

TEST(AvatarImage, OptimizeStretchesAFlatPicture) {
    const auto flat = Striped(800, 800, 90, 170);
    const auto out = ProcessAvatarImage(flat, true);
    const auto [lo, hi] = Range(out);
    EXPECT_LT(lo, 70);
    EXPECT_GT(hi, 190);
    // A picture that already spans the range is left as it is.
    const auto full = ProcessAvatarImage(Striped(800, 800), true);
    EXPECT_EQ(full.pixels, Striped(800, 800).pixels);
}

TEST(AvatarImage, NoneOnlyScalesDown) {
    const auto big = ProcessAvatarImage(Striped(3000, 1500, 90, 170), false);
    EXPECT_EQ(big.width, 1024);
    EXPECT_EQ(big.height, 512);
    const auto [lo, hi] = Range(big);
    EXPECT_GE(lo, 89);  // levels untouched
    EXPECT_LE(hi, 171);
    const auto small = ProcessAvatarImage(Striped(300, 200), false);
    EXPECT_EQ(small.width, 300);
    EXPECT_EQ(small.height, 200);
}

}  // namespace
}  // namespace genhost::tasks
