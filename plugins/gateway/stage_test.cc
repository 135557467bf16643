// stage_test: the Gateway's handler in the SDK's fake host: synced views (hand-written in the
// shape of views.cc, and produced by the processor) become listener_set.v1 entries, one per
// (address, port); deletes clear them; views it cannot translate are nacked.
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
using sdk::testing::StagedKey;
using sdk::testing::StageOutcome;
using ::testing::ElementsAre;
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

// A synced view as views.cc writes it: listeners on three ports, one HTTPS port shared by two.
constexpr char kView[] =
    R"({"metadata":{"name":"web","namespace":"infra","generation":2},
  "gatewayClassName":"portico","listeners":[
   {"name":"http","port":80,"protocol":"HTTP",)"
    R"("routeKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]},
   {"name":"https","port":443,"protocol":"HTTPS","hostname":"*.example.com",
    "tls":{"mode":"Terminate","certificates":[{"secretRef":{"namespace":"infra","name":"wildcard"},)"
    R"("sha256":"9f86d0"}]},)"
    R"("routeKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]},
   {"name":"admin","port":8080,"protocol":"HTTP","hostname":"admin.example.com","routeKinds":[]},
   {"name":"https-any","port":443,"protocol":"HTTPS",
    "tls":{"mode":"Terminate","certificates":[{"secretRef":{"namespace":"certs","name":"any"},)"
    R"("sha256":"aa11"},{"secretRef":{"namespace":"certs","name":"rsa"},)"
    R"("sha256":"bb22"}]},)"
    R"("routeKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]}],
  "addresses":[]})";

std::string GatewayWith(std::string_view spec_members) {
  return R"({"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{)"
         R"("name":"web","namespace":"default"},"spec":{"gatewayClassName":"portico",)" +
         std::string(spec_members) + "}}";
}

class gateway_stage : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(SECRET_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(CONFIGMAP_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(REFERENCEGRANT_PLUGIN_PATH).ok());
    ASSERT_TRUE(host_.Load(NAMESPACE_PLUGIN_PATH).ok());
  }
  StageOutcome Stage(std::vector<FakeChange> changes) {
    return host_.Stage(kGroup, "Gateway", changes);
  }
  // Synced processes a Gateway and returns its synced view.
  std::string Synced(const std::string& gateway) {
    ProcessOutcome out = host_.Process(kGroup, "Gateway", gateway);
    EXPECT_TRUE(out.ok()) << out.status;
    EXPECT_TRUE(out.synced.has_value()) << out.status_json.value_or("");
    return out.synced.value_or("");
  }
  static std::vector<std::string> Ids(const StageOutcome& out) {
    std::vector<std::string> ids;
    for (const auto& [key, entry] : out.puts) ids.push_back(key.first + " " + key.second);
    return ids;
  }
  FakeHost host_;
};

TEST_F(gateway_stage, RegistersAHandler) {
  const auto* kind = host_.FindKind(kGroup, "Gateway");
  ASSERT_NE(kind, nullptr);
  EXPECT_NE(kind->stage, nullptr);
  EXPECT_NE(kind->capabilities & PORTICO_CAP_HANDLER, 0u);
  EXPECT_EQ(host_.FindKind(kGroup, "GatewayClass")->stage, nullptr);  // never synced
}

TEST_F(gateway_stage, ListenersAreGroupedByPort) {
  ObjectRef gw{kGroup, "Gateway", "infra", "web"};
  StageOutcome out = Stage({FakeChange::Upsert(gw, kView)});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(out.nacks, IsEmpty());
  EXPECT_THAT(Ids(out), ElementsAre("listener_set.v1 gateway/infra/web/443",
                                    "listener_set.v1 gateway/infra/web/80",
                                    "listener_set.v1 gateway/infra/web/8080"));
  const auto& http = out.puts.at({kFormat, "gateway/infra/web/80"});
  EXPECT_EQ(http.owner, "gateway.networking.k8s.io/Gateway/infra/web");
  EXPECT_EQ(http.json,
            R"({"entry":"listeners","gateway":{"namespace":"infra","name":"web"},"address":"",)"
            R"("port":80,"listeners":[{"name":"http","protocol":"HTTP","routeKinds":[)"
            R"({"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]}]})");
  // Two HTTPS listeners on one port, in written order; hostname absent means any host.
  EXPECT_EQ(out.puts.at({kFormat, "gateway/infra/web/443"}).json,
            R"({"entry":"listeners","gateway":{"namespace":"infra","name":"web"},"address":"",)"
            R"("port":443,"listeners":[)"
            R"({"name":"https","protocol":"HTTPS","hostname":"*.example.com",)"
            R"("tls":{"mode":"Terminate","certificates":[{"secretRef":{"namespace":"infra",)"
            R"("name":"wildcard"},"sha256":"9f86d0"}]},)"
            R"("routeKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]},)"
            R"({"name":"https-any","protocol":"HTTPS",)"
            R"("tls":{"mode":"Terminate","certificates":[{"secretRef":{"namespace":"certs",)"
            R"("name":"any"},"sha256":"aa11"},{"secretRef":{"namespace":"certs","name":"rsa"},)"
            R"("sha256":"bb22"}]},)"
            R"("routeKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]}]})");
  EXPECT_EQ(out.puts.at({kFormat, "gateway/infra/web/8080"}).json,
            R"({"entry":"listeners","gateway":{"namespace":"infra","name":"web"},"address":"",)"
            R"("port":8080,"listeners":[{"name":"admin","protocol":"HTTP",)"
            R"("hostname":"admin.example.com","routeKinds":[]}]})");
}

TEST_F(gateway_stage, EveryAddressGetsItsOwnListenerSets) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  // An IPAddress without value asks for the serving gateway's own address ("").
  std::string view = Synced(
      GatewayWith(R"("listeners":[{"name":"http","port":80,"protocol":"HTTP"},)"
                  R"({"name":"alt","port":8080,"protocol":"HTTP","hostname":"alt.example.com"}],)"
                  R"("addresses":[{"type":"IPAddress","value":"127.0.0.2"},{"value":"::1"},)"
                  R"({"type":"IPAddress","value":""}])"));
  ObjectRef gw{kGroup, "Gateway", "default", "web"};
  StageOutcome out = Stage({FakeChange::Upsert(gw, view)});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(out.nacks, IsEmpty());
  EXPECT_THAT(Ids(out), ElementsAre("listener_set.v1 gateway/default/web/80",
                                    "listener_set.v1 gateway/default/web/80/127.0.0.2",
                                    "listener_set.v1 gateway/default/web/80/::1",
                                    "listener_set.v1 gateway/default/web/8080",
                                    "listener_set.v1 gateway/default/web/8080/127.0.0.2",
                                    "listener_set.v1 gateway/default/web/8080/::1"));
  EXPECT_EQ(out.puts.at({kFormat, "gateway/default/web/80/::1"}).json,
            R"({"entry":"listeners","gateway":{"namespace":"default","name":"web"},)"
            R"("address":"::1","port":80,"listeners":[{"name":"http","protocol":"HTTP",)"
            R"("routeKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]}]})");
  EXPECT_THAT(out.puts.at({kFormat, "gateway/default/web/8080/127.0.0.2"}).json,
              HasSubstr(R"("address":"127.0.0.2","port":8080,"listeners":[{"name":"alt",)"
                        R"("protocol":"HTTP","hostname":"alt.example.com",)"));

  // Dropping the addresses replaces the six entries with two.
  view = Synced(GatewayWith(R"("listeners":[{"name":"http","port":80,"protocol":"HTTP"},)"
                            R"({"name":"alt","port":8080,"protocol":"HTTP"}])"));
  out = Stage({FakeChange::Upsert(gw, view)});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("listener_set.v1 gateway/default/web/80",
                                    "listener_set.v1 gateway/default/web/8080"));
}

TEST_F(gateway_stage, ProcessedHttpsGatewayCarriesCertificateReferences) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  sdk::testing::TestCertificate cert = sdk::testing::MakeTestCertificate(
      {{"*.example.com"}, kNowMs - kDayMs, kNowMs + 365 * kDayMs});
  ProcessOutcome secret =
      host_.Apply(R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls","metadata":{)"
                  R"("name":"cert","namespace":"default"},"data":{"tls.crt":")" +
                  sdk::Base64Encode(cert.cert_pem) + R"(","tls.key":")" +
                  sdk::Base64Encode(cert.key_pem) + R"("}})");
  ASSERT_TRUE(secret.ok()) << secret.status;
  std::string sha256 = json::GetString(*json::Parse(*secret.export_json), "sha256");
  ASSERT_FALSE(sha256.empty());
  // The second listener's certificate is missing: it is not programmable, so not staged.
  std::string view = Synced(GatewayWith(
      R"("listeners":[{"name":"https","port":443,"protocol":"HTTPS","hostname":"a.example.com",)"
      R"("tls":{"certificateRefs":[{"name":"cert"}]}},)"
      R"({"name":"broken","port":443,"protocol":"HTTPS","hostname":"b.example.com",)"
      R"("tls":{"certificateRefs":[{"name":"missing"}]}}])"));
  StageOutcome out = Stage({FakeChange::Upsert({kGroup, "Gateway", "default", "web"}, view)});
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_EQ(out.puts.size(), 1u);
  EXPECT_EQ(
      out.puts.at({kFormat, "gateway/default/web/443"}).json,
      R"({"entry":"listeners","gateway":{"namespace":"default","name":"web"},"address":"",)"
      R"("port":443,"listeners":[{"name":"https","protocol":"HTTPS",)"
      R"("hostname":"a.example.com","tls":{"mode":"Terminate","certificates":[)"
      R"({"secretRef":{"namespace":"default","name":"cert"},"sha256":")" +
          sha256 +
          R"("}]},"routeKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]}]})");
  EXPECT_EQ(out.puts.begin()->second.json.find("BEGIN"), std::string::npos);  // never material
}

// Client-certificate validation goes on the (address, port) entry of its HTTPS port, with the
// sha256 under which the CA's own handler stages the certificate.v1 "ca" entry.
TEST_F(gateway_stage, FrontendValidationGoesOnItsPortsEntry) {
  ASSERT_TRUE(host_.Apply(kGatewayClass).ok());
  sdk::testing::TestCertificate cert = sdk::testing::MakeTestCertificate(
      {{"*.example.com"}, kNowMs - kDayMs, kNowMs + 365 * kDayMs});
  ASSERT_TRUE(host_
                  .Apply(R"({"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls",)"
                         R"("metadata":{"name":"cert","namespace":"default"},"data":{"tls.crt":")" +
                         sdk::Base64Encode(cert.cert_pem) + R"(","tls.key":")" +
                         sdk::Base64Encode(cert.key_pem) + R"("}})")
                  .ok());
  const ObjectRef ca_ref{"", "ConfigMap", "default", "client-ca"};
  ProcessOutcome ca = host_.Apply(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"client-ca","namespace":)"
      R"("default"},"data":{"ca.crt":)" +
      sdk::testing::detail::Quote(cert.cert_pem) + "}}");
  ASSERT_TRUE(ca.ok() && ca.synced.has_value()) << ca.status;
  StageOutcome staged_ca = host_.Stage("", "ConfigMap", {FakeChange::Upsert(ca_ref, *ca.synced)});
  ASSERT_TRUE(staged_ca.ok()) << staged_ca.status;
  auto ca_entry = json::Parse(
      staged_ca.puts.at({PORTICO_FORMAT_CERTIFICATE, "ca/configmap/default/client-ca"}).json);
  ASSERT_TRUE(ca_entry.ok());
  const std::string sha256 = json::GetString(*ca_entry, "sha256");
  ASSERT_EQ(sha256.size(), 64u);

  std::string view = Synced(GatewayWith(
      R"("listeners":[{"name":"https","port":443,"protocol":"HTTPS",)"
      R"("tls":{"certificateRefs":[{"name":"cert"}]}},{"name":"http","port":80,)"
      R"("protocol":"HTTP"}],"addresses":[{"value":"10.0.0.7"},{"value":"::1"}],)"
      R"("tls":{"frontend":{"default":{"validation":{"mode":"AllowInsecureFallback",)"
      R"("caCertificateRefs":[{"group":"","kind":"ConfigMap","name":"client-ca"}]}}}})"));
  StageOutcome out = Stage({FakeChange::Upsert({kGroup, "Gateway", "default", "web"}, view)});
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_TRUE(out.nacks.empty()) << out.nacks[0].second;
  const std::string frontend =
      R"(,"frontendValidation":{"mode":"AllowInsecureFallback","caCertificates":[{"ref":)"
      R"({"kind":"ConfigMap","namespace":"default","name":"client-ca"},"sha256":")" +
      sha256 + R"("}]}})";
  for (const char* address : {"10.0.0.7", "::1"}) {
    const std::string& https =
        out.puts.at({kFormat, "gateway/default/web/443/" + std::string(address)}).json;
    EXPECT_THAT(https, ::testing::EndsWith(frontend)) << https;
    const std::string& http =
        out.puts.at({kFormat, "gateway/default/web/80/" + std::string(address)}).json;
    EXPECT_THAT(http, Not(HasSubstr("frontendValidation"))) << http;  // not per listener
  }
  EXPECT_THAT(out.puts.at({kFormat, "gateway/default/web/443/::1"}).json,
              HasSubstr(R"("tls":{"mode":"Terminate","certificates":[{"secretRef":)"));
}

TEST_F(gateway_stage, DeleteClearsEveryEntry) {
  ObjectRef gw{kGroup, "Gateway", "infra", "web"};
  ObjectRef other{kGroup, "Gateway", "infra", "other"};
  StageOutcome out = Stage({FakeChange::Upsert(gw, kView), FakeChange::Upsert(other, kView)});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.puts.size(), 6u);
  out = Stage({FakeChange::Delete(gw)});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("listener_set.v1 gateway/infra/other/443",
                                    "listener_set.v1 gateway/infra/other/80",
                                    "listener_set.v1 gateway/infra/other/8080"));
  out = Stage({FakeChange::Delete(other)});
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(out.puts, IsEmpty());
}

TEST_F(gateway_stage, UntranslatableViewsAreNackedAndKeepTheirLastGoodEntries) {
  ObjectRef gw{kGroup, "Gateway", "infra", "web"};
  ObjectRef other{kGroup, "Gateway", "infra", "other"};
  StageOutcome out = Stage({FakeChange::Upsert(gw, kView)});
  ASSERT_TRUE(out.ok()) << out.status;
  const auto before = out.puts;

  struct Case {
    const char* view;
    const char* reason;
  } cases[] = {
      {"not json", "synced view is not a JSON object"},
      {R"({"metadata":{}})", "listeners: must be an array"},
      {R"({"listeners":[{"name":"http","port":"80","protocol":"HTTP"}]})",
       "listeners[0].port: must be 1-65535"},
      {R"({"listeners":[{"name":"http","port":70000,"protocol":"HTTP"}]})",
       "listeners[0].port: must be 1-65535"},
      {R"({"listeners":[{"port":80,"protocol":"HTTP"}]})",
       "listeners[0].name: must be a non-empty string"},
      {R"({"listeners":[{"name":"s","port":443,"protocol":"HTTPS"}]})",
       "listeners[0].tls: is required for protocol HTTPS"},
      {R"({"listeners":[{"name":"s","port":443,"protocol":"HTTPS","tls":{"mode":"Terminate",)"
       R"("certificates":[{"secretRef":{"namespace":"a","name":"b"}}]}}]})",
       "listeners[0].tls.certificates[0].sha256: must be a non-empty string"},
      {R"({"listeners":[{"name":"h","port":80,"protocol":"HTTP"}],)"
       R"("addresses":[{"type":"Hostname","value":"gw.example.com"}]})",
       "addresses[0].type: \"Hostname\" is not supported (only IPAddress)"},
      {R"({"listeners":[],"frontendValidation":{}})", "frontendValidation: must be an array"},
      {R"({"listeners":[],"frontendValidation":[{"port":443,"mode":"AllowValidOnly",)"
       R"("caCertificates":[{"ref":{"kind":"ConfigMap","namespace":"a","name":"b"},)"
       R"("sha256":"aa"}]}]})",
       "frontendValidation: port 443 has no HTTPS listener"},
      {R"({"listeners":[],"frontendValidation":[{"port":443,"mode":"Optional",)"
       R"("caCertificates":[]}]})",
       "frontendValidation[0].mode: \"Optional\" is not AllowValidOnly or AllowInsecureFallback"},
      {R"({"listeners":[],"frontendValidation":[{"port":443,"mode":"AllowValidOnly",)"
       R"("caCertificates":[]}]})",
       "frontendValidation[0].caCertificates: must be a non-empty array"},
      {R"({"listeners":[],"frontendValidation":[{"port":443,"mode":"AllowValidOnly",)"
       R"("caCertificates":[{"ref":{"kind":"ConfigMap","namespace":"a","name":"b"}}]}]})",
       "frontendValidation[0].caCertificates[0].sha256: must be a non-empty string"},
      {R"({"listeners":[],"frontendValidation":[{"port":443,"mode":"AllowValidOnly",)"
       R"("caCertificates":[{"ref":{"kind":"Service","namespace":"a","name":"b"},)"
       R"("sha256":"aa"}]}]})",
       "frontendValidation[0].caCertificates[0].ref.kind: \"Service\" is not ConfigMap or Secret"},
      {R"({"listeners":[],"frontendValidation":[{"port":0,"mode":"AllowValidOnly"}]})",
       "frontendValidation[0].port: must be 1-65535"},
  };
  for (const Case& c : cases) {
    // The bad view and a good one in one batch: only the bad one is nacked.
    out = Stage({FakeChange::Upsert(gw, c.view), FakeChange::Upsert(other, kView)});
    ASSERT_TRUE(out.ok()) << out.status << " " << c.view;
    ASSERT_EQ(out.nacks.size(), 1u) << c.view;
    EXPECT_EQ(out.nacks[0].first, gw);
    EXPECT_THAT(out.nacks[0].second, HasSubstr(c.reason)) << c.view;
    for (const auto& [key, entry] : before) {
      ASSERT_TRUE(out.puts.count(key)) << key.second << " " << c.view;
      EXPECT_EQ(out.puts.at(key), entry) << key.second;
    }
    EXPECT_EQ(out.puts.size(), 6u) << c.view;  // and the other Gateway's three
    out = Stage({FakeChange::Delete(other)});
    ASSERT_TRUE(out.ok()) << out.status;
  }
}

}  // namespace
}  // namespace portico::plugins::gateway
