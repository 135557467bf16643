// TLS from the data plane to backends (BackendTLSPolicy, backend.v1 "tls" entries) end to end:
// an in-test HTTPS upstream with certificates generated at test time; SNI, trust, hostname and
// subjectAltName checks, the Gateway's client certificate, section names, connection reuse, and
// that a policy that cannot be applied never sends a request in clear text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gateway/server/data_plane.h"
#include "gateway/server/proxy_test_util.h"
#include "gateway/server/testing/tls_entries.h"
#include "gateway/server/testing/tls_test_client.h"
#include "gateway/server/testing/tls_test_upstream.h"

namespace portico::gateway::server {
namespace {

using ::testing::HasSubstr;
using namespace ::portico::gateway::server::testing;

const std::string kPolicyOwner = "gateway.networking.k8s.io/BackendTLSPolicy/infra/secure";

// PolicyEntry is a backend.v1 "tls" entry for Service infra/secure; `extra` adds members.
std::string PolicyEntry(const std::string& hostname, const std::string& ca_sha,
                        const std::string& extra = "") {
  std::string out = R"({"entry":"tls","namespace":"infra","service":"secure",)"
                    R"("policy":{"namespace":"infra","name":"secure"},"hostname":")" +
                    hostname + "\"";
  if (!ca_sha.empty()) {
    out += R"(,"caCertificates":[{"ref":{"kind":"ConfigMap","namespace":"infra","name":"ca"},)"
           R"("sha256":")" +
           ca_sha + R"("}])";
  }
  return out + extra + "}";
}

class UpstreamTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DataPlaneOptions options;
    options.workers = 1;
    options.default_address = "127.0.0.1";
    plane_ = std::make_unique<DataPlane>(options);
    ASSERT_TRUE(plane_->Start().ok());
    backend_cert_ = Cert({"secure.test", "alt.test"}, {"spiffe://td/ns/infra/sa/secure"});
  }

  // Base: Gateway infra/web on HTTP port_, every path to Service infra/secure:80, whose
  // endpoint is `upstream_port`; the backend's certificate as CA bundle "sha-ca".
  SnapshotBuilder Base(uint16_t upstream_port, const std::string& client_sha = "") {
    SnapshotBuilder b;
    std::string listeners =
        ListenerSetEntry("infra", "web", "", port_.port(), HttpListener("http"));
    if (!client_sha.empty()) {
      listeners.pop_back();
      listeners += R"(,"backendClientCertificate":{"secretRef":{"namespace":"infra","name":)"
                   R"("client"},"sha256":")" +
                   client_sha + R"("}})";
    }
    b.Put("listener_set.v1", "gateway/infra/web/" + std::to_string(port_.port()),
          "gateway.networking.k8s.io/Gateway/infra/web", listeners);
    AddService(&b, "secure", upstream_port);
    b.Put("route_rules.v1", "httproute/infra/web", "gateway.networking.k8s.io/HTTPRoute/infra/web",
          RouteEntry("infra", "web", "infra", "web", "http",
                     {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/secure:80", 1}}))}));
    b.Put("certificate.v1", "ca/configmap/infra/ca", "/ConfigMap/infra/ca",
          CaMaterial("sha-ca", backend_cert_.cert_pem));
    return b;
  }

  void Apply(const SnapshotBuilder& b) {
    std::vector<core::SyncNack> nacks = ApplySnapshot(plane_.get(), b, ++generation_);
    for (const core::SyncNack& nack : nacks)
      ADD_FAILURE() << nack.key.ToString() << ": " << nack.reason;
  }

  Response Get(const std::string& path) {
    TestClient client(port_.port());
    client.Send("GET " + path + " HTTP/1.1\r\nHost: app.test\r\n\r\n");
    return client.Read();
  }

  ReservedPort port_;
  std::unique_ptr<DataPlane> plane_;
  sdk::testing::TestCertificate backend_cert_;
  uint64_t generation_ = 0;
};

TEST_F(UpstreamTlsTest, SpeaksTlsWithTheHostnameAsSniAndReusesTheConnection) {
  TlsTestUpstream upstream(backend_cert_.cert_pem, backend_cert_.key_pem);
  SnapshotBuilder b = Base(upstream.port());
  b.Put("backend.v1", "tls/infra/secure", kPolicyOwner, PolicyEntry("secure.test", "sha-ca"));
  Apply(b);

  TestClient client(port_.port());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client.Send("GET /r" + std::to_string(i) + " HTTP/1.1\r\nHost: app.test\r\n\r\n"));
    Response r = client.Read();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "tls-upstream sni=secure.test target=/r" + std::to_string(i));
  }
  EXPECT_EQ(upstream.connections(), 1u);  // one handshake, kept alive
  ASSERT_EQ(upstream.handshakes().size(), 1u);
  EXPECT_TRUE(upstream.handshakes()[0].completed);
  EXPECT_EQ(upstream.handshakes()[0].alpn, "http/1.1");
  EXPECT_EQ(upstream.handshakes()[0].client_fingerprint, "");
}

TEST_F(UpstreamTlsTest, WithoutAPolicyTheBackendStaysClearText) {
  TestUpstream plain("plain");
  Apply(Base(plain.port()));
  Response r = Get("/x");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("upstream=plain"));
}

TEST_F(UpstreamTlsTest, ACertificateWithoutTheHostnameOrFromAnotherCaIsRefused) {
  TlsTestUpstream upstream(backend_cert_.cert_pem, backend_cert_.key_pem);
  SnapshotBuilder b = Base(upstream.port());
  b.Put("backend.v1", "tls/infra/secure", kPolicyOwner, PolicyEntry("other.test", "sha-ca"));
  Apply(b);
  EXPECT_EQ(Get("/mismatch").status, 502);

  // The right name, but trust in an unrelated CA.
  sdk::testing::TestCertificate stranger = Cert({"secure.test"});
  b.Put("certificate.v1", "ca/configmap/infra/stranger", "/ConfigMap/infra/stranger",
        CaMaterial("sha-stranger", stranger.cert_pem));
  b.Put("backend.v1", "tls/infra/secure", kPolicyOwner, PolicyEntry("secure.test", "sha-stranger"));
  Apply(b);
  EXPECT_EQ(Get("/untrusted").status, 502);
  EXPECT_TRUE(upstream.targets().empty());  // no request went over an unverified session
  // The backend records a failed handshake after the gateway gave up on it.
  EXPECT_TRUE(WaitFor([&] { return upstream.handshakes().size() >= 2; }));
  for (const Handshake& h : upstream.handshakes()) EXPECT_FALSE(h.completed);
}

TEST_F(UpstreamTlsTest, SubjectAltNamesReplaceTheHostnameCheck) {
  TlsTestUpstream upstream(backend_cert_.cert_pem, backend_cert_.key_pem);
  SnapshotBuilder b = Base(upstream.port());
  // The SNI stays the hostname; the certificate must carry one of the listed names.
  b.Put("backend.v1", "tls/infra/secure", kPolicyOwner,
        PolicyEntry("sni.test", "sha-ca",
                    R"(,"subjectAltNames":[{"type":"Hostname","hostname":"nope.test"},)"
                    R"({"type":"Hostname","hostname":"alt.test"}])"));
  Apply(b);
  Response r = Get("/dns");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "tls-upstream sni=sni.test target=/dns");

  b.Put(
      "backend.v1", "tls/infra/secure", kPolicyOwner,
      PolicyEntry("sni.test", "sha-ca",
                  R"(,"subjectAltNames":[{"type":"URI","uri":"spiffe://td/ns/infra/sa/secure"}])"));
  Apply(b);
  EXPECT_EQ(Get("/uri").status, 200);

  b.Put(
      "backend.v1", "tls/infra/secure", kPolicyOwner,
      PolicyEntry("secure.test", "sha-ca",
                  R"(,"subjectAltNames":[{"type":"URI","uri":"spiffe://td/ns/infra/sa/other"}])"));
  Apply(b);
  EXPECT_EQ(Get("/uri-mismatch").status, 502);  // the hostname alone no longer suffices
  EXPECT_THAT(upstream.targets(), ::testing::ElementsAre("/dns", "/uri"));
}

TEST_F(UpstreamTlsTest, APolicyThatCannotBeAppliedAnswers502AndNeverSendsClearText) {
  TestUpstream plain("plain");  // would accept a clear-text request
  SnapshotBuilder b = Base(plain.port());
  b.Put("backend.v1", "tls/infra/secure", kPolicyOwner, PolicyEntry("secure.test", "sha-absent"));
  Apply(b);
  EXPECT_EQ(Get("/missing-ca").status, 502);

  b.Put(
      "backend.v1", "tls/infra/secure", kPolicyOwner,
      PolicyEntry("secure.test", "", R"(,"invalid":"caCertificateRefs: ConfigMap ca not found")"));
  Apply(b);
  EXPECT_EQ(Get("/invalid").status, 502);
  EXPECT_EQ(plain.connections(), 0u);
}

TEST_F(UpstreamTlsTest, ASectionNameLimitsThePolicyToThatServicePort) {
  TestUpstream plain("plain");
  SnapshotBuilder b = Base(plain.port());
  // Service infra/secure's port 80 is named "http": a policy for section "admin" leaves it alone.
  b.Put("backend.v1", "tls/infra/secure/admin", kPolicyOwner,
        PolicyEntry("secure.test", "sha-ca", R"(,"sectionName":"admin")"));
  Apply(b);
  Response r = Get("/other-port");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("upstream=plain"));

  b.Put("backend.v1", "tls/infra/secure/http", kPolicyOwner,
        PolicyEntry("secure.test", "sha-ca", R"(,"sectionName":"http")"));
  Apply(b);
  EXPECT_EQ(Get("/this-port").status, 502);  // TLS towards a clear-text upstream fails
}

TEST_F(UpstreamTlsTest, TheGatewaysClientCertificateIsPresented) {
  TlsTestUpstream upstream(backend_cert_.cert_pem, backend_cert_.key_pem,
                           /*request_client_certificate=*/true);
  sdk::testing::TestCertificate client = Cert({"gateway.test"});
  SnapshotBuilder b = Base(upstream.port(), "sha-client");
  b.Put("certificate.v1", "cert/infra/client", "/Secret/infra/client",
        Material("client", "sha-client", client));
  b.Put("backend.v1", "tls/infra/secure", kPolicyOwner, PolicyEntry("secure.test", "sha-ca"));
  Apply(b);
  EXPECT_EQ(Get("/mtls").status, 200);
  ASSERT_EQ(upstream.handshakes().size(), 1u);
  EXPECT_EQ(upstream.handshakes()[0].client_fingerprint, Fingerprint(client.cert_pem));
}

TEST_F(UpstreamTlsTest, MirrorsToABackendUnderAPolicySpeakTlsToo) {
  TlsTestUpstream secure(backend_cert_.cert_pem, backend_cert_.key_pem);
  TestUpstream plain("plain");
  SnapshotBuilder b = Base(secure.port());
  AddService(&b, "plain", plain.port());
  // Requests go to the clear-text Service; a copy goes to the Service under the policy.
  b.Put(
      "route_rules.v1", "httproute/infra/web", "gateway.networking.k8s.io/HTTPRoute/infra/web",
      RouteEntry("infra", "web", "infra", "web", "http",
                 {RuleEntry(0, "Prefix", "/",
                            BackendsAction({{"infra/plain:80", 1}},
                                           R"([{"builtin":"mirror","key":"infra/secure:80"}])"))}));
  b.Put("backend.v1", "tls/infra/secure", kPolicyOwner, PolicyEntry("secure.test", "sha-ca"));
  Apply(b);
  Response r = Get("/copied");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("upstream=plain"));
  EXPECT_TRUE(WaitFor([&] { return secure.targets().size() == 1; }));
  EXPECT_THAT(secure.targets(), ::testing::ElementsAre("/copied"));
  ASSERT_FALSE(secure.handshakes().empty());
  EXPECT_EQ(secure.handshakes()[0].sni, "secure.test");
}

}  // namespace
}  // namespace portico::gateway::server
