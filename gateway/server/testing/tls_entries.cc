// tls_entries.cc: see tls_entries.h.
#include "gateway/server/testing/tls_entries.h"

#include <chrono>

namespace portico::gateway::server::testing {

sdk::testing::TestCertificate Cert(std::vector<std::string> dns, std::vector<std::string> uris) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  sdk::testing::CertificateOptions options;
  options.dns_names = std::move(dns);
  options.uris = std::move(uris);
  options.not_before_unix_ms = now_ms - 3600 * 1000;
  options.not_after_unix_ms = now_ms + 86400 * 1000;
  return sdk::testing::MakeTestCertificate(options);
}

std::string JsonEscape(const std::string& pem) {
  std::string out;
  for (char c : pem) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

std::string Material(const std::string& secret, const std::string& sha,
                     const sdk::testing::TestCertificate& cert) {
  return R"({"entry":"keyPair","secretRef":{"namespace":"infra","name":")" + secret +
         R"("},"sha256":")" + sha + R"(","chainPem":")" + JsonEscape(cert.cert_pem) +
         R"(","keyPem":")" + JsonEscape(cert.key_pem) + R"("})";
}

std::string CaMaterial(const std::string& sha, const std::string& pem) {
  return R"({"entry":"ca","configMapRef":{"namespace":"infra","name":"ca"},"sha256":")" + sha +
         R"(","caPem":")" + JsonEscape(pem) + R"("})";
}

}  // namespace portico::gateway::server::testing
