// bucket_table_test: the token bucket arithmetic, exact in milliseconds, and its memory bound.
#include "bucket_table.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace example::ratelimit {
namespace {

TEST(BucketTableTest, AFreshKeyHasTheWholeQuotaThenWaitsForTheNextToken) {
  BucketTable table(3, 60000);  // 3 per minute: one token every 20 s
  for (int i = 0; i < 3; ++i) {
    Decision d = table.Take("a", 1000);
    EXPECT_TRUE(d.allowed) << i;
    EXPECT_EQ(d.remaining, 2 - i);
  }
  Decision refused = table.Take("a", 1000);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.remaining, 0);
  EXPECT_EQ(refused.retry_after_ms, 20000);
  EXPECT_EQ(refused.reset_ms, 60000);
  // One millisecond short of the next token: still refused, 1 ms to wait.
  EXPECT_EQ(table.Take("a", 20999).retry_after_ms, 1);
  EXPECT_TRUE(table.Take("a", 21000).allowed);
  EXPECT_FALSE(table.Take("a", 21000).allowed);
}

TEST(BucketTableTest, KeysHaveTheirOwnBuckets) {
  BucketTable table(1, 1000);
  EXPECT_TRUE(table.Take("a", 0).allowed);
  EXPECT_FALSE(table.Take("a", 0).allowed);
  EXPECT_TRUE(table.Take("b", 0).allowed);
  EXPECT_EQ(table.size(), 2u);
}

TEST(BucketTableTest, AnIdleBucketRefillsToItsCapacityOnly) {
  BucketTable table(2, 1000);
  EXPECT_TRUE(table.Take("a", 0).allowed);
  EXPECT_TRUE(table.Take("a", 0).allowed);
  // A day later the bucket holds 2 tokens, not 86,400 * 2.
  const int64_t later = 86400 * 1000;
  EXPECT_TRUE(table.Take("a", later).allowed);
  EXPECT_TRUE(table.Take("a", later).allowed);
  EXPECT_FALSE(table.Take("a", later).allowed);
}

TEST(BucketTableTest, AClockThatGoesBackRefillsNothing) {
  BucketTable table(1, 1000);
  EXPECT_TRUE(table.Take("a", 5000).allowed);
  EXPECT_FALSE(table.Take("a", 1000).allowed);
  EXPECT_FALSE(table.Take("a", 5999).allowed);
  EXPECT_TRUE(table.Take("a", 6000).allowed);
}

TEST(BucketTableTest, AtTheKeyLimitFullBucketsAreDroppedAndNewKeysShareAnOverflowBucket) {
  BucketTable table(1, 1000, /*max_keys=*/BucketTable::kShards);  // one key per shard
  // Three keys of one shard.
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 3; ++i) {
    std::string k = "k" + std::to_string(i);
    if (keys.empty() || BucketTable::ShardOf(k) == BucketTable::ShardOf(keys[0])) keys.push_back(k);
  }
  EXPECT_TRUE(table.Take(keys[0], 0).allowed);   // its own bucket
  EXPECT_TRUE(table.Take(keys[1], 0).allowed);   // the shard is full: the overflow bucket
  EXPECT_FALSE(table.Take(keys[2], 0).allowed);  // which it shares
  EXPECT_EQ(table.size(), 1u);
  // At t=1000 keys[0] has refilled, is dropped, and keys[1] gets a bucket of its own.
  EXPECT_TRUE(table.Take(keys[1], 1000).allowed);
  EXPECT_FALSE(table.Take(keys[1], 1000).allowed);
  EXPECT_TRUE(table.Take(keys[2], 1000).allowed);  // overflow again, refilled
  EXPECT_EQ(table.size(), 1u);
}

TEST(BucketTableTest, ConcurrentTakesSpendEachTokenOnce) {
  BucketTable table(1000, 3600000);
  std::vector<std::thread> threads;
  std::vector<int> allowed(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) allowed[t] += table.Take("shared", 0).allowed ? 1 : 0;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(allowed[0] + allowed[1] + allowed[2] + allowed[3], 1000);
}

}  // namespace
}  // namespace example::ratelimit
