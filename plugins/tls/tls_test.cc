// tls_test: the TLSPolicy kind in the SDK's fake host, with the Gateway, Secret and
// ReferenceGrant plugins beside it: validation, Secret resolution through the Secret plugin's
// exports, ALPN, conflicts between policies, links and the listener_set.v1 entry it stages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/secret_data.h"
#include "portico/sdk/testing/fake_host.h"
#include "portico/sdk/testing/test_certs.h"

namespace portico::plugins::tls {
namespace {

using sdk::Base64Encode;
using sdk::testing::FakeChange;
using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;
using sdk::testing::StageOutcome;
using sdk::testing::TestCertificate;
using ::testing::_;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kDayMs = 24 * 3600 * 1000;
constexpr int64_t kNowMs = 1700000000000;  // the fake host's clock

constexpr char kGateway[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"web","namespace":"default"},"spec":{"gatewayClassName":"portico","listeners":[
    {"name":"http","port":80,"protocol":"HTTP"},
    {"name":"https","port":443,"protocol":"HTTPS","hostname":"*.example.com",
     "tls":{"certificateRefs":[{"name":"wildcard"}]}},
    {"name":"https-alt","port":8443,"protocol":"HTTPS",
     "tls":{"certificateRefs":[{"name":"wildcard"}]}}]}})";
constexpr char kOtherGateway[] = R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
  "metadata":{"name":"edge","namespace":"default"},"spec":{"gatewayClassName":"portico",
  "listeners":[{"name":"https","port":443,"protocol":"HTTPS",
                "tls":{"certificateRefs":[{"name":"wildcard"}]}}]}})";

TestCertificate Certificate(std::vector<std::string> dns) {
  return sdk::testing::MakeTestCertificate(
      {std::move(dns), kNowMs - kDayMs, kNowMs + 365 * kDayMs});
}

std::string TlsSecret(std::string_view ns, std::string_view name, const TestCertificate& cert) {
  return R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls","metadata":{"name":")" +
         std::string(name) + R"(","namespace":")" + std::string(ns) + R"("},"data":{"tls.crt":")" +
         Base64Encode(cert.cert_pem) + R"(","tls.key":")" + Base64Encode(cert.key_pem) + R"("}})";
}

std::string CaSecret(std::string_view ns, std::string_view name, std::string_view ca_pem) {
  return R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":")" + std::string(name) +
         R"(","namespace":")" + std::string(ns) + R"("},"data":{"ca.crt":")" +
         Base64Encode(ca_pem) + R"("}})";
}

// NamedPolicy is a TLSPolicy `name` in default, created at `created` ("" for none).
std::string NamedPolicy(std::string_view name, std::string_view created, std::string_view spec) {
  std::string metadata = R"({"name":")" + std::string(name) + R"(","namespace":"default")";
  if (!created.empty()) metadata += R"(,"creationTimestamp":")" + std::string(created) + "\"";
  return R"({"apiVersion":"portico.io/v1alpha1","kind":"TLSPolicy","metadata":)" + metadata +
         R"(},"spec":)" + std::string(spec) + "}";
}

std::string PolicyWith(std::string_view spec) { return NamedPolicy("p", "", spec); }

// Ancestor returns the conditions of the status ancestor for Gateway `gateway` (and section).
std::vector<std::string> Ancestor(const ProcessOutcome& out, std::string_view gateway,
                                  std::string_view section = "") {
  std::vector<std::string> conditions;
  if (!out.status_json) return conditions;
  auto doc = json::Parse(*out.status_json);
  if (!doc.ok()) return conditions;
  for (const auto& a : (*doc)["ancestors"].GetArray()) {
    if (json::GetString(a, "ancestorRef.name") != gateway ||
        json::GetString(a, "ancestorRef.sectionName") != section) {
      continue;
    }
    for (const auto& c : a["conditions"].GetArray()) {
      conditions.push_back(json::GetString(c, "type") + "=" + json::GetString(c, "status") + "/" +
                           json::GetString(c, "reason") + ": " + json::GetString(c, "message"));
    }
  }
  return conditions;
}

std::string Sha256Of(FakeHost& host, std::string_view name, const char* field) {
  std::optional<std::string> e = host.GetExport({"", "Secret", "default", std::string(name)});
  if (!e) return "";
  auto doc = json::Parse(*e);
  return doc.ok() ? json::GetString(*doc, field) : "";
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
  // ApplyWorld stores the Gateway, a certificate Secret shop-cert and a CA Secret client-ca.
  void ApplyWorld() {
    ASSERT_TRUE(host_.Apply(kGateway).ok());
    ASSERT_TRUE(host_.Apply(TlsSecret("default", "shop-cert", shop_)).ok());
    ProcessOutcome ca = host_.Apply(CaSecret("default", "client-ca", ca_.cert_pem));
    ASSERT_TRUE(ca.ok()) << ca.status;
  }
  FakeHost host_;
  TestCertificate shop_ = Certificate({"shop.example.com"});
  TestCertificate ca_ = Certificate({"ca.example.com"});
};

constexpr char kPolicy[] = R"({"apiVersion":"portico.io/v1alpha1","kind":"TLSPolicy",
  "metadata":{"name":"shop","namespace":"default","generation":2,
              "creationTimestamp":"2023-11-14T22:13:20Z"},
  "spec":{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"web",)"
                           R"("sectionName":"https"}],
          "hostnames":["shop.example.com"],"certificateRef":{"name":"shop-cert"},
          "minVersion":"TLSv1.2","ciphers":["ECDHE-ECDSA-AES128-GCM-SHA256",)"
                           R"("ECDHE-RSA-AES128-GCM-SHA256"],"alpn":["http/1.1","http/1.0"],
          "clientCertificate":{"mode":"Optional","caCertificateRefs":[{"name":"client-ca"}],)"
                           R"("verifyDepth":3,"allowedSans":["client.example.com",)"
                           R"("spiffe://trust.example/ns/shop/sa/web"]}}})";

TEST_F(plugin_tls, RegistersTheKindWithAHandler) {
  const auto* kind = host_.FindKind("portico.io", "TLSPolicy");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->plural, "tlspolicies");
  EXPECT_EQ(kind->reads, (std::vector<std::string>{"Gateway.gateway.networking.k8s.io", "Secret",
                                                   "ReferenceGrant.gateway.networking.k8s.io",
                                                   "TLSPolicy.portico.io"}));
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_ATTACHED);
  EXPECT_NE(kind->capabilities & PORTICO_CAP_HANDLER, 0u);
  EXPECT_NE(kind->stage, nullptr);
}

TEST_F(plugin_tls, ValidPolicySyncsResolvedSettingsAndLinks) {
  ApplyWorld();
  ProcessOutcome out = Policy(kPolicy);
  ASSERT_TRUE(out.ok()) << out.status;
  const std::string cert_sha = Sha256Of(host_, "shop-cert", "sha256");
  const std::string ca_sha = Sha256Of(host_, "client-ca", "ca.sha256");
  ASSERT_EQ(cert_sha.size(), 64u);
  ASSERT_EQ(ca_sha.size(), 64u);
  EXPECT_NE(cert_sha, ca_sha);
  EXPECT_EQ(
      *out.synced,
      R"({"metadata":{"name":"shop","namespace":"default","generation":2},)"
      R"("createdUnixMs":1700000000000,)"
      R"("targets":[{"gateway":{"namespace":"default","name":"web"},"listener":"https"}],)"
      R"("hostnames":["shop.example.com"],)"
      R"("certificate":{"secretRef":{"namespace":"default","name":"shop-cert"},"sha256":")" +
          cert_sha +
          R"("},"minVersion":"TLSv1.2","maxVersion":"TLSv1.3","ciphers":[)"
          R"("ECDHE-ECDSA-AES128-GCM-SHA256","ECDHE-RSA-AES128-GCM-SHA256"],)"
          R"("alpn":["http/1.1","http/1.0"],)"
          R"("clientCertificate":{"mode":"Optional","verifyDepth":3,"caCertificates":[{)"
          R"("secretRef":{"namespace":"default","name":"client-ca"},"sha256":")" +
          ca_sha +
          R"("}],"allowedSans":["client.example.com","spiffe://trust.example/ns/shop/sa/web"]}})");
  EXPECT_EQ(out.export_json,
            R"({"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
            R"("namespace":"default","name":"web","sectionName":"https"}],)"
            R"("hostnames":["shop.example.com"],"createdUnixMs":1700000000000,)"
            R"("contends":[{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
            R"("namespace":"default","name":"web","sectionName":"https"}]})");
  EXPECT_EQ(out.status_json,
            R"({"ancestors":[{"ancestorRef":{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
            R"("namespace":"default","name":"web","sectionName":"https"},)"
            R"("conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"",)"
            R"("observedGeneration":2},)"
            R"({"type":"ResolvedRefs","status":"True","reason":"ResolvedRefs","message":"",)"
            R"("observedGeneration":2}]}]})");
  EXPECT_THAT(out.reads,
              ElementsAre("get Gateway default/web hit", "get Secret default/shop-cert hit",
                          "get Secret default/client-ca hit", "list TLSPolicy default"));
  // The policy goes with its Gateway; its Secrets' material goes with the policy.
  using Link = std::pair<sdk::ObjectRef, portico_link_type>;
  EXPECT_THAT(out.links,
              ElementsAre(Link{{"gateway.networking.k8s.io", "Gateway", "default", "web"},
                               PORTICO_LINK_PARENT},
                          Link{{"", "Secret", "default", "shop-cert"}, PORTICO_LINK_REFERENCE},
                          Link{{"", "Secret", "default", "client-ca"}, PORTICO_LINK_REFERENCE}));
  EXPECT_EQ(out.synced->find("BEGIN"), std::string::npos);
  EXPECT_EQ(out.synced->find(Base64Encode(shop_.key_pem).substr(0, 24)), std::string::npos);
}

TEST_F(plugin_tls, TargetsResolveIndependentlyOfOrder) {
  const std::string policy =
      PolicyWith(R"({"targetRefs":[{"name":"web"}],"minVersion":"TLSv1.3"})");
  ProcessOutcome out = Policy(policy);  // before its Gateway
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("reason":"TargetNotFound","message":"Gateway default/web does not exist")"));
  EXPECT_THAT(out.reads, ElementsAre("get Gateway default/web miss", "list TLSPolicy default"));
  EXPECT_FALSE(out.synced.has_value());  // applies nowhere: nothing to stage
  EXPECT_THAT(*out.export_json, HasSubstr(R"("contends":[])"));
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  out = Policy(policy);
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"Accepted","status":"True")"));
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("targets":[{"gateway":{"namespace":"default",)"
                        R"("name":"web"}}],"hostnames":[],"minVersion":"TLSv1.3",)"
                        R"("maxVersion":"TLSv1.3","ciphers":[],"alpn":["http/1.1"]})"));

  out = Policy(
      PolicyWith(R"({"targetRefs":[{"name":"web","sectionName":"http"}],"minVersion":"TLSv1.3"})"));
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(R"("reason":"Invalid",)"
                R"("message":"listener \"http\" of Gateway default/web is not HTTPS or TLS")"));
  EXPECT_FALSE(out.synced.has_value());
  out = Policy(
      PolicyWith(R"({"targetRefs":[{"name":"web","sectionName":"grpc"}],"minVersion":"TLSv1.3"})"));
  EXPECT_THAT(
      *out.status_json,
      HasSubstr(
          R"("reason":"TargetNotFound","message":"Gateway default/web has no listener \"grpc\"")"));
}

TEST_F(plugin_tls, SecretsNeedUsableMaterial) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  auto resolved = [&](std::string_view spec) {
    ProcessOutcome out = Policy(PolicyWith(spec));
    EXPECT_TRUE(out.ok()) << out.status;
    EXPECT_FALSE(out.synced.has_value()) << spec;  // never staged without its material
    std::vector<std::string> c = Ancestor(out, "web");
    return c.size() == 2 ? c[1] : std::string("?");
  };
  const char* cert_spec = R"({"targetRefs":[{"name":"web"}],"certificateRef":{"name":"cert"}})";
  const char* ca_spec =
      R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"caCertificateRefs":[{"name":"ca"}]}})";
  EXPECT_EQ(resolved(cert_spec),
            "ResolvedRefs=False/InvalidCertificateRef: spec.certificateRef: "
            "Secret default/cert does not exist");
  EXPECT_EQ(resolved(ca_spec),
            "ResolvedRefs=False/InvalidCACertificateRef: "
            "spec.clientCertificate.caCertificateRefs[0]: Secret default/ca does not exist");

  // Unusable material, as the Secret plugin found it: not PEM, then a key of another certificate.
  ASSERT_TRUE(host_
                  .Apply(R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls",)"
                         R"("metadata":{"name":"cert","namespace":"default"},)"
                         R"("data":{"tls.crt":"SGVsbG8gd29ybGQK","tls.key":"SGVsbG8gd29ybGQK"}})")
                  .ok());
  EXPECT_THAT(resolved(cert_spec),
              HasSubstr("ResolvedRefs=False/InvalidCertificateRef: spec.certificateRef: Secret "
                        "default/cert: tls.crt is not a PEM certificate"));
  TestCertificate other = Certificate({"other.example.com"});
  TestCertificate mismatched{shop_.cert_pem, other.key_pem};
  ASSERT_TRUE(host_.Apply(TlsSecret("default", "cert", mismatched)).ok());
  EXPECT_EQ(resolved(cert_spec),
            "ResolvedRefs=False/InvalidCertificateRef: spec.certificateRef: Secret default/cert: "
            "tls.key does not match the certificate in tls.crt");
  // A CA Secret is not a certificate, and a certificate Secret without ca.crt is not a CA.
  ASSERT_TRUE(host_.Apply(CaSecret("default", "ca", ca_.cert_pem)).ok());
  EXPECT_EQ(resolved(R"({"targetRefs":[{"name":"web"}],"certificateRef":{"name":"ca"}})"),
            "ResolvedRefs=False/InvalidCertificateRef: spec.certificateRef: Secret default/ca is "
            "of type \"Opaque\", not a kubernetes.io/tls Secret");
  EXPECT_EQ(resolved(R"({"targetRefs":[{"name":"web"}],"clientCertificate":{)"
                     R"("caCertificateRefs":[{"name":"cert"}]}})"),
            "ResolvedRefs=False/InvalidCACertificateRef: "
            "spec.clientCertificate.caCertificateRefs[0]: Secret default/cert has no ca.crt");
  ASSERT_TRUE(host_.Apply(CaSecret("default", "ca", "Hello world")).ok());
  EXPECT_THAT(resolved(ca_spec), HasSubstr("ResolvedRefs=False/InvalidCACertificateRef: "
                                           "spec.clientCertificate.caCertificateRefs[0]: Secret "
                                           "default/ca: ca.crt: no PEM certificate found"));

  // Fixed material resolves, and the digest follows the material (rotation restages).
  ASSERT_TRUE(host_.Apply(TlsSecret("default", "cert", shop_)).ok());
  ProcessOutcome out = Policy(PolicyWith(cert_spec));
  ASSERT_TRUE(out.synced.has_value());
  const std::string first = Sha256Of(host_, "cert", "sha256");
  EXPECT_THAT(*out.synced, HasSubstr(first));
  ASSERT_TRUE(host_.Apply(TlsSecret("default", "cert", other)).ok());
  out = Policy(PolicyWith(cert_spec));
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_NE(Sha256Of(host_, "cert", "sha256"), first);
  EXPECT_THAT(*out.synced, HasSubstr(Sha256Of(host_, "cert", "sha256")));
  EXPECT_THAT(*out.synced, Not(HasSubstr(first)));
}

TEST_F(plugin_tls, CrossNamespaceSecretsNeedAGrantAndAreOnlyLinkedWhenAllowed) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  ASSERT_TRUE(host_.Apply(TlsSecret("certs", "shared", shop_)).ok());
  const std::string cross = PolicyWith(
      R"({"targetRefs":[{"name":"web"}],"certificateRef":{"name":"shared","namespace":"certs"}})");
  ProcessOutcome out = Policy(cross);
  EXPECT_THAT(Ancestor(out, "web"),
              ElementsAre(HasSubstr("Accepted=True"),
                          "ResolvedRefs=False/RefNotPermitted: spec.certificateRef: Secret "
                          "certs/shared is in another namespace and no ReferenceGrant there allows "
                          "TLSPolicies from default to reference it"));
  EXPECT_FALSE(out.synced.has_value());
  // Material the policy may not use never follows it to gateways.
  for (const auto& [ref, type] : out.links) EXPECT_NE(type, PORTICO_LINK_REFERENCE) << ref.name;

  ASSERT_TRUE(
      host_
          .Apply(R"({"apiVersion":"gateway.networking.k8s.io/v1beta1","kind":"ReferenceGrant",
      "metadata":{"name":"tls-policies","namespace":"certs"},
      "spec":{"from":[{"group":"portico.io","kind":"TLSPolicy","namespace":"default"}],"to":[{)"
                 R"("group":"","kind":"Secret","name":"shared"}]}})")
          .ok());
  out = Policy(cross);
  EXPECT_THAT(*out.status_json, HasSubstr(R"("type":"ResolvedRefs","status":"True")"));
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_THAT(*out.synced, HasSubstr(R"("certificate":{"secretRef":{"namespace":"certs",)"
                                     R"("name":"shared"},"sha256":")"));
  EXPECT_THAT(out.links,
              ::testing::Contains(std::make_pair(sdk::ObjectRef{"", "Secret", "certs", "shared"},
                                                 PORTICO_LINK_REFERENCE)));
}

TEST_F(plugin_tls, AlpnOtherThanHttp1IsRefusedVisibly) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  ProcessOutcome out =
      Policy(PolicyWith(R"({"targetRefs":[{"name":"web"},{"name":"web","sectionName":"https"}],)"
                        R"("alpn":["http/1.1","h2"]})"));
  ASSERT_TRUE(out.ok()) << out.status;
  for (std::string_view section : {"", "https"}) {
    EXPECT_THAT(Ancestor(out, "web", section),
                ElementsAre("Accepted=False/UnsupportedValue: spec.alpn[1]: \"h2\": HTTP/2 is not "
                            "implemented; the gateway serves HTTP/1.1 only",
                            "ResolvedRefs=True/ResolvedRefs: "))
        << section;
  }
  EXPECT_FALSE(out.synced.has_value());
  EXPECT_THAT(*out.export_json, HasSubstr(R"("contends":[])"));

  out = Policy(PolicyWith(R"({"targetRefs":[{"name":"web"}],"alpn":["spdy/3"]})"));
  EXPECT_THAT(Ancestor(out, "web"),
              ElementsAre("Accepted=False/UnsupportedValue: spec.alpn[0]: \"spdy/3\": the "
                          "gateway serves only http/1.1 and http/1.0 over TLS",
                          HasSubstr("ResolvedRefs=True")));
  // A target problem is named before the protocol.
  out = Policy(PolicyWith(R"({"targetRefs":[{"name":"nowhere"}],"alpn":["h2"]})"));
  EXPECT_THAT(Ancestor(out, "nowhere"), ElementsAre(HasSubstr("Accepted=False/TargetNotFound"),
                                                    HasSubstr("ResolvedRefs=True")));

  // Served protocols keep the written order (the server's preference).
  out = Policy(PolicyWith(R"({"targetRefs":[{"name":"web"}],"alpn":["http/1.0","http/1.1"]})"));
  EXPECT_THAT(Ancestor(out, "web"), ElementsAre(HasSubstr("Accepted=True"), HasSubstr("True")));
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_THAT(*out.synced, HasSubstr(R"("alpn":["http/1.0","http/1.1"])"));
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
       "spec: a TLSPolicy must set at least one of certificateRef, minVersion, maxVersion, "
       "ciphers, alpn or clientCertificate"},
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
      // alpn
      {R"({"targetRefs":[{"name":"web"}],"alpn":[]})",
       "spec.alpn: must name at least one protocol (leave it out for http/1.1)"},
      {R"({"targetRefs":[{"name":"web"}],"alpn":["http/1.1","http/1.1"]})",
       "spec.alpn[1]: duplicate protocol \"http/1.1\""},
      {R"({"targetRefs":[{"name":"web"}],"alpn":["http 1.1"]})",
       "spec.alpn[0]: \"http 1.1\" is not a protocol id (1-255 visible ASCII characters)"},
      {R"({"targetRefs":[{"name":"web"}],"alpn":[""]})", "spec.alpn[0]: \"\" is not a protocol id"},
      {R"({"targetRefs":[{"name":"web"}],"alpn":"http/1.1"})", "spec.alpn: must be an array"},
      // allowedSans
      {R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"mode":"None",)"
       R"("allowedSans":["a.example.com"]}})",
       "spec.clientCertificate.allowedSans: must not be set when mode is None"},
      {R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"caCertificateRefs":[{"name":)"
       R"("ca"}],"allowedSans":[]}})",
       "spec.clientCertificate.allowedSans: must name at least one SAN (leave it out to accept "
       "any)"},
      {R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"caCertificateRefs":[{"name":)"
       R"("ca"}],"allowedSans":["*.example.com"]}})",
       "spec.clientCertificate.allowedSans[0]: \"*.example.com\" is neither a DNS name (lower "
       "case, no wildcard) nor a URI (scheme:rest)"},
      {R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"caCertificateRefs":[{"name":)"
       R"("ca"}],"allowedSans":["a.example.com","1http://x","spiffe://a b"]}})",
       "spec.clientCertificate.allowedSans[1]: \"1http://x\" is neither a DNS name"},
      {R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"caCertificateRefs":[{"name":)"
       R"("ca"}],"allowedSans":["spiffe://a b"]}})",
       "spec.clientCertificate.allowedSans[0]: \"spiffe://a b\" is neither a DNS name"},
      {R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"caCertificateRefs":[{"name":)"
       R"("ca"}],"allowedSans":["urn:x:1","urn:x:1"]}})",
       "spec.clientCertificate.allowedSans[1]: duplicate SAN \"urn:x:1\""},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Policy(PolicyWith(c.spec));
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.spec;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message)) << c.spec;
  }
  ProcessOutcome out = Policy(NamedPolicy("p", "yesterday",
                                          R"({"targetRefs":[{"name":"web"}],)"
                                          R"("minVersion":"TLSv1.2"})"));
  EXPECT_EQ(out.status.message(),
            "TLSPolicy default/p: metadata.creationTimestamp: \"yesterday\" "
            "is not an RFC 3339 time");
}

TEST_F(plugin_tls, SchemaTakesTheNewFields) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  EXPECT_TRUE(Policy(PolicyWith(R"({"targetRefs":[{"name":"web"}],"alpn":["h2"]})")).ok());
  ProcessOutcome out = Policy(PolicyWith(R"({"targetRefs":[{"name":"web"}],"alpn":[]})"));
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status.message(), HasSubstr("spec.alpn"));
  out = Policy(PolicyWith(R"({"targetRefs":[{"name":"web"}],"clientCertificate":{)"
                          R"("caCertificateRefs":[{"name":"ca"}],"allowedSans":["Bad Name"]}})"));
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status.message(), HasSubstr("spec.clientCertificate.allowedSans[0]"));
  out = Policy(PolicyWith(R"({"targetRefs":[{"name":"web"}],"clientCertificate":{)"
                          R"("caCertificateRefs":[{"name":"ca"}],"allowedSanz":["a"]}})"));
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------- conflicts

constexpr char kOld[] = "2023-01-01T00:00:00Z";
constexpr char kYoung[] = "2023-06-01T00:00:00Z";

TEST_F(plugin_tls, OfTwoPoliciesForOneHostnameTheOldestWins) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  const char* spec =
      R"({"targetRefs":[{"name":"web","sectionName":"https"}],"hostnames":["shop.example.com"],)"
      R"("minVersion":"TLSv1.3"})";
  const std::string young = NamedPolicy("young", kYoung, spec);
  const std::string old = NamedPolicy("old", kOld, spec);
  // The younger one alone applies...
  ProcessOutcome out = host_.Apply(young);
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(Ancestor(out, "web", "https"), ElementsAre(HasSubstr("Accepted=True"), _));
  EXPECT_TRUE(out.synced.has_value());
  // ...until an older one arrives: the older wins whatever the processing order (the younger
  // read the list of policies, so the host requeues it when the older one's export appears).
  out = host_.Apply(old);
  EXPECT_THAT(Ancestor(out, "web", "https"), ElementsAre(HasSubstr("Accepted=True"), _));
  EXPECT_TRUE(out.synced.has_value());
  out = host_.Apply(young);
  const std::string message =
      "TLSPolicy default/old is older and already applies to hostname \"shop.example.com\" on "
      "listener \"https\" of Gateway default/web; of two TLSPolicies for one hostname the oldest "
      "wins";
  EXPECT_THAT(Ancestor(out, "web", "https"), ElementsAre("Accepted=False/Conflicted: " + message,
                                                         "ResolvedRefs=True/ResolvedRefs: ",
                                                         "Conflicted=True/Conflicted: " + message));
  EXPECT_FALSE(out.synced.has_value());  // not staged for the target it lost
  // The loser's export still contends: it takes over when the winner goes.
  EXPECT_THAT(*out.export_json, HasSubstr(R"("contends":[{)"));
  out = host_.Process("portico.io", "TLSPolicy", old);
  EXPECT_THAT(Ancestor(out, "web", "https"), ElementsAre(HasSubstr("Accepted=True"), _));
  host_.Delete({"portico.io", "TLSPolicy", "default", "old"});
  out = host_.Apply(young);
  EXPECT_THAT(Ancestor(out, "web", "https"), ElementsAre(HasSubstr("Accepted=True"), _));
  EXPECT_TRUE(out.synced.has_value());
}

TEST_F(plugin_tls, SameAgeFallsBackToTheName) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  const char* spec = R"({"targetRefs":[{"name":"web"}],"minVersion":"TLSv1.3"})";
  ASSERT_TRUE(host_.Apply(NamedPolicy("b", kOld, spec)).ok());
  ProcessOutcome a = host_.Apply(NamedPolicy("a", kOld, spec));
  EXPECT_THAT(Ancestor(a, "web"), ElementsAre(HasSubstr("Accepted=True"), _));
  ProcessOutcome b = host_.Apply(NamedPolicy("b", kOld, spec));
  EXPECT_THAT(Ancestor(b, "web"),
              ElementsAre("Accepted=False/Conflicted: TLSPolicy default/a is older and already "
                          "applies to every hostname (neither sets hostnames) on Gateway "
                          "default/web; of two TLSPolicies for one hostname the oldest wins",
                          _, HasSubstr("Conflicted=True/Conflicted: TLSPolicy default/a")));
  // Without creationTimestamp a policy counts as the youngest.
  ProcessOutcome unstamped = host_.Apply(NamedPolicy("0", "", spec));
  EXPECT_THAT(Ancestor(unstamped, "web"), Contains(HasSubstr("Conflicted=True")));
}

TEST_F(plugin_tls, WhatCountsAsTheSameHostnameAndTarget) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  ASSERT_TRUE(host_.Apply(kOtherGateway).ok());
  struct Case {
    const char* old_spec;
    const char* young_spec;
    bool conflict;
  } cases[] = {
      // A whole-Gateway target covers each of its listeners.
      {R"({"targetRefs":[{"name":"web"}],"hostnames":["a.example.com"],"minVersion":"TLSv1.3"})",
       R"({"targetRefs":[{"name":"web","sectionName":"https"}],"hostnames":["a.example.com"],)"
       R"("minVersion":"TLSv1.3"})",
       true},
      // Different listeners of one Gateway, or different Gateways, do not meet.
      {R"({"targetRefs":[{"name":"web","sectionName":"https-alt"}],"hostnames":["a.example.com"],)"
       R"("minVersion":"TLSv1.3"})",
       R"({"targetRefs":[{"name":"web","sectionName":"https"}],"hostnames":["a.example.com"],)"
       R"("minVersion":"TLSv1.3"})",
       false},
      {R"({"targetRefs":[{"name":"edge"}],"hostnames":["a.example.com"],"minVersion":"TLSv1.3"})",
       R"({"targetRefs":[{"name":"web"}],"hostnames":["a.example.com"],"minVersion":"TLSv1.3"})",
       false},
      // One shared name is enough; disjoint names are not a conflict.
      {R"({"targetRefs":[{"name":"web"}],"hostnames":["a.example.com","b.example.com"],)"
       R"("minVersion":"TLSv1.3"})",
       R"({"targetRefs":[{"name":"web"}],"hostnames":["c.example.com","b.example.com"],)"
       R"("minVersion":"TLSv1.3"})",
       true},
      {R"({"targetRefs":[{"name":"web"}],"hostnames":["a.example.com"],"minVersion":"TLSv1.3"})",
       R"({"targetRefs":[{"name":"web"}],"hostnames":["b.example.com"],"minVersion":"TLSv1.3"})",
       false},
      // An exact name and a wildcard are different selection levels; so are a named host and the
      // listener as a whole (no hostnames).
      {R"({"targetRefs":[{"name":"web"}],"hostnames":["*.example.com"],"minVersion":"TLSv1.3"})",
       R"({"targetRefs":[{"name":"web"}],"hostnames":["a.example.com"],"minVersion":"TLSv1.3"})",
       false},
      {R"({"targetRefs":[{"name":"web"}],"minVersion":"TLSv1.3"})",
       R"({"targetRefs":[{"name":"web"}],"hostnames":["a.example.com"],"minVersion":"TLSv1.3"})",
       false},
      // A policy that does not apply (its certificate does not resolve) blocks nobody.
      {R"({"targetRefs":[{"name":"web"}],"hostnames":["a.example.com"],)"
       R"("certificateRef":{"name":"missing"}})",
       R"({"targetRefs":[{"name":"web"}],"hostnames":["a.example.com"],"minVersion":"TLSv1.3"})",
       false},
  };
  for (const Case& c : cases) {
    host_.Delete({"portico.io", "TLSPolicy", "default", "old"});
    ASSERT_TRUE(host_.Apply(NamedPolicy("old", kOld, c.old_spec)).ok()) << c.old_spec;
    ProcessOutcome young = Policy(NamedPolicy("young", kYoung, c.young_spec));
    ASSERT_TRUE(young.ok()) << young.status;
    bool conflicted = young.status_json->find("\"Conflicted\"") != std::string::npos;
    EXPECT_EQ(conflicted, c.conflict) << c.old_spec << " vs " << c.young_spec << "\n"
                                      << *young.status_json;
    EXPECT_EQ(young.synced.has_value(), !c.conflict) << c.young_spec;
  }
}

TEST_F(plugin_tls, ALoserIsStagedForTheTargetsItWins) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  ASSERT_TRUE(host_.Apply(kOtherGateway).ok());
  ASSERT_TRUE(host_
                  .Apply(NamedPolicy("old", kOld,
                                     R"({"targetRefs":[{"name":"web","sectionName":"https"}],)"
                                     R"("hostnames":["a.example.com"],"minVersion":"TLSv1.3"})"))
                  .ok());
  ProcessOutcome out =
      Policy(NamedPolicy("young", kYoung,
                         R"({"targetRefs":[{"name":"web"},{"name":"edge"}],)"
                         R"("hostnames":["a.example.com"],"minVersion":"TLSv1.3"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(Ancestor(out, "web"),
              ElementsAre(HasSubstr("Accepted=False/Conflicted: TLSPolicy default/old is older "
                                    "and already applies to hostname \"a.example.com\" on "
                                    "listener \"https\" of Gateway default/web"),
                          _, HasSubstr("Conflicted=True/Conflicted")));
  EXPECT_THAT(Ancestor(out, "edge"), ElementsAre(HasSubstr("Accepted=True"), _));
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_THAT(*out.synced,
              HasSubstr(R"("targets":[{"gateway":{"namespace":"default","name":"edge"}}])"));
  // Both Gateways stay linked: the policy's status concerns both.
  EXPECT_EQ(out.links.size(), 2u);
}

TEST_F(plugin_tls, OnlyAppliedPoliciesWinSoConflictsDoNotChain) {
  // a (oldest) takes x on https; b (whole Gateway, x and y) loses to a; c (y on https) meets only
  // b, which does not apply, so c applies.
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  ASSERT_TRUE(host_
                  .Apply(NamedPolicy("a", "2023-01-01T00:00:00Z",
                                     R"({"targetRefs":[{"name":"web","sectionName":"https"}],)"
                                     R"("hostnames":["x.example.com"],"minVersion":"TLSv1.3"})"))
                  .ok());
  ProcessOutcome b = host_.Apply(
      NamedPolicy("b", "2023-02-01T00:00:00Z",
                  R"({"targetRefs":[{"name":"web"}],"hostnames":["x.example.com","y.example.com"],)"
                  R"("minVersion":"TLSv1.3"})"));
  EXPECT_THAT(Ancestor(b, "web"), Contains(HasSubstr("Conflicted=True/Conflicted: TLSPolicy "
                                                     "default/a")));
  ProcessOutcome c =
      Policy(NamedPolicy("c", "2023-03-01T00:00:00Z",
                         R"({"targetRefs":[{"name":"web","sectionName":"https"}],)"
                         R"("hostnames":["y.example.com"],"minVersion":"TLSv1.3"})"));
  EXPECT_THAT(Ancestor(c, "web", "https"), ElementsAre(HasSubstr("Accepted=True"), _));
  EXPECT_TRUE(c.synced.has_value());
}

// ---------------------------------------------------------------- the handler

TEST_F(plugin_tls, StagesOneListenerSetEntryInTheDocumentedShape) {
  ApplyWorld();
  ProcessOutcome out = Policy(kPolicy);
  ASSERT_TRUE(out.synced.has_value()) << *out.status_json;
  const sdk::ObjectRef ref{"portico.io", "TLSPolicy", "default", "shop"};
  StageOutcome staged =
      host_.Stage("portico.io", "TLSPolicy", {FakeChange::Upsert(ref, *out.synced)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  EXPECT_TRUE(staged.nacks.empty());
  ASSERT_EQ(staged.puts.size(), 1u);
  auto it = staged.puts.find({PORTICO_FORMAT_LISTENER_SET, "tlspolicy/default/shop"});
  ASSERT_NE(it, staged.puts.end());
  EXPECT_EQ(it->second.owner, "portico.io/TLSPolicy/default/shop");
  auto entry = json::Parse(it->second.json);
  ASSERT_TRUE(entry.ok());
  const rapidjson::Value& e = *entry;
  EXPECT_EQ(json::GetString(e, "entry"), "tlsPolicy");
  EXPECT_EQ(json::Serialize(e["policy"]), R"({"namespace":"default","name":"shop"})");
  EXPECT_EQ(*json::GetInt(e, "createdUnixMs"), 1700000000000);
  EXPECT_EQ(json::Serialize(e["targets"]),
            R"([{"gateway":{"namespace":"default","name":"web"},"listener":"https"}])");
  EXPECT_EQ(json::Serialize(e["hostnames"]), R"(["shop.example.com"])");
  EXPECT_EQ(json::Serialize(e["certificate"]),
            R"({"secretRef":{"namespace":"default","name":"shop-cert"},"sha256":")" +
                Sha256Of(host_, "shop-cert", "sha256") + "\"}");
  EXPECT_EQ(json::GetString(e, "minVersion"), "TLSv1.2");
  EXPECT_EQ(json::GetString(e, "maxVersion"), "TLSv1.3");
  EXPECT_EQ(json::Serialize(e["ciphers"]),
            R"(["ECDHE-ECDSA-AES128-GCM-SHA256","ECDHE-RSA-AES128-GCM-SHA256"])");
  EXPECT_EQ(json::Serialize(e["alpn"]), R"(["http/1.1","http/1.0"])");
  const rapidjson::Value& cc = e["clientCertificate"];
  EXPECT_EQ(json::GetString(cc, "mode"), "Optional");
  EXPECT_EQ(*json::GetInt(cc, "verifyDepth"), 3);
  EXPECT_EQ(json::Serialize(cc["caCertificates"]),
            R"([{"secretRef":{"namespace":"default","name":"client-ca"},"sha256":")" +
                Sha256Of(host_, "client-ca", "ca.sha256") + "\"}]");
  EXPECT_EQ(json::Serialize(cc["allowedSans"]),
            R"(["client.example.com","spiffe://trust.example/ns/shop/sa/web"])");
  // Only documented members.
  std::vector<std::string> members;
  for (const auto& m : e.GetObject()) members.emplace_back(m.name.GetString());
  EXPECT_THAT(members,
              ElementsAre("entry", "policy", "createdUnixMs", "targets", "hostnames", "certificate",
                          "minVersion", "maxVersion", "ciphers", "alpn", "clientCertificate"));
  // The certificate.v1 material it names is staged by the Secret plugin under the same digest.
  auto secret_view = host_.GetExport({"", "Secret", "default", "shop-cert"});
  ASSERT_TRUE(secret_view.has_value());

  // A delete drops the entry.
  staged = host_.Stage("portico.io", "TLSPolicy", {FakeChange::Delete(ref)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  EXPECT_TRUE(staged.puts.empty());
}

TEST_F(plugin_tls, StagesMinimalPoliciesAndClientCertificateNone) {
  ASSERT_TRUE(host_.Apply(kGateway).ok());
  ProcessOutcome out =
      Policy(PolicyWith(R"({"targetRefs":[{"name":"web"}],"clientCertificate":{"mode":"None"}})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("ancestorRef":{"group":"gateway.networking.k8s.io","kind":"Gateway",)"
                        R"("namespace":"default","name":"web"})"));
  ASSERT_TRUE(out.synced.has_value());
  const sdk::ObjectRef ref{"portico.io", "TLSPolicy", "default", "p"};
  StageOutcome staged =
      host_.Stage("portico.io", "TLSPolicy", {FakeChange::Upsert(ref, *out.synced)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  ASSERT_EQ(staged.puts.size(), 1u);
  EXPECT_EQ(staged.puts.begin()->second.json,
            R"({"entry":"tlsPolicy","policy":{"namespace":"default","name":"p"},)"
            R"("createdUnixMs":99999999999999,)"
            R"("targets":[{"gateway":{"namespace":"default","name":"web"}}],"hostnames":[],)"
            R"("minVersion":"TLSv1.2","maxVersion":"TLSv1.3","ciphers":[],"alpn":["http/1.1"],)"
            R"("clientCertificate":{"mode":"None","caCertificates":[],"allowedSans":[]}})");
}

TEST_F(plugin_tls, AViewItCannotTranslateIsNacked) {
  const sdk::ObjectRef ref{"portico.io", "TLSPolicy", "default", "p"};
  const std::string good =
      R"({"createdUnixMs":5,"targets":[{"gateway":{"namespace":"default","name":"web"}}],)"
      R"("hostnames":[],"minVersion":"TLSv1.2","maxVersion":"TLSv1.3","ciphers":[],)"
      R"("alpn":["http/1.1"]})";
  StageOutcome staged = host_.Stage("portico.io", "TLSPolicy", {FakeChange::Upsert(ref, good)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  ASSERT_EQ(staged.puts.size(), 1u);
  struct Case {
    std::string view;
    const char* reason;
  } cases[] = {
      {R"({"targets":[]})", "createdUnixMs: must be a Unix time in ms"},
      {R"({"createdUnixMs":5,"targets":[]})", "targets: must be a non-empty array"},
      {R"({"createdUnixMs":5,"targets":[{"gateway":{"name":"web"}}]})",
       "targets[0].gateway.namespace: must be a non-empty string"},
      {R"({"createdUnixMs":5,"targets":[{"gateway":{"namespace":"d","name":"web"}}],)"
       R"("certificate":{"secretRef":{"namespace":"d","name":"c"}},"minVersion":"TLSv1.2"})",
       "certificate.sha256: must be a non-empty string"},
      {R"({"createdUnixMs":5,"targets":[{"gateway":{"namespace":"d","name":"web"}}],)"
       R"("minVersion":"TLSv1.2","maxVersion":"TLSv1.3","alpn":[]})",
       "alpn: must be a non-empty array"},
      {R"({"createdUnixMs":5,"targets":[{"gateway":{"namespace":"d","name":"web"}}],)"
       R"("minVersion":"TLSv1.2","maxVersion":"TLSv1.3","alpn":["http/1.1"],)"
       R"("clientCertificate":{"mode":"Required","caCertificates":[]}})",
       "clientCertificate.mode: \"Required\" is not None, Optional or Require"},
      {R"({"createdUnixMs":5,"targets":[{"gateway":{"namespace":"d","name":"web"}}],)"
       R"("minVersion":"TLSv1.2","maxVersion":"TLSv1.3","alpn":["http/1.1"],)"
       R"("clientCertificate":{"mode":"Require","caCertificates":[]}})",
       "clientCertificate.caCertificates: must name a CA when mode is Require"},
  };
  for (const Case& c : cases) {
    staged = host_.Stage("portico.io", "TLSPolicy", {FakeChange::Upsert(ref, c.view)});
    ASSERT_TRUE(staged.ok()) << staged.status;
    ASSERT_EQ(staged.nacks.size(), 1u) << c.view;
    EXPECT_EQ(staged.nacks[0].second, "TLSPolicy default/p: " + std::string(c.reason));
    // The policy keeps its last good entry.
    ASSERT_EQ(staged.puts.size(), 1u) << c.view;
    EXPECT_THAT(staged.puts.begin()->second.json, HasSubstr(R"("createdUnixMs":5)"));
  }
}

}  // namespace
}  // namespace portico::plugins::tls
