#include "controller/sync/resume_store.h"

#include <gtest/gtest.h>

#include <chrono>

namespace portico::controller::sync {
namespace {

using std::chrono::seconds;

ResumeState StateFor(const std::string& client_id, uint64_t version) {
  ResumeState state;
  state.client_id = client_id;
  state.client_version = version;
  return state;
}

TEST(ResumeStoreTest, TakeReturnsWhatWasPutOnceAndOnlyBeforeItExpires) {
  ResumeStore store(4, seconds(10));
  auto t0 = ResumeStore::Clock::now();
  store.Put(StateFor("a", 7), t0);
  store.Put(StateFor("b", 8), t0);
  std::optional<ResumeState> a = store.Take("a", t0 + seconds(9));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->client_version, 7u);
  EXPECT_FALSE(store.Take("a", t0 + seconds(9)).has_value()) << "taken twice";
  EXPECT_FALSE(store.Take("b", t0 + seconds(10)).has_value()) << "served after its retention";
  EXPECT_EQ(store.size(), 0u);
}

TEST(ResumeStoreTest, FullEvictsTheOneExpiringFirstAndANewerStateReplaces) {
  ResumeStore store(2, seconds(10));
  auto t0 = ResumeStore::Clock::now();
  store.Put(StateFor("old", 1), t0);
  store.Put(StateFor("mid", 2), t0 + seconds(1));
  store.Put(StateFor("mid", 3), t0 + seconds(2));  // replaces, evicts nothing
  EXPECT_EQ(store.size(), 2u);
  store.Put(StateFor("new", 4), t0 + seconds(3));  // full: "old" expires first
  EXPECT_FALSE(store.Take("old", t0 + seconds(3)).has_value());
  EXPECT_EQ(store.Take("mid", t0 + seconds(3))->client_version, 3u);
  EXPECT_EQ(store.Take("new", t0 + seconds(3))->client_version, 4u);
}

TEST(ResumeStoreTest, ExpireDropsOnlyWhatEndedAndCapacityZeroKeepsNothing) {
  ResumeStore store(4, seconds(10));
  auto t0 = ResumeStore::Clock::now();
  store.Put(StateFor("a", 1), t0);
  store.Put(StateFor("b", 2), t0 + seconds(5));
  store.Expire(t0 + seconds(10));
  EXPECT_EQ(store.size(), 1u);
  EXPECT_TRUE(store.Take("b", t0 + seconds(10)).has_value());

  ResumeStore none(0, seconds(10));
  none.Put(StateFor("a", 1), t0);
  EXPECT_EQ(none.size(), 0u);
}

}  // namespace
}  // namespace portico::controller::sync
