// Tests for genhost/core/ids.hpp: NewUuid makes canonical lowercase random v4 UUIDs, and
// IsUuid / IsUuidV4 accept exactly the canonical 8-4-4-4-12 form (v4 with an RFC 4122 variant
// for the latter).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "genhost/core/ids.hpp"

namespace genhost {
namespace {

TEST(NewUuid, IsCanonicalLowercaseV4) {
    for (int i = 0; i < 1000; ++i) {
        const std::string id = NewUuid();
        ASSERT_EQ(id.size(), 36u);
        EXPECT_THAT(id, ::testing::MatchesRegex(
                            "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
        EXPECT_TRUE(IsUuid(id)) << id;
        EXPECT_TRUE(IsUuidV4(id)) << id;
    }
}

TEST(NewUuid, IsUniqueOverManyCalls) {
    std::set<std::string> seen;
    constexpr int kCount = 20000;
    for (int i = 0; i < kCount; ++i) seen.insert(NewUuid());
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(kCount));
}

TEST(NewUuid, UsesEveryVariantNibble) {
    // The variant nibble carries two random bits: 8, 9, a and b all turn up.
    std::set<char> variants;
    for (int i = 0; i < 400; ++i) variants.insert(NewUuid()[19]);
    EXPECT_EQ(variants, (std::set<char>{'8', '9', 'a', 'b'}));
}

std::uint64_t NowMs() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

// The milliseconds NewOrderedUuid wrote into the first 48 bits of `id`.
std::uint64_t IdMs(const std::string& id) {
    return std::stoull(id.substr(0, 8) + id.substr(9, 4), nullptr, 16);
}

TEST(NewOrderedUuid, IsCanonicalLowercaseV4CarryingTheTime) {
    const std::uint64_t before = NowMs();
    std::vector<std::string> ids;
    for (int i = 0; i < 1000; ++i) ids.push_back(NewOrderedUuid());
    const std::uint64_t after = NowMs();
    for (const auto& id : ids) {
        EXPECT_THAT(id, ::testing::MatchesRegex(
                            "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
        EXPECT_TRUE(IsUuidV4(id)) << id;
        EXPECT_GE(IdMs(id), before) << id;
        EXPECT_LE(IdMs(id), after) << id;
    }
}

TEST(NewOrderedUuid, LaterIdsSortLaterAndAllAreDistinct) {
    // PostgreSQL orders uuids by their bytes, which is the order of their lowercase text.
    const std::string first = NewOrderedUuid();
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    const std::string second = NewOrderedUuid();
    EXPECT_LT(first, second);
    EXPECT_LT(IdMs(first), IdMs(second));

    std::set<std::string> seen;
    std::set<std::string> tails;  // what follows the time: random
    constexpr int kCount = 20000;
    for (int i = 0; i < kCount; ++i) {
        const std::string id = NewOrderedUuid();
        seen.insert(id);
        tails.insert(id.substr(14));
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(kCount));
    EXPECT_EQ(tails.size(), static_cast<std::size_t>(kCount));
}

TEST(NewRequestId, IsCanonicalLowercaseV4AndUniqueWithinAndAcrossThreads) {
    std::set<std::string> seen;
    std::mutex mu;
    constexpr int kThreads = 4;
    constexpr int kEach = 20000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            std::vector<std::string> mine;
            for (int i = 0; i < kEach; ++i) mine.push_back(NewRequestId());
            std::lock_guard lock(mu);
            seen.insert(mine.begin(), mine.end());
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(kThreads * kEach));
    std::set<char> variants;
    for (const auto& id : seen) {
        ASSERT_TRUE(IsUuidV4(id)) << id;
        ASSERT_EQ(id.find_first_of("ABCDEF"), std::string::npos) << id;
        variants.insert(id[19]);
    }
    EXPECT_EQ(variants, (std::set<char>{'8', '9', 'a', 'b'}));
}

TEST(IsUuid, AcceptsCanonicalFormInEitherCase) {
    EXPECT_TRUE(IsUuid("123e4567-e89b-12d3-a456-426614174000"));  // v1
    EXPECT_TRUE(IsUuid("00000000-0000-0000-0000-000000000000"));  // nil
    EXPECT_TRUE(IsUuid("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"));
    EXPECT_TRUE(IsUuid("6F9619FF-8B86-D011-B42D-00C04FC964FF"));
}

TEST(IsUuid, RejectsOtherShapes) {
    EXPECT_FALSE(IsUuid(""));
    EXPECT_FALSE(IsUuid("123e4567e89b12d3a456426614174000"));        // no dashes
    EXPECT_FALSE(IsUuid("{123e4567-e89b-12d3-a456-426614174000}"));  // braces
    EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-42661417400"));     // short
    EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-4266141740000"));   // long
    EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456_426614174000"));    // wrong separator
    EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a4564-26614174000"));    // dash moved
    EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-42661417400g"));    // non-hex
    EXPECT_FALSE(IsUuid(" 23e4567-e89b-12d3-a456-426614174000"));
    EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-42661417400 "));
    EXPECT_FALSE(IsUuid("urn:uuid:123e4567-e89b-12d3-a456-426614174000"));
    EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-42661417400\xc3"));
    EXPECT_FALSE(IsUuid(std::string_view("123e4567-e89b-12d3-a456-42661417400\0", 36)));
}

TEST(IsUuidV4, AcceptsVersion4WithRfc4122Variant) {
    for (const char variant : {'8', '9', 'a', 'b', 'A', 'B'}) {
        std::string id = "f47ac10b-58cc-4372-a567-0e02b2c3d479";
        id[19] = variant;
        EXPECT_TRUE(IsUuidV4(id)) << id;
    }
    EXPECT_TRUE(IsUuidV4("F47AC10B-58CC-4372-A567-0E02B2C3D479"));
}

TEST(IsUuidV4, RejectsOtherVersions) {
    for (const char version : {'0', '1', '2', '3', '5', '6', '7', '8', 'f'}) {
        std::string id = "f47ac10b-58cc-4372-a567-0e02b2c3d479";
        id[14] = version;
        EXPECT_TRUE(IsUuid(id));
        EXPECT_FALSE(IsUuidV4(id)) << id;
    }
}

TEST(IsUuidV4, RejectsOtherVariants) {
    for (const char variant : {'0', '7', 'c', 'd', 'e', 'f', 'C'}) {
        std::string id = "f47ac10b-58cc-4372-a567-0e02b2c3d479";
        id[19] = variant;
        EXPECT_FALSE(IsUuidV4(id)) << id;
    }
}

TEST(IsUuidV4, RejectsMalformed) {
    EXPECT_FALSE(IsUuidV4(""));
    EXPECT_FALSE(IsUuidV4("f47ac10b58cc4372a5670e02b2c3d479"));
    EXPECT_FALSE(IsUuidV4("f47ac10b-58cc-4372-a567-0e02b2c3d47"));
    EXPECT_FALSE(IsUuidV4("f47ac10b-58cc-4372-a567-0e02b2c3d47z"));
    EXPECT_FALSE(IsUuidV4("00000000-0000-0000-0000-000000000000"));
}

}  // namespace
}  // namespace genhost
