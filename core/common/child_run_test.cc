#include "core/common/child_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>

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

}  // namespace
}  // namespace portico::core
