// Processor faults (issue 15 item 7): a processor that throws is caught by the SDK and reported
// on the object; under isolation (isolated_process.h) one that crashes, aborts or hangs costs
// only its child. In every case the last good result keeps serving and the rest reconciles.
#include "controller/reconcile/isolated_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "controller/reconcile/reconciler_test_util.h"

namespace portico::controller::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string SyncedJson(Harness& h, const sdk::ObjectRef& ref) {
  std::optional<core::StoredObject> stored =
      h.store().Get(core::StoreKey{ref.group, ref.kind, ref.ns, ref.name});
  return stored.has_value() && stored->json != nullptr ? *stored->json : "<none>";
}

ProcessIsolation IsolateProbe(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  ProcessIsolation isolation;
  isolation.plugins = {"reconcile-probe"};
  isolation.timeout = timeout;
  return isolation;
}

bool Refused(Harness& h, const sdk::ObjectRef& ref) {
  for (const ObjectView& v : h.reconciler().Refused()) {
    if (v.ref == ref) return true;
  }
  return false;
}

// Applies a good generation of `s`, then `fault`; checks what every fault must leave: the error
// on the object (returned), the refusal of generation 2 while 1 keeps serving, the synced view
// of generation 1 in the store, and a fresh object still processed afterwards.
std::string FaultKeepsTheLastGoodResult(Harness& h, std::string_view fault) {
  auto s = ProbeRef("Source", "ns", "s");
  h.Apply({ProbeDoc("Source", "ns", "s", R"({"synced":{"v":1}})")});
  EXPECT_TRUE(h.Idle());
  EXPECT_EQ(SyncedJson(h, s), R"({"v":1})");

  h.Apply({ProbeDoc("Source", "ns", "s",
                    R"({"synced":{"v":2},"fault":")" + std::string(fault) + R"("})")});
  EXPECT_TRUE(h.Idle());
  std::optional<ObjectView> view = h.Get(s);
  EXPECT_TRUE(view.has_value());
  if (!view.has_value()) return "";
  EXPECT_EQ(view->generation, 2);
  EXPECT_EQ(view->serving_generation, 1);
  EXPECT_TRUE(view->refusal.has_value());
  EXPECT_TRUE(Refused(h, s));  // what /api/v1/errors lists
  EXPECT_EQ(SyncedJson(h, s), R"({"v":1})");
  EXPECT_EQ(At(h, s, "/spec/synced"), R"({"v":1})");

  // The controller goes on: another object is processed, and fixing the faulty one works.
  auto other = ProbeRef("Source", "ns", "other");
  h.Apply({ProbeDoc("Source", "ns", "other", R"({"synced":{"o":1}})")});
  EXPECT_TRUE(h.Idle());
  EXPECT_EQ(SyncedJson(h, other), R"({"o":1})");
  std::string error = view->error;
  h.Apply({ProbeDoc("Source", "ns", "s", R"({"synced":{"v":3}})")});
  EXPECT_TRUE(h.Idle());
  EXPECT_EQ(SyncedJson(h, s), R"({"v":3})");
  EXPECT_EQ(h.Get(s)->error, "");
  EXPECT_FALSE(Refused(h, s));
  return error;
}

TEST(ProcessorFaultTest, ThrowIsCaughtByTheSdkAndReportedOnTheObject) {
  Harness h;
  EXPECT_THAT(
      FaultKeepsTheLastGoodResult(h, "throw"),
      AllOf(HasSubstr("processor of Source threw"), HasSubstr("probe fault: thrown on purpose")));
  EXPECT_EQ(h.reconciler().Metrics().isolated_runs, 0u);
}

TEST(ProcessorFaultTest, IsolatedThrowIsReportedTheSameWay) {
  Harness h(2, true, IsolateProbe());
  EXPECT_THAT(FaultKeepsTheLastGoodResult(h, "throw"),
              AllOf(HasSubstr("threw"), HasSubstr("probe fault: thrown on purpose")));
  EXPECT_EQ(h.reconciler().Metrics().isolated_failures, 0u);  // the processor returned
}

TEST(ProcessorFaultTest, IsolatedCrashFailsTheObjectNotTheController) {
  Harness h(2, true, IsolateProbe());
  // Under ASan its SEGV handler ends the child with status 1 instead of the signal.
  EXPECT_THAT(FaultKeepsTheLastGoodResult(h, "crash"),
              AllOf(HasSubstr("Source ns/s: the processor of plugin reconcile-probe crashed"),
                    ::testing::AnyOf(HasSubstr("signal 11"), HasSubstr("exited with status"))));
  EXPECT_EQ(h.reconciler().Metrics().isolated_failures, 1u);
}

TEST(ProcessorFaultTest, IsolatedAbortFailsTheObjectNotTheController) {
  Harness h(2, true, IsolateProbe());
  EXPECT_THAT(FaultKeepsTheLastGoodResult(h, "abort"),
              AllOf(HasSubstr("plugin reconcile-probe crashed"),
                    ::testing::AnyOf(HasSubstr("signal 6"), HasSubstr("exited with status"))));
  EXPECT_EQ(h.reconciler().Metrics().isolated_failures, 1u);
}

TEST(ProcessorFaultTest, IsolatedHangIsKilledAtTheDeadline) {
  Harness h(2, true, IsolateProbe(std::chrono::milliseconds(300)));
  auto started = std::chrono::steady_clock::now();
  EXPECT_THAT(
      FaultKeepsTheLastGoodResult(h, "hang"),
      AllOf(HasSubstr("plugin reconcile-probe did not return within 300 ms"), HasSubstr("killed")));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_EQ(h.reconciler().Metrics().isolated_failures, 1u);
}

// An isolated run reads through the child's copy of the table; its reads, contributions,
// status, export and metrics come back to the parent and behave as in-process ones.
TEST(ProcessorFaultTest, IsolatedRunsReadContributeAndAreRequeuedLikeInProcessOnes) {
  Harness h(2, true, IsolateProbe());
  auto t = ProbeRef("Target", "ns", "t");
  auto s = ProbeRef("Source", "ns", "s");
  h.Apply({ProbeDoc("Target", "ns", "t", R"({"status":{"slots":[{"name":"a","count":0}]}})")});
  ASSERT_TRUE(h.Idle());
  h.Apply({ProbeDoc("Source", "ns", "s",
                    R"({"gets":[)" + TargetRef("Target", "ns", "t") + "," +
                        TargetRef("Target", "ns", "later") +
                        R"(],"lists":[{"group":"test.portico.io","kind":"Target",)"
                        R"("namespace":"ns","selector":"app=x"}],"contribute":[{"target":)" +
                        TargetRef("Target", "ns", "t") +
                        R"(,"topic":"count:slots[name=a].count"}],)"
                        R"("export":{"e":1},"synced":{"x":1},"metric":"probe_runs"})")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, s, "/status/got"), "[false,false]");  // t exports nothing yet
  EXPECT_EQ(At(h, s, "/status/listed"), "[[]]");
  EXPECT_EQ(At(h, t, "/status/slots/0/count"), "1");  // the contribution was replayed
  EXPECT_EQ(SyncedJson(h, s), R"({"x":1})");

  // What it read appears: the replayed reads requeue it (a get and a labelled list).
  h.Apply({ProbeDoc("Target", "ns", "later", R"({"export":{"v":1}})", R"({"app":"x"})")});
  ASSERT_TRUE(h.WaitFor([&] { return At(h, s, "/status/got") == "[false,true]"; }));
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(At(h, s, "/status/listed"), R"([["ns/later"]])");
  EXPECT_GE(h.reconciler().Metrics().requeued_by_dependency, 1u);
  EXPECT_GE(h.reconciler().Metrics().isolated_runs, 3u);
  EXPECT_EQ(h.reconciler().Metrics().isolated_failures, 0u);
}

TEST(ProcessorFaultTest, ReadAnyOfMatchesGetsListScopesAndSecrets) {
  IsolatedOutcome outcome;
  outcome.got_keys = {"g/Target/ns/t"};
  outcome.list_scopes = {"g/Filter/ns", "g/Policy/"};
  outcome.secret_keys = {"/Secret/ns/cert"};
  EXPECT_TRUE(ReadAnyOf(outcome, {"g/Other/ns/x", "g/Target/ns/t"}));
  EXPECT_FALSE(ReadAnyOf(outcome, {"g/Target/ns/u", "g/Target/other/t"}));
  EXPECT_TRUE(ReadAnyOf(outcome, {"g/Filter/ns/any"}));
  EXPECT_FALSE(ReadAnyOf(outcome, {"g/Filter/elsewhere/any"}));
  EXPECT_TRUE(ReadAnyOf(outcome, {"g/Policy/anywhere/p"}));
  EXPECT_TRUE(ReadAnyOf(outcome, {"/Secret/ns/cert"}));
  EXPECT_FALSE(ReadAnyOf(outcome, {"/Secret/ns/other"}));
  EXPECT_FALSE(ReadAnyOf(outcome, {}));
}

TEST(ProcessorFaultTest, IsolationAppliesOnlyToTheNamedPlugins) {
  ProcessIsolation isolation;
  isolation.plugins = {"someone-else"};
  EXPECT_FALSE(isolation.Applies("reconcile-probe"));
  EXPECT_TRUE(isolation.Applies("someone-else"));
  isolation.all = true;
  EXPECT_TRUE(isolation.Applies("reconcile-probe"));
  Harness h(2, true, ProcessIsolation{{"someone-else"}, false, std::chrono::seconds(1)});
  h.Apply({ProbeDoc("Target", "ns", "t", "{}")});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.reconciler().Metrics().isolated_runs, 0u);
  EXPECT_EQ(h.reconciler().Metrics().processed, 1u);
}

}  // namespace
}  // namespace portico::controller::testing
