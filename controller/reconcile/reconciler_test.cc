// reconciler_test: the Reconciler with the real in-tree plugins and the reconcile-probe test
// plugin (testdata/probe_plugin.cc), fed through OnChanges; every wait has a deadline.
#include "controller/reconcile/reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "controller/reconcile/reconciler_test_util.h"

namespace portico::controller::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

core::StoreKey StoreKeyOf(const sdk::ObjectRef& ref) {
  return core::StoreKey{ref.group, ref.kind, ref.ns, ref.name};
}

TEST(ReconcilerTest, GenerationStartsAtOneAndGrowsOnlyWithTheSpec) {
  Harness h;
  auto ref = ProbeRef("Target", "ns", "t");
  h.Apply({ProbeDoc("Target", "ns", "t", R"({"export":{"v":1}})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Get(ref)->generation, 1);
  EXPECT_EQ(h.Int(ref, "metadata.generation"), 1);
  EXPECT_EQ(h.Int(ref, "status.generation"), 1);        // what the processor was handed
  const int64_t first_run = *h.Int(ref, "status.run");  // the probe counts runs per process

  // A spec change: 2. A given metadata.generation is ignored (the host owns it).
  h.Apply({R"({"apiVersion":"test.portico.io/v1","kind":"Target","metadata":{"name":"t",)"
           R"("namespace":"ns","generation":40},"spec":{"export":{"v":2}}})"});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Get(ref)->generation, 2);
  EXPECT_EQ(h.Int(ref, "metadata.generation"), 2);
  EXPECT_EQ(h.Int(ref, "status.generation"), 2);

  // Labels only, and a status in the source: no spec change, but processed again.
  h.Apply({R"({"apiVersion":"test.portico.io/v1","kind":"Target","metadata":{"name":"t",)"
           R"("namespace":"ns","labels":{"app":"web"}},"spec":{"export":{"v":2}},)"
           R"("status":{"ignored":true}})"});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Get(ref)->generation, 2);
  EXPECT_EQ(h.Int(ref, "status.run"), first_run + 2);
  EXPECT_EQ(At(h, ref, "/metadata/labels/app"), R"("web")");
  EXPECT_EQ(At(h, ref, "/status/ignored"), "<none>");
}

TEST(ReconcilerTest, CreationTimestampIsKeptWhenGivenElseSetWhenFirstSeen) {
  Harness h;
  auto t = ProbeRef("Target", "ns", "t");
  auto u = ProbeRef("Target", "ns", "u");
  h.Apply({ProbeDoc("Target", "ns", "t", "{}")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, t, "/metadata/creationTimestamp"), R"("2026-11-30T12:00:00Z")");

  h.SetWallClock(kT0Ms + 3600 * 1000);
  h.Apply({ProbeDoc("Target", "ns", "t", R"({"export":1})"),
           R"({"apiVersion":"test.portico.io/v1","kind":"Target","metadata":{"name":"u",)"
           R"("namespace":"ns","creationTimestamp":"2020-01-02T03:04:05Z"}})"});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, t, "/metadata/creationTimestamp"), R"("2026-11-30T12:00:00Z")");
  EXPECT_EQ(At(h, u, "/metadata/creationTimestamp"), R"("2020-01-02T03:04:05Z")");

  // Deleted and created again: a new object.
  h.Remove({t});
  ASSERT_TRUE(h.Idle());
  EXPECT_FALSE(h.Get(t).has_value());
  h.Apply({ProbeDoc("Target", "ns", "t", R"({"export":2})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, t, "/metadata/creationTimestamp"), R"("2026-11-30T13:00:00Z")");
  EXPECT_EQ(h.Get(t)->generation, 1);
}

TEST(ReconcilerTest, SchemaDefaultsShowAndValidationErrorsKeepTheLastGoodResult) {
  Harness h;
  auto t = ProbeRef("Target", "ns", "t");
  auto reader = ProbeRef("Source", "ns", "reader");
  h.Apply({ProbeDoc("Target", "ns", "t", R"({"export":{"v":1}})"),
           ProbeDoc("Source", "ns", "reader",
                    R"({"gets":[)" + TargetRef("Target", "ns", "t") + "," +
                        TargetRef("Target", "ns", "bad") + "]}")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, t, "/spec/mode"), R"("auto")");  // the schema's default
  EXPECT_EQ(At(h, reader, "/status/got"), "[true,false]");
  uint64_t reader_runs = h.Processed(ProbeKind("Source"));
  const std::string good_run = At(h, t, "/status/run");

  // An invalid edit: the error shows, the last good document, status and export stay.
  h.Apply({ProbeDoc("Target", "ns", "t", R"({"mode":5,"export":{"v":2}})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_THAT(h.Get(t)->error, HasSubstr("spec.mode"));
  EXPECT_EQ(At(h, t, "/spec/export"), R"({"v":1})");
  EXPECT_EQ(At(h, t, "/status/run"), good_run);
  EXPECT_EQ(h.Get(t)->generation, 2);
  EXPECT_EQ(h.Processed(ProbeKind("Source")), reader_runs);  // its export did not change

  // Never good: no export, no status but the refusal, the error.
  h.Apply({ProbeDoc("Target", "ns", "bad", R"({"mode":5,"export":{}})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_THAT(h.Get(ProbeRef("Target", "ns", "bad"))->error, HasSubstr("spec.mode"));
  EXPECT_EQ(At(h, ProbeRef("Target", "ns", "bad"), "/status/conditions/0/status"), R"("False")");
  EXPECT_EQ(At(h, ProbeRef("Target", "ns", "bad"), "/status/run"), "<none>");
  EXPECT_EQ(At(h, ProbeRef("Target", "ns", "bad"), "/metadata/generation"), "1");
  EXPECT_EQ(At(h, reader, "/status/got"), "[true,false]");

  // Fixed: the export appears and the reader is requeued; the error clears.
  h.Apply({ProbeDoc("Target", "ns", "bad", R"({"export":{}})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Get(ProbeRef("Target", "ns", "bad"))->error, "");
  EXPECT_EQ(At(h, reader, "/status/got"), "[true,true]");
  EXPECT_EQ(h.Processed(ProbeKind("Source")), reader_runs + 1);
}

TEST(ReconcilerTest, ConditionsGetObservedGenerationAndStableTransitionTimes) {
  Harness h;
  auto c = ProbeRef("Target", "ns", "c");
  auto doc = [](const char* status, const char* reason) {
    return ProbeDoc("Target", "ns", "c",
                    std::string(R"({"status":{"conditions":[{"type":"Ready","status":")") + status +
                        R"(","reason":")" + reason + R"("}]}})");
  };
  h.Apply({doc("True", "A")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, c, "/status/conditions/0/observedGeneration"), "1");
  EXPECT_EQ(At(h, c, "/status/conditions/0/lastTransitionTime"), R"("2026-11-30T12:00:00Z")");

  h.SetWallClock(kT0Ms + 60 * 1000);
  h.Apply({doc("True", "B")});  // same status: the time stays
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, c, "/status/conditions/0/observedGeneration"), "2");
  EXPECT_EQ(At(h, c, "/status/conditions/0/lastTransitionTime"), R"("2026-11-30T12:00:00Z")");

  h.SetWallClock(kT0Ms + 120 * 1000);
  h.Apply({doc("False", "B")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, c, "/status/conditions/0/lastTransitionTime"), R"("2026-11-30T12:02:00Z")");
}

TEST(ReconcilerTest, AReaderIsRequeuedWhenWhatItReadAppearsChangesOrGoes) {
  Harness h;
  auto s = ProbeRef("Source", "ns", "s");
  const std::string source_kind = ProbeKind("Source");
  h.Apply({ProbeDoc("Source", "ns", "s", R"({"gets":[)" + TargetRef("Target", "ns", "t") + "]}")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, s, "/status/got"), "[false]");  // a miss, recorded
  EXPECT_EQ(h.Processed(source_kind), 1u);

  h.Apply({ProbeDoc("Target", "ns", "t", R"({"export":{"v":1}})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(source_kind), 2u);
  EXPECT_EQ(At(h, s, "/status/got"), "[true]");
  EXPECT_GE(h.reconciler().Metrics().requeued_by_dependency, 1u);

  // The target changes but its export does not: the reader is left alone.
  h.Apply({ProbeDoc("Target", "ns", "t", R"({"export":{"v":1},"status":{"x":1}})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(source_kind), 2u);

  h.Apply({ProbeDoc("Target", "ns", "t", R"({"export":{"v":2}})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(source_kind), 3u);

  h.Remove({ProbeRef("Target", "ns", "t")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(source_kind), 4u);
  EXPECT_EQ(At(h, s, "/status/got"), "[false]");
}

TEST(ReconcilerTest, ALabelSelectorListIsRequeuedByObjectsInItsScope) {
  Harness h;
  auto leaf = ProbeRef("Leaf", "ns", "l");
  const std::string leaf_kind = ProbeKind("Leaf");
  h.Apply({ProbeDoc("Leaf", "ns", "l",
                    R"({"lists":[{"group":"test.portico.io","kind":"Target","namespace":"ns",)"
                    R"("selector":"app=web"}]})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, leaf, "/status/listed"), "[[]]");

  h.Apply({ProbeDoc("Target", "ns", "a", R"({"export":{}})", R"({"app":"web"})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(leaf_kind), 2u);
  EXPECT_EQ(At(h, leaf, "/status/listed"), R"([["ns/a"]])");

  // Not matching, another namespace: no requeue.
  h.Apply({ProbeDoc("Target", "ns", "b", R"({"export":{}})", R"({"app":"db"})"),
           ProbeDoc("Target", "other", "c", R"({"export":{}})", R"({"app":"web"})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(leaf_kind), 2u);

  // Relabelled into the selector, then out of it.
  h.Apply({ProbeDoc("Target", "ns", "b", R"({"export":{}})", R"({"app":"web"})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(leaf_kind), 3u);
  EXPECT_EQ(At(h, leaf, "/status/listed"), R"([["ns/a","ns/b"]])");
  h.Apply({ProbeDoc("Target", "ns", "a", R"({"export":{}})", R"({"app":"db"})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(leaf_kind), 4u);
  EXPECT_EQ(At(h, leaf, "/status/listed"), R"([["ns/b"]])");
}

TEST(ReconcilerTest, NamespacesCarryTheMetadataNameLabelForSelectors) {
  Harness h;
  auto leaf = ProbeRef("Leaf", "ns", "l");
  h.Apply({ProbeDoc("Leaf", "ns", "l",
                    R"j({"lists":[{"group":"","kind":"Namespace",)j"
                    R"j("selector":"kubernetes.io/metadata.name in (web,api)"}]})j")});
  ASSERT_TRUE(h.Idle());
  h.Apply({R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"web",)"
           R"("labels":{"team":"a"}}})",
           R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"db"}})"});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, leaf, "/status/listed"), R"([["web"]])");
  EXPECT_EQ(At(h, sdk::ObjectRef{"", "Namespace", "", "web"}, "/metadata/labels"),
            R"({"team":"a","kubernetes.io/metadata.name":"web"})");
}

TEST(ReconcilerTest, ContributionsAggregateIntoTheTargetWithoutReprocessingIt) {
  Harness h;
  auto t = ProbeRef("Target", "ns", "t");
  const std::string target_kind = ProbeKind("Target");
  h.Apply({ProbeDoc("Target", "ns", "t", R"({"status":{"slots":[{"name":"a","count":0}]}})")});
  ASSERT_TRUE(h.Idle());
  ASSERT_EQ(h.Processed(target_kind), 1u);
  auto source = [](const std::string& name, const std::string& extra) {
    return ProbeDoc("Source", "ns", name,
                    R"({"contribute":[{"target":)" + TargetRef("Target", "ns", "t") +
                        R"(,"topic":"count:slots[name=a].count")" + extra + "}]}");
  };
  h.Apply({source("s1", ""), source("s2", ""), source("s3", "")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, t, "/status/slots/0/count"), "3");
  EXPECT_EQ(h.Processed(target_kind), 1u);
  EXPECT_GE(h.reconciler().Metrics().status_aggregations, 1u);

  h.Remove({ProbeRef("Source", "ns", "s2")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, t, "/status/slots/0/count"), "2");

  h.Apply({source("s1", R"(,"json":5)"),
           ProbeDoc("Source", "ns", "s4",
                    R"({"contribute":[{"target":)" + TargetRef("Target", "ns", "t") +
                        R"(,"topic":"append:notes","json":{"from":"s4"}}]})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, t, "/status/slots/0/count"), "6");
  EXPECT_EQ(At(h, t, "/status/notes"), R"([{"from":"s4"}])");
  EXPECT_EQ(h.Processed(target_kind), 1u);

  // The target is reprocessed: its new status is the base, the contributions still apply.
  const int64_t target_run = *h.Int(t, "status.run");
  h.Apply({ProbeDoc("Target", "ns", "t",
                    R"({"status":{"slots":[{"name":"a","count":10},{"name":"b","count":0}]}})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, t, "/status/slots/0/count"), "16");
  EXPECT_EQ(h.Int(t, "status.run"), target_run + 1);

  // A contribution to an object that does not exist yet applies once it does.
  h.Apply({ProbeDoc("Source", "ns", "early",
                    R"({"contribute":[{"target":)" + TargetRef("Target", "ns", "later") +
                        R"(,"topic":"count:slots[name=a].count"}]})")});
  ASSERT_TRUE(h.Idle());
  h.Apply({ProbeDoc("Target", "ns", "later", R"({"status":{"slots":[{"name":"a","count":0}]}})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, ProbeRef("Target", "ns", "later"), "/status/slots/0/count"), "1");
}

TEST(ReconcilerTest, DeleteRemovesTheObjectFromTheStoreAndRequeuesItsReaders) {
  Harness h;
  auto s = ProbeRef("Source", "ns", "s");
  auto l = ProbeRef("Leaf", "ns", "l");
  h.Apply({ProbeDoc("Source", "ns", "s", R"({"synced":{"x":1},"export":{"e":1}})"),
           ProbeDoc("Leaf", "ns", "l", R"({"gets":[)" + TargetRef("Source", "ns", "s") + "]}")});
  ASSERT_TRUE(h.Idle());
  std::optional<core::StoredObject> stored = h.store().Get(StoreKeyOf(s));
  ASSERT_TRUE(stored.has_value());
  ASSERT_NE(stored->json, nullptr);
  EXPECT_EQ(*stored->json, R"({"x":1})");
  EXPECT_EQ(stored->hash, h.Get(s)->synced_hash);
  EXPECT_EQ(At(h, l, "/status/got"), "[true]");
  EXPECT_EQ(h.reconciler().Metrics().objects, 2u);
  uint64_t leaf_runs = h.Processed(ProbeKind("Leaf"));

  h.Remove({s});
  ASSERT_TRUE(h.Idle());
  EXPECT_FALSE(h.store().Get(StoreKeyOf(s)).has_value());
  EXPECT_FALSE(h.Get(s).has_value());
  EXPECT_EQ(h.Processed(ProbeKind("Leaf")), leaf_runs + 1);
  EXPECT_EQ(At(h, l, "/status/got"), "[false]");
  EXPECT_EQ(h.reconciler().Metrics().objects, 1u);
}

TEST(ReconcilerTest, TheSyncedStoreHoldsOnlyKindsThatSync) {
  Harness h;
  h.Apply({ProbeDoc("Target", "ns", "never", R"({"synced":{"x":1}})"),
           ProbeDoc("Source", "ns", "always", R"({"synced":{"y":2}})"),
           ProbeDoc("Source", "ns", "nothing", "{}"),
           ProbeDoc("Plain", "ns", "plain", R"({"a":[1,2]})"),
           R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns"}})",
           ServiceDoc("ns", "web")});
  ASSERT_TRUE(h.Idle());
  core::StoreSnapshot snapshot = h.store().Snapshot();
  std::vector<std::string> keys;
  for (const auto& o : snapshot.objects) keys.push_back(o.key.ToString());
  EXPECT_THAT(keys, ::testing::ElementsAre("/Service/ns/web", "test.portico.io/Plain/ns/plain",
                                           "test.portico.io/Source/ns/always"));
  EXPECT_EQ(*h.store().Get(StoreKeyOf(ProbeRef("Plain", "ns", "plain")))->json, R"({"a":[1,2]})");
  EXPECT_EQ(h.Get(ProbeRef("Target", "ns", "never"))->synced_hash, "");
  EXPECT_EQ(At(h, ProbeRef("Plain", "ns", "plain"), "/status"), "<none>");

  // A synced view that goes away is deleted from the store.
  h.Apply({ProbeDoc("Source", "ns", "always", "{}")});
  ASSERT_TRUE(h.Idle());
  EXPECT_FALSE(h.store().Get(StoreKeyOf(ProbeRef("Source", "ns", "always"))).has_value());
  EXPECT_EQ(h.Get(ProbeRef("Source", "ns", "always"))->synced_hash, "");
}

TEST(ReconcilerTest, SecretsAreServedToReadersAndRedactedEverywhere) {
  Harness h;
  auto r = ProbeRef("Target", "ns", "r");
  auto secret = sdk::ObjectRef{"", "Secret", "ns", "creds"};
  const std::string reader_spec =
      R"({"secrets":[{"namespace":"ns","name":"creds"},{"namespace":"ns","name":"late"}]})";
  h.Apply({R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds","namespace":"ns"},)"
           R"("type":"Opaque","data":{"password":"aHVudGVyMi1wYXNzd29yZA=="},)"
           R"("stringData":{"token":"s3cr3t-token-value"}})",
           ProbeDoc("Target", "ns", "r", reader_spec)});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, r, "/status/secrets/0/found"), "true");
  EXPECT_EQ(At(h, r, "/status/secrets/0/type"), R"("Opaque")");
  EXPECT_EQ(At(h, r, "/status/secrets/0/keys"), R"(["password","token"])");
  EXPECT_EQ(At(h, r, "/status/secrets/1/found"), "false");
  for (const ObjectView& view : h.reconciler().List(nullptr, "")) {
    EXPECT_THAT(view.json, Not(HasSubstr("aHVudGVyMi1wYXNzd29yZA=="))) << view.json;
    EXPECT_THAT(view.json, Not(HasSubstr("s3cr3t-token-value"))) << view.json;
  }
  EXPECT_EQ(At(h, secret, "/data/password"), R"("REDACTED")");
  EXPECT_EQ(At(h, secret, "/stringData/token"), R"("REDACTED")");
  uint64_t runs = h.Processed(ProbeKind("Target"));

  // Every change of what was read requeues the reader: the data, a Secret appearing, a delete.
  h.Apply({R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds","namespace":"ns"},)"
           R"("type":"Opaque","data":{"password":"b3RoZXI="}})"});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(ProbeKind("Target")), runs + 1);
  EXPECT_EQ(At(h, r, "/status/secrets/0/keys"), R"(["password"])");
  h.Apply({R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"late","namespace":"ns"}})"});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(ProbeKind("Target")), runs + 2);
  EXPECT_EQ(At(h, r, "/status/secrets/1/found"), "true");
  h.Remove({secret});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(ProbeKind("Target")), runs + 3);
  EXPECT_EQ(At(h, r, "/status/secrets/0/found"), "false");

  // A Secret that fails validation: the error does not quote its material.
  h.Apply({R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"bad","namespace":"ns"},)"
           R"("data":{"k":"!!not-base64-material!!"}})"});
  ASSERT_TRUE(h.Idle());
  std::optional<ObjectView> bad = h.Get(sdk::ObjectRef{"", "Secret", "ns", "bad"});
  ASSERT_TRUE(bad.has_value());
  EXPECT_THAT(bad->error, HasSubstr("data"));
  EXPECT_THAT(bad->error, Not(HasSubstr("not-base64-material")));
  EXPECT_THAT(bad->json, Not(HasSubstr("not-base64-material")));
}

TEST(ReconcilerTest, TheInitialBatchIsProcessedKindByKindInReadsOrder) {
  Harness h(/*workers=*/4, /*start=*/false);
  std::vector<std::string> docs;
  for (int i = 0; i < 10; ++i) {
    std::string n = std::to_string(i);
    docs.push_back(ProbeDoc("Leaf", "ns", "l" + n, "{}"));
    docs.push_back(ProbeDoc("Source", "ns", "s" + n, "{}"));
    docs.push_back(ProbeDoc("Target", "ns", "t" + n, "{}"));
  }
  h.Initial(docs);
  EXPECT_FALSE(h.reconciler().Ready());
  EXPECT_FALSE(h.reconciler().WaitIdle(std::chrono::milliseconds(20)));  // not started
  ASSERT_TRUE(h.reconciler().Start().ok());
  ASSERT_TRUE(h.Idle());
  EXPECT_TRUE(h.reconciler().Ready());
  auto seqs = [&](const char* kind, const char* prefix) {
    std::vector<int64_t> out;
    for (int i = 0; i < 10; ++i) {
      out.push_back(*h.Int(ProbeRef(kind, "ns", prefix + std::to_string(i)), "status.seq"));
    }
    return out;
  };
  std::vector<int64_t> targets = seqs("Target", "t");
  std::vector<int64_t> sources = seqs("Source", "s");
  std::vector<int64_t> leaves = seqs("Leaf", "l");
  EXPECT_LT(*std::max_element(targets.begin(), targets.end()),
            *std::min_element(sources.begin(), sources.end()));
  EXPECT_LT(*std::max_element(sources.begin(), sources.end()),
            *std::min_element(leaves.begin(), leaves.end()));
}

TEST(ReconcilerTest, UnavailableIsRetriedWithBackoffOtherErrorsAreNot) {
  Harness h;
  auto flaky = ProbeRef("Target", "ns", "flaky");
  auto broken = ProbeRef("Target", "ns", "broken");
  h.Apply({ProbeDoc("Target", "ns", "flaky", R"({"failCode":14,"failTimes":2,"export":{}})"),
           ProbeDoc("Target", "ns", "broken", R"({"failCode":3})")});
  // The probe fails the first two runs of "flaky" in this process, then succeeds.
  ASSERT_TRUE(h.WaitFor([&] { return h.Int(flaky, "status.run").has_value(); }));
  EXPECT_EQ(h.Int(flaky, "status.run"), 3);
  EXPECT_EQ(h.Get(flaky)->error, "");
  ASSERT_TRUE(h.Idle());
  std::optional<ObjectView> view = h.Get(broken);
  EXPECT_THAT(view->error, HasSubstr("failing run 1"));
  EXPECT_EQ(h.reconciler().Metrics().failed, 3u);  // flaky twice, broken once
  EXPECT_EQ(h.Processed(ProbeKind("Target")), 4u);
}

TEST(ReconcilerTest, ExtensionRefsResolveOnlyRouteFilterKinds) {
  Harness h;
  auto s = ProbeRef("Source", "ns", "s");
  h.Apply(
      {ProbeDoc("Filter", "ns", "f", R"({"export":{"cfg":1}})"),
       ProbeDoc("Target", "ns", "t", R"({"export":{"x":1}})"),
       ProbeDoc("Source", "ns", "s",
                R"({"extensions":[)" + TargetRef("Filter", "ns", "f") + "," +
                    TargetRef("Target", "ns", "t") + "," + TargetRef("Filter", "ns", "g") + "]}")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, s, "/status/extensions"), "[true,false,false]");
  h.Apply({ProbeDoc("Filter", "ns", "g", R"({"export":{"cfg":2}})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, s, "/status/extensions"), "[true,false,true]");
}

TEST(ReconcilerTest, ReferencePolicyReadsAreRecordedAgainstTheAskingObject) {
  Harness h;
  auto l = ProbeRef("Leaf", "a", "l");
  h.Apply({ProbeDoc("Leaf", "a", "l",
                    R"({"references":[{"fromGroup":"gateway.networking.k8s.io",)"
                    R"("fromKind":"HTTPRoute","fromNamespace":"a","to":{"group":"",)"
                    R"("kind":"Service","namespace":"b","name":"web"}}]})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, l, "/status/allowed"), "[false]");
  h.Apply({R"({"apiVersion":"gateway.networking.k8s.io/v1beta1","kind":"ReferenceGrant",)"
           R"("metadata":{"name":"allow","namespace":"b"},"spec":{"from":[{"group":)"
           R"("gateway.networking.k8s.io","kind":"HTTPRoute","namespace":"a"}],)"
           R"("to":[{"group":"","kind":"Service","name":"web"}]}})"});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, l, "/status/allowed"), "[true]");
  EXPECT_EQ(h.Processed(ProbeKind("Leaf")), 2u);
}

TEST(ReconcilerTest, ARouteProcessedBeforeItsGatewayIsReprocessedWhenTheGatewayArrives) {
  Harness h;
  const std::string route_kind = std::string("HTTPRoute.") + kGatewayGroup;
  auto route = sdk::ObjectRef{kGatewayGroup, "HTTPRoute", "default", "web"};
  // The Service and the GatewayClass first: a route or Gateway racing them would be requeued
  // once more (the Gateway's export changes when its class appears).
  h.Apply({ServiceDoc("default", "web"), GatewayClassDoc("portico")});
  ASSERT_TRUE(h.Idle());
  h.Apply({RouteDoc("default", "web", "gw", "web", "/")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(route_kind), 1u);
  std::string before = At(h, route, "/status");
  EXPECT_EQ(h.Get(route)->error, "");

  h.Apply({GatewayDoc("default", "gw", "portico")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Processed(route_kind), 2u);
  EXPECT_NE(At(h, route, "/status"), before);
  EXPECT_GE(h.reconciler().Metrics().requeued_by_dependency, 1u);
  EXPECT_NE(h.Get(route)->synced_hash, "");
}

TEST(ReconcilerTest, EditingOneOfAHundredRoutesReprocessesOnlyThatRoute) {
  Harness h;
  std::vector<std::string> docs = {GatewayClassDoc("portico"),
                                   GatewayDoc("default", "gw", "portico"),
                                   ServiceDoc("default", "web")};
  for (int i = 0; i < 100; ++i) {
    std::string n = "r" + std::to_string(i);
    docs.push_back(RouteDoc("default", n, "gw", "web", "/" + n));
  }
  h.Initial(docs);
  ASSERT_TRUE(h.Idle());
  ASSERT_TRUE(h.reconciler().Ready());
  ReconcilerMetrics before = h.reconciler().Metrics();
  EXPECT_EQ(before.objects, 103u);
  h.Apply({RouteDoc("default", "r42", "gw", "web", "/edited")});
  ASSERT_TRUE(h.Idle());
  ReconcilerMetrics after = h.reconciler().Metrics();
  const std::string route_kind = std::string("HTTPRoute.") + kGatewayGroup;
  EXPECT_EQ(after.processed_by_kind[route_kind] - before.processed_by_kind[route_kind], 1u);
  EXPECT_EQ(after.processed - before.processed, 1u);
  EXPECT_EQ(h.Get(sdk::ObjectRef{kGatewayGroup, "HTTPRoute", "default", "r42"})->generation, 2);
}

TEST(ReconcilerTest, ListAndGetShowObjectsSortedAndFiltered) {
  Harness h;
  h.Apply({ProbeDoc("Target", "b", "x", "{}"), ProbeDoc("Target", "a", "y", "{}"),
           ProbeDoc("Target", "a", "x", "{}"), ProbeDoc("Source", "a", "z", "{}")});
  ASSERT_TRUE(h.Idle());
  const core::KindInfo* target = TestPlugins().registry.Find(kProbeGroup, "Target");
  ASSERT_NE(target, nullptr);
  std::vector<std::string> names;
  for (const ObjectView& v : h.reconciler().List(target, "")) {
    names.push_back(v.ref.ns + "/" + v.ref.name);
  }
  EXPECT_THAT(names, ::testing::ElementsAre("a/x", "a/y", "b/x"));
  EXPECT_EQ(h.reconciler().List(target, "a").size(), 2u);
  EXPECT_EQ(h.reconciler().List(nullptr, "a").size(), 3u);
  std::optional<ObjectView> x = h.Get(ProbeRef("Target", "a", "x"));
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->source.file, "test.yaml");
  EXPECT_FALSE(h.Get(ProbeRef("Target", "a", "nope")).has_value());
}

TEST(ReconcilerTest, StartStopLifecycle) {
  Harness h;
  EXPECT_FALSE(h.reconciler().Start().ok());  // already started
  h.reconciler().Stop();
  h.reconciler().Stop();
  h.Apply({ProbeDoc("Target", "ns", "t", "{}")});  // after Stop: recorded, never processed
  EXPECT_FALSE(h.reconciler().WaitIdle(std::chrono::milliseconds(10)));
  EXPECT_FALSE(h.reconciler().Start().ok());
}

// Many workers, objects that read, list and contribute to each other, changes delivered while
// processing runs: the end state must equal what the final objects imply, and no object may
// ever be processed twice at once.
TEST(ReconcilerConcurrencyTest, ManyWorkersConvergeToTheSameEndState) {
  Harness h(/*workers=*/8);
  constexpr int kTargets = 20;
  constexpr int kSources = 200;
  constexpr int kLeaves = 20;
  auto source_doc = [](int j, int version) {
    std::string t = "t" + std::to_string(j % kTargets);
    return ProbeDoc("Source", "ns", "s" + std::to_string(j),
                    R"({"gets":[)" + TargetRef("Target", "ns", t) +
                        R"(],"contribute":[{"target":)" + TargetRef("Target", "ns", t) +
                        R"(,"topic":"count:slots[name=a].count"}],)" + R"("export":{"v":)" +
                        std::to_string(version) + "}}",
                    j % 2 == 0 ? R"({"parity":"even"})" : R"({"parity":"odd"})");
  };
  std::vector<std::string> batch;
  for (int k = 0; k < kLeaves; ++k) {
    batch.push_back(
        ProbeDoc("Leaf", "ns", "l" + std::to_string(k),
                 R"({"lists":[{"group":"test.portico.io","kind":"Source","namespace":"ns",)"
                 R"("selector":"parity=even"}],"gets":[)" +
                     TargetRef("Source", "ns", "s" + std::to_string(k)) + "]}"));
  }
  h.Apply(batch);
  for (int b = 0; b < 10; ++b) {
    batch.clear();
    for (int j = b * 20; j < (b + 1) * 20; ++j) batch.push_back(source_doc(j, 1));
    h.Apply(batch);
  }
  batch.clear();
  for (int i = 0; i < kTargets; ++i) {
    batch.push_back(ProbeDoc("Target", "ns", "t" + std::to_string(i),
                             R"({"export":{"i":)" + std::to_string(i) +
                                 R"(},"status":{"slots":[{"name":"a","count":0}]}})"));
  }
  h.Apply(batch);
  batch.clear();
  for (int j = 0; j < kSources; j += 2) batch.push_back(source_doc(j, 2));
  h.Apply(batch);
  std::vector<sdk::ObjectRef> removed;
  for (int j = 0; j < kSources; j += 10)
    removed.push_back(ProbeRef("Source", "ns", "s" + std::to_string(j)));
  h.Remove(removed);
  ASSERT_TRUE(h.Idle());

  std::set<int> live;
  for (int j = 0; j < kSources; ++j) {
    if (j % 10 != 0) live.insert(j);
  }
  for (int i = 0; i < kTargets; ++i) {
    int expected = 0;
    for (int j : live) expected += j % kTargets == i ? 1 : 0;
    EXPECT_EQ(At(h, ProbeRef("Target", "ns", "t" + std::to_string(i)), "/status/slots/0/count"),
              std::to_string(expected))
        << "t" << i;
  }
  size_t even = 0;
  for (int j : live) even += j % 2 == 0 ? 1 : 0;
  for (int k = 0; k < kLeaves; ++k) {
    rapidjson::Document leaf = h.View(ProbeRef("Leaf", "ns", "l" + std::to_string(k)));
    const rapidjson::Value* listed = rapidjson::Pointer("/status/listed/0").Get(leaf);
    ASSERT_NE(listed, nullptr);
    EXPECT_EQ(listed->Size(), even) << "l" << k;
    EXPECT_EQ(At(h, ProbeRef("Leaf", "ns", "l" + std::to_string(k)), "/status/got"),
              live.count(k) ? "[true]" : "[false]");
  }
  for (int j : live) {
    ASSERT_EQ(At(h, ProbeRef("Source", "ns", "s" + std::to_string(j)), "/status/got"), "[true]");
  }
  // Targets were applied once; contributions never reprocessed them.
  EXPECT_EQ(h.Processed(ProbeKind("Target")), static_cast<uint64_t>(kTargets));
  h.Apply({ProbeDoc("Target", "ns", "last", "{}")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, ProbeRef("Target", "ns", "last"), "/status/violations"), "0");
}

}  // namespace
}  // namespace portico::controller::testing
