// Tests for the crypto helpers of genhost/core/crypto.hpp: SHA-256 (FIPS 180-2 examples),
// HMAC-SHA-256 (every case of RFC 4231), the hex and base64 codecs (RFC 4648 test vectors, round
// trips over every byte value, strict rejection of malformed input), ConstantTimeEqual and
// RandomBytes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "genhost/core/crypto.hpp"

namespace genhost {
namespace {

std::string Bytes(std::size_t n, unsigned char value) {
    return std::string(n, static_cast<char>(value));
}

std::string AllBytes() {
    std::string s;
    for (int i = 0; i < 256; ++i) s += static_cast<char>(i);
    return s;
}

// --- SHA-256 -------------------------------------------------------------------------------

TEST(Sha256, EmptyString) {
    EXPECT_EQ(HexEncode(Sha256("")),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) {
    EXPECT_EQ(HexEncode(Sha256("abc")),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, TwoBlockMessage) {
    EXPECT_EQ(HexEncode(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, OneMillionA) {
    EXPECT_EQ(HexEncode(Sha256(std::string(1000000, 'a'))),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, HandlesEmbeddedNulBytes) {
    const std::string with_nul("a\0b", 3);
    EXPECT_NE(Sha256(with_nul), Sha256("a"));
    EXPECT_NE(Sha256(with_nul), Sha256("ab"));
    EXPECT_EQ(Sha256(with_nul), Sha256(std::string("a\0b", 3)));
}

// --- HMAC-SHA-256, RFC 4231 section 4 ------------------------------------------------------

TEST(HmacSha256, Rfc4231Case1) {
    EXPECT_EQ(HexEncode(HmacSha256(Bytes(20, 0x0b), "Hi There")),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(HmacSha256, Rfc4231Case2ShortKey) {
    EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(HmacSha256, Rfc4231Case3) {
    EXPECT_EQ(HexEncode(HmacSha256(Bytes(20, 0xaa), Bytes(50, 0xdd))),
              "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
}

TEST(HmacSha256, Rfc4231Case4) {
    std::string key;
    for (int i = 1; i <= 25; ++i) key += static_cast<char>(i);
    EXPECT_EQ(HexEncode(HmacSha256(key, Bytes(50, 0xcd))),
              "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
}

TEST(HmacSha256, Rfc4231Case5Truncated) {
    EXPECT_EQ(HexEncode(HmacSha256(Bytes(20, 0x0c), "Test With Truncation")).substr(0, 32),
              "a3b6167473100ee06e0c796c2955552b");
}

TEST(HmacSha256, Rfc4231Case6KeyLargerThanBlock) {
    EXPECT_EQ(HexEncode(HmacSha256(Bytes(131, 0xaa),
                                   "Test Using Larger Than Block-Size Key - Hash Key First")),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HmacSha256, Rfc4231Case7KeyAndDataLargerThanBlock) {
    EXPECT_EQ(HexEncode(HmacSha256(
                  Bytes(131, 0xaa),
                  "This is a test using a larger than block-size key and a larger than "
                  "block-size data. The key needs to be hashed before being used by the HMAC "
                  "algorithm.")),
              "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256, EmptyKeyAndDataIsDefined) {
    // Known value (Python: hmac.new(b"", b"", sha256)).
    EXPECT_EQ(HexEncode(HmacSha256("", "")),
              "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

TEST(HmacSha256, KeyAndDataMatter) {
    EXPECT_NE(HmacSha256("k1", "data"), HmacSha256("k2", "data"));
    EXPECT_NE(HmacSha256("key", "d1"), HmacSha256("key", "d2"));
}

// --- Hex -----------------------------------------------------------------------------------

TEST(Hex, EncodesLowercase) {
    EXPECT_EQ(HexEncode(std::string_view("\x00\x01\xab\xff", 4)), "0001abff");
    EXPECT_EQ(HexEncode(std::string_view()), "");
}

TEST(Hex, EncodesDigestAs64Chars) {
    const std::string hex = HexEncode(Sha256("x"));
    EXPECT_EQ(hex.size(), 64u);
    EXPECT_THAT(hex, ::testing::MatchesRegex("[0-9a-f]+"));
}

TEST(Hex, RoundTripsEveryByte) {
    const std::string all = AllBytes();
    const auto decoded = HexDecode(HexEncode(all));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, all);
}

TEST(Hex, DecodesEitherCase) {
    EXPECT_EQ(HexDecode("ABCDEF"), std::string("\xab\xcd\xef"));
    EXPECT_EQ(HexDecode("abcdef"), std::string("\xab\xcd\xef"));
    EXPECT_EQ(HexDecode("aBcD"), std::string("\xab\xcd"));
    EXPECT_EQ(HexDecode(""), std::string());
}

TEST(Hex, RejectsOddLength) {
    EXPECT_EQ(HexDecode("a"), std::nullopt);
    EXPECT_EQ(HexDecode("abc"), std::nullopt);
}

TEST(Hex, RejectsNonHexCharacters) {
    for (const char* bad : {"0g", "g0", "zz", "0x", " 0", "0 ", "+1", "-1", "0\n", "1.", "ab:"}) {
        if (std::string_view(bad).size() % 2 != 0) continue;
        EXPECT_EQ(HexDecode(bad), std::nullopt) << bad;
    }
    EXPECT_EQ(HexDecode(std::string_view("\0\0", 2)), std::nullopt);
    EXPECT_EQ(HexDecode("\xc3\xa9"), std::nullopt);  // UTF-8 bytes are not hex digits
}

// --- Base64 --------------------------------------------------------------------------------

struct B64Case {
    const char* plain;
    const char* standard;
    const char* url;
};

// RFC 4648 section 10.
constexpr B64Case kRfc4648[] = {
    {"", "", ""},
    {"f", "Zg==", "Zg"},
    {"fo", "Zm8=", "Zm8"},
    {"foo", "Zm9v", "Zm9v"},
    {"foob", "Zm9vYg==", "Zm9vYg"},
    {"fooba", "Zm9vYmE=", "Zm9vYmE"},
    {"foobar", "Zm9vYmFy", "Zm9vYmFy"},
};

TEST(Base64, Rfc4648Vectors) {
    for (const auto& c : kRfc4648) {
        EXPECT_EQ(Base64Encode(c.plain), c.standard) << c.plain;
        EXPECT_EQ(Base64UrlEncode(c.plain), c.url) << c.plain;
        EXPECT_EQ(Base64Decode(c.standard), std::string(c.plain)) << c.standard;
    }
}

TEST(Base64, UrlAlphabetDiffersOnlyIn62And63) {
    const std::string bytes("\xfb\xff\xbf", 3);
    EXPECT_EQ(Base64Encode(bytes), "+/+/");
    EXPECT_EQ(Base64UrlEncode(bytes), "-_-_");
    EXPECT_EQ(Base64UrlDecode("-_-_"), bytes);
    EXPECT_EQ(Base64UrlDecode("YQ"), std::string("a"));  // unpadded
    EXPECT_EQ(Base64UrlDecode("+/+/"), std::nullopt);    // the standard alphabet
    EXPECT_EQ(Base64UrlDecode("YQ=="), std::nullopt);    // padding
    EXPECT_EQ(Base64UrlDecode("Y"), std::nullopt);
    EXPECT_EQ(Base64Decode("+/+/"), bytes);
}

TEST(Base64, RoundTripsEveryByteAndEveryTailLength) {
    const std::string all = AllBytes();
    for (std::size_t n = 0; n <= 16; ++n) {
        const std::string chunk = all.substr(200 - n, n);
        EXPECT_EQ(Base64Decode(Base64Encode(chunk)), chunk) << n;
    }
    EXPECT_EQ(Base64Decode(Base64Encode(all)), all);
    EXPECT_EQ(Base64Encode(all).size(), (256 + 2) / 3 * 4);
    EXPECT_EQ(Base64UrlEncode(all).find('='), std::string::npos);
}

TEST(Base64, RequiresPadding) {
    EXPECT_EQ(Base64Decode("Zg"), std::nullopt);
    EXPECT_EQ(Base64Decode("Zm8"), std::nullopt);
    EXPECT_EQ(Base64Decode("Zg="), std::nullopt);
    EXPECT_EQ(Base64Decode("Zm9vYg"), std::nullopt);
}

TEST(Base64, RejectsBadPadding) {
    EXPECT_EQ(Base64Decode("Z==="), std::nullopt);
    EXPECT_EQ(Base64Decode("===="), std::nullopt);
    EXPECT_EQ(Base64Decode("Zg=a"), std::nullopt);
    EXPECT_EQ(Base64Decode("Z=g="), std::nullopt);
    EXPECT_EQ(Base64Decode("Zg==Zg=="), std::nullopt);  // padding before the end
    EXPECT_EQ(Base64Decode("Zm8=Zm9v"), std::nullopt);
    EXPECT_EQ(Base64Decode("Zg==="), std::nullopt);
    EXPECT_EQ(Base64Decode("Zm9v===="), std::nullopt);
}

TEST(Base64, RejectsCharactersOutsideTheStandardAlphabet) {
    EXPECT_EQ(Base64Decode("Zm9-"), std::nullopt);  // URL alphabet
    EXPECT_EQ(Base64Decode("Zm9_"), std::nullopt);
    EXPECT_EQ(Base64Decode("Zm9v\n"), std::nullopt);
    EXPECT_EQ(Base64Decode("Zm9\nv"), std::nullopt);
    EXPECT_EQ(Base64Decode("Zm 9"), std::nullopt);
    EXPECT_EQ(Base64Decode(" Zm9v"), std::nullopt);
    EXPECT_EQ(Base64Decode("Zm9*"), std::nullopt);
    EXPECT_EQ(Base64Decode(std::string_view("Zm9\0", 4)), std::nullopt);
    EXPECT_EQ(Base64Decode("Zm9\xff"), std::nullopt);
}

// InPieces decodes with Base64DecodeInPieces into one string, or nullopt.
std::optional<std::string> InPieces(std::string_view b64, std::size_t piece = 6,
                                    std::vector<std::size_t>* sizes = nullptr) {
    std::string out;
    const bool ok = Base64DecodeInPieces(b64, piece, [&](std::string_view p) {
        if (sizes) sizes->push_back(p.size());
        out.append(p);
        return true;
    });
    return ok ? std::optional<std::string>(out) : std::nullopt;
}

TEST(Base64InPieces, DecodesWhatBase64DecodeDoesAndUnpaddedInputToo) {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (std::size_t n = 0; n <= all.size(); n += 7) {
        const std::string chunk = all.substr(0, n);
        std::string encoded = Base64Encode(chunk);
        EXPECT_EQ(InPieces(encoded), chunk) << n;
        while (!encoded.empty() && encoded.back() == '=') encoded.pop_back();
        EXPECT_EQ(InPieces(encoded), chunk) << "unpadded " << n;
    }
}

TEST(Base64InPieces, HandsOverPiecesOfAtMostTheSizeAsked) {
    const std::string data(1000, 'z');
    std::vector<std::size_t> sizes;
    EXPECT_EQ(InPieces(Base64Encode(data), 64, &sizes), data);
    for (const auto size : sizes) EXPECT_LE(size, 64u);
    EXPECT_GT(sizes.size(), 10u);
}

TEST(Base64InPieces, RefusesWhatIsNotBase64) {
    for (const std::string bad : {"Z", "Zm9v=", "Zg=a", "Z===", "Zm9v!", "Zm 9v", "Zm9vYg==="}) {
        EXPECT_EQ(InPieces(bad), std::nullopt) << bad;
    }
    // A sink that says stop stops the decoding.
    EXPECT_FALSE(Base64DecodeInPieces(Base64Encode(std::string(100, 'a')), 9,
                                      [](std::string_view) { return false; }));
}

TEST(Base64, RejectsLengthNotMultipleOfFour) {
    EXPECT_EQ(Base64Decode("Z"), std::nullopt);
    EXPECT_EQ(Base64Decode("Zm9vY"), std::nullopt);
}

// --- ConstantTimeEqual ---------------------------------------------------------------------

TEST(ConstantTimeEqual, ComparesContent) {
    EXPECT_TRUE(ConstantTimeEqual("", ""));
    EXPECT_TRUE(ConstantTimeEqual("abc", "abc"));
    EXPECT_FALSE(ConstantTimeEqual("abc", "abd"));
    EXPECT_FALSE(ConstantTimeEqual("abc", "xbc"));
    EXPECT_FALSE(ConstantTimeEqual("abc", "ab"));
    EXPECT_FALSE(ConstantTimeEqual("ab", "abc"));
    EXPECT_FALSE(ConstantTimeEqual("", "a"));
    EXPECT_TRUE(ConstantTimeEqual(std::string_view("a\0b", 3), std::string_view("a\0b", 3)));
    EXPECT_FALSE(ConstantTimeEqual(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
}

TEST(ConstantTimeEqual, ComparesDigests) {
    const auto a = Sha256("one");
    const auto b = Sha256("two");
    const std::string_view va(reinterpret_cast<const char*>(a.data()), a.size());
    const std::string_view vb(reinterpret_cast<const char*>(b.data()), b.size());
    EXPECT_TRUE(ConstantTimeEqual(va, va));
    EXPECT_FALSE(ConstantTimeEqual(va, vb));
}

// --- RandomBytes ---------------------------------------------------------------------------

TEST(RandomBytes, ReturnsRequestedLength) {
    for (std::size_t n : {0u, 1u, 16u, 32u, 64u, 1000u}) {
        EXPECT_EQ(RandomBytes(n).size(), n);
    }
}

TEST(RandomBytes, Varies) {
    std::set<std::string> seen;
    for (int i = 0; i < 200; ++i) seen.insert(RandomBytes(16));
    EXPECT_EQ(seen.size(), 200u);
}

TEST(RandomBytes, UsesTheWholeByteRange) {
    // 64 KiB of CSPRNG output hits every byte value (the chance of missing one is ~256 * e^-256).
    const std::string r = RandomBytes(65536);
    std::set<unsigned char> values(r.begin(), r.end());
    EXPECT_EQ(values.size(), 256u);
}

}  // namespace
}  // namespace genhost
