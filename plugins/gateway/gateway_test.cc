// gateway_test: the GatewayClass and Gateway kinds in the SDK's fake host, with the Secret and
// ReferenceGrant plugins loaded beside them for certificate references.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_host.h"

namespace portico::plugins::gateway {
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

// The conformance base Gateways, with {GATEWAY_CLASS_NAME} replaced.
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
constexpr char kHttps[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"same-namespace-with-https-listener","namespace":"gateway-conformance-infra"},
  "spec":{"gatewayClassName":"portico","listeners":[
    {"name":"https","port":443,"protocol":"HTTPS","allowedRoutes":{"namespaces":{"from":"Same"}},
     "tls":{"certificateRefs":[{"group":"","kind":"Secret",)"
    R"("name":"tls-validity-checks-certificate","namespace":"gateway-conformance-infra"}]}},
    {"name":"https-with-hostname","port":443,"hostname":"second-example.org","protocol":"HTTPS",
     "allowedRoutes":{"namespaces":{"from":"Same"}},
     "tls":{"certificateRefs":[{"group":"","kind":"Secret",)"
    R"("name":"tls-validity-checks-certificate","namespace":"gateway-conformance-infra"}]}},
    {"name":"https-with-wildcard-hostname","port":443,"hostname":"*.wildcard.org",)"
    R"("protocol":"HTTPS",
     "allowedRoutes":{"namespaces":{"from":"Same"}},
     "tls":{"certificateRefs":[{"group":"","kind":"Secret",)"
    R"("name":"tls-validity-checks-certificate",)"
    R"("namespace":"gateway-conformance-infra"}]}}]}})";
constexpr char kCertificate[] = R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls",
  "metadata":{"name":"tls-validity-checks-certificate","namespace":"gateway-conformance-infra"},
  "data":{"tls.crt":"LS0tLS1CRUdJTg==","tls.key":"LS0tLS1CRUdJTg=="}})";

// GatewaySecretReferenceGrantSpecific: a certificate in another namespace.
constexpr char kCrossNamespaceCert[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"gateway-secret-reference-grant-specific",)"
    R"("namespace":"gateway-conformance-infra"},
  "spec":{"gatewayClassName":"portico","listeners":[{"name":"https","port":443,"protocol":"HTTPS",
    "allowedRoutes":{"namespaces":{"from":"All"}},
    "tls":{"certificateRefs":[{"group":"","kind":"Secret","name":"certificate",)"
    R"("namespace":"gateway-conformance-web-backend"}]}}]}})";
constexpr char kWebCertificate[] = R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls",
  "metadata":{"name":"certificate","namespace":"gateway-conformance-web-backend"},
  "data":{"tls.crt":"LS0tLS1CRUdJTg==","tls.key":"LS0tLS1CRUdJTg=="}})";
constexpr char kSecretGrant[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant",
  "metadata":{"name":"reference-grant-specific","namespace":"gateway-conformance-web-backend"},
  "spec":{"from":[{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
    R"("namespace":"gateway-conformance-infra"}],
          "to":[{"group":"","kind":"Secret","name":"certificate"}]}})";

std::string GatewayWithListeners(std::string_view listeners, std::string_view extra = "") {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{)"
         R"("name":"web",)"
         R"("namespace":"default"},"spec":{"gatewayClassName":"portico","listeners":)" +
         std::string(listeners) + std::string(extra) + "}}";
}

class plugin_gateway : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(SECRET_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(REFERENCEGRANT_PLUGIN_PATH).ok());
  }
  ProcessOutcome Gateway(const std::string& json) { return host_.Process(kGroup, "Gateway", json); }
  FakeHost host_;
};

TEST_F(plugin_gateway, RegistersBothKinds) {
  const auto* gc = host_.FindKind(kGroup, "GatewayClass");
  ASSERT_NE(gc, nullptr);
  EXPECT_EQ(gc->scope, PORTICO_SCOPE_CLUSTER);
  EXPECT_EQ(gc->short_names, std::vector<std::string>{"gc"});
  EXPECT_EQ(gc->sync_policy, PORTICO_SYNC_NEVER);
  const auto* gw = host_.FindKind(kGroup, "Gateway");
  ASSERT_NE(gw, nullptr);
  EXPECT_EQ(gw->short_names, std::vector<std::string>{"gtw"});
  EXPECT_EQ(gw->versions, (std::vector<std::string>{"v1", "v1beta1"}));
  EXPECT_EQ(gw->reads,
            (std::vector<std::string>{"GatewayClass.gateway.networking.k8s.io", "Namespace",
                                      "Secret", "ReferenceGrant.gateway.networking.k8s.io"}));
  EXPECT_EQ(gw->sync_policy, PORTICO_SYNC_ALWAYS);
}

TEST_F(plugin_gateway, GatewayClassExportsItsControllerName) {
  ProcessOutcome out = host_.Process(kGroup, "GatewayClass", kGatewayClass);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.ref.Display(), "GatewayClass portico");
  EXPECT_EQ(out.export_json, R"({"controllerName":"portico.io/gateway-controller"})");
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"Accepted","status":"True")"));
  EXPECT_FALSE(out.synced.has_value());

  host_.set_validate_schema(false);
  for (const char* bad : {"portico", "Portico.io/x", "portico.io/", "portico.io/a b"}) {
    out = host_.Process(
        kGroup, "GatewayClass",
        std::string(R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",)"
                    R"("metadata":{"name":"c"},"spec":{"controllerName":")") +
            bad + "\"}}");
    EXPECT_THAT(out.status.message(),
                HasSubstr("GatewayClass c: spec.controllerName: \"" + std::string(bad)))
        << bad;
  }
  out = host_.Process(kGroup, "GatewayClass",
                      R"({"apiVersion":"gateway.networking.k8s.io/v1beta1","kind":"GatewayClass",
      "metadata":{"name":"c"},"spec":{"controllerName":"portico.io/x","parametersRef":{)"
                      R"("group":"","kind":"ConfigMap"}}})");
  EXPECT_THAT(out.status.message(),
              HasSubstr("GatewayClass c: spec.parametersRef.name: is required"));
}

TEST_F(plugin_gateway, HttpGatewaySyncsExportsAndAccepts) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ProcessOutcome out = Gateway(kSameNamespace);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(
      out.synced,
      R"({"metadata":{"name":"same-namespace","namespace":"gateway-conformance-infra",)"
      R"("generation":1},)"
      R"("gatewayClassName":"portico","listeners":[{"name":"http","port":80,"protocol":"HTTP"}],)"
      R"("addresses":[]})");
  EXPECT_EQ(
      out.export_json,
      R"({"gatewayClassName":"portico","listeners":[{"name":"http","port":80,"protocol":"HTTP",)"
      R"("allowedRoutes":{"namespaces":{"from":"Same"},"kinds":[{)"
      R"("group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]}}]})");
  EXPECT_EQ(out.status_json,
            R"({"conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"",)"
            R"("observedGeneration":1}],)"
            R"("listeners":[{"name":"http","supportedKinds":[{"group":"gateway.networking.k8s.io",)"
            R"("kind":"HTTPRoute"}],)"
            R"("conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"",)"
            R"("observedGeneration":1},)"
            R"({"type":"ResolvedRefs","status":"True","reason":"ResolvedRefs","message":"",)"
            R"("observedGeneration":1}]}]})");
  EXPECT_THAT(out.reads, ElementsAre("get GatewayClass portico hit"));
}

TEST_F(plugin_gateway, GatewayBeforeItsClassIsPendingUntilReprocessed) {
  ProcessOutcome out = Gateway(kSameNamespace);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(out.reads, ElementsAre("get GatewayClass portico miss"));
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"({"type":"Accepted","status":"Unknown","reason":"Pending",)"
                        R"("message":"GatewayClass \"portico\" not found")"));
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());  // the host requeues the Gateway on this change
  out = Gateway(kSameNamespace);
  EXPECT_THAT(*out.status_json, HasSubstr(R"("conditions":[{"type":"Accepted","status":"True")"));
}

TEST_F(plugin_gateway, SelectorIsExportedForRouteAttachment) {
  ProcessOutcome out = Gateway(kBackendNamespaces);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.export_json,
              HasSubstr(R"("namespaces":{"from":"Selector","selector":{"matchLabels":{)"
                        R"("gateway-conformance":"backend"}}})"));
}

TEST_F(plugin_gateway, HttpsListenersResolveTheirCertificates) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ProcessOutcome out = Gateway(kHttps);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("reason":"InvalidCertificateRef","message":"Secret )"
                R"(gateway-conformance-infra/tls-validity-checks-certificate does not exist")"));
  ASSERT_TRUE(host_.Apply(kCertificate).ok());
  out = Gateway(kHttps);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.status_json, Not(HasSubstr("InvalidCertificateRef")));
  EXPECT_THAT(out.reads,
              ElementsAre("get GatewayClass portico hit",
                          "secret gateway-conformance-infra/tls-validity-checks-certificate hit",
                          "secret gateway-conformance-infra/tls-validity-checks-certificate hit",
                          "secret gateway-conformance-infra/tls-validity-checks-certificate hit"));
  EXPECT_THAT(
      *out.synced,
      HasSubstr(R"({"name":"https-with-wildcard-hostname","port":443,"protocol":"HTTPS",)"
                R"("hostname":"*.wildcard.org","tls":{"mode":"Terminate","certificateRefs":)"
                R"([{"group":"","kind":"Secret","namespace":"gateway-conformance-infra",)"
                R"("name":"tls-validity-checks-certificate"}]}})"));
  EXPECT_EQ(out.synced->find("LS0t"), std::string::npos);  // no key material in the view
}

TEST_F(plugin_gateway, CertificateRefsFollowTheGatewayApiRules) {
  // GatewayInvalidTLSConfiguration: wrong group, wrong kind, not a TLS Secret.
  host_.SetSecret("default", "opaque", "Opaque", {{"tls.crt", "YQ=="}, {"tls.key", "Yg=="}});
  struct Case {
    const char* ref;
    const char* reason;
  } cases[] = {
      {R"({"group":"wrong.group.company.io","kind":"Secret","name":"c"})", "InvalidCertificateRef"},
      {R"({"group":"","kind":"WrongKind","name":"c"})", "InvalidCertificateRef"},
      {R"({"name":"opaque"})", "InvalidCertificateRef"},
      {R"({"name":"nonexistent-certificate"})", "InvalidCertificateRef"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Gateway(GatewayWithListeners(
        std::string(
            R"([{"name":"https","port":443,"protocol":"HTTPS","tls":{"certificateRefs":[)") +
        c.ref + "]}}]"));
    ASSERT_TRUE(out.ok()) << out.status;
    EXPECT_THAT(
        *out.status_json,
        HasSubstr(std::string(R"("type":"ResolvedRefs","status":"False","reason":")") + c.reason))
        << c.ref;
  }
}

TEST_F(plugin_gateway, CrossNamespaceCertificatesNeedAReferenceGrant) {
  ASSERT_TRUE(host_.Apply(kWebCertificate).ok());
  ProcessOutcome out = Gateway(kCrossNamespaceCert);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.status_json, HasSubstr(R"("reason":"RefNotPermitted")"));
  EXPECT_THAT(out.reads, ElementsAre("get GatewayClass portico miss",
                                     "list ReferenceGrant gateway-conformance-web-backend",
                                     "reference Gateway gateway-conformance-infra -> Secret "
                                     "gateway-conformance-web-backend/certificate denied"));
  ASSERT_TRUE(host_.Apply(kSecretGrant).ok());
  out = Gateway(kCrossNamespaceCert);
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"ResolvedRefs","status":"True")"));
}

TEST_F(plugin_gateway, UnsupportedRouteKindsAndProtocolsAreReportedNotRejected) {
  // GatewayInvalidRouteKind.
  ProcessOutcome out = Gateway(GatewayWithListeners(
      R"([{"name":"http","port":80,"protocol":"HTTP","allowedRoutes":{"namespaces":{)"
      R"("from":"All"},"kinds":[{"kind":"InvalidRoute"}]}}])"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("supportedKinds":[],"conditions":[{"type":"Accepted","status":"True")"));
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("reason":"InvalidRouteKinds","message":"unsupported route kinds: )"
                        R"(InvalidRoute.gateway.networking.k8s.io")"));
  out = Gateway(GatewayWithListeners(
      R"([{"name":"http","port":80,"protocol":"HTTP","allowedRoutes":{"kinds":[{)"
      R"("kind":"InvalidRoute"},{"kind":"HTTPRoute"}]}}])"));
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("supportedKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}])"));
  EXPECT_THAT(*out.export_json,
              HasSubstr(R"("kinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}])"));

  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  out = Gateway(GatewayWithListeners(R"([{"name":"tcp","port":5000,"protocol":"TCP"}])"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"({"type":"Accepted","status":"False","reason":"ListenersNotValid")"));
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("reason":"UnsupportedProtocol","message":"protocol TCP is not supported")"));
}

TEST_F(plugin_gateway, CrossFieldRules) {
  host_.set_validate_schema(false);  // reach the processor's own checks
  const std::string http = R"({"name":"http","port":80,"protocol":"HTTP"})";
  const std::string tls = R"("tls":{"certificateRefs":[{"name":"cert"}]})";
  struct Case {
    std::string listeners;
    std::string extra;
    const char* message;
  } cases[] = {
      {"[" + http + "," + R"({"name":"http","port":8080,"protocol":"HTTP"}])", "",
       "Gateway default/web: spec.listeners[1].name: duplicate listener name \"http\""},
      {R"([{"name":"a","port":0,"protocol":"HTTP"}])", "",
       "spec.listeners[0].port: must be 1-65535"},
      {R"([{"name":"a","port":65536,"protocol":"HTTP"}])", "",
       "spec.listeners[0].port: must be 1-65535"},
      {R"([{"name":"a","port":80,"protocol":"HTTP","hostname":"Example.com"}])", "",
       "spec.listeners[0].hostname: \"Example.com\" is not a valid hostname"},
      {R"([{"name":"a","port":80,"protocol":"HTTP","hostname":"10.0.0.1"}])", "",
       "spec.listeners[0].hostname: \"10.0.0.1\" is not a valid hostname"},
      {R"([{"name":"a","port":80,"protocol":"HTTP","hostname":"*"}])", "",
       "\"*\" is not a valid hostname"},
      {R"([{"name":"a","port":80,"protocol":"HTTP","hostname":"foo.*.com"}])", "",
       "is not a valid hostname"},
      {R"([{"name":"a","port":443,"protocol":"HTTPS"}])", "",
       "spec.listeners[0].tls: is required for protocol HTTPS"},
      {R"([{"name":"a","port":443,"protocol":"TLS"}])", "",
       "spec.listeners[0].tls: is required for protocol TLS"},
      {R"([{"name":"a","port":80,"protocol":"HTTP",)" + tls + "}]", "",
       "spec.listeners[0].tls: must not be set for protocol HTTP"},
      {R"([{"name":"a","port":80,"protocol":"TCP","hostname":"a.com"}])", "",
       "spec.listeners[0].hostname: must not be set for protocol TCP"},
      {R"([{"name":"a","port":443,"protocol":"HTTPS","tls":{"mode":"Terminate"}}])", "",
       "spec.listeners[0].tls.certificateRefs: certificateRefs or options must be specified when "
       "mode is Terminate"},
      {R"([{"name":"a","port":443,"protocol":"HTTPS","tls":{"mode":"Open","certificateRefs":[{)"
       R"("name":"c"}]}}])",
       "", "spec.listeners[0].tls.mode: \"Open\" is not Terminate or Passthrough"},
      {"[" + http + R"(,{"name":"b","port":80,"protocol":"HTTP"}])", "",
       "spec.listeners[1]: port 80, protocol HTTP and hostname \"\" repeat spec.listeners[0]"},
      {R"([{"name":"a","port":80,"protocol":"HTTP","allowedRoutes":{"namespaces":{)"
       R"("from":"Selector"}}}])",
       "",
       "spec.listeners[0].allowedRoutes.namespaces.selector: is required when from is Selector"},
      {R"([{"name":"a","port":80,"protocol":"HTTP","allowedRoutes":{"namespaces":{"from":"Selector",
           "selector":{"matchExpressions":[{"key":"env","operator":"In"}]}}}}])",
       "",
       "spec.listeners[0].allowedRoutes.namespaces.selector.matchExpressions[0].values: must be "
       "non-empty for operator In"},
      {R"([{"name":"a","port":80,"protocol":"HTTP","allowedRoutes":{"namespaces":{"from":"Selector",
           "selector":{"matchExpressions":[{"key":"env","operator":"Like","values":["x"]}]}}}}])",
       "", "matchExpressions[0].operator: \"Like\" is not In, NotIn, Exists or DoesNotExist"},
      {R"([{"name":"a","port":80,"protocol":"HTTP","allowedRoutes":{"namespaces":{"from":"Selector",
           "selector":{"matchLabels":{"bad key":"x"}}}}}])",
       "", "selector.matchLabels[\"bad key\"]: invalid label key"},
      {"[" + http + "]", R"(,"addresses":[{"type":"IPAddress","value":"300.0.0.1"}])",
       "spec.addresses[0].value: \"300.0.0.1\" is not an IP address"},
      {"[" + http + "]",
       R"(,"addresses":[{"value":"10.0.0.1"},{"type":"IPAddress","value":"10.0.0.1"}])",
       "spec.addresses[1].value: duplicate IPAddress \"10.0.0.1\" (also spec.addresses[0])"},
      {"[]", "", "spec.listeners: at least one listener is required"},
      {R"([{"name":"Bad_Name","port":80,"protocol":"HTTP"}])", "",
       "spec.listeners[0].name: \"Bad_Name\" is not a valid listener name"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Gateway(GatewayWithListeners(c.listeners, c.extra));
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.listeners;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message)) << c.listeners;
  }
  ProcessOutcome out =
      host_.Process(kGroup, "Gateway",
                    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
      "metadata":{"name":"web"},"spec":{"listeners":[{"name":"http","port":80,)"
                    R"("protocol":"HTTP"}]}})");
  EXPECT_THAT(out.status.message(),
              HasSubstr("Gateway default/web: spec.gatewayClassName: is required"));
}

TEST_F(plugin_gateway, AcceptsValidVariants) {
  for (const char* listeners : {
           R"([{"name":"a","port":80,"protocol":"HTTP","hostname":"*.example.com"},
               {"name":"b","port":80,"protocol":"HTTP","hostname":"example.com"},
               {"name":"c","port":80,"protocol":"HTTP"}])",
           R"([{"name":"tls","port":443,"protocol":"TLS","tls":{"mode":"Passthrough"}}])",
           R"([{"name":"a","port":443,"protocol":"HTTPS","tls":{"options":{"portico.io/x":"y"}}}])",
       }) {
    ProcessOutcome out = Gateway(GatewayWithListeners(listeners));
    EXPECT_TRUE(out.ok()) << listeners << ": " << out.status;
  }
  ProcessOutcome out =
      host_.Process(kGroup, "Gateway",
                    R"({"apiVersion":"gateway.networking.k8s.io/v1beta1","kind":"Gateway",
      "metadata":{"name":"web","namespace":"default","generation":3},"spec":{)"
                    R"("gatewayClassName":"portico",
      "listeners":[{"name":"http","port":8080,"protocol":"HTTP"}],"addresses":[{)"
                    R"("value":"127.0.1.1"},{"type":"Hostname","value":"gw.example.com"}]}})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced, HasSubstr(R"("generation":3)"));
  EXPECT_THAT(
      *out.synced,
      HasSubstr(R"("addresses":[{"type":"IPAddress","value":"127.0.1.1"},{"type":"Hostname",)"
                R"("value":"gw.example.com"}])"));
}

}  // namespace
}  // namespace portico::plugins::gateway
