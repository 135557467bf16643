#include "core/workqueue/token_bucket.h"

#include <gtest/gtest.h>

#include "core/common/fake_clock.h"

namespace portico::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(WorkQueueTokenBucketTest, BurstIsFreeThenOnePerInterval) {
  FakeClock clock;
  TokenBucket bucket(/*qps=*/10, /*burst=*/3);
  EXPECT_EQ(bucket.Reserve(clock.Now()), Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(clock.Now()), Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(clock.Now()), Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(clock.Now()), milliseconds(100));
  EXPECT_EQ(bucket.Reserve(clock.Now()), milliseconds(200));
}

TEST(WorkQueueTokenBucketTest, RefillsAtQpsUpToBurst) {
  FakeClock clock;
  TokenBucket bucket(/*qps=*/10, /*burst=*/3);
  for (int i = 0; i < 5; ++i) (void)bucket.Reserve(clock.Now());  // balance -2
  clock.Advance(milliseconds(300));                               // +3 tokens: balance 1
  EXPECT_EQ(bucket.Reserve(clock.Now()), Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(clock.Now()), milliseconds(100));
  clock.Advance(seconds(60));  // a long idle period refills only up to the burst
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.Reserve(clock.Now()), Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(clock.Now()), milliseconds(100));
}

TEST(WorkQueueTokenBucketTest, NonPositiveQpsIsUnlimited) {
  FakeClock clock;
  TokenBucket bucket(/*qps=*/0, /*burst=*/1);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(bucket.Reserve(clock.Now()), Clock::Duration::zero());
}

TEST(WorkQueueTokenBucketTest, TimeBeforeLastReserveCountsAsLast) {
  FakeClock clock;
  TokenBucket bucket(/*qps=*/1, /*burst=*/1);
  EXPECT_EQ(bucket.Reserve(clock.Now()), Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(clock.Now() - seconds(10)), seconds(1));
}

}  // namespace
}  // namespace portico::core
