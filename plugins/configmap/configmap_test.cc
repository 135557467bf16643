// configmap_test: the ConfigMap plugin loaded into the SDK's fake host; CA certificates are
// generated at test time (sdk/testing/test_certs.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/secret_data.h"
#include "portico/sdk/testing/fake_host.h"
#include "portico/sdk/testing/test_certs.h"
#include "x509/ca_bundle.h"

namespace portico::plugins::configmap {
namespace {

using sdk::Base64Encode;
using sdk::testing::FakeChange;
using sdk::testing::FakeHost;
using sdk::testing::MakeTestCertificate;
using sdk::testing::ProcessOutcome;
using sdk::testing::TestCertificate;
using sdk::testing::detail::Quote;
using ::testing::HasSubstr;

constexpr int64_t kDayMs = 24 * 3600 * 1000;
constexpr int64_t kNowMs = 1700000000000;  // the fake host's clock

TestCertificate Ca(const std::string& name) {
  sdk::testing::CertificateOptions options;
  options.not_before_unix_ms = kNowMs - kDayMs;
  options.not_after_unix_ms = kNowMs + 365 * kDayMs;
  options.common_name = name;
  return MakeTestCertificate(options);
}

std::string ConfigMapJson(std::string_view members) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"client-ca",)"
         R"("namespace":"gateway-conformance-infra"})" +
         std::string(members) + "}";
}

class plugin_configmap : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok()); }
  ProcessOutcome Process(const std::string& json) { return host_.Process("", "ConfigMap", json); }
  FakeHost host_;
  const sdk::ObjectRef ref_{"", "ConfigMap", "gateway-conformance-infra", "client-ca"};
};

TEST_F(plugin_configmap, RegistersTheKindFromItsManifest) {
  const auto* kind = host_.FindKind("", "ConfigMap");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->scope, PORTICO_SCOPE_NAMESPACED);
  EXPECT_EQ(kind->plural, "configmaps");
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_TO_REFERRERS);
  EXPECT_NE(kind->stage, nullptr);
}

TEST_F(plugin_configmap, UsableCaBundleIsExportedWithoutMaterialAndSynced) {
  // Two CAs, with text around the blocks (PEM allows it).
  std::string pem = "# client CAs\n" + Ca("ca-1").cert_pem + "comment\n" + Ca("ca-2").cert_pem;
  ProcessOutcome out =
      Process(ConfigMapJson(R"(,"data":{"ca.crt":)" + Quote(pem) + R"(,"other":"x"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  const std::string sha256 = x509::Sha256(pem);
  EXPECT_EQ(*out.export_json, R"({"keys":["ca.crt","other"],"ca":{"valid":true,"sha256":")" +
                                  sha256 + R"(","certificates":2}})");
  EXPECT_THAT(*out.status_json, HasSubstr(R"("status":"True","reason":"Accepted")"));
  ASSERT_TRUE(out.synced.has_value());
  auto view = json::Parse(*out.synced);
  ASSERT_TRUE(view.ok());
  const rapidjson::Value& ca = (*view)["ca"];
  EXPECT_EQ(json::GetString(ca, "entry"), "ca");
  EXPECT_EQ(json::Serialize(ca["configMapRef"]),
            R"({"namespace":"gateway-conformance-infra","name":"client-ca"})");
  EXPECT_EQ(json::GetString(ca, "sha256"), sha256);
  EXPECT_EQ(json::GetString(ca, "caPem"), pem);
  EXPECT_EQ(out.synced->find("other"), std::string::npos);  // only the CA material is synced
}

TEST_F(plugin_configmap, BinaryDataCarriesTheBundleToo) {
  std::string pem = Ca("ca").cert_pem;
  std::string b64 = Base64Encode(pem);
  b64.insert(64, "\n");  // line breaks are tolerated, as by Kubernetes' decoder
  ProcessOutcome out = Process(ConfigMapJson(R"(,"binaryData":{"ca.crt":)" + Quote(b64) + "}"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.export_json, HasSubstr(R"("ca":{"valid":true,"sha256":")" + x509::Sha256(pem)));
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_EQ(json::GetString((*json::Parse(*out.synced))["ca"], "caPem"), pem);
}

TEST_F(plugin_configmap, UnusableBundlesAreStoredButNotAcceptedNorSynced) {
  TestCertificate ca = Ca("ca");
  struct Case {
    std::string pem;
    const char* message;
  } cases[] = {
      {"Hello world\n", "ca.crt: no PEM certificate found"},
      {"", "ca.crt: no PEM certificate found"},
      {ca.cert_pem + ca.key_pem, "ca.crt: PEM block 2 is a PRIVATE KEY, not a CERTIFICATE"},
      {"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
       "ca.crt: PEM block 1 is not an X.509 certificate"},
      {ca.cert_pem + "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
       "ca.crt: PEM block 2 does not parse"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Process(ConfigMapJson(R"(,"data":{"ca.crt":)" + Quote(c.pem) + "}"));
    ASSERT_TRUE(out.ok()) << out.status;
    EXPECT_THAT(*out.status_json,
                HasSubstr(R"({"type":"Accepted","status":"False","reason":"InvalidCACertificate",)"
                          R"("message":")" +
                          std::string(c.message)))
        << c.pem;
    EXPECT_THAT(*out.export_json,
                HasSubstr(R"("ca":{"valid":false,"message":")" + std::string(c.message)))
        << c.pem;
    EXPECT_FALSE(out.synced.has_value()) << c.pem;
    EXPECT_EQ(out.export_json->find("BEGIN"), std::string::npos);
  }
}

TEST_F(plugin_configmap, WithoutCaBundleNothingIsSynced) {
  ProcessOutcome out = Process(ConfigMapJson(R"(,"data":{"game.properties":"lives=3"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(*out.export_json, R"({"keys":["game.properties"]})");
  EXPECT_FALSE(out.synced.has_value());
  EXPECT_THAT(*out.status_json, HasSubstr(R"("status":"True","reason":"Accepted")"));
  out = Process(ConfigMapJson(""));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(*out.export_json, R"({"keys":[]})");
}

TEST_F(plugin_configmap, StagesTheCaEntryAndDeleteClearsIt) {
  std::string pem = Ca("ca").cert_pem;
  ProcessOutcome out = Process(ConfigMapJson(R"(,"data":{"ca.crt":)" + Quote(pem) + "}"));
  ASSERT_TRUE(out.synced.has_value());
  auto staged = host_.Stage("", "ConfigMap", {FakeChange::Upsert(ref_, *out.synced)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  ASSERT_EQ(staged.puts.size(), 1u);
  auto it = staged.puts.find(
      {PORTICO_FORMAT_CERTIFICATE, "ca/configmap/gateway-conformance-infra/client-ca"});
  ASSERT_NE(it, staged.puts.end());
  EXPECT_EQ(it->second.owner, "/ConfigMap/gateway-conformance-infra/client-ca");
  EXPECT_EQ(it->second.json,
            R"({"entry":"ca","configMapRef":{"namespace":"gateway-conformance-infra",)"
            R"("name":"client-ca"},"sha256":")" +
                x509::Sha256(pem) + R"(","caPem":)" + Quote(pem) + "}");
  staged = host_.Stage("", "ConfigMap", {FakeChange::Delete(ref_)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  EXPECT_TRUE(staged.puts.empty());
  // A view without usable material is not one the processor writes: nacked.
  staged = host_.Stage("", "ConfigMap", {FakeChange::Upsert(ref_, R"({"ca":{"entry":"ca"}})")});
  ASSERT_TRUE(staged.ok()) << staged.status;
  ASSERT_EQ(staged.nacks.size(), 1u);
  EXPECT_THAT(staged.nacks[0].second, HasSubstr("no \"ca\" entry with sha256 and caPem"));
  EXPECT_TRUE(staged.puts.empty());
}

TEST_F(plugin_configmap, RejectsInvalidData) {
  host_.set_validate_schema(false);
  struct Case {
    std::string json;
    const char* message;
  } cases[] = {
      {ConfigMapJson(R"(,"data":{"bad key":"x"})"),
       "ConfigMap gateway-conformance-infra/client-ca: data[\"bad key\"]: invalid key"},
      {ConfigMapJson(R"(,"data":{"..":"x"})"), "data[\"..\"]: invalid key"},
      {ConfigMapJson(R"(,"data":{"a":1})"), "data[\"a\"]: must be a string"},
      {ConfigMapJson(R"(,"data":[])"), "data: must be an object"},
      {ConfigMapJson(R"(,"binaryData":{"a":"YQ="})"), "binaryData[\"a\"]: not valid base64"},
      {ConfigMapJson(R"(,"data":{"a":"x"},"binaryData":{"a":"YQ=="})"),
       "binaryData[\"a\"]: duplicate of a key in data"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Process(c.json);
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message)) << c.json;
  }
}

TEST_F(plugin_configmap, RejectsConfigMapsOverOneMebibyte) {
  std::string big(1024 * 1024 - 1, 'a');
  ProcessOutcome out = Process(ConfigMapJson(R"(,"data":{"a":")" + big + R"(","b":"xy"})"));
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status.message(), HasSubstr("data: total size 1048577 bytes exceeds 1 MiB"));
  EXPECT_TRUE(Process(ConfigMapJson(R"(,"data":{"a":")" + big + R"(","b":"x"})")).ok());
}

}  // namespace
}  // namespace portico::plugins::configmap
