#include "core/workqueue/backoff.h"

#include <gtest/gtest.h>

namespace portico::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(WorkQueueBackoffTest, DoublesFromBaseUpToMax) {
  ExponentialBackoff backoff(milliseconds(5), seconds(1000));
  EXPECT_EQ(backoff.Delay(0), milliseconds(5));
  EXPECT_EQ(backoff.Delay(1), milliseconds(10));
  EXPECT_EQ(backoff.Delay(2), milliseconds(20));
  EXPECT_EQ(backoff.Delay(3), milliseconds(40));
  EXPECT_EQ(backoff.Delay(17), milliseconds(5 * 131072));  // 655.36 s, still below the cap
  EXPECT_EQ(backoff.Delay(18), seconds(1000));             // 1310.72 s capped
  EXPECT_EQ(backoff.Delay(19), seconds(1000));
}

TEST(WorkQueueBackoffTest, HugeRequeueCountsDoNotOverflow) {
  ExponentialBackoff backoff(milliseconds(5), seconds(1000));
  for (int n : {40, 61, 62, 63, 64, 100, 1 << 30}) {
    EXPECT_EQ(backoff.Delay(n), seconds(1000)) << n;
  }
  ExponentialBackoff unbounded(Clock::Duration(1), Clock::Duration::max());
  EXPECT_EQ(unbounded.Delay(61), Clock::Duration(int64_t{1} << 61));
  EXPECT_EQ(unbounded.Delay(62), Clock::Duration::max());
}

TEST(WorkQueueBackoffTest, ClampsNonsenseArguments) {
  ExponentialBackoff backoff(Clock::Duration::zero(), Clock::Duration(-5));
  EXPECT_EQ(backoff.base(), Clock::Duration(1));
  EXPECT_EQ(backoff.max(), Clock::Duration(1));
  EXPECT_EQ(backoff.Delay(-3), Clock::Duration(1));
  EXPECT_EQ(backoff.Delay(10), Clock::Duration(1));
}

}  // namespace
}  // namespace portico::core
