#include "core/store/event_log.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/fake_clock.h"

namespace portico::core {
namespace {

using std::chrono::seconds;

StoreEvent Upsert(uint64_t version, const std::string& name, const std::string& json) {
  return StoreEvent{version, StoreOp::kUpsert, StoreKey{"g", "K", "ns", name}, "h" + json,
                    std::make_shared<const std::string>(json)};
}

std::vector<uint64_t> Versions(const std::vector<StoreEvent>& events) {
  std::vector<uint64_t> out;
  for (const StoreEvent& e : events) out.push_back(e.version);
  return out;
}

TEST(StoreEventLogTest, SinceCoalescesPerKeyInVersionOrder) {
  FakeClock clock;
  EventLog log(1 << 20, seconds(300));
  log.Append(Upsert(1, "a", "1"), clock.Now());
  log.Append(Upsert(2, "b", "2"), clock.Now());
  log.Append(Upsert(3, "a", "3"), clock.Now());
  log.Append(StoreEvent{4, StoreOp::kDelete, StoreKey{"g", "K", "ns", "b"}, "h2", nullptr},
             clock.Now());
  log.Append(Upsert(5, "c", "5"), clock.Now());
  EXPECT_EQ(log.head(), 5u);
  EXPECT_EQ(Versions(*log.Since(0)), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(Versions(*log.Since(2)), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(Versions(*log.Since(3)), (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(Versions(*log.Since(5)), std::vector<uint64_t>{});
  std::vector<StoreEvent> events = *log.Since(0);
  EXPECT_EQ(*events[0].json, "3");
  EXPECT_EQ(events[1].op, StoreOp::kDelete);
  EXPECT_EQ(events[1].key.name, "b");
}

TEST(StoreEventLogTest, TrimsOldestWhileOverByteBudget) {
  FakeClock clock;
  StoreEvent probe = Upsert(1, "k1", std::string(100, 'x'));  // same sizes as below
  size_t each = EventLog::EventBytes(probe);
  EventLog log(3 * each, seconds(300));  // room for three such events
  for (uint64_t v = 1; v <= 5; ++v) {
    log.Append(Upsert(v, "k" + std::to_string(v % 10), std::string(100, 'x')), clock.Now());
    log.Trim(clock.Now());
  }
  EXPECT_EQ(log.size(), 3u);
  EXPECT_EQ(log.bytes(), 3 * each);
  EXPECT_EQ(log.oldest_version(), 3u);
  EXPECT_EQ(log.min_from_version(), 2u);
  EXPECT_FALSE(log.Since(0).has_value());
  EXPECT_FALSE(log.Since(1).has_value());
  EXPECT_EQ(Versions(*log.Since(2)), (std::vector<uint64_t>{3, 4, 5}));
}

TEST(StoreEventLogTest, EntryAloneOverBudgetEmptiesTheLog) {
  FakeClock clock;
  EventLog log(10, seconds(300));
  log.Append(Upsert(1, "a", std::string(1000, 'x')), clock.Now());
  log.Trim(clock.Now());
  EXPECT_EQ(log.size(), 0u);
  EXPECT_EQ(log.bytes(), 0u);
  EXPECT_EQ(log.oldest_version(), 0u);
  EXPECT_EQ(log.head(), 1u);
  EXPECT_EQ(log.min_from_version(), 1u);
  EXPECT_TRUE(log.Since(1).has_value());
  EXPECT_FALSE(log.Since(0).has_value());
}

TEST(StoreEventLogTest, TrimsEntriesOlderThanMaxAge) {
  FakeClock clock;
  EventLog log(1 << 20, seconds(120));
  log.Append(Upsert(1, "a", "1"), clock.Now());
  clock.Advance(seconds(60));
  log.Append(Upsert(2, "b", "2"), clock.Now());
  clock.Advance(seconds(60));  // entry 1 is exactly 120 s old: kept
  log.Trim(clock.Now());
  EXPECT_EQ(log.size(), 2u);
  clock.Advance(seconds(1));  // 121 s: trimmed
  log.Trim(clock.Now());
  EXPECT_EQ(log.size(), 1u);
  EXPECT_EQ(log.oldest_version(), 2u);
  EXPECT_FALSE(log.Since(0).has_value());
  EXPECT_EQ(Versions(*log.Since(1)), std::vector<uint64_t>{2});
  clock.Advance(seconds(3600));
  log.Trim(clock.Now());
  EXPECT_EQ(log.size(), 0u);
  EXPECT_EQ(log.min_from_version(), 2u);
  EXPECT_TRUE(log.Since(2).has_value());
}

TEST(StoreEventLogTest, ChargesKeyHashAndJsonBytes) {
  StoreEvent small = Upsert(1, "a", "");
  StoreEvent big = Upsert(1, "a", std::string(1000, 'x'));
  EXPECT_EQ(EventLog::EventBytes(big) - EventLog::EventBytes(small), 2000u);  // json and hash
  StoreEvent no_json = small;
  no_json.json = nullptr;
  EXPECT_EQ(EventLog::EventBytes(small), EventLog::EventBytes(no_json));
}

}  // namespace
}  // namespace portico::core
