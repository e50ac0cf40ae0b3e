// Tests for the key helpers of genhost/auth/auth.hpp: the exact key format of SPEC.md
// (`key_` + 128 lowercase hex characters, nothing around it), the `Bearer <key>` header matrix,
// key generation, and hashing (raw SHA-256 of the whole key). Authenticator needs PostgreSQL and
// is covered by the pg and http suites.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "genhost/auth/auth.hpp"
#include "genhost/core/crypto.hpp"

namespace genhost::auth {
namespace {

// A well-formed key: key_ + 128 lowercase hex characters using every hex digit.
std::string GoodKey() {
    std::string hex;
    while (hex.size() < 128) hex += "0123456789abcdef";
    return "key_" + hex.substr(0, 128);
}

// --- IsWellFormedKey -----------------------------------------------------------------------

TEST(IsWellFormedKey, AcceptsTheExactFormat) {
    EXPECT_TRUE(IsWellFormedKey(GoodKey()));
    EXPECT_TRUE(IsWellFormedKey("key_" + std::string(128, '0')));
    EXPECT_TRUE(IsWellFormedKey("key_" + std::string(128, 'f')));
}

TEST(IsWellFormedKey, RejectsMissingOrWrongPrefix) {
    const std::string hex = GoodKey().substr(4);
    EXPECT_FALSE(IsWellFormedKey(hex));
    EXPECT_FALSE(IsWellFormedKey("KEY_" + hex));
    EXPECT_FALSE(IsWellFormedKey("Key_" + hex));
    EXPECT_FALSE(IsWellFormedKey("key-" + hex));
    EXPECT_FALSE(IsWellFormedKey("sk_" + hex + "0"));
    EXPECT_FALSE(IsWellFormedKey("keyy" + hex));
    EXPECT_FALSE(IsWellFormedKey("_key" + hex));
}

TEST(IsWellFormedKey, RejectsWrongLength) {
    EXPECT_FALSE(IsWellFormedKey(""));
    EXPECT_FALSE(IsWellFormedKey("key_"));
    EXPECT_FALSE(IsWellFormedKey("key_" + std::string(127, 'a')));
    EXPECT_FALSE(IsWellFormedKey("key_" + std::string(129, 'a')));
    EXPECT_FALSE(IsWellFormedKey("key_" + std::string(64, 'a')));
    EXPECT_FALSE(IsWellFormedKey("key_" + std::string(256, 'a')));
}

TEST(IsWellFormedKey, RejectsUppercaseHex) {
    std::string key = GoodKey();
    key[10] = 'A';
    EXPECT_FALSE(IsWellFormedKey(key));
    EXPECT_FALSE(IsWellFormedKey("key_" + std::string(128, 'F')));
}

TEST(IsWellFormedKey, RejectsNonHexCharactersAnywhere) {
    for (const char bad : {'g', 'z', 'G', '-', '_', ' ', '\t', '\0', '=', '.', '/'}) {
        for (const std::size_t pos : {std::size_t{4}, std::size_t{70}, std::size_t{131}}) {
            std::string key = GoodKey();
            key[pos] = bad;
            EXPECT_FALSE(IsWellFormedKey(key)) << "char " << static_cast<int>(bad) << " at " << pos;
        }
    }
}

TEST(IsWellFormedKey, RejectsSurroundingWhitespace) {
    EXPECT_FALSE(IsWellFormedKey(" " + GoodKey()));
    EXPECT_FALSE(IsWellFormedKey(GoodKey() + " "));
    EXPECT_FALSE(IsWellFormedKey(GoodKey() + "\n"));
    EXPECT_FALSE(IsWellFormedKey(" " + GoodKey().substr(0, 131)));  // same length, shifted
}

// --- ParseBearer ---------------------------------------------------------------------------

TEST(ParseBearer, ExtractsTheKey) {
    const std::string key = GoodKey();
    const std::string header = "Bearer " + key;
    const auto parsed = ParseBearer(header);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, key);
    // The view points into the header.
    EXPECT_EQ(parsed->data(), header.data() + 7);
}

struct BearerCase {
    std::string name;
    std::string header;
};

class ParseBearerRejects : public ::testing::TestWithParam<BearerCase> {};

TEST_P(ParseBearerRejects, Header) {
    EXPECT_EQ(ParseBearer(GetParam().header), std::nullopt) << GetParam().header;
}

std::vector<BearerCase> RejectedHeaders() {
    const std::string key = GoodKey();
    const std::string hex = key.substr(4);
    std::string upper = key;
    for (std::size_t i = 4; i < upper.size(); ++i)
        upper[i] = static_cast<char>(std::toupper(upper[i]));
    std::string nonhex = key;
    nonhex[50] = 'x';
    return {
        {"Empty", ""},
        {"BearerOnly", "Bearer"},
        {"BearerSpaceOnly", "Bearer "},
        {"KeyWithoutScheme", key},
        {"BearerWithoutSpace", "Bearer" + key},
        {"TwoSpaces", "Bearer  " + key},
        {"Tab", "Bearer\t" + key},
        {"LowercaseBearer", "bearer " + key},
        {"UppercaseBearer", "BEARER " + key},
        {"OtherScheme", "Basic " + key},
        {"TokenScheme", "Token " + key},
        {"LeadingSpace", " Bearer " + key},
        {"TrailingSpace", "Bearer " + key + " "},
        {"TrailingNewline", "Bearer " + key + "\r\n"},
        {"MissingPrefix", "Bearer " + hex},
        {"UppercasePrefix", "Bearer KEY_" + hex},
        {"UppercaseHex", "Bearer " + upper},
        {"Length127", "Bearer key_" + std::string(127, 'a')},
        {"Length129", "Bearer key_" + std::string(129, 'a')},
        {"NonHex", "Bearer " + nonhex},
        {"TwoKeys", "Bearer " + key + "," + key},
        {"Quoted", "Bearer \"" + key + "\""},
    };
}

INSTANTIATE_TEST_SUITE_P(Matrix, ParseBearerRejects, ::testing::ValuesIn(RejectedHeaders()),
                         [](const auto& info) { return info.param.name; });

// --- GenerateKey ---------------------------------------------------------------------------

TEST(GenerateKey, IsWellFormed) {
    for (int i = 0; i < 200; ++i) {
        const std::string key = GenerateKey();
        ASSERT_EQ(key.size(), 132u);
        EXPECT_TRUE(key.starts_with("key_"));
        EXPECT_THAT(key, ::testing::MatchesRegex("key_[0-9a-f]+"));
        EXPECT_TRUE(IsWellFormedKey(key)) << key;
        EXPECT_EQ(ParseBearer("Bearer " + key), std::string_view(key));
    }
}

TEST(GenerateKey, IsUnique) {
    std::set<std::string> keys;
    for (int i = 0; i < 2000; ++i) keys.insert(GenerateKey());
    EXPECT_EQ(keys.size(), 2000u);
}

TEST(GenerateKey, UsesTheWholeHexAlphabet) {
    std::set<char> digits;
    for (int i = 0; i < 10; ++i) {
        const std::string key = GenerateKey();
        digits.insert(key.begin() + 4, key.end());
    }
    EXPECT_EQ(digits.size(), 16u);
}

// --- HashKey -------------------------------------------------------------------------------

TEST(HashKey, IsTheRawSha256OfTheWholeKey) {
    const std::string key = GoodKey();
    const std::string hash = HashKey(key);
    ASSERT_EQ(hash.size(), 32u);
    const auto digest = Sha256(key);
    EXPECT_EQ(hash, std::string(reinterpret_cast<const char*>(digest.data()), digest.size()));
    EXPECT_EQ(HexEncode(hash), HexEncode(Sha256(key)));
    // The prefix is part of what is hashed.
    EXPECT_NE(hash, HashKey(key.substr(4)));
}

TEST(HashKey, KnownValue) {
    // sha256("key_" + "0" * 128), computed independently (Python hashlib).
    EXPECT_EQ(HexEncode(HashKey("key_" + std::string(128, '0'))),
              "ce8f0e2d9a08561cc972d9aa50b8e1a51c9ee2fa5c9152ffff47a15080c72f7d");
    EXPECT_EQ(HexEncode(HashKey("abc")),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HashKey, IsDeterministicAndDistinguishesKeys) {
    const std::string a = GenerateKey();
    const std::string b = GenerateKey();
    EXPECT_EQ(HashKey(a), HashKey(a));
    EXPECT_NE(HashKey(a), HashKey(b));
    std::string c = a;
    c.back() = c.back() == '0' ? '1' : '0';
    EXPECT_NE(HashKey(a), HashKey(c));
}

}  // namespace
}  // namespace genhost::auth
