// gateway_test: the GatewayClass and Gateway kinds in the SDK's fake host, with the Secret,
// ReferenceGrant and Namespace plugins loaded beside them for certificate references. Objects
// are conformance manifests of the Gateway API (kubernetes-sigs/gateway-api, Apache-2.0) or
// variations of them; certificates are generated at test time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "portico/sdk/secret_data.h"
#include "portico/sdk/testing/fake_host.h"
#include "portico/sdk/testing/fake_world.h"
#include "portico/sdk/testing/test_certs.h"

namespace portico::plugins::gateway {
namespace {

using sdk::Base64Encode;
using sdk::ObjectRef;
using sdk::testing::FakeHost;
using sdk::testing::FakeWorld;
using sdk::testing::ProcessOutcome;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kGroup[] = "gateway.networking.k8s.io";
constexpr int64_t kNowMs = 1700000000000;  // the fake host's clock
constexpr int64_t kDayMs = 24 * 3600 * 1000;

constexpr char kGatewayClass[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",
  "metadata":{"name":"portico"},"spec":{"controllerName":"portico.io/gateway-controller"}})";
constexpr char kForeignClass[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",
  "metadata":{"name":"other"},"spec":{"controllerName":"example.com/other-controller"}})";

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
    R"("gateway-conformance":"backend"},"matchExpressions":[{"key":"tier","operator":"NotIn",)"
    R"("values":["db","cache"]},{"key":"canary","operator":"DoesNotExist"}]}}}}]}})";
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
    R"("protocol":"HTTPS","allowedRoutes":{"namespaces":{"from":"Same"}},
     "tls":{"certificateRefs":[{"group":"","kind":"Secret",)"
    R"("name":"tls-validity-checks-certificate","namespace":"gateway-conformance-infra"}]}},
    {"name":"https-with-specific-wildcard-hostname","port":443,)"
    R"("hostname":"fourth-example.wildcard.org","protocol":"HTTPS",
     "allowedRoutes":{"namespaces":{"from":"Same"}},
     "tls":{"certificateRefs":[{"group":"","kind":"Secret",)"
    R"("name":"tls-validity-checks-certificate","namespace":"gateway-conformance-infra"}]}}]}})";

// GatewaySecretReferenceGrantSpecific: a certificate in another namespace.
constexpr char kCrossNamespaceCert[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"gateway-secret-reference-grant-specific",)"
    R"("namespace":"gateway-conformance-infra"},
  "spec":{"gatewayClassName":"portico","listeners":[{"name":"https","port":443,"protocol":"HTTPS",
    "allowedRoutes":{"namespaces":{"from":"All"}},
    "tls":{"certificateRefs":[{"group":"","kind":"Secret","name":"certificate",)"
    R"("namespace":"gateway-conformance-web-backend"}]}}]}})";
constexpr char kSecretGrant[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant",
  "metadata":{"name":"reference-grant-specific","namespace":"gateway-conformance-web-backend"},
  "spec":{"from":[{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
    R"("namespace":"gateway-conformance-infra"}],
          "to":[{"group":"","kind":"Secret","name":"certificate"}]}})";
// GatewaySecretInvalidReferenceGrant: the grant names another Secret.
constexpr char kWrongSecretGrant[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"ReferenceGrant",
  "metadata":{"name":"reference-grant-wrong-name","namespace":"gateway-conformance-web-backend"},
  "spec":{"from":[{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
    R"("namespace":"gateway-conformance-infra"}],
          "to":[{"group":"","kind":"Secret","name":"not-the-certificate"}]}})";

std::string TlsSecret(std::string_view ns, std::string_view name,
                      const sdk::testing::TestCertificate& cert) {
  return R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls","metadata":{"name":")" +
         std::string(name) + R"(","namespace":")" + std::string(ns) + R"("},"data":{"tls.crt":")" +
         Base64Encode(cert.cert_pem) + R"(","tls.key":")" + Base64Encode(cert.key_pem) + R"("}})";
}

sdk::testing::TestCertificate Certificate(std::vector<std::string> dns) {
  return sdk::testing::MakeTestCertificate(
      {std::move(dns), kNowMs - kDayMs, kNowMs + 365 * kDayMs});
}

std::string GatewayWithListeners(std::string_view listeners, std::string_view extra = "",
                                 std::string_view class_name = "portico") {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{)"
         R"("name":"web","namespace":"default"},"spec":{"gatewayClassName":")" +
         std::string(class_name) + R"(","listeners":)" + std::string(listeners) +
         std::string(extra) + "}}";
}

// Condition finds a condition of type `type` in `conditions` and renders "Status/Reason".
std::string Condition(const rapidjson::Value* conditions, std::string_view type) {
  if (conditions == nullptr || !conditions->IsArray()) return "";
  for (const auto& c : conditions->GetArray()) {
    if (json::GetString(c, "type") == type) {
      return json::GetString(c, "status") + "/" + json::GetString(c, "reason");
    }
  }
  return "";
}

// CaConfigMap is a ConfigMap holding `pem` as its ca.crt.
std::string CaConfigMap(std::string_view ns, std::string_view name, const std::string& pem) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + std::string(name) +
         R"(","namespace":")" + std::string(ns) + R"("},"data":{"ca.crt":)" +
         sdk::testing::detail::Quote(pem) + "}}";
}

// CaSecret is an Opaque Secret holding `pem` as its ca.crt.
std::string CaSecret(std::string_view ns, std::string_view name, const std::string& pem) {
  return R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":")" + std::string(name) +
         R"(","namespace":")" + std::string(ns) + R"("},"data":{"ca.crt":")" + Base64Encode(pem) +
         R"("}})";
}

// CaSha256 is the sha256 a ConfigMap's or Secret's export gives its ca.crt.
std::string CaSha256(const ProcessOutcome& out) {
  auto doc = json::Parse(out.export_json.value_or(""));
  const rapidjson::Value* ca = doc.ok() ? json::Find(*doc, "ca") : nullptr;
  return ca != nullptr ? json::GetString(*ca, "sha256") : "";
}

// Frontend renders spec.tls.frontend with a default validation and per-port ones
// ({port, validation JSON or ""}).
std::string Frontend(std::string_view default_validation,
                     std::vector<std::pair<int, std::string>> per_port = {}) {
  std::string out = R"(,"tls":{"frontend":{"default":{)";
  if (!default_validation.empty()) out += R"("validation":)" + std::string(default_validation);
  out += "}";
  if (!per_port.empty()) {
    out += R"(,"perPort":[)";
    for (size_t i = 0; i < per_port.size(); ++i) {
      out += (i > 0 ? "," : "") + std::string(R"({"port":)") + std::to_string(per_port[i].first) +
             R"(,"tls":{)" +
             (per_port[i].second.empty() ? "" : R"("validation":)" + per_port[i].second) + "}}";
    }
    out += "]";
  }
  return out + "}}";
}

// Validation renders a validation with one CA reference (kind, name[, namespace]).
std::string Validation(std::string_view kind, std::string_view name, std::string_view ns = "",
                       std::string_view mode = "") {
  std::string out = R"({"caCertificateRefs":[{"group":"","kind":")" + std::string(kind) +
                    R"(","name":")" + std::string(name) + "\"";
  if (!ns.empty()) out += R"(,"namespace":")" + std::string(ns) + "\"";
  out += "}]";
  if (!mode.empty()) out += R"(,"mode":")" + std::string(mode) + "\"";
  return out + "}";
}

// HttpsListener: an HTTPS listener named `name` on `port` with the certificate Secret "cert".
std::string HttpsListener(std::string_view name, int port, std::string_view hostname = "") {
  return R"({"name":")" + std::string(name) + R"(","port":)" + std::to_string(port) +
         (hostname.empty() ? "" : R"(,"hostname":")" + std::string(hostname) + "\"") +
         R"(,"protocol":"HTTPS","tls":{"certificateRefs":[{"name":"cert"}]}})";
}

// GatewayCondition: "Status/Reason" of a Gateway-level condition in a status document.
std::string GatewayCondition(const std::string& status, std::string_view type) {
  auto doc = json::Parse(status);
  return doc.ok() ? Condition(json::Find(*doc, "conditions"), type) : "";
}

// ListenerCondition: "Status/Reason" of a listener's condition.
std::string ListenerCondition(const std::string& status, std::string_view listener,
                              std::string_view type) {
  auto doc = json::Parse(status);
  const rapidjson::Value* listeners = doc.ok() ? json::Find(*doc, "listeners") : nullptr;
  if (listeners == nullptr || !listeners->IsArray()) return "";
  for (const auto& l : listeners->GetArray()) {
    if (json::GetString(l, "name") == listener) return Condition(json::Find(l, "conditions"), type);
  }
  return "";
}

// ListenerField: a listener's status field as JSON.
std::string ListenerField(const std::string& status, std::string_view listener,
                          std::string_view field) {
  auto doc = json::Parse(status);
  const rapidjson::Value* listeners = doc.ok() ? json::Find(*doc, "listeners") : nullptr;
  if (listeners == nullptr || !listeners->IsArray()) return "";
  for (const auto& l : listeners->GetArray()) {
    if (json::GetString(l, "name") != listener) continue;
    const rapidjson::Value* v = json::Find(l, field);
    return v != nullptr ? json::Serialize(*v) : "";
  }
  return "";
}

class plugin_gateway : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(SECRET_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(CONFIGMAP_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(REFERENCEGRANT_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(NAMESPACE_PLUGIN_PATH).ok());
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
  EXPECT_EQ(gw->reads, (std::vector<std::string>{"GatewayClass.gateway.networking.k8s.io",
                                                 "Namespace", "Secret", "ConfigMap",
                                                 "ReferenceGrant.gateway.networking.k8s.io"}));
  EXPECT_EQ(gw->sync_policy, PORTICO_SYNC_ATTACHED);
}

TEST_F(plugin_gateway, GatewayClassIsAcceptedOnlyWhenItIsOurs) {
  ProcessOutcome out = host_.Process(kGroup, "GatewayClass", kGatewayClass);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.ref.Display(), "GatewayClass portico");
  EXPECT_EQ(out.export_json,
            R"({"controllerName":"portico.io/gateway-controller","accepted":true})");
  EXPECT_EQ(out.status_json,
            R"({"conditions":[{"type":"Accepted","status":"True","reason":"Accepted",)"
            R"("message":"","observedGeneration":1}]})");
  EXPECT_FALSE(out.synced.has_value());

  out = host_.Process(kGroup, "GatewayClass", kForeignClass);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.export_json,
            R"({"controllerName":"example.com/other-controller","accepted":false})");
  EXPECT_FALSE(out.status_json.has_value());  // not ours: no status at all

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
  EXPECT_EQ(out.synced,
            R"({"metadata":{"name":"same-namespace","namespace":"gateway-conformance-infra",)"
            R"("generation":1},"gatewayClassName":"portico","listeners":[{"name":"http","port":80,)"
            R"("protocol":"HTTP","routeKinds":[{"group":"gateway.networking.k8s.io",)"
            R"("kind":"HTTPRoute"}]}],"addresses":[]})");
  EXPECT_EQ(out.export_json,
            R"({"gatewayClassName":"portico","controllerName":"portico.io/gateway-controller",)"
            R"("ours":true,"listeners":[{"name":"http","port":80,"protocol":"HTTP",)"
            R"("accepted":true,"programmable":true,"allowedRoutes":{"namespaces":{)"
            R"("from":"Same"},"kinds":[{"group":"gateway.networking.k8s.io",)"
            R"("kind":"HTTPRoute"}]}}]})");
  EXPECT_EQ(
      out.status_json,
      R"({"conditions":[)"
      R"({"type":"Accepted","status":"True","reason":"Accepted","message":"",)"
      R"("observedGeneration":1},)"
      R"({"type":"Programmed","status":"Unknown","reason":"Pending","message":"waiting for a )"
      R"(gateway to apply it","observedGeneration":1}],)"
      R"("listeners":[{"name":"http","supportedKinds":[{"group":"gateway.networking.k8s.io",)"
      R"("kind":"HTTPRoute"}],"attachedRoutes":0,"conditions":[)"
      R"({"type":"Accepted","status":"True","reason":"Accepted","message":"",)"
      R"("observedGeneration":1},)"
      R"({"type":"ResolvedRefs","status":"True","reason":"ResolvedRefs","message":"",)"
      R"("observedGeneration":1},)"
      R"({"type":"Conflicted","status":"False","reason":"NoConflicts","message":"",)"
      R"("observedGeneration":1},)"
      R"({"type":"Programmed","status":"Unknown","reason":"Pending","message":"waiting for a )"
      R"(gateway to apply it","observedGeneration":1}]}]})");
  EXPECT_THAT(out.reads, ElementsAre("get GatewayClass portico hit"));
  ASSERT_EQ(out.links.size(), 1u);  // sync scope: the Gateway goes with its class
  EXPECT_EQ(out.links[0].first.Display(), "GatewayClass portico");
  EXPECT_EQ(out.links[0].second, PORTICO_LINK_PARENT);
}

TEST_F(plugin_gateway, ClassMissingIsPendingAndForeignClassGetsNothing) {
  ProcessOutcome out = Gateway(kSameNamespace);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(out.reads, ElementsAre("get GatewayClass portico miss"));
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "Unknown/Pending");
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("message":"GatewayClass \"portico\" does not exist")"));
  EXPECT_FALSE(out.synced.has_value());
  EXPECT_THAT(*out.export_json, HasSubstr(R"("ours":false)"));

  ASSERT_TRUE(host_.Apply(kForeignClass).ok());
  out = Gateway(GatewayWithListeners(
      R"([{"name":"https","port":443,"protocol":"HTTPS","tls":{"certificateRefs":[{)"
      R"("name":"cert"}]}}])",
      "", "other"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_FALSE(out.status_json.has_value());
  EXPECT_FALSE(out.synced.has_value());
  EXPECT_THAT(*out.export_json, HasSubstr(R"("controllerName":"example.com/other-controller",)"
                                          R"("ours":false)"));
  EXPECT_THAT(out.reads, ElementsAre("get GatewayClass other hit"));  // no Secret read

  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());  // the host requeues the Gateway on this change
  out = Gateway(kSameNamespace);
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "True/Accepted");
}

TEST_F(plugin_gateway, SelectorIsExportedAsALabelSelector) {
  ProcessOutcome out = Gateway(kBackendNamespaces);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.export_json,
              HasSubstr(R"("namespaces":{"from":"Selector","selector":)"
                        R"("gateway-conformance=backend,tier notin (db,cache),!canary"})"));
}

TEST_F(plugin_gateway, HttpsListenersResolveTheirCertificates) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ProcessOutcome out = Gateway(kHttps);
  ASSERT_TRUE(out.ok()) << out.status;
  for (const char* l : {"https", "https-with-hostname", "https-with-wildcard-hostname"}) {
    EXPECT_EQ(ListenerCondition(*out.status_json, l, "ResolvedRefs"),
              "False/InvalidCertificateRef");
    EXPECT_EQ(ListenerCondition(*out.status_json, l, "Programmed"), "False/Invalid");
    EXPECT_EQ(ListenerCondition(*out.status_json, l, "Accepted"), "True/Accepted");
  }
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("message":"tls.certificateRefs[0]: Secret )"
                        R"(gateway-conformance-infra/tls-validity-checks-certificate does not )"
                        R"(exist")"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("listeners":[])"));  // nothing servable yet

  sdk::testing::TestCertificate cert = Certificate({"*.org", "*.wildcard.org"});
  ProcessOutcome secret =
      host_.Apply(TlsSecret("gateway-conformance-infra", "tls-validity-checks-certificate", cert));
  ASSERT_TRUE(secret.ok()) << secret.status;
  std::string sha256 = json::GetString(*json::Parse(*secret.export_json), "sha256");
  out = Gateway(kHttps);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "ResolvedRefs"), "True/ResolvedRefs");
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "Programmed"), "Unknown/Pending");
  EXPECT_THAT(
      out.reads,
      ElementsAre("get GatewayClass portico hit",
                  "get Secret gateway-conformance-infra/tls-validity-checks-certificate hit",
                  "get Secret gateway-conformance-infra/tls-validity-checks-certificate hit",
                  "get Secret gateway-conformance-infra/tls-validity-checks-certificate hit",
                  "get Secret gateway-conformance-infra/tls-validity-checks-certificate hit"));
  EXPECT_THAT(*out.synced,
              HasSubstr(R"({"name":"https-with-wildcard-hostname","port":443,"protocol":"HTTPS",)"
                        R"("hostname":"*.wildcard.org","tls":{"mode":"Terminate","certificates":)"
                        R"([{"secretRef":{"namespace":"gateway-conformance-infra",)"
                        R"("name":"tls-validity-checks-certificate"},"sha256":")" +
                        sha256 + R"("}]},"routeKinds":)"));
  // Never key material, in any encoding.
  EXPECT_EQ(out.synced->find("BEGIN"), std::string::npos);
  EXPECT_EQ(out.synced->find(Base64Encode(cert.key_pem).substr(0, 24)), std::string::npos);
  EXPECT_EQ(out.export_json->find("sha256"), std::string::npos);
}

TEST_F(plugin_gateway, ASecretTurnedUnusableKeepsThePreviousCertificateServing) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  sdk::testing::TestCertificate cert = Certificate({"*.org", "*.wildcard.org"});
  ProcessOutcome secret =
      host_.Apply(TlsSecret("gateway-conformance-infra", "tls-validity-checks-certificate", cert));
  ASSERT_TRUE(secret.ok()) << secret.status;
  const std::string sha256 = json::GetString(*json::Parse(*secret.export_json), "sha256");

  // The same Secret with the key of another certificate.
  sdk::testing::TestCertificate other = Certificate({"other.org"});
  secret = host_.Apply(TlsSecret("gateway-conformance-infra", "tls-validity-checks-certificate",
                                 {cert.cert_pem, other.key_pem}));
  ASSERT_TRUE(secret.ok()) << secret.status;
  ProcessOutcome out = Gateway(kHttps);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "ResolvedRefs"),
            "False/InvalidCertificateRef");
  EXPECT_THAT(*out.status_json, HasSubstr("the previous certificate keeps serving"));
  // Still served with the previous material, so still programmed.
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "Programmed"), "Unknown/Pending");
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("name":"tls-validity-checks-certificate"},"sha256":")" + sha256 + "\""));
}

TEST_F(plugin_gateway, HttpsListenersWithOverlappingHostnamesAreFlagged) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ProcessOutcome out = Gateway(kHttps);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(
      ListenerCondition(*out.status_json, "https-with-wildcard-hostname", "OverlappingTLSConfig"),
      "True/OverlappingHostnames");
  EXPECT_EQ(ListenerCondition(*out.status_json, "https-with-specific-wildcard-hostname",
                              "OverlappingTLSConfig"),
            "True/OverlappingHostnames");
  // Negative polarity: never written as False.
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "OverlappingTLSConfig"), "");
  EXPECT_EQ(ListenerCondition(*out.status_json, "https-with-hostname", "OverlappingTLSConfig"), "");
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("message":"hostname *.wildcard.org overlaps listeners on port 443: )"
                R"x(https-with-specific-wildcard-hostname (fourth-example.wildcard.org)")x"));
}

TEST_F(plugin_gateway, CertificateRefsFollowTheGatewayApiRules) {
  // GatewayInvalidTLSConfiguration: wrong group, wrong kind, missing, malformed; and not TLS.
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ASSERT_TRUE(host_
                  .Apply(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"opaque"},)"
                         R"("data":{"tls.crt":"YQ==","tls.key":"Yg=="}})")
                  .ok());
  ASSERT_TRUE(host_
                  .Apply(R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls",)"
                         R"("metadata":{"name":"malformed-certificate"},"data":{)"
                         R"("tls.crt":"SGVsbG8gd29ybGQK","tls.key":"SGVsbG8gd29ybGQK"}})")
                  .ok());
  struct Case {
    const char* ref;
    const char* message;
  } cases[] = {
      {R"({"group":"wrong.group.company.io","kind":"Secret","name":"c"})",
       "Secret.wrong.group.company.io default/c is not supported; only core Secrets are"},
      {R"({"group":"","kind":"WrongKind","name":"c"})", "WrongKind default/c is not supported"},
      {R"({"name":"opaque"})",
       R"(Secret default/opaque is of type \"Opaque\", not kubernetes.io/tls)"},
      {R"({"name":"nonexistent-certificate"})", "does not exist"},
      {R"({"name":"malformed-certificate"})",
       "Secret default/malformed-certificate: tls.crt is not a PEM certificate"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Gateway(GatewayWithListeners(
        std::string(
            R"([{"name":"https","port":443,"protocol":"HTTPS","tls":{"certificateRefs":[)") +
        c.ref + "]}}]"));
    ASSERT_TRUE(out.ok()) << out.status;
    EXPECT_EQ(ListenerCondition(*out.status_json, "https", "ResolvedRefs"),
              "False/InvalidCertificateRef")
        << c.ref;
    EXPECT_EQ(ListenerCondition(*out.status_json, "https", "Programmed"), "False/Invalid");
    EXPECT_EQ(ListenerField(*out.status_json, "https", "supportedKinds"),
              R"([{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}])");
    EXPECT_THAT(*out.status_json, HasSubstr(c.message)) << c.ref;
    // The Gateway stays accepted: its listener is valid, only a reference is not.
    EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "True/Accepted");
  }
}

TEST_F(plugin_gateway, CrossNamespaceCertificatesNeedAReferenceGrant) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ASSERT_TRUE(
      host_.Apply(TlsSecret("gateway-conformance-web-backend", "certificate", Certificate({"*"})))
          .ok());
  ProcessOutcome out = Gateway(kCrossNamespaceCert);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "ResolvedRefs"), "False/RefNotPermitted");
  EXPECT_THAT(out.reads, ElementsAre("get GatewayClass portico hit",
                                     "list ReferenceGrant gateway-conformance-web-backend",
                                     "reference Gateway gateway-conformance-infra -> Secret "
                                     "gateway-conformance-web-backend/certificate denied"));
  ASSERT_TRUE(host_.Apply(kWrongSecretGrant).ok());  // GatewaySecretInvalidReferenceGrant
  out = Gateway(kCrossNamespaceCert);
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "ResolvedRefs"), "False/RefNotPermitted");
  ASSERT_TRUE(host_.Apply(kSecretGrant).ok());
  out = Gateway(kCrossNamespaceCert);
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "ResolvedRefs"), "True/ResolvedRefs");
}

TEST_F(plugin_gateway, RouteKindsAndProtocols) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  // GatewayInvalidRouteKind: only an invalid kind.
  ProcessOutcome out = Gateway(GatewayWithListeners(
      R"([{"name":"http","port":80,"protocol":"HTTP","allowedRoutes":{"namespaces":{)"
      R"("from":"All"},"kinds":[{"kind":"InvalidRoute"}]}}])"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ListenerField(*out.status_json, "http", "supportedKinds"), "[]");
  EXPECT_EQ(ListenerCondition(*out.status_json, "http", "ResolvedRefs"), "False/InvalidRouteKinds");
  EXPECT_EQ(ListenerCondition(*out.status_json, "http", "Accepted"), "True/Accepted");
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("message":"route kinds not supported on a HTTP listener: )"
                        R"(InvalidRoute.gateway.networking.k8s.io")"));
  // Valid and invalid kinds: the valid ones are listed.
  out = Gateway(GatewayWithListeners(
      R"([{"name":"http","port":80,"protocol":"HTTP","allowedRoutes":{"kinds":[{)"
      R"("kind":"InvalidRoute"},{"kind":"HTTPRoute"},{"group":"gateway.networking.k8s.io",)"
      R"("kind":"GRPCRoute"}]}}])"));
  EXPECT_EQ(ListenerField(*out.status_json, "http", "supportedKinds"),
            R"([{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}])");
  EXPECT_EQ(ListenerCondition(*out.status_json, "http", "ResolvedRefs"), "False/InvalidRouteKinds");
  EXPECT_THAT(*out.export_json,
              HasSubstr(R"("kinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}])"));
  // An empty kinds list means "by protocol".
  out = Gateway(GatewayWithListeners(
      R"([{"name":"http","port":80,"protocol":"HTTP","allowedRoutes":{"kinds":[]}}])"));
  EXPECT_EQ(ListenerCondition(*out.status_json, "http", "ResolvedRefs"), "True/ResolvedRefs");
  EXPECT_EQ(ListenerField(*out.status_json, "http", "supportedKinds"),
            R"([{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}])");

  // HTTPRouteDisallowedKind's Gateway: TLS passthrough for TLSRoutes only.
  out = Gateway(GatewayWithListeners(
      R"([{"name":"tls","port":443,"protocol":"TLS","tls":{"mode":"Passthrough"},)"
      R"("allowedRoutes":{"namespaces":{"from":"Same"},"kinds":[{"kind":"TLSRoute"}]}}])"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ListenerCondition(*out.status_json, "tls", "Accepted"), "False/UnsupportedProtocol");
  EXPECT_EQ(ListenerCondition(*out.status_json, "tls", "ResolvedRefs"), "False/InvalidRouteKinds");
  EXPECT_EQ(ListenerCondition(*out.status_json, "tls", "Programmed"), "False/Invalid");
  EXPECT_EQ(ListenerField(*out.status_json, "tls", "supportedKinds"), "[]");
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "False/ListenersNotValid");
  EXPECT_EQ(GatewayCondition(*out.status_json, "Programmed"), "False/Invalid");
  EXPECT_FALSE(out.synced.has_value());
  // Some valid listeners: accepted, with the invalid ones named.
  out = Gateway(GatewayWithListeners(
      R"([{"name":"tcp","port":5000,"protocol":"TCP"},{"name":"http","port":80,)"
      R"("protocol":"http"}])"));
  EXPECT_EQ(ListenerCondition(*out.status_json, "tcp", "Accepted"), "False/UnsupportedProtocol");
  EXPECT_EQ(ListenerCondition(*out.status_json, "http", "Accepted"), "True/Accepted");
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "True/ListenersNotValid");
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"x("message":"listeners not valid: tcp (UnsupportedProtocol); )x"
                        R"(accepted: http")"));
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("listeners":[{"name":"http","port":80,"protocol":"HTTP",)"));
}

TEST_F(plugin_gateway, ConflictingListenersAreNotAccepted) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ASSERT_TRUE(host_.Apply(TlsSecret("default", "cert", Certificate({"*.example.com"}))).ok());
  ProcessOutcome out = Gateway(GatewayWithListeners(
      R"([{"name":"http","port":8443,"protocol":"HTTP"},)"
      R"({"name":"https","port":8443,"protocol":"HTTPS","tls":{"certificateRefs":[{)"
      R"("name":"cert"}]}},{"name":"other","port":8080,"protocol":"HTTP"},)"
      R"({"name":"tcp","port":8080,"protocol":"TCP"}])"));
  ASSERT_TRUE(out.ok()) << out.status;
  for (const char* l : {"http", "https"}) {
    EXPECT_EQ(ListenerCondition(*out.status_json, l, "Conflicted"), "True/ProtocolConflict") << l;
    EXPECT_EQ(ListenerCondition(*out.status_json, l, "Accepted"), "False/ProtocolConflict") << l;
    EXPECT_EQ(ListenerCondition(*out.status_json, l, "Programmed"), "False/Invalid") << l;
  }
  // An unsupported protocol never conflicts with supported ones.
  EXPECT_EQ(ListenerCondition(*out.status_json, "other", "Conflicted"), "False/NoConflicts");
  EXPECT_EQ(ListenerCondition(*out.status_json, "other", "Accepted"), "True/Accepted");
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "True/ListenersNotValid");
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"x("message":"port 8443 is used with several protocols (HTTP, HTTPS)")x"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("listeners":[{"name":"other",)"));
  EXPECT_THAT(*out.synced, Not(HasSubstr(R"("name":"https")")));
}

TEST_F(plugin_gateway, AddressTypesOtherThanIpAddressAreUnsupported) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  const std::string http = R"([{"name":"http","port":80,"protocol":"HTTP"}])";
  ProcessOutcome out = Gateway(GatewayWithListeners(
      http, R"(,"addresses":[{"value":"127.0.1.1"},{"type":"IPAddress"},{"value":"::1"}])"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "True/Accepted");
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("addresses":[{"type":"IPAddress","value":"127.0.1.1"},{"type":)"
                        R"("IPAddress","value":""},{"type":"IPAddress","value":"::1"}])"));
  for (const char* addresses : {R"([{"type":"Hostname","value":"gw.example.com"}])",
                                R"([{"type":"example.com/pool","value":"blue"}])"}) {
    out = Gateway(GatewayWithListeners(http, std::string(R"(,"addresses":)") + addresses));
    ASSERT_TRUE(out.ok()) << out.status;
    EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "False/UnsupportedAddress")
        << addresses;
    EXPECT_EQ(GatewayCondition(*out.status_json, "Programmed"), "False/Invalid");
    EXPECT_FALSE(out.synced.has_value());
  }
}

TEST_F(plugin_gateway, ParametersAndClientCertificatesAreNotSupported) {
  ProcessOutcome out = host_.Process(
      kGroup, "GatewayClass",
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{)"
      R"("name":"portico"},"spec":{"controllerName":"portico.io/gateway-controller",)"
      R"("parametersRef":{"group":"example.com","kind":"Config","name":"c"}}})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "False/InvalidParameters");
  EXPECT_THAT(*out.export_json, HasSubstr(R"("accepted":false)"));
  ASSERT_TRUE(host_
                  .Apply(R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",)"
                         R"("metadata":{"name":"portico"},"spec":{"controllerName":)"
                         R"("portico.io/gateway-controller","parametersRef":{"group":"",)"
                         R"("kind":"ConfigMap","name":"c"}}})")
                  .ok());
  out = Gateway(kSameNamespace);  // ours, but its class is not accepted
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "False/Invalid");
  EXPECT_FALSE(out.synced.has_value());

  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  out = Gateway(GatewayWithListeners(
      R"([{"name":"http","port":80,"protocol":"HTTP"}])",
      R"(,"infrastructure":{"parametersRef":{"group":"example.com","kind":"Config","name":"c"}})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "False/InvalidParameters");
  EXPECT_THAT(*out.status_json,
              HasSubstr("spec.infrastructure.parametersRef Config.example.com c"));
  EXPECT_FALSE(out.synced.has_value());

  ASSERT_TRUE(host_.Apply(TlsSecret("default", "cert", Certificate({"a.example.com"}))).ok());
  out = Gateway(GatewayWithListeners(
      R"([{"name":"https","port":443,"protocol":"HTTPS","tls":{"certificateRefs":[{)"
      R"("name":"cert"}],"frontendValidation":{"caCertificateRefs":[{"group":"","kind":)"
      R"("ConfigMap","name":"ca"}]}}}])"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "Accepted"), "False/UnsupportedValue");
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "False/ListenersNotValid");
}

// GatewayFrontendClientCertificateValidation: the default validation applies to every HTTPS
// port, a perPort entry overrides it; CAs come from ConfigMaps and Secrets, as their sha256.
TEST_F(plugin_gateway, FrontendValidationResolvesCaConfigMapsAndSecrets) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ASSERT_TRUE(host_.Apply(TlsSecret("default", "cert", Certificate({"*.org"}))).ok());
  const std::string pem1 = Certificate({}).cert_pem, pem2 = Certificate({}).cert_pem;
  ProcessOutcome cm = host_.Apply(CaConfigMap("default", "client-ca", pem1));
  ProcessOutcome secret = host_.Apply(CaSecret("default", "port-ca", pem2));
  ASSERT_TRUE(cm.ok() && secret.ok()) << cm.status << secret.status;
  ASSERT_FALSE(CaSha256(cm).empty());
  ASSERT_NE(CaSha256(cm), CaSha256(secret));

  std::string listeners = "[" + HttpsListener("https", 443) + "," +
                          HttpsListener("https-with-hostname", 8443, "second-example.org") + "," +
                          R"({"name":"http","port":80,"protocol":"HTTP"}])";
  ProcessOutcome out = Gateway(GatewayWithListeners(
      listeners,
      Frontend(Validation("ConfigMap", "client-ca"), {{8443, Validation("Secret", "port-ca")},
                                                      {80, Validation("ConfigMap", "missing")}})));
  ASSERT_TRUE(out.ok()) << out.status;
  for (const char* l : {"https", "https-with-hostname", "http"}) {
    EXPECT_EQ(ListenerCondition(*out.status_json, l, "Accepted"), "True/Accepted") << l;
    EXPECT_EQ(ListenerCondition(*out.status_json, l, "ResolvedRefs"), "True/ResolvedRefs") << l;
    EXPECT_EQ(ListenerCondition(*out.status_json, l, "Programmed"), "Unknown/Pending") << l;
  }
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "True/Accepted");
  EXPECT_EQ(GatewayCondition(*out.status_json, "InsecureFrontendValidationMode"), "");
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("frontendValidation":[{"port":443,"mode":"AllowValidOnly",)"
                        R"("caCertificates":[{"ref":{"kind":"ConfigMap","namespace":"default",)"
                        R"("name":"client-ca"},"sha256":")" +
                        CaSha256(cm) +
                        R"("}]},{"port":8443,"mode":"AllowValidOnly","caCertificates":[{"ref":)"
                        R"({"kind":"Secret","namespace":"default","name":"port-ca"},"sha256":")" +
                        CaSha256(secret) + R"("}]}])"));
  EXPECT_EQ(out.synced->find("BEGIN"), std::string::npos);  // never material
  // The CA objects go wherever the Gateway goes; the HTTP port's validation is never read.
  EXPECT_THAT(out.links,
              ::testing::Contains(std::make_pair(ObjectRef{"", "ConfigMap", "default", "client-ca"},
                                                 PORTICO_LINK_REFERENCE)));
  EXPECT_THAT(out.links,
              ::testing::Contains(std::make_pair(ObjectRef{"", "Secret", "default", "port-ca"},
                                                 PORTICO_LINK_REFERENCE)));
  EXPECT_THAT(out.reads, ::testing::Contains("get ConfigMap default/client-ca hit"));
  EXPECT_THAT(out.reads, Not(::testing::Contains("get ConfigMap default/missing miss")));

  // A perPort entry without validation switches it off for its port.
  out = Gateway(GatewayWithListeners(listeners,
                                     Frontend(Validation("ConfigMap", "client-ca"), {{8443, ""}})));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced, HasSubstr(R"("frontendValidation":[{"port":443,)"));
  EXPECT_THAT(*out.synced, Not(HasSubstr(R"("port":8443,"mode")")));
  // Without spec.tls.frontend the view has no frontendValidation at all.
  out = Gateway(GatewayWithListeners(listeners));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced, Not(HasSubstr("frontendValidation")));
}

// GatewayInvalidFrontendClientCertificateValidation: each invalid perPort validation fails only
// its port's listener, with the Gateway API's reasons.
TEST_F(plugin_gateway, InvalidFrontendValidationFailsOnlyItsListeners) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ASSERT_TRUE(
      host_.Apply(TlsSecret("gateway-conformance-infra", "cert", Certificate({"*.org"}))).ok());
  ASSERT_TRUE(
      host_.Apply(CaConfigMap("gateway-conformance-infra", "ca", Certificate({}).cert_pem)).ok());
  ASSERT_TRUE(host_
                  .Apply(CaConfigMap("gateway-conformance-web-backend", "web-backend-cm",
                                     Certificate({}).cert_pem))
                  .ok());
  ASSERT_TRUE(host_.Apply(CaConfigMap("gateway-conformance-infra", "garbage", "Hello")).ok());
  std::string gateway =
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{)"
      R"("name":"invalid","namespace":"gateway-conformance-infra"},"spec":{)"
      R"("gatewayClassName":"portico","listeners":[)" +
      HttpsListener("https", 443) + "," + HttpsListener("https-unresolved", 7443, "first.org") +
      "," + HttpsListener("https-invalid-kind", 8443, "second.org") + "," +
      HttpsListener("https-grant-missing", 6443, "fourth.org") + "," +
      HttpsListener("https-garbage", 5443, "fifth.org") + "," +
      HttpsListener("https-partly", 4443, "sixth.org") + "]" +
      Frontend(
          Validation("ConfigMap", "ca"),
          {{7443, Validation("ConfigMap", "non-exisitng-cm")},
           {8443, Validation("Service", "infra-backend-v2")},
           {6443, Validation("ConfigMap", "web-backend-cm", "gateway-conformance-web-backend")},
           {5443, Validation("ConfigMap", "garbage")},
           {4443, R"({"caCertificateRefs":[{"group":"","kind":"ConfigMap","name":"ca"},)"
                  R"({"group":"","kind":"ConfigMap","name":"gone"}]})"}}) +
      "}}";
  ProcessOutcome out = Gateway(gateway);
  ASSERT_TRUE(out.ok()) << out.status;
  const std::string& status = *out.status_json;
  EXPECT_EQ(ListenerCondition(status, "https", "ResolvedRefs"), "True/ResolvedRefs");
  EXPECT_EQ(ListenerCondition(status, "https", "Accepted"), "True/Accepted");
  struct Want {
    const char* listener;
    const char* resolved;
    const char* accepted;
    const char* message;
  } wants[] = {
      {"https-unresolved", "False/InvalidCACertificateRef", "False/NoValidCACertificate",
       "spec.tls.frontend.perPort[0].tls.validation.caCertificateRefs[0]: ConfigMap "
       "gateway-conformance-infra/non-exisitng-cm does not exist"},
      {"https-invalid-kind", "False/InvalidCACertificateKind", "False/NoValidCACertificate",
       "spec.tls.frontend.perPort[1].tls.validation.caCertificateRefs[0]: Service "
       "gateway-conformance-infra/infra-backend-v2 is not supported; only core ConfigMaps and "
       "Secrets are"},
      {"https-grant-missing", "False/RefNotPermitted", "False/NoValidCACertificate",
       "ConfigMap gateway-conformance-web-backend/web-backend-cm is in another namespace"},
      {"https-garbage", "False/InvalidCACertificateRef", "False/NoValidCACertificate",
       "ConfigMap gateway-conformance-infra/garbage: ca.crt: no PEM certificate found"},
      // One CA of two unusable: accepted, but not programmed with a narrower trust set.
      {"https-partly", "False/InvalidCACertificateRef", "True/Accepted",
       "caCertificateRefs[1]: ConfigMap gateway-conformance-infra/gone does not exist"},
  };
  for (const Want& w : wants) {
    EXPECT_EQ(ListenerCondition(status, w.listener, "ResolvedRefs"), w.resolved) << w.listener;
    EXPECT_EQ(ListenerCondition(status, w.listener, "Accepted"), w.accepted) << w.listener;
    EXPECT_EQ(ListenerCondition(status, w.listener, "Programmed"), "False/Invalid") << w.listener;
    EXPECT_THAT(status, HasSubstr(w.message));
  }
  EXPECT_EQ(GatewayCondition(status, "Accepted"), "True/ListenersNotValid");
  // Only the valid listener is synced, with its own port's validation.
  auto view = json::Parse(*out.synced);
  ASSERT_TRUE(view.ok());
  ASSERT_EQ((*view)["listeners"].Size(), 1u);
  EXPECT_EQ(json::GetString((*view)["listeners"][0], "name"), "https");
  ASSERT_EQ((*view)["frontendValidation"].Size(), 1u);
  EXPECT_EQ(json::GetInt((*view)["frontendValidation"][0], "port"), 443);

  // A ReferenceGrant for ConfigMaps fixes the cross-namespace reference.
  ASSERT_TRUE(
      host_
          .Apply(R"({"apiVersion":"gateway.networking.k8s.io/v1beta1","kind":)"
                 R"("ReferenceGrant","metadata":{"name":"cm","namespace":)"
                 R"("gateway-conformance-web-backend"},"spec":{"from":[{"group":)"
                 R"("gateway.networking.k8s.io","kind":"Gateway","namespace":)"
                 R"("gateway-conformance-infra"}],"to":[{"group":"","kind":"ConfigMap"}]}})")
          .ok());
  out = Gateway(gateway);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ListenerCondition(*out.status_json, "https-grant-missing", "ResolvedRefs"),
            "True/ResolvedRefs");
  EXPECT_EQ(ListenerCondition(*out.status_json, "https-grant-missing", "Programmed"),
            "Unknown/Pending");
  EXPECT_THAT(*out.synced,
              HasSubstr(R"({"ref":{"kind":"ConfigMap","namespace":)"
                        R"("gateway-conformance-web-backend","name":"web-backend-cm"},"sha256":)"));
}

// GatewayFrontendInvalidDefaultClientCertificateValidation: an unusable default fails the HTTPS
// listener; the HTTP listener and its port's validation are untouched.
TEST_F(plugin_gateway, InvalidDefaultValidationLeavesHttpListenersAlone) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ASSERT_TRUE(host_.Apply(TlsSecret("default", "cert", Certificate({"*.org"}))).ok());
  ASSERT_TRUE(host_.Apply(CaConfigMap("default", "per-port", Certificate({}).cert_pem)).ok());
  ProcessOutcome out = Gateway(GatewayWithListeners(
      "[" + HttpsListener("https", 443) + R"(,{"name":"http","port":80,"protocol":"HTTP"}])",
      Frontend(Validation("ConfigMap", "does-not-exist"),
               {{80, Validation("ConfigMap", "per-port")}})));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(ListenerCondition(*out.status_json, "http", "Accepted"), "True/Accepted");
  EXPECT_EQ(ListenerCondition(*out.status_json, "http", "ResolvedRefs"), "True/ResolvedRefs");
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "ResolvedRefs"),
            "False/InvalidCACertificateRef");
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "Accepted"), "False/NoValidCACertificate");
  EXPECT_THAT(*out.status_json,
              HasSubstr("spec.tls.frontend.default.validation.caCertificateRefs[0]: ConfigMap "
                        "default/does-not-exist does not exist"));
  EXPECT_EQ(GatewayCondition(*out.status_json, "Accepted"), "True/ListenersNotValid");
  auto view = json::Parse(*out.synced);
  ASSERT_TRUE(view.ok());
  ASSERT_EQ((*view)["listeners"].Size(), 1u);
  EXPECT_EQ(json::GetString((*view)["listeners"][0], "name"), "http");
  EXPECT_FALSE(view->HasMember("frontendValidation"));
  // Nothing of the failed listener is linked: neither its certificate nor a CA.
  for (const auto& [ref, type] : out.links) EXPECT_EQ(ref.kind, "GatewayClass") << ref.Display();
}

// GatewayFrontendClientCertificateValidationInsecureFallback: the mode travels to gateways and
// the Gateway says it is insecure.
TEST_F(plugin_gateway, InsecureFallbackIsFlaggedOnTheGateway) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ASSERT_TRUE(host_.Apply(TlsSecret("default", "cert", Certificate({"*.org"}))).ok());
  ASSERT_TRUE(host_.Apply(CaConfigMap("default", "ca", Certificate({}).cert_pem)).ok());
  std::string listeners = "[" + HttpsListener("https", 443) + "," +
                          HttpsListener("https-with-hostname", 8443, "second-example.org") + "]";
  ProcessOutcome out = Gateway(GatewayWithListeners(
      listeners, Frontend(Validation("ConfigMap", "ca", "", "AllowInsecureFallback"),
                          {{8443, Validation("ConfigMap", "ca")}})));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(GatewayCondition(*out.status_json, "InsecureFrontendValidationMode"),
            "True/ConfigurationChanged");
  EXPECT_THAT(*out.status_json, HasSubstr("without a trusted certificate on listeners: https\""));
  EXPECT_THAT(*out.synced, HasSubstr(R"({"port":443,"mode":"AllowInsecureFallback",)"));
  EXPECT_THAT(*out.synced, HasSubstr(R"({"port":8443,"mode":"AllowValidOnly",)"));
  EXPECT_EQ(ListenerCondition(*out.status_json, "https", "ResolvedRefs"), "True/ResolvedRefs");
  // Secure everywhere: no condition.
  out = Gateway(GatewayWithListeners(listeners, Frontend(Validation("ConfigMap", "ca"))));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(GatewayCondition(*out.status_json, "InsecureFrontendValidationMode"), "");
}

// A CA that arrives after its Gateway fixes it: the Gateway's read of it is recorded.
TEST_F(plugin_gateway, LateCaConfigMapResolvesTheListener) {
  FakeWorld world(host_);
  ASSERT_TRUE(world.Put(kGatewayClass).ok());
  ASSERT_TRUE(world
                  .Put(GatewayWithListeners("[" + HttpsListener("https", 443) + "]",
                                            Frontend(Validation("ConfigMap", "ca"))))
                  .ok());
  ASSERT_TRUE(world.Put(TlsSecret("default", "cert", Certificate({"*.org"}))).ok());
  ASSERT_TRUE(world.Settle().ok());
  ObjectRef gw{kGroup, "Gateway", "default", "web"};
  EXPECT_EQ(ListenerCondition(*world.AggregatedStatus(gw), "https", "Accepted"),
            "False/NoValidCACertificate");
  ASSERT_TRUE(world.Put(CaConfigMap("default", "ca", Certificate({}).cert_pem)).ok());
  ASSERT_TRUE(world.Settle().ok());
  EXPECT_EQ(ListenerCondition(*world.AggregatedStatus(gw), "https", "Accepted"), "True/Accepted");
  EXPECT_EQ(ListenerCondition(*world.AggregatedStatus(gw), "https", "ResolvedRefs"),
            "True/ResolvedRefs");
}

// Every permutation of the objects a cross-namespace HTTPS Gateway depends on settles to the
// same status: the fake world re-processes everything until a fixed point (fake_world.h).
TEST_F(plugin_gateway, StatusIsIndependentOfTheOrderObjectsArrive) {
  FakeWorld world(host_);
  std::vector<std::string> objects = {
      kGatewayClass, kCrossNamespaceCert, kSecretGrant,
      TlsSecret("gateway-conformance-web-backend", "certificate", Certificate({"*"})),
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"gateway-conformance-infra"}})"};
  for (const std::string& o : objects) ASSERT_TRUE(world.Put(o).ok());
  std::vector<ObjectRef> order = world.refs();
  ObjectRef gateway{kGroup, "Gateway", "gateway-conformance-infra",
                    "gateway-secret-reference-grant-specific"};
  std::optional<std::string> first;
  int permutations = 0;
  std::sort(order.begin(), order.end());
  do {
    FakeHost host;
    ASSERT_TRUE(host.Load(PLUGIN_PATH).ok());
    ASSERT_TRUE(host.Load(SECRET_PLUGIN_PATH).ok());
    ASSERT_TRUE(host.Load(REFERENCEGRANT_PLUGIN_PATH).ok());
    ASSERT_TRUE(host.Load(NAMESPACE_PLUGIN_PATH).ok());
    FakeWorld w(host);
    for (const std::string& o : objects) ASSERT_TRUE(w.Put(o).ok());
    ASSERT_TRUE(w.Settle(order).ok());
    std::optional<std::string> status = w.AggregatedStatus(gateway);
    ASSERT_TRUE(status.has_value());
    if (!first) first = status;
    EXPECT_EQ(status, first);
    ++permutations;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(permutations, 120);
  EXPECT_EQ(ListenerCondition(*first, "https", "ResolvedRefs"), "True/ResolvedRefs");
  EXPECT_EQ(GatewayCondition(*first, "Accepted"), "True/Accepted");
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
      {R"([{"name":"a","port":443,"protocol":"HTTPS","tls":{"mode":"Passthrough"}}])", "",
       "spec.listeners[0].tls.mode: tls mode must be Terminate for protocol HTTPS"},
      {R"([{"name":"a","port":443,"protocol":"TLS","tls":{"certificateRefs":[{"name":"c"}]}}])", "",
       "spec.listeners[0].tls.mode: tls mode must be set for protocol TLS"},
      {"[" + http + "]", R"(,"tls":{"frontend":{}})", "spec.tls.frontend.default: is required"},
      {"[" + http + "]", Frontend(Validation("ConfigMap", "ca", "", "Sometimes")),
       "spec.tls.frontend.default.validation.mode: \"Sometimes\" is not AllowValidOnly or "
       "AllowInsecureFallback"},
      {"[" + http + "]", Frontend(R"({"caCertificateRefs":[]})"),
       "spec.tls.frontend.default.validation.caCertificateRefs: must list 1 to 8 references"},
      {"[" + http + "]", Frontend(Validation("ConfigMap", "Bad_Name")),
       "spec.tls.frontend.default.validation.caCertificateRefs[0].name: \"Bad_Name\" is not a "
       "valid name"},
      {"[" + http + "]", Frontend(Validation("ConfigMap", "ca", "Bad_NS")),
       "caCertificateRefs[0].namespace: \"Bad_NS\" is not a valid namespace"},
      {"[" + http + "]",
       Frontend("", {{443, Validation("ConfigMap", "a")}, {443, Validation("ConfigMap", "b")}}),
       "spec.tls.frontend.perPort[1].port: port 443 repeats spec.tls.frontend.perPort[0]"},
      {"[" + http + "]", Frontend("", {{0, Validation("ConfigMap", "a")}}),
       "spec.tls.frontend.perPort[0].port: must be 1-65535"},
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
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  ProcessOutcome out =
      host_.Process(kGroup, "Gateway",
                    R"({"apiVersion":"gateway.networking.k8s.io/v1beta1","kind":"Gateway",
      "metadata":{"name":"web","namespace":"default","generation":3},"spec":{)"
                    R"("gatewayClassName":"portico",
      "listeners":[{"name":"http","port":8080,"protocol":"HTTP"}],"addresses":[{)"
                    R"("value":"127.0.1.1"}]}})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced, HasSubstr(R"("generation":3)"));
  EXPECT_THAT(*out.status_json, HasSubstr(R"("observedGeneration":3)"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("addresses":[{"type":"IPAddress","value":"127.0.1.1"}])"));
}

}  // namespace
}  // namespace portico::plugins::gateway
