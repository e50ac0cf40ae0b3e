// Tests for LocalOutputStore and the name rules of genhost/outputs/output_store.hpp, in a fresh
// temporary folder per test: Put (atomic replacement, no temporary files left behind), Stat, Read
// ranges (including past the end), DeleteObject, DeleteTask, unsafe names refused before any
// file system access, and ContentTypeFor.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "genhost/core/ids.hpp"
#include "genhost/outputs/output_store.hpp"

namespace genhost::outputs {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

std::vector<std::string> Listing(const fs::path& dir) {
    std::vector<std::string> names;
    if (!fs::exists(dir)) return names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    return names;
}

class LocalOutputStoreTest : public ::testing::Test {
  protected:
    void SetUp() override {
        base_ = fs::temp_directory_path() / ("genhost-outputs-test-" + NewUuid());
        root_ = base_ / "nested" / "outputs";
        store_ = std::make_unique<LocalOutputStore>(root_);
    }
    void TearDown() override {
        store_.reset();
        std::error_code ec;
        fs::remove_all(base_, ec);
    }

    fs::path base_;
    fs::path root_;
    std::unique_ptr<LocalOutputStore> store_;
};

TEST_F(LocalOutputStoreTest, ConstructorCreatesTheRoot) {
    EXPECT_TRUE(fs::is_directory(root_));
    // A second store on an existing root is fine.
    EXPECT_NO_THROW(LocalOutputStore again(root_));
}

TEST_F(LocalOutputStoreTest, PutThenStatAndRead) {
    store_->Put("task-1", "0.png", "PNGDATA");
    const auto info = store_->Stat("task-1", "0.png");
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->size, 7u);
    EXPECT_EQ(info->content_type, "image/png");
    EXPECT_EQ(store_->Read("task-1", "0.png", 0, 7), "PNGDATA");
    EXPECT_TRUE(fs::is_regular_file(root_ / "task-1" / "0.png"));
}

TEST_F(LocalOutputStoreTest, KeepsBinaryDataExactly) {
    std::string data;
    for (int i = 0; i < 70000; ++i) data += static_cast<char>(i * 7 % 256);
    store_->Put("t", "blob.bin", data);
    EXPECT_EQ(store_->Stat("t", "blob.bin")->size, data.size());
    EXPECT_EQ(store_->Read("t", "blob.bin", 0, data.size()), data);
}

TEST_F(LocalOutputStoreTest, EmptyObject) {
    store_->Put("t", "empty.json", "");
    const auto info = store_->Stat("t", "empty.json");
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->size, 0u);
    EXPECT_EQ(info->content_type, "application/json");
    EXPECT_EQ(store_->Read("t", "empty.json", 0, 10), "");
}

TEST_F(LocalOutputStoreTest, ReadRanges) {
    store_->Put("t", "a.bin", "0123456789");
    EXPECT_EQ(store_->Read("t", "a.bin", 0, 1), "0");
    EXPECT_EQ(store_->Read("t", "a.bin", 3, 4), "3456");
    EXPECT_EQ(store_->Read("t", "a.bin", 9, 1), "9");
    EXPECT_EQ(store_->Read("t", "a.bin", 5, 0), "");
}

TEST_F(LocalOutputStoreTest, ReadPastTheEndReturnsWhatThereIs) {
    store_->Put("t", "a.bin", "0123456789");
    EXPECT_EQ(store_->Read("t", "a.bin", 7, 100), "789");
    EXPECT_EQ(store_->Read("t", "a.bin", 0, 11), "0123456789");
    EXPECT_EQ(store_->Read("t", "a.bin", 10, 5), "");
    EXPECT_EQ(store_->Read("t", "a.bin", 1000, 5), "");
}

TEST_F(LocalOutputStoreTest, ReadOfAMissingObjectThrows) {
    EXPECT_THROW(store_->Read("t", "missing.png", 0, 1), std::runtime_error);
    store_->Put("t", "present.png", "x");
    EXPECT_THROW(store_->Read("t", "missing.png", 0, 1), std::runtime_error);
    EXPECT_THROW(store_->Read("other", "present.png", 0, 1), std::runtime_error);
}

TEST_F(LocalOutputStoreTest, StatOfAMissingObjectIsNullopt) {
    EXPECT_EQ(store_->Stat("t", "0.png"), std::nullopt);
    store_->Put("t", "0.png", "x");
    EXPECT_EQ(store_->Stat("t", "1.png"), std::nullopt);
    EXPECT_EQ(store_->Stat("u", "0.png"), std::nullopt);
}

TEST_F(LocalOutputStoreTest, StatOfADirectoryIsNullopt) {
    store_->Put("t", "0.png", "x");
    fs::create_directories(root_ / "t" / "dir.png");
    EXPECT_EQ(store_->Stat("t", "dir.png"), std::nullopt);
}

TEST_F(LocalOutputStoreTest, PutReplacesAndLeavesNoTemporaryFiles) {
    store_->Put("t", "0.png", "first version");
    store_->Put("t", "0.png", "second");
    EXPECT_EQ(store_->Stat("t", "0.png")->size, 6u);
    EXPECT_EQ(store_->Read("t", "0.png", 0, 100), "second");
    EXPECT_THAT(Listing(root_ / "t"), ElementsAre("0.png"));
}

TEST_F(LocalOutputStoreTest, ReadersNeverSeeAPartialObject) {
    const std::string small(64 * 1024, 'a');
    const std::string large(256 * 1024, 'b');
    store_->Put("t", "0.png", small);
    std::atomic<bool> stop{false};
    std::atomic<int> reads{0};
    std::atomic<int> bad{0};
    std::thread reader([&] {
        while (!stop) {
            const std::string got = store_->Read("t", "0.png", 0, large.size() + 1);
            if (got != small && got != large) ++bad;
            ++reads;
        }
    });
    for (int i = 0; i < 100; ++i) store_->Put("t", "0.png", i % 2 == 0 ? large : small);
    while (reads < 10) std::this_thread::yield();
    stop = true;
    reader.join();
    EXPECT_EQ(bad, 0) << "of " << reads << " reads";
    EXPECT_THAT(Listing(root_ / "t"), ElementsAre("0.png"));
}

TEST_F(LocalOutputStoreTest, ObjectsOfDifferentTasksAreSeparate) {
    store_->Put("t1", "0.png", "one");
    store_->Put("t2", "0.png", "two");
    EXPECT_EQ(store_->Read("t1", "0.png", 0, 10), "one");
    EXPECT_EQ(store_->Read("t2", "0.png", 0, 10), "two");
    EXPECT_THAT(Listing(root_), UnorderedElementsAre("t1", "t2"));
}

TEST_F(LocalOutputStoreTest, DeleteObject) {
    store_->Put("t", "0.png", "zero");
    store_->Put("t", "1.png", "one");
    store_->DeleteObject("t", "0.png");
    EXPECT_EQ(store_->Stat("t", "0.png"), std::nullopt);
    EXPECT_EQ(store_->Read("t", "1.png", 0, 10), "one");
    EXPECT_TRUE(fs::is_directory(root_ / "t"));
    // Deleting the last object removes the task folder too.
    store_->DeleteObject("t", "1.png");
    EXPECT_FALSE(fs::exists(root_ / "t"));
    EXPECT_TRUE(fs::is_directory(root_));
}

TEST_F(LocalOutputStoreTest, DeleteObjectThatDoesNotExistIsFine) {
    EXPECT_NO_THROW(store_->DeleteObject("t", "0.png"));
    store_->Put("t", "1.png", "x");
    EXPECT_NO_THROW(store_->DeleteObject("t", "0.png"));
    EXPECT_TRUE(store_->Stat("t", "1.png").has_value());
}

TEST_F(LocalOutputStoreTest, DeleteTaskRemovesEveryObject) {
    store_->Put("t", "0.png", "a");
    store_->Put("t", "1.png", "b");
    store_->Put("keep", "0.png", "c");
    store_->DeleteTask("t");
    EXPECT_EQ(store_->Stat("t", "0.png"), std::nullopt);
    EXPECT_EQ(store_->Stat("t", "1.png"), std::nullopt);
    EXPECT_FALSE(fs::exists(root_ / "t"));
    EXPECT_EQ(store_->Read("keep", "0.png", 0, 1), "c");
    EXPECT_NO_THROW(store_->DeleteTask("t"));  // again: nothing left, no error
    EXPECT_NO_THROW(store_->DeleteTask("never-existed"));
}

TEST_F(LocalOutputStoreTest, ObjectsCanBeStoredAgainAfterDeletion) {
    store_->Put("t", "0.png", "a");
    store_->DeleteTask("t");
    store_->Put("t", "0.png", "b");
    EXPECT_EQ(store_->Read("t", "0.png", 0, 1), "b");
}

const std::vector<std::string>& UnsafeNames() {
    static const std::vector<std::string> names = {
        "",
        "..",
        ".",
        "a/b",
        "../x",
        "/abs",
        ".hidden",
        "a\\b",
        "a b",
        "a:b",
        "a\nb",
        "caf\xc3\xa9",
        "a*",
        "a?",
        std::string(129, 'x'),
        std::string("a\0b", 3),
    };
    return names;
}

TEST_F(LocalOutputStoreTest, UnsafeNamesAreRejected) {
    for (const auto& bad : UnsafeNames()) {
        EXPECT_THROW(store_->Put("t", bad, "x"), std::invalid_argument) << "name '" << bad << "'";
        EXPECT_THROW(store_->Put(bad, "0.png", "x"), std::invalid_argument)
            << "task '" << bad << "'";
        EXPECT_THROW(store_->Read("t", bad, 0, 1), std::invalid_argument) << bad;
        EXPECT_THROW(store_->Read(bad, "0.png", 0, 1), std::invalid_argument) << bad;
        EXPECT_EQ(store_->Stat("t", bad), std::nullopt) << bad;
        EXPECT_EQ(store_->Stat(bad, "0.png"), std::nullopt) << bad;
    }
    // Nothing was written anywhere.
    EXPECT_TRUE(Listing(root_).empty());
    EXPECT_THAT(Listing(base_), ElementsAre("nested"));
}

TEST_F(LocalOutputStoreTest, DeletesWithUnsafeNamesTouchNothing) {
    store_->Put("t", "0.png", "a");
    const fs::path outside = base_ / "nested" / "precious.txt";
    std::ofstream(outside) << "keep me";
    for (const auto& bad : UnsafeNames()) {
        EXPECT_NO_THROW(store_->DeleteTask(bad)) << bad;
        EXPECT_NO_THROW(store_->DeleteObject(bad, "0.png")) << bad;
        EXPECT_NO_THROW(store_->DeleteObject("t", bad)) << bad;
    }
    EXPECT_NO_THROW(store_->DeleteObject("..", "precious.txt"));
    EXPECT_TRUE(fs::exists(outside));
    EXPECT_TRUE(fs::is_directory(root_));
    EXPECT_EQ(store_->Read("t", "0.png", 0, 1), "a");
}

TEST_F(LocalOutputStoreTest, LongestSafeNameWorks) {
    const std::string name(128, 'n');
    store_->Put(name, name, "x");
    EXPECT_EQ(store_->Read(name, name, 0, 1), "x");
}

TEST(IsSafeObjectName, AcceptsTheAllowedAlphabet) {
    for (const char* ok : {"0.png", "a", "A-Z_a-z.0-9", "task-0f8b1c2e-1111-4222-8333-444455556666",
                           "x.", "a..b", "-", "_"}) {
        EXPECT_TRUE(IsSafeObjectName(ok)) << ok;
    }
    EXPECT_TRUE(IsSafeObjectName(std::string(128, 'x')));
}

TEST(IsSafeObjectName, RejectsEverythingElse) {
    for (const auto& bad : UnsafeNames()) EXPECT_FALSE(IsSafeObjectName(bad)) << "'" << bad << "'";
}

TEST(ContentTypeFor, KnownExtensions) {
    EXPECT_EQ(ContentTypeFor("0.png"), "image/png");
    EXPECT_EQ(ContentTypeFor("0.jpg"), "image/jpeg");
    EXPECT_EQ(ContentTypeFor("0.jpeg"), "image/jpeg");
    EXPECT_EQ(ContentTypeFor("0.webp"), "image/webp");
    EXPECT_EQ(ContentTypeFor("0.mp4"), "video/mp4");
    EXPECT_EQ(ContentTypeFor("0.mov"), "video/quicktime");
    EXPECT_EQ(ContentTypeFor("0.zip"), "application/zip");
    EXPECT_EQ(ContentTypeFor("0.wav"), "audio/wav");
    EXPECT_EQ(ContentTypeFor("0.mp3"), "audio/mpeg");
    EXPECT_EQ(ContentTypeFor("0.ogg"), "audio/ogg");
    EXPECT_EQ(ContentTypeFor("0.opus"), "audio/ogg");
    EXPECT_EQ(ContentTypeFor("0.json"), "application/json");
}

TEST(ContentTypeFor, UsesTheLastExtension) {
    EXPECT_EQ(ContentTypeFor("a.png.json"), "application/json");
    EXPECT_EQ(ContentTypeFor("a.json.png"), "image/png");
    EXPECT_EQ(ContentTypeFor("archive.tar.gz"), "application/octet-stream");
}

TEST(ContentTypeFor, UnknownIsOctetStream) {
    for (const char* name : {"", "README", "a.bin", "a.", "png", "a.pngx", "a.xpng", "a.gif"}) {
        EXPECT_EQ(ContentTypeFor(name), "application/octet-stream") << name;
    }
}

}  // namespace
}  // namespace genhost::outputs
