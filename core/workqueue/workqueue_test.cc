#include "core/workqueue/workqueue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "core/common/fake_clock.h"

namespace portico::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Generous bound for waits on other threads; tests finish far sooner unless broken.
constexpr auto kTestDeadline = std::chrono::seconds(10);

// WaitFor polls `pred` (no sleeping) until it holds or the real-time deadline passes.
template <typename Pred>
bool WaitFor(Pred pred) {
  auto deadline = std::chrono::steady_clock::now() + kTestDeadline;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Ready waits for `f`; on timeout it shuts `q` down so the helper thread ends and the failing
// test does not hang in the future's destructor.
template <typename T>
bool Ready(std::future<T>& f, WorkQueue& q) {
  if (f.wait_for(kTestDeadline) == std::future_status::ready) return true;
  q.ShutDown();
  return false;
}

// StartedShuttingDown waits until a helper thread's ShutDownWithDrain took effect.
bool StartedShuttingDown(WorkQueue& q) {
  if (WaitFor([&] { return q.ShuttingDown(); })) return true;
  q.ShutDown();
  return false;
}

// Next takes the key ready now, without blocking, so a broken queue fails a test instead of
// hanging it. Blocking Get() is exercised from helper threads with deadlines.
std::optional<std::string> Next(WorkQueue& q) { return q.TryGet(Clock::Duration::zero()); }

class WorkQueueTest : public ::testing::Test {
 protected:
  // Options with the fake clock and no retry rate limit unless a test sets one.
  WorkQueueOptions Options() {
    WorkQueueOptions options;
    options.clock = &clock_;
    options.retry_qps = 0;
    return options;
  }

  FakeClock clock_;
};

TEST_F(WorkQueueTest, HandsOutKeysInFifoOrder) {
  WorkQueue q(Options());
  EXPECT_TRUE(q.Add("a"));
  EXPECT_TRUE(q.Add("b"));
  EXPECT_TRUE(q.Add("c"));
  EXPECT_EQ(Next(q), "a");
  EXPECT_EQ(Next(q), "b");
  EXPECT_EQ(Next(q), "c");
  EXPECT_EQ(Next(q), std::nullopt);
}

TEST_F(WorkQueueTest, DeduplicatesQueuedKeys) {
  WorkQueue q(Options());
  q.Add("a");
  q.Add("b");
  q.Add("a");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(Next(q), "a");
  EXPECT_EQ(Next(q), "b");
  EXPECT_EQ(Next(q), std::nullopt);
  WorkQueueCounters c = q.Counters();
  EXPECT_EQ(c.adds, 4u);
  EXPECT_EQ(c.deduplicated, 2u);
}

TEST_F(WorkQueueTest, KeyAddedWhileProcessingIsNotHandedOutUntilDone) {
  WorkQueue q(Options());
  q.Add("a");
  ASSERT_EQ(Next(q), "a");
  q.Add("a");
  q.Add("a");  // several adds during processing still mean one re-run
  q.Add("b");
  EXPECT_EQ(Next(q), "b");  // b is ready; a must wait for Done
  EXPECT_EQ(Next(q), std::nullopt);
  WorkQueueCounters c = q.Counters();
  EXPECT_EQ(c.depth, 0u);
  EXPECT_EQ(c.in_flight, 2u);
  q.Done("a");
  EXPECT_EQ(Next(q), "a");
  q.Done("a");
  q.Done("b");
  EXPECT_EQ(Next(q), std::nullopt);
  EXPECT_EQ(q.Counters().processed, 3u);
}

TEST_F(WorkQueueTest, DoneWithoutReAddDoesNotRequeue) {
  WorkQueue q(Options());
  q.Add("a");
  ASSERT_EQ(Next(q), "a");
  q.Done("a");
  EXPECT_EQ(Next(q), std::nullopt);
}

TEST_F(WorkQueueTest, DoneForKeyNotInFlightIsIgnored) {
  WorkQueue q(Options());
  q.Add("a");
  q.Done("a");  // queued, not in flight
  q.Done("zzz");
  EXPECT_EQ(q.Counters().processed, 0u);
  EXPECT_EQ(Next(q), "a");
}

TEST_F(WorkQueueTest, GetBlocksUntilAdd) {
  WorkQueue q(Options());
  auto got = std::async(std::launch::async, [&] { return q.Get(); });
  q.Add("a");
  ASSERT_TRUE(Ready(got, q));
  EXPECT_EQ(got.get(), "a");
}

TEST_F(WorkQueueTest, AddAfterWaitsForTheClock) {
  WorkQueue q(Options());
  EXPECT_TRUE(q.AddAfter("a", milliseconds(100)));
  EXPECT_EQ(Next(q), std::nullopt);
  EXPECT_EQ(q.Counters().waiting, 1u);
  clock_.Advance(milliseconds(99));
  EXPECT_EQ(Next(q), std::nullopt);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(Next(q), "a");
  EXPECT_EQ(q.Counters().waiting, 0u);
}

TEST_F(WorkQueueTest, AddAfterNonPositiveDelayAddsNow) {
  WorkQueue q(Options());
  q.AddAfter("a", Clock::Duration::zero());
  q.AddAfter("b", -seconds(1));
  EXPECT_EQ(Next(q), "a");
  EXPECT_EQ(Next(q), "b");
}

TEST_F(WorkQueueTest, AddAfterKeepsTheEarlierDueTime) {
  WorkQueue q(Options());
  q.AddAfter("a", seconds(10));
  q.AddAfter("a", seconds(1));   // earlier: wins
  q.AddAfter("a", seconds(30));  // later: merged
  EXPECT_EQ(q.Counters().waiting, 1u);
  clock_.Advance(seconds(1));
  EXPECT_EQ(Next(q), "a");
  q.Done("a");
  clock_.Advance(seconds(60));  // the superseded due times do not fire again
  EXPECT_EQ(Next(q), std::nullopt);
  EXPECT_EQ(q.Counters().deduplicated, 2u);
}

TEST_F(WorkQueueTest, DelayedKeysComeDueInTimeOrder) {
  WorkQueue q(Options());
  q.AddAfter("late", seconds(3));
  q.AddAfter("early", seconds(1));
  q.AddAfter("middle", seconds(2));
  clock_.Advance(seconds(5));
  EXPECT_EQ(Next(q), "early");
  EXPECT_EQ(Next(q), "middle");
  EXPECT_EQ(Next(q), "late");
}

TEST_F(WorkQueueTest, DelayedKeyAlreadyQueuedIsDeduplicated) {
  WorkQueue q(Options());
  q.AddAfter("a", seconds(1));
  q.Add("a");
  clock_.Advance(seconds(1));
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(Next(q), "a");
  EXPECT_EQ(Next(q), std::nullopt);
}

TEST_F(WorkQueueTest, BlockedGetWakesWhenDelayedKeyComesDue) {
  WorkQueue q(Options());
  q.AddAfter("a", seconds(30));
  auto got = std::async(std::launch::async, [&] { return q.Get(); });
  // Whether the getter already waits or not, the jump either wakes it or is seen by it.
  clock_.Advance(seconds(30));
  ASSERT_TRUE(Ready(got, q));
  EXPECT_EQ(got.get(), "a");
}

TEST_F(WorkQueueTest, BlockedGetWakesForEarlierDelayedKey) {
  WorkQueue q(Options());
  q.AddAfter("late", seconds(100));
  auto got = std::async(std::launch::async, [&] { return q.Get(); });
  q.AddAfter("early", seconds(1));  // the getter must not keep sleeping until "late"
  clock_.Advance(seconds(1));
  ASSERT_TRUE(Ready(got, q));
  EXPECT_EQ(got.get(), "early");
}

TEST_F(WorkQueueTest, TryGetTimesOutOnTheQueueClock) {
  WorkQueue q(Options());
  auto got = std::async(std::launch::async, [&] { return q.TryGet(seconds(1)); });
  // The getter's deadline is fixed when it starts; keep moving time until it gives up.
  bool done = false;
  for (int i = 0; i < 1000 && !done; ++i) {
    clock_.Advance(milliseconds(500));
    done = got.wait_for(milliseconds(10)) == std::future_status::ready;
  }
  if (!done) q.ShutDown();  // let the helper thread end
  ASSERT_TRUE(done);
  EXPECT_EQ(got.get(), std::nullopt);
  EXPECT_FALSE(q.ShuttingDown());
}

TEST_F(WorkQueueTest, RealClockDelayedAdd) {
  WorkQueueOptions options;  // real clock: one short delay proves the wait path end to end
  WorkQueue q(options);
  q.AddAfter("a", milliseconds(2));
  EXPECT_EQ(q.TryGet(kTestDeadline), "a");
}

TEST_F(WorkQueueTest, ShutDownStopsGetAndRefusesAdds) {
  WorkQueue q(Options());
  q.Add("a");
  q.AddAfter("b", seconds(1));
  q.ShutDown();
  EXPECT_TRUE(q.ShuttingDown());
  EXPECT_EQ(Next(q), std::nullopt);  // queued "a" is abandoned
  EXPECT_FALSE(q.Add("c"));
  EXPECT_FALSE(q.AddAfter("c", seconds(1)));
  EXPECT_FALSE(q.AddRateLimited("c"));
  WorkQueueCounters c = q.Counters();
  EXPECT_EQ(c.rejected, 3u);
  EXPECT_EQ(c.waiting, 0u);
}

TEST_F(WorkQueueTest, ShutDownWakesBlockedGetters) {
  WorkQueue q(Options());
  std::vector<std::future<std::optional<std::string>>> getters;
  for (int i = 0; i < 3; ++i) {
    getters.push_back(std::async(std::launch::async, [&] { return q.Get(); }));
  }
  q.ShutDown();
  for (auto& g : getters) {
    ASSERT_TRUE(Ready(g, q));
    EXPECT_EQ(g.get(), std::nullopt);
  }
}

TEST_F(WorkQueueTest, ShutDownWithDrainProcessesQueuedAndReAddedKeys) {
  WorkQueue q(Options());
  q.Add("a");
  q.Add("b");
  q.AddAfter("delayed", seconds(1));
  ASSERT_EQ(Next(q), "a");
  q.Add("a");  // re-added while in flight, before the drain: must run again
  auto drain = std::async(std::launch::async, [&] { return q.ShutDownWithDrain(); });
  ASSERT_TRUE(StartedShuttingDown(q));
  EXPECT_FALSE(q.Add("c"));
  EXPECT_EQ(drain.wait_for(Clock::Duration::zero()), std::future_status::timeout);
  q.Done("a");
  EXPECT_EQ(Next(q), "b");
  q.Done("b");
  EXPECT_EQ(Next(q), "a");
  EXPECT_EQ(drain.wait_for(Clock::Duration::zero()), std::future_status::timeout);
  q.Done("a");
  ASSERT_TRUE(Ready(drain, q));
  EXPECT_TRUE(drain.get());
  EXPECT_EQ(Next(q), std::nullopt);
  clock_.Advance(seconds(2));  // the delayed key was discarded by the drain
  EXPECT_EQ(Next(q), std::nullopt);
  WorkQueueCounters c = q.Counters();
  EXPECT_EQ(c.processed, 3u);
  EXPECT_EQ(c.depth, 0u);
  EXPECT_EQ(c.in_flight, 0u);
  EXPECT_EQ(c.waiting, 0u);
}

TEST_F(WorkQueueTest, ShutDownWithDrainOnIdleQueueReturnsAtOnce) {
  WorkQueue q(Options());
  EXPECT_TRUE(q.ShutDownWithDrain());
  EXPECT_EQ(Next(q), std::nullopt);
}

TEST_F(WorkQueueTest, DrainReleasesGettersOnceEverythingIsDone) {
  WorkQueue q(Options());
  q.Add("a");
  ASSERT_EQ(Next(q), "a");
  // A second worker blocked in Get must wait while "a" is in flight (its Done could re-queue)
  // and return nullopt once the drain is complete.
  auto getter = std::async(std::launch::async, [&] { return q.Get(); });
  auto drain = std::async(std::launch::async, [&] { return q.ShutDownWithDrain(); });
  ASSERT_TRUE(StartedShuttingDown(q));
  EXPECT_EQ(getter.wait_for(Clock::Duration::zero()), std::future_status::timeout);
  q.Done("a");
  ASSERT_TRUE(Ready(getter, q));
  EXPECT_EQ(getter.get(), std::nullopt);
  ASSERT_TRUE(Ready(drain, q));
  EXPECT_TRUE(drain.get());
}

TEST_F(WorkQueueTest, ShutDownInterruptsDrain) {
  WorkQueue q(Options());
  q.Add("a");
  ASSERT_EQ(Next(q), "a");
  auto drain = std::async(std::launch::async, [&] { return q.ShutDownWithDrain(); });
  ASSERT_TRUE(StartedShuttingDown(q));
  q.ShutDown();
  ASSERT_TRUE(Ready(drain, q));
  EXPECT_FALSE(drain.get());
  q.Done("a");  // a late Done is harmless
  EXPECT_EQ(Next(q), std::nullopt);
}

TEST_F(WorkQueueTest, WaitUntilIdle) {
  WorkQueue q(Options());
  EXPECT_TRUE(q.WaitUntilIdle(Clock::Duration::zero()));
  q.AddAfter("later", seconds(10));  // delayed keys do not count
  EXPECT_TRUE(q.WaitUntilIdle(Clock::Duration::zero()));
  q.Add("a");
  EXPECT_FALSE(q.WaitUntilIdle(Clock::Duration::zero()));
  auto idle = std::async(std::launch::async, [&] { return q.WaitUntilIdle(seconds(3600)); });
  ASSERT_EQ(Next(q), "a");
  EXPECT_EQ(idle.wait_for(Clock::Duration::zero()), std::future_status::timeout);
  q.Done("a");
  ASSERT_TRUE(Ready(idle, q));
  EXPECT_TRUE(idle.get());
}

TEST_F(WorkQueueTest, WaitUntilIdleTimesOutOnTheQueueClock) {
  WorkQueue q(Options());
  q.Add("a");
  auto idle = std::async(std::launch::async, [&] { return q.WaitUntilIdle(seconds(1)); });
  bool done = false;
  for (int i = 0; i < 1000 && !done; ++i) {
    clock_.Advance(milliseconds(500));
    done = idle.wait_for(milliseconds(10)) == std::future_status::ready;
  }
  if (!done) q.ShutDown();  // let the helper thread end
  ASSERT_TRUE(done);
  EXPECT_FALSE(idle.get());
}

TEST_F(WorkQueueTest, RegistersWithTheClockForItsLifetime) {
  {
    WorkQueue q(Options());
    EXPECT_EQ(clock_.NumObservers(), 1u);
  }
  EXPECT_EQ(clock_.NumObservers(), 0u);
}

TEST_F(WorkQueueTest, CountersAddUp) {
  WorkQueue q(Options());
  q.Add("a");
  q.Add("a");
  q.Add("b");
  q.AddAfter("c", seconds(1));
  q.AddRateLimited("d");
  WorkQueueCounters c = q.Counters();
  EXPECT_EQ(c.adds, 4u);
  EXPECT_EQ(c.deduplicated, 1u);
  EXPECT_EQ(c.retries, 1u);
  EXPECT_EQ(c.depth, 2u);
  EXPECT_EQ(c.waiting, 2u);
  EXPECT_EQ(c.in_flight, 0u);
  ASSERT_EQ(Next(q), "a");
  c = q.Counters();
  EXPECT_EQ(c.depth, 1u);
  EXPECT_EQ(c.in_flight, 1u);
  q.Done("a");
  clock_.Advance(seconds(1));
  c = q.Counters();  // "c" and "d" came due
  EXPECT_EQ(c.depth, 3u);
  EXPECT_EQ(c.waiting, 0u);
  EXPECT_EQ(c.processed, 1u);
  EXPECT_EQ(c.dropped, 0u);
  EXPECT_EQ(c.rejected, 0u);
}

// --- Retries: backoff, token bucket, bounds ---------------------------------------------------

class WorkQueueRetryTest : public WorkQueueTest {
 protected:
  // ExpectDueAfter checks that `key` is not ready one tick before `delay` from now and is ready
  // at `delay`, then takes it and marks it done.
  void ExpectDueAfter(WorkQueue& q, const std::string& key, Clock::Duration delay) {
    Clock::TimePoint due = clock_.Now() + delay;
    clock_.AdvanceTo(due - Clock::Duration(1));
    EXPECT_EQ(Next(q), std::nullopt) << key << " early";
    clock_.AdvanceTo(due);
    EXPECT_EQ(Next(q), key) << key << " not due";
    q.Done(key);
  }
};

TEST_F(WorkQueueRetryTest, BackoffDoublesFromFiveMillisecondsAndCaps) {
  WorkQueueOptions options = Options();
  options.max_delay = milliseconds(100);
  WorkQueue q(options);
  const milliseconds expected[] = {milliseconds(5),  milliseconds(10), milliseconds(20),
                                   milliseconds(40), milliseconds(80), milliseconds(100),
                                   milliseconds(100)};
  int n = 0;
  for (milliseconds delay : expected) {
    EXPECT_EQ(q.NumRequeues("k"), n);
    ASSERT_TRUE(q.AddRateLimited("k"));
    ++n;
    ExpectDueAfter(q, "k", delay);
  }
  EXPECT_EQ(q.NumRequeues("k"), n);
  EXPECT_EQ(q.Counters().retries, static_cast<uint64_t>(n));
}

TEST_F(WorkQueueRetryTest, DefaultBackoffReachesOneThousandSeconds) {
  WorkQueue q(Options());  // defaults: 5 ms doubling, capped at 1000 s
  for (int i = 0; i < 18; ++i) {
    ASSERT_TRUE(q.AddRateLimited("k"));
    clock_.Advance(seconds(1000));
    ASSERT_EQ(Next(q), "k");
    q.Done("k");
  }
  ASSERT_TRUE(q.AddRateLimited("k"));  // 19th retry: 5 ms * 2^18 > 1000 s, so capped
  ExpectDueAfter(q, "k", seconds(1000));
}

TEST_F(WorkQueueRetryTest, BackoffIsPerKeyAndForgetResetsIt) {
  WorkQueue q(Options());
  q.AddRateLimited("a");
  ExpectDueAfter(q, "a", milliseconds(5));
  q.AddRateLimited("a");
  ExpectDueAfter(q, "a", milliseconds(10));
  q.AddRateLimited("b");  // another key starts at the base
  ExpectDueAfter(q, "b", milliseconds(5));
  q.Forget("a");
  EXPECT_EQ(q.NumRequeues("a"), 0);
  q.AddRateLimited("a");
  ExpectDueAfter(q, "a", milliseconds(5));
}

TEST_F(WorkQueueRetryTest, MaxRetriesDropsAndCounts) {
  WorkQueueOptions options = Options();
  options.max_retries = 2;
  WorkQueue q(options);
  EXPECT_TRUE(q.AddRateLimited("k"));
  ExpectDueAfter(q, "k", milliseconds(5));
  EXPECT_TRUE(q.AddRateLimited("k"));
  ExpectDueAfter(q, "k", milliseconds(10));
  EXPECT_FALSE(q.AddRateLimited("k"));  // third retry: dropped
  clock_.Advance(seconds(3600));
  EXPECT_EQ(Next(q), std::nullopt);
  WorkQueueCounters c = q.Counters();
  EXPECT_EQ(c.dropped, 1u);
  EXPECT_EQ(c.retries, 2u);
  // A dropped key is forgotten: a fresh failure later starts over.
  EXPECT_EQ(q.NumRequeues("k"), 0);
  EXPECT_TRUE(q.AddRateLimited("k"));
  ExpectDueAfter(q, "k", milliseconds(5));
}

TEST_F(WorkQueueRetryTest, ZeroMaxRetriesNeverRetries) {
  WorkQueueOptions options = Options();
  options.max_retries = 0;
  WorkQueue q(options);
  EXPECT_FALSE(q.AddRateLimited("k"));
  EXPECT_TRUE(q.Add("k"));  // fresh adds are unaffected
  EXPECT_EQ(q.Counters().dropped, 1u);
}

TEST_F(WorkQueueRetryTest, TokenBucketDelaysRetriesOnly) {
  WorkQueueOptions options = Options();
  options.base_delay = milliseconds(1);
  options.retry_qps = 1;
  options.retry_burst = 2;
  WorkQueue q(options);
  // The burst covers two retries; the next ones wait for tokens at 1 per second.
  for (const char* key : {"r1", "r2", "r3", "r4"}) ASSERT_TRUE(q.AddRateLimited(key));
  // A burst of fresh adds while the bucket is empty is never delayed.
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(q.Add("fresh-" + std::to_string(i)));
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(Next(q), "fresh-" + std::to_string(i));
  }
  EXPECT_EQ(Next(q), std::nullopt);
  clock_.Advance(milliseconds(1));  // r1 and r2: the backoff only
  EXPECT_EQ(Next(q), "r1");
  EXPECT_EQ(Next(q), "r2");
  EXPECT_EQ(Next(q), std::nullopt);
  clock_.Advance(milliseconds(999));  // 1 s: r3's token
  EXPECT_EQ(Next(q), "r3");
  EXPECT_EQ(Next(q), std::nullopt);
  clock_.Advance(seconds(1));  // 2 s: r4's token
  EXPECT_EQ(Next(q), "r4");
  EXPECT_EQ(q.Counters().retries, 4u);
}

TEST_F(WorkQueueRetryTest, FreshAddsDoNotSpendRetryTokens) {
  WorkQueueOptions options = Options();
  options.retry_qps = 1;
  options.retry_burst = 1;
  WorkQueue q(options);
  for (int i = 0; i < 100; ++i) q.Add("fresh-" + std::to_string(i));
  ASSERT_TRUE(q.AddRateLimited("r"));  // the bucket still holds its token: backoff only
  clock_.Advance(milliseconds(5));
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(Next(q).has_value());
  EXPECT_EQ(Next(q), "r");
}

TEST_F(WorkQueueRetryTest, RetryOfInFlightKeyRunsAfterDone) {
  WorkQueue q(Options());
  q.Add("k");
  ASSERT_EQ(Next(q), "k");
  q.AddRateLimited("k");  // the usual failure path: retry, then Done
  clock_.Advance(milliseconds(5));
  EXPECT_EQ(Next(q), std::nullopt);  // still in flight
  q.Done("k");
  EXPECT_EQ(Next(q), "k");
}

TEST(WorkQueueOptionsTest, ValidateRejectsNonsense) {
  EXPECT_TRUE(WorkQueueOptions().Validate().ok());
  WorkQueueOptions o;
  o.base_delay = Clock::Duration::zero();
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = WorkQueueOptions();
  o.max_delay = std::chrono::milliseconds(1);
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = WorkQueueOptions();
  o.retry_burst = 0;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o.retry_qps = 0;  // no rate limit: the burst does not matter
  EXPECT_TRUE(o.Validate().ok());
}

}  // namespace
}  // namespace portico::core
