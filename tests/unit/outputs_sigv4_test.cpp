// Tests for AWS Signature Version 4 (genhost/outputs/sigv4.hpp) against the example values AWS
// publishes in "Signature Calculations for the Authorization Header: Transferring Payload in a
// Single Chunk" (Amazon S3 API reference; access key AKIAIOSFODNN7EXAMPLE, 2013-05-24): GET
// object with a Range header (canonical request, string to sign and signature), PUT object
// (a '$' in the key, extra signed headers), GET bucket lifecycle (an empty query value) and list
// objects (query sorting); then the signing-key derivation example of the general SigV4 docs,
// URI encoding of paths and query values, header canonicalization and AmzDate.

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "genhost/core/crypto.hpp"
#include "genhost/outputs/sigv4.hpp"

namespace genhost::outputs::sigv4 {
namespace {

constexpr const char* kDate = "20130524T000000Z";
constexpr const char* kEmptyHash =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kHost = "examplebucket.s3.amazonaws.com";

Credentials Example() {
    return Credentials{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                       "us-east-1", "s3"};
}

TEST(SigV4Test, AwsGetObjectExample) {
    Request r;
    r.method = "GET";
    r.canonical_uri = "/test.txt";
    r.headers = {{"Host", kHost},
                 {"Range", "bytes=0-9"},
                 {"x-amz-content-sha256", kEmptyHash},
                 {"x-amz-date", kDate}};
    r.payload_hash = kEmptyHash;

    const std::string canonical = CanonicalRequest(r);
    EXPECT_EQ(canonical,
              "GET\n"
              "/test.txt\n"
              "\n"
              "host:examplebucket.s3.amazonaws.com\n"
              "range:bytes=0-9\n"
              "x-amz-content-sha256:"
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
              "x-amz-date:20130524T000000Z\n"
              "\n"
              "host;range;x-amz-content-sha256;x-amz-date\n"
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const std::string scope = Scope(kDate, "us-east-1", "s3");
    EXPECT_EQ(scope, "20130524/us-east-1/s3/aws4_request");
    EXPECT_EQ(StringToSign(kDate, scope, canonical),
              "AWS4-HMAC-SHA256\n"
              "20130524T000000Z\n"
              "20130524/us-east-1/s3/aws4_request\n"
              "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
    EXPECT_EQ(Signature(Example(), kDate, r),
              "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    EXPECT_EQ(Authorization(Example(), kDate, r),
              "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
              "aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
              "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4Test, AwsPutObjectExample) {
    const std::string payload = "Welcome to Amazon S3.";
    const std::string hash = HexEncode(Sha256(payload));
    EXPECT_EQ(hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    Request r;
    r.method = "PUT";
    r.canonical_uri = "/" + UriEncode("test$file.text", false);
    EXPECT_EQ(r.canonical_uri, "/test%24file.text");
    r.headers = {{"Host", kHost},
                 {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                 {"x-amz-date", kDate},
                 {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                 {"x-amz-content-sha256", hash}};
    r.payload_hash = hash;
    EXPECT_EQ(SignedHeaders(r.headers),
              "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
    EXPECT_EQ(Signature(Example(), kDate, r),
              "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4Test, AwsGetBucketLifecycleExample) {
    Request r;
    r.method = "GET";
    r.canonical_uri = "/";
    r.query = {{"lifecycle", ""}};
    r.headers = {{"Host", kHost}, {"x-amz-date", kDate}, {"x-amz-content-sha256", kEmptyHash}};
    r.payload_hash = kEmptyHash;
    EXPECT_EQ(CanonicalQuery(r.query), "lifecycle=");
    EXPECT_EQ(Signature(Example(), kDate, r),
              "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(SigV4Test, AwsListObjectsExampleSortsTheQuery) {
    Request r;
    r.method = "GET";
    r.canonical_uri = "/";
    r.query = {{"prefix", "J"}, {"max-keys", "2"}};  // unsorted on purpose
    r.headers = {{"Host", kHost}, {"x-amz-date", kDate}, {"x-amz-content-sha256", kEmptyHash}};
    r.payload_hash = kEmptyHash;
    EXPECT_EQ(CanonicalQuery(r.query), "max-keys=2&prefix=J");
    EXPECT_EQ(Signature(Example(), kDate, r),
              "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4Test, SigningKeyDerivationExample) {
    // "Examples of how to derive a signing key for Signature Version 4" (AWS General Reference).
    const std::string key =
        SigningKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215", "us-east-1", "iam");
    EXPECT_EQ(HexEncode(key), "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

TEST(SigV4Test, UriEncodeKeepsOnlyUnreservedCharacters) {
    EXPECT_EQ(UriEncode("AZaz09-._~", true), "AZaz09-._~");
    EXPECT_EQ(UriEncode("a b", false), "a%20b");
    EXPECT_EQ(UriEncode("a+b=c&d", true), "a%2Bb%3Dc%26d");
    EXPECT_EQ(UriEncode("!'()*$", false), "%21%27%28%29%2A%24");
    EXPECT_EQ(UriEncode("100%", false), "100%25");
    EXPECT_EQ(UriEncode("caf\xC3\xA9", false), "caf%C3%A9");  // UTF-8 bytes, uppercase hex
    EXPECT_EQ(UriEncode("outputs/task-1/0.png", false), "outputs/task-1/0.png");
    EXPECT_EQ(UriEncode("outputs/task-1/", true), "outputs%2Ftask-1%2F");
    EXPECT_EQ(UriEncode("", true), "");
}

TEST(SigV4Test, CanonicalQueryEncodesNamesAndValues) {
    EXPECT_EQ(CanonicalQuery({}), "");
    EXPECT_EQ(
        CanonicalQuery(
            {{"prefix", "out/task 1/"}, {"list-type", "2"}, {"continuation-token", "a+b/c=="}}),
        "continuation-token=a%2Bb%2Fc%3D%3D&list-type=2&prefix=out%2Ftask%201%2F");
    // Equal names sort by value.
    EXPECT_EQ(CanonicalQuery({{"a", "2"}, {"a", "1"}}), "a=1&a=2");
}

TEST(SigV4Test, HeadersAreLowercasedTrimmedAndSorted) {
    Request r;
    r.method = "PUT";
    r.canonical_uri = "/bucket/key";
    r.headers = {
        {"X-Amz-Date", kDate}, {"HOST", "  example.test:9000  "}, {"X-Amz-Meta-A", "a   b"}};
    r.payload_hash = kUnsignedPayload;
    EXPECT_EQ(CanonicalRequest(r),
              "PUT\n/bucket/key\n\n"
              "host:example.test:9000\n"
              "x-amz-date:20130524T000000Z\n"
              "x-amz-meta-a:a b\n"
              "\n"
              "host;x-amz-date;x-amz-meta-a\n"
              "UNSIGNED-PAYLOAD");
}

TEST(SigV4Test, AmzDateIsBasicUtc) {
    EXPECT_EQ(AmzDate(std::chrono::system_clock::time_point(std::chrono::seconds(1369353600))),
              "20130524T000000Z");
    EXPECT_EQ(
        AmzDate(std::chrono::system_clock::time_point(std::chrono::seconds(951782400 + 3661))),
        "20000229T010101Z");
}

}  // namespace
}  // namespace genhost::outputs::sigv4
