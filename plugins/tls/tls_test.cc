// tls_test: the TLSPolicy kind in the SDK's fake host, with the Gateway, Secret and
// ReferenceGrant plugins beside it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_host.h"

namespace portico::plugins::tls {
namespace {

using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kGateway[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"web","namespace":"default"},"spec":{"gatewayClassName":"portico","listeners":[
    {"name":"http","port":80,"protocol":"HTTP"},
    {"name":"https","port":443,"protocol":"HTTPS","hostname":"*.example.com",
     "tls":{"certificateRefs":[{"name":"wildcard"}]}}]}})";
constexpr char kCertificate[] = R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls",
  "metadata":{"name":"shop-cert","namespace":"default"},
  "data":{"tls.crt":"LS0tLS1CRUdJTg==","tls.key":"LS0tLS1CRUdJTg=="}})";
constexpr char kClientCa[] = R"({"apiVersion":"v1","kind":"Secret",
  "metadata":{"name":"client-ca","namespace":"default"},"data":{"ca.crt":"LS0tLS1CRUdJTg=="}})";

constexpr char kPolicy[] = R"({"apiVersion":"portico.io/v1alpha1","kind":"TLSPolicy",
  "metadata":{"name":"shop","namespace":"default","generation":2},
  "spec":{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"web",)"
                           R"("sectionName":"https"}],
          "hostnames":["shop.example.com"],"certificateRef":{"name":"shop-cert"},
          "minVersion":"TLSv1.2","ciphers":["ECDHE-ECDSA-AES128-GCM-SHA256",)"
                           R"("ECDHE-RSA-AES128-GCM-SHA256"],
          "clientCertificate":{"mode":"Optional","caCertificateRefs":[{"name":"client-ca"}],)"
                           R"("verifyDepth":3}}})";

std::string PolicyWith(std::string_view spec) {
  return R"({"apiVersion":"portico.io/v1alpha1","kind":"TLSPolicy","metadata":{"name":"p",)"
         R"("namespace":"default"},"spec":)" +
         std::string(spec) + "}";
}

class plugin_tls : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(GATEWAY_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(SECRET_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(REFERENCEGRANT_PLUGIN_PATH).ok());
  }
  ProcessOutcome Policy(const std::string& json) {
    return host_.Process("portico.io", "TLSPolicy", json);
  }
  FakeHost host_;
};

TEST_F(plugin_tls, RegistersTheKind) {
  const auto* kind = host_.FindKind("portico.io", "TLSPolicy");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->plural, "tlspolicies");
  EXPECT_EQ(kind->reads, (std::vector<std::string>{"Gateway.gateway.networking.k8s.io", "Secret",
                                                   "ReferenceGrant.gateway.networking.k8s.io"}));
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_ATTACHED);
}

TEST_F(plugin_tls, ValidPolicySyncsNormalisedSettings) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  ASSERT_TRUE(host_.Apply(kCertificate).ok());
  ASSERT_TRUE(host_.Apply(kClientCa).ok());
  ProcessOutcome out = Policy(kPolicy);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.synced,
            R"({"metadata":{"name":"shop","namespace":"default","generation":2},)"
            R"("targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
            R"("namespace":"default","name":"web","sectionName":"https"}],)"
            R"("hostnames":["shop.example.com"],"certificateRef":{"namespace":"default",)"
            R"("name":"shop-cert"},)"
            R"("minVersion":"TLSv1.2","maxVersion":"TLSv1.3","ciphers":[)"
            R"("ECDHE-ECDSA-AES128-GCM-SHA256","ECDHE-RSA-AES128-GCM-SHA256"],)"
            R"("clientCertificate":{"mode":"Optional","caCertificateRefs":[{"namespace":"default",)"
            R"("name":"client-ca"}],"verifyDepth":3}})");
  EXPECT_EQ(out.export_json,
            R"({"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
            R"("namespace":"default","name":"web","sectionName":"https"}],)"
            R"("hostnames":["shop.example.com"]})");
  EXPECT_EQ(out.status_json,
            R"({"ancestors":[{"ancestorRef":{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
            R"("namespace":"default","name":"web","sectionName":"https"},)"
            R"("conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"",)"
            R"("observedGeneration":2},)"
            R"({"type":"ResolvedRefs","status":"True","reason":"ResolvedRefs","message":"",)"
            R"("observedGeneration":2}]}]})");
  EXPECT_THAT(out.reads, ElementsAre("get Gateway default/web hit", "secret default/shop-cert hit",
                                     "secret default/client-ca hit"));
  EXPECT_EQ(out.synced->find("LS0t"), std::string::npos);
}

TEST_F(plugin_tls, TargetsResolveIndependentlyOfOrder) {
  const std::string policy =
      PolicyWith(R"({"targetRefs":[{"name":"web"}],"minVersion":"TLSv1.3"})");
  ProcessOutcome out = Policy(policy);  // before its Gateway
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("reason":"TargetNotFound","message":"Gateway default/web does not exist")"));
  EXPECT_THAT(out.reads, ElementsAre("get Gateway default/web miss"));
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  out = Policy(policy);
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"Accepted","status":"True")"));
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("minVersion":"TLSv1.3","maxVersion":"TLSv1.3","ciphers":[])"));

  out = Policy(
      PolicyWith(R"({"targetRefs":[{"name":"web","sectionName":"http"}],"minVersion":"TLSv1.3"})"));
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("reason":"Invalid",)"
                R"("message":"listener \"http\" of Gateway default/web is not HTTPS or TLS")"));
  out = Policy(
      PolicyWith(R"({"targetRefs":[{"name":"web","sectionName":"grpc"}],"minVersion":"TLSv1.3"})"));
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(
          R"("reason":"TargetNotFound","message":"Gateway default/web has no listener \"grpc\"")"));
}

TEST_F(plugin_tls, SecretsAreCheckedAndCrossNamespaceNeedsAGrant) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  ProcessOutcome out = Policy(
      PolicyWith(R"({"targetRefs":[{"name":"web"}],"certificateRef":{"name":"shop-cert"}})"));
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("reason":"InvalidCertificateRef",)"
                R"("message":"spec.certificateRef: Secret default/shop-cert does not exist")"));
  ASSERT_TRUE(host_.Apply(kClientCa).ok());
  out = Policy(
      PolicyWith(R"({"targetRefs":[{"name":"web"}],"certificateRef":{"name":"client-ca"}})"));
  EXPECT_THAT(*out.status_json,
              HasSubstr("Secret default/client-ca is not a kubernetes.io/tls Secret"));
  ASSERT_TRUE(host_.Apply(kCertificate).ok());
  out = Policy(
      PolicyWith(R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"caCertificateRefs":[{)"
                 R"("name":"shop-cert"}]}})"));
  EXPECT_THAT(*out.status_json, HasSubstr(R"("reason":"InvalidCACertificateRef",)"
                                          R"("message":"spec.clientCertificate.caCertificateRefs[)"
                                          R"(0]: Secret default/shop-cert has no ca.crt")"));

  const std::string cross = PolicyWith(
      R"({"targetRefs":[{"name":"web"}],"certificateRef":{"name":"shared","namespace":"certs"}})");
  host_.SetSecret("certs", "shared", "kubernetes.io/tls",
                  {{"tls.crt", "YQ=="}, {"tls.key", "Yg=="}});
  out = Policy(cross);
  EXPECT_THAT(*out.status_json, HasSubstr(R"("reason":"RefNotPermitted")"));
  ASSERT_TRUE(
      host_
          .Apply(R"({"apiVersion":"gateway.networking.k8s.io/v1beta1","kind":"ReferenceGrant",
      "metadata":{"name":"tls-policies","namespace":"certs"},
      "spec":{"from":[{"group":"portico.io","kind":"TLSPolicy","namespace":"default"}],"to":[{)"
                 R"("group":"","kind":"Secret","name":"shared"}]}})")
          .ok());
  out = Policy(cross);
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"ResolvedRefs","status":"True")"));
}

TEST_F(plugin_tls, CrossFieldRules) {
  host_.set_validate_schema(false);
  struct Case {
    const char* spec;
    const char* message;
  } cases[] = {
      {R"({"targetRefs":[]})",
       "TLSPolicy default/p: spec.targetRefs: at least one target is required"},
      {R"({"targetRefs":[{"name":"web"}]})",
       "spec: a TLSPolicy must set at least one of certificateRef"},
      {R"({"targetRefs":[{"group":"","kind":"Service","name":"web"}],"minVersion":"TLSv1.2"})",
       "spec.targetRefs[0]: only Gateways (group gateway.networking.k8s.io) can be targeted, not "
       "Service"},
      {R"({"targetRefs":[{"name":"web"},{"name":"web"}],"minVersion":"TLSv1.2"})",
       "spec.targetRefs[1]: duplicate target Gateway \"web\" (also spec.targetRefs[0])"},
      {R"({"targetRefs":[{"name":"web"}],"minVersion":"TLSv1.3","maxVersion":"TLSv1.2"})",
       "spec.minVersion: \"TLSv1.3\" is above maxVersion \"TLSv1.2\""},
      {R"({"targetRefs":[{"name":"web"}],"minVersion":"TLSv1.1"})",
       "spec.minVersion: \"TLSv1.1\" is not TLSv1.2 or TLSv1.3"},
      {R"({"targetRefs":[{"name":"web"}],"minVersion":"TLSv1.3","ciphers":[)"
       R"("ECDHE-RSA-AES128-GCM-SHA256"]})",
       "spec.ciphers: cipher suites apply to TLS 1.2 only"},
      {R"({"targetRefs":[{"name":"web"}],"ciphers":["A","A"]})",
       "spec.ciphers[1]: duplicate cipher \"A\""},
      {R"({"targetRefs":[{"name":"web"}],"hostnames":["a.example.com","a.example.com"],)"
       R"("minVersion":"TLSv1.2"})",
       "spec.hostnames[1]: duplicate hostname \"a.example.com\""},
      {R"({"targetRefs":[{"name":"web"}],"hostnames":["A.example.com"],"minVersion":"TLSv1.2"})",
       "spec.hostnames[0]: \"A.example.com\" is not a valid hostname"},
      {R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"mode":"None",)"
       R"("caCertificateRefs":[{"name":"ca"}]}})",
       "spec.clientCertificate.caCertificateRefs: must be empty when mode is None"},
      {R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"mode":"Require"}})",
       "spec.clientCertificate.caCertificateRefs: at least one CA is required when mode is "
       "Require"},
      {R"({"targetRefs":[{"name":"web"}],"clientCertificate":{}})",
       "spec.clientCertificate.caCertificateRefs: at least one CA is required when mode is "
       "Require"},
      {R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"mode":"None","verifyDepth":2}})",
       "spec.clientCertificate.verifyDepth: must not be set when mode is None"},
      {R"({"targetRefs":[{"name":"web"}],"certificateRef":{"name":"c","namespace":"Bad"}})",
       "spec.certificateRef.namespace: \"Bad\" is not a valid namespace"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Policy(PolicyWith(c.spec));
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.spec;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message)) << c.spec;
  }
}

TEST_F(plugin_tls, WholeGatewayTargetsAndClientCertificateNone) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  ProcessOutcome out =
      Policy(PolicyWith(R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"mode":"None"}})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("clientCertificate":{"mode":"None","caCertificateRefs":[]})"));
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("ancestorRef":{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
                        R"("namespace":"default","name":"web"})"));
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"Accepted","status":"True")"));
}

}  // namespace
}  // namespace portico::plugins::tls
