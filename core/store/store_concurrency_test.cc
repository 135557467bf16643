// Multi-threaded ObjectStore tests: run them with --gtest_repeat to look for flakiness.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/store/object_store.h"

namespace portico::core {
namespace {

StoreKey Key(int writer, int slot) {
  return StoreKey{"example.com", "Thing", "w" + std::to_string(writer), "k" + std::to_string(slot)};
}

// Writers put to their own keys, each op i (1-based) writing the body "w=<writer> i=<i>", so
// every put changes something and a writer's ops are ordered. In a consistent snapshot at head H,
// the newest op visible per writer, summed over writers, is the number of ops committed, which
// must equal H; the newest object version must equal H too. A snapshot whose head and objects
// were not read atomically (or objects copied while a writer mutates) breaks these sums.
TEST(ObjectStoreConcurrencyTest, SnapshotsAreConsistentCutsUnderConcurrentWriters) {
  constexpr int kWriters = 3;
  constexpr int kOpsPerWriter = 1500;
  constexpr int kKeysPerWriter = 8;
  constexpr int kReaders = 2;
  ObjectStore store;
  std::atomic<uint64_t> started{0};
  std::atomic<uint64_t> completed{0};
  std::atomic<bool> writers_done{false};
  std::atomic<int> bad_snapshots{0};
  std::atomic<int> snapshots{0};
  std::mutex first_error_mu;
  std::string first_error;
  auto report = [&](const std::string& what) {
    ++bad_snapshots;
    std::lock_guard lock(first_error_mu);
    if (first_error.empty()) first_error = what;
  };

  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&] {
      uint64_t previous = 0;
      while (!writers_done.load()) {
        uint64_t completed_before = completed.load();
        StoreSnapshot snap = store.Snapshot();
        uint64_t started_after = started.load();
        ++snapshots;
        std::map<int, int> newest_op;  // writer -> newest op visible
        std::set<uint64_t> versions;
        uint64_t max_version = 0;
        for (const StoredObject& o : snap.objects) {
          int w = -1, i = -1;
          if (o.json == nullptr || std::sscanf(o.json->c_str(), "w=%d i=%d", &w, &i) != 2) {
            report("unparsable object " + o.key.ToString());
            continue;
          }
          newest_op[w] = std::max(newest_op[w], i);
          versions.insert(o.version);
          max_version = std::max(max_version, o.version);
        }
        uint64_t sum = 0;
        for (const auto& [w, i] : newest_op) sum += static_cast<uint64_t>(i);
        if (sum != snap.version || (snap.version > 0 && max_version != snap.version) ||
            versions.size() != snap.objects.size() || snap.version < completed_before ||
            snap.version > started_after || snap.version < previous) {
          report("snapshot at " + std::to_string(snap.version) + ": ops " + std::to_string(sum) +
                 ", max version " + std::to_string(max_version) + ", completed before " +
                 std::to_string(completed_before) + ", started after " +
                 std::to_string(started_after));
        }
        // Changes since the previous snapshot are a consistent answer too.
        StatusOr<ChangeSet> changes = store.Changes(previous);
        if (!changes.ok() || changes->relist || changes->head < snap.version) {
          report("changes from " + std::to_string(previous));
        } else {
          uint64_t last = previous;
          for (const StoreEvent& e : changes->events) {
            if (e.version <= last || e.version > changes->head) report("event order");
            last = e.version;
          }
        }
        previous = snap.version;
      }
    });
  }
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 1; i <= kOpsPerWriter; ++i) {
        ++started;
        std::string body = "w=" + std::to_string(w) + " i=" + std::to_string(i);
        StatusOr<WriteResult> r = store.Put(Key(w, i % kKeysPerWriter), std::move(body));
        ASSERT_TRUE(r.ok() && r->changed);
        ++completed;
      }
    });
  }
  for (auto& t : writers) t.join();
  writers_done = true;
  for (auto& t : readers) t.join();

  EXPECT_EQ(bad_snapshots.load(), 0) << first_error;
  EXPECT_GT(snapshots.load(), 0);
  StoreSnapshot final_snap = store.Snapshot();
  EXPECT_EQ(final_snap.version, static_cast<uint64_t>(kWriters * kOpsPerWriter));
  EXPECT_EQ(final_snap.objects.size(), static_cast<size_t>(kWriters * kKeysPerWriter));
}

// A follower does what a ConfigSync stream does: snapshot, then wait for changes and apply the
// coalesced batches, relisting when the (deliberately tiny) log no longer covers its version.
// It must end identical to the store. A subscriber checks it is told about the final head.
TEST(ObjectStoreConcurrencyTest, FollowerConvergesThroughChangesAndRelists) {
  constexpr int kWriters = 2;
  constexpr int kOpsPerWriter = 1500;
  constexpr int kKeys = 40;
  ObjectStoreOptions options;
  options.max_log_bytes = 16 * 1024;  // a few dozen events: slow followers must relist
  ObjectStore store(options);

  std::mutex heads_mu;
  std::vector<uint64_t> notified;
  ChangeSubscription sub = store.Subscribe([&](uint64_t head) {
    std::lock_guard lock(heads_mu);
    notified.push_back(head);
  });

  std::atomic<bool> writers_done{false};
  std::atomic<int> relists{0};
  std::atomic<int> bad{0};
  std::map<StoreKey, std::pair<std::string, uint64_t>> replica;  // key -> (hash, version)
  std::thread follower([&] {
    auto load = [&](const StoreSnapshot& snap) {
      replica.clear();
      for (const StoredObject& o : snap.objects) replica[o.key] = {o.hash, o.version};
      return snap.version;
    };
    uint64_t version = load(store.Snapshot());
    while (!(writers_done.load() && version == store.Head())) {
      store.WaitForChange(version, std::chrono::steady_clock::now() + std::chrono::milliseconds(5));
      StatusOr<ChangeSet> changes = store.Changes(version);
      if (!changes.ok()) {
        ++bad;
        break;
      }
      if (changes->relist) {
        ++relists;
        version = load(store.Snapshot());
        continue;
      }
      for (const StoreEvent& e : changes->events) {
        if (e.version <= version) ++bad;
        if (e.op == StoreOp::kDelete) {
          replica.erase(e.key);
        } else {
          replica[e.key] = {e.hash, e.version};
        }
      }
      version = changes->head;
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      std::mt19937 rng(w + 7);
      for (int i = 0; i < kOpsPerWriter; ++i) {
        StoreKey key{"example.com", "Thing", "ns", "k" + std::to_string(rng() % kKeys)};
        if (rng() % 4 == 0) {
          ASSERT_TRUE(store.Delete(key).ok());
        } else {
          ASSERT_TRUE(store.Put(key, "w" + std::to_string(w) + "-" + std::to_string(i)).ok());
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  writers_done = true;
  follower.join();

  EXPECT_EQ(bad.load(), 0);
  StoreSnapshot final_snap = store.Snapshot();
  std::map<StoreKey, std::pair<std::string, uint64_t>> expected;
  for (const StoredObject& o : final_snap.objects) expected[o.key] = {o.hash, o.version};
  EXPECT_EQ(replica, expected);
  std::lock_guard lock(heads_mu);
  ASSERT_FALSE(notified.empty());
  for (size_t i = 1; i < notified.size(); ++i) EXPECT_LT(notified[i - 1], notified[i]);
  EXPECT_EQ(notified.back(), final_snap.version);
  RecordProperty("relists", relists.load());
}

// Many threads blocked in WaitForChange all see every writer's progress up to the final head.
TEST(ObjectStoreConcurrencyTest, ConcurrentWatchersReachTheFinalHead) {
  constexpr int kWatchers = 4;
  constexpr uint64_t kOps = 2000;
  ObjectStore store;
  std::vector<std::thread> watchers;
  std::atomic<int> reached{0};
  for (int i = 0; i < kWatchers; ++i) {
    watchers.emplace_back([&] {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      uint64_t seen = 0;
      while (seen < kOps && std::chrono::steady_clock::now() < deadline) {
        uint64_t head = store.WaitForChange(seen, deadline);
        if (head < seen) return;  // heads never go back
        seen = head;
      }
      if (seen == kOps) ++reached;
    });
  }
  std::thread writer([&] {
    for (uint64_t i = 0; i < kOps; ++i) {
      ASSERT_TRUE(
          store.Put(StoreKey{"g", "K", "", "k" + std::to_string(i % 10)}, std::to_string(i)).ok());
    }
  });
  writer.join();
  for (auto& t : watchers) t.join();
  EXPECT_EQ(reached.load(), kWatchers);
}

}  // namespace
}  // namespace portico::core
