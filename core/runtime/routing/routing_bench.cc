// routing_bench: RouteTable lookup cost and memory for 1 vs 10,000 routes of one rule each on one
// hostname (prefix routes, and separately regex routes), the request matching the LAST route.
// Prints the table's heap per route (glibc mallinfo2 around Build, after a warm-up match), then
// runs Google Benchmark. A measurement to read, not a test: nothing is asserted.
//
//   build/<dir>/core/runtime/routing/routing_bench [--benchmark_filter=...]
#include <malloc.h>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "core/runtime/routing/route_table.h"
#include "portico/sdk/abi.h"

namespace portico::core::routing {
namespace {

constexpr char kHost[] = "bench.example.com";

std::string Padded(int64_t v, int width) {
  std::string s = std::to_string(v);
  return std::string(static_cast<size_t>(width) - s.size(), '0') + s;
}

// RouteEntry is a route_rules.v1 entry as the HTTPRoute handler writes it.
std::string RouteEntry(int i, bool regex) {
  std::string name = "r" + std::to_string(i);
  std::string path = regex ? "/re" + std::to_string(i) + "/[0-9]+" : "/r" + std::to_string(i);
  std::string precedence = std::string("p:") + (regex ? "1" : "2") + ":" +
                           Padded(9999 - static_cast<int64_t>(path.size()), 4) +
                           "/m:1/h:99/q:99/t:01700000000000/n:bench/" + name + " /r:0000.0000";
  return R"({"route":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","namespace":"bench",)"
         R"("name":")" +
         name +
         R"("},"parents":[{"gateway":{"namespace":"bench","name":"gw"},"listener":"http",)"
         R"("hostnames":[")" +
         kHost + R"("]}],"rules":[{"id":"0.0","precedence":")" + precedence +
         R"(","match":{"path":{"type":")" + (regex ? "Regex" : "Prefix") + R"(","value":")" + path +
         R"("},"headers":[],"query":[]},"action":{"backends":[{"key":"bench/svc:8080",)"
         R"("weight":1,"filters":[]}],"redirect":null,"filters":[],)"
         R"("timeouts":{"requestMs":0,"backendRequestMs":0}}}]})";
}

RuntimeSnapshot Snapshot(int routes, bool regex) {
  RuntimeSnapshot snapshot;
  auto listeners = std::make_shared<FormatEntries>();
  (*listeners)["gateway/bench/gw/80"] = RuntimeEntry{
      "gateway.networking.k8s.io/Gateway/bench/gw",
      std::make_shared<const std::string>(
          R"({"entry":"listeners","gateway":{"namespace":"bench","name":"gw"},"address":"",)"
          R"("port":80,"listeners":[{"name":"http","protocol":"HTTP","routeKinds":[)"
          R"({"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]}]})")};
  auto rules = std::make_shared<FormatEntries>();
  for (int i = 0; i < routes; ++i) {
    (*rules)["httproute/bench/r" + std::to_string(i)] =
        RuntimeEntry{"gateway.networking.k8s.io/HTTPRoute/bench/r" + std::to_string(i),
                     std::make_shared<const std::string>(RouteEntry(i, regex))};
  }
  snapshot.formats[PORTICO_FORMAT_LISTENER_SET] = listeners;
  snapshot.formats[PORTICO_FORMAT_ROUTE_RULES] = rules;
  return snapshot;
}

std::string LastPath(int routes, bool regex) {
  return regex ? "/re" + std::to_string(routes - 1) + "/12345"
               : "/r" + std::to_string(routes - 1) + "/some/page";
}

struct Fixture {
  std::shared_ptr<const RouteTable> table;
  std::string path;
};

Fixture& Get(int routes, bool regex) {
  static Fixture fixtures[2][2];
  Fixture& f = fixtures[routes > 1 ? 1 : 0][regex ? 1 : 0];
  if (f.table == nullptr) {
    f.table = RouteTable::Build(Snapshot(routes, regex), nullptr);
    f.path = LastPath(routes, regex);
  }
  return f;
}

void BM_Match(benchmark::State& state) {
  const int routes = static_cast<int>(state.range(0));
  const bool regex = state.range(1) != 0;
  Fixture& f = Get(routes, regex);
  RequestView request{kHost, f.path, "", "GET", nullptr};
  for (auto _ : state) {
    MatchResult m = f.table->Match("", 80, request);
    benchmark::DoNotOptimize(m);
    if (m.outcome != MatchOutcome::kMatched) state.SkipWithError("no match");
  }
  state.SetLabel(std::string(regex ? "regex" : "prefix") + ", match at the end");
}
BENCHMARK(BM_Match)
    ->ArgNames({"routes", "regex"})
    ->Args({1, 0})
    ->Args({10000, 0})
    ->Args({1, 1})
    ->Args({10000, 1});

// PrintMemory builds each table once between mallinfo2 readings and prints heap bytes per route.
void PrintMemory() {
  for (bool regex : {false, true}) {
    constexpr int kRoutes = 10000;
    RuntimeSnapshot snapshot = Snapshot(kRoutes, regex);
    const size_t before = mallinfo2().uordblks;
    std::shared_ptr<const RouteTable> table = RouteTable::Build(snapshot, nullptr);
    std::string path = LastPath(kRoutes, regex);
    RequestView request{kHost, path, "", "GET", nullptr};
    (void)table->Match("", 80, request);  // RE2 builds its DFA on the first match
    const size_t after = mallinfo2().uordblks;
    size_t json = 0;
    for (const auto& [id, entry] : *snapshot.Entries(PORTICO_FORMAT_ROUTE_RULES)) {
      json += entry.json->size();
    }
    std::printf(
        "%s: %d routes, table heap %zu bytes = %.0f bytes/route "
        "(the entry JSON, %.0f bytes/route, is not kept: the data plane keeps route_rules.v1 "
        "compiled)\n",
        regex ? "regex " : "prefix", kRoutes, after - before,
        static_cast<double>(after - before) / kRoutes, static_cast<double>(json) / kRoutes);
    if (!regex) continue;
    // Regexes are built on first use (lazy_regex.h): the same table once every route has
    // matched a request.
    for (int i = 0; i < kRoutes; ++i) {
      std::string each = LastPath(i + 1, regex);
      RequestView r{kHost, each, "", "GET", nullptr};
      (void)table->Match("", 80, r);
    }
    const size_t all = mallinfo2().uordblks;
    std::printf("regex : every route matched once: table heap %zu bytes = %.0f bytes/route\n",
                all - before, static_cast<double>(all - before) / kRoutes);
  }
  // Rebuild cost with 10,000 prefix routes on one hostname: one route changed (its shard, which
  // holds all 10,000, is rebuilt; the other 9,999 compiled routes are reused).
  RuntimeSnapshot snapshot = Snapshot(10000, false);
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const RouteTable> first = RouteTable::Build(snapshot, nullptr);
  auto t1 = std::chrono::steady_clock::now();
  auto rules = std::make_shared<FormatEntries>(*snapshot.Entries(PORTICO_FORMAT_ROUTE_RULES));
  RuntimeEntry& changed = (*rules)["httproute/bench/r5000"];
  changed = RuntimeEntry(changed.owner,
                         std::make_shared<const std::string>(RouteEntry(5000, false) + " "));
  snapshot.formats[PORTICO_FORMAT_ROUTE_RULES] = rules;
  auto t2 = std::chrono::steady_clock::now();
  std::shared_ptr<const RouteTable> second = RouteTable::Build(snapshot, first.get());
  auto t3 = std::chrono::steady_clock::now();
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf(
      "prefix: build of 10000 routes %.1f ms; rebuild after 1 changed route %.1f ms "
      "(%zu routes reused)\n",
      ms(t1 - t0), ms(t3 - t2), second->Stats().routes_reused);
  std::fflush(stdout);
}

}  // namespace
}  // namespace portico::core::routing

int main(int argc, char** argv) {
  portico::core::routing::PrintMemory();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
