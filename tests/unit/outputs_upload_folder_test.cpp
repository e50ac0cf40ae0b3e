// Tests for UploadFolder and UploadWriter of genhost/outputs/upload_folder.hpp in a temporary
// folder: a committed upload appears under its id and the `.part` file is gone; a discarded or
// abandoned writer leaves nothing; a stale `.part` is truncated; Remove and List.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <stdlib.h>

#include "genhost/outputs/upload_folder.hpp"

namespace genhost::outputs {
namespace {

namespace fs = std::filesystem;

constexpr char kId[] = "0f8b1c2e-1111-4222-8333-444455556666";
constexpr char kOtherId[] = "0f8b1c2e-1111-4222-8333-444455556667";

std::string ReadAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

class UploadFolderTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/genhost-upload-folder.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    fs::path Part(const char* id) const { return root() / (std::string(id) + ".part"); }
    fs::path root() const { return dir_ / "inputs" / "uploads"; }

    fs::path dir_;
};

TEST_F(UploadFolderTest, CreatesItsRoot) {
    UploadFolder folder(root());
    EXPECT_TRUE(fs::is_directory(root()));
    EXPECT_EQ(folder.PathOf(kId), root() / kId);
    EXPECT_THROW(folder.PathOf("../etc/passwd"), std::invalid_argument);
}

TEST_F(UploadFolderTest, CommitMovesThePartFileIntoPlace) {
    UploadFolder folder(root());
    auto writer = folder.Begin(kId);
    EXPECT_TRUE(fs::exists(Part(kId)));
    writer->Write("hello ");
    writer->Write(std::string("\0binary", 7));
    EXPECT_EQ(writer->Size(), 13u);
    EXPECT_FALSE(fs::exists(folder.PathOf(kId)));
    writer->Commit();
    writer.reset();
    EXPECT_FALSE(fs::exists(Part(kId)));
    EXPECT_EQ(ReadAll(folder.PathOf(kId)), std::string("hello \0binary", 13));
}

TEST_F(UploadFolderTest, DiscardAndAbandonLeaveNothing) {
    UploadFolder folder(root());
    auto writer = folder.Begin(kId);
    writer->Write("partial");
    writer->Discard();
    EXPECT_FALSE(fs::exists(Part(kId)));
    EXPECT_FALSE(fs::exists(folder.PathOf(kId)));
    {
        auto abandoned = folder.Begin(kOtherId);
        abandoned->Write("partial");
    }
    EXPECT_FALSE(fs::exists(Part(kOtherId)));
    EXPECT_TRUE(fs::is_empty(root()));
}

TEST_F(UploadFolderTest, BeginTruncatesAStalePartFile) {
    UploadFolder folder(root());
    std::ofstream(Part(kId)) << "stale bytes from a process that died";
    auto writer = folder.Begin(kId);
    writer->Write("new");
    writer->Commit();
    EXPECT_EQ(ReadAll(folder.PathOf(kId)), "new");
}

TEST_F(UploadFolderTest, RemoveDeletesBothFilesAndToleratesMissingOnes) {
    UploadFolder folder(root());
    std::ofstream(folder.PathOf(kId)) << "done";
    std::ofstream(Part(kId)) << "part";
    folder.Remove(kId);
    EXPECT_TRUE(fs::is_empty(root()));
    EXPECT_NO_THROW(folder.Remove(kId));
}

TEST_F(UploadFolderTest, ListReportsUploadFilesOnly) {
    UploadFolder folder(root());
    std::ofstream(folder.PathOf(kId)) << "done";
    std::ofstream(Part(kOtherId)) << "part";
    std::ofstream(root() / "README") << "not an upload";
    std::ofstream(root() / "0f8b1c2e.part") << "not an upload either";
    auto files = folder.List();
    std::sort(files.begin(), files.end(),
              [](const auto& a, const auto& b) { return a.upload_id < b.upload_id; });
    ASSERT_EQ(files.size(), 2u);
    EXPECT_EQ(files[0].upload_id, kId);
    EXPECT_FALSE(files[0].partial);
    EXPECT_EQ(files[1].upload_id, kOtherId);
    EXPECT_TRUE(files[1].partial);
}

}  // namespace
}  // namespace genhost::outputs
