// secret_test: the Secret plugin loaded into the SDK's fake host.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "portico/sdk/secret_data.h"
#include "portico/sdk/testing/fake_host.h"
#include "portico/sdk/testing/test_certs.h"
#include "secret/tls_material.h"

namespace portico::plugins::secret {
namespace {

using sdk::Base64Encode;
using sdk::testing::CertificateOptions;
using sdk::testing::FakeHost;
using sdk::testing::MakeTestCertificate;
using sdk::testing::ProcessOutcome;
using sdk::testing::TestCertificate;
using sdk::testing::detail::Quote;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kDayMs = 24 * 3600 * 1000;
constexpr int64_t kNowMs = 1700000000000;  // the fake host's clock

TestCertificate Certificate(std::vector<std::string> dns, bool rsa = false,
                            int64_t not_after = kNowMs + 365 * kDayMs) {
  return MakeTestCertificate({std::move(dns), kNowMs - kDayMs, not_after, rsa});
}

std::string TlsData(const TestCertificate& c) {
  return R"({"tls.crt":")" + Base64Encode(c.cert_pem) + R"(","tls.key":")" +
         Base64Encode(c.key_pem) + "\"}";
}

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
  EXPECT_EQ(kind->sync_policy, PORTICO_SYNC_TO_REFERRERS);
}

TEST_F(plugin_secret, MalformedTlsMaterialIsStoredButNotAccepted) {
  // The conformance suite's malformed-certificate: valid base64 of "Hello world", not PEM.
  ProcessOutcome out = Process(SecretJson(
      "kubernetes.io/tls", R"({"tls.crt":"SGVsbG8gd29ybGQK","tls.key":"SGVsbG8gd29ybGQK"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.export_json,
              HasSubstr(R"({"type":"kubernetes.io/tls","keys":["tls.crt","tls.key"],)"
                        R"("tlsValid":false,"reason":"InvalidCertificate","message":"tls.crt is )"
                        R"(not a PEM certificate)"));
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"({"conditions":[{"type":"Accepted","status":"False",)"
                        R"("reason":"InvalidCertificate","message":"tls.crt is not a PEM)"));
  EXPECT_FALSE(out.synced.has_value());
  EXPECT_EQ(out.export_json->find("SGVs"), std::string::npos);
}

TEST_F(plugin_secret, ValidTlsMaterialExportsItsSummaryNeverTheKey) {
  for (bool rsa : {false, true}) {
    TestCertificate cert = Certificate({"*.org", "*.wildcard.org"}, rsa);
    ASSERT_FALSE(cert.cert_pem.empty());
    ProcessOutcome out = Process(SecretJson("kubernetes.io/tls", TlsData(cert)));
    ASSERT_TRUE(out.ok()) << out.status;
    auto exported = json::Parse(*out.export_json);
    ASSERT_TRUE(exported.ok());
    EXPECT_TRUE((*exported)["tlsValid"].GetBool()) << *out.export_json;
    EXPECT_EQ(json::Serialize((*exported)["sans"]), R"(["*.org","*.wildcard.org"])");
    EXPECT_EQ(*json::GetInt(*exported, "notAfterUnixMs"), (kNowMs + 365 * kDayMs) / 1000 * 1000);
    EXPECT_EQ(json::GetString(*exported, "sha256").size(), 64u);
    EXPECT_FALSE(exported->HasMember("reason"));
    EXPECT_THAT(*out.status_json, HasSubstr(R"("status":"True","reason":"Accepted")"));
    // Neither the key nor the certificate appear, in any encoding.
    EXPECT_EQ(out.export_json->find("BEGIN"), std::string::npos);
    EXPECT_EQ(out.export_json->find(Base64Encode(cert.key_pem).substr(0, 24)), std::string::npos);
  }
}

TEST_F(plugin_secret, SyncsOnlyDerivedMaterialAndStagesCertificateEntries) {
  TestCertificate cert = Certificate({"example.com"});
  ProcessOutcome tls = Process(SecretJson("kubernetes.io/tls", TlsData(cert)));
  ASSERT_TRUE(tls.ok()) << tls.status;
  ASSERT_TRUE(tls.synced.has_value());
  auto view = json::Parse(*tls.synced);
  ASSERT_TRUE(view.ok());
  const rapidjson::Value& pair = (*view)["keyPair"];
  EXPECT_EQ(json::GetString(pair, "chainPem"), cert.cert_pem);
  EXPECT_EQ(json::GetString(pair, "keyPem"), cert.key_pem);
  EXPECT_EQ(json::GetString(pair, "sha256"), Sha256(cert.cert_pem, cert.key_pem));
  EXPECT_FALSE(view->HasMember("ca"));

  // Opaque data without material syncs nothing; an invalid pair syncs nothing either.
  EXPECT_FALSE(Process(SecretJson("Opaque", R"({"a":"Yg=="})")).synced.has_value());
  EXPECT_FALSE(Process(SecretJson("kubernetes.io/tls",
                                  R"({"tls.crt":"SGVsbG8gd29ybGQK","tls.key":"SGVsbG8gd29ybGQK"})"))
                   .synced.has_value());
  // A CA bundle syncs as a "ca" entry.
  ProcessOutcome ca =
      Process(SecretJson("Opaque", R"({"ca.crt":")" + Base64Encode(cert.cert_pem) + "\"}"));
  ASSERT_TRUE(ca.synced.has_value());
  EXPECT_THAT(*ca.synced, HasSubstr(R"("ca":{"entry":"ca","secretRef":{"namespace":)"));

  sdk::ObjectRef ref{"", "Secret", "gateway-conformance-web-backend", "certificate"};
  auto staged = host_.Stage("", "Secret", {sdk::testing::FakeChange::Upsert(ref, *tls.synced)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  auto it = staged.puts.find(
      {PORTICO_FORMAT_CERTIFICATE, "cert/gateway-conformance-web-backend/certificate"});
  ASSERT_NE(it, staged.puts.end());
  EXPECT_EQ(it->second.owner, ref.Key());
  EXPECT_THAT(it->second.json, HasSubstr(R"("entry":"keyPair")"));
  staged = host_.Stage("", "Secret", {sdk::testing::FakeChange::Delete(ref)});
  ASSERT_TRUE(staged.ok()) << staged.status;
  EXPECT_TRUE(staged.puts.empty());
}

TEST_F(plugin_secret, UnusableNewMaterialKeepsSyncingThePreviousKeyPair) {
  TestCertificate good = Certificate({"a.test"});
  TestCertificate other = Certificate({"b.test"});
  ProcessOutcome first = host_.Apply(SecretJson("kubernetes.io/tls", TlsData(good)));
  ASSERT_TRUE(first.ok()) << first.status;
  ASSERT_TRUE(first.synced.has_value());
  const std::string previous_sha = Sha256(good.cert_pem, good.key_pem);

  // The key of another certificate: refused, and the previous pair keeps being synced.
  TestCertificate mismatched{good.cert_pem, other.key_pem};
  ProcessOutcome out = host_.Apply(SecretJson("kubernetes.io/tls", TlsData(mismatched)));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(out.reads, ::testing::Contains("previous synced hit"));
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_EQ(*out.synced, *first.synced);
  EXPECT_THAT(*out.export_json, HasSubstr(R"("tlsValid":false)"));
  EXPECT_THAT(*out.export_json,
              HasSubstr(R"("serving":{"sha256":")" + previous_sha + R"(","sans":["a.test"]})"));
  EXPECT_THAT(*out.status_json, HasSubstr("the previous material keeps serving"));

  // Still unusable on the next run: what was kept stays kept.
  ProcessOutcome again = host_.Apply(SecretJson("kubernetes.io/tls", TlsData(mismatched)));
  ASSERT_TRUE(again.synced.has_value());
  EXPECT_EQ(*again.synced, *first.synced);

  // A Secret that was never usable has nothing to keep.
  host_.Delete({"", "Secret", "gateway-conformance-web-backend", "certificate"});
  ProcessOutcome fresh = host_.Apply(SecretJson("kubernetes.io/tls", TlsData(mismatched)));
  ASSERT_TRUE(fresh.ok()) << fresh.status;
  EXPECT_FALSE(fresh.synced.has_value());
  EXPECT_THAT(*fresh.export_json, Not(HasSubstr("serving")));
}

TEST_F(plugin_secret, CaBundlesAreCheckedAndExportedWithoutMaterial) {
  TestCertificate ca = Certificate({});
  ProcessOutcome out =
      Process(SecretJson("Opaque", R"({"ca.crt":")" + Base64Encode(ca.cert_pem) + "\"}"));
  ASSERT_TRUE(out.ok()) << out.status;
  // The same summary as a ConfigMap's "ca.crt", for Gateways' caCertificateRefs.
  EXPECT_EQ(*out.export_json,
            R"({"type":"Opaque","keys":["ca.crt"],"ca":{"valid":true,"sha256":")" +
                Sha256(ca.cert_pem) + R"(","certificates":1}})");
  ASSERT_TRUE(out.synced.has_value());
  auto view = json::Parse(*out.synced);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(json::GetString((*view)["ca"], "sha256"), Sha256(ca.cert_pem));
  EXPECT_EQ(json::GetString((*view)["ca"], "caPem"), ca.cert_pem);

  // A ca.crt that is not a bundle of certificates is not accepted and never staged.
  out = Process(SecretJson("Opaque", R"({"ca.crt":")" + Base64Encode(ca.key_pem) + "\"}"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.status_json,
              HasSubstr(R"("status":"False","reason":"InvalidCACertificate","message":"ca.crt: )"
                        R"(PEM block 1 is a PRIVATE KEY, not a CERTIFICATE")"));
  EXPECT_THAT(*out.export_json, HasSubstr(R"("ca":{"valid":false,"reason":"InvalidCACertificate",)"
                                          R"("message":"ca.crt: PEM block 1)"));
  EXPECT_FALSE(out.synced.has_value());
  // With a valid pair beside it, the pair still syncs; the CA does not.
  TestCertificate leaf = Certificate({"example.com"});
  out = Process(SecretJson("kubernetes.io/tls",
                           R"({"tls.crt":")" + Base64Encode(leaf.cert_pem) + R"(","tls.key":")" +
                               Base64Encode(leaf.key_pem) + R"(","ca.crt":"SGVsbG8K"})"));
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_TRUE(out.synced.has_value());
  EXPECT_THAT(*out.synced, HasSubstr(R"("keyPair":)"));
  EXPECT_THAT(*out.synced, Not(HasSubstr(R"("ca":)")));
  EXPECT_THAT(*out.status_json, HasSubstr(R"("reason":"InvalidCACertificate")"));
}

TEST_F(plugin_secret, TlsMaterialChecks) {
  TestCertificate a = Certificate({"a.example.com"});
  TestCertificate b = Certificate({"b.example.com"});
  TestCertificate expired = Certificate({"a.example.com"}, false, kNowMs - 1000);
  struct Case {
    std::string crt, key;
    const char* reason;
  } cases[] = {
      {a.cert_pem, b.key_pem, "KeyMismatch"},
      {expired.cert_pem, expired.key_pem, "Expired"},
      {a.cert_pem, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "InvalidKey"},
      {a.cert_pem + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", a.key_pem,
       "InvalidCertificate"},
      {"", a.key_pem, "InvalidCertificate"},
  };
  for (const Case& c : cases) {
    TlsMaterial m = CheckTlsMaterial(c.crt, c.key, kNowMs);
    EXPECT_FALSE(m.valid) << c.reason;
    EXPECT_EQ(m.reason, c.reason) << m.message;
  }
  // A chain (leaf first) is fine; the SHA-256 covers certificate and key.
  TlsMaterial chain = CheckTlsMaterial(a.cert_pem + b.cert_pem, a.key_pem, kNowMs);
  EXPECT_TRUE(chain.valid) << chain.message;
  EXPECT_THAT(chain.sans, ElementsAre("a.example.com"));
  EXPECT_NE(chain.sha256, CheckTlsMaterial(a.cert_pem, a.key_pem, kNowMs).sha256);
  // stringData carries PEM as text and wins over data.
  ProcessOutcome out = Process(SecretJson("kubernetes.io/tls", TlsData(b),
                                          R"(,"stringData":{"tls.crt":)" + Quote(a.cert_pem) +
                                              R"(,"tls.key":)" + Quote(a.key_pem) + "}"));
  ASSERT_TRUE(out.ok()) << out.status;
  EXPECT_THAT(*out.export_json, HasSubstr(R"("tlsValid":true,"sha256":")" +
                                          CheckTlsMaterial(a.cert_pem, a.key_pem, kNowMs).sha256 +
                                          R"(","sans":["a.example.com"])"));
}

TEST_F(plugin_secret, Base64DecodingIsStrict) {
  EXPECT_EQ(Base64Decode("SGVsbG8="), "Hello");
  EXPECT_EQ(Base64Decode("SGVsbG8h"), "Hello!");
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_FALSE(Base64Decode("SGVsbG8"));
  EXPECT_FALSE(Base64Decode("SG=sbG8="));
  EXPECT_FALSE(Base64Decode("SGVs bG8"));
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
