// httproute_test: the HTTPRoute kind in the SDK's fake host, with the plugins it reads (Gateway,
// Service, ReferenceGrant) and Webhook for ExtensionRef filters. Valid objects are conformance
// manifests of the Gateway API (kubernetes-sigs/gateway-api, Apache-2.0).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_host.h"

namespace portico::plugins::httproute {
namespace {

using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kGroup[] = "gateway.networking.k8s.io";

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
constexpr char kWebBackend[] =
    R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web-backend",
  "namespace":"gateway-conformance-web-backend"},"spec":{"selector":{"app":"web-backend"},
  "ports":[{"protocol":"TCP","port":8080,"targetPort":3000}]}})";

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

class plugin_httproute : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path : {PLUGIN_PATH, GATEWAY_PLUGIN_PATH, SERVICE_PLUGIN_PATH,
                             REFERENCEGRANT_PLUGIN_PATH, WEBHOOK_PLUGIN_PATH}) {
      ASSERT_TRUE(host_.Load(path).ok()) << path;
    }
  }
  void ApplyBase() {
    for (const char* object : {kGatewayClass, kSameNamespace, kInfraBackendV1, kWebBackend}) {
      ProcessOutcome out = host_.Apply(object);
      ASSERT_TRUE(out.ok()) << out.status;
    }
  }
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
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_ALWAYS);
}

TEST_F(plugin_httproute, SimpleRouteIsNormalisedAndAccepted) {
  ApplyBase();
  ProcessOutcome out = Route(kSimpleRoute);
  ASSERT_TRUE(out.ok()) << out.status;
  const std::string parent =
      R"({"name":"same-namespace","group":"gateway.networking.k8s.io","kind":"Gateway",)"
      R"("namespace":"gateway-conformance-infra"})";
  EXPECT_EQ(
      out.synced,
      R"({"metadata":{"name":"gateway-conformance-infra-test",)"
      R"("namespace":"gateway-conformance-infra","generation":1},)"
      R"("parentRefs":[)" +
          parent +
          R"(],"hostnames":[],"rules":[{"backendRefs":[{"name":"infra-backend-v1","port":8080,)"
          R"("group":"","kind":"Service","namespace":"gateway-conformance-infra","weight":1}],)"
          R"("matches":[{"path":{"type":"PathPrefix","value":"/"}}]}]})");
  EXPECT_EQ(out.export_json, R"({"parentRefs":[)" + parent + R"(],"hostnames":[]})");
  EXPECT_EQ(out.status_json,
            R"({"parents":[{"parentRef":)" + parent +
                R"(,"conditions":[)"
                R"({"type":"Accepted","status":"True","reason":"Accepted","message":"",)"
                R"("observedGeneration":1},)"
                R"({"type":"ResolvedRefs","status":"True","reason":"ResolvedRefs","message":"",)"
                R"("observedGeneration":1}]}]})");
  EXPECT_THAT(out.reads, ElementsAre("get Gateway gateway-conformance-infra/same-namespace hit",
                                     "get Service gateway-conformance-infra/infra-backend-v1 hit"));
}

TEST_F(plugin_httproute, RouteBeforeItsGatewayAndServiceIsFixedWhenTheyArrive) {
  ProcessOutcome out = Route(kSimpleRoute);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"({"type":"Accepted","status":"False","reason":"NoMatchingParent",)"
                R"("message":"Gateway gateway-conformance-infra/same-namespace does not exist")"));
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"({"type":"ResolvedRefs","status":"False","reason":"BackendNotFound",)"
                R"("message":"spec.rules[0].backendRefs[)"
                R"(0]: Service gateway-conformance-infra/infra-backend-v1 does not exist")"));
  // Both misses are reads, so the host requeues the route when either object appears.
  EXPECT_THAT(out.reads,
              ElementsAre("get Gateway gateway-conformance-infra/same-namespace miss",
                          "get Service gateway-conformance-infra/infra-backend-v1 miss"));
  const std::string synced_before = *out.synced;
  ApplyBase();
  out = Route(kSimpleRoute);
  EXPECT_THAT(*out.status_json, Not(HasSubstr("\"False\"")));
  EXPECT_EQ(*out.synced, synced_before);  // the view does not depend on processing order
}

TEST_F(plugin_httproute, CrossNamespaceBackendsNeedAReferenceGrant) {
  ApplyBase();
  ProcessOutcome out = Route(kCrossNamespaceRoute);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("reason":"RefNotPermitted","message":"spec.rules[0].backendRefs[0]: Service )"
                R"(gateway-conformance-web-backend/web-backend is in another namespace)"));
  EXPECT_THAT(out.reads, ElementsAre("get Gateway gateway-conformance-infra/same-namespace hit",
                                     "list ReferenceGrant gateway-conformance-web-backend",
                                     "reference HTTPRoute gateway-conformance-infra -> Service "
                                     "gateway-conformance-web-backend/web-backend denied"));
  ASSERT_TRUE(host_.Apply(kGrant).ok());
  out = Route(kCrossNamespaceRoute);
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"ResolvedRefs","status":"True")"));
  host_.Delete({kGroup, "ReferenceGrant", "gateway-conformance-web-backend", "reference-grant"});
  out = Route(kCrossNamespaceRoute);
  EXPECT_THAT(*out.status_json, HasSubstr("RefNotPermitted"));
}

TEST_F(plugin_httproute, InvalidBackendsAreReportedNotRejected) {
  ApplyBase();
  // HTTPRouteInvalidBackendRefUnknownKind, HTTPRouteInvalidNonExistentBackendRef, a wrong port.
  struct Case {
    const char* backend;
    const char* message;
  } cases[] = {
      {R"({"group":"unknown.example.com","kind":"UnknownKind","name":"infra-backend-v2",)"
       R"("port":8080})",
       R"("reason":"InvalidKind","message":"spec.rules[0].backendRefs[)"
       R"(0]: backend kind UnknownKind.unknown.example.com is not supported")"},
      {R"({"name":"nonexistent","port":8080})", R"("reason":"BackendNotFound")"},
      {R"({"name":"infra-backend-v1","port":9999})",
       R"("message":"spec.rules[0].backendRefs[)"
       R"(0]: Service gateway-conformance-infra/infra-backend-v1 has no port 9999")"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out =
        Route(std::string(
                  R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",)"
                  R"("metadata":{"name":"r","namespace":"gateway-conformance-infra"},)"
                  R"("spec":{"parentRefs":[{"name":"same-namespace"}],"rules":[{"backendRefs":[)") +
              c.backend + "]}]}}");
    ASSERT_TRUE(out.ok()) << out.status;
    EXPECT_THAT(*out.status_json, HasSubstr(c.message)) << c.backend;
  }
}

TEST_F(plugin_httproute, ParentSectionNameAndPortMustMatchAListener) {
  ApplyBase();
  const std::string head =
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"r",)"
      R"("namespace":"gateway-conformance-infra"},"spec":{"parentRefs":[)";
  const std::string tail =
      R"(],"rules":[{"backendRefs":[{"name":"infra-backend-v1","port":8080}]}]}})";
  ProcessOutcome out =
      Route(head + R"({"name":"same-namespace","sectionName":"http","port":80})" + tail);
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"Accepted","status":"True")"));
  // HTTPRouteInvalidParentRefNotMatchingSectionName / ...NotMatchingListenerPort.
  out = Route(head + R"({"name":"same-namespace","sectionName":"unknown-section"})" + tail);
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("reason":"NoMatchingParent",)"
                        R"("message":"Gateway gateway-conformance-infra/same-namespace )"
                        R"(has no listener \"unknown-section\"")"));
  out = Route(head + R"({"name":"same-namespace","port":81})" + tail);
  EXPECT_THAT(*out.status_json, HasSubstr(R"(has no listener on port 81")"));
  out = Route(head + R"({"name":"same-namespace","sectionName":"http","port":81})" + tail);
  EXPECT_THAT(*out.status_json, HasSubstr(R"(has no listener \"http\" on port 81")"));
}

TEST_F(plugin_httproute, ExtensionRefFiltersResolveThroughTheHost) {
  ApplyBase();
  const std::string route =
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"r",)"
      R"("namespace":"gateway-conformance-infra"},"spec":{"parentRefs":[{)"
      R"("name":"same-namespace"}],)"
      R"("rules":[{"filters":[{"type":"ExtensionRef","extensionRef":{"group":"portico.io",)"
      R"("kind":"Webhook","name":"auth"}}],)"
      R"("backendRefs":[{"name":"infra-backend-v1","port":8080}]}]}})";
  ProcessOutcome out = Route(route);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(
          R"("reason":"FilterNotFound","message":"spec.rules[0].filters[0].extensionRef: )"
          R"(Webhook gateway-conformance-infra/auth does not exist or is not a route filter")"));
  ASSERT_TRUE(
      host_
          .Apply(R"({"apiVersion":"portico.io/v1alpha1","kind":"Webhook","metadata":{"name":"auth",
      "namespace":"gateway-conformance-infra"},"spec":{"url":"http://auth.example.com/check"}})")
          .ok());
  out = Route(route);
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"ResolvedRefs","status":"True")"));
  EXPECT_THAT(out.reads, ElementsAre("get Gateway gateway-conformance-infra/same-namespace hit",
                                     "extension Webhook gateway-conformance-infra/auth hit",
                                     "get Service gateway-conformance-infra/infra-backend-v1 hit"));
}

TEST_F(plugin_httproute, ConformanceRoutesAreAccepted) {
  ApplyBase();
  for (const char* route : kConformanceRoutes) {
    ProcessOutcome out = Route(route);
    ASSERT_TRUE(out.ok()) << out.status << "\n" << route;
    EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"ResolvedRefs","status":"True")")) << route;
  }
}

TEST_F(plugin_httproute, DefaultsAreApplied) {
  ProcessOutcome out =
      Route(RouteWith(R"({"parentRefs":[{"name":"gw","sectionName":"http"}],"rules":[
      {"matches":[{"headers":[{"name":"x-a","value":"1"}],"queryParams":[{"name":"q",)"
                      R"("value":"v"}]},{"method":"GET"}],
       "filters":[{"type":"RequestMirror","requestMirror":{"backendRef":{"name":"mirror",)"
                      R"("port":80}}}],
       "backendRefs":[{"name":"svc","port":80}]},
      {"filters":[{"type":"RequestRedirect","requestRedirect":{"scheme":"https"}}]}]})"));
  ASSERT_TRUE(out.ok()) << out.status;
  const std::string& s = *out.synced;
  EXPECT_THAT(
      s,
      HasSubstr(R"("parentRefs":[{"name":"gw","sectionName":"http",)"
                R"("group":"gateway.networking.k8s.io","kind":"Gateway","namespace":"default"}])"));
  EXPECT_THAT(
      s, HasSubstr(
             R"({"headers":[{"name":"x-a","value":"1","type":"Exact"}],"queryParams":[{"name":"q",)"
             R"("value":"v","type":"Exact"}],"path":{"type":"PathPrefix","value":"/"}})"));
  EXPECT_THAT(s, HasSubstr(R"({"method":"GET","path":{"type":"PathPrefix","value":"/"}})"));
  EXPECT_THAT(s, HasSubstr(R"("backendRef":{"name":"mirror","port":80,"group":"","kind":"Service",)"
                           R"("namespace":"default"})"));
  EXPECT_THAT(s, HasSubstr(R"("requestRedirect":{"scheme":"https","statusCode":302})"));
  EXPECT_THAT(s, HasSubstr(R"("matches":[{"path":{"type":"PathPrefix","value":"/"}}])"));

  out = Route(RouteWith(R"({"parentRefs":[{"name":"gw"}]})"));  // no rules at all
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("rules":[{"matches":[{"path":{"type":"PathPrefix","value":"/"}}]}])"));
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

}  // namespace
}  // namespace portico::plugins::httproute
