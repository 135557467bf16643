// Tests of GatewayRuntime's transaction rules with the runtime-probe plugin (testdata/), whose
// handler does what each synced view says.
#include "core/runtime/gateway_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <thread>

#include "core/runtime/runtime_test_util.h"

namespace portico::core {
namespace {

using ::portico::core::testing::Delete;
using ::portico::core::testing::EntryJson;
using ::portico::core::testing::EntryOwner;
using ::portico::core::testing::ExpectEmptyStats;
using ::portico::core::testing::Ids;
using ::portico::core::testing::Owner;
using ::portico::core::testing::ProbeKey;
using ::portico::core::testing::Put;
using ::portico::core::testing::RecordingConsumer;
using ::portico::core::testing::TestPlugins;
using ::portico::core::testing::Upsert;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const std::string kRoutes = PORTICO_FORMAT_ROUTE_RULES;
const std::string kBackend = PORTICO_FORMAT_BACKEND;
const std::string kBindings = PORTICO_FORMAT_FILTER_BINDING;

// Puts renders a probe view putting `items` (Put(...) strings), plus `extra` members.
std::string Puts(std::vector<std::string> items, std::string_view extra = "") {
  std::string out = "{\"puts\":[";
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? "," : "") + items[i];
  out += "]";
  if (!extra.empty()) out += "," + std::string(extra);
  return out + "}";
}

std::vector<std::string> NackKeys(const ApplyResult& result) {
  std::vector<std::string> out;
  for (const SyncNack& n : result.nacks) out.push_back(n.key.name);
  return out;
}

int64_t StampCall(const RuntimeSnapshot& s, const std::string& kind, const std::string& name) {
  auto json = EntryJson(s, kBindings, "stamp/" + kind + "/ns/" + name);
  if (!json) return -1;
  size_t at = json->find("\"call\":");
  return std::stoll(json->substr(at + 7));
}

class GatewayRuntimeTest : public ::testing::Test {
 protected:
  GatewayRuntime rt_{TestPlugins(), nullptr};
  const StoreKey a_ = ProbeKey("Base", "a");
  const StoreKey b_ = ProbeKey("Base", "b");
  const StoreKey c_ = ProbeKey("Base", "c");
  const StoreKey apex_ = ProbeKey("Apex", "x");
  const StoreKey inert_ = ProbeKey("Inert", "i");
};

TEST_F(GatewayRuntimeTest, StartsEmpty) {
  EXPECT_EQ(rt_.Current()->generation, 0u);
  EXPECT_TRUE(rt_.Current()->formats.empty());
  EXPECT_THAT(rt_.Held(), IsEmpty());
  EXPECT_THAT(rt_.History(), IsEmpty());
  ExpectEmptyStats(rt_.Stats());
  EXPECT_EQ(rt_.Stats().commits, 0u);
}

TEST_F(GatewayRuntimeTest, UpsertStagesAndCommitsOneSnapshot) {
  ApplyResult r = rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", R"({"p":1})"),
                                              Put(kBackend, "ports/a", R"({"q":1})")})),
                             Upsert(inert_, R"({"just":"held"})")},
                            /*replace_all=*/true, 7);
  EXPECT_TRUE(r.committed);
  EXPECT_THAT(r.nacks, IsEmpty());
  EXPECT_EQ(r.generation, 1u);
  auto s = rt_.Current();
  EXPECT_EQ(s->generation, 1u);
  EXPECT_EQ(s->version, 7u);
  EXPECT_EQ(EntryJson(*s, kRoutes, "r/a"), R"({"p":1})");
  EXPECT_EQ(EntryOwner(*s, kRoutes, "r/a"), Owner(a_));
  EXPECT_EQ(EntryJson(*s, kBackend, "ports/a"), R"({"q":1})");

  std::vector<HeldObject> held = rt_.Held();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].key, a_);  // sorted by key
  EXPECT_EQ(held[1].key, inert_);
  EXPECT_EQ(*held[1].json, R"({"just":"held"})");

  RuntimeStats stats = rt_.Stats();
  EXPECT_EQ(stats.synced_objects, 2u);
  EXPECT_EQ(stats.synced_by_kind.at("Base.runtime.test.portico.io"), 1u);
  EXPECT_EQ(stats.synced_by_kind.at("Inert.runtime.test.portico.io"), 1u);
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.entries_by_format.at(kRoutes), 1u);
  EXPECT_EQ(stats.owners, 1u);
  EXPECT_EQ(stats.generation, 1u);
  EXPECT_EQ(stats.version, 7u);
  EXPECT_EQ(stats.commits, 1u);
  EXPECT_GT(stats.bytes, 0u);

  std::vector<CommitRecord> history = rt_.History();
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].generation, 1u);
  EXPECT_EQ(history[0].version, 7u);
  EXPECT_TRUE(history[0].replace_all);
  EXPECT_EQ(history[0].changes, 2u);
  EXPECT_GT(history[0].time_unix_ms, 1600000000000);
  EXPECT_THAT(history[0].added,
              ElementsAre(EntryKey(kBackend, "ports/a"), EntryKey(kRoutes, "r/a")));
  EXPECT_THAT(history[0].removed, IsEmpty());
  EXPECT_FALSE(history[0].truncated);
}

TEST_F(GatewayRuntimeTest, SameHashIsSkippedAndEmptyBatchesDoNotCommit) {
  std::string view = Puts({Put(kRoutes, "r/a", "{}")}, R"("stamp":true)");
  ASSERT_TRUE(rt_.Apply({Upsert(a_, view)}, false, 1).committed);
  // The stamp changes on every handler call: no commit proves the handler was not called.
  ApplyResult again = rt_.Apply({Upsert(a_, view)}, false, 2);
  EXPECT_FALSE(again.committed);
  EXPECT_EQ(again.generation, 1u);
  EXPECT_FALSE(rt_.Apply({}, false, 3).committed);
  EXPECT_FALSE(rt_.Apply({Delete(b_)}, false, 4).committed);  // not held: nothing to delete
  EXPECT_EQ(rt_.Current()->generation, 1u);
  EXPECT_EQ(rt_.Current()->version, 1u);
  EXPECT_EQ(rt_.Stats().version, 4u);
  EXPECT_EQ(rt_.History().size(), 1u);
}

TEST_F(GatewayRuntimeTest, IdenticalPutsCostNothingAndUnchangedFormatsAreShared) {
  ASSERT_TRUE(rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", R"({"p":1})"),
                                          Put(kBackend, "ports/a", R"({"q":1})")})),
                         Upsert(b_, Puts({Put(kBackend, "ports/b", R"({"q":2})")}))},
                        false, 1)
                  .committed);
  auto before = rt_.Current();
  // New view bytes (the hash changes), same contributions after clear_owner + put.
  ApplyResult r = rt_.Apply(
      {Upsert(a_, Puts({Put(kRoutes, "r/a", R"({"p":1})"), Put(kBackend, "ports/a", R"({"q":1})")},
                       R"("note":"unrelated")"))},
      false, 2);
  EXPECT_TRUE(r.committed);  // the held object changed
  auto after = rt_.Current();
  EXPECT_EQ(after->formats.at(kRoutes), before->formats.at(kRoutes));
  EXPECT_EQ(after->formats.at(kBackend), before->formats.at(kBackend));
  CommitRecord record = rt_.History().back();
  EXPECT_EQ(record.changes, 1u);
  EXPECT_THAT(record.added, IsEmpty());
  EXPECT_THAT(record.removed, IsEmpty());
  EXPECT_THAT(record.changed, IsEmpty());

  // Changing one backend entry copies backend.v1 only; route_rules.v1 is shared.
  rt_.Apply({Upsert(b_, Puts({Put(kBackend, "ports/b", R"({"q":3})")}))}, false, 3);
  auto third = rt_.Current();
  EXPECT_EQ(third->formats.at(kRoutes), before->formats.at(kRoutes));
  EXPECT_NE(third->formats.at(kBackend), before->formats.at(kBackend));
  EXPECT_EQ(EntryJson(*third, kBackend, "ports/b"), R"({"q":3})");
  EXPECT_EQ(EntryJson(*before, kBackend, "ports/b"), R"({"q":2})");  // the old one is immutable
  EXPECT_THAT(rt_.History().back().changed, ElementsAre(EntryKey(kBackend, "ports/b")));
}

TEST_F(GatewayRuntimeTest, HandlersRunInReadsOrderOncePerKind) {
  // Apex reads Base: Base's handler runs first although Apex comes first in the batch and
  // sorts first by name; both Base objects are handed to one call.
  ApplyResult r = rt_.Apply({Upsert(apex_, R"({"stamp":true})"), Upsert(a_, R"({"stamp":true})"),
                             Upsert(b_, R"({"stamp":true})")},
                            false, 1);
  ASSERT_TRUE(r.committed);
  auto s = rt_.Current();
  int64_t base_a = StampCall(*s, "Base", "a");
  EXPECT_GT(base_a, 0);
  EXPECT_EQ(StampCall(*s, "Base", "b"), base_a);
  EXPECT_EQ(StampCall(*s, "Apex", "x"), base_a + 1);
  EXPECT_THAT(*EntryJson(*s, kBindings, "stamp/Base/ns/a"), HasSubstr("\"count\":2"));
  EXPECT_THAT(*EntryJson(*s, kBindings, "stamp/Apex/ns/x"), HasSubstr("\"count\":1"));
}

TEST_F(GatewayRuntimeTest, GetSyncedReadsTheObjectsAsStagedInThisTransaction) {
  ASSERT_TRUE(
      rt_.Apply({Upsert(b_, R"({"v":"old"})"), Upsert(c_, R"({"v":"gone"})")}, false, 1).committed);
  std::string reads = R"({"getSynced":[
      {"group":"runtime.test.portico.io","kind":"Base","namespace":"ns","name":"b"},
      {"group":"runtime.test.portico.io","kind":"Base","namespace":"ns","name":"c"},
      {"group":"runtime.test.portico.io","kind":"Inert","namespace":"ns","name":"i"},
      {"group":"runtime.test.portico.io","kind":"Base","namespace":"ns","name":"nobody"}]})";
  ApplyResult r = rt_.Apply({Upsert(apex_, reads), Upsert(b_, R"({"v":"new"})"), Delete(c_),
                             Upsert(inert_, R"({"i":1})")},
                            false, 2);
  ASSERT_TRUE(r.committed);
  auto s = rt_.Current();
  EXPECT_EQ(EntryJson(*s, kBindings, "synced/Base/ns/b"), R"({"found":true,"view":{"v":"new"}})");
  EXPECT_EQ(EntryJson(*s, kBindings, "synced/Base/ns/c"), R"({"found":false,"view":null})");
  EXPECT_EQ(EntryJson(*s, kBindings, "synced/Inert/ns/i"), R"({"found":true,"view":{"i":1}})");
  EXPECT_EQ(EntryJson(*s, kBindings, "synced/Base/ns/nobody"), R"({"found":false,"view":null})");
}

TEST_F(GatewayRuntimeTest, HeldBodiesLiveInTheSpoolAndReadBackUnchanged) {
  std::string dir = (std::filesystem::temp_directory_path()).string();
  auto spool = HeldSpool::Create(dir);
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  GatewayRuntime rt(TestPlugins(), nullptr, std::move(*spool));
  ASSERT_TRUE(rt.Apply({Upsert(b_, R"({"v":"old"})"), Upsert(c_, R"({"v":"c"})"),
                        Upsert(inert_, R"({"i":1})")},
                       false, 1)
                  .committed);
  std::string reads = R"({"getSynced":[
      {"group":"runtime.test.portico.io","kind":"Base","namespace":"ns","name":"b"},
      {"group":"runtime.test.portico.io","kind":"Inert","namespace":"ns","name":"i"}]})";
  // b is read from the spool (held, not in this batch); c is replaced, then deleted.
  ASSERT_TRUE(rt.Apply({Upsert(apex_, reads), Upsert(c_, R"({"v":"c2"})")}, false, 2).committed);
  EXPECT_EQ(EntryJson(*rt.Current(), kBindings, "synced/Base/ns/b"),
            R"({"found":true,"view":{"v":"old"}})");
  EXPECT_EQ(EntryJson(*rt.Current(), kBindings, "synced/Inert/ns/i"),
            R"({"found":true,"view":{"i":1}})");
  ASSERT_TRUE(rt.Apply({Delete(b_)}, false, 3).committed);

  std::vector<std::string> held;
  for (const HeldObject& o : rt.Held()) held.push_back(o.key.name + "=" + *o.json);
  EXPECT_THAT(held, UnorderedElementsAre(R"(c={"v":"c2"})", R"(i={"i":1})", "x=" + reads));
  EXPECT_EQ(rt.Stats().synced_objects, 3u);
}

TEST_F(GatewayRuntimeTest, ASpoolThatCannotWriteLeavesTheBodiesInMemory) {
  auto spool = HeldSpool::Create(std::filesystem::temp_directory_path().string());
  ASSERT_TRUE(spool.ok());
  GatewayRuntime rt(TestPlugins(), nullptr, std::move(*spool));
  // A file size limit makes the spool's write fail (EFBIG) as a full disk would.
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit tiny = {16, saved.rlim_max};
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tiny), 0);
  const std::string body = R"({"v":")" + std::string(100, 'b') + R"("})";
  bool committed = rt.Apply({Upsert(b_, body)}, false, 1).committed;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  ASSERT_TRUE(committed);
  ASSERT_TRUE(rt.Apply({Upsert(c_, R"({"v":"c"})")}, false, 2).committed);  // spooled again

  std::vector<std::string> held;
  for (const HeldObject& o : rt.Held()) held.push_back(o.key.name + "=" + *o.json);
  EXPECT_THAT(held, ElementsAre("b=" + body, R"(c={"v":"c"})"));
}

TEST_F(GatewayRuntimeTest, NackKeepsTheLastGoodVersionAndTheRestApplies) {
  SyncedChange good =
      Upsert(a_, Puts({Put(kRoutes, "r/a", R"({"v":1})"), Put(kBackend, "ports/a", R"({"v":1})")}));
  ASSERT_TRUE(rt_.Apply({good}, false, 1).committed);

  SyncedChange bad =
      Upsert(a_, Puts({Put(kRoutes, "r/a", R"({"v":2})"), Put(kRoutes, "r/a2", R"({"v":2})")},
                      R"("nack":"a backend is missing")"));
  ApplyResult r = rt_.Apply({bad, Upsert(b_, Puts({Put(kRoutes, "r/b", "{}")}))}, false, 2);
  EXPECT_TRUE(r.committed);
  ASSERT_EQ(r.nacks.size(), 1u);
  EXPECT_EQ(r.nacks[0].key, a_);
  EXPECT_EQ(r.nacks[0].hash, bad.hash);  // the rejected change's hash
  EXPECT_EQ(r.nacks[0].reason, "a backend is missing");
  auto s = rt_.Current();
  EXPECT_EQ(EntryJson(*s, kRoutes, "r/a"), R"({"v":1})");
  EXPECT_EQ(EntryJson(*s, kBackend, "ports/a"), R"({"v":1})");  // cleared, then restored
  EXPECT_FALSE(EntryJson(*s, kRoutes, "r/a2"));
  EXPECT_TRUE(EntryJson(*s, kRoutes, "r/b"));
  std::vector<HeldObject> held = rt_.Held();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].hash, good.hash);
  EXPECT_EQ(rt_.Stats().nacks, 1u);
  EXPECT_EQ(rt_.History().back().nacks, 1u);
  EXPECT_EQ(rt_.History().back().changes, 1u);

  // A nack that leaves nothing changed does not commit.
  ApplyResult only_nack = rt_.Apply({Upsert(a_, R"({"nack":"still no"})")}, false, 3);
  EXPECT_FALSE(only_nack.committed);
  EXPECT_THAT(NackKeys(only_nack), ElementsAre("a"));
  EXPECT_EQ(EntryJson(*rt_.Current(), kRoutes, "r/a"), R"({"v":1})");
}

TEST_F(GatewayRuntimeTest, FirstVersionNackedLeavesNothingBehind) {
  ApplyResult r =
      rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", "{}")}, R"("nack":"no")"))}, false, 1);
  EXPECT_FALSE(r.committed);
  EXPECT_THAT(NackKeys(r), ElementsAre("a"));
  EXPECT_THAT(rt_.Held(), IsEmpty());
  ExpectEmptyStats(rt_.Stats());
}

TEST_F(GatewayRuntimeTest, NackedHashIsHandedToTheHandlerAgain) {
  SyncedChange good = Upsert(a_, R"({"stamp":true})");
  ASSERT_TRUE(rt_.Apply({good}, false, 1).committed);
  int64_t first = StampCall(*rt_.Current(), "Base", "a");
  ASSERT_FALSE(rt_.Apply({Upsert(a_, R"({"nack":"no"})")}, false, 2).committed);
  // The controller sends the good version again: same hash as held, but the last change was
  // nacked, so the handler runs (a new stamp) and the object is good again.
  ApplyResult r = rt_.Apply({good}, false, 3);
  EXPECT_TRUE(r.committed);
  EXPECT_THAT(r.nacks, IsEmpty());
  EXPECT_GT(StampCall(*rt_.Current(), "Base", "a"), first);
  // ... and from now on the same hash is skipped again.
  EXPECT_FALSE(rt_.Apply({good}, false, 4).committed);
}

TEST_F(GatewayRuntimeTest, PutOnAnIdOwnedByAnotherOwnerNacksTheLaterOwner) {
  ASSERT_TRUE(
      rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "shared", R"({"by":"a"})")}))}, false, 1).committed);
  ApplyResult r = rt_.Apply(
      {Upsert(b_, Puts({Put(kRoutes, "r/b", "{}"), Put(kRoutes, "shared", R"({"by":"b"})")})),
       Upsert(c_, Puts({Put(kRoutes, "new", R"({"by":"c"})")})),
       Upsert(apex_, Puts({Put(kRoutes, "new", R"({"by":"x"})")}))},
      false, 2);
  EXPECT_TRUE(r.committed);
  ASSERT_EQ(r.nacks.size(), 2u);
  // Sorted by key: Apex before Base.
  EXPECT_EQ(r.nacks[0].key, apex_);  // c put "new" first in this transaction (Base before Apex)
  EXPECT_THAT(r.nacks[0].reason, HasSubstr("\"new\""));
  EXPECT_THAT(r.nacks[0].reason, HasSubstr(Owner(c_)));
  EXPECT_EQ(r.nacks[1].key, b_);
  EXPECT_EQ(r.nacks[1].reason, "route_rules.v1 id \"shared\" is already owned by " + Owner(a_));
  auto s = rt_.Current();
  EXPECT_EQ(EntryJson(*s, kRoutes, "shared"), R"({"by":"a"})");
  EXPECT_FALSE(EntryJson(*s, kRoutes, "r/b"));  // b's other puts rolled back
  EXPECT_EQ(EntryJson(*s, kRoutes, "new"), R"({"by":"c"})");
  EXPECT_EQ(rt_.Held().size(), 2u);  // a and c
}

TEST_F(GatewayRuntimeTest, RollbackTakesBackAnIdAnotherOwnerTookInTheSameTransaction) {
  ASSERT_TRUE(
      rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "x", R"({"by":"a"})")}))}, false, 1).committed);
  // a moves to "y" (freeing "x") and b takes "x"; then a is nacked, so "x" must return to a and
  // b is rolled back with it.
  ApplyResult r = rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "y", "{}")}, R"("nack":"no")")),
                             Upsert(b_, Puts({Put(kRoutes, "x", R"({"by":"b"})")}))},
                            false, 2);
  EXPECT_FALSE(r.committed);
  ASSERT_EQ(r.nacks.size(), 2u);
  EXPECT_EQ(r.nacks[0].key, a_);
  EXPECT_EQ(r.nacks[1].key, b_);
  EXPECT_THAT(r.nacks[1].reason, HasSubstr("restored for " + Owner(a_)));
  auto s = rt_.Current();
  EXPECT_EQ(EntryJson(*s, kRoutes, "x"), R"({"by":"a"})");
  EXPECT_FALSE(EntryJson(*s, kRoutes, "y"));
}

TEST_F(GatewayRuntimeTest, StageErrorNacksEveryChangeOfTheCallAndUndoesIt) {
  ASSERT_TRUE(
      rt_.Apply({Upsert(c_, Puts({Put(kRoutes, "r/c", R"({"v":1})")}))}, false, 1).committed);
  // One Base call with a and b; b fails after a put under c's owner (a foreign owner).
  ApplyResult r =
      rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", "{}")})),
                 Upsert(b_, Puts({Put(kRoutes, "r/c", R"({"v":"hijacked"})", Owner(c_)),
                                  Put(kRoutes, "r/b2", "{}", Owner(c_))},
                                 R"("clearOwners":[")" + Owner(c_) + R"("],"fail":"boom")")),
                 Upsert(apex_, Puts({Put(kRoutes, "r/x", "{}")}))},
                false, 2);
  EXPECT_TRUE(r.committed);
  EXPECT_THAT(NackKeys(r), ElementsAre("a", "b"));
  EXPECT_EQ(r.nacks[0].reason, "boom");
  EXPECT_EQ(r.nacks[1].reason, "boom");
  auto s = rt_.Current();
  EXPECT_THAT(Ids(*s), ElementsAre("route_rules.v1 r/c", "route_rules.v1 r/x"));
  EXPECT_EQ(EntryJson(*s, kRoutes, "r/c"), R"({"v":1})");
  EXPECT_EQ(EntryOwner(*s, kRoutes, "r/c"), Owner(c_));
  std::vector<HeldObject> held = rt_.Held();
  ASSERT_EQ(held.size(), 2u);  // apex x, base c
  EXPECT_EQ(held[0].key, apex_);
  EXPECT_EQ(held[1].key, c_);
}

TEST_F(GatewayRuntimeTest, InvalidPutsAreErrorsReturnedToTheHandler) {
  struct Case {
    std::string put;
    std::string want;
  };
  std::vector<Case> cases = {
      {Put("bogus.v1", "id", "{}"), "unknown contribution format \"bogus.v1\""},
      {R"({"format":"route_rules.v1","id":"id","raw":"{\"a\":"})", "invalid JSON at offset"},
      {R"({"format":"route_rules.v1","id":"id","raw":"{} {}"})", "invalid JSON"},
      {Put(kRoutes, "", "{}"), "empty id"},
      {Put(kRoutes, "id", "{}", "not-a-key"), "is not an object key"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.put);
    GatewayRuntime rt(TestPlugins(), nullptr);
    ApplyResult r = rt.Apply({Upsert(a_, Puts({Put(kRoutes, "ok", "{}"), c.put}))}, false, 1);
    ASSERT_EQ(r.nacks.size(), 1u);
    EXPECT_THAT(r.nacks[0].reason, HasSubstr(c.want));
    EXPECT_FALSE(r.committed);
    EXPECT_TRUE(rt.Current()->formats.empty());
  }
}

TEST_F(GatewayRuntimeTest, NackOfADeleteKeepsTheObject) {
  ASSERT_TRUE(rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", "{}")}))}, false, 1).committed);
  std::string nack_a =
      R"({"nackRef":{"group":"runtime.test.portico.io","kind":"Base","namespace":"ns","name":"a","reason":"still referenced"}})";
  ApplyResult r = rt_.Apply({Delete(a_), Upsert(apex_, nack_a)}, false, 2);
  ASSERT_EQ(r.nacks.size(), 1u);
  EXPECT_EQ(r.nacks[0].key, a_);
  EXPECT_EQ(r.nacks[0].hash, rt_.Held()[1].hash);  // a delete carries the last body's hash
  EXPECT_EQ(r.nacks[0].reason, "still referenced");
  EXPECT_TRUE(EntryJson(*rt_.Current(), kRoutes, "r/a"));
  EXPECT_EQ(rt_.Held().size(), 2u);
}

TEST_F(GatewayRuntimeTest, NackOfAnObjectOutsideTheBatchIsNotReported) {
  ASSERT_TRUE(rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", "{}")}))}, false, 1).committed);
  std::string nack_a =
      R"({"nackRef":{"group":"runtime.test.portico.io","kind":"Base","namespace":"ns","name":"a"}})";
  ApplyResult r = rt_.Apply({Upsert(apex_, nack_a)}, false, 2);
  EXPECT_THAT(r.nacks, IsEmpty());
  EXPECT_TRUE(EntryJson(*rt_.Current(), kRoutes, "r/a"));
}

TEST_F(GatewayRuntimeTest, UpsertWithoutABodyIsNacked) {
  SyncedChange change = Upsert(a_, "{}");
  change.json = nullptr;
  ApplyResult r = rt_.Apply({change}, false, 1);
  EXPECT_THAT(NackKeys(r), ElementsAre("a"));
  EXPECT_FALSE(r.committed);
}

TEST_F(GatewayRuntimeTest, ReplaceAllDeletesEveryHeldObjectAbsentFromTheSnapshot) {
  SyncedChange a = Upsert(a_, R"({"stamp":true})");
  ASSERT_TRUE(rt_.Apply({a, Upsert(b_, Puts({Put(kRoutes, "r/b", "{}")})),
                         Upsert(c_, Puts({Put(kBackend, "ports/c", "{}")})), Upsert(inert_, "{}")},
                        false, 1)
                  .committed);
  auto before = rt_.Current();
  ApplyResult r = rt_.Apply({a, Upsert(apex_, "{}")}, /*replace_all=*/true, 9);
  EXPECT_TRUE(r.committed);
  std::vector<HeldObject> held = rt_.Held();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].key, apex_);
  EXPECT_EQ(held[1].key, a_);
  auto s = rt_.Current();
  EXPECT_THAT(Ids(*s), ElementsAre("filter_binding.v1 stamp/Base/ns/a"));
  // a was unchanged: not handed to the handler again (same stamp), its format map shared.
  EXPECT_EQ(s->formats.at(kBindings), before->formats.at(kBindings));
  CommitRecord record = rt_.History().back();
  EXPECT_TRUE(record.replace_all);
  EXPECT_EQ(record.changes, 4u);  // b, c, i deleted; x added
  EXPECT_THAT(record.removed, ElementsAre(EntryKey(kBackend, "ports/c"), EntryKey(kRoutes, "r/b")));
}

TEST_F(GatewayRuntimeTest, DeletingEverythingReturnsToTheEmptyBaseline) {
  // Several formats and owners, a nacked change, a conflict and a kind without handler.
  ASSERT_TRUE(rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", "{}"), Put(kBackend, "b/a", "{}"),
                                          Put(kBindings, "f/a", "{}")})),
                         Upsert(b_, Puts({Put(kRoutes, "r/b", "{}")}, R"("stamp":true)")),
                         Upsert(apex_, Puts({Put(kRoutes, "r/x", "{}")})), Upsert(inert_, "{}")},
                        false, 1)
                  .committed);
  rt_.Apply({Upsert(b_, Puts({Put(kRoutes, "r/a", "{}")})),  // conflict: nacked
             Upsert(c_, Puts({Put(kRoutes, "r/c", "{}")}, R"("nack":"no")"))},
            false, 2);
  ASSERT_GT(rt_.Stats().entries, 0u);

  ApplyResult r = rt_.Apply({Delete(a_), Delete(b_)}, false, 3);
  EXPECT_TRUE(r.committed);
  r = rt_.Apply({}, /*replace_all=*/true, 4);
  EXPECT_TRUE(r.committed);
  EXPECT_THAT(r.nacks, IsEmpty());
  ExpectEmptyStats(rt_.Stats());
  EXPECT_TRUE(rt_.Current()->formats.empty());
  EXPECT_THAT(rt_.Held(), IsEmpty());
  EXPECT_EQ(rt_.Stats().commits, 3u);

  // The same objects again: everything comes back (nothing stale was kept).
  ASSERT_TRUE(rt_.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", "{}")}))}, false, 5).committed);
  EXPECT_EQ(rt_.Stats().entries, 1u);
  EXPECT_EQ(rt_.Stats().owners, 1u);
}

TEST_F(GatewayRuntimeTest, ConsumerRefusalsAreNackedRolledBackAndPreparedAgain) {
  RecordingConsumer consumer;
  GatewayRuntime rt(TestPlugins(), &consumer);
  ASSERT_TRUE(
      rt.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", R"({"v":1})")}))}, false, 1).committed);
  ASSERT_EQ(consumer.commits.size(), 1u);

  consumer.refuse = [&](const RuntimeSnapshot& next) -> std::vector<SyncNack> {
    if (next.Find(kRoutes, "r/a") != nullptr && *next.Find(kRoutes, "r/a")->json != R"({"v":1})") {
      return {SyncNack{a_, "", "port 80 is in use"}};
    }
    return {};
  };
  ApplyResult r = rt.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", R"({"v":2})")})),
                            Upsert(b_, Puts({Put(kRoutes, "r/b", "{}")}))},
                           false, 2);
  EXPECT_TRUE(r.committed);
  ASSERT_EQ(r.nacks.size(), 1u);
  EXPECT_EQ(r.nacks[0].key, a_);
  EXPECT_EQ(r.nacks[0].reason, "port 80 is in use");
  EXPECT_FALSE(r.nacks[0].hash.empty());
  ASSERT_EQ(consumer.prepared_generations.size(), 3u);  // 1; then 2 refused, 2 again
  EXPECT_EQ(consumer.prepared_generations[2], 2u);
  ASSERT_EQ(consumer.commits.size(), 2u);
  EXPECT_EQ(consumer.commits[1], rt.Current());
  EXPECT_EQ(EntryJson(*rt.Current(), kRoutes, "r/a"), R"({"v":1})");
  EXPECT_TRUE(EntryJson(*rt.Current(), kRoutes, "r/b"));

  // Refusing the only change leaves nothing to commit: Abort.
  r = rt.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", R"({"v":3})")}))}, false, 3);
  EXPECT_FALSE(r.committed);
  EXPECT_EQ(consumer.aborts, 1);
  EXPECT_EQ(consumer.commits.size(), 2u);
}

TEST_F(GatewayRuntimeTest, FormatsTheConsumerKeepsCompiledLoseTheirJsonOnceCommitted) {
  RecordingConsumer consumer;
  consumer.keeps_compiled = {kRoutes};
  std::vector<std::string> seen;  // per Prepare: "id=json" of each route entry ("id=-": no JSON)
  const FormatEntries* prepared = nullptr;
  consumer.refuse = [&](const RuntimeSnapshot& next) -> std::vector<SyncNack> {
    prepared = next.Entries(kRoutes);
    std::string line;
    for (const auto& [id, entry] : *next.Entries(kRoutes)) {
      line += id + "=" + (entry.json != nullptr ? *entry.json : "-") + " ";
    }
    seen.push_back(line);
    return {};
  };
  GatewayRuntime rt(TestPlugins(), &consumer);
  const std::string v1 = R"({"v":1})";
  ASSERT_TRUE(
      rt.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", v1), Put(kBackend, "ports/a", "{}")}))}, false,
               1)
          .committed);
  EXPECT_THAT(seen, ElementsAre(R"(r/a={"v":1} )"));
  const RuntimeEntry* committed = rt.Current()->Find(kRoutes, "r/a");
  ASSERT_NE(committed, nullptr);
  EXPECT_EQ(committed->json, nullptr);
  EXPECT_EQ(committed->digest, Sha256Digest128(v1));
  EXPECT_EQ(committed->size, v1.size());
  EXPECT_EQ(committed->owner, Owner(a_));
  EXPECT_EQ(consumer.commits.back(), rt.Current());
  // Dropped in place: the committed map is the one Prepare saw (consumers compare maps).
  EXPECT_EQ(rt.Current()->Entries(kRoutes), prepared);
  EXPECT_EQ(EntryJson(*rt.Current(), kBackend, "ports/a"), "{}");  // other formats keep JSON
  EXPECT_EQ(rt.Stats().bytes, rt.Held()[0].json->size() + v1.size() + 2);

  // Another owner's change: the unchanged entry reaches Prepare without its JSON.
  ASSERT_TRUE(rt.Apply({Upsert(b_, Puts({Put(kRoutes, "r/b", "{}")}))}, false, 2).committed);
  EXPECT_EQ(seen.back(), R"(r/a=- r/b={} )");
  EXPECT_EQ(rt.Current()->Find(kRoutes, "r/b")->json, nullptr);

  // a's view changes but puts the same bytes: recognised by digest, the entry is unchanged.
  ASSERT_TRUE(rt.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", v1), Put(kBackend, "ports/a", "{}")},
                                        R"("note":"same puts")"))},
                       false, 3)
                  .committed);
  EXPECT_THAT(rt.History().back().changed, IsEmpty());
  EXPECT_THAT(rt.History().back().added, IsEmpty());

  // New bytes: Prepare sees them, the commit records the change.
  ASSERT_TRUE(
      rt.Apply({Upsert(a_, Puts({Put(kRoutes, "r/a", R"({"v":2})")}))}, false, 4).committed);
  EXPECT_EQ(seen.back(), R"(r/a={"v":2} r/b=- )");
  EXPECT_THAT(rt.History().back().changed, ElementsAre(EntryKey(kRoutes, "r/a")));
  EXPECT_EQ(rt.Current()->Find(kRoutes, "r/a")->digest, Sha256Digest128(R"({"v":2})"));
}

TEST_F(GatewayRuntimeTest, HistoryKeepsTheLast64CommitsAndCapsIdLists) {
  std::vector<SyncedChange> many;
  std::string puts;
  for (int i = 0; i < 2100; ++i) {
    puts += (i > 0 ? "," : "") + Put(kRoutes, "r/" + std::to_string(i), "{}");
  }
  ASSERT_TRUE(rt_.Apply({Upsert(a_, "{\"puts\":[" + puts + "]}")}, false, 1).committed);
  CommitRecord big = rt_.History().back();
  EXPECT_EQ(big.added.size(), CommitRecord::kMaxIds);
  EXPECT_TRUE(big.truncated);
  EXPECT_EQ(rt_.Stats().entries, 2100u);
  for (int i = 0; i < 70; ++i) {
    ASSERT_TRUE(rt_.Apply({Upsert(b_, Puts({Put(kRoutes, "b", std::to_string(i))}))}, false, 2 + i)
                    .committed);
  }
  std::vector<CommitRecord> history = rt_.History();
  ASSERT_EQ(history.size(), GatewayRuntime::kHistorySize);
  EXPECT_EQ(history.front().generation, 71u - 63u);
  EXPECT_EQ(history.back().generation, 71u);
  EXPECT_FALSE(history.back().truncated);
}

TEST_F(GatewayRuntimeTest, ReadersOnOtherThreadsSeeOnlyCommittedSnapshots) {
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    uint64_t last = 0;
    while (!done.load()) {
      auto s = rt_.Current();
      // Every committed snapshot holds r/a and r/b together (one transaction).
      if ((s->Find(kRoutes, "r/a") == nullptr) != (s->Find(kRoutes, "r/b") == nullptr)) ++bad;
      if (s->generation < last) ++bad;
      last = s->generation;
      RuntimeStats stats = rt_.Stats();
      if (stats.generation < last) ++bad;
      (void)rt_.Held();
      (void)rt_.History();
    }
  });
  for (int i = 0; i < 300; ++i) {
    std::string v = std::to_string(i);
    rt_.Apply(
        {Upsert(a_, Puts({Put(kRoutes, "r/a", v)})), Upsert(b_, Puts({Put(kRoutes, "r/b", v)}))},
        false, i + 1);
    if (i % 3 == 2) rt_.Apply({}, true, i + 1);
  }
  done = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace portico::core
