// Scale of one transaction: a full snapshot of many route objects (100,000 in optimized builds,
// where it must apply well under a second), then a one-object batch, then deleting everything.
// Limits are on this thread's CPU time (the machine may be shared); wall time is printed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <cstdio>

#include "core/runtime/gateway_runtime.h"
#include "core/runtime/runtime_test_util.h"

namespace portico::core {
namespace {

using ::portico::core::testing::ExpectEmptyStats;
using ::portico::core::testing::ProbeKey;
using ::portico::core::testing::TestPlugins;
using ::portico::core::testing::Upsert;

#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
constexpr int kRoutes = 100000;
constexpr bool kTimed = true;
#else
constexpr int kRoutes = 20000;  // unoptimized or sanitized: correctness only
constexpr bool kTimed = false;
#endif

std::string RouteView(int i, int rev) {
  std::string n = std::to_string(i);
  return R"({"puts":[{"format":"route_rules.v1","id":"httproute/ns/r)" + n +
         R"(","json":{"rules":[{"id":"0.0","match":{"path":{"type":"Prefix","value":"/p)" + n +
         R"("}},"rev":)" + std::to_string(rev) + "}]}}]}";
}

// Timer reports wall time and this thread's CPU time (the machine may be shared: CPU time is
// what the assertions use).
struct Timer {
  static double Cpu() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
  std::chrono::steady_clock::time_point wall_start = std::chrono::steady_clock::now();
  double cpu_start = Cpu();
  double wall() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  }
  double cpu() const { return Cpu() - cpu_start; }
};

TEST(RuntimeScaleTest, FullSnapshotOfManyRoutesThenOneChangeThenNothing) {
  GatewayRuntime rt(TestPlugins(), nullptr);
  std::vector<SyncedChange> snapshot;
  snapshot.reserve(kRoutes + 1);
  for (int i = 0; i < kRoutes; ++i) {
    snapshot.push_back(Upsert(ProbeKey("Base", "r" + std::to_string(i)), RouteView(i, 0)));
  }
  snapshot.push_back(Upsert(ProbeKey("Apex", "other"),
                            R"({"puts":[{"format":"backend.v1","id":"ports/x","json":{}}]})"));

  Timer full;
  ApplyResult r = rt.Apply(std::move(snapshot), true, 1);
  double full_cpu = full.cpu(), full_wall = full.wall();
  ASSERT_TRUE(r.committed);
  ASSERT_TRUE(r.nacks.empty());
  EXPECT_EQ(rt.Stats().entries, static_cast<size_t>(kRoutes) + 1);
  EXPECT_EQ(rt.Stats().owners, static_cast<size_t>(kRoutes) + 1);
  std::printf("full snapshot of %d routes: %.3f s CPU, %.3f s wall\n", kRoutes, full_cpu,
              full_wall);
  if (kTimed) {
    EXPECT_LT(full_cpu, 1.0);
  }

  auto before = rt.Current();
  Timer one;
  r = rt.Apply({Upsert(ProbeKey("Base", "r7"), RouteView(7, 1))}, false, 2);
  double one_cpu = one.cpu(), one_wall = one.wall();
  ASSERT_TRUE(r.committed);
  std::printf("one-route batch over %d routes: %.4f s CPU, %.4f s wall\n", kRoutes, one_cpu,
              one_wall);
  if (kTimed) {
    EXPECT_LT(one_cpu, 0.1);
  }
  EXPECT_EQ(rt.Current()->formats.at(PORTICO_FORMAT_BACKEND),
            before->formats.at(PORTICO_FORMAT_BACKEND));
  EXPECT_THAT(rt.History().back().changed,
              ::testing::ElementsAre(EntryKey(PORTICO_FORMAT_ROUTE_RULES, "httproute/ns/r7")));

  before.reset();
  Timer wipe;
  r = rt.Apply({}, true, 3);
  double wipe_cpu = wipe.cpu(), wipe_wall = wipe.wall();
  ASSERT_TRUE(r.committed);
  std::printf("deleting %d routes: %.3f s CPU, %.3f s wall\n", kRoutes, wipe_cpu, wipe_wall);
  if (kTimed) {
    EXPECT_LT(wipe_cpu, 1.0);
  }
  ExpectEmptyStats(rt.Stats());
  EXPECT_TRUE(rt.Current()->formats.empty());
}

}  // namespace
}  // namespace portico::core
