// httproute_test: the HTTPRoute kind in the SDK's fake host, with the plugins it reads (Gateway,
// Service, ReferenceGrant, Namespace), Webhook for ExtensionRef filters and Secret for HTTPS
// Gateways. Objects are conformance manifests of the Gateway API (kubernetes-sigs/gateway-api,
// Apache-2.0) or variations of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "portico/sdk/testing/fake_host.h"
#include "portico/sdk/testing/fake_world.h"

namespace portico::plugins::httproute {
namespace {

using sdk::ObjectRef;
using sdk::testing::FakeHost;
using sdk::testing::FakeWorld;
using sdk::testing::ProcessOutcome;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kGroup[] = "gateway.networking.k8s.io";
constexpr char kInfra[] = "gateway-conformance-infra";

constexpr char kGatewayClass[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",
  "metadata":{"name":"portico"},"spec":{"controllerName":"portico.io/gateway-controller"}})";
constexpr char kSameNamespace[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"same-namespace","namespace":"gateway-conformance-infra"},
  "spec":{"gatewayClassName":"portico","listeners":[{"name":"http","port":80,"protocol":"HTTP",
    "allowedRoutes":{"namespaces":{"from":"Same"}}}]}})";
constexpr char kBackendNamespaces[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"backend-namespaces","namespace":"gateway-conformance-infra"},
  "spec":{"gatewayClassName":"portico","listeners":[{"name":"http","port":80,"protocol":"HTTP",
    "allowedRoutes":{"namespaces":{"from":"Selector","selector":{"matchLabels":{)"
    R"("gateway-conformance":"backend"}}}}}]}})";
constexpr char kAllNamespaces[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"all-namespaces","namespace":"gateway-conformance-infra"},
  "spec":{"gatewayClassName":"portico","listeners":[{"name":"http","port":80,"protocol":"HTTP",
    "allowedRoutes":{"namespaces":{"from":"All"}}}]}})";
// HTTPRouteDisallowedKind's Gateway.
constexpr char kTlsRoutesOnly[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"tlsroutes-only","namespace":"gateway-conformance-infra"},
  "spec":{"gatewayClassName":"portico","listeners":[{"name":"tls","port":443,"protocol":"TLS",
    "tls":{"mode":"Passthrough"},"allowedRoutes":{"namespaces":{"from":"Same"},
    "kinds":[{"kind":"TLSRoute"}]}}]}})";
// HTTPRouteHostnameIntersection's Gateway (condensed).
constexpr char kHostnameGateway[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"httproute-hostname-intersection","namespace":"gateway-conformance-infra"},
  "spec":{"gatewayClassName":"portico","listeners":[
    {"name":"listener-1","port":80,"protocol":"HTTP","hostname":"very.specific.com"},
    {"name":"listener-2","port":80,"protocol":"HTTP","hostname":"*.wildcard.io"},
    {"name":"listener-3","port":80,"protocol":"HTTP","hostname":"*.anotherwildcard.io"}]}})";
constexpr char kInfraBackendV1[] =
    R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"infra-backend-v1",
  "namespace":"gateway-conformance-infra"},"spec":{"selector":{"app":"infra-backend-v1"},
  "ports":[{"protocol":"TCP","port":8080,"targetPort":3000}]}})";
constexpr char kWebBackend[] =
    R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web-backend",
  "namespace":"gateway-conformance-web-backend"},"spec":{"selector":{"app":"web-backend"},
  "ports":[{"protocol":"TCP","port":8080,"targetPort":3000}]}})";
constexpr char kWebBackendNamespace[] = R"({"apiVersion":"v1","kind":"Namespace","metadata":{
  "name":"gateway-conformance-web-backend","labels":{"gateway-conformance":"backend"}}})";

// HTTPRouteSimpleSameNamespace.
constexpr char kSimpleRoute[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",
  "metadata":{"name":"gateway-conformance-infra-test","namespace":"gateway-conformance-infra"},
  "spec":{"parentRefs":[{"name":"same-namespace"}],"rules":[{"backendRefs":[{)"
                                R"("name":"infra-backend-v1","port":8080}]}]}})";
// HTTPRouteReferenceGrant and its grant.
constexpr char kCrossNamespaceRoute[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",
  "metadata":{"name":"reference-grant","namespace":"gateway-conformance-infra"},
  "spec":{"parentRefs":[{"name":"same-namespace"}],"rules":[{"backendRefs":[{"name":"web-backend",
    "namespace":"gateway-conformance-web-backend","port":8080}]}]}})";
constexpr char kGrant[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant",
  "metadata":{"name":"reference-grant","namespace":"gateway-conformance-web-backend"},
  "spec":{"from":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute",)"
                          R"("namespace":"gateway-conformance-infra"}],
          "to":[{"group":"","kind":"Service","name":"web-backend"}]}})";

// More conformance routes that must be accepted as written.
const char* const kConformanceRoutes[] = {
    // HTTPRouteRewritePath
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{)"
    R"("name":"rewrite-path","namespace":"gateway-conformance-infra"},
      "spec":{"parentRefs":[{"name":"same-namespace"}],"rules":[
        {"matches":[{"path":{"type":"PathPrefix","value":"/prefix/one"}}],"filters":[{)"
    R"("type":"URLRewrite","urlRewrite":{"path":{"type":"ReplacePrefixMatch",)"
    R"("replacePrefixMatch":"/one"}}}],"backendRefs":[{"name":"infra-backend-v1",)"
    R"("port":8080}]},
        {"matches":[{"path":{"type":"PathPrefix","value":"/strip-prefix"}}],"filters":[{)"
    R"("type":"URLRewrite","urlRewrite":{"path":{"type":"ReplacePrefixMatch",)"
    R"("replacePrefixMatch":"/"}}}],"backendRefs":[{"name":"infra-backend-v1",)"
    R"("port":8080}]},
        {"matches":[{"path":{"type":"PathPrefix","value":"/full/one"}}],"filters":[{)"
    R"("type":"URLRewrite","urlRewrite":{"path":{"type":"ReplaceFullPath",)"
    R"("replaceFullPath":"/one"}}}],"backendRefs":[{"name":"infra-backend-v1",)"
    R"("port":8080}]},
        {"matches":[{"path":{"type":"PathPrefix",)"
    R"("value":"/full/rewrite-path-and-modify-headers"}}],"filters":[{)"
    R"("type":"URLRewrite","urlRewrite":{"path":{"type":"ReplaceFullPath",)"
    R"("replaceFullPath":"/test"}}},{"type":"RequestHeaderModifier",)"
    R"("requestHeaderModifier":{"set":[{"name":"X-Header-Set",)"
    R"("value":"set-overwrites-values"}],"add":[{"name":"X-Header-Add",)"
    R"("value":"header-val-1"},{"name":"X-Header-Add-Append",)"
    R"("value":"header-val-2"}],"remove":["X-Header-Remove"]}}],)"
    R"("backendRefs":[{"name":"infra-backend-v1",)"
    R"("port":8080}]}]}})",
    // HTTPRouteRedirectPortAndScheme (one route)
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{)"
    R"("name":"http-route-for-listener-on-port-80","namespace":"gateway-conformance-infra"},
      "spec":{"parentRefs":[{"name":"same-namespace"}],"rules":[
        {"matches":[{"path":{"type":"PathPrefix","value":"/scheme-nil-and-port-nil"}}],)"
    R"("filters":[{"type":"RequestRedirect","requestRedirect":{"hostname":"example.org"}}]},
        {"matches":[{"path":{"type":"PathPrefix","value":"/scheme-https-and-port-8443"}}],)"
    R"("filters":[{"type":"RequestRedirect","requestRedirect":{"scheme":"https",)"
    R"("port":8443,"hostname":"example.org"}}]}]}})",
    // HTTPRouteHeaderMatching, HTTPRouteMethodMatching, HTTPRouteQueryParamMatching (condensed)
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{)"
    R"("name":"matching","namespace":"gateway-conformance-infra"},
      "spec":{"parentRefs":[{"name":"same-namespace"}],"rules":[
        {"matches":[{"headers":[{"name":"Version","value":"one"}]}],"backendRefs":[{)"
    R"("name":"infra-backend-v1","port":8080}]},
        {"matches":[{"headers":[{"name":"Version","value":"two"},{"name":"Color",)"
    R"("value":"orange"}]}],"backendRefs":[{"name":"infra-backend-v1","port":8080}]},
        {"matches":[{"method":"POST"},{"method":"GET","path":{"type":"Exact",)"
    R"("value":"/path1"}}],"backendRefs":[{"name":"infra-backend-v1","port":8080}]},
        {"matches":[{"queryParams":[{"name":"animal","value":"whale"},{"name":"color",)"
    R"("value":"blue"}]}],"backendRefs":[{"name":"infra-backend-v1","port":8080}]}]}})",
    // HTTPRouteWeight, HTTPRouteTimeoutRequest, HTTPRouteResponseHeaderModifier (condensed)
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{)"
    R"("name":"weighted-backends","namespace":"gateway-conformance-infra"},
      "spec":{"parentRefs":[{"name":"same-namespace"}],"rules":[
        {"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"backendRefs":[{)"
    R"("name":"infra-backend-v1","port":8080,"weight":70},{"name":"infra-backend-v1",)"
    R"("port":8080,"weight":0}]},
        {"matches":[{"path":{"type":"PathPrefix","value":"/request-timeout"}}],"backendRefs":[{)"
    R"("name":"infra-backend-v1","port":8080}],"timeouts":{"request":"500ms"}},
        {"matches":[{"path":{"type":"PathPrefix","value":"/disable-request-timeout"}}],)"
    R"("backendRefs":[{"name":"infra-backend-v1","port":8080}],"timeouts":{)"
    R"("request":"0s","backendRequest":"2s"}},
        {"matches":[{"path":{"type":"PathPrefix","value":"/response"}}],"filters":[{)"
    R"("type":"ResponseHeaderModifier","responseHeaderModifier":{"set":[{)"
    R"("name":"X-Header-Set","value":"set-overwrites-values"}],"remove":[)"
    R"("X-Header-Remove"]}}],"backendRefs":[{"name":"infra-backend-v1",)"
    R"("port":8080}]}]}})",
    // HTTPRouteNamedRule, HTTPRouteListenerPortMatching-style parentRefs
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{)"
    R"("name":"named-rule","namespace":"gateway-conformance-infra"},
      "spec":{"parentRefs":[{"name":"same-namespace","sectionName":"http"},{)"
    R"("name":"same-namespace","sectionName":"https"}],
        "hostnames":["example.com","*.wildcard.io"],"rules":[
        {"name":"named-rule","matches":[{"path":{"type":"PathPrefix","value":"/named"}}],)"
    R"("backendRefs":[{"name":"infra-backend-v1","port":8080}]},
        {"matches":[{"path":{"type":"RegularExpression","value":"/regex/[0-9]+"}}],)"
    R"("backendRefs":[{"name":"infra-backend-v1","port":8080}]}]}})",
};

std::string RouteWith(std::string_view spec) {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{)"
         R"("name":"r","namespace":"default"},"spec":)" +
         std::string(spec) + "}";
}

// InfraRoute is a route "r" in gateway-conformance-infra with the given spec members.
std::string InfraRoute(std::string_view spec_members, std::string_view ns = kInfra) {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{)"
         R"("name":"r","namespace":")" +
         std::string(ns) + R"("},"spec":{)" + std::string(spec_members) + "}}";
}

constexpr char kInfraBackendRule[] =
    R"("rules":[{"backendRefs":[{"name":"infra-backend-v1","port":8080}]}])";

// ParentCondition: "Status/Reason" of a condition in the status entry of the parent named
// `gateway`; "" when there is no such entry or condition.
std::string ParentCondition(const std::string& status, std::string_view gateway,
                            std::string_view type) {
  auto doc = json::Parse(status);
  const rapidjson::Value* parents = doc.ok() ? json::Find(*doc, "parents") : nullptr;
  if (parents == nullptr || !parents->IsArray()) return "";
  for (const auto& p : parents->GetArray()) {
    if (json::GetString(p, "parentRef.name") != gateway) continue;
    const rapidjson::Value* conditions = json::Find(p, "conditions");
    for (const auto& c : conditions->GetArray()) {
      if (json::GetString(c, "type") == type) {
        return json::GetString(c, "status") + "/" + json::GetString(c, "reason");
      }
    }
  }
  return "";
}

size_t ParentCount(const std::string& status) {
  auto doc = json::Parse(status);
  return doc.ok() ? (*doc)["parents"].Size() : 0;
}

std::vector<std::string> Topics(const ProcessOutcome& out) {
  std::vector<std::string> topics;
  for (const auto& c : out.contributions) topics.push_back(c.target.Display() + " " + c.topic);
  return topics;
}

class plugin_httproute : public ::testing::Test {
 protected:
  void SetUp() override { Load(host_); }
  static void Load(FakeHost& host) {
    for (const char* path :
         {PLUGIN_PATH, GATEWAY_PLUGIN_PATH, SERVICE_PLUGIN_PATH, REFERENCEGRANT_PLUGIN_PATH,
          WEBHOOK_PLUGIN_PATH, NAMESPACE_PLUGIN_PATH, SECRET_PLUGIN_PATH}) {
      ASSERT_TRUE(host.Load(path).ok()) << path;
    }
  }
  void Apply(std::initializer_list<const char*> objects) {
    for (const char* object : objects) {
      ProcessOutcome out = host_.Apply(object);
      ASSERT_TRUE(out.ok()) << out.status;
    }
  }
  void ApplyBase() { Apply({kGatewayClass, kSameNamespace, kInfraBackendV1, kWebBackend}); }
  ProcessOutcome Route(const std::string& json) { return host_.Process(kGroup, "HTTPRoute", json); }
  FakeHost host_;
};

TEST_F(plugin_httproute, RegistersTheKind) {
  const auto* kind = host_.FindKind(kGroup, "HTTPRoute");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->versions, (std::vector<std::string>{"v1", "v1beta1"}));
  EXPECT_EQ(kind->plural, "httproutes");
  EXPECT_EQ(kind->reads,
            (std::vector<std::string>{"Gateway.gateway.networking.k8s.io", "Service",
                                      "ReferenceGrant.gateway.networking.k8s.io", "Namespace"}));
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_ATTACHED);
}

TEST_F(plugin_httproute, SimpleRouteIsNormalisedAttachedAndCounted) {
  ApplyBase();
  ProcessOutcome out = Route(kSimpleRoute);
  ASSERT_TRUE(out.ok()) << out.status;
  const std::string parent =
      R"({"name":"same-namespace","group":"gateway.networking.k8s.io","kind":"Gateway",)"
      R"("namespace":"gateway-conformance-infra"})";
  EXPECT_EQ(out.synced,
            R"({"metadata":{"name":"gateway-conformance-infra-test",)"
            R"("namespace":"gateway-conformance-infra","generation":1},"hostnames":[],)"
            R"("parents":[{"gateway":{"namespace":"gateway-conformance-infra",)"
            R"("name":"same-namespace"},"listener":"http","hostnames":[]}],)"
            R"("rules":[{"index":0,"backendRefs":[{"name":"infra-backend-v1","port":8080,)"
            R"("group":"","kind":"Service","namespace":"gateway-conformance-infra","weight":1,)"
            R"("key":"gateway-conformance-infra/infra-backend-v1:8080"}],)"
            R"("matches":[{"path":{"type":"PathPrefix","value":"/"}}]}]})");
  EXPECT_EQ(out.export_json, R"({"parentRefs":[)" + parent +
                                 R"(],"hostnames":[],"backends":[{"namespace":)"
                                 R"("gateway-conformance-infra","name":"infra-backend-v1",)"
                                 R"("port":8080}],"gateways":[{"namespace":)"
                                 R"("gateway-conformance-infra","name":"same-namespace"}]})");
  EXPECT_EQ(out.status_json,
            R"({"parents":[{"parentRef":)" + parent +
                R"(,"controllerName":"portico.io/gateway-controller","conditions":[)"
                R"({"type":"Accepted","status":"True","reason":"Accepted","message":"",)"
                R"("observedGeneration":1},)"
                R"({"type":"ResolvedRefs","status":"True","reason":"ResolvedRefs","message":"",)"
                R"("observedGeneration":1}]}]})");
  EXPECT_THAT(Topics(out), ElementsAre("Gateway gateway-conformance-infra/same-namespace "
                                       "count:listeners[name=http].attachedRoutes"));
  EXPECT_EQ(out.contributions[0].json, "");
  EXPECT_THAT(out.reads, ElementsAre("get Service gateway-conformance-infra/infra-backend-v1 hit",
                                     "get Gateway gateway-conformance-infra/same-namespace hit"));
  ASSERT_EQ(out.links.size(), 1u);  // sync scope: the route goes with its accepted parent
  EXPECT_EQ(out.links[0].first.Display(), "Gateway gateway-conformance-infra/same-namespace");
  EXPECT_EQ(out.links[0].second, PORTICO_LINK_PARENT);
}

TEST_F(plugin_httproute, RouteBeforeItsGatewayAndServiceIsFixedWhenTheyArrive) {
  ProcessOutcome out = Route(kSimpleRoute);
  ASSERT_TRUE(out.ok()) << out.status;
  // A parent nobody can resolve gets no entry; there is nothing to attach to, nothing to sync.
  EXPECT_EQ(out.status_json, R"({"parents":[]})");
  EXPECT_FALSE(out.synced.has_value());
  EXPECT_THAT(out.contributions, IsEmpty());
  // Both misses are reads, so the host requeues the route when either object appears.
  EXPECT_THAT(out.reads, ElementsAre("get Service gateway-conformance-infra/infra-backend-v1 miss",
                                     "get Gateway gateway-conformance-infra/same-namespace miss"));
  Apply({kSameNamespace});  // its class is still missing: the Gateway is not ours yet
  out = Route(kSimpleRoute);
  EXPECT_EQ(out.status_json, R"({"parents":[]})");
  Apply({kGatewayClass, kSameNamespace});
  out = Route(kSimpleRoute);
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "Accepted"), "True/Accepted");
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "ResolvedRefs"),
            "False/BackendNotFound");
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("message":"spec.rules[0].backendRefs[0]: Service )"
                        R"(gateway-conformance-infra/infra-backend-v1 does not exist")"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("key":"","invalid":{"reason":"BackendNotFound",)"));
  Apply({kInfraBackendV1});
  out = Route(kSimpleRoute);
  EXPECT_THAT(*out.status_json, Not(HasSubstr("\"False\"")));
}

TEST_F(plugin_httproute, RoutesOfForeignGatewaysGetNoStatusEntry) {
  Apply({kInfraBackendV1,
         R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",
  "metadata":{"name":"portico"},"spec":{"controllerName":"example.com/not-portico"}})",
         kSameNamespace});
  ProcessOutcome out = Route(kSimpleRoute);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.status_json, R"({"parents":[]})");
  EXPECT_THAT(out.contributions, IsEmpty());
  // Parents of other kinds (a mesh Service) are not ours either.
  out = Route(
      InfraRoute(R"("parentRefs":[{"group":"","kind":"Service","name":"infra-backend-v1"}],)" +
                 std::string(kInfraBackendRule)));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.status_json, R"({"parents":[]})");
}

TEST_F(plugin_httproute, CrossNamespaceBackendsNeedAReferenceGrant) {
  ApplyBase();
  ProcessOutcome out = Route(kCrossNamespaceRoute);
  ASSERT_TRUE(out.ok()) << out.status;
  // HTTPRouteInvalidCrossNamespaceBackendRef: attached, but the backend is not resolved.
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "Accepted"), "True/Accepted");
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "ResolvedRefs"),
            "False/RefNotPermitted");
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("message":"spec.rules[0].backendRefs[0]: Service )"
                        R"(gateway-conformance-web-backend/web-backend is in another namespace)"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("key":"","invalid":{"reason":"RefNotPermitted",)"));
  EXPECT_THAT(Topics(out), ElementsAre("Gateway gateway-conformance-infra/same-namespace "
                                       "count:listeners[name=http].attachedRoutes"));
  EXPECT_THAT(out.reads, ElementsAre("list ReferenceGrant gateway-conformance-web-backend",
                                     "reference HTTPRoute gateway-conformance-infra -> Service "
                                     "gateway-conformance-web-backend/web-backend denied",
                                     "get Gateway gateway-conformance-infra/same-namespace hit"));
  Apply({kGrant});
  out = Route(kCrossNamespaceRoute);
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "ResolvedRefs"),
            "True/ResolvedRefs");
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("key":"gateway-conformance-web-backend/web-backend:8080")"));
  host_.Delete({kGroup, "ReferenceGrant", "gateway-conformance-web-backend", "reference-grant"});
  out = Route(kCrossNamespaceRoute);
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "ResolvedRefs"),
            "False/RefNotPermitted");
}

TEST_F(plugin_httproute, InvalidBackendsAreReportedAndMarkedNotRejected) {
  ApplyBase();
  // HTTPRouteInvalidBackendRefUnknownKind, HTTPRouteInvalidNonExistentBackendRef, a wrong port.
  struct Case {
    const char* backend;
    const char* reason;
    const char* message;
  } cases[] = {
      {R"({"group":"unknown.example.com","kind":"UnknownKind","name":"infra-backend-v2",)"
       R"("port":8080})",
       "False/InvalidKind",
       R"("message":"spec.rules[0].backendRefs[1]: backend kind )"
       R"x(UnknownKind.unknown.example.com is not supported (only core Services are)")x"},
      {R"({"name":"nonexistent","port":8080})", "False/BackendNotFound",
       R"(Service gateway-conformance-infra/nonexistent does not exist")"},
      {R"({"name":"infra-backend-v1","port":9999})", "False/BackendNotFound",
       R"(Service gateway-conformance-infra/infra-backend-v1 has no port 9999")"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out =
        Route(InfraRoute(R"("parentRefs":[{"name":"same-namespace"}],"rules":[{"backendRefs":[{)"
                         R"("name":"infra-backend-v1","port":8080,"weight":3},)" +
                         std::string(c.backend) + "]}]"));
    ASSERT_TRUE(out.ok()) << out.status;
    EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "ResolvedRefs"), c.reason);
    EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "Accepted"), "True/Accepted");
    EXPECT_THAT(*out.status_json, HasSubstr(c.message)) << c.backend;
    // The valid backend keeps its key; the invalid one answers 500 for its share (weight 1).
    EXPECT_THAT(*out.synced,
                HasSubstr(R"("weight":3,"group":"","kind":"Service",)"
                          R"("namespace":"gateway-conformance-infra",)"
                          R"("key":"gateway-conformance-infra/infra-backend-v1:8080"})"));
    EXPECT_THAT(*out.synced, HasSubstr(R"("weight":1,"key":"","invalid":{"reason":")"));
  }
}

TEST_F(plugin_httproute, ParentSectionNameAndPortMustMatchAListener) {
  ApplyBase();
  auto route = [](std::string_view parent) {
    return InfraRoute(R"("parentRefs":[)" + std::string(parent) + "]," + kInfraBackendRule);
  };
  ProcessOutcome out = Route(route(R"({"name":"same-namespace","sectionName":"http","port":80})"));
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "Accepted"), "True/Accepted");
  // HTTPRouteInvalidParentRefNotMatchingSectionName / ...NotMatchingListenerPort /
  // ...SectionNameNotMatchingPort: no entry attaches, so nothing is counted.
  struct Case {
    const char* parent;
    const char* message;
  } cases[] = {
      {R"({"name":"same-namespace","sectionName":"unknown-section"})",
       R"(has no listener named \"unknown-section\"")"},
      {R"({"name":"same-namespace","port":81})", R"(has no listener on port 81")"},
      {R"({"name":"same-namespace","sectionName":"http","port":81})",
       R"(has no listener named \"http\" on port 81")"},
  };
  for (const Case& c : cases) {
    out = Route(route(c.parent));
    EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "Accepted"),
              "False/NoMatchingParent")
        << c.parent;
    EXPECT_THAT(*out.status_json,
                HasSubstr(R"("message":"Gateway gateway-conformance-infra/same-namespace )" +
                          std::string(c.message)));
    EXPECT_THAT(out.contributions, IsEmpty());
    EXPECT_FALSE(out.synced.has_value());
  }
}

TEST_F(plugin_httproute, AllowedRoutesNamespacesAndKinds) {
  ApplyBase();
  Apply({kAllNamespaces, kBackendNamespaces, kTlsRoutesOnly});
  // HTTPRouteInvalidCrossNamespaceParentRef: a route in another namespace, Same on the listener.
  const std::string web = "gateway-conformance-web-backend";
  auto route = [&](std::string_view gateway) {
    return InfraRoute(R"("parentRefs":[{"name":")" + std::string(gateway) +
                          R"(","namespace":"gateway-conformance-infra"}],"rules":[{)"
                          R"("backendRefs":[{"name":"web-backend","port":8080}]}])",
                      web);
  };
  ProcessOutcome out = Route(route("same-namespace"));
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "Accepted"),
            "False/NotAllowedByListeners");
  EXPECT_THAT(out.contributions, IsEmpty());
  out = Route(route("all-namespaces"));
  EXPECT_EQ(ParentCondition(*out.status_json, "all-namespaces", "Accepted"), "True/Accepted");
  // Selector: the route's Namespace labels decide; without the Namespace object only its
  // kubernetes.io/metadata.name label exists.
  out = Route(route("backend-namespaces"));
  EXPECT_EQ(ParentCondition(*out.status_json, "backend-namespaces", "Accepted"),
            "False/NotAllowedByListeners");
  EXPECT_THAT(out.reads, ElementsAre("get Service gateway-conformance-web-backend/web-backend hit",
                                     "get Gateway gateway-conformance-infra/backend-namespaces hit",
                                     "get Namespace gateway-conformance-web-backend miss"));
  Apply({kWebBackendNamespace});
  out = Route(route("backend-namespaces"));
  EXPECT_EQ(ParentCondition(*out.status_json, "backend-namespaces", "Accepted"), "True/Accepted");
  // HTTPRouteDisallowedKind: the only listener takes TLSRoutes.
  out = Route(
      InfraRoute(R"("parentRefs":[{"name":"tlsroutes-only"}],)" + std::string(kInfraBackendRule)));
  EXPECT_EQ(ParentCondition(*out.status_json, "tlsroutes-only", "Accepted"),
            "False/NotAllowedByListeners");
  EXPECT_EQ(ParentCount(*out.status_json), 1u);
  EXPECT_THAT(out.contributions, IsEmpty());
}

TEST_F(plugin_httproute, HostnamesIntersectWithListeners) {
  ApplyBase();
  Apply({kHostnameGateway});
  struct Case {
    const char* hostnames;
    const char* accepted;
    std::vector<std::string> listeners;  // "listener hostnames" in synced order
  } cases[] = {
      {R"([])",
       "True/Accepted",
       {"listener-1 [\"very.specific.com\"]", "listener-2 [\"*.wildcard.io\"]",
        "listener-3 [\"*.anotherwildcard.io\"]"}},
      {R"(["very.specific.com"])", "True/Accepted", {"listener-1 [\"very.specific.com\"]"}},
      {R"(["*.specific.com"])", "True/Accepted", {"listener-1 [\"very.specific.com\"]"}},
      {R"(["bar.wildcard.io","foo.bar.wildcard.io","wildcard.io"])",
       "True/Accepted",
       {"listener-2 [\"bar.wildcard.io\",\"foo.bar.wildcard.io\"]"}},
      {R"(["*.io"])",
       "True/Accepted",
       {"listener-2 [\"*.wildcard.io\"]", "listener-3 [\"*.anotherwildcard.io\"]"}},
      {R"(["*.foo.anotherwildcard.io"])",
       "True/Accepted",
       {"listener-3 [\"*.foo.anotherwildcard.io\"]"}},
      {R"(["specific.com","non.matching.com","*.nonmatchingwildcard.io","wildcard.io"])",
       "False/NoMatchingListenerHostname",
       {}},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Route(
        InfraRoute(R"("parentRefs":[{"name":"httproute-hostname-intersection"}],"hostnames":)" +
                   std::string(c.hostnames) + "," + kInfraBackendRule));
    ASSERT_TRUE(out.ok()) << out.status;
    EXPECT_EQ(ParentCondition(*out.status_json, "httproute-hostname-intersection", "Accepted"),
              c.accepted)
        << c.hostnames;
    std::vector<std::string> got;
    if (out.synced) {
      auto synced = json::Parse(*out.synced);
      for (const auto& p : (*synced)["parents"].GetArray()) {
        got.push_back(json::GetString(p, "listener") + " " + json::Serialize(p["hostnames"]));
      }
    }
    EXPECT_EQ(got, c.listeners) << c.hostnames;
    EXPECT_EQ(out.contributions.size(), c.listeners.size()) << c.hostnames;
  }
}

TEST_F(plugin_httproute, EveryAttachedListenerIsCountedOnce) {
  ApplyBase();
  Apply({kHostnameGateway});
  ProcessOutcome out = Route(InfraRoute(
      R"("parentRefs":[{"name":"httproute-hostname-intersection","sectionName":"listener-2"},)"
      R"({"name":"httproute-hostname-intersection","sectionName":"listener-3"},)"
      R"({"name":"same-namespace"}],"hostnames":["a.wildcard.io","a.anotherwildcard.io"],)" +
      std::string(kInfraBackendRule)));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(Topics(out),
              ElementsAre("Gateway gateway-conformance-infra/httproute-hostname-intersection "
                          "count:listeners[name=listener-2].attachedRoutes",
                          "Gateway gateway-conformance-infra/httproute-hostname-intersection "
                          "count:listeners[name=listener-3].attachedRoutes",
                          "Gateway gateway-conformance-infra/same-namespace "
                          "count:listeners[name=http].attachedRoutes"));
  EXPECT_EQ(ParentCount(*out.status_json), 3u);
}

TEST_F(plugin_httproute, RulesWithUnsupportedFeaturesAreDropped) {
  ApplyBase();
  const std::string external_auth =
      R"({"matches":[{"path":{"type":"PathPrefix","value":"/auth"}}],"filters":[{)"
      R"("type":"ExternalAuth","externalAuth":{"protocol":"HTTP","backendRef":{"name":"auth",)"
      R"("port":9000},"http":{}}}],"backendRefs":[{"name":"infra-backend-v1","port":8080}]})";
  const std::string plain = R"({"backendRefs":[{"name":"infra-backend-v1","port":8080}]})";
  ProcessOutcome out = Route(InfraRoute(R"("parentRefs":[{"name":"same-namespace"}],"rules":[)" +
                                        external_auth + "," + plain + "]"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "Accepted"), "True/Accepted");
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "PartiallyInvalid"),
            "True/UnsupportedValue");
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"x("message":"Dropped Rule(s): spec.rules[0] (filter type ExternalAuth )x"
                        R"x(is not supported)")x"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("rules":[{"index":1,)"));
  EXPECT_THAT(*out.synced, Not(HasSubstr("externalAuth")));
  EXPECT_EQ(out.contributions.size(), 1u);

  out = Route(InfraRoute(R"("parentRefs":[{"name":"same-namespace"}],"rules":[)" + external_auth +
                         R"(,{"sessionPersistence":{"sessionName":"s"},)"
                         R"("backendRefs":[{"name":"infra-backend-v1",)"
                         R"("port":8080}]}])"));
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "Accepted"),
            "False/UnsupportedValue");
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "PartiallyInvalid"), "");
  EXPECT_THAT(*out.status_json, HasSubstr("spec.rules[1] (sessionPersistence is not supported)"));
  EXPECT_THAT(out.contributions, IsEmpty());
  EXPECT_FALSE(out.synced.has_value());
}

TEST_F(plugin_httproute, ExtensionRefFiltersResolveThroughTheHost) {
  ApplyBase();
  const std::string route =
      InfraRoute(R"("parentRefs":[{"name":"same-namespace"}],)"
                 R"("rules":[{"filters":[{"type":"ExtensionRef","extensionRef":{)"
                 R"("group":"portico.io","kind":"Webhook","name":"auth"}}],)"
                 R"("backendRefs":[{"name":"infra-backend-v1","port":8080}]}])");
  ProcessOutcome out = Route(route);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "ResolvedRefs"),
            "False/BackendNotFound");
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"x("message":"spec.rules[0].filters[0].extensionRef: Webhook )x"
                        R"x(gateway-conformance-infra/auth (group \"portico.io\") does not exist )x"
                        R"x(or is not a route filter")x"));
  // Never skipped: gateways answer 500 for the rule.
  EXPECT_THAT(*out.synced, HasSubstr(R"("name":"auth"},"resolved":false})"));
  ASSERT_TRUE(
      host_
          .Apply(R"({"apiVersion":"portico.io/v1alpha1","kind":"Webhook","metadata":{"name":"auth",
      "namespace":"gateway-conformance-infra"},"spec":{"url":"http://10.0.0.1/check"}})")
          .ok());
  out = Route(route);
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "ResolvedRefs"),
            "True/ResolvedRefs");
  EXPECT_THAT(*out.synced, HasSubstr(R"("name":"auth"},"resolved":true})"));
  EXPECT_THAT(out.reads, ElementsAre("extension Webhook gateway-conformance-infra/auth hit",
                                     "get Service gateway-conformance-infra/infra-backend-v1 hit",
                                     "get Gateway gateway-conformance-infra/same-namespace hit"));
  // The Webhook goes to the gateways that hold the route (it is synced "toReferrers").
  const sdk::ObjectRef webhook{"portico.io", "Webhook", "gateway-conformance-infra", "auth"};
  EXPECT_THAT(out.links, ::testing::Contains(std::make_pair(webhook, PORTICO_LINK_REFERENCE)));
}

TEST_F(plugin_httproute, ConformanceRoutesAreAccepted) {
  ApplyBase();
  for (const char* route : kConformanceRoutes) {
    ProcessOutcome out = Route(route);
    ASSERT_TRUE(out.ok()) << out.status << "\n" << route;
    EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "ResolvedRefs"),
              "True/ResolvedRefs")
        << route;
  }
}

TEST_F(plugin_httproute, DefaultsAreApplied) {
  Apply({kGatewayClass,
         R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{)"
         R"("name":"gw","namespace":"default"},"spec":{"gatewayClassName":"portico",)"
         R"("listeners":[{"name":"http","port":80,"protocol":"HTTP"}]}})"});
  ProcessOutcome out =
      Route(RouteWith(R"({"parentRefs":[{"name":"gw","sectionName":"http"}],"rules":[
      {"matches":[{"headers":[{"name":"x-a","value":"1"}],"queryParams":[{"name":"q",)"
                      R"("value":"v"}]},{"method":"GET"}],
       "filters":[{"type":"RequestMirror","requestMirror":{"backendRef":{"name":"mirror",)"
                      R"("port":80}}}],
       "backendRefs":[{"name":"svc","port":80}]},
      {"filters":[{"type":"RequestRedirect","requestRedirect":{"scheme":"https"}}]}]})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(
      *out.export_json,
      HasSubstr(R"("parentRefs":[{"name":"gw","sectionName":"http",)"
                R"("group":"gateway.networking.k8s.io","kind":"Gateway","namespace":"default"}])"));
  const std::string& s = *out.synced;
  EXPECT_THAT(
      s, HasSubstr(
             R"({"headers":[{"name":"x-a","value":"1","type":"Exact"}],"queryParams":[{"name":"q",)"
             R"("value":"v","type":"Exact"}],"path":{"type":"PathPrefix","value":"/"}})"));
  EXPECT_THAT(s, HasSubstr(R"({"method":"GET","path":{"type":"PathPrefix","value":"/"}})"));
  EXPECT_THAT(s, HasSubstr(R"("backendRef":{"name":"mirror","port":80,"group":"","kind":"Service",)"
                           R"("namespace":"default","key":"","invalid":{)"));
  EXPECT_THAT(s, HasSubstr(R"("requestRedirect":{"scheme":"https","statusCode":302})"));
  EXPECT_THAT(s, HasSubstr(R"("matches":[{"path":{"type":"PathPrefix","value":"/"}}])"));

  out = Route(RouteWith(R"({"parentRefs":[{"name":"gw"}]})"));  // no rules at all
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("rules":[{"index":0,"matches":[{"path":{"type":"PathPrefix",)"
                        R"("value":"/"}}]}])"));
}

// GatewayWithAttachedRoutes (condensed): the same objects, applied in many orders, end with the
// same statuses; the fake world re-processes everything until a fixed point (fake_world.h), as
// the controller's requeue-on-read does.
TEST_F(plugin_httproute, StatusesAreIndependentOfTheOrderObjectsArrive) {
  const std::vector<std::string> objects = {
      kGatewayClass,
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"gateway-conformance-infra"}})",
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{)"
      R"("name":"gateway-with-two-attached-routes","namespace":"gateway-conformance-infra"},)"
      R"("spec":{"gatewayClassName":"portico","listeners":[{"name":"http","port":80,)"
      R"("protocol":"HTTP","hostname":"foo.example.com","allowedRoutes":{"kinds":[{)"
      R"("kind":"HTTPRoute"}],"namespaces":{"from":"Selector","selector":{"matchLabels":{)"
      R"("kubernetes.io/metadata.name":"gateway-conformance-infra"}}}}}]}})",
      kInfraBackendV1,
      kWebBackend,
      kWebBackendNamespace,
      kGrant,
      kCrossNamespaceRoute,
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{)"
      R"("name":"http-route-2","namespace":"gateway-conformance-infra"},"spec":{"parentRefs":[{)"
      R"("kind":"Gateway","name":"gateway-with-two-attached-routes",)"
      R"("namespace":"gateway-conformance-infra"}],"rules":[{"backendRefs":[{)"
      R"("name":"infra-backend-v1","port":8080}]}]}})",
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{)"
      R"("name":"http-route-not-accepted","namespace":"gateway-conformance-infra"},"spec":{)"
      R"("hostnames":["not-accepted.test.com"],"parentRefs":[{"kind":"Gateway",)"
      R"("name":"gateway-with-two-attached-routes","namespace":"gateway-conformance-infra"}],)"
      R"("rules":[{"backendRefs":[{"name":"infra-backend-v1","port":8080}]}]}})",
      kSameNamespace,
  };
  std::map<ObjectRef, std::optional<std::string>> expected;
  std::mt19937 random(20240611);
  std::vector<ObjectRef> order;
  for (int run = 0; run < 150; ++run) {
    FakeHost host;
    Load(host);
    FakeWorld world(host);
    for (const std::string& o : objects) ASSERT_TRUE(world.Put(o).ok());
    if (order.empty()) order = world.refs();
    if (run > 0) std::shuffle(order.begin(), order.end(), random);
    ASSERT_TRUE(world.Settle(order).ok());
    for (const ObjectRef& ref : world.refs()) {
      std::optional<std::string> status = world.AggregatedStatus(ref);
      if (run == 0) {
        expected[ref] = status;
      } else {
        ASSERT_EQ(status, expected[ref]) << ref.Display() << " differs in run " << run;
      }
    }
  }
  const ObjectRef gateway{kGroup, "Gateway", kInfra, "gateway-with-two-attached-routes"};
  EXPECT_THAT(*expected[gateway], HasSubstr(R"("attachedRoutes":1,)"));
  const ObjectRef same_namespace{kGroup, "Gateway", kInfra, "same-namespace"};
  EXPECT_THAT(*expected[same_namespace], HasSubstr(R"("attachedRoutes":1,)"));
  const ObjectRef not_accepted{kGroup, "HTTPRoute", kInfra, "http-route-not-accepted"};
  EXPECT_EQ(
      ParentCondition(*expected[not_accepted], "gateway-with-two-attached-routes", "Accepted"),
      "False/NoMatchingListenerHostname");
  const ObjectRef cross{kGroup, "HTTPRoute", kInfra, "reference-grant"};
  EXPECT_EQ(ParentCondition(*expected[cross], "same-namespace", "ResolvedRefs"),
            "True/ResolvedRefs");
}

TEST_F(plugin_httproute, CrossFieldRules) {
  host_.set_validate_schema(false);  // reach the processor's own checks
  const std::string backend = R"("backendRefs":[{"name":"svc","port":80}])";
  auto rule = [](std::string_view body) {
    return R"({"parentRefs":[{"name":"gw"}],"rules":[{)" + std::string(body) + "}]}";
  };
  auto path = [&](std::string_view type, std::string_view value) {
    return rule(R"("matches":[{"path":{"type":")" + std::string(type) + R"(","value":")" +
                std::string(value) + R"("}}])");
  };
  std::string many_matches;
  for (int i = 0; i < 43; ++i) {
    many_matches += std::string(i > 0 ? "," : "") + R"({"method":"GET"})";
  }
  const std::string big_rule = R"({"matches":[)" + many_matches + "]}";
  struct Case {
    std::string spec;
    std::string message;
  } cases[] = {
      {path("PathPrefix", "foo"),
       "HTTPRoute default/r: spec.rules[0].matches[0].path.value: must be an absolute path "
       "starting with \"/\" when type is PathPrefix"},
      {path("Exact", "/a//b"),
       "spec.rules[0].matches[0].path.value: must not contain \"//\" when type is Exact"},
      {path("Exact", "/a/./b"), "must not contain \"/./\""},
      {path("Exact", "/a/../b"), "must not contain \"/../\""},
      {path("PathPrefix", "/a%2Fb"), "must not contain \"%2f\" or \"%2F\""},
      {path("PathPrefix", "/a#b"), "must not contain \"#\""},
      {path("PathPrefix", "/a/.."), "must not end with \"/..\""},
      {path("PathPrefix", "/a/."), "must not end with \"/.\""},
      {path("PathPrefix", "/a b"), "must only contain valid characters"},
      {path("PathPrefix", "/a%zz"), "must only contain valid characters"},
      {path("RegularExpression", ""), "must not be empty for type RegularExpression"},
      {path("Glob", "/x"),
       "spec.rules[0].matches[0].path.type: \"Glob\" is not Exact, PathPrefix or "
       "RegularExpression"},
      {rule(R"("matches":[{"headers":[{"name":"bad header","value":"x"}]}])"),
       "spec.rules[0].matches[0].headers[0].name: \"bad header\" is not a valid name"},
      {rule(R"("matches":[{"headers":[{"name":"x-a","value":"1"},{"name":"x-a","value":"2"}]}])"),
       "spec.rules[0].matches[0].headers[1].name: duplicate name \"x-a\""},
      {rule(R"("matches":[{"queryParams":[{"name":"q","value":"1"},{"name":"q","value":"2"}]}])"),
       "spec.rules[0].matches[0].queryParams[1].name: duplicate name \"q\""},
      {rule(R"("matches":[{"method":"FETCH"}])"),
       "spec.rules[0].matches[0].method: \"FETCH\" is not an HTTP method"},
      {rule(R"("filters":[{"type":"RequestRedirect","requestRedirect":{"scheme":"https"}},{)"
            R"("type":"URLRewrite","urlRewrite":{"hostname":"a.example.com"}}])"),
       "spec.rules[0].filters: may specify either RequestRedirect or URLRewrite, but not both"},
      {rule(R"("filters":[{"type":"RequestHeaderModifier","requestHeaderModifier":{"remove":[)"
            R"("a"]}},{"type":"RequestHeaderModifier","requestHeaderModifier":{"remove":[)"
            R"("b"]}}])"),
       "spec.rules[0].filters[1]: RequestHeaderModifier filter cannot be repeated"},
      {rule(R"("filters":[{"type":"RequestHeaderModifier","requestHeaderModifier":{},)"
            R"("urlRewrite":{}}])"),
       "spec.rules[0].filters[0].urlRewrite: must be nil if the filter.type is not URLRewrite"},
      {rule(R"("filters":[{"type":"URLRewrite"}])"),
       "spec.rules[0].filters[0].urlRewrite: must be specified for URLRewrite filter.type"},
      {rule(R"("filters":[{"type":"Teleport","teleport":{}}])"),
       "spec.rules[0].filters[0].type: unsupported filter type \"Teleport\""},
      {rule(R"("filters":[{"type":"RequestRedirect","requestRedirect":{"scheme":"https"}}],)" +
            backend),
       "spec.rules[0].filters: RequestRedirect filter must not be used together with backendRefs"},
      {rule(R"("matches":[{"path":{"type":"Exact","value":"/a"}}],"filters":[{)"
            R"("type":"URLRewrite","urlRewrite":{"path":{"type":"ReplacePrefixMatch",)"
            R"("replacePrefixMatch":"/b"}}}])"),
       "spec.rules[0].filters[0].urlRewrite.path.replacePrefixMatch: When using URLRewrite filter "
       "with path.replacePrefixMatch, exactly one PathPrefix match must be specified"},
      {rule(R"("matches":[{"path":{"type":"PathPrefix","value":"/a"}},{"path":{)"
            R"("type":"PathPrefix","value":"/b"}}],"filters":[{"type":"RequestRedirect",)"
            R"("requestRedirect":{"path":{"type":"ReplacePrefixMatch",)"
            R"("replacePrefixMatch":"/c"}}}])"),
       "When using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix "
       "match must be specified"},
      {rule(R"("matches":[{"path":{"type":"Exact","value":"/a"}}],)"
            R"("backendRefs":[{"name":"svc","port":80,"filters":[{"type":"URLRewrite",)"
            R"("urlRewrite":{"path":{"type":"ReplacePrefixMatch",)"
            R"("replacePrefixMatch":"/b"}}}]}])"),
       "spec.rules[0].backendRefs[0].filters[0].urlRewrite.path.replacePrefixMatch: When using "
       "URLRewrite filter"},
      {rule(
           R"("filters":[{"type":"URLRewrite","urlRewrite":{"path":{"type":"ReplaceFullPath"}}}])"),
       "spec.rules[0].filters[0].urlRewrite.path.replaceFullPath: replaceFullPath must be "
       "specified when type is set to 'ReplaceFullPath'"},
      {rule(R"("filters":[{"type":"URLRewrite","urlRewrite":{"path":{"type":"ReplaceFullPath",)"
            R"("replacePrefixMatch":"/x"}}}])"),
       "replaceFullPath must be specified"},
      {rule(R"("filters":[{"type":"URLRewrite","urlRewrite":{"path":{"type":"ReplacePrefixMatch",)"
            R"("replacePrefixMatch":"/x","replaceFullPath":"/y"}}}])"),
       "type must be 'ReplaceFullPath' when replaceFullPath is set"},
      {rule(R"("filters":[{"type":"RequestRedirect","requestRedirect":{"statusCode":305}}])"),
       "requestRedirect.statusCode: must be 301, 302, 303, 307 or 308"},
      {rule(R"("filters":[{"type":"RequestRedirect","requestRedirect":{)"
            R"("hostname":"*.example.com"}}])"),
       "requestRedirect.hostname: \"*.example.com\" is not a valid hostname (no wildcards)"},
      {rule(R"("filters":[{"type":"RequestHeaderModifier","requestHeaderModifier":{"set":[{)"
            R"("name":"a","value":"1"},{"name":"a","value":"2"}]}}])"),
       "requestHeaderModifier.set[1].name: duplicate header name \"a\""},
      {rule(R"("filters":[{"type":"RequestMirror","requestMirror":{"backendRef":{"name":"m",)"
            R"("port":80},"percent":10,"fraction":{"numerator":1}}}])"),
       "spec.rules[0].filters[0].requestMirror: only one of percent or fraction may be specified"},
      {rule(R"("filters":[{"type":"RequestMirror","requestMirror":{"backendRef":{"name":"m",)"
            R"("port":80},"fraction":{"numerator":5,"denominator":4}}}])"),
       "requestMirror.fraction: numerator must be less than or equal to denominator"},
      {rule(R"("filters":[{"type":"RequestMirror","requestMirror":{"backendRef":{"name":"m"}}}])"),
       "requestMirror.backendRef.port: is required for a Service reference"},
      {rule(R"("backendRefs":[{"name":"svc","port":80,"weight":1000001}])"),
       "spec.rules[0].backendRefs[0].weight: must be 0-1000000"},
      {rule(R"("backendRefs":[{"name":"svc","port":80,"weight":-1}])"),
       "spec.rules[0].backendRefs[0].weight: must be 0-1000000"},
      {rule(R"("backendRefs":[{"name":"svc"}])"),
       "spec.rules[0].backendRefs[0].port: is required for a Service reference"},
      {rule(R"("timeouts":{"request":"1s","backendRequest":"2s"})"),
       "spec.rules[0].timeouts.backendRequest: backendRequest timeout cannot be longer than "
       "request timeout"},
      {rule(R"("timeouts":{"request":"1.5s"})"),
       "spec.rules[0].timeouts.request: must be a duration"},
      {rule(R"("timeouts":{"request":"1h1m1s1ms1s"})"),
       "spec.rules[0].timeouts.request: must be a duration"},
      {R"({"parentRefs":[{"name":"gw"},{"name":"gw"}]})",
       "spec.parentRefs[0]: sectionName or port must be specified when parentRefs includes 2 or "
       "more references to the same parent"},
      {R"({"parentRefs":[{"name":"gw","sectionName":"a"},{"name":"gw"}]})",
       "sectionName or port must be specified"},
      {R"({"parentRefs":[{"name":"gw","sectionName":"a"},{"name":"gw","sectionName":"a"}]})",
       "spec.parentRefs[1]: sectionName or port must be unique when parentRefs includes 2 or more "
       "references to the same parent"},
      {R"({"parentRefs":[{"name":"gw","port":0}]})", "spec.parentRefs[0].port: must be 1-65535"},
      {R"({"hostnames":["Example.com"]})",
       "spec.hostnames[0]: \"Example.com\" is not a valid hostname"},
      {R"({"hostnames":["192.168.0.1"]})",
       "spec.hostnames[0]: \"192.168.0.1\" is not a valid hostname"},
      {R"({"rules":[{"name":"a"},{"name":"a"}]})",
       "spec.rules[1].name: rule name \"a\" must be unique within the route (also spec.rules[0])"},
      {"{\"rules\":[" + big_rule + "," + big_rule + "," + big_rule + "]}",
       "spec.rules: the total number of matches across all rules (129) must be at most 128"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Route(RouteWith(c.spec));
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.spec;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message)) << c.spec;
  }
  // Distinct sections or ports to the same parent are fine, as are two namespaces.
  for (const char* ok :
       {R"({"parentRefs":[{"name":"gw","sectionName":"a"},{"name":"gw","sectionName":"b"}]})",
        R"({"parentRefs":[{"name":"gw","port":80},{"name":"gw","port":443}]})",
        R"({"parentRefs":[{"name":"gw"},{"name":"gw","namespace":"other"}]})"}) {
    EXPECT_TRUE(Route(RouteWith(ok)).ok()) << ok;
  }
}

TEST_F(plugin_httproute, CorsFiltersAreAcceptedAndValidated) {
  ApplyBase();
  // HTTPRouteCORS's "cors-wildcard-methods-headers" and "cors-multiple-origins-methods-headers".
  ProcessOutcome out = Route(InfraRoute(
      R"("parentRefs":[{"name":"same-namespace"}],"rules":[)"
      R"({"filters":[{"type":"CORS","cors":{"allowOrigins":["*"],"allowMethods":["*"],)"
      R"("allowHeaders":["*"],"allowCredentials":true}}],"matches":[{"path":{)"
      R"("type":"PathPrefix","value":"/cors-wildcard-methods-headers"}}],)"
      R"("backendRefs":[{"name":"infra-backend-v1","port":8080}]},)"
      R"({"filters":[{"type":"CORS","cors":{"allowOrigins":["https://www.foo.com",)"
      R"("https://*.bar.com"],"allowMethods":["GET","OPTIONS"],"allowHeaders":["x-header-1",)"
      R"("x-header-2"],"exposeHeaders":["x-header-3","x-header-4"],"allowCredentials":true,)"
      R"("maxAge":3600}}],"matches":[{"path":{"type":"PathPrefix","value":"/cors-1"}}],)"
      R"("backendRefs":[{"name":"infra-backend-v1","port":8080}]}])"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "Accepted"), "True/Accepted");
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "ResolvedRefs"),
            "True/ResolvedRefs");
  EXPECT_EQ(ParentCondition(*out.status_json, "same-namespace", "PartiallyInvalid"), "");
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_THAT(*out.synced, HasSubstr(R"("rules":[{"index":0,)"));
  EXPECT_THAT(*out.synced, HasSubstr(R"({"index":1,)"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("cors":{"allowOrigins":["https://www.foo.com",)"));

  // The CRD's rules, checked by the processor itself (a schema-less host).
  host_.set_validate_schema(false);
  auto cors = [](std::string_view config, std::string_view more = "") {
    return R"({"parentRefs":[{"name":"gw"}],"rules":[{"filters":[{"type":"CORS","cors":)" +
           std::string(config) + "}" + std::string(more) + "]}]}";
  };
  struct Case {
    std::string spec;
    std::string message;
  } cases[] = {
      {cors(R"({"allowOrigins":["*","https://www.foo.com"]})"),
       "HTTPRoute default/r: spec.rules[0].filters[0].cors.allowOrigins: cannot contain '*' "
       "alongside other origins"},
      {cors(R"({"allowOrigins":["www.foo.com"]})"),
       "spec.rules[0].filters[0].cors.allowOrigins[0]: \"www.foo.com\" is not \"*\" or an origin"},
      {cors(R"({"allowOrigins":["https://www.foo.com/path"]})"), "is not \"*\" or an origin"},
      {cors(R"({"allowOrigins":["https://www.foo.com:0"]})"), "is not \"*\" or an origin"},
      {cors(R"({"allowOrigins":["https://www.foo.com:65536"]})"), "is not \"*\" or an origin"},
      {cors(R"({"allowOrigins":["h://www.foo.com"]})"), "is not \"*\" or an origin"},
      {cors(R"({"allowOrigins":["https://a.com","https://a.com"]})"),
       "cors.allowOrigins[1]: duplicate value \"https://a.com\""},
      {cors(R"({"allowMethods":["GET","*"]})"),
       "cors.allowMethods: cannot contain '*' alongside other methods"},
      {cors(R"({"allowMethods":["FETCH"]})"),
       "cors.allowMethods[0]: \"FETCH\" is not an HTTP method or \"*\""},
      {cors(R"({"allowHeaders":["bad header"]})"),
       "cors.allowHeaders[0]: \"bad header\" is not a valid header name"},
      {cors(R"({"exposeHeaders":["x-a","x-a"]})"),
       "cors.exposeHeaders[1]: duplicate value \"x-a\""},
      {cors(R"({"allowCredentials":"yes"})"), "cors.allowCredentials: must be a boolean"},
      {cors(R"({"maxAge":0})"), "cors.maxAge: must be at least 1 (seconds)"},
      {cors("{}", R"(,{"type":"CORS","cors":{}})"),
       "spec.rules[0].filters[1]: CORS filter cannot be repeated"},
  };
  for (const Case& c : cases) {
    out = Route(RouteWith(c.spec));
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.spec;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message)) << c.spec;
  }
  // What the CRD accepts: a lone wildcard host, an explicit port, other schemes, "*" headers.
  EXPECT_TRUE(Route(RouteWith(cors(R"({"allowOrigins":["https://*","http://localhost:3000",)"
                                   R"("app-scheme://x.y"],"allowHeaders":["*"],)"
                                   R"("exposeHeaders":["*"],"maxAge":1})")))
                  .ok());
}

}  // namespace
}  // namespace portico::plugins::httproute
