#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <string>
#include <vector>

#include "core/common/fake_clock.h"
#include "core/common/sha256.h"
#include "core/store/object_store.h"

namespace portico::core {
namespace {

using std::chrono::seconds;
constexpr auto kTestDeadline = std::chrono::seconds(10);

StoreKey Route(const std::string& name) {
  return StoreKey{"gateway.networking.k8s.io", "HTTPRoute", "default", name};
}

class ObjectStoreTest : public ::testing::Test {
 protected:
  ObjectStoreOptions Options() {
    ObjectStoreOptions options;
    options.clock = &clock_;
    return options;
  }

  // MustPut and MustDelete unwrap a write that must succeed.
  static WriteResult MustPut(ObjectStore& store, const StoreKey& key,
                             std::optional<std::string> json) {
    StatusOr<WriteResult> r = store.Put(key, std::move(json));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : WriteResult{};
  }
  static WriteResult MustDelete(ObjectStore& store, const StoreKey& key) {
    StatusOr<WriteResult> r = store.Delete(key);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : WriteResult{};
  }
  static ChangeSet MustChanges(const ObjectStore& store, uint64_t from) {
    StatusOr<ChangeSet> r = store.Changes(from);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : ChangeSet{};
  }

  FakeClock clock_;
};

TEST_F(ObjectStoreTest, SequenceStartsAtZeroAndIncrementsPerChange) {
  ObjectStore store(Options());
  EXPECT_EQ(store.Head(), 0u);
  EXPECT_EQ(MustPut(store, Route("a"), "{}").version, 1u);
  EXPECT_EQ(MustPut(store, Route("b"), "{}").version, 2u);
  EXPECT_EQ(MustPut(store, Route("a"), R"({"x":1})").version, 3u);
  EXPECT_EQ(MustDelete(store, Route("b")).version, 4u);
  EXPECT_EQ(store.Head(), 4u);
  EXPECT_EQ(store.Get(Route("a"))->version, 3u);
}

TEST_F(ObjectStoreTest, IdenticalPutIsANoOpReturningTheObjectVersion) {
  ObjectStore store(Options());
  WriteResult first = MustPut(store, Route("a"), R"({"x":1})");
  MustPut(store, Route("b"), "{}");
  WriteResult again = MustPut(store, Route("a"), R"({"x":1})");
  EXPECT_TRUE(first.changed);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(again.version, 1u);  // the object's version, not the head (2)
  EXPECT_EQ(store.Head(), 2u);
  EXPECT_EQ(store.Stats().log_entries, 2u);
}

TEST_F(ObjectStoreTest, StoresJsonWithItsSha256) {
  ObjectStore store(Options());
  MustPut(store, Route("a"), R"({"x":1})");
  std::optional<StoredObject> a = store.Get(Route("a"));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->key, Route("a"));
  ASSERT_NE(a->json, nullptr);
  EXPECT_EQ(*a->json, R"({"x":1})");
  EXPECT_EQ(a->hash, Sha256Hex(R"({"x":1})"));
  EXPECT_FALSE(store.Get(Route("zzz")).has_value());
}

TEST_F(ObjectStoreTest, AbsentJsonIsDistinctFromEmptyJson) {
  ObjectStore store(Options());
  EXPECT_TRUE(MustPut(store, Route("a"), std::nullopt).changed);
  std::optional<StoredObject> a = store.Get(Route("a"));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->json, nullptr);
  EXPECT_EQ(a->hash, "");
  EXPECT_FALSE(MustPut(store, Route("a"), std::nullopt).changed);
  EXPECT_TRUE(MustPut(store, Route("a"), "").changed);  // an empty body is a body
  EXPECT_EQ(store.Get(Route("a"))->hash, Sha256Hex(""));
  EXPECT_TRUE(MustPut(store, Route("a"), std::nullopt).changed);
  EXPECT_EQ(store.Head(), 3u);
}

TEST_F(ObjectStoreTest, DeleteBumpsTheVersionAndLogsTheRemovedHash) {
  ObjectStore store(Options());
  MustPut(store, Route("a"), "{}");
  WriteResult del = MustDelete(store, Route("a"));
  EXPECT_TRUE(del.changed);
  EXPECT_EQ(del.version, 2u);
  EXPECT_FALSE(store.Get(Route("a")).has_value());
  ChangeSet changes = MustChanges(store, 1);
  ASSERT_EQ(changes.events.size(), 1u);
  EXPECT_EQ(changes.events[0].op, StoreOp::kDelete);
  EXPECT_EQ(changes.events[0].version, 2u);
  EXPECT_EQ(changes.events[0].hash, Sha256Hex("{}"));
  EXPECT_EQ(changes.events[0].json, nullptr);
}

TEST_F(ObjectStoreTest, DeleteOfAbsentKeyIsANoOp) {
  ObjectStore store(Options());
  MustPut(store, Route("a"), "{}");
  WriteResult del = MustDelete(store, Route("missing"));
  EXPECT_FALSE(del.changed);
  EXPECT_EQ(del.version, 1u);
  EXPECT_EQ(store.Head(), 1u);
}

TEST_F(ObjectStoreTest, RejectsInvalidKeys) {
  ObjectStore store(Options());
  EXPECT_EQ(store.Put(StoreKey{"g", "", "ns", "n"}, "{}").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Delete(StoreKey{"g", "K", "ns", ""}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Head(), 0u);
}

TEST_F(ObjectStoreTest, ChangesCoalescePerKeyInVersionOrder) {
  ObjectStore store(Options());
  MustPut(store, Route("a"), "a1");  // 1
  MustPut(store, Route("b"), "b1");  // 2
  MustPut(store, Route("a"), "a2");  // 3
  MustPut(store, Route("c"), "c1");  // 4
  MustDelete(store, Route("b"));     // 5
  MustPut(store, Route("c"), "c2");  // 6
  ChangeSet all = MustChanges(store, 0);
  EXPECT_FALSE(all.relist);
  EXPECT_EQ(all.head, 6u);
  ASSERT_EQ(all.events.size(), 3u);
  EXPECT_EQ(all.events[0].version, 3u);
  EXPECT_EQ(*all.events[0].json, "a2");
  EXPECT_EQ(all.events[1].version, 5u);
  EXPECT_EQ(all.events[1].op, StoreOp::kDelete);
  EXPECT_EQ(all.events[2].version, 6u);
  EXPECT_EQ(*all.events[2].json, "c2");
  ChangeSet tail = MustChanges(store, 4);
  ASSERT_EQ(tail.events.size(), 2u);
  EXPECT_EQ(tail.events[0].key, Route("b"));
  EXPECT_EQ(tail.events[1].key, Route("c"));
  EXPECT_TRUE(MustChanges(store, 6).events.empty());
}

TEST_F(ObjectStoreTest, ChangesFromAheadOfHeadIsOutOfRange) {
  ObjectStore store(Options());
  MustPut(store, Route("a"), "{}");
  EXPECT_EQ(store.Changes(2).status().code(), StatusCode::kOutOfRange);
  ObjectStore empty(Options());
  EXPECT_TRUE(MustChanges(empty, 0).events.empty());
  EXPECT_EQ(empty.Changes(1).status().code(), StatusCode::kOutOfRange);
}

TEST_F(ObjectStoreTest, RelistWhenTheByteBudgetTrimmedTheLog) {
  ObjectStoreOptions options = Options();
  options.max_log_bytes = 4096;
  ObjectStore store(options);
  const std::string body(1000, 'x');
  for (int i = 0; i < 10; ++i) MustPut(store, Route("r" + std::to_string(i)), body);
  StoreStats stats = store.Stats();
  EXPECT_LE(stats.log_bytes, options.max_log_bytes);
  EXPECT_GT(stats.log_entries, 0u);
  EXPECT_LT(stats.log_entries, 10u);
  EXPECT_EQ(stats.oldest_version, stats.min_from_version + 1);
  EXPECT_EQ(stats.head, 10u);
  EXPECT_EQ(stats.objects, 10u);  // trimming the log never drops objects
  ASSERT_GT(stats.min_from_version, 0u);
  ChangeSet old = MustChanges(store, stats.min_from_version - 1);
  EXPECT_TRUE(old.relist);
  EXPECT_TRUE(old.events.empty());
  EXPECT_EQ(old.head, 10u);
  ChangeSet recent = MustChanges(store, stats.min_from_version);
  EXPECT_FALSE(recent.relist);
  EXPECT_EQ(recent.events.size(), stats.log_entries);
}

TEST_F(ObjectStoreTest, RelistWhenEntriesAgedOut) {
  ObjectStoreOptions options = Options();
  options.max_log_age = seconds(120);
  ObjectStore store(options);
  MustPut(store, Route("a"), "1");  // 1 at t=0
  clock_.Advance(seconds(100));
  MustPut(store, Route("b"), "2");  // 2 at t=100
  clock_.Advance(seconds(21));      // t=121: entry 1 is older than 120 s
  MustPut(store, Route("c"), "3");  // the write trims
  EXPECT_TRUE(MustChanges(store, 0).relist);
  EXPECT_EQ(MustChanges(store, 1).events.size(), 2u);
  // Without writes, TrimExpired applies the age bound.
  clock_.Advance(seconds(1000));
  EXPECT_EQ(store.Stats().log_entries, 2u);
  store.TrimExpired();
  StoreStats stats = store.Stats();
  EXPECT_EQ(stats.log_entries, 0u);
  EXPECT_EQ(stats.min_from_version, 3u);
  EXPECT_TRUE(MustChanges(store, 2).relist);
  EXPECT_FALSE(MustChanges(store, 3).relist);  // up to date: nothing missed
}

TEST_F(ObjectStoreTest, SnapshotIsSortedAndCarriesTheHead) {
  ObjectStore store(Options());
  MustPut(store, Route("b"), "b");
  MustPut(store, StoreKey{"", "Secret", "default", "tls"}, "s");
  MustPut(store, Route("a"), "a");
  MustDelete(store, Route("b"));
  StoreSnapshot snap = store.Snapshot();
  EXPECT_EQ(snap.version, 4u);
  ASSERT_EQ(snap.objects.size(), 2u);
  EXPECT_EQ(snap.objects[0].key, (StoreKey{"", "Secret", "default", "tls"}));
  EXPECT_EQ(snap.objects[1].key, Route("a"));
  EXPECT_EQ(snap.objects[1].version, 3u);
  EXPECT_EQ(*snap.objects[1].json, "a");
}

TEST_F(ObjectStoreTest, SnapshotPlusChangesRebuildsTheStore) {
  ObjectStore store(Options());
  for (int i = 0; i < 20; ++i)
    MustPut(store, Route("r" + std::to_string(i % 7)), "v" + std::to_string(i));
  StoreSnapshot base = store.Snapshot();
  for (int i = 0; i < 30; ++i) {
    if (i % 4 == 0) {
      MustDelete(store, Route("r" + std::to_string(i % 9)));
    } else {
      MustPut(store, Route("r" + std::to_string(i % 9)), "w" + std::to_string(i));
    }
  }
  std::map<StoreKey, std::pair<std::string, uint64_t>> replica;  // key -> (hash, version)
  for (const StoredObject& o : base.objects) replica[o.key] = {o.hash, o.version};
  ChangeSet changes = MustChanges(store, base.version);
  ASSERT_FALSE(changes.relist);
  for (const StoreEvent& e : changes.events) {
    if (e.op == StoreOp::kDelete) {
      replica.erase(e.key);
    } else {
      replica[e.key] = {e.hash, e.version};
    }
  }
  StoreSnapshot now = store.Snapshot();
  EXPECT_EQ(changes.head, now.version);
  std::map<StoreKey, std::pair<std::string, uint64_t>> expected;
  for (const StoredObject& o : now.objects) expected[o.key] = {o.hash, o.version};
  EXPECT_EQ(replica, expected);
}

TEST_F(ObjectStoreTest, StatsCountObjectsAndLog) {
  ObjectStore store(Options());
  StoreStats empty = store.Stats();
  EXPECT_EQ(empty.objects, 0u);
  EXPECT_EQ(empty.log_entries, 0u);
  EXPECT_EQ(empty.log_bytes, 0u);
  EXPECT_EQ(empty.oldest_version, 0u);
  EXPECT_EQ(empty.head, 0u);
  MustPut(store, Route("a"), "{}");
  MustPut(store, Route("b"), "{}");
  MustDelete(store, Route("a"));
  StoreStats stats = store.Stats();
  EXPECT_EQ(stats.objects, 1u);
  EXPECT_EQ(stats.log_entries, 3u);
  EXPECT_GT(stats.log_bytes, 0u);
  EXPECT_EQ(stats.oldest_version, 1u);
  EXPECT_EQ(stats.min_from_version, 0u);
  EXPECT_EQ(stats.head, 3u);
}

TEST_F(ObjectStoreTest, WaitForChangeWakesOnWriteAndTimesOut) {
  ObjectStore store(Options());
  auto deadline = std::chrono::steady_clock::now() + kTestDeadline;
  std::vector<std::future<uint64_t>> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.push_back(
        std::async(std::launch::async, [&] { return store.WaitForChange(0, deadline); }));
  }
  MustPut(store, Route("a"), "{}");
  for (auto& w : waiters) EXPECT_EQ(w.get(), 1u);
  EXPECT_EQ(store.WaitForChange(0, deadline), 1u);  // already ahead
  // A no-op write does not wake anybody: the wait runs to its (short) deadline.
  MustPut(store, Route("a"), "{}");
  EXPECT_EQ(store.WaitForChange(1, std::chrono::steady_clock::now() + std::chrono::milliseconds(5)),
            1u);
}

TEST_F(ObjectStoreTest, SubscribersAreCalledOutsideTheLock) {
  ObjectStore store(Options());
  std::vector<uint64_t> heads;
  std::vector<size_t> event_counts;
  ChangeSubscription sub = store.Subscribe([&](uint64_t head) {
    heads.push_back(head);
    // Reading the store from the callback would deadlock if the writer still held its lock.
    event_counts.push_back(MustChanges(store, head - 1).events.size());
    EXPECT_EQ(store.Snapshot().version, head);
  });
  EXPECT_EQ(sub.initial_head(), 0u);
  MustPut(store, Route("a"), "1");
  MustPut(store, Route("a"), "1");  // no-op: no call
  MustDelete(store, Route("a"));
  MustDelete(store, Route("a"));  // no-op: no call
  EXPECT_EQ(heads, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(event_counts, (std::vector<size_t>{1, 1}));
  sub.Cancel();
  MustPut(store, Route("b"), "1");
  EXPECT_EQ(heads.size(), 2u);
}

TEST(ObjectStoreOptionsTest, ValidateRejectsZeroBounds) {
  EXPECT_TRUE(ObjectStoreOptions().Validate().ok());
  ObjectStoreOptions o;
  o.max_log_bytes = 0;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = ObjectStoreOptions();
  o.max_log_age = Clock::Duration::zero();
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  EXPECT_GE(ObjectStoreOptions().max_log_age, std::chrono::seconds(120));
}

}  // namespace
}  // namespace portico::core
