// tls_table_test.cc: TlsTable and ServerContext: SNI selection over listener sets (exact,
// wildcard, the listener's default, no SNI), context sharing across builds, and refusals of
// material OpenSSL cannot serve (key of another certificate, expired).
#include "core/runtime/tls/tls_table.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "portico/sdk/abi.h"
#include "portico/sdk/testing/test_certs.h"

namespace portico::core::tls {
namespace {

using sdk::testing::CertificateOptions;
using sdk::testing::MakeTestCertificate;
using sdk::testing::TestCertificate;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TestCertificate Cert(std::vector<std::string> dns, int64_t not_after_ms = 0) {
  CertificateOptions options;
  options.dns_names = std::move(dns);
  options.not_before_unix_ms = NowMs() - 3600 * 1000;
  options.not_after_unix_ms = not_after_ms != 0 ? not_after_ms : NowMs() + 86400 * 1000;
  return MakeTestCertificate(options);
}

std::string Escape(const std::string& pem) {
  std::string out;
  for (char c : pem) {
    if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

class Snapshot {
 public:
  // Material puts a certificate.v1 keyPair entry for Secret infra/<name> with digest `sha`.
  void Material(const std::string& name, const std::string& sha, const TestCertificate& cert,
                const std::string& key_pem = "") {
    Put(PORTICO_FORMAT_CERTIFICATE, "cert/infra/" + name, "/Secret/infra/" + name,
        R"({"entry":"keyPair","secretRef":{"namespace":"infra","name":")" + name +
            R"("},"sha256":")" + sha + R"(","chainPem":")" + Escape(cert.cert_pem) +
            R"(","keyPem":")" + Escape(key_pem.empty() ? cert.key_pem : key_pem) + R"("})");
  }
  // Gateway puts a listener_set.v1 entry for Gateway infra/<gateway> on `port`; each listener
  // is (name, hostname, [sha256 of its certificates]).
  struct L {
    std::string name, hostname;
    std::vector<std::string> certs;
  };
  void Gateway(const std::string& gateway, uint16_t port, const std::vector<L>& listeners) {
    std::string json = R"({"entry":"listeners","gateway":{"namespace":"infra","name":")" + gateway +
                       R"("},"address":"","port":)" + std::to_string(port) + R"(,"listeners":[)";
    for (size_t i = 0; i < listeners.size(); ++i) {
      const L& l = listeners[i];
      if (i > 0) json += ",";
      json += R"({"name":")" + l.name + R"(","protocol":"HTTPS")";
      if (!l.hostname.empty()) json += R"(,"hostname":")" + l.hostname + R"(")";
      json += R"(,"tls":{"mode":"Terminate","certificates":[)";
      for (size_t c = 0; c < l.certs.size(); ++c) {
        if (c > 0) json += ",";
        json += R"({"secretRef":{"namespace":"infra","name":"s)" + std::to_string(c) +
                R"("},"sha256":")" + l.certs[c] + R"("})";
      }
      json += "]}}";
    }
    json += "]}";
    Put(PORTICO_FORMAT_LISTENER_SET, "gateway/infra/" + gateway + "/" + std::to_string(port),
        "gateway.networking.k8s.io/Gateway/infra/" + gateway, json);
  }
  RuntimeSnapshot Build() const {
    RuntimeSnapshot s;
    for (const auto& [format, entries] : formats_) {
      s.formats.emplace(format, std::make_shared<FormatEntries>(entries));
    }
    return s;
  }

 private:
  void Put(const std::string& format, const std::string& id, const std::string& owner,
           std::string json) {
    formats_[format].insert_or_assign(
        id, RuntimeEntry(owner, std::make_shared<const std::string>(std::move(json))));
  }
  std::map<std::string, FormatEntries> formats_;
};

struct Built {
  std::shared_ptr<const routing::RouteTable> routes;
  std::shared_ptr<const TlsTable> tls;
  std::vector<routing::Refusal> refusals;
};

Built BuildAll(const Snapshot& s, const TlsTable* previous = nullptr) {
  Built b;
  RuntimeSnapshot snap = s.Build();
  b.routes = routing::RouteTable::Build(snap, nullptr);
  b.tls = TlsTable::Build(snap, b.routes, previous, &b.refusals);
  return b;
}

std::string Chosen(const ServerTlsSet& set, std::string_view sni) {
  std::string why;
  const ServerContext* c = set.Choose(sni, &why).context;
  return c == nullptr ? "refused: " + why : c->secret() + "#" + c->sha256();
}

TEST(TlsTableTest, SelectsByListenerThenSanExactThenWildcardThenDefault) {
  Snapshot s;
  s.Material("default", "d", Cert({"default.test"}));
  s.Material("exact", "e", Cert({"a.example.com"}));
  s.Material("wild", "w", Cert({"*.example.com"}));
  s.Material("other", "o", Cert({"other.test"}));
  // Listener "any" (no hostname): default first, then the exact and wildcard ones.
  s.Gateway("web", 443, {{"any", "", {"d", "w", "e"}}, {"shop", "shop.test", {"o"}}});
  Built b = BuildAll(s);
  ASSERT_TRUE(b.refusals.empty()) << b.refusals.front().reason;
  auto set = b.tls->Find("", 443);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(Chosen(*set, "a.example.com"), "infra/exact#e");      // exact beats the wildcard
  EXPECT_EQ(Chosen(*set, "b.example.com"), "infra/wild#w");       // wildcard, one label
  EXPECT_EQ(Chosen(*set, "x.b.example.com"), "infra/default#d");  // no SAN: listener default
  EXPECT_EQ(Chosen(*set, "shop.test"), "infra/other#o");          // the listener the name selects
  EXPECT_EQ(set->contexts().size(), 4u);
  EXPECT_EQ(b.tls->ContextCount(), 4u);
  // No SNI with four certificates on the port: refused, and the reason says why.
  EXPECT_NE(Chosen(*set, "").find("no server name"), std::string::npos);
  EXPECT_EQ(b.tls->Find("", 80), nullptr);
}

TEST(TlsTableTest, NoSniGetsTheOnlyCertificateAndUnknownNamesAreRefused) {
  Snapshot s;
  s.Material("one", "1", Cert({"a.test"}));
  s.Gateway("web", 443, {{"a", "a.test", {"1"}}, {"b", "*.b.test", {"1"}}});
  Built b = BuildAll(s);
  auto set = b.tls->Find("", 443);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(Chosen(*set, ""), "infra/one#1");
  EXPECT_EQ(Chosen(*set, "x.b.test"), "infra/one#1");
  EXPECT_NE(Chosen(*set, "c.test").find("no listener takes"), std::string::npos);
  // The handshake's selector switches the SSL to the context (any case of the name).
  SSL* ssl = set->NewSession();
  ASSERT_NE(ssl, nullptr);
  EXPECT_TRUE(set->OnClientHello(ssl, "A.TEST"));
  EXPECT_EQ(SSL_get_SSL_CTX(ssl), set->contexts().front()->ctx());
  EXPECT_FALSE(set->OnClientHello(ssl, "c.test"));
  SSL_free(ssl);
}

TEST(TlsTableTest, SharesContextsWithThePreviousTableBySha) {
  Snapshot s;
  s.Material("one", "1", Cert({"a.test"}));
  s.Gateway("web", 443, {{"a", "", {"1"}}});
  Built first = BuildAll(s);
  s.Material("two", "2", Cert({"b.test"}));
  s.Gateway("web", 443, {{"a", "", {"1", "2"}}});
  Built second = BuildAll(s, first.tls.get());
  auto a = first.tls->Find("", 443);
  auto b = second.tls->Find("", 443);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->contexts().front(), b->contexts().front());  // same sha256, same SSL_CTX
  EXPECT_EQ(b->contexts().size(), 2u);
}

TEST(TlsTableTest, RefusesMismatchedKeysAndExpiredCertificatesNamingTheSecret) {
  Snapshot s;
  TestCertificate a = Cert({"a.test"});
  TestCertificate b = Cert({"b.test"});
  s.Material("mismatch", "m", a, b.key_pem);
  s.Material("expired", "x", Cert({"c.test"}, NowMs() - 60 * 1000));
  s.Material("good", "g", Cert({"d.test"}));
  s.Gateway("bad", 443, {{"one", "a.test", {"m"}}});
  s.Gateway("old", 8443, {{"one", "", {"x"}}});
  s.Gateway("fine", 9443, {{"one", "", {"g", "absent"}}});  // material not synced: left out
  Built built = BuildAll(s);
  std::map<std::string, std::string> refused;
  for (const auto& r : built.refusals) refused[r.owner] = r.reason;
  ASSERT_EQ(refused.size(), 2u);
  EXPECT_NE(refused["gateway.networking.k8s.io/Gateway/infra/bad"].find(
                "Secret infra/mismatch: tls.key does not belong"),
            std::string::npos)
      << refused["gateway.networking.k8s.io/Gateway/infra/bad"];
  EXPECT_NE(refused["gateway.networking.k8s.io/Gateway/infra/old"].find("expired"),
            std::string::npos);
  EXPECT_EQ(built.tls->Find("", 443), nullptr);
  EXPECT_EQ(built.tls->Find("", 8443), nullptr);
  ASSERT_NE(built.tls->Find("", 9443), nullptr);
  EXPECT_EQ(built.tls->Find("", 9443)->contexts().size(), 1u);
}

}  // namespace
}  // namespace portico::core::tls
