#include "core/common/child_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace portico::core {
namespace {

using ::testing::HasSubstr;

void SetScratch(std::span<char> scratch, const char* text) {
  std::strncpy(scratch.data(), text, scratch.size() - 1);
}

TEST(ChildRunTest, ExitCodeOutputAndScratch) {
  ChildOutcome out = RunInChild(
      [](int fd, std::span<char> scratch) {
        WriteAll(fd, "hello\n");
        SetScratch(scratch, "last step");
        return 3;
      },
      ChildLimits{});
  EXPECT_TRUE(out.started);
  EXPECT_TRUE(out.exited);
  EXPECT_EQ(out.exit_code, 3);
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.output, "hello\n");
  EXPECT_EQ(out.scratch, "last step");
  EXPECT_EQ(out.Describe(), "exited with status 3");
}

TEST(ChildRunTest, ACrashIsASignalAndTheScratchSurvivesIt) {
  ChildOutcome out = RunInChild(
      [](int, std::span<char> scratch) {
        SetScratch(scratch, "about to crash");
        std::abort();  // (a SIGSEGV would be turned into exit status 1 by ASan's handler)
        return 0;
      },
      ChildLimits{});
  EXPECT_FALSE(out.exited);
  EXPECT_EQ(out.signal, SIGABRT);
  EXPECT_EQ(out.scratch, "about to crash");
  EXPECT_THAT(out.Describe(), HasSubstr("killed by signal 6 (Aborted)"));
}

TEST(ChildRunTest, AHangIsKilledAtTheDeadline) {
  ChildLimits limits;
  limits.deadline = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  ChildOutcome out = RunInChild(
      [](int fd, std::span<char> scratch) {
        WriteAll(fd, "started\n");
        SetScratch(scratch, "spinning");
        volatile bool forever = true;
        while (forever) {
        }
        return 0;
      },
      limits);
  EXPECT_TRUE(out.timed_out);
  EXPECT_EQ(out.signal, SIGKILL);
  EXPECT_EQ(out.output, "started\n");
  EXPECT_EQ(out.scratch, "spinning");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(ChildRunTest, AThrowIsExitStatusOne) {
  ChildOutcome out = RunInChild(
      [](int, std::span<char>) -> int { throw std::runtime_error("boom"); }, ChildLimits{});
  EXPECT_TRUE(out.exited);
  EXPECT_EQ(out.exit_code, 1);
}

// Another thread's child, forked while this call's pipe was open, holds a copy of the pipe's
// write end: the call must still return when its own child ends (not when the other one does).
TEST(ChildRunTest, AChildForkedByAnotherThreadDoesNotHoldTheCallBack) {
  int go[2], release[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(release), 0);
  std::atomic<bool> a_forking{false};
  ChildOutcome a_out;
  std::chrono::steady_clock::duration a_took{};
  ChildLimits limits;
  limits.deadline = std::chrono::seconds(20);
  std::thread a([&] {
    auto start = std::chrono::steady_clock::now();
    a_out = RunInChild(
        [&](int fd, std::span<char>) {
          char c;
          if (read(go[0], &c, 1) != 1) return 2;
          return WriteAll(fd, "a") ? 0 : 3;
        },
        limits, ForkHooks{[&] { a_forking = true; }, nullptr});
    a_took = std::chrono::steady_clock::now() - start;
  });
  while (!a_forking) std::this_thread::yield();  // a's pipe exists from here on
  ChildOutcome b_out;
  std::thread b([&] {
    b_out = RunInChild(
        [&](int, std::span<char>) {
          char c = 'g';
          if (write(go[1], &c, 1) != 1) return 2;       // let a's child finish
          return read(release[0], &c, 1) == 1 ? 0 : 3;  // and outlive it
        },
        limits);
  });
  a.join();
  EXPECT_TRUE(a_out.ok()) << a_out.Describe();
  EXPECT_EQ(a_out.output, "a");
  EXPECT_LT(a_took, std::chrono::seconds(10));  // b's child is still alive (blocked on release)
  char c = 'r';
  ASSERT_EQ(write(release[1], &c, 1), 1);
  b.join();
  EXPECT_TRUE(b_out.ok()) << b_out.Describe();
  for (int fd : {go[0], go[1], release[0], release[1]}) close(fd);
}

}  // namespace
}  // namespace portico::core
