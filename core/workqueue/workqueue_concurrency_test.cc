// Multi-threaded WorkQueue tests: run them with --gtest_repeat to look for flakiness.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/common/fake_clock.h"
#include "core/workqueue/workqueue.h"

namespace portico::core {
namespace {

constexpr auto kTestDeadline = std::chrono::seconds(10);

void AtomicMax(std::atomic<uint64_t>& target, uint64_t value) {
  uint64_t seen = target.load();
  while (seen < value && !target.compare_exchange_weak(seen, value)) {
  }
}

struct KeyState {
  std::atomic<bool> busy{false};
  std::atomic<uint64_t> last_add_ticket{0};    // ticket taken just before the latest Add
  std::atomic<uint64_t> last_start_ticket{0};  // ticket taken when the latest processing began
  std::atomic<int> runs{0};
};

// N workers and several producers hammer a few keys. Asserts, per key: never processed by two
// workers at once, and the last processing began after the last Add was requested (so no Add is
// lost, including Adds that arrive while the key is in flight).
TEST(WorkQueueConcurrencyTest, NoConcurrentProcessingAndEveryAddIsFollowedByProcessing) {
  constexpr int kKeys = 16;
  constexpr int kWorkers = 4;
  constexpr int kProducers = 3;
  constexpr int kAddsPerProducer = 4000;

  WorkQueueOptions options;
  options.retry_qps = 0;
  WorkQueue q(options);
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back("group/Kind/ns/obj-" + std::to_string(i));
  auto states = std::make_unique<KeyState[]>(kKeys);
  std::atomic<uint64_t> tickets{0};
  std::atomic<int> overlaps{0};

  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (std::optional<std::string> key = q.Get()) {
        int index = std::stoi(key->substr(key->rfind('-') + 1));
        KeyState& state = states[index];
        AtomicMax(state.last_start_ticket, ++tickets);
        if (state.busy.exchange(true)) ++overlaps;
        ++state.runs;
        for (int i = 0; i < 20; ++i) std::this_thread::yield();  // widen the in-flight window
        state.busy.store(false);
        q.Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 rng(p + 1);
      for (int i = 0; i < kAddsPerProducer; ++i) {
        int index = static_cast<int>(rng() % kKeys);
        AtomicMax(states[index].last_add_ticket, ++tickets);
        ASSERT_TRUE(q.Add(keys[index]));
      }
    });
  }
  for (auto& t : producers) t.join();
  EXPECT_TRUE(q.ShutDownWithDrain());
  for (auto& t : workers) t.join();

  EXPECT_EQ(overlaps.load(), 0);
  int total_runs = 0;
  for (int i = 0; i < kKeys; ++i) {
    if (states[i].last_add_ticket.load() == 0) continue;
    EXPECT_GT(states[i].last_start_ticket.load(), states[i].last_add_ticket.load()) << keys[i];
    total_runs += states[i].runs.load();
  }
  WorkQueueCounters c = q.Counters();
  EXPECT_EQ(c.adds, static_cast<uint64_t>(kProducers * kAddsPerProducer));
  EXPECT_EQ(c.processed, static_cast<uint64_t>(total_runs));
  // Every add was either handed out (a run) or merged into a pending one.
  EXPECT_EQ(c.adds, c.processed + c.deduplicated);
  EXPECT_EQ(c.depth, 0u);
  EXPECT_EQ(c.in_flight, 0u);
}

// Workers blocked in Get are woken by fake-clock jumps while keys come due concurrently.
TEST(WorkQueueConcurrencyTest, DelayedKeysReachBlockedWorkersOnFakeClock) {
  constexpr int kKeys = 200;
  constexpr int kWorkers = 3;
  FakeClock clock;
  WorkQueueOptions options;
  options.clock = &clock;
  options.retry_qps = 0;
  WorkQueue q(options);
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (std::optional<std::string> key = q.Get()) {
        // Half of the keys fail once and come back through the retry path.
        if (key->back() % 2 == 0 && q.NumRequeues(*key) == 0) {
          q.AddRateLimited(*key);
        } else {
          q.Forget(*key);
          ++processed;
        }
        q.Done(*key);
      }
    });
  }
  for (int i = 0; i < kKeys; ++i) {
    q.AddAfter("k" + std::to_string(i), std::chrono::milliseconds(1 + i % 50));
  }
  auto deadline = std::chrono::steady_clock::now() + kTestDeadline;
  while (processed.load() < kKeys && std::chrono::steady_clock::now() < deadline) {
    clock.Advance(std::chrono::milliseconds(1));
    std::this_thread::yield();
  }
  EXPECT_EQ(processed.load(), kKeys);
  q.ShutDown();
  for (auto& t : workers) t.join();
  WorkQueueCounters c = q.Counters();
  EXPECT_EQ(c.retries, static_cast<uint64_t>(kKeys / 2));
  EXPECT_EQ(c.processed, static_cast<uint64_t>(kKeys + kKeys / 2));
}

}  // namespace
}  // namespace portico::core
