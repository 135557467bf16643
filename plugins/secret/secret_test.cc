// secret_test: the Secret plugin loaded into the SDK's fake host.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/testing/fake_host.h"

namespace portico::plugins::secret {
namespace {

using sdk::testing::FakeHost;
using sdk::testing::ProcessOutcome;
using ::testing::HasSubstr;

std::string SecretJson(std::string_view type, std::string_view data, std::string_view extra = "") {
  std::string out = R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"certificate",)"
                    R"("namespace":"gateway-conformance-web-backend"})";
  if (!type.empty()) out += R"(,"type":")" + std::string(type) + "\"";
  if (!data.empty()) out += R"(,"data":)" + std::string(data);
  return out + std::string(extra) + "}";
}

class plugin_secret : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(host_.Load(PLUGIN_PATH).ok()); }
  ProcessOutcome Process(const std::string& json) { return host_.Process("", "Secret", json); }
  FakeHost host_;
};

TEST_F(plugin_secret, RegistersTheKindFromItsManifest) {
  const auto* kind = host_.FindKind("", "Secret");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->scope, PORTICO_SCOPE_NAMESPACED);
  EXPECT_EQ(kind->plural, "secrets");
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_NEVER);
}

TEST_F(plugin_secret, TlsSecretExportsOnlyTypeAndKeyNames) {
  // The conformance suite's malformed-certificate: valid base64, not PEM (checked later).
  ProcessOutcome out = Process(SecretJson(
      "kubernetes.io/tls", R"({"tls.crt":"SGVsbG8gd29ybGQK","tls.key":"SGVsbG8gd29ybGQK"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.export_json, R"({"type":"kubernetes.io/tls","keys":["tls.crt","tls.key"]})");
  EXPECT_EQ(out.status_json, R"({"conditions":[{"type":"Accepted","status":"True","reason":)"
                             R"("Accepted","message":"","observedGeneration":1}]})");
  EXPECT_FALSE(out.synced.has_value());
  EXPECT_EQ(out.export_json->find("SGVs"), std::string::npos);
}

TEST_F(plugin_secret, OpaqueIsTheDefaultTypeAndStringDataMerges) {
  ProcessOutcome out =
      Process(SecretJson("", R"({"token":""})", R"(,"stringData":{"user":"bob"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_EQ(out.export_json, R"({"type":"Opaque","keys":["token","user"]})");
  out = Process(SecretJson("kubernetes.io/tls", R"({"tls.crt":"YQ=="})",
                           R"(,"stringData":{"tls.key":"-----BEGIN PRIVATE KEY-----"})"));
  EXPECT_TRUE(out.ok()) << out.status;
  out = Process(SecretJson("kubernetes.io/basic-auth", R"({"password":"cGFzcw=="})"));
  EXPECT_TRUE(out.ok()) << out.status;
}

TEST_F(plugin_secret, ApplyMakesTheMaterialAvailableToGetSecret) {
  ASSERT_TRUE(
      host_.Apply(SecretJson("kubernetes.io/tls", R"({"tls.crt":"YQ==","tls.key":"Yg=="})")).ok());
  EXPECT_TRUE(host_.GetExport({"", "Secret", "gateway-conformance-web-backend", "certificate"}));
}

TEST_F(plugin_secret, RejectsInvalidData) {
  host_.set_validate_schema(false);
  struct Case {
    std::string json;
    const char* message;
  } cases[] = {
      {SecretJson("kubernetes.io/tls", R"({"tls.crt":"YQ=="})"),
       "Secret gateway-conformance-web-backend/certificate: data: type kubernetes.io/tls requires "
       "key \"tls.key\""},
      {SecretJson("kubernetes.io/tls", R"({"tls.key":"YQ=="})"), "requires key \"tls.crt\""},
      {SecretJson("kubernetes.io/tls", R"({"tls.crt":"not base64!","tls.key":"YQ=="})"),
       "data[\"tls.crt\"]: not valid base64"},
      {SecretJson("", R"({"a":"YQ="})"), "data[\"a\"]: not valid base64"},
      {SecretJson("", R"({"a":"Y=Q="})"), "data[\"a\"]: not valid base64"},
      {SecretJson("", R"({"bad key":"YQ=="})"), "data[\"bad key\"]: invalid key"},
      {SecretJson("", R"({"a":1})"), "data[\"a\"]: must be a string"},
      {SecretJson("kubernetes.io/basic-auth", R"({"other":"YQ=="})"),
       "type kubernetes.io/basic-auth requires at least one of \"username\" or \"password\""},
      {SecretJson("kubernetes.io/ssh-auth", R"({"a":"YQ=="})"), "requires key \"ssh-privatekey\""},
      {SecretJson("kubernetes.io/dockerconfigjson", R"({"a":"YQ=="})"),
       "requires key \".dockerconfigjson\""},
      {SecretJson("kubernetes.io/service-account-token", R"({"token":"YQ=="})"),
       "metadata.annotations: type kubernetes.io/service-account-token requires annotation"},
  };
  for (const Case& c : cases) {
    ProcessOutcome out = Process(c.json);
    EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(out.status.message(), HasSubstr(c.message)) << c.json;
  }
}

TEST_F(plugin_secret, RejectsSecretsOverOneMebibyte) {
  std::string big(4 * 350 * 1024, 'A');  // 1,075,200 decoded bytes
  ProcessOutcome out = Process(SecretJson("", R"({"blob":")" + big + "\"}"));
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status.message(), HasSubstr("data: total size 1075200 bytes exceeds 1 MiB"));
}

}  // namespace
}  // namespace portico::plugins::secret
