// stage_test: the HTTPRoute's handler in the SDK's fake host: synced views (hand-written in the
// shape process.cc writes, and produced by the processor) become route_rules.v1 entries; the
// precedence keys sort rules in the Gateway API's matching precedence; deletes clear; views the
// handler cannot translate are nacked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>

#include "portico/sdk/testing/fake_host.h"

namespace portico::plugins::httproute {
namespace {

using sdk::ObjectRef;
using sdk::testing::FakeChange;
using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;
using sdk::testing::StageOutcome;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kGroup[] = "gateway.networking.k8s.io";
constexpr char kFormat[] = "route_rules.v1";

// A view with every field the handler maps (process.cc's shape: normalised, resolved, rule
// indexes with a gap where a rule was dropped).
constexpr char kFullView[] = R"({
 "metadata":{"name":"web","namespace":"infra","generation":3,
             "creationTimestamp":"2023-11-14T22:13:20Z"},
 "hostnames":["foo.example.com"],
 "parents":[{"gateway":{"namespace":"infra","name":"web"},"listener":"http",
             "hostnames":["foo.example.com"]},
            {"gateway":{"namespace":"infra","name":"web"},"listener":"https","hostnames":[]}],
 "rules":[
  {"index":0,"name":"named-rule",
   "matches":[{"path":{"type":"PathPrefix","value":"/v2"},"method":"GET",
     "headers":[{"name":"Version","type":"Exact","value":"two"},
                {"name":"version","type":"Exact","value":"ignored: same name"},
                {"name":"X-Env","type":"RegularExpression","value":"prod|stage"}],
     "queryParams":[{"name":"animal","type":"RegularExpression","value":"wh.*"},
                    {"name":"Animal","type":"Exact","value":"kept: names are case-sensitive"},
                    {"name":"animal","type":"Exact","value":"ignored"}]}],
   "filters":[
     {"type":"RequestHeaderModifier","requestHeaderModifier":{"set":[{"name":"x-a","value":"1"}],
        "add":[{"name":"X-B","value":"2"}],"remove":["x-c"]}},
     {"type":"URLRewrite","urlRewrite":{"hostname":"b.example.com",
        "path":{"type":"ReplacePrefixMatch","replacePrefixMatch":"/"}}},
     {"type":"RequestMirror","requestMirror":{"backendRef":{"name":"mirror","port":80,"group":"",
        "kind":"Service","namespace":"infra","key":"infra/mirror:80"},
        "fraction":{"numerator":1,"denominator":4}}},
     {"type":"ExtensionRef","extensionRef":{"group":"portico.io","kind":"Webhook","name":"auth"},
      "resolved":true}],
   "backendRefs":[
     {"name":"web-v2","port":8080,"group":"","kind":"Service","namespace":"infra","weight":90,
      "key":"infra/web-v2:8080","filters":[
        {"type":"ResponseHeaderModifier","responseHeaderModifier":{"set":[{"name":"x-v",
           "value":"2"}]}},
        {"type":"RequestMirror","requestMirror":{"backendRef":{"name":"gone","port":80,
           "group":"","kind":"Service","namespace":"infra","key":""},"percent":5}}]},
     {"name":"gone","port":8080,"group":"","kind":"Service","namespace":"infra","weight":10,
      "key":"","invalid":{"reason":"BackendNotFound","message":"does not exist"}}],
   "timeouts":{"request":"1h2m","backendRequest":"500ms"}},
  {"index":1,
   "matches":[{"path":{"type":"Exact","value":"/exact"}},
              {"path":{"type":"RegularExpression","value":"/items/[0-9]+"},"method":"POST"}],
   "backendRefs":[{"name":"web","port":80,"group":"","kind":"Service","namespace":"infra",
      "weight":1,"key":"infra/web:80","filters":[{"type":"RequestRedirect","requestRedirect":{
        "path":{"type":"ReplaceFullPath","replaceFullPath":"/moved"},"statusCode":302}}]}],
   "timeouts":{"request":"0s"}},
  {"index":3,
   "filters":[{"type":"ResponseHeaderModifier","responseHeaderModifier":{"remove":["server"]}},
              {"type":"RequestRedirect","requestRedirect":{"scheme":"https",
                 "hostname":"example.org","statusCode":301}}]}]})";

// The entry kFullView becomes.
constexpr char kFullEntry[] =
    R"({"route":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","namespace":"infra",)"
    R"("name":"web"},)"
    R"("parents":[{"gateway":{"namespace":"infra","name":"web"},"listener":"http",)"
    R"("hostnames":["foo.example.com"]},)"
    R"({"gateway":{"namespace":"infra","name":"web"},"listener":"https","hostnames":[]}],)"
    R"("rules":[)"
    // rule 0, match 0
    R"({"id":"0.0","name":"named-rule",)"
    R"("precedence":"p:2:9996/m:0/h:97/q:97/t:01700000000000/n:infra/web /r:0000.0000",)"
    R"("match":{"path":{"type":"Prefix","value":"/v2"},"method":"GET",)"
    R"("headers":[{"name":"version","type":"Exact","value":"two"},)"
    R"({"name":"x-env","type":"Regex","value":"prod|stage"}],)"
    R"("query":[{"name":"animal","type":"Regex","value":"wh.*"},)"
    R"({"name":"Animal","type":"Exact","value":"kept: names are case-sensitive"}]},)"
    R"("action":{"backends":[)"
    R"({"key":"infra/web-v2:8080","weight":90,"filters":[)"
    R"({"builtin":"responseHeaders","set":[{"name":"x-v","value":"2"}],"add":[],"remove":[]},)"
    R"({"builtin":"mirror","key":"","percent":5}]},)"
    R"({"key":"","weight":10,"filters":[]}],)"
    R"("redirect":null,)"
    R"("filters":[)"
    R"({"builtin":"requestHeaders","set":[{"name":"x-a","value":"1"}],)"
    R"("add":[{"name":"X-B","value":"2"}],"remove":["x-c"]},)"
    R"({"builtin":"urlRewrite","hostname":"b.example.com",)"
    R"("path":{"type":"ReplacePrefixMatch","value":"/"}},)"
    R"({"builtin":"mirror","key":"infra/mirror:80","percent":25},)"
    R"({"binding":"portico.io/Webhook/infra/auth"}],)"
    R"("timeouts":{"requestMs":3720000,"backendRequestMs":500}}},)"
    // rule 1, match 0
    R"({"id":"1.0",)"
    R"("precedence":"p:0:9993/m:1/h:99/q:99/t:01700000000000/n:infra/web /r:0001.0000",)"
    R"("match":{"path":{"type":"Exact","value":"/exact"},"headers":[],"query":[]},)"
    R"("action":{"backends":[{"key":"infra/web:80","weight":1,"filters":[)"
    R"({"builtin":"redirect","path":{"type":"ReplaceFullPath","value":"/moved"},)"
    R"("statusCode":302}]}],"redirect":null,"filters":[],)"
    R"("timeouts":{"requestMs":0,"backendRequestMs":0}}},)"
    // rule 1, match 1
    R"({"id":"1.1",)"
    R"("precedence":"p:1:9986/m:0/h:99/q:99/t:01700000000000/n:infra/web /r:0001.0001",)"
    R"("match":{"path":{"type":"Regex","value":"/items/[0-9]+"},"method":"POST",)"
    R"("headers":[],"query":[]},)"
    R"("action":{"backends":[{"key":"infra/web:80","weight":1,"filters":[)"
    R"({"builtin":"redirect","path":{"type":"ReplaceFullPath","value":"/moved"},)"
    R"("statusCode":302}]}],"redirect":null,"filters":[],)"
    R"("timeouts":{"requestMs":0,"backendRequestMs":0}}},)"
    // rule 3 (rule 2 was dropped by the controller): no matches, a redirect.
    R"({"id":"3.0",)"
    R"("precedence":"p:2:9998/m:1/h:99/q:99/t:01700000000000/n:infra/web /r:0003.0000",)"
    R"("match":{"path":{"type":"Prefix","value":"/"},"headers":[],"query":[]},)"
    R"("action":{"backends":[],)"
    R"("redirect":{"scheme":"https","hostname":"example.org","port":443,"statusCode":301},)"
    R"("filters":[{"builtin":"responseHeaders","set":[],"add":[],"remove":["server"]}],)"
    R"("timeouts":{"requestMs":0,"backendRequestMs":0}}}]})";

// Conformance base objects and routes (kubernetes-sigs/gateway-api, Apache-2.0).
constexpr char kGatewayClass[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",
  "metadata":{"name":"portico"},"spec":{"controllerName":"portico.io/gateway-controller"}})";
constexpr char kSameNamespace[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"same-namespace","namespace":"gateway-conformance-infra"},
  "spec":{"gatewayClassName":"portico","listeners":[{"name":"http","port":80,"protocol":"HTTP",
    "allowedRoutes":{"namespaces":{"from":"Same"}}}]}})";
constexpr char kInfraBackendV1[] =
    R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"infra-backend-v1",
  "namespace":"gateway-conformance-infra"},"spec":{"selector":{"app":"infra-backend-v1"},
  "ports":[{"protocol":"TCP","port":8080,"targetPort":3000}]}})";
// HTTPRouteSimpleSameNamespace.
constexpr char kSimpleRoute[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",
  "metadata":{"name":"gateway-conformance-infra-test","namespace":"gateway-conformance-infra"},
  "spec":{"parentRefs":[{"name":"same-namespace"}],"rules":[{"backendRefs":[{)"
                                R"("name":"infra-backend-v1","port":8080}]}]}})";
// HTTPRouteRedirectPortAndScheme, HTTPRouteWeight, HTTPRouteTimeoutRequest (condensed).
constexpr char kMixedRoute[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",
  "metadata":{"name":"mixed","namespace":"gateway-conformance-infra"},
  "spec":{"parentRefs":[{"name":"same-namespace"}],"rules":[
    {"matches":[{"path":{"type":"PathPrefix","value":"/scheme-nil-and-port-nil"}}],
     "filters":[{"type":"RequestRedirect","requestRedirect":{"hostname":"example.org"}}]},
    {"matches":[{"path":{"type":"PathPrefix","value":"/scheme-https-and-port-8443"}}],
     "filters":[{"type":"RequestRedirect","requestRedirect":{"scheme":"https","port":8443,
       "hostname":"example.org"}}]},
    {"matches":[{"path":{"type":"PathPrefix","value":"/weights"}}],"backendRefs":[
       {"name":"infra-backend-v1","port":8080,"weight":70},
       {"name":"missing","port":8080,"weight":0}]},
    {"matches":[{"path":{"type":"PathPrefix","value":"/request-timeout"}}],
     "backendRefs":[{"name":"infra-backend-v1","port":8080}],"timeouts":{"request":"500ms"}}]}})";

// RouteView is a synced view of route ns/name attached to infra/web's listener "http", with the
// given creationTimestamp ("" for none) and rules.
std::string RouteView(std::string_view ns, std::string_view name, std::string_view created,
                      std::string_view rules) {
  std::string metadata = R"({"name":")" + std::string(name) + R"(","namespace":")" +
                         std::string(ns) + R"(","generation":1)";
  if (!created.empty()) metadata += R"(,"creationTimestamp":")" + std::string(created) + "\"";
  return R"({"metadata":)" + metadata +
         R"(},"hostnames":[],"parents":[{"gateway":{"namespace":"infra","name":"web"},)"
         R"("listener":"http","hostnames":[]}],"rules":)" +
         std::string(rules) + "}";
}

class httproute_stage : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path :
         {PLUGIN_PATH, GATEWAY_PLUGIN_PATH, SERVICE_PLUGIN_PATH, REFERENCEGRANT_PLUGIN_PATH,
          WEBHOOK_PLUGIN_PATH, NAMESPACE_PLUGIN_PATH, SECRET_PLUGIN_PATH}) {
      ASSERT_TRUE(host_.Load(path).ok()) << path;
    }
  }
  StageOutcome Stage(std::vector<FakeChange> changes) {
    return host_.Stage(kGroup, "HTTPRoute", changes);
  }
  static ObjectRef Ref(std::string ns, std::string name) {
    return {kGroup, "HTTPRoute", std::move(ns), std::move(name)};
  }
  // Synced processes a route (after the conformance base) and returns its synced view.
  std::string Synced(const std::string& route) {
    for (const char* object : {kGatewayClass, kSameNamespace, kInfraBackendV1}) {
      ProcessOutcome out = host_.Apply(object);
      EXPECT_TRUE(out.ok()) << out.status;
    }
    ProcessOutcome out = host_.Process(kGroup, "HTTPRoute", route);
    EXPECT_TRUE(out.ok()) << out.status;
    EXPECT_TRUE(out.synced.has_value()) << out.status_json.value_or("");
    return out.synced.value_or("");
  }
  FakeHost host_;
};

TEST_F(httproute_stage, RegistersAHandler) {
  const auto* kind = host_.FindKind(kGroup, "HTTPRoute");
  ASSERT_NE(kind, nullptr);
  EXPECT_NE(kind->stage, nullptr);
  EXPECT_NE(kind->capabilities & PORTICO_CAP_HANDLER, 0u);
}

TEST_F(httproute_stage, EveryFieldIsMapped) {
  StageOutcome out = Stage({FakeChange::Upsert(Ref("infra", "web"), kFullView)});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(out.nacks, IsEmpty());
  ASSERT_EQ(out.puts.size(), 1u);
  const auto& entry = out.puts.at({kFormat, "httproute/infra/web"});
  EXPECT_EQ(entry.owner, "gateway.networking.k8s.io/HTTPRoute/infra/web");
  EXPECT_EQ(entry.json, kFullEntry);
}

TEST_F(httproute_stage, ProcessedRoutesStage) {
  ObjectRef simple = Ref("gateway-conformance-infra", "gateway-conformance-infra-test");
  StageOutcome out = Stage({FakeChange::Upsert(simple, Synced(kSimpleRoute))});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(out.nacks, IsEmpty());
  EXPECT_EQ(
      out.puts.at({kFormat, "httproute/gateway-conformance-infra/gateway-conformance-infra-test"})
          .json,
      R"({"route":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute",)"
      R"("namespace":"gateway-conformance-infra","name":"gateway-conformance-infra-test"},)"
      R"("parents":[{"gateway":{"namespace":"gateway-conformance-infra",)"
      R"("name":"same-namespace"},"listener":"http","hostnames":[]}],)"
      R"("rules":[{"id":"0.0","precedence":"p:2:9998/m:1/h:99/q:99/t:99999999999999/)"
      R"(n:gateway-conformance-infra/gateway-conformance-infra-test /r:0000.0000",)"
      R"("match":{"path":{"type":"Prefix","value":"/"},"headers":[],"query":[]},)"
      R"("action":{"backends":[{"key":"gateway-conformance-infra/infra-backend-v1:8080",)"
      R"("weight":1,"filters":[]}],"redirect":null,"filters":[],)"
      R"("timeouts":{"requestMs":0,"backendRequestMs":0}}}]})");

  out = Stage({FakeChange::Upsert(Ref("gateway-conformance-infra", "mixed"), Synced(kMixedRoute))});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(out.nacks, IsEmpty());
  const std::string& json =
      out.puts.at({kFormat, "httproute/gateway-conformance-infra/mixed"}).json;
  // Redirect defaults: statusCode 302 from normalisation; no scheme, no port (the listener's).
  EXPECT_THAT(json, HasSubstr(R"("redirect":{"hostname":"example.org","statusCode":302})"));
  EXPECT_THAT(json, HasSubstr(R"("redirect":{"scheme":"https","hostname":"example.org",)"
                              R"("port":8443,"statusCode":302})"));
  // Weights are kept, a missing Service is an unresolvable key.
  EXPECT_THAT(json, HasSubstr(R"("backends":[{"key":"gateway-conformance-infra/)"
                              R"(infra-backend-v1:8080","weight":70,"filters":[]},)"
                              R"({"key":"","weight":0,"filters":[]}])"));
  EXPECT_THAT(json, HasSubstr(R"("timeouts":{"requestMs":500,"backendRequestMs":0})"));
  EXPECT_THAT(out.puts, ::testing::SizeIs(2));
}

TEST_F(httproute_stage, PrecedenceKeysSortRulesInGatewayApiOrder) {
  // Rules of six routes on one listener; expected: the Gateway API's matching precedence, with
  // regex paths between Exact and PathPrefix (implementation-specific).
  const std::vector<std::pair<ObjectRef, std::string>> routes = {
      {Ref("default", "alpha"), RouteView("default", "alpha", "2021-01-01T00:00:00Z", R"([
         {"index":0,"matches":[{"path":{"type":"Exact","value":"/p"},"method":"GET"},
           {"path":{"type":"Exact","value":"/p"},"headers":[{"name":"a","value":"1"},
              {"name":"b","value":"1"}]}]},
         {"index":1,"matches":[{"path":{"type":"Exact","value":"/p"},
              "headers":[{"name":"a","value":"1"}],"queryParams":[{"name":"x","value":"1"},
              {"name":"y","value":"1"},{"name":"z","value":"1"}]},
           {"path":{"type":"Exact","value":"/p"}}]},
         {"index":2,"matches":[{"path":{"type":"Exact","value":"/p"}},
           {"path":{"type":"RegularExpression","value":"/p/[a-z]+/longer"}}]},
         {"index":3,"matches":[{"path":{"type":"PathPrefix","value":"/p/long/er"}},
           {"path":{"type":"PathPrefix","value":"/p/long"},"method":"GET"},
           {"path":{"type":"PathPrefix","value":"/p/long"},"headers":[{"name":"a","value":"1"},
              {"name":"A","value":"same name: counts once"}]},
           {"path":{"type":"PathPrefix","value":"/p/long"},"queryParams":[
              {"name":"x","value":"1"},{"name":"x","value":"same name: counts once"}]},
           {"path":{"type":"PathPrefix","value":"/p/long"}}]}])")},
      {Ref("default", "zeta"), RouteView("default", "zeta", "2020-01-01T00:00:00.5Z", R"([
         {"index":0,"matches":[{"path":{"type":"Exact","value":"/p"}},
           {"path":{"type":"RegularExpression","value":"/p/.*"}},
           {"path":{"type":"PathPrefix","value":"/p/long"}}]},
         {"index":1}])")},
      {Ref("aaa-x", "route"), RouteView("aaa-x", "route", "2022-01-01T00:00:00Z", R"([
         {"index":0,"matches":[{"path":{"type":"PathPrefix","value":"/p/long"}}]}])")},
      // The same instant written with an offset.
      {Ref("aaa", "route"), RouteView("aaa", "route", "2022-01-01T01:00:00+01:00", R"([
         {"index":0,"matches":[{"path":{"type":"PathPrefix","value":"/p/long"}}]}])")},
      {Ref("aaa", "route-b"), RouteView("aaa", "route-b", "2022-01-01T00:00:00Z", R"([
         {"index":0,"matches":[{"path":{"type":"PathPrefix","value":"/p/long"}}]}])")},
      {Ref("default", "no-timestamp"), RouteView("default", "no-timestamp", "", R"([
         {"index":0,"matches":[{"path":{"type":"PathPrefix","value":"/p/long"}}]}])")},
  };
  const std::vector<std::string> expected = {
      "default/alpha 0.0",         // Exact, method
      "default/alpha 0.1",         // Exact, 2 headers
      "default/alpha 1.0",         // Exact, 1 header (3 query params rank below a header)
      "default/zeta 0.0",          // Exact, plain: the oldest route first
      "default/alpha 1.1",         // Exact, plain, younger route
      "default/alpha 2.0",         // same route, later rule
      "default/alpha 2.1",         // Regex: the longer pattern first
      "default/zeta 0.1",          // Regex
      "default/alpha 3.0",         // Prefix: the longest first
      "default/alpha 3.1",         // Prefix "/p/long", method
      "default/alpha 3.2",         // header
      "default/alpha 3.3",         // query
      "default/zeta 0.2",          // plain, 2020
      "default/alpha 3.4",         // plain, 2021
      "aaa-x/route 0.0",           // 2022, "aaa-x/route" < "aaa/route" bytewise
      "aaa/route 0.0",             // 2022, a name before its extension
      "aaa/route-b 0.0",           // 2022
      "default/no-timestamp 0.0",  // no creationTimestamp: youngest
      "default/zeta 1.0",          // no matches: Prefix "/"
  };
  std::vector<FakeChange> changes;
  for (const auto& [ref, view] : routes) changes.push_back(FakeChange::Upsert(ref, view));
  // Reverse the batch so the order cannot come from staging order.
  std::reverse(changes.begin(), changes.end());
  StageOutcome out = Stage(changes);
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_THAT(out.nacks, IsEmpty());
  std::vector<std::pair<std::string, std::string>> keyed;  // (precedence, "ns/name id")
  for (const auto& [key, entry] : out.puts) {
    auto doc = json::Parse(entry.json);
    ASSERT_TRUE(doc.ok());
    std::string route =
        json::GetString(*doc, "route.namespace") + "/" + json::GetString(*doc, "route.name");
    for (const auto& rule : (*doc)["rules"].GetArray()) {
      keyed.emplace_back(json::GetString(rule, "precedence"),
                         route + " " + json::GetString(rule, "id"));
    }
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::string> order;
  for (const auto& [precedence, label] : keyed) order.push_back(label);
  EXPECT_THAT(order, ElementsAreArray(expected));
  // Keys never tie, and the offset form parsed to the same instant as the Z form.
  for (size_t i = 1; i < keyed.size(); ++i) EXPECT_LT(keyed[i - 1].first, keyed[i].first);
  EXPECT_THAT(keyed[15].first, HasSubstr("/t:01640995200000/n:aaa/route /"));
  EXPECT_THAT(keyed[3].first, HasSubstr("/t:01577836800500/"));  // fractional seconds
}

TEST_F(httproute_stage, CorsFiltersStage) {
  // HTTPRouteCORS's first two routes as rules of one (condensed), and a backend-level filter.
  constexpr char kCorsRoute[] = R"({"apiVersion":"gateway.networking.k8s.io/v1",
  "kind":"HTTPRoute","metadata":{"name":"cors","namespace":"gateway-conformance-infra"},
  "spec":{"parentRefs":[{"name":"same-namespace"}],"rules":[
    {"matches":[{"path":{"type":"PathPrefix","value":"/cors-1"}}],
     "filters":[{"type":"CORS","cors":{"allowOrigins":["https://www.foo.com","https://*.bar.com"],
       "allowMethods":["GET","OPTIONS"],"allowHeaders":["x-header-1","x-header-2"],
       "exposeHeaders":["x-header-3","x-header-4"],"allowCredentials":true,"maxAge":3600}}],
     "backendRefs":[{"name":"infra-backend-v1","port":8080}]},
    {"matches":[{"path":{"type":"PathPrefix","value":"/cors-2"}}],
     "backendRefs":[{"name":"infra-backend-v1","port":8080,"filters":[{"type":"CORS",
       "cors":{"allowOrigins":["https://www.foo.com"],"allowMethods":["*"]}}]}]}]}})";
  StageOutcome out =
      Stage({FakeChange::Upsert(Ref("gateway-conformance-infra", "cors"), Synced(kCorsRoute))});
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_THAT(out.nacks, IsEmpty()) << out.nacks[0].second;
  const std::string& json = out.puts.at({kFormat, "httproute/gateway-conformance-infra/cors"}).json;
  EXPECT_THAT(json, HasSubstr(R"("filters":[{"builtin":"cors",)"
                              R"("allowOrigins":["https://www.foo.com","https://*.bar.com"],)"
                              R"("allowMethods":["GET","OPTIONS"],)"
                              R"("allowHeaders":["x-header-1","x-header-2"],)"
                              R"("exposeHeaders":["x-header-3","x-header-4"],)"
                              R"("allowCredentials":true,"maxAge":3600}])"));
  // Absent members: empty lists, no credentials, the CRD's default maxAge of 5 seconds.
  EXPECT_THAT(json, HasSubstr(R"("weight":1,"filters":[{"builtin":"cors",)"
                              R"("allowOrigins":["https://www.foo.com"],"allowMethods":["*"],)"
                              R"("allowHeaders":[],"exposeHeaders":[],)"
                              R"("allowCredentials":false,"maxAge":5}]})"));
}

TEST_F(httproute_stage, DurationsAreMilliseconds) {
  struct Case {
    const char* duration;
    int64_t ms;
  } cases[] = {{"0s", 0},         {"10s", 10000},         {"500ms", 500},
               {"1h2m", 3720000}, {"1h1m1s1ms", 3661001}, {"99999ms", 99999},
               {"2m0s", 120000},  {"1s500ms", 1500}};
  for (const Case& c : cases) {
    std::string view =
        RouteView("infra", "t", "",
                  R"([{"index":0,"timeouts":{"request":")" + std::string(c.duration) + R"("}}])");
    StageOutcome out = Stage({FakeChange::Upsert(Ref("infra", "t"), view)});
    ASSERT_TRUE(out.ok()) << out.status;
    ASSERT_THAT(out.nacks, IsEmpty()) << c.duration << ": " << out.nacks[0].second;
    EXPECT_THAT(out.puts.at({kFormat, "httproute/infra/t"}).json,
                HasSubstr(R"("timeouts":{"requestMs":)" + std::to_string(c.ms) +
                          R"(,"backendRequestMs":0})"))
        << c.duration;
  }
}

TEST_F(httproute_stage, RetryPoliciesAreStagedWithDefaults) {
  std::string view = RouteView("infra", "t", "",
                               R"([{"index":0,"retry":{"codes":[500,503],"attempts":3,)"
                               R"("backoff":"100ms"}},{"index":1,"retry":{}},{"index":2}])");
  StageOutcome out = Stage({FakeChange::Upsert(Ref("infra", "t"), view)});
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_THAT(out.nacks, IsEmpty()) << out.nacks[0].second;
  const std::string& json = out.puts.at({kFormat, "httproute/infra/t"}).json;
  EXPECT_THAT(json, HasSubstr(R"("retry":{"codes":[500,503],"attempts":3,"backoffMs":100})"));
  // An empty retry gets Envoy Gateway's defaults; a rule without one has no member at all.
  EXPECT_THAT(json, HasSubstr(R"("retry":{"codes":[],"attempts":2,"backoffMs":25})"));
  size_t count = 0;
  for (size_t at = json.find("\"retry\""); at != std::string::npos;
       at = json.find("\"retry\"", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 2u);
}

TEST_F(httproute_stage, DeleteClearsTheEntry) {
  StageOutcome out = Stage({FakeChange::Upsert(Ref("infra", "web"), kFullView),
                            FakeChange::Upsert(Ref("infra", "other"), kFullView)});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.puts.size(), 2u);
  out = Stage({FakeChange::Delete(Ref("infra", "web"))});
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_EQ(out.puts.size(), 1u);
  EXPECT_EQ(out.puts.begin()->first.second, "httproute/infra/other");
  out = Stage({FakeChange::Delete(Ref("infra", "other"))});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(out.puts, IsEmpty());
}

TEST_F(httproute_stage, UntranslatableViewsAreNackedAndKeepTheirLastGoodEntry) {
  ObjectRef web = Ref("infra", "web");
  ObjectRef other = Ref("infra", "other");
  StageOutcome out = Stage({FakeChange::Upsert(web, kFullView)});
  ASSERT_TRUE(out.ok()) << out.status;
  const auto before = out.puts;

  auto rules = [](std::string_view rules_json) {
    return RouteView("infra", "web", "", rules_json);
  };
  struct Case {
    std::string view;
    const char* reason;
  } cases[] = {
      {"[]", "synced view is not a JSON object"},
      {R"({"metadata":{"name":"web"},"rules":[]})", "parents: is required"},
      {R"({"parents":[],"rules":{}})", "rules: must be an array"},
      {R"({"parents":[{"gateway":{"name":"web"},"listener":"http"}],"rules":[]})",
       "parents[0].gateway.namespace: is required"},
      {RouteView("infra", "web", "yesterday", "[]"),
       "metadata.creationTimestamp: \"yesterday\" is not an RFC 3339 time"},
      {rules(R"([{"matches":[]}])"), "rules[0].index: must be a non-negative integer"},
      {rules(R"([{"index":0},{"index":0}])"), "rules[1].index: duplicate rule index 0"},
      {rules(R"([{"index":0,"matches":[{"path":{"type":"Glob","value":"/*"}}]}])"),
       "rules[0].matches[0].path.type: \"Glob\" is not supported"},
      {rules(R"([{"index":0,"matches":[{"headers":[{"name":"a","type":"Prefix","value":"x"}]}]}])"),
       "rules[0].matches[0].headers[0].type: match type \"Prefix\" is not supported"},
      {rules(R"([{"index":0,"backendRefs":[{"name":"svc","port":80}]}])"),
       "rules[0].backendRefs[0].key: is required (an unresolved view)"},
      {rules(R"([{"index":0,"filters":[{"type":"ExternalAuth","externalAuth":{}}]}])"),
       "rules[0].filters[0].type: filter type \"ExternalAuth\" is not supported"},
      {rules(R"([{"index":0,"filters":[{"type":"CORS","cors":{"maxAge":0}}]}])"),
       "rules[0].filters[0].cors.maxAge: must be >= 1"},
      {rules(R"([{"index":0,"filters":[{"type":"CORS","cors":{"allowOrigins":[7]}}]}])"),
       "rules[0].filters[0].cors.allowOrigins[0]: must be a non-empty string"},
      {rules(R"([{"index":0,"filters":[{"type":"RequestHeaderModifier"}]}])"),
       "rules[0].filters[0].requestHeaderModifier: must be an object"},
      {rules(R"([{"index":0,"timeouts":{"request":"1d"}}])"),
       "rules[0].timeouts.request: \"1d\" is not a Gateway API duration"},
      {rules(R"([{"index":0,"timeouts":{"request":"123456s"}}])"),
       "rules[0].timeouts.request: \"123456s\" is not a Gateway API duration"},
      {rules(R"([{"index":0,"timeouts":{"request":"1h1m1s1ms1h"}}])"),
       "rules[0].timeouts.request: \"1h1m1s1ms1h\" is not a Gateway API duration"},
      {rules(R"([{"index":0,"timeouts":{"backendRequest":""}}])"),
       "rules[0].timeouts.backendRequest: \"\" is not a Gateway API duration"},
  };
  for (const Case& c : cases) {
    // The bad view and a good one in one batch: only the bad one is nacked.
    out = Stage({FakeChange::Upsert(web, c.view), FakeChange::Upsert(other, kFullView)});
    ASSERT_TRUE(out.ok()) << out.status << " " << c.view;
    ASSERT_EQ(out.nacks.size(), 1u) << c.view;
    EXPECT_EQ(out.nacks[0].first, web);
    EXPECT_THAT(out.nacks[0].second, HasSubstr(c.reason)) << c.view;
    EXPECT_EQ(out.puts.at({kFormat, "httproute/infra/web"}),
              before.at({kFormat, "httproute/infra/web"}))
        << c.view;
    EXPECT_EQ(out.puts.count({kFormat, "httproute/infra/other"}), 1u) << c.view;
    out = Stage({FakeChange::Delete(other)});
    ASSERT_TRUE(out.ok()) << out.status;
  }
}

}  // namespace
}  // namespace portico::plugins::httproute
