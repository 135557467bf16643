// tls_entries.h: test helpers for the data plane's TLS tests: fresh certificates valid now, and
// the certificate.v1 entries (docs/contributions.md) that carry them.
//
// Threading: pure functions.
#ifndef PORTICO_GATEWAY_SERVER_TESTING_TLS_ENTRIES_H_
#define PORTICO_GATEWAY_SERVER_TESTING_TLS_ENTRIES_H_

#include <string>
#include <vector>

#include "portico/sdk/testing/test_certs.h"

namespace portico::gateway::server::testing {

// Cert is a self-signed EC certificate valid from an hour ago for a day, with these SANs.
sdk::testing::TestCertificate Cert(std::vector<std::string> dns,
                                   std::vector<std::string> uris = {});

// JsonEscape escapes a PEM (newlines) for a JSON string.
std::string JsonEscape(const std::string& pem);

// Material is a certificate.v1 keyPair entry for Secret infra/<secret>.
std::string Material(const std::string& secret, const std::string& sha,
                     const sdk::testing::TestCertificate& cert);

// CaMaterial is a certificate.v1 ca entry for ConfigMap infra/ca.
std::string CaMaterial(const std::string& sha, const std::string& pem);

}  // namespace portico::gateway::server::testing

#endif  // PORTICO_GATEWAY_SERVER_TESTING_TLS_ENTRIES_H_
