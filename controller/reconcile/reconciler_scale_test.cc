// reconciler_scale_test: the issue's scale figure: 10,000 HTTPRoutes, one Gateway and a few
// Services as the initial batch, timed to Ready with the real plugins; then one edited route is
// the only one reprocessed. What is asserted is work (objects processed), not time: the deadline
// only catches hangs (240 s: a sanitized build on a loaded 2-core machine took 72 s), and the
// figure is printed; speed belongs to tests/bench.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "controller/reconcile/reconciler.h"
#include "controller/reconcile/reconciler_test_util.h"

namespace portico::controller::testing {
namespace {

// kHangDeadline bounds a wait for the whole batch; reaching it means a hang, not slowness.
constexpr std::chrono::seconds kHangDeadline(240);

// CpuMs is the CPU time this process used so far (all threads): the figure that does not depend
// on how busy the machine is.
int64_t CpuMs() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto ms = [](const timeval& t) { return int64_t{t.tv_sec} * 1000 + t.tv_usec / 1000; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

TEST(ReconcilerScaleTest, TenThousandRoutesBecomeReadyAndOneEditReprocessesOneRoute) {
  constexpr int kRoutes = 10000;
  constexpr int kServices = 10;
  Harness h(/*workers=*/2, /*start=*/true);
  std::vector<std::string> docs = {GatewayClassDoc("portico"),
                                   GatewayDoc("default", "gw", "portico")};
  for (int s = 0; s < kServices; ++s)
    docs.push_back(ServiceDoc("default", "svc" + std::to_string(s)));
  for (int i = 0; i < kRoutes; ++i) {
    std::string n = "route-" + std::to_string(i);
    docs.push_back(RouteDoc("default", n, "gw", "svc" + std::to_string(i % kServices), "/" + n));
  }
  std::vector<ConfigChange> changes;
  changes.reserve(docs.size());
  for (const std::string& d : docs) changes.push_back(h.Change(d));

  const int64_t cpu_start = CpuMs();
  auto start = std::chrono::steady_clock::now();
  h.reconciler().OnChanges(std::move(changes), /*initial=*/true);
  ASSERT_TRUE(h.reconciler().WaitIdle(kHangDeadline));
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  ASSERT_TRUE(h.reconciler().Ready());
  std::printf(
      "[ scale    ] %d HTTPRoutes + 1 Gateway + %d Services: ready in %lld ms "
      "(%lld ms CPU over all threads)\n",
      kRoutes, kServices, static_cast<long long>(elapsed.count()),
      static_cast<long long>(CpuMs() - cpu_start));

  ReconcilerMetrics before = h.reconciler().Metrics();
  const std::string route_kind = std::string("HTTPRoute.") + kGatewayGroup;
  EXPECT_EQ(before.processed_by_kind[route_kind], static_cast<uint64_t>(kRoutes));
  EXPECT_EQ(before.objects, docs.size());
  EXPECT_EQ(h.store().Stats().objects, static_cast<size_t>(kRoutes + 1 + kServices));

  h.Apply({RouteDoc("default", "route-4242", "gw", "svc3", "/edited")});
  ASSERT_TRUE(h.Idle());
  ReconcilerMetrics after = h.reconciler().Metrics();
  EXPECT_EQ(after.processed_by_kind[route_kind] - before.processed_by_kind[route_kind], 1u);
  EXPECT_EQ(after.processed - before.processed, 1u);
}

// Aggregation at scale: ten thousand objects contribute to one target (the shape of routes
// attaching to one Gateway listener); the target is processed once and rendered a few times.
TEST(ReconcilerScaleTest, TenThousandContributionsToOneTargetAggregateWithoutReprocessing) {
  constexpr int kSources = 10000;
  Harness h(/*workers=*/2, /*start=*/true);
  std::vector<ConfigChange> changes;
  changes.push_back(h.Change(
      ProbeDoc("Target", "scale", "t", R"({"status":{"slots":[{"name":"a","count":0}]}})")));
  for (int i = 0; i < kSources; ++i) {
    changes.push_back(h.Change(
        ProbeDoc("Source", "scale", "s" + std::to_string(i),
                 R"({"contribute":[{"target":{"group":"test.portico.io","kind":"Target",)"
                 R"("namespace":"scale","name":"t"},"topic":"count:slots[name=a].count"}]})")));
  }
  const int64_t cpu_start = CpuMs();
  auto start = std::chrono::steady_clock::now();
  h.reconciler().OnChanges(std::move(changes), /*initial=*/true);
  ASSERT_TRUE(h.reconciler().WaitIdle(kHangDeadline));
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  ReconcilerMetrics m = h.reconciler().Metrics();
  std::printf(
      "[ scale    ] %d contributions to one target: ready in %lld ms (%lld ms CPU), "
      "%llu target renderings\n",
      kSources, static_cast<long long>(elapsed.count()),
      static_cast<long long>(CpuMs() - cpu_start),
      static_cast<unsigned long long>(m.status_aggregations));
  auto t = ProbeRef("Target", "scale", "t");
  EXPECT_EQ(h.Int(t, "status.run").has_value(), true);
  rapidjson::Document view = h.View(t);
  const rapidjson::Value* slots = json::FindPath(view, "status.slots");
  ASSERT_NE(slots, nullptr);
  EXPECT_EQ(json::GetInt((*slots)[0], "count"), kSources);
  EXPECT_EQ(m.processed_by_kind[ProbeKind("Target")], 1u);

  // One contributor goes: one re-aggregation, no reprocessing.
  h.Remove({ProbeRef("Source", "scale", "s7")});
  ASSERT_TRUE(h.Idle());
  view = h.View(t);
  EXPECT_EQ(json::GetInt((*json::FindPath(view, "status.slots"))[0], "count"), kSources - 1);
  EXPECT_EQ(h.Processed(ProbeKind("Target")), 1u);
}

}  // namespace
}  // namespace portico::controller::testing
