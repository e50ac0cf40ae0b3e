// Tests for genhost/tasks/scratch.hpp: a process's scratch folder lives as long as the process
// (its flock), and Sweep removes the folders of processes that are gone (SIGKILL included) and
// anything else no live process holds, never a live process's folder.

#include <gtest/gtest.h>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "genhost/core/ids.hpp"
#include "genhost/tasks/scratch.hpp"

namespace genhost::tasks {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class Scratch : public ::testing::Test {
  protected:
    void SetUp() override { root_ = fs::temp_directory_path() / ("genhost-scratch-" + NewUuid()); }
    void TearDown() override {
        std::error_code ignored;
        fs::remove_all(root_, ignored);
    }

    // Child starts a process that claims a scratch folder, writes a file in it, reports the
    // folder's name through a pipe and then waits to be killed. Returns its pid and folder.
    std::pair<pid_t, fs::path> Child() {
        int fds[2];
        EXPECT_EQ(::pipe(fds), 0);
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(fds[0]);
            ScratchSpace space(root_, "child");
            fs::create_directories(space.Path() / "run_1");
            std::ofstream(space.Path() / "run_1" / "frame.raw") << "partial";
            const std::string name = space.Path().string();
            (void)!::write(fds[1], name.data(), name.size());
            ::close(fds[1]);
            for (;;) ::pause();
        }
        ::close(fds[1]);
        char buf[4096];
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        ::close(fds[0]);
        EXPECT_GT(n, 0);
        return {pid, fs::path(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0))};
    }

    static void Kill(pid_t pid) {
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
    }

    fs::path root_;
};

TEST_F(Scratch, AFolderLivesWithItsProcessAndGoesWithIt) {
    ScratchSpace mine(root_, "node-a:123:abcd");
    fs::create_directories(mine.Path() / "task_1");
    const auto [pid, theirs] = Child();
    ASSERT_TRUE(fs::exists(theirs / "run_1" / "frame.raw"));

    // Alive: neither folder is touched.
    EXPECT_EQ(mine.Sweep(), 0);
    EXPECT_TRUE(fs::exists(theirs / "run_1" / "frame.raw"));
    EXPECT_TRUE(fs::exists(mine.Path() / "task_1"));

    // Killed with SIGKILL: nothing of it ran, yet its folder and lock go at the next sweep.
    Kill(pid);
    EXPECT_EQ(mine.Sweep(), 1);
    EXPECT_FALSE(fs::exists(theirs));
    EXPECT_FALSE(fs::exists(theirs.string() + ".lock"));
    EXPECT_TRUE(fs::exists(mine.Path() / "task_1"));
    EXPECT_EQ(mine.Sweep(), 0);
}

TEST_F(Scratch, WhatNoProcessHoldsIsRemovedButAFreshPendingLockIsLeft) {
    ScratchSpace mine(root_, "node");
    // Folders of the layout before scratch spaces, a stray file, an old pending lock, a fresh one.
    fs::create_directories(root_ / "0b6e1a3c-0000-4000-8000-000000000000_1a2b3c4d_" / "x");
    fs::create_directories(root_ / "avatar-0b6e1a3c-0000-4000-8000-000000000000");
    std::ofstream(root_ / "stray.bin") << "x";
    std::ofstream(root_ / ".pending-old") << "";
    fs::last_write_time(root_ / ".pending-old", fs::file_time_type::clock::now() - 5min);
    std::ofstream(root_ / ".pending-new") << "";
    // A lock nobody holds (its process is gone) with its folder.
    fs::create_directories(root_ / "gone-1234");
    std::ofstream(root_ / "gone-1234.lock") << "";

    EXPECT_EQ(mine.Sweep(), 5);
    std::set<std::string> left;
    for (const auto& e : fs::directory_iterator(root_)) left.insert(e.path().filename().string());
    EXPECT_EQ(left,
              (std::set<std::string>{mine.Path().filename().string(),
                                     mine.Path().filename().string() + ".lock", ".pending-new"}));
}

TEST_F(Scratch, TwoLiveProcessesOnOneRootKeepTheirFolders) {
    ScratchSpace a(root_, "a");
    ScratchSpace b(root_, "a");  // same token: still two folders
    EXPECT_NE(a.Path(), b.Path());
    EXPECT_EQ(a.Sweep(), 0);
    EXPECT_EQ(b.Sweep(), 0);
    EXPECT_TRUE(fs::exists(a.Path()));
    EXPECT_TRUE(fs::exists(b.Path()));
}

TEST_F(Scratch, DestructionRemovesTheFolderAndLock) {
    fs::path path;
    {
        ScratchSpace space(root_, "bye");
        path = space.Path();
        std::ofstream(path / "f") << "x";
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(fs::exists(path.string() + ".lock"));
}

}  // namespace
}  // namespace genhost::tasks
