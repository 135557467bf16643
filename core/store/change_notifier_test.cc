#include "core/store/change_notifier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace portico::core {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kTestDeadline = std::chrono::seconds(10);

TEST(StoreChangeNotifierTest, PublishRaisesHeadAndIgnoresOlderHeads) {
  ChangeNotifier n;
  EXPECT_EQ(n.Head(), 0u);
  n.Publish(3);
  n.Publish(2);
  EXPECT_EQ(n.Head(), 3u);
}

TEST(StoreChangeNotifierTest, WaitForReturnsAtOnceWhenAlreadyAhead) {
  ChangeNotifier n;
  n.Publish(5);
  EXPECT_EQ(n.WaitFor(4, Clock::now() + kTestDeadline), 5u);
}

TEST(StoreChangeNotifierTest, WaitForTimesOutAtDeadline) {
  ChangeNotifier n;
  n.Publish(5);
  EXPECT_EQ(n.WaitFor(5, Clock::now() - std::chrono::seconds(1)), 5u);  // deadline passed
  auto start = Clock::now();
  EXPECT_EQ(n.WaitFor(5, start + std::chrono::milliseconds(20)), 5u);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(20));
}

TEST(StoreChangeNotifierTest, WaitForWakesEveryWaiter) {
  ChangeNotifier n;
  std::vector<std::future<uint64_t>> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.push_back(
        std::async(std::launch::async, [&] { return n.WaitFor(0, Clock::now() + kTestDeadline); }));
  }
  n.Publish(1);
  for (auto& w : waiters) EXPECT_EQ(w.get(), 1u);
}

TEST(StoreChangeNotifierTest, SubscribersSeeHeadsAfterTheirInitialHead) {
  ChangeNotifier n;
  n.Publish(2);
  std::vector<uint64_t> a_heads, b_heads;
  ChangeSubscription a = n.Subscribe([&](uint64_t h) { a_heads.push_back(h); });
  EXPECT_EQ(a.initial_head(), 2u);
  n.Publish(3);
  ChangeSubscription b = n.Subscribe([&](uint64_t h) { b_heads.push_back(h); });
  n.Publish(3);  // nothing new
  n.Publish(5);
  EXPECT_EQ(a_heads, (std::vector<uint64_t>{3, 5}));
  EXPECT_EQ(b_heads, std::vector<uint64_t>{5});
}

TEST(StoreChangeNotifierTest, CancelAndDestructionStopCallbacks) {
  ChangeNotifier n;
  int calls = 0;
  {
    ChangeSubscription s = n.Subscribe([&](uint64_t) { ++calls; });
    n.Publish(1);
    EXPECT_TRUE(s.active());
    s.Cancel();
    EXPECT_FALSE(s.active());
    s.Cancel();  // idempotent
    n.Publish(2);
  }
  {
    ChangeSubscription s = n.Subscribe([&](uint64_t) { ++calls; });
  }
  n.Publish(3);
  EXPECT_EQ(calls, 1);
}

TEST(StoreChangeNotifierTest, MovedSubscriptionKeepsItsRegistration) {
  ChangeNotifier n;
  int calls = 0;
  ChangeSubscription outer;
  {
    ChangeSubscription s = n.Subscribe([&](uint64_t) { ++calls; });
    outer = std::move(s);
  }  // the moved-from handle's destruction does not cancel
  n.Publish(1);
  EXPECT_EQ(calls, 1);
  outer = ChangeSubscription();  // assigning over a subscription cancels it
  n.Publish(2);
  EXPECT_EQ(calls, 1);
}

TEST(StoreChangeNotifierTest, CallbackMayCancelItself) {
  ChangeNotifier n;
  int calls = 0;
  ChangeSubscription s;
  s = n.Subscribe([&](uint64_t) {
    ++calls;
    s.Cancel();
  });
  n.Publish(1);
  n.Publish(2);
  EXPECT_EQ(calls, 1);
}

TEST(StoreChangeNotifierTest, SubscriptionMayOutliveNotifier) {
  ChangeSubscription s;
  {
    ChangeNotifier n;
    s = n.Subscribe([](uint64_t) {});
  }
  s.Cancel();
  EXPECT_FALSE(s.active());
}

TEST(StoreChangeNotifierTest, CancelWaitsForRunningCallback) {
  ChangeNotifier n;
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> release_future = release.get_future().share();
  std::atomic<bool> running{false};
  ChangeSubscription s = n.Subscribe([&](uint64_t) {
    running = true;
    entered.set_value();
    release_future.wait();
    running = false;
  });
  auto publisher = std::async(std::launch::async, [&] { n.Publish(1); });
  ASSERT_EQ(entered.get_future().wait_for(kTestDeadline), std::future_status::ready);
  auto canceller = std::async(std::launch::async, [&] {
    s.Cancel();
    return running.load();  // must be false: Cancel waited for the callback
  });
  // Cancel cannot finish while the callback runs; give it a moment to (wrongly) do so.
  EXPECT_EQ(canceller.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout);
  release.set_value();
  EXPECT_FALSE(canceller.get());
  publisher.get();
}

TEST(StoreChangeNotifierTest, ConcurrentPublishersDeliverIncreasingHeads) {
  ChangeNotifier n;
  std::vector<uint64_t> heads;  // the callback is serialized per subscription
  ChangeSubscription s = n.Subscribe([&](uint64_t h) { heads.push_back(h); });
  constexpr int kThreads = 4;
  constexpr uint64_t kPerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; i < kPerThread; ++i) n.Publish(i * kThreads + t + 1);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_FALSE(heads.empty());
  for (size_t i = 1; i < heads.size(); ++i) ASSERT_LT(heads[i - 1], heads[i]) << i;
  EXPECT_EQ(heads.back(), kPerThread * kThreads);
}

}  // namespace
}  // namespace portico::core
