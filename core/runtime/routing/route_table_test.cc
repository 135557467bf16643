// route_table_test: RouteTable built from snapshots the real Gateway and HTTPRoute handlers
// produce through GatewayRuntime (views in their processors' shapes, several cases replicating
// the Gateway API conformance tables), plus hand-written route_rules.v1 entries for what the
// handlers cannot produce (an invalid regex).
#include "core/runtime/routing/route_table.h"
#include "core/runtime/routing/builtin_filters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

#include "core/runtime/routing/routing_test_util.h"
#include "portico/sdk/hostname.h"

// Allocation counting for the allocation-free test: every operator new of this binary counts
// when the calling thread has set `t_count_allocations`.
namespace {

thread_local bool t_count_allocations = false;
thread_local size_t t_allocations = 0;
}  // namespace

// Every replaceable non-aligned form is replaced (malloc/free underneath), so that no pair mixes
// ours with the sanitizer's.
namespace {
void* CountedAlloc(size_t size) {
  if (t_count_allocations) ++t_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace

void* operator new(size_t size) {
  void* p = CountedAlloc(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size) {
  void* p = CountedAlloc(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new(size_t size, const std::nothrow_t&) noexcept { return CountedAlloc(size); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return CountedAlloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace portico::core::routing {
namespace {

// Spec is the configuration of a built-in filter of a compiled rule.
const FilterSpec& Spec(const std::shared_ptr<const core::filter::HttpFilter>& filter) {
  static const FilterSpec kNone;
  const FilterSpec* spec = SpecOf(*filter);
  return spec != nullptr ? *spec : kNone;
}

using testing::Delete;
using ::testing::ElementsAre;
using testing::GatewayKey;
using testing::GatewayView;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Listener;
using testing::Parent;
using testing::PathMatch;
using testing::Request;
using testing::RouteKey;
using testing::RouteView;
using testing::Rule;
using testing::Upsert;
using testing::World;

constexpr char kNs[] = "infra";

Request Get(std::string host, std::string path, std::map<std::string, std::string> headers = {},
            std::string query = "") {
  Request r;
  r.host = std::move(host);
  r.path = std::move(path);
  r.headers = std::move(headers);
  r.query = std::move(query);
  return r;
}

Request With(std::string method, std::string path,
             std::map<std::string, std::string> headers = {}) {
  Request r = Get("", std::move(path), std::move(headers));
  r.method = std::move(method);
  return r;
}

// A Gateway "infra/web" with one HTTP listener "http" on port 80 and no hostname.
SyncedChange WebGateway() {
  return Upsert(GatewayKey(kNs, "web"), GatewayView(kNs, "web", {Listener("http", 80)}));
}

// A route on infra/web's "http" listener.
SyncedChange WebRoute(std::string_view name, const std::vector<std::string>& rules,
                      const std::vector<std::string>& hostnames = {},
                      std::string_view created = "2023-11-14T22:13:20Z") {
  return Upsert(RouteKey(kNs, name),
                RouteView(kNs, name, {Parent(kNs, "web", "http", hostnames)}, rules, created));
}

std::string Matches(const std::vector<std::string>& matches) {
  std::string out = "[";
  for (size_t i = 0; i < matches.size(); ++i) out += (i > 0 ? "," : "") + matches[i];
  return out + "]";
}

TEST(RouteTableTest, ListenerIsolationByHostname) {
  // gateway-http-listener-isolation (Gateway API conformance), with and without route hostnames
  // intersecting the listeners'; effective hostnames computed as the HTTPRoute plugin does.
  const std::vector<std::pair<std::string, std::string>> listeners = {
      {"empty-hostname", ""},
      {"wildcard-example-com", "*.example.com"},
      {"wildcard-foo-example-com", "*.foo.example.com"},
      {"abc-foo-example-com", "abc.foo.example.com"}};
  for (bool intersect : {false, true}) {
    SCOPED_TRACE(intersect ? "with route hostnames" : "without route hostnames");
    World world;
    std::vector<std::string> views;
    for (const auto& [name, host] : listeners) views.push_back(Listener(name, 80, host));
    std::vector<SyncedChange> changes = {
        Upsert(GatewayKey(kNs, "iso"), GatewayView(kNs, "iso", views))};
    const std::vector<std::string> route_hosts =
        intersect ? std::vector<std::string>{"bar.com", "*.example.com", "*.foo.example.com",
                                             "abc.foo.example.com"}
                  : std::vector<std::string>{};
    for (const auto& [name, host] : listeners) {
      sdk::hostname::Intersection i = sdk::hostname::IntersectAll(host, route_hosts);
      ASSERT_TRUE(i.matches);
      changes.push_back(Upsert(
          RouteKey(kNs, name),
          RouteView(kNs, name, {Parent(kNs, "iso", name, i.hostnames)},
                    {Rule(0, Matches({PathMatch("PathPrefix", "/" + name)}), "infra/v1:8080")})));
    }
    world.Apply(std::move(changes));
    const std::vector<std::string> hosts = {"bar.com", "bar.example.com", "bar.foo.example.com",
                                            "abc.foo.example.com"};
    for (size_t h = 0; h < hosts.size(); ++h) {
      for (size_t l = 0; l < listeners.size(); ++l) {
        std::string got = world.Route("", 80, Get(hosts[h], "/" + listeners[l].first));
        std::string want = h == l ? "infra/" + listeners[l].first + " 0.0" : "no-route";
        EXPECT_EQ(got, want) << hosts[h] << " /" << listeners[l].first;
      }
    }
    // The listener is chosen by the host alone.
    const RouteTable& table = *world.Routes();
    ASSERT_NE(table.SelectListener("", 80, "x.foo.example.com"), nullptr);
    EXPECT_EQ(table.SelectListener("", 80, "X.Foo.Example.com:80")->hostname, "*.foo.example.com");
    EXPECT_THAT(table.SelectListener("", 80, "other.org")->names,
                ElementsAre("infra/iso/empty-hostname"));
  }
}

TEST(RouteTableTest, ListenerHostnameMatching) {
  // httproute-listener-hostname-matching: exact listeners, wildcards of several labels, and no
  // listener without hostname (-> no listener at all for other hosts).
  World world;
  world.Apply(
      {Upsert(GatewayKey(kNs, "hm"), GatewayView(kNs, "hm",
                                                 {Listener("listener-1", 80, "bar.com"),
                                                  Listener("listener-2", 80, "foo.bar.com"),
                                                  Listener("listener-3", 80, "*.bar.com"),
                                                  Listener("listener-4", 80, "*.foo.com")})),
       Upsert(RouteKey(kNs, "backend-v1"),
              RouteView(kNs, "backend-v1", {Parent(kNs, "hm", "listener-1", {"bar.com"})},
                        {Rule(0, "", "infra/v1:8080")})),
       Upsert(RouteKey(kNs, "backend-v2"),
              RouteView(kNs, "backend-v2", {Parent(kNs, "hm", "listener-2", {"foo.bar.com"})},
                        {Rule(0, "", "infra/v2:8080")})),
       Upsert(RouteKey(kNs, "backend-v3"),
              RouteView(kNs, "backend-v3",
                        {Parent(kNs, "hm", "listener-3", {"*.bar.com"}),
                         Parent(kNs, "hm", "listener-4", {"*.foo.com"})},
                        {Rule(0, "", "infra/v3:8080")}))});
  EXPECT_EQ(world.Backend("", 80, Get("bar.com", "/")), "infra/v1:8080");
  EXPECT_EQ(world.Backend("", 80, Get("foo.bar.com", "/")), "infra/v2:8080");
  EXPECT_EQ(world.Backend("", 80, Get("baz.bar.com", "/")), "infra/v3:8080");
  EXPECT_EQ(world.Backend("", 80, Get("multiple.prefixes.bar.com", "/")), "infra/v3:8080");
  EXPECT_EQ(world.Backend("", 80, Get("multiple.prefixes.foo.com", "/")), "infra/v3:8080");
  EXPECT_EQ(world.Backend("", 80, Get("foo.com", "/")), "no-listener");
  EXPECT_EQ(world.Backend("", 80, Get("no.matching.host", "/")), "no-listener");
}

TEST(RouteTableTest, ExactHostShadowsWildcardOnlyWhenARuleMatches) {
  World world;
  world.Apply(
      {WebGateway(),
       WebRoute("exact", {Rule(0, Matches({PathMatch("PathPrefix", "/a")}), "infra/e:80")},
                {"foo.example.com"}),
       WebRoute("wild", {Rule(0, Matches({PathMatch("PathPrefix", "/")}), "infra/w:80")},
                {"*.example.com"}),
       WebRoute("any", {Rule(0, Matches({PathMatch("PathPrefix", "/")}), "infra/any:80")})});
  EXPECT_EQ(world.Backend("", 80, Get("foo.example.com", "/a/b")), "infra/e:80");
  EXPECT_EQ(world.Backend("", 80, Get("FOO.example.COM:8080", "/a")), "infra/e:80");
  EXPECT_EQ(world.Backend("", 80, Get("foo.example.com", "/b")), "infra/w:80");  // falls through
  EXPECT_EQ(world.Backend("", 80, Get("bar.example.com", "/a")), "infra/w:80");
  EXPECT_EQ(world.Backend("", 80, Get("a.b.example.com", "/a")), "infra/w:80");  // several labels
  EXPECT_EQ(world.Backend("", 80, Get("example.com", "/a")), "infra/any:80");  // not *.example.com
  EXPECT_EQ(world.Backend("", 80, Get("other.org", "/")), "infra/any:80");
  EXPECT_EQ(world.Backend("", 80, Get("", "/")), "infra/any:80");
  EXPECT_EQ(world.Backend("", 80, Get("[::1]:80", "/")), "infra/any:80");
}

TEST(RouteTableTest, PathExactAndSegmentPrefixes) {
  World world;
  // httproute-path-match-order, httproute-exact-path-matching and httproute-matching.
  world.Apply(
      {WebGateway(),
       WebRoute("order",
                {Rule(0, Matches({PathMatch("Exact", "/match")}), "infra/v1:8080"),
                 Rule(1, Matches({PathMatch("Exact", "/match/exact")}), "infra/v2:8080"),
                 Rule(2, Matches({PathMatch("Exact", "/match/exact/one")}), "infra/v3:8080"),
                 Rule(3, Matches({PathMatch("PathPrefix", "/match/")}), "infra/v3:8080"),
                 Rule(4, Matches({PathMatch("PathPrefix", "/match/prefix/")}), "infra/v1:8080"),
                 Rule(5, Matches({PathMatch("PathPrefix", "/match/prefix/one")}), "infra/v2:8080")},
                {"order.example"}),
       WebRoute("exact",
                {Rule(0, Matches({PathMatch("Exact", "/one")}), "infra/v1:8080"),
                 Rule(1, Matches({PathMatch("Exact", "/two")}), "infra/v2:8080")},
                {"exact.example"}),
       WebRoute("matching",
                {Rule(0,
                      Matches({PathMatch("PathPrefix", "/"),
                               R"({"headers":[{"name":"version","value":"one"}]})"}),
                      "infra/v1:8080"),
                 Rule(1,
                      Matches({PathMatch("PathPrefix", "/v2"),
                               R"({"headers":[{"name":"version","value":"two"}]})"}),
                      "infra/v2:8080")},
                {"matching.example"})});
  auto at = [&](const char* host, const char* path, std::map<std::string, std::string> h = {}) {
    return world.Backend("", 80, Get(host, path, std::move(h)));
  };
  EXPECT_EQ(at("order.example", "/match/exact/one"), "infra/v3:8080");
  EXPECT_EQ(at("order.example", "/match/exact"), "infra/v2:8080");
  EXPECT_EQ(at("order.example", "/match"), "infra/v1:8080");
  EXPECT_EQ(at("order.example", "/match/prefix/one/any"), "infra/v2:8080");
  EXPECT_EQ(at("order.example", "/match/prefix/any"), "infra/v1:8080");
  EXPECT_EQ(at("order.example", "/match/any"), "infra/v3:8080");
  EXPECT_EQ(at("order.example", "/match/"), "infra/v3:8080");  // "/match/" covers "/match/"
  EXPECT_EQ(at("order.example", "/matchany"), "no-route");

  EXPECT_EQ(at("exact.example", "/one"), "infra/v1:8080");
  EXPECT_EQ(at("exact.example", "/two"), "infra/v2:8080");
  EXPECT_EQ(at("exact.example", "/"), "no-route");
  EXPECT_EQ(at("exact.example", "/one/example"), "no-route");
  EXPECT_EQ(at("exact.example", "/two/"), "no-route");
  EXPECT_EQ(at("exact.example", "/Two"), "no-route");

  EXPECT_EQ(at("matching.example", "/"), "infra/v1:8080");
  EXPECT_EQ(at("matching.example", "/example"), "infra/v1:8080");
  EXPECT_EQ(at("matching.example", "/", {{"version", "one"}}), "infra/v1:8080");
  EXPECT_EQ(at("matching.example", "/v2"), "infra/v2:8080");
  EXPECT_EQ(at("matching.example", "/v2/example"), "infra/v2:8080");
  EXPECT_EQ(at("matching.example", "/", {{"version", "two"}}), "infra/v2:8080");
  EXPECT_EQ(at("matching.example", "/v2/"), "infra/v2:8080");
  EXPECT_EQ(at("matching.example", "/v2example"), "infra/v1:8080");
  EXPECT_EQ(at("matching.example", "/foo/v2/example"), "infra/v1:8080");
}

TEST(RouteTableTest, RegexPathsFullMatchIndexedByLiteralPrefix) {
  World world;
  world.Apply(
      {WebGateway(),
       WebRoute(
           "re",
           {Rule(0, Matches({PathMatch("RegularExpression", "/items/[0-9]+")}), "infra/num:80"),
            Rule(1, Matches({PathMatch("RegularExpression", "/items/[a-z]+/edit")}),
                 "infra/edit:80"),
            Rule(2, Matches({PathMatch("RegularExpression", "(?i)/case/.*")}), "infra/ci:80"),
            Rule(3, Matches({PathMatch("RegularExpression", "/alt-a|/alt-b")}), "infra/alt:80"),
            Rule(4, Matches({PathMatch("PathPrefix", "/items")}), "infra/prefix:80"),
            Rule(5, Matches({PathMatch("Exact", "/items/42")}), "infra/exact:80")})});
  auto at = [&](const char* path) { return world.Backend("", 80, Get("h", path)); };
  EXPECT_EQ(at("/items/42"), "infra/exact:80");    // Exact before Regex
  EXPECT_EQ(at("/items/43"), "infra/num:80");      // Regex before Prefix
  EXPECT_EQ(at("/items/43x"), "infra/prefix:80");  // a full match, not a partial one
  EXPECT_EQ(at("/items/abc/edit"), "infra/edit:80");
  EXPECT_EQ(at("/items/abc/edit/more"), "infra/prefix:80");
  EXPECT_EQ(at("/CASE/x"), "infra/ci:80");  // no literal prefix: always a candidate
  EXPECT_EQ(at("/alt-b"), "infra/alt:80");
  EXPECT_EQ(at("/other"), "no-route");
}

TEST(RouteTableTest, MethodHeaderAndQueryChecks) {
  World world;
  // httproute-method-matching on one host, httproute-header-matching and
  // httproute-query-param-matching on others.
  std::vector<std::string> method_rules = {
      Rule(0, Matches({R"({"method":"POST"})"}), "infra/v1:8080"),
      Rule(1, Matches({R"({"method":"GET"})"}), "infra/v2:8080"),
      Rule(2, Matches({PathMatch("PathPrefix", "/path1", R"("method":"GET")")}), "infra/v1:8080"),
      Rule(3, Matches({R"({"headers":[{"name":"version","value":"one"}],"method":"PUT"})"}),
           "infra/v2:8080"),
      Rule(4,
           Matches({PathMatch("PathPrefix", "/path2",
                              R"("headers":[{"name":"version","value":"two"}],"method":"POST")")}),
           "infra/v3:8080"),
      Rule(5,
           Matches(
               {PathMatch("PathPrefix", "/path3", R"("method":"PATCH")"),
                PathMatch("PathPrefix", "/path4",
                          R"("headers":[{"name":"version","value":"three"}],"method":"DELETE")")}),
           "infra/v1:8080"),
      Rule(6, Matches({PathMatch("PathPrefix", "/path5")}), "infra/v1:8080"),
      Rule(7, Matches({R"({"method":"PATCH"})"}), "infra/v2:8080"),
      Rule(8, Matches({R"({"headers":[{"name":"version","value":"four"}]})"}), "infra/v3:8080")};
  std::vector<std::string> header_rules = {
      Rule(0, Matches({R"({"headers":[{"name":"version","value":"one"}]})"}), "infra/v1:8080"),
      Rule(1, Matches({R"({"headers":[{"name":"version","value":"two"}]})"}), "infra/v2:8080"),
      Rule(
          2,
          Matches(
              {R"({"headers":[{"name":"version","value":"two"},{"name":"color","value":"orange"}]})"}),
          "infra/v1:8080"),
      Rule(3,
           Matches({R"({"headers":[{"name":"color","value":"blue"}]})",
                    R"({"headers":[{"name":"color","value":"green"}]})"}),
           "infra/v1:8080"),
      Rule(4,
           Matches({R"({"headers":[{"name":"color","value":"red"}]})",
                    R"({"headers":[{"name":"color","value":"yellow"}]})"}),
           "infra/v2:8080"),
      Rule(
          5,
          Matches(
              {R"j({"headers":[{"name":"X-Env","type":"RegularExpression","value":"prod|stag(e|ing)"}]})j"}),
          "infra/env:8080")};
  std::vector<std::string> query_rules = {
      Rule(0, Matches({R"({"queryParams":[{"name":"animal","value":"whale"}]})"}), "infra/v1:8080"),
      Rule(1, Matches({R"({"queryParams":[{"name":"animal","value":"dolphin"}]})"}),
           "infra/v2:8080"),
      Rule(
          2,
          Matches(
              {R"({"queryParams":[{"name":"animal","value":"dolphin"},{"name":"color","value":"blue"}]})",
               R"({"queryParams":[{"name":"ANIMAL","value":"Whale"}]})"}),
          "infra/v3:8080"),
      Rule(3,
           Matches({PathMatch("PathPrefix", "/path1",
                              R"("queryParams":[{"name":"animal","value":"whale"}])")}),
           "infra/v1:8080"),
      Rule(4,
           Matches(
               {R"({"queryParams":[{"name":"id","type":"RegularExpression","value":"[0-9]+"}]})"}),
           "infra/id:8080")};
  world.Apply({WebGateway(), WebRoute("method", method_rules, {"method.example"}),
               WebRoute("header", header_rules, {"header.example"}),
               WebRoute("query", query_rules, {"query.example"})});

  auto method = [&](const char* m, const char* path, std::map<std::string, std::string> h = {}) {
    Request r = With(m, path, std::move(h));
    r.host = "method.example";
    return world.Backend("", 80, r);
  };
  EXPECT_EQ(method("POST", "/"), "infra/v1:8080");
  EXPECT_EQ(method("GET", "/"), "infra/v2:8080");
  EXPECT_EQ(method("HEAD", "/"), "no-route");
  EXPECT_EQ(method("GET", "/path1"), "infra/v1:8080");
  EXPECT_EQ(method("PUT", "/", {{"version", "one"}}), "infra/v2:8080");
  EXPECT_EQ(method("POST", "/path2", {{"version", "two"}}), "infra/v3:8080");
  EXPECT_EQ(method("PATCH", "/path3"), "infra/v1:8080");
  EXPECT_EQ(method("DELETE", "/path4", {{"version", "three"}}), "infra/v1:8080");
  EXPECT_EQ(method("PUT", "/"), "no-route");
  EXPECT_EQ(method("DELETE", "/path4"), "no-route");
  EXPECT_EQ(method("PATCH", "/path5"), "infra/v1:8080");
  EXPECT_EQ(method("PATCH", "/", {{"version", "four"}}), "infra/v2:8080");

  auto header = [&](std::map<std::string, std::string> h) {
    return world.Backend("", 80, Get("header.example", "/", std::move(h)));
  };
  EXPECT_EQ(header({{"version", "one"}}), "infra/v1:8080");
  EXPECT_EQ(header({{"version", "two"}}), "infra/v2:8080");
  EXPECT_EQ(header({{"version", "two"}, {"color", "orange"}}), "infra/v1:8080");
  EXPECT_EQ(header({{"version", "two"}, {"color", "blue"}}), "infra/v2:8080");
  EXPECT_EQ(header({{"color", "orange"}}), "no-route");
  EXPECT_EQ(header({{"some-other-header", "one"}}), "no-route");
  EXPECT_EQ(header({{"color", "blue"}}), "infra/v1:8080");
  EXPECT_EQ(header({{"color", "green"}}), "infra/v1:8080");
  EXPECT_EQ(header({{"color", "red"}}), "infra/v2:8080");
  EXPECT_EQ(header({{"color", "yellow"}}), "infra/v2:8080");
  EXPECT_EQ(header({{"color", "purple"}}), "no-route");
  EXPECT_EQ(header({{"version", "One"}}), "no-route");          // values are case-sensitive
  EXPECT_EQ(header({{"x-env", "staging"}}), "infra/env:8080");  // regex, full match
  EXPECT_EQ(header({{"x-env", "preprod"}}), "no-route");

  auto query = [&](const char* path, const char* q, std::map<std::string, std::string> h = {}) {
    return world.Backend("", 80, Get("query.example", path, std::move(h), q));
  };
  EXPECT_EQ(query("/", "animal=whale"), "infra/v1:8080");
  EXPECT_EQ(query("/", "animal=dolphin"), "infra/v2:8080");
  EXPECT_EQ(query("/", "animal=dolphin&color=blue"), "infra/v3:8080");
  EXPECT_EQ(query("/", "ANIMAL=Whale"), "infra/v3:8080");
  EXPECT_EQ(query("/", "animal=whale&otherparam=irrelevant"), "infra/v1:8080");
  EXPECT_EQ(query("/", "animal=dolphin&color=yellow"), "infra/v2:8080");
  EXPECT_EQ(query("/", "color=blue"), "no-route");
  EXPECT_EQ(query("/", "animal=dog"), "no-route");
  EXPECT_EQ(query("/", "animal=whaledolphin"), "no-route");
  EXPECT_EQ(query("/", ""), "no-route");
  EXPECT_EQ(query("/path1", "animal=whale"), "infra/v1:8080");
  EXPECT_EQ(query("/", "animal=wh%61le"), "infra/v1:8080");        // percent-decoded
  EXPECT_EQ(query("/", "animal=shark&animal=whale"), "no-route");  // the first one decides
  EXPECT_EQ(query("/", "id=123"), "infra/id:8080");
  EXPECT_EQ(query("/", "id=123x"), "no-route");
}

TEST(RouteTableTest, PrecedenceAcrossRoutes) {
  World world;
  // Same path on two routes: the older route wins; at the same age, namespace/name order.
  world.Apply(
      {WebGateway(),
       WebRoute("young", {Rule(0, Matches({PathMatch("PathPrefix", "/p")}), "infra/young:80")}, {},
                "2024-01-01T00:00:00Z"),
       WebRoute("old", {Rule(0, Matches({PathMatch("PathPrefix", "/p")}), "infra/old:80")}, {},
                "2020-01-01T00:00:00Z"),
       WebRoute("b", {Rule(0, Matches({PathMatch("Exact", "/same")}), "infra/b:80")}, {},
                "2022-01-01T00:00:00Z"),
       WebRoute("a", {Rule(0, Matches({PathMatch("Exact", "/same")}), "infra/a:80")}, {},
                "2022-01-01T00:00:00Z"),
       WebRoute("hdr",
                {Rule(0,
                      Matches({PathMatch("PathPrefix", "/p",
                                         R"("headers":[{"name":"x","value":"1"}])")}),
                      "infra/hdr:80")},
                {}, "2025-01-01T00:00:00Z")});
  EXPECT_EQ(world.Backend("", 80, Get("h", "/p/x")), "infra/old:80");
  EXPECT_EQ(world.Backend("", 80, Get("h", "/p/x", {{"x", "1"}})), "infra/hdr:80");  // more headers
  EXPECT_EQ(world.Backend("", 80, Get("h", "/same")), "infra/a:80");
  // Deleting the older route hands its traffic to the younger one.
  world.Apply({Delete(RouteKey(kNs, "old"))});
  EXPECT_EQ(world.Backend("", 80, Get("h", "/p/x")), "infra/young:80");
}

TEST(RouteTableTest, NoListenerAndNoRoute) {
  World world;
  world.Apply({Upsert(GatewayKey(kNs, "web"),
                      GatewayView(kNs, "web", {Listener("http", 80, "a.example.com")})),
               Upsert(RouteKey(kNs, "r"),
                      RouteView(kNs, "r", {Parent(kNs, "web", "http", {"a.example.com"})},
                                {Rule(0, Matches({PathMatch("Exact", "/only")}), "infra/x:80")}))});
  const RouteTable& table = *world.Routes();
  MatchResult r = testing::MatchRequest(table, "", 81, Get("a.example.com", "/only"));
  EXPECT_EQ(r.outcome, MatchOutcome::kNoListener);  // no listener set on that port
  r = testing::MatchRequest(table, "", 80, Get("b.example.com", "/only"));
  EXPECT_EQ(r.outcome, MatchOutcome::kNoListener);  // no listener takes that host
  EXPECT_EQ(r.listener, nullptr);
  r = testing::MatchRequest(table, "", 80, Get("a.example.com", "/other"));
  EXPECT_EQ(r.outcome, MatchOutcome::kNoRoute);
  ASSERT_NE(r.listener, nullptr);
  EXPECT_EQ(r.listener->hostname, "a.example.com");
  EXPECT_THAT(r.listener->names, ElementsAre("infra/web/http"));
  r = testing::MatchRequest(table, "", 80, Get("a.example.com", "/only"));
  EXPECT_EQ(r.outcome, MatchOutcome::kMatched);
  EXPECT_EQ(r.action->route_key, "infra/r");
  EXPECT_EQ(r.listener->port, 80);

  // An empty snapshot: nothing to bind, nothing matches.
  world.Apply({Delete(RouteKey(kNs, "r")), Delete(GatewayKey(kNs, "web"))});
  EXPECT_THAT(world.Routes()->Sockets(), IsEmpty());
  EXPECT_EQ(world.Route("", 80, Get("a.example.com", "/only")), "no-listener");
}

TEST(RouteTableTest, GatewaysOnDifferentAddressesSamePort) {
  World world;
  world.Apply({Upsert(GatewayKey(kNs, "one"),
                      GatewayView(kNs, "one", {Listener("http", 80)}, {"127.0.1.1"})),
               Upsert(GatewayKey(kNs, "two"),
                      GatewayView(kNs, "two", {Listener("http", 80), Listener("alt", 8080)},
                                  {"127.0.1.2", "::1"})),
               Upsert(RouteKey(kNs, "r1"), RouteView(kNs, "r1", {Parent(kNs, "one", "http")},
                                                     {Rule(0, "", "infra/one:80")})),
               Upsert(RouteKey(kNs, "r2"), RouteView(kNs, "r2", {Parent(kNs, "two", "http")},
                                                     {Rule(0, "", "infra/two:80")}))});
  const std::string one = "gateway.networking.k8s.io/Gateway/infra/one";
  const std::string two = "gateway.networking.k8s.io/Gateway/infra/two";
  EXPECT_THAT(world.Routes()->Sockets(),
              ElementsAre(ListenerSocketSpec{"127.0.1.1", 80, "HTTP", {one}},
                          ListenerSocketSpec{"127.0.1.2", 80, "HTTP", {two}},
                          ListenerSocketSpec{"127.0.1.2", 8080, "HTTP", {two}},
                          ListenerSocketSpec{"::1", 80, "HTTP", {two}},
                          ListenerSocketSpec{"::1", 8080, "HTTP", {two}}));
  EXPECT_EQ(world.Backend("127.0.1.1", 80, Get("x", "/")), "infra/one:80");
  EXPECT_EQ(world.Backend("127.0.1.2", 80, Get("x", "/")), "infra/two:80");
  EXPECT_EQ(world.Backend("::1", 80, Get("x", "/")), "infra/two:80");
  EXPECT_EQ(world.Backend("127.0.1.2", 8080, Get("x", "/")), "no-route");  // nothing attached
  EXPECT_EQ(world.Backend("", 80, Get("x", "/")), "no-listener");
}

TEST(RouteTableTest, GatewaysSharingAnAddressAndPortMerge) {
  World world;
  world.Apply(
      {Upsert(GatewayKey(kNs, "one"), GatewayView(kNs, "one", {Listener("http", 80)})),
       Upsert(GatewayKey(kNs, "two"), GatewayView(kNs, "two", {Listener("web", 80)})),
       Upsert(RouteKey(kNs, "r1"),
              RouteView(kNs, "r1", {Parent(kNs, "one", "http")},
                        {Rule(0, Matches({PathMatch("PathPrefix", "/one")}), "infra/one:80")})),
       Upsert(RouteKey(kNs, "r2"),
              RouteView(kNs, "r2", {Parent(kNs, "two", "web")},
                        {Rule(0, Matches({PathMatch("PathPrefix", "/two")}), "infra/two:80")}))});
  const RouteTable& table = *world.Routes();
  ASSERT_EQ(table.Sockets().size(), 1u);
  EXPECT_THAT(table.Sockets()[0].owners,
              ElementsAre("gateway.networking.k8s.io/Gateway/infra/one",
                          "gateway.networking.k8s.io/Gateway/infra/two"));
  EXPECT_EQ(world.Backend("", 80, Get("x", "/one")), "infra/one:80");
  EXPECT_EQ(world.Backend("", 80, Get("x", "/two")), "infra/two:80");
  EXPECT_THAT(table.SelectListener("", 80, "x")->names,
              ElementsAre("infra/one/http", "infra/two/web"));
}

TEST(RouteTableTest, ProtocolConflictOnAPortRefusesTheNewcomer) {
  World world;
  world.Apply(
      {Upsert(GatewayKey(kNs, "plain"), GatewayView(kNs, "plain", {Listener("http", 8443)}))});
  EXPECT_THAT(world.Routes()->Refusals(), IsEmpty());
  // The runtime (without a consumer here) commits both; the table keeps the protocol it served.
  world.Apply({Upsert(GatewayKey(kNs, "tls"),
                      GatewayView(kNs, "tls", {Listener("https", 8443, "", "HTTPS")}))});
  const RouteTable& table = *world.Routes();
  ASSERT_EQ(table.Refusals().size(), 1u);
  EXPECT_EQ(table.Refusals()[0].owner, "gateway.networking.k8s.io/Gateway/infra/tls");
  EXPECT_THAT(table.Refusals()[0].reason, HasSubstr("already used with protocol HTTP"));
  EXPECT_THAT(table.Sockets(),
              ElementsAre(ListenerSocketSpec{
                  "", 8443, "HTTP", {"gateway.networking.k8s.io/Gateway/infra/plain"}}));
}

// TableConsumer is the data plane's use of the table: Prepare builds it and refuses its
// refusals, so the runtime rolls those owners back.
class TableConsumer : public RuntimeConsumer {
 public:
  std::vector<SyncNack> Prepare(const RuntimeSnapshot& next) override {
    prepared_ = RouteTable::Build(next, committed_.get());
    return RefusalNacks(prepared_->Refusals());
  }
  void Commit(std::shared_ptr<const RuntimeSnapshot> snapshot) override { committed_ = prepared_; }
  const RouteTable& committed() const { return *committed_; }

 private:
  std::shared_ptr<const RouteTable> prepared_;
  std::shared_ptr<const RouteTable> committed_;
};

TEST(RouteTableTest, RefusalsBecomeNacksAndTheRuntimeRollsBack) {
  TableConsumer consumer;
  GatewayRuntime runtime(testing::RoutingPlugins(), &consumer);
  ApplyResult r = runtime.Apply(
      {Upsert(GatewayKey(kNs, "plain"), GatewayView(kNs, "plain", {Listener("http", 8443)}))},
      false, 1);
  EXPECT_THAT(r.nacks, IsEmpty());
  r = runtime.Apply({Upsert(GatewayKey(kNs, "tls"),
                            GatewayView(kNs, "tls", {Listener("https", 8443, "", "HTTPS")})),
                     WebRoute("r", {Rule(0, "", "infra/x:80")})},
                    false, 2);
  ASSERT_EQ(r.nacks.size(), 1u);
  EXPECT_EQ(r.nacks[0].key, GatewayKey(kNs, "tls"));
  EXPECT_THAT(r.nacks[0].reason, HasSubstr("already used with protocol HTTP"));
  EXPECT_TRUE(r.committed);  // the route applies
  EXPECT_THAT(consumer.committed().Refusals(), IsEmpty());
  EXPECT_THAT(consumer.committed().Sockets(),
              ElementsAre(ListenerSocketSpec{
                  "", 8443, "HTTP", {"gateway.networking.k8s.io/Gateway/infra/plain"}}));
}

TEST(RouteTableTest, ActionsAreParsedOnce) {
  World world;
  const std::string rule =
      R"({"index":0,"name":"named-rule",
   "matches":[{"path":{"type":"PathPrefix","value":"/v2/"}}],
   "filters":[
     {"type":"RequestHeaderModifier","requestHeaderModifier":{"set":[{"name":"x-a","value":"1"}],
        "add":[{"name":"X-B","value":"2"}],"remove":["x-c"]}},
     {"type":"URLRewrite","urlRewrite":{"hostname":"b.example.com",
        "path":{"type":"ReplacePrefixMatch","replacePrefixMatch":"/"}}},
     {"type":"RequestMirror","requestMirror":{"backendRef":{"name":"mirror","port":80,"group":"",
        "kind":"Service","namespace":"infra","key":"infra/mirror:80"},
        "fraction":{"numerator":1,"denominator":3}}},
     {"type":"ExtensionRef","extensionRef":{"group":"portico.io","kind":"Webhook","name":"auth"},
      "resolved":true}],
   "backendRefs":[
     {"name":"web-v2","port":8080,"key":"infra/web-v2:8080","weight":90,"filters":[
        {"type":"ResponseHeaderModifier","responseHeaderModifier":{"set":[{"name":"x-v","value":"2"}]}},
        {"type":"RequestRedirect","requestRedirect":{"path":{"type":"ReplaceFullPath",
           "replaceFullPath":"/moved"},"statusCode":307}}]},
     {"name":"gone","port":8080,"key":"","weight":10}],
   "timeouts":{"request":"1h2m","backendRequest":"500ms"}})";
  const std::string redirect_rule =
      R"({"index":1,"matches":[{"path":{"type":"Exact","value":"/r"}}],
   "filters":[{"type":"RequestRedirect","requestRedirect":{"scheme":"https",
                 "hostname":"example.org","statusCode":301}}]})";
  world.Apply({WebGateway(), WebRoute("full", {rule, redirect_rule})});
  const RouteTable& table = *world.Routes();
  MatchResult m = testing::MatchRequest(table, "", 80, Get("x", "/v2/a"));
  ASSERT_EQ(m.outcome, MatchOutcome::kMatched);
  const RouteAction& a = *m.action;
  EXPECT_EQ(a.route_key, "infra/full");
  EXPECT_EQ(a.rule_id, "0.0");
  EXPECT_EQ(a.rule_name, "named-rule");
  EXPECT_EQ(a.matched_prefix, "/v2/");
  EXPECT_EQ(a.request_timeout_ms, 3720000);
  EXPECT_EQ(a.backend_request_timeout_ms, 500);
  ASSERT_EQ(a.backends.size(), 2u);
  EXPECT_EQ(a.total_weight, 100u);
  EXPECT_EQ(a.backends[0].key, "infra/web-v2:8080");
  EXPECT_TRUE(a.backends[0].valid());
  EXPECT_FALSE(a.backends[1].valid());
  EXPECT_EQ(a.backends[1].weight, 10u);
  ASSERT_EQ(a.backends[0].filters.size(), 2u);
  EXPECT_EQ(Spec(a.backends[0].filters[0]).kind, FilterKind::kResponseHeaders);
  EXPECT_EQ(Spec(a.backends[0].filters[0]).headers.set,
            (std::vector<std::pair<std::string, std::string>>{{"x-v", "2"}}));
  EXPECT_EQ(Spec(a.backends[0].filters[1]).kind, FilterKind::kRedirect);
  EXPECT_EQ(Spec(a.backends[0].filters[1]).redirect.path_type, "ReplaceFullPath");
  EXPECT_EQ(Spec(a.backends[0].filters[1]).redirect.path_modifier,
            PathModifierType::kReplaceFullPath);
  EXPECT_EQ(Spec(a.backends[0].filters[1]).redirect.path_value, "/moved");
  EXPECT_EQ(Spec(a.backends[0].filters[1]).redirect.status_code, 307);
  ASSERT_EQ(a.filters.size(), 4u);
  EXPECT_EQ(Spec(a.filters[0]).kind, FilterKind::kRequestHeaders);
  EXPECT_EQ(Spec(a.filters[0]).headers.add,
            (std::vector<std::pair<std::string, std::string>>{{"X-B", "2"}}));
  EXPECT_EQ(Spec(a.filters[0]).headers.remove, std::vector<std::string>{"x-c"});
  EXPECT_EQ(Spec(a.filters[1]).kind, FilterKind::kUrlRewrite);
  EXPECT_EQ(Spec(a.filters[1]).rewrite.hostname, "b.example.com");
  EXPECT_EQ(Spec(a.filters[1]).rewrite.path_type, PathModifierType::kReplacePrefixMatch);
  EXPECT_EQ(Spec(a.filters[1]).rewrite.path_value, "/");
  EXPECT_EQ(Spec(a.filters[2]).kind, FilterKind::kMirror);
  EXPECT_EQ(Spec(a.filters[2]).mirror_key, "infra/mirror:80");
  EXPECT_NEAR(Spec(a.filters[2]).mirror_percent, 33.333, 0.01);
  EXPECT_EQ(Spec(a.filters[3]).kind, FilterKind::kBinding);
  EXPECT_EQ(Spec(a.filters[3]).binding, "portico.io/Webhook/infra/auth");

  // PickBackend follows the weights: 90 of 100 values pick the first backend.
  int first = 0;
  for (uint64_t r = 0; r < 100; ++r) first += a.PickBackend(r) == &a.backends[0] ? 1 : 0;
  EXPECT_EQ(first, 90);

  m = testing::MatchRequest(table, "", 80, Get("x", "/r"));
  ASSERT_EQ(m.outcome, MatchOutcome::kMatched);
  // The rule's redirect is the first filter of its chain.
  ASSERT_EQ(m.action->filters.size(), 1u);
  const Redirect& redirect = Spec(m.action->filters[0]).redirect;
  EXPECT_EQ(Spec(m.action->filters[0]).kind, FilterKind::kRedirect);
  EXPECT_EQ(redirect.scheme, "https");
  EXPECT_EQ(redirect.hostname, "example.org");
  EXPECT_EQ(redirect.port, 443);  // the handler fills the scheme's port
  EXPECT_EQ(redirect.status_code, 301);
  EXPECT_TRUE(m.action->backends.empty());
  EXPECT_EQ(m.action->PickBackend(7), nullptr);
}

TEST(RouteTableTest, RebuildsReuseUnchangedRoutesAndShards) {
  World world;
  world.Apply(
      {WebGateway(),
       WebRoute("a",
                {Rule(0, Matches({PathMatch("RegularExpression", "/a/[0-9]+")}), "infra/a:80")},
                {"a.example.com"}),
       WebRoute("b", {Rule(0, Matches({PathMatch("PathPrefix", "/b")}), "infra/b:80")},
                {"b.example.com"})});
  std::shared_ptr<const RouteTable> first = world.Routes();
  EXPECT_EQ(world.Routes(), first);  // the same snapshot: the same table
  EXPECT_EQ(first->Stats().shards, 2u);
  MatchResult a1 = testing::MatchRequest(*first, "", 80, Get("a.example.com", "/a/1"));
  ASSERT_EQ(a1.outcome, MatchOutcome::kMatched);

  world.Apply({WebRoute("b", {Rule(0, Matches({PathMatch("PathPrefix", "/b2")}), "infra/b:80")},
                        {"b.example.com"})});
  std::shared_ptr<const RouteTable> second = world.Routes();
  ASSERT_NE(second, first);
  EXPECT_EQ(second->Stats().routes_reused, 1u);
  EXPECT_EQ(second->Stats().shards_reused, 1u);
  MatchResult a2 = testing::MatchRequest(*second, "", 80, Get("a.example.com", "/a/1"));
  EXPECT_EQ(a2.action, a1.action);  // the same compiled rule, shared
  EXPECT_EQ(world.Backend("", 80, Get("b.example.com", "/b")), "no-route");
  EXPECT_EQ(world.Backend("", 80, Get("b.example.com", "/b2/x")), "infra/b:80");

  // The old table still answers as before for requests that pinned it.
  EXPECT_EQ(testing::Describe(testing::MatchRequest(*first, "", 80, Get("b.example.com", "/b"))),
            "infra/b 0.0");

  // A listener change keeps shards whose routes did not change.
  world.Apply({Upsert(GatewayKey(kNs, "web"),
                      GatewayView(kNs, "web", {Listener("http", 80), Listener("extra", 81)}))});
  EXPECT_EQ(world.Routes()->Stats().shards_reused, 2u);
  EXPECT_EQ(world.Routes()->Stats().routes_reused, 2u);
}

TEST(RouteTableTest, EntriesWithoutJsonAreRecognisedByDigest) {
  // The data plane keeps route_rules.v1 compiled, so unchanged entries reach it without JSON.
  World world;
  world.Apply({WebGateway(),
               WebRoute("a", {Rule(0, Matches({PathMatch("PathPrefix", "/a")}), "infra/a:80")}),
               WebRoute("b", {Rule(0, Matches({PathMatch("PathPrefix", "/b")}), "infra/b:80")})});
  std::shared_ptr<const RouteTable> first = world.Routes();
  RuntimeSnapshot dropped = *world.runtime().Current();
  auto entries = std::make_shared<FormatEntries>();
  for (const auto& [id, entry] : *dropped.Entries(PORTICO_FORMAT_ROUTE_RULES)) {
    RuntimeEntry& copy = (*entries)[id] = entry;
    copy.json = nullptr;
  }
  dropped.formats[PORTICO_FORMAT_ROUTE_RULES] = entries;

  std::shared_ptr<const RouteTable> second = RouteTable::Build(dropped, first.get());
  EXPECT_THAT(second->Refusals(), IsEmpty());
  EXPECT_EQ(second->Stats().routes_reused, 2u);
  EXPECT_EQ(testing::Describe(testing::MatchRequest(*second, "", 80, Get("x", "/b/1"))),
            "infra/b 0.0");

  // A digest no compiled route has cannot be served without its JSON: the owner is refused.
  RuntimeEntry& a = (*entries)["httproute/infra/a"];
  a.digest = Sha256Digest128("something else");
  std::shared_ptr<const RouteTable> third = RouteTable::Build(dropped, first.get());
  ASSERT_EQ(third->Refusals().size(), 1u);
  EXPECT_EQ(third->Refusals()[0].owner, "gateway.networking.k8s.io/HTTPRoute/infra/a");
  EXPECT_THAT(third->Refusals()[0].reason, HasSubstr("route_rules.v1 httproute/infra/a: its JSON"));
  // Without a previous table nothing is compiled to reuse: both are refused.
  EXPECT_EQ(RouteTable::Build(dropped, nullptr)->Refusals().size(), 2u);
}

TEST(RouteTableTest, RouteKindsOfTheListenerAreEnforced) {
  World world;
  std::string view = GatewayView(kNs, "web", {Listener("http", 80)});
  // A listener that supports no route kind.
  size_t at = view.find(R"("routeKinds":[)");
  ASSERT_NE(at, std::string::npos);
  view.replace(at, view.find(']', at) - at + 1, R"("routeKinds":[])");
  world.Apply({Upsert(GatewayKey(kNs, "web"), view), WebRoute("r", {Rule(0, "", "infra/x:80")})});
  EXPECT_EQ(world.Route("", 80, Get("x", "/")), "no-route");
}

TEST(RouteTableTest, CorsFiltersAreParsedOnce) {
  World world;
  const std::string listed =
      R"({"index":0,"matches":[{"path":{"type":"PathPrefix","value":"/cors-1"}}],
   "filters":[{"type":"CORS","cors":{"allowOrigins":["https://www.foo.com","HTTPS://*.Bar.com:8443"],
     "allowMethods":["GET","OPTIONS"],"allowHeaders":["x-header-1","x-header-2"],
     "exposeHeaders":["x-header-3","*"],"allowCredentials":true,"maxAge":3600}}],
   "backendRefs":[{"name":"web","port":80,"key":"infra/web:80","weight":1,
     "filters":[{"type":"CORS","cors":{"allowOrigins":["*"],"allowMethods":["*"]}}]}]})";
  const std::string defaults =
      R"({"index":1,"matches":[{"path":{"type":"PathPrefix","value":"/cors-2"}}],
   "filters":[{"type":"CORS","cors":{}}]})";
  world.Apply({WebGateway(), WebRoute("cors", {listed, defaults})});
  const RouteTable& table = *world.Routes();
  MatchResult m = testing::MatchRequest(table, "", 80, Get("x", "/cors-1"));
  ASSERT_EQ(m.outcome, MatchOutcome::kMatched);
  ASSERT_EQ(m.action->filters.size(), 1u);
  EXPECT_EQ(m.action->filters[0]->name(), "CORS");
  const FilterSpec& spec = Spec(m.action->filters[0]);
  EXPECT_EQ(spec.kind, FilterKind::kCors);
  ASSERT_NE(spec.cors, nullptr);
  const CorsPolicy& cors = *spec.cors;
  EXPECT_FALSE(cors.any_origin);
  ASSERT_EQ(cors.origins.size(), 2u);
  EXPECT_EQ(cors.origins[0].scheme, "https");
  EXPECT_EQ(cors.origins[0].host, "www.foo.com");
  EXPECT_EQ(cors.origins[0].port, 443u);
  EXPECT_EQ(cors.origins[1].host, "*.bar.com");  // lower case, as origins compare
  EXPECT_EQ(cors.origins[1].port, 8443u);
  EXPECT_TRUE(cors.allow_credentials);
  EXPECT_FALSE(cors.any_method);
  EXPECT_EQ(cors.allow_methods, "GET, OPTIONS");
  EXPECT_FALSE(cors.any_header);
  EXPECT_EQ(cors.allow_headers, "x-header-1, x-header-2");
  EXPECT_TRUE(cors.expose_any);
  EXPECT_EQ(cors.expose_headers, "x-header-3, *");
  EXPECT_EQ(cors.expose_named, "x-header-3");
  EXPECT_EQ(cors.max_age, "3600");
  // A backend-level CORS filter.
  ASSERT_EQ(m.action->backends.size(), 1u);
  ASSERT_EQ(m.action->backends[0].filters.size(), 1u);
  const FilterSpec& backend = Spec(m.action->backends[0].filters[0]);
  ASSERT_EQ(backend.kind, FilterKind::kCors);
  EXPECT_TRUE(backend.cors->any_origin);
  EXPECT_TRUE(backend.cors->origins.empty());
  EXPECT_TRUE(backend.cors->any_method);
  EXPECT_EQ(backend.cors->allow_methods, "*");
  EXPECT_FALSE(backend.cors->allow_credentials);

  // Nothing configured: no origin is allowed; Access-Control-Max-Age defaults to 5 seconds.
  m = testing::MatchRequest(table, "", 80, Get("x", "/cors-2"));
  ASSERT_EQ(m.outcome, MatchOutcome::kMatched);
  ASSERT_EQ(m.action->filters.size(), 1u);
  const CorsPolicy& empty = *Spec(m.action->filters[0]).cors;
  EXPECT_FALSE(empty.any_origin);
  EXPECT_TRUE(empty.origins.empty());
  EXPECT_EQ(empty.allow_methods, "");
  EXPECT_EQ(empty.max_age, "5");
}

TEST(RouteTableTest, AnEntryThatDoesNotCompileIsRefused) {
  // Hand-written snapshot: the handler passes regexes through; RE2 rejects this one.
  RuntimeSnapshot snapshot;
  auto listeners = std::make_shared<FormatEntries>();
  // A listener without routeKinds accepts any route kind.
  (*listeners)["gateway/infra/web/80"].owner = "gateway.networking.k8s.io/Gateway/infra/web";
  (*listeners)["gateway/infra/web/80"].json = std::make_shared<const std::string>(
      R"({"entry":"listeners","gateway":{"namespace":"infra","name":"web"},"address":"",)"
      R"("port":80,"listeners":[{"name":"http","protocol":"HTTP"}]})");
  auto rule = [](const char* path_type, const char* value) {
    return std::string(R"({"id":"0.0","precedence":"p","match":{"path":{"type":")") + path_type +
           R"(","value":")" + value +
           R"("},"headers":[],"query":[]},"action":{"backends":[{"key":"infra/x:80","weight":1,)"
           R"("filters":[]}],"redirect":null,"filters":[],)"
           R"("timeouts":{"requestMs":0,"backendRequestMs":0}}})";
  };
  auto route = [&](const char* name, const std::string& r) {
    return std::string(R"({"route":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute",)") +
           R"("namespace":"infra","name":")" + name +
           R"("},"parents":[{"gateway":{"namespace":"infra","name":"web"},"listener":"http",)"
           R"("hostnames":[]}],"rules":[)" +
           r + "]}";
  };
  auto routes = std::make_shared<FormatEntries>();
  (*routes)["httproute/infra/bad"] =
      RuntimeEntry{"gateway.networking.k8s.io/HTTPRoute/infra/bad",
                   std::make_shared<const std::string>(route("bad", rule("Regex", "/a(")))};
  (*routes)["httproute/infra/good"] =
      RuntimeEntry{"gateway.networking.k8s.io/HTTPRoute/infra/good",
                   std::make_shared<const std::string>(route("good", rule("Prefix", "/")))};
  snapshot.formats[PORTICO_FORMAT_LISTENER_SET] = listeners;
  snapshot.formats[PORTICO_FORMAT_ROUTE_RULES] = routes;
  std::shared_ptr<const RouteTable> table = RouteTable::Build(snapshot, nullptr);
  ASSERT_EQ(table->Refusals().size(), 1u);
  EXPECT_EQ(table->Refusals()[0].owner, "gateway.networking.k8s.io/HTTPRoute/infra/bad");
  EXPECT_THAT(table->Refusals()[0].reason, HasSubstr("does not compile"));
  EXPECT_EQ(testing::Describe(testing::MatchRequest(*table, "", 80, Get("x", "/a("))),
            "infra/good 0.0");

  // A CORS filter whose origin is not scheme://host[:port], or whose maxAge is not positive.
  for (const char* cors : {R"({"builtin":"cors","allowOrigins":["www.foo.com"]})",
                           R"({"builtin":"cors","allowOrigins":["*"],"maxAge":0})",
                           R"({"builtin":"cors","allowCredentials":"yes"})"}) {
    std::string bad = rule("Prefix", "/");
    const std::string empty = R"("filters":[],"timeouts")";
    bad.replace(bad.find(empty), empty.size(),
                std::string(R"("filters":[)") + cors + R"(],"timeouts")");
    auto entries = std::make_shared<FormatEntries>(*routes);  // the built table keeps `routes`
    (*entries)["httproute/infra/bad"].json = std::make_shared<const std::string>(route("bad", bad));
    snapshot.formats[PORTICO_FORMAT_ROUTE_RULES] = entries;
    table = RouteTable::Build(snapshot, nullptr);
    ASSERT_EQ(table->Refusals().size(), 1u) << cors;
    EXPECT_EQ(table->Refusals()[0].owner, "gateway.networking.k8s.io/HTTPRoute/infra/bad");
    EXPECT_THAT(table->Refusals()[0].reason,
                ::testing::AnyOf(HasSubstr("allowOrigins[0]: \"www.foo.com\" is not an origin"),
                                 HasSubstr("maxAge: must be 1-2147483647 seconds"),
                                 HasSubstr("allowCredentials: must be a boolean")))
        << cors;
  }
}

TEST(RouteTableTest, MatchIsAllocationFreeAndSafeFromManyThreads) {
  World world;
  std::vector<std::string> rules;
  for (int i = 0; i < 50; ++i) {
    rules.push_back(
        Rule(i, Matches({PathMatch("PathPrefix", "/p" + std::to_string(i))}), "infra/p:80"));
  }
  rules.push_back(
      Rule(50, Matches({PathMatch("RegularExpression", "/re/[a-z]+/[0-9]+")}), "infra/re:80"));
  rules.push_back(Rule(
      51,
      Matches(
          {R"({"headers":[{"name":"x-v","value":"1"}],"queryParams":[{"name":"q","value":"a b"}]})"}),
      "infra/hq:80"));
  world.Apply({WebGateway(), WebRoute("many", rules, {"*.example.com"})});
  std::shared_ptr<const RouteTable> table = world.Routes();
  const std::vector<std::pair<Request, std::string>> cases = {
      {Get("a.example.com", "/p7/x"), "infra/p:80"},
      {Get("A.EXAMPLE.COM:80", "/re/abc/12"), "infra/re:80"},
      {Get("a.example.com", "/z", {{"x-v", "1"}}, "q=a%20b"), "infra/hq:80"},
      {Get("a.example.com", "/none"), "no-route"},
      {Get("example.org", "/p7"), "no-route"}};
  auto check = [&](const Request& r) {
    MatchResult m = testing::MatchRequest(*table, "", 80, r);
    return m.outcome == MatchOutcome::kMatched ? m.action->backends[0].key : testing::Describe(m);
  };
  for (const auto& [request, want] : cases) EXPECT_EQ(check(request), want) << request.path;

  // After one warm-up match (RE2 builds its DFA lazily), Match allocates nothing. (The counter
  // itself works: it sees this allocation.)
  t_allocations = 0;
  t_count_allocations = true;
  auto probe = std::make_unique<int>(1);
  t_count_allocations = false;
  ASSERT_EQ(t_allocations, 1u);
  struct FixedHeaders : HeaderSource {
    std::optional<std::string_view> Get(std::string_view name) const override {
      if (name == "x-v") return std::string_view("1");
      return std::nullopt;
    }
  } fixed;
  for (const auto& [request, want] : cases) {
    RequestView view{request.host, request.path, request.query, request.method, &fixed};
    (void)table->Match("", 80, view);  // warm-up
    t_allocations = 0;
    t_count_allocations = true;
    MatchResult m = table->Match("", 80, view);
    t_count_allocations = false;
    EXPECT_EQ(t_allocations, 0u) << request.path;
    (void)m;
  }

  // Many threads at once, each checking every answer.
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int n = 0; n < 2000; ++n) {
        const auto& [request, want] = cases[static_cast<size_t>(n) % cases.size()];
        if (check(request) != want) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace portico::core::routing
