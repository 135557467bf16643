// backend_tls_test: a Gateway's spec.tls.backend.clientCertificateRef (the certificate gateways
// present to TLS backends) in the SDK's fake host, with the Secret and ReferenceGrant plugins:
// the Gateway-level ResolvedRefs condition with the Gateway API's reasons, the sync link to the
// Secret, and the listener_set.v1 entries carrying {secretRef, sha256}. Certificates are
// generated at test time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/secret_data.h"
#include "portico/sdk/testing/fake_host.h"
#include "portico/sdk/testing/test_certs.h"

namespace portico::plugins::gateway {
namespace {

using sdk::ObjectRef;
using sdk::testing::FakeChange;
using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;
using sdk::testing::StageOutcome;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kGroup[] = "gateway.networking.k8s.io";
constexpr char kFormat[] = "listener_set.v1";
constexpr int64_t kNowMs = 1700000000000;  // the fake host's clock
constexpr int64_t kDayMs = 24 * 3600 * 1000;

constexpr char kGatewayClass[] =
    R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",
  "metadata":{"name":"portico"},"spec":{"controllerName":"portico.io/gateway-controller"}})";

// GatewayWithClientCertificate: an HTTP Gateway on ports 80 and 8080 presenting `ref` (the
// JSON of a SecretObjectReference) to TLS backends.
std::string GatewayWithClientCertificate(std::string_view ref) {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{)"
         R"("name":"web","namespace":"infra","generation":3},"spec":{"gatewayClassName":)"
         R"("portico","listeners":[{"name":"http","port":80,"protocol":"HTTP"},)"
         R"({"name":"admin","port":8080,"protocol":"HTTP"}],)"
         R"("tls":{"backend":{"clientCertificateRef":)" +
         std::string(ref) + "}}}}";
}

std::string TlsSecret(std::string_view ns, std::string_view name,
                      const sdk::testing::TestCertificate& cert) {
  return R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls","metadata":{"name":")" +
         std::string(name) + R"(","namespace":")" + std::string(ns) + R"("},"data":{"tls.crt":")" +
         sdk::Base64Encode(cert.cert_pem) + R"(","tls.key":")" + sdk::Base64Encode(cert.key_pem) +
         R"("}})";
}

// Condition: "Type=Status/Reason" of each Gateway-level condition, with its observedGeneration.
std::vector<std::string> Conditions(const ProcessOutcome& out) {
  std::vector<std::string> list;
  auto doc = json::Parse(out.status_json.value_or("{}"));
  const rapidjson::Value* conditions = doc.ok() ? json::Find(*doc, "conditions") : nullptr;
  for (rapidjson::SizeType i = 0; conditions != nullptr && i < conditions->Size(); ++i) {
    const rapidjson::Value& c = (*conditions)[i];
    list.push_back(json::GetString(c, "type") + "=" + json::GetString(c, "status") + "/" +
                   json::GetString(c, "reason") + "@" +
                   std::to_string(json::GetInt(c, "observedGeneration").value_or(-1)));
  }
  return list;
}

class gateway_backend_tls : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(SECRET_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(REFERENCEGRANT_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
    ProcessOutcome secret = host_.Apply(TlsSecret("infra", "client", client_));
    ASSERT_TRUE(secret.ok()) << secret.status;
    sha256_ = json::GetString(*json::Parse(*secret.export_json), "sha256");
    ASSERT_EQ(sha256_.size(), 64u);
  }
  ProcessOutcome Gateway(std::string_view ref) {
    return host_.Process(kGroup, "Gateway", GatewayWithClientCertificate(ref));
  }
  FakeHost host_;
  sdk::testing::TestCertificate client_ = sdk::testing::MakeTestCertificate(
      {{"client.example.com"}, kNowMs - kDayMs, kNowMs + 365 * kDayMs});
  std::string sha256_;
};

TEST_F(gateway_backend_tls, ResolvedCertificateIsSyncedLinkedAndStagedOnEveryPort) {
  ProcessOutcome out = Gateway(R"({"name":"client"})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(Conditions(out), Contains("ResolvedRefs=True/ResolvedRefs@3"));
  EXPECT_THAT(Conditions(out), Contains("Accepted=True/Accepted@3"));
  const std::string reference =
      R"({"secretRef":{"namespace":"infra","name":"client"},"sha256":")" + sha256_ + R"("})";
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_THAT(*out.synced, HasSubstr(R"("backendClientCertificate":)" + reference));
  EXPECT_EQ(out.synced->find("BEGIN"), std::string::npos);  // never material
  EXPECT_THAT(out.links, Contains(std::pair<ObjectRef, portico_link_type>{
                             {"", "Secret", "infra", "client"}, PORTICO_LINK_REFERENCE}));

  StageOutcome staged = host_.Stage(
      kGroup, "Gateway", {FakeChange::Upsert({kGroup, "Gateway", "infra", "web"}, *out.synced)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  EXPECT_THAT(staged.nacks, IsEmpty());
  ASSERT_EQ(staged.puts.size(), 2u);
  for (const char* id : {"gateway/infra/web/80", "gateway/infra/web/8080"}) {
    EXPECT_THAT(staged.puts.at({kFormat, id}).json,
                HasSubstr(R"("backendClientCertificate":)" + reference + "}"))
        << id;
  }
}

TEST_F(gateway_backend_tls, InvalidReferencesKeepTheGatewayAcceptedWithoutACertificate) {
  ASSERT_TRUE(host_
                  .Apply(R"({"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{)"
                         R"("name":"opaque","namespace":"infra"},"data":{}})")
                  .ok());
  ASSERT_TRUE(host_.Apply(TlsSecret("other", "client", client_)).ok());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"name":"nonexistent"})", "ResolvedRefs=False/InvalidClientCertificateRef@3"},
      {R"({"group":"wrong.group.company.io","kind":"Secret","name":"client"})",
       "ResolvedRefs=False/InvalidClientCertificateRef@3"},
      {R"({"group":"","kind":"WrongKind","name":"client"})",
       "ResolvedRefs=False/InvalidClientCertificateRef@3"},
      {R"({"name":"opaque"})", "ResolvedRefs=False/InvalidClientCertificateRef@3"},
      {R"({"name":"client","namespace":"other"})", "ResolvedRefs=False/RefNotPermitted@3"},
  };
  for (const auto& [ref, condition] : cases) {
    ProcessOutcome out = Gateway(ref);
    ASSERT_TRUE(out.ok()) << ref << ": " << out.status;
    EXPECT_THAT(Conditions(out), Contains(condition)) << ref;
    EXPECT_THAT(Conditions(out), Contains("Accepted=True/Accepted@3")) << ref;
    ASSERT_TRUE(out.synced.has_value()) << ref;  // the listeners are still served
    EXPECT_EQ(out.synced->find("backendClientCertificate"), std::string::npos) << ref;
    EXPECT_THAT(out.links, Not(Contains(std::pair<ObjectRef, portico_link_type>{
                               {"", "Secret", "other", "client"}, PORTICO_LINK_REFERENCE})));
  }
  ProcessOutcome opaque = Gateway(R"({"name":"opaque"})");
  EXPECT_THAT(*opaque.status_json,
              HasSubstr("spec.tls.backend.clientCertificateRef: Secret infra/opaque is of type "
                        "\\\"Opaque\\\", not kubernetes.io/tls"));
}

TEST_F(gateway_backend_tls, AReferenceGrantPermitsAnotherNamespace) {
  ASSERT_TRUE(host_.Apply(TlsSecret("other", "client", client_)).ok());
  ASSERT_TRUE(host_
                  .Apply(R"({"apiVersion":"gateway.networking.k8s.io/v1beta1",)"
                         R"("kind":"ReferenceGrant","metadata":{"name":"g","namespace":"other"},)"
                         R"("spec":{"from":[{"group":"gateway.networking.k8s.io",)"
                         R"("kind":"Gateway","namespace":"infra"}],)"
                         R"("to":[{"group":"","kind":"Secret"}]}})")
                  .ok());
  ProcessOutcome out = Gateway(R"({"name":"client","namespace":"other"})");
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(Conditions(out), Contains("ResolvedRefs=True/ResolvedRefs@3"));
  EXPECT_THAT(*out.synced, HasSubstr(R"("secretRef":{"namespace":"other","name":"client"})"));
}

TEST_F(gateway_backend_tls, WithoutTheFieldThereIsNoGatewayResolvedRefs) {
  ProcessOutcome out = host_.Process(
      kGroup, "Gateway",
      R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"w",)"
      R"("namespace":"infra"},"spec":{"gatewayClassName":"portico","listeners":[{"name":"h",)"
      R"("port":80,"protocol":"HTTP"}]}})");
  ASSERT_TRUE(out.ok()) << out.status;
  for (const std::string& c : Conditions(out)) EXPECT_THAT(c, Not(HasSubstr("ResolvedRefs")));
  EXPECT_EQ(out.synced->find("backendClientCertificate"), std::string::npos);
}

TEST_F(gateway_backend_tls, ViewWithAnUnusableCertificateIsNacked) {
  ObjectRef gw{kGroup, "Gateway", "infra", "web"};
  StageOutcome out = host_.Stage(
      kGroup, "Gateway",
      {FakeChange::Upsert(gw, R"({"listeners":[{"name":"http","port":80,"protocol":"HTTP"}],)"
                              R"("backendClientCertificate":{"secretRef":{"namespace":"infra",)"
                              R"("name":"client"}}})")});
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_EQ(out.nacks.size(), 1u);
  EXPECT_THAT(out.nacks[0].second, HasSubstr("backendClientCertificate.sha256"));
  EXPECT_TRUE(out.puts.empty());
}

}  // namespace
}  // namespace portico::plugins::gateway
