// The data plane over TLS end to end: HTTPS listeners with certificates from certificate.v1
// (generated at test time), real sockets, an OpenSSL client: SNI selection, protocol versions,
// 421 for a Host of another listener, resumption, ALPN, rotation, large bodies, and the nacks
// of listeners the gateway cannot serve.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/runtime/tls/ticket_keys.h"
#include "gateway/server/data_plane.h"
#include "gateway/server/proxy_test_util.h"
#include "gateway/server/testing/tls_entries.h"
#include "gateway/server/testing/tls_test_client.h"
#include "portico/sdk/testing/test_certs.h"

namespace portico::gateway::server {
namespace {

using ::testing::HasSubstr;
using namespace ::portico::gateway::server::testing;

const std::string kGatewayOwner = "gateway.networking.k8s.io/Gateway/infra/web";

// HttpsListener is a listener_set.v1 listener with protocol HTTPS and certificates (Secret, sha).
std::string HttpsListener(const std::string& name, const std::string& hostname,
                          const std::vector<std::pair<std::string, std::string>>& certs) {
  std::string out = R"({"name":")" + name + R"(","protocol":"HTTPS")";
  if (!hostname.empty()) out += R"(,"hostname":")" + hostname + "\"";
  out += R"(,"tls":{"mode":"Terminate","certificates":[)";
  for (size_t i = 0; i < certs.size(); ++i) {
    if (i > 0) out += ",";
    out += R"({"secretRef":{"namespace":"infra","name":")" + certs[i].first + R"("},"sha256":")" +
           certs[i].second + R"("})";
  }
  return out + R"(]},"routeKinds":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"}]})";
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DataPlaneOptions options;
    options.workers = 2;
    options.default_address = "127.0.0.1";
    log_path_ = std::filesystem::temp_directory_path() /
                ("portico-tls-test-" + std::to_string(getpid()) + ".log");
    std::filesystem::remove(log_path_);
    auto sink = AccessLogSink::Open(log_path_.string());
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    options.access_log = *sink;
    plane_ = std::make_unique<DataPlane>(options);
    ASSERT_TRUE(plane_->Start().ok());
    default_ = Cert({"default.test"});
    wildcard_ = Cert({"*.wild.test"});
    exact_ = Cert({"a.wild.test"});
    shop_ = Cert({"shop.test"});
  }

  // Base: Gateway infra/web with HTTPS listeners on port_: "any" (no hostname; certificates
  // default, wildcard, exact), "shop" (shop.test), "wild" (*.wild.test; the wildcard); a route
  // per listener to upstream a (any, wild) or b (shop).
  SnapshotBuilder Base() {
    SnapshotBuilder b;
    b.Put("certificate.v1", "cert/infra/default", "/Secret/infra/default",
          Material("default", "sha-default", default_));
    b.Put("certificate.v1", "cert/infra/wildcard", "/Secret/infra/wildcard",
          Material("wildcard", "sha-wildcard", wildcard_));
    b.Put("certificate.v1", "cert/infra/exact", "/Secret/infra/exact",
          Material("exact", "sha-exact", exact_));
    b.Put("certificate.v1", "cert/infra/shop", "/Secret/infra/shop",
          Material("shop", "sha-shop", shop_));
    b.Put("listener_set.v1", "gateway/infra/web/" + std::to_string(port_.port()), kGatewayOwner,
          ListenerSetEntry(
              "infra", "web", "", port_.port(),
              HttpsListener("any", "",
                            {{"default", "sha-default"},
                             {"wildcard", "sha-wildcard"},
                             {"exact", "sha-exact"}}) +
                  "," + HttpsListener("shop", "shop.test", {{"shop", "sha-shop"}}) + "," +
                  HttpsListener("wild", "*.wild.test", {{"wildcard", "sha-wildcard"}})));
    AddService(&b, "a", a_.port());
    AddService(&b, "b", b_.port());
    for (const auto& [listener, backend] : std::vector<std::pair<std::string, std::string>>{
             {"any", "a"}, {"shop", "b"}, {"wild", "a"}}) {
      b.Put("route_rules.v1", "httproute/infra/" + listener,
            "gateway.networking.k8s.io/HTTPRoute/infra/" + listener,
            RouteEntry(
                "infra", listener, "infra", "web", listener,
                {RuleEntry(0, "Prefix", "/", BackendsAction({{"infra/" + backend + ":80", 1}}))}));
    }
    return b;
  }

  void TearDown() override {
    plane_.reset();
    std::filesystem::remove(log_path_);
  }

  // LogLines waits until the access log holds `count` lines (buffers flush within 100 ms).
  std::vector<std::string> LogLines(size_t count) {
    std::vector<std::string> lines;
    WaitFor([&] {
      lines.clear();
      std::ifstream in(log_path_);
      for (std::string line; std::getline(in, line);) lines.push_back(line);
      return lines.size() >= count;
    });
    return lines;
  }

  std::vector<core::SyncNack> Apply(const SnapshotBuilder& b) {
    std::vector<core::SyncNack> nacks = ApplySnapshot(plane_.get(), b, ++generation_);
    EXPECT_EQ(plane_->MinWorkerGeneration(), generation_);
    return nacks;
  }

  TlsOptions Sni(std::string name) {
    TlsOptions o;
    o.sni = std::move(name);
    return o;
  }

  ReservedPort port_;
  TestUpstream a_{"a"};
  TestUpstream b_{"b"};
  std::unique_ptr<DataPlane> plane_;
  std::filesystem::path log_path_;
  uint64_t generation_ = 0;
  sdk::testing::TestCertificate default_, wildcard_, exact_, shop_;
};

TEST_F(TlsTest, SniSelectsTheListenerThenExactWildcardOrDefaultCertificate) {
  ASSERT_TRUE(Apply(Base()).empty());
  struct Want {
    std::string sni, certificate;
  };
  for (const Want& want : std::vector<Want>{{"shop.test", "shop.test"},
                                            {"a.wild.test", "*.wild.test"},  // listener "wild"
                                            {"b.wild.test", "*.wild.test"},
                                            {"other.test", "default.test"}}) {
    TlsTestClient client(port_.port(), Sni(want.sni));
    ASSERT_TRUE(client.ok()) << want.sni << ": " << client.handshake_error();
    EXPECT_EQ(client.PeerDnsName(), want.certificate) << want.sni;
    EXPECT_EQ(client.Version(), "TLSv1.3");
  }
  // Routed over TLS; the upstream learns the scheme.
  TlsTestClient client(port_.port(), Sni("shop.test"));
  TlsResponse r = client.Get("/x", "shop.test");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_THAT(r.body, HasSubstr("upstream=b target=/x"));
  EXPECT_EQ(b_.last().headers["x-forwarded-proto"], "https");
  // Keep-alive: a second request on the same session.
  r = client.Get("/y", "shop.test");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_THAT(r.body, HasSubstr("target=/y"));
}

TEST_F(TlsTest, ExactSanWinsWithinTheCatchAllListener) {
  // Without the "wild" listener, a.wild.test lands on "any": exact SAN before wildcard SAN.
  SnapshotBuilder b = Base();
  b.Put("listener_set.v1", "gateway/infra/web/" + std::to_string(port_.port()), kGatewayOwner,
        ListenerSetEntry("infra", "web", "", port_.port(),
                         HttpsListener("any", "",
                                       {{"default", "sha-default"},
                                        {"wildcard", "sha-wildcard"},
                                        {"exact", "sha-exact"}})));
  Apply(b);
  TlsTestClient exact(port_.port(), Sni("a.wild.test"));
  ASSERT_TRUE(exact.ok()) << exact.handshake_error();
  EXPECT_EQ(exact.PeerDnsName(), "a.wild.test");
  TlsTestClient wildcard(port_.port(), Sni("c.wild.test"));
  EXPECT_EQ(wildcard.PeerDnsName(), "*.wild.test");
  // One label only: x.c.wild.test is not covered, the listener's default answers.
  TlsTestClient deeper(port_.port(), Sni("x.c.wild.test"));
  EXPECT_EQ(deeper.PeerDnsName(), "default.test");
}

TEST_F(TlsTest, RefusesTls11AndHandshakesWithoutSniOnlyWhenOneCertificate) {
  ASSERT_TRUE(Apply(Base()).empty());
  TlsOptions old = Sni("shop.test");
  old.max_version = TLS1_1_VERSION;
  TlsTestClient refused(port_.port(), old);
  EXPECT_FALSE(refused.ok());
  TlsOptions v12 = Sni("shop.test");
  v12.max_version = TLS1_2_VERSION;
  TlsTestClient tls12(port_.port(), v12);
  ASSERT_TRUE(tls12.ok()) << tls12.handshake_error();
  EXPECT_EQ(tls12.Version(), "TLSv1.2");

  // Four certificates on the port: no SNI, no handshake (and the failure is counted).
  const uint64_t failures = plane_->Stats().tls_failures;
  TlsTestClient anonymous(port_.port(), TlsOptions{});
  EXPECT_FALSE(anonymous.ok());
  EXPECT_TRUE(WaitFor([&] { return plane_->Stats().tls_failures > failures; }));

  // One certificate: no SNI is fine.
  SnapshotBuilder b = Base();
  b.Put("listener_set.v1", "gateway/infra/web/" + std::to_string(port_.port()), kGatewayOwner,
        ListenerSetEntry("infra", "web", "", port_.port(),
                         HttpsListener("any", "", {{"default", "sha-default"}})));
  Apply(b);
  TlsTestClient single(port_.port(), TlsOptions{});
  ASSERT_TRUE(single.ok()) << single.handshake_error();
  EXPECT_EQ(single.PeerDnsName(), "default.test");
}

TEST_F(TlsTest, HostOfAnotherListenerThanTheSniIsMisdirected) {
  ASSERT_TRUE(Apply(Base()).empty());
  TlsTestClient client(port_.port(), Sni("shop.test"));
  ASSERT_TRUE(client.ok()) << client.handshake_error();
  EXPECT_EQ(client.Get("/", "a.wild.test").status, 421);
  EXPECT_EQ(client.Get("/", "unknown.test").status, 421);   // the catch-all is another listener
  EXPECT_EQ(client.Get("/", "SHOP.test:443").status, 200);  // same listener, any case and port
  TlsTestClient any(port_.port(), Sni("unknown.test"));
  EXPECT_EQ(any.Get("/", "other.test").status, 200);  // both select the catch-all
  EXPECT_EQ(any.Get("/", "shop.test").status, 421);
}

TEST_F(TlsTest, ResumesSessionsWithTicketsAndOffersOnlyHttp11) {
  ASSERT_TRUE(Apply(Base()).empty());
  for (int max : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    TlsOptions options = Sni("shop.test");
    options.max_version = max;
    options.alpn = "http/1.1";
    TlsTestClient first(port_.port(), options);
    ASSERT_TRUE(first.ok()) << first.handshake_error();
    EXPECT_EQ(first.Alpn(), "http/1.1");
    ASSERT_EQ(first.Get("/", "shop.test").status, 200);  // TLS 1.3 tickets come after
    options.resume = first.Session();
    TlsTestClient second(port_.port(), options);
    ASSERT_TRUE(second.ok()) << second.handshake_error();
    EXPECT_TRUE(second.Resumed()) << "max version " << max;
    EXPECT_EQ(second.Get("/", "shop.test").status, 200);
  }
  TlsOptions h2 = Sni("shop.test");
  h2.alpn = "h2";
  TlsTestClient only_h2(port_.port(), h2);
  ASSERT_TRUE(only_h2.ok()) << only_h2.handshake_error();
  EXPECT_EQ(only_h2.Alpn(), "");  // no HTTP/2 yet: no ALPN answer, the client speaks 1.1
}

TEST_F(TlsTest, RotatedCertificateServesNewConnectionsAndLeavesOpenOnesAlone) {
  ASSERT_TRUE(Apply(Base()).empty());
  TlsTestClient before(port_.port(), Sni("shop.test"));
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before.Get("/", "shop.test").status, 200);
  EXPECT_EQ(before.PeerFingerprint(), Fingerprint(shop_.cert_pem));

  sdk::testing::TestCertificate rotated = Cert({"shop.test", "www.shop.test"});
  SnapshotBuilder b = Base();
  b.Put("certificate.v1", "cert/infra/shop", "/Secret/infra/shop",
        Material("shop", "sha-shop-2", rotated));
  b.Put("listener_set.v1", "gateway/infra/web/" + std::to_string(port_.port()), kGatewayOwner,
        ListenerSetEntry("infra", "web", "", port_.port(),
                         HttpsListener("any", "", {{"default", "sha-default"}}) + "," +
                             HttpsListener("shop", "shop.test", {{"shop", "sha-shop-2"}})));
  ASSERT_TRUE(Apply(b).empty());
  TlsTestClient after(port_.port(), Sni("shop.test"));
  ASSERT_TRUE(after.ok()) << after.handshake_error();
  EXPECT_EQ(after.PeerFingerprint(), Fingerprint(rotated.cert_pem));
  EXPECT_EQ(after.Get("/", "shop.test").status, 200);
  // The connection opened before the rotation still works.
  EXPECT_EQ(before.Get("/again", "shop.test").status, 200);
  EXPECT_EQ(before.PeerFingerprint(), Fingerprint(shop_.cert_pem));
}

TEST_F(TlsTest, LargeBodiesCrossTlsInRecords) {
  ASSERT_TRUE(Apply(Base()).empty());
  TlsTestClient client(port_.port(), Sni("shop.test"));
  TlsResponse r = client.Get("/big/1048576", "shop.test");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body.size(), 1048576u);
  EXPECT_EQ(r.body.find_first_not_of('x'), std::string::npos);
}

TEST_F(TlsTest, ListenersTheGatewayCannotServeAreNackedWithTheReason) {
  SnapshotBuilder b;
  b.Put("listener_set.v1", "gateway/infra/tcp/9", "gateway.networking.k8s.io/Gateway/infra/tcp",
        ListenerSetEntry("infra", "tcp", "", port_.port(),
                         R"({"name":"raw","protocol":"TLS","routeKinds":[]})"));
  ReservedPort other;
  b.Put("listener_set.v1", "gateway/infra/nocert/1",
        "gateway.networking.k8s.io/Gateway/infra/nocert",
        ListenerSetEntry("infra", "nocert", "", other.port(),
                         HttpsListener("https", "", {{"missing", "sha-missing"}})));
  std::vector<core::SyncNack> nacks = Apply(b);
  ASSERT_EQ(nacks.size(), 2u);
  std::map<std::string, std::string> why;
  for (const auto& n : nacks) why[n.key.ToString()] = n.reason;
  EXPECT_THAT(why["gateway.networking.k8s.io/Gateway/infra/tcp"],
              HasSubstr("listener protocol TLS on 127.0.0.1:" + std::to_string(port_.port()) +
                        " is not implemented"));
  EXPECT_THAT(why["gateway.networking.k8s.io/Gateway/infra/nocert"],
              HasSubstr("no certificate of the HTTPS listeners"));
  EXPECT_TRUE(plane_->Listeners().empty());
}

// ValidatedBase: Base with the port checking client certificates against `ca` in `mode`.
std::string WithValidation(const std::string& entry, const std::string& mode,
                           const std::string& ca_sha) {
  std::string out = entry;
  out.insert(
      out.size() - 1,
      R"(,"frontendValidation":{"mode":")" + mode +
          R"(","caCertificates":[{"ref":{"kind":"ConfigMap","namespace":"infra","name":"ca"},"sha256":")" +
          ca_sha + R"("}]})");
  return out;
}

TEST_F(TlsTest, ClientCertificatesAreRequiredOrFallBackInsecurely) {
  sdk::testing::TestCertificate client = Cert({"client.test"});
  sdk::testing::TestCertificate stranger = Cert({"stranger.test"});
  // A session from before the port checked clients must not resume past the check.
  ASSERT_TRUE(Apply(Base()).empty());
  std::shared_ptr<SSL_SESSION> unchecked;
  {
    TlsTestClient before(port_.port(), Sni("shop.test"));
    ASSERT_EQ(before.Get("/", "shop.test").status, 200);
    unchecked = before.Session();
  }
  for (const std::string mode : {"AllowValidOnly", "AllowInsecureFallback"}) {
    SCOPED_TRACE(mode);
    SnapshotBuilder b = Base();
    b.Put("certificate.v1", "ca/configmap/infra/ca", "/ConfigMap/infra/ca",
          CaMaterial("sha-ca", client.cert_pem));
    b.Put(
        "listener_set.v1", "gateway/infra/web/" + std::to_string(port_.port()), kGatewayOwner,
        WithValidation(ListenerSetEntry("infra", "web", "", port_.port(),
                                        HttpsListener("shop", "shop.test", {{"shop", "sha-shop"}})),
                       mode, "sha-ca"));
    ASSERT_TRUE(Apply(b).empty());
    const bool strict = mode == "AllowValidOnly";

    TlsOptions good = Sni("shop.test");
    good.client_cert_pem = client.cert_pem;
    good.client_key_pem = client.key_pem;
    TlsTestClient trusted(port_.port(), good);
    ASSERT_TRUE(trusted.ok()) << trusted.handshake_error();
    EXPECT_EQ(trusted.Get("/", "shop.test").status, 200);
    EXPECT_TRUE(trusted.CertificateRequested());
    // The access log names the version, the SNI and the client certificate.
    const std::string fingerprint = Fingerprint(client.cert_pem);
    EXPECT_TRUE(WaitFor([&] {
      for (const std::string& line : LogLines(1)) {
        if (line.find(R"("client_cert":")" + fingerprint + "\"") != std::string::npos &&
            line.find(R"("tls":"TLSv1.3","sni":"shop.test")") != std::string::npos &&
            line.find(R"("client_subject":"CN=default")") != std::string::npos) {
          return true;
        }
      }
      return false;
    }));

    TlsOptions wrong = Sni("shop.test");
    wrong.client_cert_pem = stranger.cert_pem;
    wrong.client_key_pem = stranger.key_pem;
    TlsTestClient untrusted(port_.port(), wrong);
    // TLS 1.3: the client finishes first; the server's verdict arrives with the first read.
    EXPECT_EQ(untrusted.ok() && untrusted.Get("/", "shop.test").status == 200, !strict);

    TlsTestClient anonymous(port_.port(), Sni("shop.test"));
    EXPECT_EQ(anonymous.ok() && anonymous.Get("/", "shop.test").status == 200, !strict);
    EXPECT_TRUE(anonymous.CertificateRequested());

    TlsOptions resume = Sni("shop.test");
    resume.resume = unchecked;
    TlsTestClient resumed(port_.port(), resume);
    EXPECT_FALSE(resumed.Resumed());
    EXPECT_EQ(resumed.ok() && resumed.Get("/", "shop.test").status == 200, !strict);
  }
  // Without validation no certificate is asked for.
  ASSERT_TRUE(Apply(Base()).empty());
  TlsTestClient plain(port_.port(), Sni("shop.test"));
  EXPECT_EQ(plain.Get("/", "shop.test").status, 200);
  EXPECT_FALSE(plain.CertificateRequested());
}

TEST_F(TlsTest, ValidationWhoseCaHasNotArrivedNacksTheGateway) {
  SnapshotBuilder b = Base();
  b.Put("listener_set.v1", "gateway/infra/web/" + std::to_string(port_.port()), kGatewayOwner,
        WithValidation(ListenerSetEntry("infra", "web", "", port_.port(),
                                        HttpsListener("shop", "shop.test", {{"shop", "sha-shop"}})),
                       "AllowValidOnly", "sha-absent"));
  std::vector<core::SyncNack> nacks = Apply(b);
  ASSERT_EQ(nacks.size(), 1u);
  EXPECT_EQ(nacks[0].key.ToString(), kGatewayOwner);
  EXPECT_THAT(nacks[0].reason,
              HasSubstr("ConfigMap infra/ca (sha256 sha-absent) have not reached"));
}

// Policy is a listener_set.v1 tlsPolicy entry's JSON targeting infra/web (all listeners).
std::string Policy(const std::string& name, int64_t created_ms, const std::string& hostnames,
                   const std::string& extra) {
  return R"({"entry":"tlsPolicy","policy":{"namespace":"infra","name":")" + name +
         R"("},"createdUnixMs":)" + std::to_string(created_ms) +
         R"(,"targets":[{"gateway":{"namespace":"infra","name":"web"}}],"hostnames":)" + hostnames +
         (extra.empty() ? "" : "," + extra) + "}";
}

TEST_F(TlsTest, TlsPolicySetsCertificateVersionsAndClientChecksForItsHostnames) {
  sdk::testing::TestCertificate policy_cert = Cert({"shop.test"});
  sdk::testing::TestCertificate client = Cert({"client.test"});
  SnapshotBuilder b = Base();
  b.Put("certificate.v1", "cert/infra/policy", "/Secret/infra/policy",
        Material("policy", "sha-policy", policy_cert));
  b.Put("certificate.v1", "ca/infra/client-ca", "/Secret/infra/client-ca",
        CaMaterial("sha-client-ca", client.cert_pem));
  // The older policy wins shop.test: its certificate (same level as the listener's exact SAN)
  // and TLS 1.3 only. The newer one for the same name loses everything.
  b.Put(
      "listener_set.v1", "tlspolicy/infra/old", "portico.io/TLSPolicy/infra/old",
      Policy(
          "old", 1000, R"(["shop.test"])",
          R"("certificate":{"secretRef":{"namespace":"infra","name":"policy"},"sha256":"sha-policy"},"minVersion":"TLSv1.3")"));
  b.Put("listener_set.v1", "tlspolicy/infra/new", "portico.io/TLSPolicy/infra/new",
        Policy("new", 2000, R"(["shop.test"])", R"("maxVersion":"TLSv1.2")"));
  // A wildcard policy requires client certificates with an allowed SAN on *.wild.test.
  b.Put(
      "listener_set.v1", "tlspolicy/infra/mtls", "portico.io/TLSPolicy/infra/mtls",
      Policy(
          "mtls", 3000, R"(["*.wild.test"])",
          R"("clientCertificate":{"mode":"Require","caCertificates":[{"secretRef":{"namespace":"infra","name":"client-ca"},"sha256":"sha-client-ca"}],"allowedSans":["Client.Test"]})"));
  ASSERT_TRUE(Apply(b).empty());

  TlsTestClient shop(port_.port(), Sni("shop.test"));
  ASSERT_TRUE(shop.ok()) << shop.handshake_error();
  EXPECT_EQ(shop.PeerFingerprint(), Fingerprint(policy_cert.cert_pem));
  EXPECT_EQ(shop.Version(), "TLSv1.3");
  TlsOptions v12 = Sni("shop.test");
  v12.max_version = TLS1_2_VERSION;
  TlsTestClient refused(port_.port(), v12);
  EXPECT_FALSE(refused.ok());
  // Other names keep the listener's settings: TLS 1.2 is fine there.
  v12.sni = "other.test";
  TlsTestClient other(port_.port(), v12);
  ASSERT_TRUE(other.ok()) << other.handshake_error();
  EXPECT_EQ(other.PeerDnsName(), "default.test");

  TlsOptions mtls = Sni("a.wild.test");
  TlsTestClient anonymous(port_.port(), mtls);
  EXPECT_FALSE(anonymous.ok() && anonymous.Get("/", "a.wild.test").status == 200);
  EXPECT_TRUE(anonymous.CertificateRequested());
  mtls.client_cert_pem = client.cert_pem;
  mtls.client_key_pem = client.key_pem;
  TlsTestClient allowed(port_.port(), mtls);
  ASSERT_TRUE(allowed.ok()) << allowed.handshake_error();
  EXPECT_EQ(allowed.Get("/", "a.wild.test").status, 200);

  // The same CA, but the SAN is not in allowedSans: refused.
  SnapshotBuilder strict = b;
  strict.Put(
      "listener_set.v1", "tlspolicy/infra/mtls", "portico.io/TLSPolicy/infra/mtls",
      Policy(
          "mtls", 3000, R"(["*.wild.test"])",
          R"("clientCertificate":{"mode":"Require","caCertificates":[{"secretRef":{"namespace":"infra","name":"client-ca"},"sha256":"sha-client-ca"}],"allowedSans":["someone-else.test"]})"));
  ASSERT_TRUE(Apply(strict).empty());
  TlsTestClient disallowed(port_.port(), mtls);
  EXPECT_FALSE(disallowed.ok() && disallowed.Get("/", "a.wild.test").status == 200);
}

TEST_F(TlsTest, TlsPolicyWithUnknownCiphersOrMissingMaterialIsNacked) {
  SnapshotBuilder b = Base();
  b.Put("listener_set.v1", "tlspolicy/infra/ciphers", "portico.io/TLSPolicy/infra/ciphers",
        Policy("ciphers", 1, "[]", R"("ciphers":["ECDHE-RSA-AES128-GCM-SHA256","NOT-A-CIPHER"])"));
  b.Put(
      "listener_set.v1", "tlspolicy/infra/cert", "portico.io/TLSPolicy/infra/cert",
      Policy(
          "cert", 2, "[]",
          R"("certificate":{"secretRef":{"namespace":"infra","name":"gone"},"sha256":"sha-gone"})"));
  // IANA names are OpenSSL's too (TLS 1.2 suites translated, TLS 1.3 suites as they are).
  b.Put("listener_set.v1", "tlspolicy/infra/iana", "portico.io/TLSPolicy/infra/iana",
        Policy("iana", 3, "[]",
               R"("ciphers":["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256","TLS_AES_128_GCM_SHA256"])"));
  std::vector<core::SyncNack> nacks = Apply(b);
  std::map<std::string, std::string> why;
  for (const auto& n : nacks) why[n.key.ToString()] = n.reason;
  ASSERT_EQ(why.size(), 2u) << why["portico.io/TLSPolicy/infra/iana"];
  EXPECT_THAT(why["portico.io/TLSPolicy/infra/ciphers"], HasSubstr("no cipher \"NOT-A-CIPHER\""));
  EXPECT_THAT(why["portico.io/TLSPolicy/infra/cert"], HasSubstr("sha-gone"));
}

TEST_F(TlsTest, TicketsSurviveOneKeyRotationAndExpireAfterTheKeptOnes) {
  ASSERT_TRUE(Apply(Base()).empty());
  auto ticket = [&] {
    TlsTestClient first(port_.port(), Sni("shop.test"));
    EXPECT_EQ(first.Get("/", "shop.test").status, 200);  // TLS 1.3 tickets come after
    return first.Session();
  };
  auto resumes = [&](std::shared_ptr<SSL_SESSION> session) {
    TlsOptions options = Sni("shop.test");
    options.resume = std::move(session);
    TlsTestClient again(port_.port(), options);
    EXPECT_TRUE(again.ok()) << again.handshake_error();
    return again.Resumed();
  };
  core::tls::TicketKeys& keys = core::tls::TicketKeys::Instance();
  std::shared_ptr<SSL_SESSION> session = ticket();
  keys.Rotate();
  EXPECT_TRUE(resumes(session));  // the previous key still decrypts
  session = ticket();
  for (size_t i = 0; i <= core::tls::TicketKeys::kKept; ++i) keys.Rotate();
  EXPECT_FALSE(resumes(session));  // its key is retired: a full handshake
}

}  // namespace
}  // namespace portico::gateway::server
